"""Tracing to a graph and replaying it: the same numbers as eager, on new inputs."""

import warnings

import numpy as np
import pytest

import difflab as dl
from difflab import jit
from difflab.autograd import engine

rng = np.random.default_rng(0)


def t(*shape, dtype=np.float64):
    return dl.tensor(rng.standard_normal(shape).astype(dtype))


def test_listing_names_each_primitive_with_shape_and_dtype():
    f = jit.trace(lambda x, w: (x * w).sin().sum(), (t(3), t(3)))
    text = str(f.graph)
    assert text.splitlines()[0] == "graph <lambda>(x: (3,) float64, w: (3,) float64)"
    assert "1  v1 = mul(x, w)" in text and "(3,)" in text
    assert "3  v3 = sum(v2, axis=None, keepdims=False)" in text
    assert text.splitlines()[-1] == "  return v3"
    assert [n.op_name for n in f.graph.nodes] == ["mul", "sin", "sum"]
    assert f.graph.nodes[0].op is dl.ops.registry.get("mul")


def test_replay_equals_eager_on_new_values():
    def fn(x, w, b):
        h = dl.tanh(x @ w + b)
        return (h * h).mean(dim=1), h.exp().max()

    f = jit.trace(fn, (t(4, 3), t(3, 5), t(5)))
    for _ in range(3):
        args = (t(4, 3), t(3, 5), t(5))
        got, want = f(*args), fn(*args)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13, atol=0)
    assert f.traces == 1


def test_constants_and_numpy_scalars_keep_their_dtype():
    c = dl.tensor([1.0, 2.0, 3.0], dtype=dl.float32)

    def fn(x):
        return x * np.float32(2.0) + c

    x = t(3, dtype=np.float32)
    f = jit.trace(fn, x)
    assert [i.kind for i in f.graph.inputs].count("constant") == 2
    out = f(x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.numpy(), fn(x).numpy())


def test_module_parameters_are_named_inputs_read_at_each_call():
    model = dl.nn.Sequential(dl.nn.Linear(4, 6), dl.nn.ReLU(), dl.nn.Linear(6, 3),
                             dl.nn.LogSoftmax(dim=1))
    x = t(5, 4, dtype=np.float32)
    f = jit.trace(model, x)
    names = [i.name for i in f.graph.parameters()]
    assert names == ["0.weight", "0.bias", "2.weight", "2.bias"]
    # (the output requires grad, as the eager call's: it backpropagates into the weights)
    np.testing.assert_allclose(f(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-6)
    with dl.no_grad():
        model[0].weight.mul_(0.5)  # the traced graph sees the update
    np.testing.assert_allclose(f(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-6)


def test_replay_makes_no_tensor_and_no_tape(monkeypatch):
    f = jit.trace(lambda x: dl.sin(x) * 2 + 1, t(3))
    x = t(3)
    calls = []
    monkeypatch.setattr(engine, "apply", lambda *a, **k: calls.append(a))
    out = f.graph.run(x.array)
    assert not calls and isinstance(out[0], np.ndarray)
    np.testing.assert_allclose(out[0], np.sin(x.array) * 2 + 1)


def test_new_shape_retraces_and_new_rank_or_dtype_without_retrace_is_a_clear_error():
    f = jit.trace(lambda x: x.sum(dim=0), t(3, 2))
    assert f(t(4, 2)).shape == (2,) and f.traces == 2
    strict = jit.trace(lambda x: x.sum(dim=0), t(3, 2), retrace=False)
    with pytest.raises(jit.GraphError, match=r"traced for x: \(3, 2\) float64, but got \(3,\)"):
        strict(t(3))
    with pytest.raises(jit.GraphError, match="float32"):
        strict(t(3, 2, dtype=np.float32))
    with pytest.raises(jit.GraphError, match="takes 1 arguments"):
        strict.graph.run()


def test_script_traces_on_first_call_per_signature():
    @jit.script
    def f(x, y):
        return (x - y).abs().sum()

    x, y = t(3), t(3)
    assert float(f(x, y)) == pytest.approx(float((x - y).abs().sum()))
    f(t(3), t(3))
    assert f.traces == 1
    f(t(2, 2), t(2, 2))
    assert f.traces == 2 and f.graph.arguments()[0].shape == (2, 2)


def test_a_branch_on_a_traced_value_warns_naming_the_line():
    def fn(x):
        if x.sum() > 0:  # the line the warning names
            return x * 2
        return x

    line = fn.__code__.co_firstlineno + 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jit.trace(fn, t(3))
    messages = [w for w in caught if issubclass(w.category, jit.TracerWarning)]
    assert len(messages) == 1
    assert messages[0].lineno == line and messages[0].filename == __file__
    assert f"{__file__}:{line}: bool()" in str(messages[0].message)


@pytest.mark.parametrize("read", [float, lambda v: v.item(), lambda v: v.tolist(), int])
def test_each_value_read_warns(read):
    with pytest.warns(jit.TracerWarning):
        jit.trace(lambda x: x * read(x.sum()), t(3))


def test_reading_a_constant_does_not_warn_and_methods_are_restored():
    scale = dl.tensor(2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jit.trace(lambda x: x * float(scale), t(3))
    assert dl.Tensor.__bool__.__name__ == "__bool__" and engine.GraphRecorder.active is None
    assert not hasattr(dl.Tensor.__gt__, "__wrapped__")


def test_masks_and_comparisons_are_replayed_not_baked_in():
    def fn(x):
        return dl.where(x > 0, x, 0.1 * x).sum() + (x < 0).sum()

    f = jit.trace(fn, t(6))
    assert {"gt", "lt"} <= set(f.graph.op_counts())
    for _ in range(3):
        x = t(6)
        np.testing.assert_allclose(f(x).numpy(), fn(x).numpy())


def test_in_place_change_of_a_traced_tensor_is_replayed():
    def fn(x):
        y = x * 1.0
        y += 1
        return y * 2

    f = jit.trace(fn, t(3).requires_grad_())
    x = t(3).requires_grad_()
    np.testing.assert_array_equal(f(x).detach().numpy(), fn(x).detach().numpy())
    assert "add" in f.graph.op_counts()


def test_in_place_change_through_a_view_is_refused():
    def fn(x):
        y = x * 1.0
        y[0].add_(1)  # (writes y's memory through a view of its first row)
        return y * 2

    with pytest.raises(jit.GraphError, match="view"):
        jit.trace(fn, t(2, 3))


def test_nested_outputs_come_back_nested():
    f = jit.trace(lambda x: {"a": x + 1, "b": [x * 2, (x.sum(),)]}, t(2))
    out = f(t(2))
    assert set(out) == {"a", "b"} and isinstance(out["b"][1], tuple)
