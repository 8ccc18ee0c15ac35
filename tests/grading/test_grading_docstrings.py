"""The examples in the docstrings of the course tools run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")
@pytest.mark.parametrize("module", ["difflab.grading.gradebook", "difflab.grading.manual",
                                    "difflab.grading.release", "difflab.grading.markers",
                                    "difflab.grading.batch"])
def test_docstring_examples(module):
    failed, attempted = doctest.testmod(importlib.import_module(module))
    assert attempted and not failed
