"""An index out of range is refused by every replay of a graph, as eager code refuses it.

Functions that read positions or classes from a tensor (``gather``, ``index_put``,
``index_fill``, ``embedding``, ``nll_loss``'s targets, ...) check them.  A check written
in Python ran only while a graph was traced, so the replay of ``index_put`` wrapped an
out-of-range index (``7 % 5``), ``index_fill`` filled the wrong slice and ``nll_loss``
read a negative class from the end, silently.  The checks are now the ``check_index``
primitive, which every interpreter replays.

The differential test takes every entry of the sample table with an integer input (each
registry primitive that reads one, and the public functions), traces it on its example,
and replays it on indices out of range on either side (and in range): eager raises ⇒ the
replay raises an error of the same class; eager returns ⇒ the same values bit for bit.
Each replay path runs: the traced ``Program``, the tape (inputs that require grad), the
reference interpreter, ``dl.compile`` and a graph saved and loaded.
"""

import warnings

import numpy as np
import pytest

import difflab as dl
from difflab import export, jit
from difflab.jit.graph import GraphError
from difflab.jit.tracing import TracerWarning
from difflab.testing import samples

F = dl.nn.functional
V, M23, I4 = ((6,), (-2, 2)), ((2, 3), (-2, 2)), ((4,), (samples.INT, 6))

# Functions that read an index and are not in the sample table (or not in this shape).
EXTRA = {
    "dl.gather 2-D": (lambda x, i: dl.gather(x, 1, i), [M23, ((2, 2), (samples.INT, 3))]),
    "dl.take_along_dim": (lambda x, i: dl.take_along_dim(x, i, dim=0), [V, I4]),
    "Tensor.__getitem__": (lambda x, i: x[i], [V, I4]),
    "Tensor.__getitem__ 2-D": (lambda x, i: x[:, i], [M23, ((2,), (samples.INT, 3))]),
    "F.cross_entropy": (lambda z, t: F.cross_entropy(z, t), [((5, 4), (-2, 2)),
                                                          ((5,), (samples.INT, 4))]),
    "F.nll_loss 3-D": (lambda z, t: F.nll_loss(z, t), [((2, 4, 3), (-2, 2)),
                                                     ((2, 3), (samples.INT, 4))]),
    "dl.index_put 2-D": (lambda x, i: dl.index_put(x, (i, i[:2] * 0),
                                                      dl.tensor(9.0, dtype=x.dtype)),
                         [((6, 2), (-2, 2)), ((2,), (samples.INT, 6))]),
    "Tensor.index_put_": (lambda x, i: x.clone().index_put_((i,), x[:4], accumulate=True),
                          [V, I4]),
    "Tensor.index_fill_": (lambda x, i: x.clone().index_fill_(0, i, 2.0), [V, I4]),
    "Tensor.__setitem__": (lambda x, i: _set(x.clone(), i, x[:4]), [V, I4]),
}


def _set(y, i, v):
    y[i] = v
    return y

CASES = {**{f"primitive {k}": v for k, v in samples.primitive_cases().items()},
         **samples.function_cases(),
         **{name: samples.Case(name, call, tuple(specs)) for name, (call, specs) in EXTRA.items()}}
INDEXED = sorted(name for name, case in CASES.items()
                 if any(kind != samples.BOOL and kind[0] == samples.INT for _, kind in case.specs))


def _int_inputs(case):
    return [k for k, (_, kind) in enumerate(case.specs)
            if kind != samples.BOOL and kind[0] == samples.INT]


def _bad_variants(case, example):
    """The example with its integer inputs moved out of range: past the end, at -n-1,
    at the first negative index, far past the end (a wrapping replay would not notice)."""
    out = []
    for k in _int_inputs(case):
        n = case.specs[k][1][1]
        for value in (n, -n - 1, -1, 3 * n + 1):
            arrays = [a.copy() for a in example]
            arrays[k].reshape(-1)[-1] = value
            out.append(arrays)
    return out


def _run(fn, arrays, requires_grad=False):
    """(outputs as arrays, None) or (None, the exception)."""
    dl.manual_seed(0)
    tensors = [dl.tensor(a, requires_grad=requires_grad and a.dtype.kind == "f")
               for a in arrays]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = fn(*tensors)
    except Exception as exc:  # noqa: BLE001  (compared with eager's)
        return None, exc
    flat = list(out) if isinstance(out, (tuple, list)) else [out]
    return [np.asarray((o.detach() if isinstance(o, dl.Tensor) else o).array
                       if isinstance(o, dl.Tensor) else o) for o in flat], None


def _agree(name, path, want, error, got, got_error, exact=True):
    if error is not None:
        assert got_error is not None, f"{name} ({path}): eager raised {error!r}, the replay " \
                                      f"returned {got}"
        if isinstance(error, GraphError):  # (eager tracing refused it: any error will do)
            return
        assert isinstance(got_error, type(error)), \
            f"{name} ({path}): eager raised {error!r}, the replay {got_error!r}"
        return
    assert got_error is None, f"{name} ({path}): the replay raised {got_error!r}, eager not"
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (name, path)
        if exact or w.dtype.kind not in "fc":
            np.testing.assert_array_equal(g, w, err_msg=f"{name} ({path})")
        else:  # (a fused kernel may add in another order: to the last bits)
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15, equal_nan=True,
                                       err_msg=f"{name} ({path})")


def _traced(case, example):
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        traced = jit.trace(case.call, tuple(dl.tensor(a) for a in example))
    return traced, any(issubclass(w.category, TracerWarning) for w in caught)


@pytest.mark.parametrize("name", INDEXED)
def test_an_index_out_of_range_is_refused_by_the_replay_as_by_eager(name):
    case = CASES[name]
    example, *others = samples.variants(case, seed=len(name))
    traced, announced = _traced(case, example)
    if announced:  # (the graph kept something of the example and said so: not silent)
        pytest.skip("tracing announced a value read (TracerWarning)")
    graph = traced.graph
    for arrays in _bad_variants(case, example) + others:
        want, error = _run(case.call, arrays)
        _agree(name, "trace", want, error, *_run(traced, arrays))
        _agree(name, "trace, tape", want, error, *_run(traced, arrays, requires_grad=True))
        try:
            got, got_error = [np.asarray(v) for v in jit.interpret(graph, *arrays)], None
        except Exception as exc:  # noqa: BLE001
            got, got_error = None, exc
        _agree(name, "interpret", want, error, got, got_error)


@pytest.mark.parametrize("name", INDEXED)
def test_an_index_out_of_range_is_refused_by_compile_as_by_eager(name):
    case = CASES[name]
    example, *others = samples.variants(case, seed=len(name))
    compiled = dl.compile(case.call)
    _run(compiled, example)  # (traced on the example, as a user's first call)
    for arrays in _bad_variants(case, example) + others:
        want, error = _run(case.call, arrays)
        _agree(name, "dl.compile", want, error, *_run(compiled, arrays), exact=False)


@pytest.mark.parametrize("name", INDEXED)
def test_an_index_out_of_range_is_refused_by_a_loaded_graph(name, tmp_path):
    case = CASES[name]
    example = samples.variants(case, seed=len(name))[0]
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = export.export(case.call, tuple(dl.tensor(a) for a in example))
        export.save(program, tmp_path / "g.dlg")
    except (GraphError, TypeError) as exc:  # a setting a graph file cannot hold: refused
        assert str(exc)
        return
    if _traced(case, example)[1]:
        pytest.skip("tracing announced a value read (TracerWarning)")
    module = export.load(tmp_path / "g.dlg").module()
    for arrays in _bad_variants(case, example):
        want, error = _run(case.call, arrays)
        _agree(name, "loaded", want, error, *_run(module, arrays))


# ------------------------------------------------------------ the cases


def test_a_traced_index_put_refuses_what_eager_refuses_instead_of_wrapping():
    f = jit.trace(lambda x, i: dl.index_put(x, (i,), dl.tensor(9.0)),
                  (dl.zeros(5), dl.tensor([1, 3])))
    with pytest.raises(IndexError, match="index_put: index 7 is out of range for dimension 0"):
        dl.index_put(dl.zeros(5), (dl.tensor([1, 7]),), dl.tensor(9.0))
    with pytest.raises(IndexError, match="index_put: index 7 is out of range for dimension 0"):
        f(dl.zeros(5), dl.tensor([1, 7]))  # (before: [0, 9, 9, 0, 0], 7 wrapped to 2)
    with pytest.raises(GraphError):  # (also a GraphError, naming the graph's node)
        f(dl.zeros(5), dl.tensor([-6, 0]))
    assert f(dl.zeros(5), dl.tensor([-1, 0])).tolist() == [9.0, 0.0, 0.0, 0.0, 9.0]


def test_a_traced_index_fill_refuses_what_eager_refuses_instead_of_filling_elsewhere():
    f = jit.trace(lambda x, i: x.index_fill(0, i, -1.0), (dl.zeros(5), dl.tensor([1, 3])))
    with pytest.raises(IndexError, match="index_fill: index 5 is out of range"):
        f(dl.zeros(5), dl.tensor([1, 5]))  # (before: [-1, -1, 0, 0, 0])


def test_a_traced_loss_refuses_a_negative_class_instead_of_reading_from_the_end():
    z = dl.randn(3, 4)
    f = jit.trace(lambda z, t: F.cross_entropy(z, t), (z, dl.tensor([0, 1, 2])))
    with pytest.raises(IndexError, match="target holds class -1 but the input has 4"):
        f(z, dl.tensor([0, -1, 2]))
    ignored = jit.trace(lambda z, t: F.nll_loss(z, t, ignore_index=-1), (z, dl.tensor([0, 1, 2])))
    assert ignored(z, dl.tensor([0, -1, 2])).item() == F.nll_loss(
        z, dl.tensor([0, -1, 2]), ignore_index=-1).item()


def test_a_gradient_graph_through_gather_refuses_an_index_out_of_range():
    traced = jit.trace(lambda x, i: dl.sum(dl.gather(x, 0, i) ** 2),
                       (dl.ones(3), dl.tensor([0, 2])))
    g = jit.optimize(jit.grad(traced.graph), ["dce", "cse", "fold"])
    value, gradient = g.run(np.array([1.0, 2.0, 3.0], np.float32), np.array([0, 2]))
    assert gradient.tolist() == [2.0, 0.0, 6.0]
    with pytest.raises(RuntimeError, match="gather\\(\\): index 3 is out of bounds"):
        g.run(np.ones(3, np.float32), np.array([0, 3]))


def test_compile_keeps_the_checks_across_graph_breaks_and_guards():
    def f(x, i, j):
        y = dl.gather(x, 0, i)
        if y.sum() > 0:  # (a value read: a graph break, one graph per branch)
            return dl.index_put(x, (j,), y * 2)
        return x.index_fill(0, j, 0.0)

    compiled = dl.compile(f)
    x, i, j = dl.tensor([1.0, 2.0, 3.0]), dl.tensor([0, 2]), dl.tensor([1, -1])
    assert compiled(x, i, j).tolist() == f(x, i, j).tolist() == [1.0, 2.0, 6.0]
    assert compiled(-x, i, j).tolist() == f(-x, i, j).tolist() == [-1.0, 0.0, 0.0]
    assert dl.jit.explain(f)(x, i, j).graph_break_count == 1
    with pytest.raises(RuntimeError, match="gather"):  # (the graph before the break)
        compiled(x, dl.tensor([0, 3]), j)
    for sign in (1, -1):  # (each branch's graph after it)
        with pytest.raises(IndexError, match="index -4 is out of range"):
            compiled(sign * x, i, dl.tensor([1, -4]))
    # a new shape is a new guard: its graph checks as well
    assert compiled(dl.ones(4), dl.tensor([3]), dl.tensor([3])).tolist() == [1.0, 1.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="index 4 is out of bounds"):
        compiled(dl.ones(4), dl.tensor([4]), dl.tensor([3]))


def test_a_check_whose_result_is_not_read_still_runs_in_the_replay():
    def f(x, i):
        dl.gather(x, 0, i)  # (the result is dropped; eager raises all the same)
        return x * 2

    traced = jit.trace(f, (dl.zeros(3), dl.tensor([0])))
    graph = jit.optimize(traced.graph, ["dce", "cse", "fold"])
    assert any(node.op_name == "check_index" for node in graph.nodes)
    with pytest.raises(RuntimeError, match="index 4 is out of bounds"):
        graph.run(np.zeros(3, np.float32), np.array([4]))


def test_vmap_checks_every_example_s_index():
    x = dl.randn(3, 5)
    good, bad = dl.tensor([[0, 1], [2, 3], [4, 0]]), dl.tensor([[0, 1], [2, 5], [4, 0]])
    gather = dl.func.vmap(lambda x, i: dl.gather(x, 0, i))
    assert gather(x, good).tolist() == [dl.gather(x[k], 0, good[k]).tolist() for k in range(3)]
    with pytest.raises(RuntimeError, match="index 5 is out of bounds"):
        gather(x, bad)
    put = dl.func.vmap(lambda x, i: dl.index_put(x, (i,), dl.tensor(0.0)))
    with pytest.raises(IndexError, match="index 5 is out of range"):
        put(x, bad)
    loss = dl.func.vmap(lambda z, t: F.nll_loss(z, t), in_dims=(None, 0))
    with pytest.raises(IndexError, match="target holds class -2"):
        loss(dl.randn(2, 4), dl.tensor([[0, 1], [3, -2]]))


def test_the_check_costs_one_pass_and_keeps_the_index_values():
    index = np.array([4, 0, 2])
    out = dl.ops.registry.PRIMITIVES["check_index"].forward(
        None, np, index, size=5, message="index {value} is out of range")
    assert out is not index and np.shares_memory(out, index)
    assert out.tolist() == [4, 0, 2]
    with pytest.raises(IndexError, match="index -1 is out of range"):
        dl.ops.registry.PRIMITIVES["check_index"].forward(
            None, np, np.array([0, -1]), size=5, message="index {value} is out of range")


@pytest.mark.parametrize("write", [
    lambda x, i: x[i],
    lambda x, i: dl.take(x, i),
    lambda x, i: x.reshape(1, 5)[:, i],
    lambda x, i: _set(x.clone(), i, 1.0),
    lambda x, i: dl.zeros(5, device=x.device).index_put_((i,), x[:2], accumulate=True),
], ids=["x[i]", "take", "x[:, i]", "x[i] = v", "index_put_ accumulate"])
def test_an_index_out_of_range_is_refused_on_the_gpu_where_cupy_would_wrap(write, cuda):
    x = dl.arange(5.0, device=cuda)
    assert np.asarray(write(x, dl.tensor([4, -5], device=cuda)).cpu().array).size
    traced = jit.trace(write, (x, dl.tensor([0, 1], device=cuda)))
    for bad in ([1, 5], [-6, 0]):
        with pytest.raises(IndexError, match="out of bounds|out of range"):
            write(x, dl.tensor(bad, device=cuda))
        with pytest.raises(IndexError, match="out of bounds|out of range"):
            traced(x, dl.tensor(bad, device=cuda))
