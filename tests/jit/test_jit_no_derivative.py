"""Operations without a derivative are primitives: one dispatch for the tape, Dual and jit."""

import warnings

import numpy as np
import pytest

import difflab as dl
from difflab import jit
from difflab.autograd import functional
from difflab.diff import Dual
from difflab.jit.tracing import TracerWarning
from difflab.ops import registry
from difflab.ops.primitive import NoDerivativeError


def _no_derivative_names():
    return sorted(name for name, p in registry.PRIMITIVES.items() if not p.differentiable)


def test_the_operations_without_a_derivative_are_registered_primitives():
    names = set(_no_derivative_names())
    assert {"eq", "lt", "bitwise_and", "logical_not", "isinf", "isnan", "isclose",
            "argmax", "argsort", "count_nonzero", "histc", "one_hot"} <= names
    # the step functions (sign, floor, floor_divide, ...) are differentiable, derivative 0
    assert not {"sign", "floor", "round", "floor_divide"} & names
    for name in names:
        op = registry.get(name)
        assert op.jvp is not None and op.double_backward is False
        with pytest.raises(NoDerivativeError, match="no derivative"):
            op.vjp(None, np, np.ones(1))


def test_tracing_patches_nothing():
    """The tracer only listens to engine.apply: no method or function is swapped."""
    before = {k: v for k, v in vars(dl.Tensor).items()}
    mro = [dict(vars(c)) for c in dl.Tensor.__mro__]
    run_backward = functional.run_backward
    seen = {}

    def f(x):
        seen["eq"] = type(x).__eq__ is before.get("__eq__", type(x).__eq__)
        seen["run_backward"] = functional.run_backward is run_backward
        y = (x > 0) & (x < 2)
        return dl.where(y, x, -x).sum()

    jit.trace(f, dl.tensor([1.0, -2.0, 3.0]))
    assert seen == {"eq": True, "run_backward": True}
    assert [dict(vars(c)) for c in dl.Tensor.__mro__] == mro


def test_the_tape_records_nothing_for_them_and_says_why_there_is_no_gradient():
    x = dl.tensor([3.0, -1.0, 2.0], requires_grad=True)
    for result in (x > 0, x.argmax(), dl.isinf(x), x.argsort(), dl.count_nonzero(x),
                   dl.isclose(x, x), x == x):
        assert not result.requires_grad and result.grad_fn is None
    for step in (x.sign(), x.floor()):  # (step functions: PyTorch's zero gradient)
        assert step.requires_grad
        assert functional.grad(step.sum(), x)[0].tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="does not require grad"):
        functional.grad(x.argmax(), x)
    # the differentiable path around a mask still has its gradient
    y = dl.where(x > 0, x * x, -x).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, -1.0, 4.0])


def test_forward_mode_gives_them_a_zero_tangent():
    x = Dual(np.array([3.0, -1.0, 2.0]), np.ones(3))
    t = dl.Tensor._wrap(x)  # the whole tensor stack runs on Dual arrays in forward mode
    for result in (t > 0, t.sign(), t.isnan(), t.argmax()):
        assert not isinstance(result.array, Dual)  # a constant: its tangent is zero
    y = dl.where(t > 0, t * t, -t)
    np.testing.assert_array_equal(y.array.tangent, [6.0, -1.0, 4.0])


@pytest.mark.parametrize("fn, example, other", [
    (lambda x: dl.where(dl.isinf(x), dl.zeros_like(x), x), [1.0, 2.0, 3.0], [np.inf, 2.0, 3.0]),
    (lambda x: x.sort().values, [3.0, 1.0, 2.0], [1.0, 3.0, 2.0]),
    (lambda x: x[x.argsort()], [3.0, 1.0, 2.0], [1.0, 3.0, 2.0]),
    (lambda x: x.topk(2).values, [3.0, 1.0, 2.0], [1.0, 3.0, 2.0]),
    (lambda x: dl.logical_and(x > 0, dl.logical_not(x > 2)).float(), [3.0, 1.0, -2.0],
     [1.0, 3.0, 2.0]),
    (lambda x: dl.isclose(x, dl.ones_like(x)).float(), [1.0, 2.0, 3.0], [2.0, 1.0, 1.0]),
    (lambda x: dl.count_nonzero(x), [0.0, 1.0, 2.0], [0.0, 0.0, 2.0]),
    (lambda x: dl.histc(x, bins=3, min=0, max=3), [0.5, 1.5, 2.5], [0.5, 0.5, 0.5]),
    (lambda x: dl.nn.functional.one_hot(x.argmax(), 3), [3.0, 1.0, 2.0], [1.0, 3.0, 2.0]),
    (lambda x: dl.gather(x, 0, x.argsort()), [3.0, 1.0, 2.0], [1.0, 3.0, 2.0]),
    (lambda x: x // 1.5 + x % 1.5, [3.0, 1.0, 2.0], [-1.0, 3.5, 2.0]),
    (lambda x: x.round() * x.sign() + x.ceil() - x.floor(), [3.2, -1.7, 2.5],
     [-0.5, 1.5, 7.1]),
])
def test_the_issue_cases_replay_the_new_values(fn, example, other):
    traced = jit.trace(fn, dl.tensor(example))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        got = traced(dl.tensor(other))
    want = fn(dl.tensor(other))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_a_shape_read_from_values_warns_naming_the_line():
    with pytest.warns(TracerWarning, match=r"test_jit_no_derivative.py:\d+: index: the "
                                           r"output's shape depends on the values"):
        jit.trace(lambda x: x[x > 0].sum(), dl.tensor([3.0, -1.0, 2.0]))
    with pytest.warns(TracerWarning, match="one_hot: the output's shape depends"):
        jit.trace(lambda x: dl.nn.functional.one_hot(x), dl.tensor([0, 2, 1]))
    with warnings.catch_warnings():  # a mask made outside the function: its shape is fixed
        warnings.simplefilter("error", TracerWarning)
        mask = dl.tensor([True, False, True])
        jit.trace(lambda x: x[mask].sum(), dl.tensor([3.0, -1.0, 2.0]))
        jit.trace(lambda x: dl.nn.functional.one_hot(x, 3), dl.tensor([0, 2, 1]))


def test_len_of_a_masked_tensor_warns():
    with pytest.warns(TracerWarning, match="shape depends on the values"):
        jit.trace(lambda x: x * len(x[x > 0]), dl.tensor([3.0, -1.0, 2.0]))


@pytest.mark.parametrize("read", [
    lambda x: float(x.sum()), lambda x: x.sum().item(), lambda x: bool(x.sum() > 0),
    lambda x: x.tolist(), lambda x: int(x.argmax()), lambda x: dl.equal(x, x),
    lambda x: dl.allclose(x, x), lambda x: x.detach().numpy(),
])
def test_a_value_read_into_python_warns(read):
    with pytest.warns(TracerWarning, match="test_jit_no_derivative.py"):
        jit.trace(lambda x: (read(x), x * 2)[1], dl.tensor([3.0, -1.0, 2.0]))


def test_integer_division_by_zero_is_an_error_in_a_replay_too():
    traced = jit.trace(lambda a, b: a // b, (dl.tensor([4, 5]), dl.tensor([2, 3])))
    with pytest.raises(ZeroDivisionError, match="integer division or modulo by zero"):
        traced(dl.tensor([4, 5]), dl.tensor([2, 0]))


def test_an_array_viewed_from_a_traced_value_warns_instead_of_going_stale():
    """index_select once flattened the raw index (idx.array.reshape(-1)): a silent constant."""
    with pytest.warns(TracerWarning, match="a view of its .array"):
        jit.trace(lambda x, i: x[i.array.reshape(-1)], (dl.tensor([1.0, 2.0, 3.0]),
                                                         dl.tensor([[2, 0]])))
    traced = jit.trace(lambda x, i: dl.index_select(x, 0, i),
                       (dl.tensor([1.0, 2.0, 3.0]), dl.tensor([2, 0])))
    np.testing.assert_array_equal(traced(dl.tensor([1.0, 2.0, 3.0]), dl.tensor([1, 1])).numpy(),
                                  [2.0, 2.0])


def test_graph_files_naming_the_old_recorded_operators_still_load():
    from difflab.jit.ops import RENAMED, resolve

    for old, new in RENAMED.items():
        assert resolve(old) is registry.get(new)
    x, y = np.array([3, 4]), np.array([2, 3])
    assert (resolve("floordiv").forward(None, np, x, y) == x // y).all()
    assert (resolve("and").forward(None, np, x > 2, y > 2) == [False, True]).all()
