"""A whole training step (zero_grad, forward, ``backward()``, ``opt.step()``) under
``dl.compile`` and ``dl.jit.explain``.

``backward()`` fills ``.grad`` and an optimizer updates raw arrays: no graph replays
either, so such a call is a graph break that runs eagerly.  A step written with
difflab's operations only (``dl.autograd.grad``, then ``p.sub_(...)``) compiles: its
graph replays the update.  Each test is written as a
user's program: the same step on two copies of the same world (same seed), one called
eagerly, the other compiled or explained; the parameters, gradients, buffers, optimizer
state, arguments and random generator must end up the same, bit for bit (the step ran
once, as one eager call).
"""

import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F


@dataclass
class World:
    model: Any
    opt: Any
    step: Any
    args: tuple


def world(kind: str) -> World:
    """A model, its optimizer, the step ``kind`` and its arguments, all from seed 0."""
    dl.manual_seed(0)
    if kind == "batchnorm_dropout":
        model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.3),
                              nn.Linear(16, 3))
    else:
        model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))
    model.train()
    if kind == "adam_weight_decay":
        opt = dl.optim.Adam(model.parameters(), lr=0.01, weight_decay=0.1)
    else:
        opt = dl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = dl.randn(4, 8), dl.tensor([0, 1, 2, 0])

    def plain(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    def with_a_read(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if loss.item() > 1:  # (a splitting read, then the backward break)
            loss = loss * 0.5
        loss.backward()
        opt.step()
        return loss

    def clipped(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        opt.step()
        return loss

    def several(x, y):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        return loss, logits.argmax(1), (logits.argmax(1) == y).float().mean()

    def backward_only(x, y):  # (the gradients accumulate from call to call)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    def step_only(x, y):  # (the gradients were computed before: each call steps again)
        opt.step()
        return F.cross_entropy(model(x), y)

    def functional(x, y):  # (no .grad, no optimizer: difflab's operations only, compiled)
        loss = F.cross_entropy(model(x), y)
        grads = dl.autograd.grad(loss, list(model.parameters()))
        with dl.no_grad():
            for p, g in zip(model.parameters(), grads):
                p.sub_(0.1 * g)
        return loss  # (its tape saved the weights before the update: no gradient)

    step = {"sgd": plain, "adam_weight_decay": plain, "batchnorm_dropout": plain,
            "item_break": with_a_read, "clip_grad_norm": clipped, "several_outputs": several,
            "backward_only": backward_only, "step_only": step_only,
            "functional": functional}[kind]
    plain(x, y)  # (one eager step first: the optimizer has state, the parameters .grad)
    return World(model, opt, step, (x, y))


def line_of(fn, text: str) -> int:
    """The line of ``fn``'s source that holds ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def as_arrays(value: Any) -> Any:
    """Tensors (nested in dicts, lists and tuples) as NumPy arrays, to compare."""
    if isinstance(value, dl.Tensor):
        return value.detach().numpy().copy()
    if isinstance(value, dict):
        return {k: as_arrays(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_arrays(v) for v in value]
    return value


def assert_same(got: Any, want: Any, what: str) -> None:
    if isinstance(want, dict):
        assert got.keys() == want.keys(), what
        for k in want:
            assert_same(got[k], want[k], f"{what}[{k!r}]")
    elif isinstance(want, list):
        assert len(got) == len(want), what
        for k, (a, b) in enumerate(zip(got, want)):
            assert_same(a, b, f"{what}[{k}]")
    elif isinstance(want, np.ndarray):
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        assert got == want, what


def assert_same_state(got: World, want: World) -> None:
    """Parameters and buffers, gradients, the optimizer's state: bit for bit."""
    assert_same(as_arrays(got.model.state_dict()), as_arrays(want.model.state_dict()), "model")
    assert_same([as_arrays(p.grad) for p in got.model.parameters()],
                [as_arrays(p.grad) for p in want.model.parameters()], "grad")
    assert_same(as_arrays(got.opt.state_dict()), as_arrays(want.opt.state_dict()), "optimizer")


# What explain reports for each step: (the start of each break's reason, whether it splits).
BACKWARD = ("backward() inside the compiled function", False)
BREAKS = {
    "sgd": [BACKWARD],
    "adam_weight_decay": [BACKWARD],
    # (the closure's BatchNorm wrote its running statistics before the backward)
    "batchnorm_dropout": [BACKWARD, ("the function wrote in place into a tensor from outside",
                                     False)],
    "item_break": [(".item() of a tensor computed from the inputs", True), BACKWARD],
    "clip_grad_norm": [BACKWARD],
    "several_outputs": [BACKWARD],
    "functional": [],  # (one graph: the forward, the gradients and the update)
}


@pytest.mark.parametrize("kind", list(BREAKS))
def test_explain_of_a_training_step_reports_its_breaks_and_steps_once_as_eager(kind):
    eager, explained = world(kind), world(kind)
    arguments = as_arrays(explained.args)
    dl.manual_seed(7)
    eager.step(*eager.args)
    eager_draw = dl.rand(4).numpy()
    dl.manual_seed(7)
    out = dl.jit.explain(explained.step)(*explained.args)
    # One eager call's effects, once: the parameters stepped once, the optimizer's state
    # (Adam's step count and moments, SGD's momentum) one step on, the BatchNorm
    # statistics updated once, the same dropout mask drawn and the generator where the
    # eager call left it; the arguments untouched.
    assert_same_state(explained, eager)
    np.testing.assert_array_equal(dl.rand(4).numpy(), eager_draw)
    assert_same(as_arrays(explained.args), arguments, "arguments")
    nexts = []
    for w in (explained, eager):
        dl.manual_seed(8)
        nexts.append(as_arrays(w.step(*w.args)))
    assert_same(*nexts, "the next call")
    assert out.compile_seconds > 0
    assert out.graph_break_count == len(out.break_reasons) == len(BREAKS[kind])
    if kind == "functional":  # (compiled: one graph, replayed once)
        assert out.graph_count == len(out.ops_per_graph) == 1 and out.op_count > 20
        return
    # The report: no graph (the call runs eagerly), each break with its reason and line.
    assert (out.graph_count, out.graphs, out.op_count, out.ops_per_graph) == (0, [], 0, [])
    for got, (reason, splits) in zip(out.break_reasons, BREAKS[kind]):
        assert got.reason.startswith(reason) and got.splits == splits, got
        assert got.filename == __file__
    backward = next(b for b in out.break_reasons if b.reason.startswith(BACKWARD[0]))
    assert backward.lineno == line_of(explained.step, "backward()")
    assert "dl.compile(model)" in backward.reason
    assert "Eager: the call runs eagerly" in str(out)


@pytest.mark.parametrize("kind", [*BREAKS, "backward_only", "step_only"])
def test_a_compiled_training_step_equals_eager_steps(kind):
    eager, compiled = world(kind), world(kind)
    fast = dl.compile(compiled.step)
    for call in range(3):  # (the first call traces, then runs eagerly; the others, eagerly)
        dl.manual_seed(call)
        want = as_arrays(eager.step(*eager.args))
        dl.manual_seed(call)
        assert_same(as_arrays(fast(*compiled.args)), want, f"call {call}")
        assert_same_state(compiled, eager)
    if kind == "functional":
        assert fast.traces == 1 and not fast.breaks
        return
    stopped = [b for b in fast.breaks if not b.splits]
    assert fast.traces == 0 and stopped
    assert stopped[0].reason.split(" inside")[0] in ("backward()", "SGD.step()")


def test_an_optimizer_step_in_a_compiled_function_is_a_break_at_its_line():
    w = world("step_only")
    fast = dl.compile(w.step)
    fast(*w.args)
    (found,) = fast.breaks
    assert found.reason.startswith("SGD.step() inside the compiled function")
    assert (found.filename, found.lineno) == (__file__, line_of(w.step, "opt.step()"))


def test_explain_of_a_compiled_function_leaves_its_cache_alone():
    w = world("sgd")
    fast = dl.compile(w.step)
    out = dl.jit.explain(fast)(*w.args)
    assert out.graph_break_count == 1 and fast.traces == 0 and not fast.cache
