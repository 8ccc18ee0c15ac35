"""``autograd.graph.saved_tensors_hooks``: every value the tape saves for backward is packed
when saved and unpacked when backward reads it; the unpacked tensor is what the gradient
is computed from.  (Which values an operation saves is each library's choice: the counts
here are difflab's; see examples/pytorch/saved_tensor_hooks.py for the comparison.)"""

import numpy as np
import pytest

import difflab as dl
from difflab import nn
from difflab.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks
from difflab.autograd.saved_hooks import SavedTensorsHooks

rng = np.random.default_rng(0)


def t(*shape, requires_grad=True):
    return dl.tensor(rng.standard_normal(shape), requires_grad=requires_grad)


def grads(f, *xs):
    for x in xs:
        x.grad = None
    f(*xs).sum().backward()
    return [x.grad.numpy().copy() for x in xs]


def test_mul_packs_both_inputs_themselves_and_unpacks_each_once():
    a, b = t(3), t(3)
    packed, unpacked = [], []

    def pack(x):
        packed.append(x)
        return ("box", x)

    def unpack(box):
        unpacked.append(box[1])
        return box[1]

    with saved_tensors_hooks(pack, unpack):
        y = a * b
    assert len(packed) == 2 and {id(x) for x in packed} == {id(a), id(b)}
    assert unpacked == []
    y.sum().backward()
    assert len(unpacked) == 2
    np.testing.assert_array_equal(a.grad.numpy(), b.detach().numpy())


def test_what_unpack_returns_is_what_the_gradient_reads():
    # PyTorch 2.13 gives the same: d(a*b)/da = unpacked b = 3b, d(a*b)/db = 3a
    a = dl.tensor([1.0, -2.0, 0.5], requires_grad=True)
    b = dl.tensor([4.0, 0.25, -1.0], requires_grad=True)
    with saved_tensors_hooks(lambda x: x, lambda x: x * 3):
        y = a * b
    y.sum().backward()
    assert a.grad.tolist() == [12.0, 0.75, -3.0] and b.grad.tolist() == [3.0, -6.0, 1.5]


def test_pack_may_return_anything_and_unpack_restores_it():
    storage = []

    def pack(x):
        storage.append(x)
        return len(storage) - 1

    x = t(5)
    with saved_tensors_hooks(pack, lambda k: storage[k]):
        y = x * x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())
    assert len(storage) == 2


def test_pow_with_packing_that_scales_and_unpacking_that_unscales():
    x = t(5)
    with saved_tensors_hooks(lambda x: x * 4, lambda x: x / 4):
        y = dl.pow(x, 2)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-15)


PROGRAMS = {
    "exp (saves its output)": lambda x, w: dl.exp(x) * w,
    "matmul, tanh, softmax": lambda x, w: dl.softmax(dl.tanh(x @ w.T), dim=-1),
    "relu, sigmoid, log": lambda x, w: dl.log(dl.sigmoid(dl.relu(x) + w)),
    "index, cumsum, max": lambda x, w: (dl.cumsum(x[:, ::2], 1) * w[:, :2]).max(dim=1)[0],
    "inf and nan inputs": lambda x, w: dl.exp(x * dl.tensor([np.inf, np.nan, -0.0, 1.0])) * w,
}


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_identity_hooks_change_no_gradient_bit(name):
    f = PROGRAMS[name]
    x, w = t(4, 4), t(4, 4)
    plain = grads(f, x, w)
    count = []
    with saved_tensors_hooks(lambda v: count.append(1) or v, lambda v: v):
        hooked = grads(f, x, w)
    assert count  # (something was saved)
    for p, h in zip(plain, hooked):
        np.testing.assert_array_equal(p, h)


def test_gradcheck_and_gradgradcheck_inside_identity_hooks():
    x = t(3)
    with saved_tensors_hooks(lambda v: v, lambda v: v):
        assert dl.autograd.gradcheck(lambda x: (dl.sin(x) * x).exp(), (x,))
        assert dl.autograd.gradgradcheck(lambda x: dl.sin(x) * x, (x,))


def test_second_derivatives_through_unpacked_values_equal_the_plain_ones():
    x = t(4)
    (g,) = dl.autograd.grad((x * x * x).sum(), x, create_graph=True)
    (plain,) = dl.autograd.grad(g.sum(), x)
    with saved_tensors_hooks(lambda v: v, lambda v: v):
        y = (x * x * x).sum()
    (g,) = dl.autograd.grad(y, x, create_graph=True)
    (hooked,) = dl.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(hooked.numpy(), plain.numpy(), rtol=1e-15)


def test_unpack_runs_at_each_backward_that_reads_the_value():  # (4 in PyTorch too)
    x = t(3)
    unpacks = []
    with saved_tensors_hooks(lambda v: v, lambda v: unpacks.append(1) or v):
        y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert len(unpacks) == 4
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy())


def test_the_innermost_region_applies_and_the_outer_comes_back():
    seen = []
    x = t(2)
    with saved_tensors_hooks(lambda v: seen.append("outer") or v, lambda v: v):
        with saved_tensors_hooks(lambda v: seen.append("inner") or v, lambda v: v):
            x.exp()
        x.exp()
    x.exp()  # (outside: not packed)
    assert seen == ["inner", "outer"] and SavedTensorsHooks.active is None


def test_what_pack_computes_is_not_packed_again():
    x = t(3)
    calls = []

    def pack(v):
        calls.append(1)
        return v * v  # (records a mul that saves v: not through this hook)

    with saved_tensors_hooks(pack, lambda v: dl.sqrt(v)):
        y = dl.exp(x)
    assert len(calls) == 1
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()), rtol=1e-12)


def test_an_unpack_hook_that_returns_no_tensor_is_a_clear_error():
    x = t(3)
    with saved_tensors_hooks(lambda v: v, lambda v: v.detach().numpy()):
        y = dl.exp(x)
    with pytest.raises(TypeError, match="unpack_hook must return a Tensor, got ndarray"):
        y.sum().backward()


def test_the_hooks_must_be_callables():
    with pytest.raises(TypeError, match="two callables"):
        saved_tensors_hooks(lambda v: v, None)


def test_a_custom_functions_saved_tensors_go_through_the_hooks():
    class Cube(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    x = dl.tensor([1.0, 2.0], requires_grad=True)
    packed = []
    with saved_tensors_hooks(lambda v: packed.append(v) or v, lambda v: v * 2):
        y = Cube.apply(x)
    assert any(v is x for v in packed)
    y.sum().backward()
    assert x.grad.tolist() == [12.0, 48.0]  # 3 (2x)^2, as PyTorch 2.13


def test_save_on_cpu_gives_the_plain_gradients():
    dl.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
    x = t(5, 6, requires_grad=False)
    model(x).sum().backward()
    plain = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    with save_on_cpu(pin_memory=True):
        y = model(x).sum()
    y.backward()
    assert all(dl.equal(p.grad, q) for p, q in zip(model.parameters(), plain))


def test_disable_saved_tensors_hooks_refuses_a_region_inside():
    with disable_saved_tensors_hooks("hooks are off in this library"):
        with pytest.raises(RuntimeError, match="hooks are off in this library"):
            with saved_tensors_hooks(lambda v: v, lambda v: v):
                pass
    with saved_tensors_hooks(lambda v: v, lambda v: v):  # (after it: allowed again)
        pass


def test_a_compiled_function_inside_a_region_runs_eagerly_and_packs():
    f = dl.compile(lambda x: (dl.exp(x) * x).sum())
    x = t(4)
    f(x)  # (its graphs cached)
    packed = []
    with saved_tensors_hooks(lambda v: packed.append(v) or v, lambda v: v * 0):
        y = f(x)
    assert packed
    y.backward()
    assert x.grad.tolist() == [0.0] * 4  # (every saved value unpacked as zeros)


def test_without_hooks_nothing_is_packed():
    x = t(3)
    assert not dl.exp(x).grad_fn.packed
    with saved_tensors_hooks(lambda v: v, lambda v: v):
        assert dl.exp(x).grad_fn.packed
