"""Shared test settings and fixtures.

Hypothesis runs without deadlines (CI machines are shared and noisy).  Tests that
take ``device`` run on the CPU and on CUDA: a real GPU where CuPy finds one, and
elsewhere the CPU stand-in for CuPy (``difflab.testing.fake_cupy``), which
refuses implicit conversions to NumPy as CuPy does, so the GPU code paths run
on every machine.
"""

import os

import pytest
from hypothesis import settings

import difflab as dl
from difflab.testing import fake_cupy

settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True)
settings.register_profile("dev", deadline=None, max_examples=60)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_report_header(config):
    if dl.cuda.is_available():
        return f"cuda tests run on: {dl.cuda.get_device_name(0)}"
    return "cuda tests run on: the CPU stand-in for CuPy (difflab.testing.fake_cupy; no GPU here)"


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    """The device to run on: the CPU, then CUDA (a real GPU, or the CuPy stand-in)."""
    if request.param == "cpu" or dl.cuda.is_available():
        yield request.param
    else:
        with fake_cupy.installed():
            yield "cuda"


@pytest.fixture
def cuda():
    """CUDA for a test that needs it: a real GPU, or else the CuPy stand-in."""
    if dl.cuda.is_available():
        yield dl.device("cuda")
    else:
        with fake_cupy.installed():
            yield dl.device("cuda")
