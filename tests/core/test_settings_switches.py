"""The process-wide switches training scripts set first (set_float32_matmul_precision,
use_deterministic_algorithms, set_num_threads): checked like PyTorch checks them, read
back, and changing no result."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl


@pytest.fixture(autouse=True)
def restore():
    before = (dl.get_float32_matmul_precision(), dl.are_deterministic_algorithms_enabled(),
              dl.get_num_threads())
    yield
    dl.set_float32_matmul_precision(before[0])
    dl.use_deterministic_algorithms(before[1])
    dl.set_num_threads(before[2])


def test_matmul_precision_is_recorded_and_changes_no_product():
    rng = np.random.default_rng(0)
    a = dl.tensor(rng.standard_normal((16, 16)), dtype=dl.float32)
    full = (a @ a).numpy()
    for precision in ("high", "medium", "highest"):
        dl.set_float32_matmul_precision(precision)
        assert dl.get_float32_matmul_precision() == precision
        assert np.array_equal((a @ a).numpy(), full)
    with pytest.raises(ValueError, match="'highest', 'high', 'medium'"):
        dl.set_float32_matmul_precision("low")


def test_deterministic_switch_takes_booleans_only():
    dl.use_deterministic_algorithms(True, warn_only=True)
    assert dl.are_deterministic_algorithms_enabled()
    assert dl.is_deterministic_algorithms_warn_only_enabled()
    dl.use_deterministic_algorithms(False)
    assert not dl.are_deterministic_algorithms_enabled()
    assert not dl.is_deterministic_algorithms_warn_only_enabled()
    with pytest.raises(TypeError, match="mode must be True or False"):
        dl.use_deterministic_algorithms(1)


def test_num_threads_is_a_positive_int():
    assert dl.get_num_threads() >= 1
    dl.set_num_threads(3)
    assert dl.get_num_threads() == 3
    for bad in (0, -1, 2.0, True, "2"):
        with pytest.raises(ValueError, match="positive int"):
            dl.set_num_threads(bad)
