"""PyTorch's joining, splitting, picking and product functions (functions_joining.py and
functions_picking.py) against NumPy's functions of the same meaning, their gradients
against finite differences, and their bad inputs against clear errors.

PyTorch itself is not a dependency; where its behaviour differs from NumPy's (``tile``
pads ``dims`` in front, ``meshgrid`` defaults to ``"ij"``, ``tensor_split`` is
``array_split``) the NumPy call below is the one with PyTorch's meaning.
"""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck

RNG = np.random.default_rng(7)
A23, A32, A34 = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 2)), RNG.normal(size=(3, 4))
A234, V3, V4 = RNG.normal(size=(2, 3, 4)), RNG.normal(size=3), RNG.normal(size=4)
IDX = np.array([[0, 2, 1], [1, 1, 0]])

#: name: (difflab call, NumPy call with PyTorch's meaning, inputs)
CASES = {
    "concat": (lambda a, b: dl.concat([a, b], 1), lambda a, b: np.concatenate([a, b], 1),
               (A23, A23)),
    "hstack_matrices": (lambda a, b: dl.hstack([a, b]), lambda a, b: np.hstack([a, b]),
                        (A23, A23)),
    "hstack_vectors": (lambda a, b: dl.hstack([a, b]), lambda a, b: np.hstack([a, b]),
                       (V3, V4)),
    "vstack": (lambda a, b: dl.vstack([a, b]), lambda a, b: np.vstack([a, b]), (V3, V3)),
    "row_stack": (lambda a, b: dl.row_stack([a, b]), lambda a, b: np.vstack([a, b]),
                  (A23, V3)),
    "dstack": (lambda a, b: dl.dstack([a, b]), lambda a, b: np.dstack([a, b]), (A23, A23)),
    "column_stack": (lambda a, b: dl.column_stack([a, b]),
                     lambda a, b: np.column_stack([a, b]), (V3, A32)),
    "atleast_3d": (lambda a: dl.atleast_3d(a), np.atleast_3d, (V3,)),
    "block_diag": (lambda a, b: dl.block_diag(a, b),
                   lambda a, b: np.block([[a, np.zeros((2, 4))], [np.zeros((3, 3)), b]]),
                   (A23, A34)),
    "tensor_split_int": (lambda a: dl.cat(dl.tensor_split(a, 3, 1)[::-1], 1),
                         lambda a: np.concatenate(np.array_split(a, 3, 1)[::-1], 1), (A34,)),
    "tensor_split_list": (lambda a: dl.tensor_split(a, [1, 3], 1)[1],
                          lambda a: np.split(a, [1, 3], 1)[1], (A34,)),
    "hsplit": (lambda a: dl.hsplit(a, 2)[1], lambda a: np.hsplit(a, 2)[1], (A34,)),
    "vsplit": (lambda a: dl.vsplit(a, [1])[1], lambda a: np.vsplit(a, [1])[1], (A34,)),
    "dsplit": (lambda a: dl.dsplit(a, 2)[0], lambda a: np.dsplit(a, 2)[0], (A234,)),
    "movedim": (lambda a: dl.movedim(a, (0, 2), (2, 1)),
                lambda a: np.moveaxis(a, (0, 2), (2, 1)), (A234,)),
    "swapdims": (lambda a: dl.swapdims(a, 0, 2), lambda a: np.swapaxes(a, 0, 2), (A234,)),
    "tile": (lambda a: dl.tile(a, (2,)), lambda a: np.tile(a, (1, 2)), (A23,)),
    "tile_more_dims": (lambda a: dl.tile(a, (2, 1, 2)), lambda a: np.tile(a, (2, 1, 2)),
                       (A23,)),
    "ravel": (lambda a: dl.ravel(a), np.ravel, (A234,)),
    "fliplr": (lambda a: dl.fliplr(a), np.fliplr, (A23,)),
    "flipud": (lambda a: dl.flipud(a), np.flipud, (A23,)),
    "rot90": (lambda a: dl.rot90(a), np.rot90, (A23,)),
    "rot90_minus_one": (lambda a: dl.rot90(a, -1, (1, 2)),
                        lambda a: np.rot90(a, -1, (1, 2)), (A234,)),
    "rot90_twice": (lambda a: dl.rot90(a, 2), lambda a: np.rot90(a, 2), (A23,)),
    "broadcast_tensors": (lambda a, b: dl.broadcast_tensors(a, b)[1],
                          lambda a, b: np.broadcast_arrays(a, b)[1], (A23, V3)),
    "narrow": (lambda a: dl.narrow(a, 1, -3, 2), lambda a: a[:, 1:3], (A34,)),
    "select": (lambda a: dl.select(a, 2, 1), lambda a: a[:, :, 1], (A234,)),
    "take": (lambda a: dl.take(a, dl.tensor(IDX)), lambda a: np.take(a, IDX), (A23,)),
    "take_along_dim": (lambda a: dl.take_along_dim(a, dl.tensor(IDX), 1),
                       lambda a: np.take_along_axis(a, IDX, 1), (A23,)),
    "take_along_dim_broadcast": (lambda a: dl.take_along_dim(a, dl.tensor([[2, 0]]), 1),
                                 lambda a: np.take_along_axis(a, np.array([[2, 0]] * 2), 1),
                                 (A23,)),
    "take_along_dim_flat": (lambda a: dl.take_along_dim(a, dl.tensor([5, 0])),
                            lambda a: np.take(a, [5, 0]), (A23,)),
    "diagonal": (lambda a: dl.diagonal(a), np.diagonal, (A34,)),
    "diagonal_offset": (lambda a: dl.diagonal(a, -1, 2, 1),
                        lambda a: np.diagonal(a, -1, 2, 1), (A234,)),
    "trace": (lambda a: dl.trace(a), np.trace, (A34,)),
    "diag_vector": (lambda v: dl.diag(v, 1), lambda v: np.diag(v, 1), (V3,)),
    "diag_matrix": (lambda a: dl.diag(a, -1), lambda a: np.diag(a, -1), (A34,)),
    "diagflat": (lambda a: dl.diagflat(a, -2), lambda a: np.diagflat(a, -2), (A23,)),
    "diag_embed": (lambda a: dl.diag_embed(a, 1, 0, 2),
                   lambda a: np.moveaxis(np.stack([np.diag(r, 1) for r in a]), 0, 1), (A23,)),
    "tensordot": (lambda a, b: dl.tensordot(a, b, dims=([1, 0], [0, 2])),
                  lambda a, b: np.tensordot(a, b, axes=([1, 0], [0, 2])),
                  (A34, RNG.normal(size=(4, 2, 3)))),
    "tensordot_int": (lambda a, b: dl.tensordot(a, b, 1), lambda a, b: np.tensordot(a, b, 1),
                      (A23, A34)),
    "inner": (lambda a, b: dl.inner(a, b), np.inner, (A23, A34.T.copy()[:, :3])),
    "vdot": (lambda a, b: dl.vdot(a, b), np.vdot, (V3, V3[::-1].copy())),
    "kron": (lambda a, b: dl.kron(a, b), np.kron, (A23, A32)),
    "kron_mixed_ndim": (lambda a, b: dl.kron(a, b), np.kron, (V3, A234)),
    "meshgrid_ij": (lambda a, b: dl.meshgrid(a, b)[0],
                    lambda a, b: np.meshgrid(a, b, indexing="ij")[0], (V3, V4)),
    "meshgrid_xy": (lambda a, b: dl.meshgrid(a, b, indexing="xy")[1],
                    lambda a, b: np.meshgrid(a, b, indexing="xy")[1], (V3, V4)),
    "cartesian_prod": (lambda a, b: dl.cartesian_prod(a, b),
                       lambda a, b: np.stack([g.ravel() for g in np.meshgrid(a, b,
                                                                             indexing="ij")], 1),
                       (V3, V4)),
    "vander": (lambda v: dl.vander(v), np.vander, (V3,)),
    "vander_increasing": (lambda v: dl.vander(v, 4, increasing=True),
                          lambda v: np.vander(v, 4, increasing=True), (V3,)),
    "addmm": (lambda c, a, b: dl.addmm(c, a, b, beta=0.5, alpha=2.0),
              lambda c, a, b: 0.5 * c + 2.0 * a @ b, (V3, A23.T.copy(), A23)),
    "addmv": (lambda c, a, v: dl.addmv(c, a, v), lambda c, a, v: c + a @ v, (V3, A34, V4)),
    "addr": (lambda c, a, b: dl.addr(c, a, b, alpha=3.0),
             lambda c, a, b: c + 3.0 * np.outer(a, b), (A34, V3, V4)),
    "addbmm": (lambda c, a, b: dl.addbmm(c, a, b),
               lambda c, a, b: c + np.einsum("bij,bjk->ik", a, b),
               (A34, RNG.normal(size=(2, 3, 2)), RNG.normal(size=(2, 2, 4)))),
    "chain_matmul": (lambda a, b, c: dl.chain_matmul(a, b, c), lambda a, b, c: a @ b @ c,
                     (A23, A34, V4.reshape(4, 1))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_equal_numpy(name):
    ours, numpy_version, inputs = CASES[name]
    got = ours(*[dl.tensor(x) for x in inputs])
    np.testing.assert_allclose(got.numpy(), numpy_version(*inputs), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_equal_finite_differences(name):
    ours, _, inputs = CASES[name]
    tensors = [dl.tensor(x, dtype=dl.float64, requires_grad=True) for x in inputs]
    assert gradcheck(ours, tuple(tensors))


def test_shapes_and_counts_follow_pytorch():
    x = dl.arange(10)
    assert [len(p) for p in dl.tensor_split(x, 3)] == [4, 3, 3]
    assert [len(p) for p in dl.tensor_split(x, [2, 2, 12])] == [2, 0, 8, 0]
    assert dl.atleast_1d(dl.tensor(1.0), dl.ones(2))[0].shape == (1,)
    assert dl.atleast_2d([dl.tensor(1.0)]).shape == (1, 1)
    assert dl.broadcast_shapes(3, (2, 1)) == (2, 3)
    assert dl.triu_indices(3, 3, 1).tolist() == [list(v) for v in np.triu_indices(3, 1, 3)]
    assert dl.tril_indices(3, 4, -1).dtype == dl.int64
    assert dl.addmm(dl.tensor([[np.nan]]), dl.ones(1, 1), dl.ones(1, 1), beta=0).item() == 1.0
    assert dl.diag(dl.tensor([1, 2])).dtype == dl.int64  # integer diagonals stay integers
    assert dl.cartesian_prod(dl.tensor([1, 2])).tolist() == [1, 2]


@pytest.mark.parametrize("call, error, words", [
    (lambda: dl.hsplit(dl.ones(2, 5), 2), RuntimeError, "cannot be split into 2 equal"),
    (lambda: dl.vsplit(dl.ones(3), 1), RuntimeError, "at least 2 dimensions"),
    (lambda: dl.tensor_split(dl.ones(3), 0), ValueError, "must be positive"),
    (lambda: dl.movedim(dl.ones(2, 3), (0, 1), 0), ValueError, "one destination per source"),
    (lambda: dl.movedim(dl.ones(2, 3), 2, 0), IndexError, "out of range"),
    (lambda: dl.narrow(dl.ones(4), 0, 3, 2), IndexError, "do not fit"),
    (lambda: dl.select(dl.ones(2, 3), 1, 3), IndexError, "out of range"),
    (lambda: dl.trace(dl.ones(3)), RuntimeError, "expects a matrix"),
    (lambda: dl.diag(dl.ones(2, 2, 2)), RuntimeError, "1-D or 2-D"),
    (lambda: dl.tensordot(dl.ones(2, 3), dl.ones(2, 3), 1), RuntimeError, "do not match"),
    (lambda: dl.broadcast_shapes((2, 3), (4,)), RuntimeError, "cannot be broadcast"),
    (lambda: dl.rot90(dl.ones(2, 2), 1, (0, 0)), RuntimeError, "must differ"),
    (lambda: dl.meshgrid(dl.ones(2), indexing="yx"), ValueError, "'ij' or 'xy'"),
    (lambda: dl.block_diag(dl.ones(1, 1, 1)), ValueError, "at most 2 dimensions"),
    (lambda: dl.take_along_dim(dl.ones(2, 3), dl.tensor([0]), 1), RuntimeError,
     "same number"),
    (lambda: dl.chain_matmul(), RuntimeError, "at least one matrix"),
])
def test_bad_input_gets_a_clear_error(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_the_composites_record_on_the_tape_and_replay_in_a_trace():
    from difflab import jit

    def f(x):
        return dl.trace(dl.kron(x, dl.fliplr(x))) + dl.take_along_dim(
            x, x.argsort(dim=1), 1).sum()

    x = dl.tensor(A23.T.copy()[:2], dtype=dl.float64)
    traced = jit.trace(f, (x,))
    other = dl.tensor(-A23[:, :2].T.copy(), dtype=dl.float64)
    np.testing.assert_allclose(traced(other).numpy(), f(other).numpy(), rtol=1e-12)
