"""difflab.cuda as PyTorch programs use torch.cuda: events and streams to time GPU work,
device properties, memory counters and their peaks, the generator's state.

Each test runs on the ``cuda`` fixture (a real GPU where present, else the CuPy
stand-in); the no-GPU behaviours run with CuPy switched off.
"""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab import backend


@pytest.fixture
def no_gpu():
    previous = backend.use_cupy_module(None, "no GPU in this test")
    try:
        yield
    finally:
        backend.use_cupy_module(*previous)


def test_events_time_gpu_work(cuda):
    start, end = dl.cuda.Event(enable_timing=True), dl.cuda.Event(enable_timing=True)
    x = dl.ones(100_000, device=cuda)
    start.record()
    for _ in range(5):
        x = (x * 1.0001).sin()
    end.record()
    end.synchronize()
    assert end.query() and start.query()
    assert 0.0 <= start.elapsed_time(end) < 10_000.0


def test_elapsed_time_needs_timing_events_that_were_recorded(cuda):
    plain, timed = dl.cuda.Event(), dl.cuda.Event(enable_timing=True)
    plain.record()
    timed.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        plain.elapsed_time(timed)
    with pytest.raises(RuntimeError, match="never recorded"):
        dl.cuda.Event(enable_timing=True).elapsed_time(timed)


def test_work_queued_on_a_stream_gives_the_same_numbers(cuda):
    x = dl.tensor(np.linspace(-2, 2, 1000), device=cuda)
    side = dl.cuda.Stream()
    side.wait_stream(dl.cuda.current_stream())
    with dl.cuda.stream(side):
        assert dl.cuda.current_stream() == side
        y = (x * x).tanh()
    dl.cuda.current_stream().wait_stream(side)
    side.synchronize()
    assert side.query()
    assert dl.cuda.current_stream() == dl.cuda.default_stream()
    # (CuPy's tanh may differ from NumPy's in the last bit)
    np.testing.assert_allclose(y.cpu().numpy(), np.tanh(np.linspace(-2, 2, 1000) ** 2),
                               rtol=1e-15, atol=0)
    event = side.record_event()
    event.wait()  # (the current stream waits for it)
    event.synchronize()


def test_device_properties_and_capability(cuda):
    p = dl.cuda.get_device_properties(0)
    assert p.name == dl.cuda.get_device_name(0)
    assert p.total_memory > 0 and p.multi_processor_count > 0
    assert dl.cuda.get_device_capability() == (p.major, p.minor) >= (3, 0)
    assert dl.cuda.get_device_properties("cuda:0") == dl.cuda.get_device_properties(cuda)
    assert "total_memory=" in repr(p)
    dl.cuda.set_device(0)
    assert dl.cuda.current_device() == 0
    with pytest.raises(ValueError, match="a CUDA device"):
        dl.cuda.get_device_properties("cpu")


def test_the_peak_of_memory_counts_a_freed_temporary(cuda):
    dl.cuda.reset_peak_memory_stats()
    base = dl.cuda.memory_allocated()
    assert dl.cuda.max_memory_allocated() == base
    big = dl.zeros(1_000_000, device=cuda, dtype=dl.float64)
    assert dl.cuda.memory_allocated() >= base + 8_000_000
    assert dl.cuda.max_memory_allocated() >= base + 8_000_000
    del big
    assert dl.cuda.memory_allocated() < base + 8_000_000
    if not getattr(backend.cupy_or_raise(), "IS_STAND_IN", False):
        # (CuPy's pool counts each block it hands out, which the peak counter sees; the
        # stand-in's arrays are NumPy's, counted only when asked)
        assert dl.cuda.max_memory_allocated() >= base + 8_000_000  # (the peak stays)
    assert dl.cuda.max_memory_reserved() >= dl.cuda.memory_reserved()
    dl.cuda.reset_max_memory_allocated()
    assert dl.cuda.max_memory_allocated() == dl.cuda.memory_allocated()
    free, total = dl.cuda.mem_get_info()
    assert 0 <= free <= total


def test_the_generator_state_is_the_default_generators(cuda):
    state = dl.cuda.get_rng_state()
    a = dl.rand(3, device=cuda)
    dl.cuda.set_rng_state(state)
    np.testing.assert_array_equal(dl.rand(3, device=cuda).cpu().numpy(), a.cpu().numpy())


def test_out_of_memory_is_cupys_error_where_cupy_is(cuda):
    cupy = backend.cupy_or_raise()
    assert dl.cuda.OutOfMemoryError is cupy.cuda.memory.OutOfMemoryError


def test_without_a_gpu_the_counters_are_zero_and_the_device_questions_raise(no_gpu):
    assert dl.cuda.max_memory_allocated() == dl.cuda.max_memory_reserved() == 0
    dl.cuda.reset_peak_memory_stats()
    assert not dl.cuda.is_bf16_supported()
    assert issubclass(dl.cuda.OutOfMemoryError, RuntimeError)
    with dl.cuda.stream(None):
        pass
    for ask in (dl.cuda.Event, dl.cuda.Stream, dl.cuda.current_stream, dl.cuda.mem_get_info,
                dl.cuda.get_device_properties, dl.cuda.get_device_capability, dl.cuda.init,
                lambda: dl.cuda.set_device(0),
                lambda: dl.cuda.set_per_process_memory_fraction(0.5)):
        with pytest.raises(RuntimeError, match="GPU|CUDA|CuPy|cupy"):
            ask()
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        dl.cuda.nope  # noqa: B018
