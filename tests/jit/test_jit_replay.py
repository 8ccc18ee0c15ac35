"""Trace on one input, replay on others: the same values as eager, or a warning, or an error.

Every entry of the one table of sample inputs (:mod:`difflab.testing.samples`):
each registry primitive, the public functions and Tensor methods that need
more than a float tensor, and every one a single float tensor is enough for
(found by probing the API).  Each is traced on its example, then replayed on
other values, signs and orders, ties, and the edges (inf, -inf, nan, -0.0):
the replay must equal eager bit for bit (NaNs equal), unless tracing
announced with a ``TracerWarning`` that it kept something of the example, or
both raise.  The same through ``export.save``/``load``, and, for the
primitives with a derivative, the compiled gradient against the tape's.
"""

import warnings

import numpy as np
import pytest

import difflab as dl
from difflab import export, jit
from difflab.jit.graph import GraphError
from difflab.jit.tracing import TracerWarning
from difflab.ops import registry
from difflab.testing import samples

PRIMITIVE_CASES = samples.primitive_cases()
CASES = {**{f"primitive {k}": v for k, v in PRIMITIVE_CASES.items()},
         **samples.function_cases(), **{c.name: c for c in samples.probe_cases()}}

# The registry as the package defines it (other tests register primitives at run time).
BUILT_IN = set(registry.PRIMITIVES)


def test_every_primitive_has_an_entry_in_the_table():
    assert set(PRIMITIVE_CASES) == BUILT_IN


def test_the_issue_cases_are_in_the_table():
    names = {"dl.where", "Tensor.sort", "Tensor.argsort", "Tensor.topk", "dl.logical_and",
             "dl.isclose", "dl.count_nonzero", "dl.histc", "dl.nn.functional.one_hot",
             "dl.gather"}
    assert names <= set(CASES)
    assert len(CASES) > 250  # every primitive, and the public API a float tensor reaches


def _run(fn, arrays):
    """(outputs as arrays, None) or (None, the exception).  The random generator starts
    from one seed for every run, so a random primitive (dropout) draws alike."""
    dl.manual_seed(0)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = fn(*[dl.tensor(a) for a in arrays])
    except Exception as exc:  # noqa: BLE001  (compared with the other side's)
        return None, exc
    flat = list(out) if isinstance(out, (tuple, list)) else [out]
    return [np.asarray(o.array if isinstance(o, dl.Tensor) else o) for o in flat], None


def _same(got, want, where):
    assert len(got) == len(want), where
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (where, g.shape, w.shape, g.dtype)
        if w.dtype == dl.dtypes.BFLOAT16:  # (ml_dtypes' type: compared as its float32 values)
            g, w = g.astype(np.float32), w.astype(np.float32)
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0, equal_nan=True,
                                       err_msg=where)
            for g_part, w_part in ((g.real, w.real), (g.imag, w.imag)) if w.dtype.kind == "c" \
                    else ((g, w),):  # (the sign of zero, of each part of a complex number)
                assert np.array_equal(np.signbit(g_part), np.signbit(w_part)) or not np.all(
                    np.isfinite(w_part) | np.isnan(w_part)), where
        else:
            np.testing.assert_array_equal(g, w, err_msg=where)


def _trace(case, example):
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        traced = jit.trace(case.call, tuple(dl.tensor(a) for a in example))
    announced = any(issubclass(w.category, TracerWarning) for w in caught)
    return traced, announced


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_replay_equals_eager(name):
    case = CASES[name]
    example, *others = samples.variants(case, seed=len(name))
    traced, announced = _trace(case, example)
    for k, arrays in enumerate(others):
        want, error = _run(case.call, arrays)
        got, got_error = _run(traced, arrays)
        if announced:
            continue  # (the graph kept something of the example, and said so)
        if error is not None:
            assert got_error is not None, f"{name}: eager raised {error!r}, the replay did not"
            continue
        assert got_error is None, f"{name}: the replay raised {got_error!r}, eager did not"
        _same(got, want, f"{name}, input {k + 1}")


@pytest.mark.parametrize("name", sorted(PRIMITIVE_CASES))
def test_a_saved_and_loaded_graph_equals_eager(name, tmp_path):
    case = PRIMITIVE_CASES[name]
    example, *others = samples.variants(case, seed=len(name))
    try:
        with np.errstate(all="ignore"):
            program = export.export(case.call, tuple(dl.tensor(a) for a in example))
        export.save(program, tmp_path / "g.dlg")
    except GraphError as exc:  # a setting JSON cannot hold: refused, with its reason
        assert str(exc)
        return
    module = export.load(tmp_path / "g.dlg").module()
    for k, arrays in enumerate(others):
        want, error = _run(case.call, arrays)
        got, got_error = _run(module, arrays)
        if error is not None:
            assert got_error is not None, name
            continue
        assert got_error is None, f"{name}: {got_error!r}"
        _same(got, want, f"{name} loaded, input {k + 1}")


DIFFERENTIABLE = sorted(n for n, p in registry.PRIMITIVES.items()
                        if p.differentiable and n in PRIMITIVE_CASES)


@pytest.mark.parametrize("weighted", [True, False], ids=["weighted", "plain sum"])
@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_the_compiled_gradient_equals_the_tape_on_other_inputs(name, weighted):
    """Weighted, the adjoints reaching the primitive are tensors; under a plain sum they are
    constant arrays (the seed broadcast), and a rule that combined one with a traced mask
    off the graph baked the example's mask into the gradient (dl.where did)."""
    case = PRIMITIVE_CASES[name]
    floats = [i for i, (_, kind) in enumerate(case.specs) if kind not in (samples.BOOL,)
              and kind[0] != samples.INT]
    example, other = samples.variants(case, seed=len(name))[:2]
    weight = {}

    def loss(*xs):
        y = case.call(*xs)
        if not weighted:
            return y.sum()
        if y.shape not in weight:
            weight[y.shape] = dl.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(y.shape))
        return (y * weight[y.shape]).sum()

    compiled = dl.diff.grad(loss, method="compiled", argnums=floats)
    compiled(*[dl.tensor(a) for a in example])  # traced here
    got = compiled(*[dl.tensor(a) for a in other])
    want = dl.diff.grad(loss, method="reverse", argnums=floats)(*[dl.tensor(a) for a in other])
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12,
                                   err_msg=name)
