"""Tests for notebook 11's exercises: a branch written as an operation, counting lines."""

import numpy as np
import submission

import difflab as dl
from difflab import jit
from difflab.grading import points
from difflab.grading.checks import assert_close

BRANCH = ("A Python `if` on a value is decided once, at tracing, and baked into the graph. "
          "Write the choice as an operation: dl.where(v.sum() > 0, v * 2.0, -v).")


def clipped(v):
    return v * 2.0 if v.sum() > 0 else -v


def check_traced(values):
    v = np.array(values)
    got = submission.traced_clipped(dl.tensor(v))
    assert_close(got, clipped(v), what=f"the graph traced at [1, 2], run at {values}",
                 atol=1e-12, rtol=0, hint=BRANCH)


@points(1, tags=["tracing"])
def test_traced_graph_right_on_the_traced_side():
    check_traced([1.0, 2.0])


@points(2, tags=["tracing"])
def test_traced_graph_right_on_the_other_side():
    check_traced([-1.0, -2.0])


@points(1, hidden=True, tags=["tracing"])
def test_traced_graph_right_at_a_mixed_point():
    check_traced([3.0, -4.5, 0.25])


def backward_graph():
    """Section 11.2's backward graph, rebuilt here as the notebook builds it."""
    x = dl.tensor(np.random.default_rng(0).normal(size=(3, 4)))
    w = dl.tensor(np.random.default_rng(2).normal(size=(4,))).requires_grad_()
    forward = jit.trace(lambda x, w: ((x @ w).sin() * (x @ w)).sum(), (x, w)).graph
    return jit.grad(forward)


COUNT = "Optimize `backward` with exactly the given passes and count its nodes."


@points(1, tags=["passes"])
def test_lines_after_no_pass():
    assert_close(submission.lines_after([]), len(backward_graph().nodes),
                 what="lines_after([])", atol=0, rtol=0, hint=COUNT)


@points(1, tags=["passes"])
def test_lines_after_cse():
    want = len(jit.optimize(backward_graph(), ["cse"]).nodes)
    assert_close(submission.lines_after(["cse"]), want, what='lines_after(["cse"])',
                 atol=0, rtol=0, hint=COUNT)


@points(1, hidden=True, tags=["passes"])
def test_lines_after_several_passes():
    passes = ["dce", "cse", "fold"]
    want = len(jit.optimize(backward_graph(), passes).nodes)
    assert_close(submission.lines_after(passes), want, what=f"lines_after({passes})",
                 atol=0, rtol=0, hint=COUNT)
