"""Fixtures for the core tests: the devices to run on (CPU always, CUDA when present)."""

import pytest

import difflab as dl

DEVICES = ["cpu"] + (["cuda"] if dl.cuda.is_available() else [])
GPU_REASON = "no CUDA device with CuPy here (install the gpu extra on a machine with a GPU)"


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    """Each test that takes `device` runs on the CPU and, where there is one, on a GPU."""
    if request.param == "cuda" and not dl.cuda.is_available():
        pytest.skip(GPU_REASON)
    return request.param
