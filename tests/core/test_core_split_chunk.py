"""split and chunk: their pieces, and clear errors for a bad size or dimension."""

import pytest

import difflab as dl


def test_chunk_refuses_a_count_that_is_not_positive():
    # (chunk(x, 0) divided by zero: a ZeroDivisionError that named nothing)
    with pytest.raises(ValueError, match="chunks must be a positive int, got 0"):
        dl.chunk(dl.arange(5.0), 0)
    with pytest.raises(ValueError, match="positive int"):
        dl.arange(5.0).chunk(-2)


def test_split_names_a_dimension_out_of_range():
    with pytest.raises(IndexError, match=r"split: Dimension out of range .* \[-1, 0\], but got 3"):
        dl.split(dl.arange(5.0), 2, dim=3)
    with pytest.raises(IndexError, match="the tensor has no dimensions"):
        dl.split(dl.tensor(1.0), 1)


def test_more_chunks_than_elements_and_an_empty_dimension():
    assert [p.tolist() for p in dl.chunk(dl.arange(2.0), 3)] == [[0.0], [1.0]]
    assert [p.shape for p in dl.chunk(dl.zeros(0, 2), 2)] == [(0, 2)] * 2  # as in PyTorch
    assert [p.shape for p in dl.split(dl.zeros(2, 0), 1, dim=1)] == [(2, 0)]


def test_negative_dims_split_from_the_end():
    pieces = dl.split(dl.arange(6.0).reshape(2, 3), [1, 2], dim=-1)
    assert [p.shape for p in pieces] == [(2, 1), (2, 2)]
