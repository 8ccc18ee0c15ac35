"""Every public name of difflab.func has a numpy-style docstring whose examples run."""

from __future__ import annotations

import doctest
import importlib

import pytest

import difflab as dl

MODULES = ["difflab.func.vmap", "difflab.func.transforms", "difflab.func.functional_call"]


@pytest.mark.parametrize("name", sorted(dl.func.__all__))
def test_public_names_have_full_docstrings(name):
    obj = getattr(dl.func, name)
    doc = obj.__doc__ or ""
    sections = ("Parameters", "Examples") if isinstance(obj, type) else (
        "Parameters", "Returns", "Examples")
    for section in sections:
        assert f"{section}\n    ---" in doc, f"difflab.func.{name} lacks a {section} section"


@pytest.mark.parametrize("module", MODULES)
def test_the_examples_run(module):
    mod = importlib.import_module(module)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    tests = [t for t in doctest.DocTestFinder().find(mod, module) if t.examples]
    assert tests
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
