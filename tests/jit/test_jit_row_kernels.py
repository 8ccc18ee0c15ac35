"""Sums along the last axis as numba loops: NumPy's bits, special values included; and the
prepared sum, mean and softmax steps of a compiled program take them."""

import doctest

import numpy as np
import pytest

import difflab as dl
from difflab.jit import fusion, row_kernels
from difflab.jit.prepared_steps import prepared_forward

pytestmark = pytest.mark.skipif(not fusion.USE_NUMBA, reason="numba not installed")

rng = np.random.default_rng(8)


def _rows(shape):
    """Random rows over many magnitudes (the order of the additions shows), with a row of
    -0, one of +0 and -0 mixed, an infinity and a NaN."""
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 8, shape)
    flat = x.reshape(-1, shape[-1])
    flat[1] = -0.0
    flat[2, ::2] = 0.0
    flat[2, 1::2] = -0.0
    flat[3, 0] = np.inf
    flat[4, -1] = np.nan
    return x


@pytest.mark.parametrize("n", list(range(1, 34)) + [63, 64, 65, 100, 127, 128])
def test_row_sums_give_numpy_s_bits_for_every_length(n):
    x = _rows((6, n))
    for keepdims in (False, True):
        want = np.add.reduce(x, axis=-1, keepdims=keepdims)
        got = row_kernels.row_sums(x, keepdims=keepdims)
        assert got.shape == want.shape and got.tobytes() == want.tobytes()
    assert row_kernels.row_sums(x, 1 / n).tobytes() == (np.add.reduce(x, -1) * (1 / n)).tobytes()
    context = dl.ops.registry.Context((False,))
    with np.errstate(all="ignore"):
        want = dl.ops.nn_ops.Normalize.forward(context, np, x, (1,), 1e-5)
        assert row_kernels.normalized_rows(x, 1e-5).tobytes() == want.tobytes()


@pytest.mark.parametrize("shape", [(8, 4, 12, 12), (8, 12, 32), (5,), (3, 0, 7)])
def test_softmax_and_sums_of_arrays_of_more_dimensions(shape):
    x = _rows(shape) if 0 not in shape and len(shape) > 1 else rng.standard_normal(shape)
    with np.errstate(invalid="ignore"):
        want = dl.softmax(dl.tensor(x), -1).numpy()
        if x.size:
            assert row_kernels.softmax_rows(x).tobytes() == want.tobytes()
    assert row_kernels.row_sums(x).tobytes() == np.add.reduce(x, axis=-1).tobytes()


def test_what_the_loops_do_not_take_is_numpy_s_sum():
    long_rows = rng.standard_normal((3, 129))  # (NumPy cuts a row of 129 in halves)
    columns = rng.standard_normal((12, 4)).T  # (not C-contiguous)
    single = rng.standard_normal((3, 4)).astype(np.float32)
    for x in (long_rows, columns, single):
        assert not row_kernels.fits(x)
        assert row_kernels.row_sums(x).tobytes() == np.add.reduce(x, axis=-1).tobytes()


def _node(fn, x):
    graph = dl.jit.trace(fn, dl.tensor(x)).graph
    return graph.nodes[-1]


@pytest.mark.parametrize("make", [
    lambda x: x.sum(-1), lambda x: x.sum(2, keepdim=True), lambda x: x.mean(-1),
    lambda x: x.mean(-1, keepdim=True), lambda x: dl.softmax(x, -1),
    lambda x: dl.nn.functional.layer_norm(x, (12,))])
def test_prepared_steps_along_the_last_axis_take_the_loops_with_the_same_bits(make):
    x = rng.standard_normal((8, 4, 12))
    node = _node(make, x)
    forward = prepared_forward(node, x.shape)
    assert forward.__name__ == "by_rows"
    plain = node.op.forward(dl.ops.registry.Context((False,)), np, x, **node.params)
    assert forward(None, np, x).tobytes() == np.asarray(plain).tobytes()
    # a view that is not contiguous (of the traced shape) takes NumPy's own reduce
    view = rng.standard_normal((8, 4, 24))[:, :, ::2]
    plain = node.op.forward(dl.ops.registry.Context((False,)), np, view, **node.params)
    assert forward(None, np, view).tobytes() == np.asarray(plain).tobytes()


def test_other_axes_and_dtypes_keep_numpy_s_reduce():
    x = rng.standard_normal((8, 4, 12))
    for fn in (lambda t: t.sum(0), lambda t: t.mean((1, 2)), lambda t: dl.softmax(t, 1),
               lambda t: dl.nn.functional.layer_norm(t, (4, 12))):
        assert getattr(prepared_forward(_node(fn, x), x.shape), "__name__", None) != "by_rows"
    x32 = x.astype(np.float32)
    assert prepared_forward(_node(lambda t: t.sum(-1), x32), x.shape).__name__ != "by_rows"


def test_a_compiled_attention_block_trains_as_eagerly_to_1e_12():
    def train(compiled):
        dl.manual_seed(1)
        block = dl.nn.Sequential(dl.nn.Linear(6, 12), dl.nn.LayerNorm(12)).double()
        attention = dl.nn.MultiheadAttention(12, 3, batch_first=True).double()
        params = list(block.parameters()) + list(attention.parameters())

        def loss(x):
            h = block(x)
            return attention(h, h, h)[0].softmax(-1).mean(-1).sum()
        run = dl.compile(loss) if compiled else loss
        opt = dl.optim.Adam(params, lr=0.05)
        x = dl.tensor(np.random.default_rng(2).normal(size=(4, 5, 6)))
        for _ in range(3):
            opt.zero_grad()
            run(x).backward()
            opt.step()
        return [p.detach().numpy().copy() for p in params]

    for got, want in zip(train(True), train(False)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(32, 1), (96, 96), (8, 12, 32), (40, 128), (2, 3, 7, 5)])
def test_a_bias_added_to_the_rows_gives_numpy_s_bits(shape, dtype):
    y = _rows(shape).astype(dtype)
    b = (rng.standard_normal(shape[-1]) * 10.0 ** rng.integers(-8, 8, shape[-1])).astype(dtype)
    b[:4] = [np.inf, -0.0, np.nan, 0.0][:len(b[:4])]
    y.reshape(-1, shape[-1])[5, :4] = [-np.inf, -0.0, 0.0, np.nan][:len(b[:4])]
    add = row_kernels.rows_plus(shape, dtype)
    with np.errstate(invalid="ignore"):  # (inf - inf: NaN, both ways)
        want = y + b
        add(y, b)
    assert y.tobytes() == want.tobytes()


@pytest.mark.fastpath("14. prepared plain steps")
def test_a_bias_is_added_by_the_loop_only_where_it_pays():
    assert row_kernels.rows_plus((96, 96), np.float64) is not None
    assert row_kernels.rows_plus((8, 96), np.float64) is None  # (few rows: NumPy's own add)
    assert row_kernels.rows_plus((96, 129), np.float64) is None  # (long rows)
    assert row_kernels.rows_plus((96, 8), np.int64) is None
    assert row_kernels.rows_plus((), np.float64) is None


@pytest.mark.fastpath("14. prepared plain steps")
def test_a_prepared_linear_of_many_rows_adds_its_bias_by_the_loop(monkeypatch):
    made, calls, plain = [], [], row_kernels.rows_plus

    def counting(shape, dtype):
        add = plain(shape, dtype)
        made.append(add)
        return None if add is None else lambda y, b: (calls.append(y.shape), add(y, b))
    monkeypatch.setattr(row_kernels, "rows_plus", counting)
    x, w, b = rng.standard_normal((8, 12, 32)), rng.standard_normal((96, 32)), \
        rng.standard_normal(96)
    node = _node(lambda t: dl.nn.functional.linear(t, dl.tensor(w), dl.tensor(b)), x)
    forward = prepared_forward(node, x.shape)
    got = forward(None, np, x, w, b)
    assert calls == [(8, 12, 96)] and made[0] is not None
    assert got.tobytes() == (x @ w.T + b).tobytes()
    # a bias that is not contiguous (a strided view of the traced shape): NumPy's add
    strided = np.repeat(b, 2)[::2]
    assert forward(None, np, x, w, strided).tobytes() == (x @ w.T + b).tobytes()
    assert len(calls) == 1


@pytest.mark.parametrize("n", list(range(1, 20)) + [31, 64, 127, 128])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_a_negative_log_likelihood_and_its_scatter_give_the_primitives_bits(n, reduction):
    """Picks of every sign of class (from the end too), ignored rows, -0, infinities, sums
    of up to 128 numbers in NumPy's pairwise order; and its backward's scatter."""
    xp = dl.backend.numpy_namespace
    for trial in range(6):
        classes = int(rng.integers(1, 9))
        z = _rows((max(n, 6), classes))[:n] if n >= 6 else rng.standard_normal((n, classes))
        z = np.ascontiguousarray(z)
        target = rng.integers(-classes, classes, n)
        target[rng.integers(0, n, trial % 3)] = -100
        context = dl.ops.registry.Context((True,))
        with np.errstate(all="ignore"):
            want = np.asarray(dl.ops.nn_ops.NLLLoss.forward(context, xp, z, target, None, -100,
                                                            reduction))
            got = row_kernels.nll_loss_rows(z, target, -100, reduction)
        assert got[0].shape == () and got[0].tobytes() == want.tobytes()
        for a, b in zip(got[1:], context.saved):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
        rows, t, _ = context.saved
        values = rng.standard_normal(n)
        values[0] = -0.0
        want = xp.scatter_add(values, (rows, t), z.shape)
        assert row_kernels.scatter_into_rows(values, rows, t, z.shape).tobytes() \
            == want.tobytes()


def test_what_the_loss_loops_do_not_take_is_left_to_the_primitive():
    z, target = rng.standard_normal((4, 3)), np.array([0, 2, 1, 3])  # (3: out of range)
    assert row_kernels.nll_loss_rows(z, target, -100, "mean") is None
    target[3] = -4  # (from the end, past the first class)
    assert row_kernels.nll_loss_rows(z, target, -100, "mean") is None
    ok = np.array([0, 2, 1, 1])
    assert row_kernels.nll_loss_rows(z, ok, -100, "none") is None
    assert row_kernels.nll_loss_rows(z.astype(np.float32), ok, -100, "mean") is None
    assert row_kernels.nll_loss_rows(z, ok.astype(np.int32), -100, "mean") is None
    assert row_kernels.nll_loss_rows(np.asfortranarray(z), ok, -100, "mean") is None
    assert row_kernels.nll_loss_rows(rng.standard_normal((129, 3)), np.zeros(129, np.int64),
                                     -100, "mean") is None
    # an ignore_index that is no int64 (numba would not type it, or compile a uint64 loop)
    for ignore in (2**63, 2**64, 2**70, -2**63 - 1, -2**70):
        assert row_kernels.nll_loss_rows(z, ok, ignore, "mean") is None
    for ignore in (2**63 - 1, -2**63):  # (the ends of int64 are taken, with the same bits)
        context = dl.ops.registry.Context((True,))
        want = dl.ops.nn_ops.NLLLoss.forward(context, dl.backend.numpy_namespace, z, ok, None,
                                             ignore, "mean")
        got = row_kernels.nll_loss_rows(z, ok, ignore, "mean")
        assert got[0].tobytes() == np.asarray(want).tobytes()
    assert row_kernels.scatter_into_rows(np.ones(2), np.array([0, 4]), np.array([0, 1]),
                                         (4, 3)) is None  # (row 4 of 4)
    assert row_kernels.scatter_into_rows(np.ones(2, np.float32), np.array([0, 1]),
                                         np.array([0, 1]), (4, 3)) is None


def test_docstring_examples_run():
    assert doctest.testmod(row_kernels).failed == 0


@pytest.mark.parametrize("ignore", [2**70, -2**63 - 1, 2**63])
def test_a_compiled_cross_entropy_takes_an_ignore_index_beyond_int64_as_eagerly(ignore):
    """(dl.compile's prepared loss raised numba's TypingError for these.)"""
    w = dl.tensor(rng.normal(size=(5, 5)))
    loss = dl.compile(lambda x, t: dl.nn.functional.cross_entropy(x @ w.T, t,
                                                                  ignore_index=ignore))
    for _ in range(2):
        x, t = dl.tensor(rng.normal(size=(40, 5))), dl.tensor(rng.integers(0, 5, 40))
        want = dl.nn.functional.cross_entropy(x @ w.T, t, ignore_index=ignore)
        assert loss(x, t).numpy().tobytes() == want.numpy().tobytes()
