"""vmap against a Python loop, for every primitive of the registry, and its composition
with grad, jacrev, jacfwd and hessian (difflab.func, torch.func's interface)."""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.func import (
    functional_call,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    vjp,
    vmap,
)
from difflab.ops import registry
from difflab.testing import samples

CASES = samples.primitive_cases()
B = 3

#: Primitives without a batching rule: their bins depend on the whole batch's values.
NO_RULE = {"histc", "histogram"}
#: The random draws: unbatched (dl.rand(3) inside the function) they follow vmap's
#: randomness= through the generator's hook.  bernoulli has a rule (its probabilities
#: may be batched: test_bernoulli_of_batched_probabilities_draws_what_a_loop_draws); a draw
#: from batched values of the others (a Poisson draw of a batched rate) has none yet and is
#: refused by name.
RANDOM_DRAWS = {"draw", "integers", "multinomial", "normal", "randperm", "uniform"}
#: Inputs that faces read as values (class targets, embedding indices): passed unbatched.
UNBATCHED_INPUTS = {"nll_loss": 1, "embedding": 0}


@pytest.fixture(autouse=True)
def _seeded():
    dl.manual_seed(0)


def _examples(case: samples.Case) -> list[list[np.ndarray]]:
    return [samples.variants(case, seed=s)[0] for s in range(B)]


def test_every_primitive_has_a_rule_or_is_listed():
    missing = {name for name, p in registry.PRIMITIVES.items() if p.batch is None}
    assert missing == NO_RULE | RANDOM_DRAWS
    assert all(registry.PRIMITIVES[name].random for name in RANDOM_DRAWS)


def test_random_draws_follow_randomness():
    x = dl.ones(4, 3)
    for draw in (lambda: dl.rand(3), lambda: dl.randint(0, 5, (3,)), lambda: dl.randperm(3),
                 lambda: dl.normal(0.0, 1.0, (3,))):
        shared = np.asarray(vmap(lambda v, draw=draw: v * draw(), randomness="same")(x))
        assert (shared == shared[0]).all()
        with pytest.raises(RuntimeError, match="randomness='error'"):
            vmap(lambda v, draw=draw: v * draw())(x)


@pytest.mark.parametrize("in_dim", [0, 1])
def test_bernoulli_of_batched_probabilities_draws_what_a_loop_draws(in_dim):
    p = dl.rand(5, 3, dtype=dl.float64)
    dl.manual_seed(3)
    looped = np.stack([dl.bernoulli(p[i]).numpy() for i in range(5)])
    dl.manual_seed(3)
    batched = vmap(dl.bernoulli, in_dims=in_dim, randomness="different")(
        p if in_dim == 0 else p.T)
    np.testing.assert_array_equal(batched.numpy(), looped)
    assert batched.dtype == dl.float64 and set(np.unique(looped)) <= {0.0, 1.0}
    # each example its own probabilities: p = 0 never draws 1, p = 1 always does
    edges = vmap(dl.bernoulli, randomness="different")(dl.tensor([[0.0] * 50, [1.0] * 50]))
    assert edges.numpy()[0].sum() == 0 and edges.numpy()[1].sum() == 50


def test_bernoulli_of_batched_probabilities_with_randomness_same_shares_the_draws():
    half = dl.full((4, 200), 0.5, dtype=dl.float64)
    shared = vmap(dl.bernoulli, randomness="same")(half).numpy()
    assert (shared == shared[0]).all() and 0 < shared[0].sum() < 200
    # the same uniform numbers, compared with each example's own probabilities
    probs = dl.stack([dl.full((200,), 0.2), dl.full((200,), 0.8)]).double()
    low, high = vmap(dl.bernoulli, randomness="same")(probs).numpy()
    assert (low <= high).all() and low.sum() < high.sum()
    nested = vmap(vmap(dl.bernoulli, randomness="different"), randomness="different")
    assert tuple(nested(dl.rand(2, 3, 4)).shape) == (2, 3, 4)
    with pytest.raises(RuntimeError, match="randomness='error'"):
        vmap(dl.bernoulli)(half)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        vmap(dl.bernoulli, randomness="same")(half * 3)


# (dropout_mask and bernoulli draw: each has its own test against a loop, same seed)
@pytest.mark.parametrize("name", sorted(set(CASES) - NO_RULE - RANDOM_DRAWS
                                        - {"dropout_mask", "bernoulli"}))
def test_vmap_equals_a_loop(name):
    case = CASES[name]
    examples = _examples(case)
    fixed = UNBATCHED_INPUTS.get(name)
    if fixed is not None:  # one value for every example
        for e in examples:
            e[fixed] = examples[0][fixed]
    stacked = [dl.tensor(examples[0][i]) if i == fixed else
               dl.tensor(np.stack([e[i] for e in examples])) for i in range(len(case.specs))]
    in_dims = tuple(None if i == fixed else 0 for i in range(len(case.specs)))
    got = vmap(case.call, in_dims=in_dims)(*stacked)
    want = np.stack([np.asarray(case.call(*[dl.tensor(a) for a in e])) for e in examples])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


FUNCTIONS = samples.function_cases()
#: Public functions that read an index or target tensor's values in Python, draw at random,
#: or select as many values as the data says (a boolean mask): with every input batched, a
#: clear error.  (Bounds checks are the check_index primitive, batched like any other:
#: gather, index_select, index_fill and the composites on them, sort, median,
#: take_along_dim, unravel_index, ..., map over the batch; so do the writes and sums at
#: an index that differs, index_put's and scatter_add's rules taking an ``arange`` per batch
#: dimension: scatter, scatter_add, index_add, index_copy, index_put, max_unpool.)
READ_VALUES = {"dl.histc", "F.binary_cross_entropy", "F.embedding", "F.ctc_loss",
               "F.dropout2d", "F.dropout3d", "F.feature_alpha_dropout", "F.embedding_bag",
               "F.gaussian_nll_loss", "F.grid_sample",
               "dl.masked_select", "Tensor.masked_select", "dl.renorm",
               "Tensor.renorm", "dl.unique", "Tensor.unique", "dl.unique_consecutive",
               "dl.bincount", "Tensor.bincount", "dl.scatter_reduce", "Tensor.scatter_reduce",
               "dl.index_reduce", "Tensor.index_reduce",
               # (torch.<name> with ATen's signature: nn.functional's, the same reads)
               "dl.embedding", "dl.ctc_loss", "dl.dropout"}


def _check_public(name, got, examples):
    case = FUNCTIONS[name]
    want = [case.call(*[dl.tensor(a) for a in e]) for e in examples]
    parts = zip(got, zip(*want)) if isinstance(got, tuple) else [(got, want)]
    for g, w in parts:
        np.testing.assert_allclose(np.asarray(g), np.stack([np.asarray(v) for v in w]),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(set(FUNCTIONS) - READ_VALUES))
def test_vmap_of_public_functions_equals_a_loop(name):
    case = FUNCTIONS[name]
    examples = _examples(case)
    stacked = [dl.tensor(np.stack([e[i] for e in examples])) for i in range(len(case.specs))]
    _check_public(name, vmap(case.call)(*stacked), examples)


@pytest.mark.parametrize("name", sorted(READ_VALUES))
def test_public_functions_that_read_values_refuse_clearly(name):
    case = FUNCTIONS[name]
    stacked = [dl.tensor(np.stack([e[i] for e in _examples(case)]))
               for i in range(len(case.specs))]
    with pytest.raises((RuntimeError, NotImplementedError, AttributeError), match="vmap"):
        vmap(case.call)(*stacked)


def test_writes_at_an_index_that_differs_between_examples():
    """scatter, scatter_add and max_unpool with each example's own indices (repeats within
    one: the last is written, or they add up), and their derivatives by vmap(jacfwd) and
    vmap(jacrev): as a loop over the examples."""
    F = dl.nn.functional
    x = dl.tensor(np.random.default_rng(4).standard_normal((3, 4)))
    idx = dl.tensor([[1, 1, 3, 1], [0, 2, 2, 5], [7, 6, 5, 4]])

    def unpool(v, i):
        return F.max_unpool1d(v.reshape(1, 1, 4), i.reshape(1, 1, 4), 2).reshape(-1)

    def scatter(v, i):
        return dl.zeros(8, dtype=v.dtype).scatter(0, i, v * v)

    def scatter_add(v, i):  # (repeats add up)
        return dl.ones(8, dtype=v.dtype).scatter_add(0, i, v * v)

    for f in (unpool, scatter, scatter_add):
        for transform in (lambda g: g, jacfwd, jacrev):
            got = vmap(transform(f))(x, idx)
            want = np.stack([np.asarray(transform(f)(x[n], idx[n])) for n in range(3)])
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-15)
    # example 0 wrote its last value at 1, and only that one has a derivative there
    assert unpool(x[0], idx[0])[1].item() == x[0, 3].item()
    assert vmap(jacrev(unpool))(x, idx)[0, 1].tolist() == [0.0, 0.0, 0.0, 1.0]


def test_batched_index_tensors():
    x = dl.randn(3, 4, 5)
    idx = dl.tensor(np.random.default_rng(0).integers(0, 4, (3, 2)))
    for f in (lambda a, i: a[i], lambda a, i: a[:, i], lambda a, i: a[1:, i[0]],
              lambda a, i: a[..., i.clamp(0, 3)]):
        got = vmap(f)(x, idx)
        want = np.stack([np.asarray(f(x[n], idx[n])) for n in range(3)])
        np.testing.assert_allclose(np.asarray(got), want)
    g = vmap(grad(lambda a, i: (a[:, i] ** 2).sum()))(x, idx)
    for n in range(3):
        xn = x[n].detach().requires_grad_()
        (xn[:, idx[n]] ** 2).sum().backward()
        np.testing.assert_allclose(np.asarray(g[n]), np.asarray(xn.grad))
    with pytest.raises(NotImplementedError, match="boolean mask"):
        vmap(lambda a: a[a > 0])(x)


@pytest.mark.parametrize("name", sorted(NO_RULE))
def test_a_primitive_without_a_rule_is_named(name):
    case = CASES[name]
    stacked = [dl.tensor(np.stack([e[i] for e in _examples(case)]))
               for i in range(len(case.specs))]
    with pytest.raises(NotImplementedError, match=f"'{name}' has no batching rule"):
        vmap(case.call)(*stacked)


def test_the_rule_runs_once_not_per_example():
    calls = []
    sin = registry.PRIMITIVES["sin"]
    original = type(sin).forward

    def counting(self, ctx, xp, x):
        calls.append(x.shape)
        return original(self, ctx, xp, x)

    type(sin).forward = counting
    try:
        vmap(dl.sin)(dl.ones(50, 4))
    finally:
        type(sin).forward = original
    assert calls == [(50, 4)]


# ---------------------------------------------------------------- in_dims, out_dims

X = dl.tensor(np.arange(24.0).reshape(2, 3, 4))


@pytest.mark.parametrize("in_dim", [0, 1, 2, -1])
def test_in_dims_pick_the_mapped_dimension(in_dim):
    got = vmap(lambda x: x.sum(0), in_dims=in_dim)(X)
    moved = np.moveaxis(np.asarray(X), in_dim, 0)
    np.testing.assert_allclose(np.asarray(got), np.stack([m.sum(0) for m in moved]))


@pytest.mark.parametrize("out_dim", [0, 1, -1])
def test_out_dims_place_the_batch(out_dim):
    got = vmap(lambda x: x * 2, out_dims=out_dim)(X)
    np.testing.assert_allclose(np.asarray(got), np.moveaxis(np.asarray(X) * 2, 0, out_dim))


def test_pytree_in_dims_and_out_dims():
    a, b = dl.randn(4, 3), dl.randn(3)

    def f(pair, scale):
        x, y = pair
        return {"sum": x + y * scale, "y": y}

    out = vmap(f, in_dims=((0, None), None), out_dims={"sum": 1, "y": None})((a, b), 2.0)
    np.testing.assert_allclose(np.asarray(out["sum"]), (np.asarray(a) + 2 * np.asarray(b)).T)
    assert out["y"] is b


def test_unbatched_output_is_repeated_and_chunks_agree():
    out = vmap(lambda x: dl.ones(2), in_dims=0)(X)
    assert tuple(out.shape) == (2, 2)
    full = vmap(lambda x: (x ** 2).sum(-1), chunk_size=None)(dl.randn(7, 5, generator=None))
    xs = dl.randn(7, 5)
    np.testing.assert_allclose(np.asarray(vmap(lambda x: x.exp().sum(), chunk_size=3)(xs)),
                               np.asarray(vmap(lambda x: x.exp().sum())(xs)))
    assert tuple(full.shape) == (7,)


def test_nested_vmap_is_an_outer_product():
    a, b = dl.randn(3, 2, dtype=dl.float64), dl.randn(4, 2, dtype=dl.float64)
    got = vmap(vmap(dl.dot, in_dims=(None, 0)), in_dims=(0, None))(a, b)
    np.testing.assert_allclose(np.asarray(got), np.asarray(a) @ np.asarray(b).T)


def test_nested_vmap_over_two_dimensions_of_one_input():
    got = vmap(vmap(lambda x: x.max(), in_dims=1), in_dims=0)(X)
    np.testing.assert_allclose(np.asarray(got), np.asarray(X).max(axis=1))


@pytest.mark.parametrize("in_dims, inputs, message", [
    (3, (X,), "dimensionality 3"),
    ((0, 0), (X, 2.0), "not a tensor"),
    ((0, 0), (X, dl.ones(5)), "same size"),
    ((0,), (X, X), "not compatible with the structure"),
    (None, (X,), "at least one input must be batched"),
    ("0", (X,), "must be an int, None"),
])
def test_bad_in_dims_are_explained(in_dims, inputs, message):
    with pytest.raises(ValueError, match=message):
        vmap(lambda *xs: xs[0], in_dims=in_dims)(*inputs)


def test_bad_out_dims_and_outputs_are_explained():
    with pytest.raises(ValueError, match="out_dims=None for an output that differs"):
        vmap(lambda x: x, out_dims=None)(X)
    with pytest.raises(ValueError, match="must return tensors only"):
        vmap(lambda x: 3)(X)
    with pytest.raises(RuntimeError, match="Data-dependent Python control flow"):
        vmap(lambda x: x if x.sum() > 0 else -x)(X)


def test_randomness_modes():
    x = dl.ones(6, 1000)
    with pytest.raises(RuntimeError, match="randomness='error'"):
        vmap(lambda v: dl.nn.functional.dropout(v, 0.5))(x)
    with pytest.raises(RuntimeError, match="randomness='error'"):
        vmap(lambda v: v + dl.randn(1000))(x)
    different = np.asarray(vmap(lambda v: dl.nn.functional.dropout(v, 0.5),
                                randomness="different")(x))
    same = np.asarray(vmap(lambda v: dl.nn.functional.dropout(v, 0.5), randomness="same")(x))
    assert not (different == different[0]).all()
    assert (same == same[0]).all() and 0 < (same[0] == 0).mean() < 1
    shared = np.asarray(vmap(lambda v: v + dl.randn(1000), randomness="same")(x))
    assert (shared == shared[0]).all()
    with pytest.raises(NotImplementedError, match="randomness='different'"):
        vmap(lambda v: v + dl.randn(1000), randomness="different")(x)


# ------------------------------------------------------------------ with the transforms


def test_vmap_of_grad_gives_per_example_gradients():
    w = dl.tensor([0.5, -1.0, 2.0])
    xs = dl.randn(5, 3)

    def loss(x):
        return (x * w).tanh().sum() ** 2

    got = vmap(grad(loss))(xs)
    for x, g in zip(xs, got):
        x = x.detach().requires_grad_()
        loss(x).backward()
        np.testing.assert_allclose(np.asarray(g), np.asarray(x.grad), rtol=1e-12)


def test_nested_vmap_of_grad_and_second_derivatives_per_example():
    xs = dl.randn(3, 4, 5, dtype=dl.float64)

    def f(x):
        return (x.sin() * x).sum()

    got = vmap(vmap(grad(f)))(xs)
    want = np.stack([np.stack([np.asarray(grad(f)(xs[i][j])) for j in range(4)])
                     for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    s = dl.randn(6, dtype=dl.float64)
    second = vmap(grad(grad(lambda t: t.sin() * t)))(s)
    t = np.asarray(s)
    np.testing.assert_allclose(np.asarray(second), 2 * np.cos(t) - t * np.sin(t), rtol=1e-12)


def test_per_example_gradients_of_an_mlp_equal_a_loop():
    dl.manual_seed(0)
    model = dl.nn.Sequential(dl.nn.Linear(4, 8), dl.nn.Tanh(), dl.nn.Linear(8, 1))
    params = {k: v.detach() for k, v in model.named_parameters()}
    xs, ys = dl.randn(6, 4), dl.randn(6, 1)

    def loss(p, x, y):
        return dl.nn.functional.mse_loss(functional_call(model, p, (x,)), y)

    per_example = vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)
    for n in range(6):
        model.zero_grad()
        dl.nn.functional.mse_loss(model(xs[n]), ys[n]).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(np.asarray(per_example[name][n]), np.asarray(p.grad),
                                       rtol=1e-10, atol=1e-12)


def test_per_example_cross_entropy_gradients_with_batched_targets():
    model = dl.nn.Sequential(dl.nn.Linear(4, 8), dl.nn.Tanh(), dl.nn.Linear(8, 3)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    xs, ys = dl.randn(6, 4, dtype=dl.float64), dl.tensor([0, 2, 1, 1, 0, 2])
    weight = dl.tensor([1.0, 2.0, 0.5], dtype=dl.float64)

    def loss(p, x, y):
        logits = functional_call(model, p, (x.unsqueeze(0),))
        return dl.nn.functional.cross_entropy(logits, y.unsqueeze(0), weight=weight)

    batched = vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)
    for n in range(6):
        one = grad(loss)(params, xs[n], ys[n])
        for name in one:
            np.testing.assert_allclose(np.asarray(batched[name][n]), np.asarray(one[name]),
                                       rtol=1e-12, atol=1e-14)
    for reduction in ("none", "sum", "mean"):
        z = dl.randn(6, 5, 3, dtype=dl.float64)
        t = dl.tensor(np.random.default_rng(1).integers(0, 3, (6, 5)))
        t[0, 1] = -100  # ignored
        got = vmap(lambda a, b, r=reduction: dl.nn.functional.nll_loss(a, b, reduction=r))(z, t)
        want = np.stack([np.asarray(dl.nn.functional.nll_loss(z[n], t[n], reduction=reduction))
                         for n in range(6)])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_grad_of_vmap_and_grad_inside_a_closure_over_a_batch():
    ws = dl.randn(4, 3)
    x0 = dl.randn(3)
    got = vmap(lambda w: grad(lambda x: (w * x).sin().sum())(x0))(ws)
    want = np.asarray(ws) * np.cos(np.asarray(ws) * np.asarray(x0))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    total = grad(lambda x: vmap(lambda w: (w * x).sum())(ws).sum())(x0)
    np.testing.assert_allclose(np.asarray(total), np.asarray(ws).sum(0), rtol=1e-12)


def f_vec(x):
    return dl.stack([x[0] * x[1].sin(), x.exp().sum(), (x ** 2).sum() * x[2]])


def f_vec_sum(x):  # (forward over reverse: no indexing, whose backward scatters in place)
    return (x.sin() * x.exp()).sum() + (x ** 3).sum()


def f_scalar(x):
    return (x.sin() * x.roll(1)).sum() + (x ** 3).sum()


@pytest.mark.parametrize("transform", [jacrev, jacfwd])
def test_jacobians_equal_dl_jacobian(transform):
    x = dl.tensor([0.3, -1.2, 0.7], dtype=dl.float64)
    np.testing.assert_allclose(np.asarray(transform(f_vec)(x)),
                               np.asarray(dl.jacobian(f_vec)(x)), rtol=1e-12)
    xs = dl.randn(4, 3, dtype=dl.float64)
    batched = vmap(transform(f_vec))(xs)
    for x_n, j_n in zip(xs, batched):
        np.testing.assert_allclose(np.asarray(j_n), np.asarray(dl.jacobian(f_vec)(x_n)),
                                   rtol=1e-12)


def test_hessian_equals_dl_hessian_also_per_example():
    x = dl.tensor([0.3, -1.2, 0.7], dtype=dl.float64)
    np.testing.assert_allclose(np.asarray(hessian(f_scalar)(x)),
                               np.asarray(dl.hessian(f_scalar)(x)), rtol=1e-12)
    xs = dl.randn(3, 3, dtype=dl.float64)
    for x_n, h_n in zip(xs, vmap(hessian(f_scalar))(xs)):
        np.testing.assert_allclose(np.asarray(h_n), np.asarray(dl.hessian(f_scalar)(x_n)),
                                   rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jacfwd(jacrev(f_vec_sum))(x)),
                               np.asarray(dl.hessian(f_vec_sum)(x)), rtol=1e-12)


def test_vmap_of_vjp_fn_is_a_batched_backward_pass():
    x = dl.tensor([1.0, 2.0, 3.0], dtype=dl.float64)

    def f(v):
        return v.sin() * v.sum()

    _, vjp_fn = vjp(f, x)
    rows = vmap(vjp_fn)(dl.eye(3, dtype=dl.float64))[0]  # every row of J in one pass
    np.testing.assert_allclose(np.asarray(rows), np.asarray(dl.jacobian(f)(x)), rtol=1e-12)
    xs = dl.randn(4, 3, dtype=dl.float64)

    def jacobian_rows(v):
        return vmap(vjp(f, v)[1])(dl.eye(3, dtype=dl.float64))[0]

    for n, J in enumerate(vmap(jacobian_rows)(xs)):
        np.testing.assert_allclose(np.asarray(J), np.asarray(dl.jacobian(f)(xs[n])),
                                   rtol=1e-12)
    scaled = vmap(lambda s: vjp_fn(dl.ones(3, dtype=dl.float64) * s)[0])(
        dl.tensor([1.0, 2.0], dtype=dl.float64))
    np.testing.assert_allclose(np.asarray(scaled[1]), 2 * np.asarray(scaled[0]), rtol=1e-12)


def test_reverse_over_forward_is_refused_not_wrong():
    x = dl.tensor([0.5, 1.0], dtype=dl.float64)
    with pytest.raises(RuntimeError, match="reverse over forward is not supported"):
        grad(lambda v: jacfwd(lambda u: u.sin())(v).sum())(x)
    with pytest.raises(RuntimeError, match="reverse over forward is not supported"):
        grad(lambda v: jvp(lambda u: u.sin(), (v,), (dl.ones(2, dtype=dl.float64),))[1].sum())(x)


def test_vjp_jvp_grad_and_value_and_argnums():
    x, y = dl.tensor([1.0, 2.0]), dl.tensor([3.0, -1.0])
    out, vjp_fn = vjp(lambda a, b: a * b.exp(), x, y)
    ga, gb = vjp_fn(dl.ones(2))
    np.testing.assert_allclose(np.asarray(gb), np.asarray(x) * np.exp(np.asarray(y)))
    value, tangent = jvp(lambda a: a ** 3, (x,), (dl.ones(2),))
    np.testing.assert_allclose(np.asarray(tangent), 3 * np.asarray(x) ** 2)
    (gx, gy), (v, aux) = grad_and_value(lambda a, b: ((a * b).sum(), "aux"), argnums=(0, 1),
                                        has_aux=True)(x, y)
    assert aux == "aux" and float(v) == 1.0
    np.testing.assert_allclose(np.asarray(gx), np.asarray(y))
    with pytest.raises(ValueError, match="scalar tensor"):
        grad(lambda a: a * 2)(x)
    t_batched = vmap(lambda a: jvp(lambda u: u.sin(), (a,), (dl.ones(2),))[1])(dl.zeros(3, 2))
    np.testing.assert_allclose(np.asarray(t_batched), np.ones((3, 2)))


def test_torch_func_path():
    import difflab as torch

    assert torch.func.vmap is vmap and torch.func.grad is grad


def test_vmap_and_per_example_gradients_on_a_device(device):
    x = dl.randn(5, 3, dtype=dl.float64).to(device)
    w = dl.randn(3, 2, dtype=dl.float64).to(device)
    idx = dl.tensor([[0, 2], [1, 1], [2, 0], [0, 0], [1, 2]]).to(device)
    t = dl.tensor([0, 1, 1, 0, 1]).to(device)

    def loss(v, i, c):
        z = (v @ w).tanh()[i.clamp(0, 1)] + v[i].sum()
        return dl.nn.functional.cross_entropy(z.unsqueeze(0), c.unsqueeze(0))

    got = vmap(grad(loss))(x, idx, t)
    assert got.device == dl.device(device)
    for n in range(5):
        np.testing.assert_allclose(np.asarray(got[n].cpu()),
                                   np.asarray(grad(loss)(x[n], idx[n], t[n]).cpu()), rtol=1e-12)
    if device == "cuda":
        with pytest.raises(RuntimeError, match="dual numbers, which hold CPU arrays only"):
            jacfwd(lambda v: (v @ w).sin())(x[0])
    for transform in (jacrev, jacfwd) if device == "cpu" else (jacrev,):
        J = vmap(transform(lambda v: (v @ w).sin()))(x)
        assert tuple(J.shape) == (5, 2, 3) and J.device == dl.device(device)
        np.testing.assert_allclose(np.asarray(J[1].cpu()),
                                   np.asarray(jacrev(lambda v: (v @ w).sin())(x[1]).cpu()))
