"""The docs extension keeps the ``Shape`` section of the nn layers, which numpydoc drops."""

from __future__ import annotations

import inspect
import sys
import warnings
from pathlib import Path

import pytest

import difflab as dl

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_ext"))
pytest.importorskip("sphinx", reason="the docs need the 'docs' extra: pip install -e '.[docs]'")
docscrape = pytest.importorskip("numpydoc.docscrape",
                                reason="the docs need the 'docs' extra: pip install -e '.[docs]'")
import difflab_docs  # noqa: E402


def test_a_shape_section_becomes_a_rubric_numpydoc_keeps():
    lines = inspect.getdoc(dl.nn.Conv2d).splitlines()
    with pytest.warns(UserWarning, match="Unknown section Shape"):
        docscrape.NumpyDocString("\n".join(lines))
    difflab_docs.shape_section_to_rubric(None, "class", "Conv2d", dl.nn.Conv2d, None, lines)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        doc = docscrape.NumpyDocString("\n".join(lines))
    summary = "\n".join(doc["Extended Summary"])
    assert ".. rubric:: Shape" in summary and "- Input:" in summary and "H_{out}" in summary
    assert [p.name for p in doc["Parameters"]][:2] == ["in_channels", "out_channels"]
    assert doc["Examples"], "the sections after Shape are kept"


def test_a_docstring_without_shape_is_left_alone():
    lines = inspect.getdoc(dl.nn.Module.train).splitlines()
    before = list(lines)
    difflab_docs.shape_section_to_rubric(None, "method", "train", dl.nn.Module.train, None,
                                         lines)
    assert lines == before


def test_an_override_without_its_own_docstring_is_left_out_of_the_page():
    skip = difflab_docs.skip_inherited_overrides
    assert skip(None, "class", "forward", dl.nn.Linear.forward, False, None) is True
    assert skip(None, "class", "extra_repr", dl.nn.Linear.extra_repr, False, None) is True
    # its own docstring, or outside nn/optim/data: autodoc decides as before
    assert skip(None, "class", "reset_parameters", dl.nn.Linear.reset_parameters, False,
                None) is None
    assert skip(None, "class", "forward", dl.nn.Module.forward, False, None) is None
    assert skip(None, "module", "Linear", dl.nn.Linear, False, None) is None
