"""difflab.utils.checkpoint: gradients equal the plain computation's, intermediates not kept."""

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import difflab as dl
from difflab import nn
from difflab.utils.checkpoint import checkpoint, checkpoint_sequential


def test_reached_by_pytorchs_spelling():
    import difflab as torch

    assert torch.utils.checkpoint.checkpoint is checkpoint
    assert torch.utils.checkpoint.checkpoint_sequential is checkpoint_sequential


def _mlp():
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 3))


def _grads(model, x, run):
    model.zero_grad()
    x = x.detach().requires_grad_(x.requires_grad)
    loss = (run(model, x) ** 2).sum()
    loss.backward()
    return loss.detach(), x.grad, [p.grad.clone() for p in model.parameters()]


def _assert_same(a, b):
    loss_a, x_a, params_a = a
    loss_b, x_b, params_b = b
    np.testing.assert_array_equal(loss_a.numpy(), loss_b.numpy())
    if x_a is None or x_b is None:
        assert x_a is None and x_b is None
    else:
        np.testing.assert_allclose(x_a.numpy(), x_b.numpy(), rtol=0, atol=1e-15)
    for pa, pb in zip(params_a, params_b):
        np.testing.assert_allclose(pa.numpy(), pb.numpy(), rtol=0, atol=1e-15)


@pytest.mark.parametrize("use_reentrant", [True, False, None])
def test_mlp_block_gradients_equal_plain(use_reentrant):
    model = _mlp().double()
    x = dl.randn(5, 4, dtype=dl.float64, requires_grad=True)
    plain = _grads(model, x, lambda m, t: m(t))
    checked = _grads(model, x, lambda m, t: checkpoint(m, t, use_reentrant=use_reentrant))
    _assert_same(plain, checked)
    assert checked[1] is not None and all(g.abs().sum() > 0 for g in checked[2])


def test_dropout_same_mask_by_rng_restore():
    dl.manual_seed(1)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2)).double()
    x = dl.randn(4, 6, dtype=dl.float64, requires_grad=True)
    dl.manual_seed(7)
    plain = _grads(model, x, lambda m, t: m(t))
    dl.manual_seed(7)
    checked = _grads(model, x, lambda m, t: checkpoint(m, t, use_reentrant=False))
    _assert_same(plain, checked)
    # Without the restore the recomputation draws another mask: the gradients differ.
    dl.manual_seed(7)
    other = _grads(model, x, lambda m, t: checkpoint(m, t, use_reentrant=False,
                                                     preserve_rng_state=False))
    assert not np.array_equal(other[2][0].numpy(), plain[2][0].numpy())


def test_backward_leaves_the_random_stream_alone():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    x = dl.randn(2, 3, requires_grad=True)
    y = checkpoint(model, x, use_reentrant=False)
    state = dl.get_rng_state()
    y.sum().backward()
    assert bool((dl.get_rng_state() == state).all())


def test_checkpoint_sequential_two_segments():
    model = _mlp().double()
    x = dl.randn(5, 4, dtype=dl.float64, requires_grad=True)
    plain = _grads(model, x, lambda m, t: m(t))
    checked = _grads(model, x, lambda m, t: checkpoint_sequential(m, 2, t, use_reentrant=False))
    _assert_same(plain, checked)
    listed = _grads(model, x, lambda m, t: checkpoint_sequential(list(m), 5, t,
                                                                 use_reentrant=True))
    _assert_same(plain, listed)


def test_inputs_not_requiring_grad_still_give_parameter_grads():
    model = _mlp().double()
    x = dl.randn(5, 4, dtype=dl.float64)  # no requires_grad: only the weights learn
    plain = _grads(model, x, lambda m, t: m(t))
    checked = _grads(model, x, lambda m, t: checkpoint(m, t, use_reentrant=False))
    _assert_same(plain, checked)
    assert checked[1] is None


def test_non_tensor_argument_and_keywords():
    w = dl.randn(3, dtype=dl.float64, requires_grad=True)

    def block(x, power, *, scale=1.0):
        return (x * w) ** power * scale

    x = dl.randn(3, dtype=dl.float64, requires_grad=True)
    block(x, 3, scale=2.0).sum().backward()
    plain = (x.grad.clone(), w.grad.clone())
    x.grad = w.grad = None
    checkpoint(block, x, 3, use_reentrant=False, scale=2.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), plain[0].numpy())
    np.testing.assert_array_equal(w.grad.numpy(), plain[1].numpy())


def test_bad_keywords_are_refused():
    x = dl.randn(2, requires_grad=True)
    with pytest.raises(ValueError, match="use_reentrant=False"):
        checkpoint(lambda t, k=1: t * k, x, use_reentrant=True, k=2)
    with pytest.raises(NotImplementedError, match="context_fn"):
        checkpoint(lambda t: t, x, use_reentrant=False, context_fn=lambda: None)
    with pytest.raises(TypeError, match="callable"):
        checkpoint(3, x)
    with pytest.raises(TypeError, match="one Tensor"):
        checkpoint(lambda t: (t, t), x, use_reentrant=False)
    with pytest.raises(ValueError, match="segments"):
        checkpoint_sequential(nn.Sequential(nn.Tanh()), 3, x)


def test_intermediates_are_not_kept():
    inside = []

    def block(x):
        h = x.exp()
        inside.append(weakref.ref(h))
        return h.sin()

    x = dl.randn(4, requires_grad=True)
    y = checkpoint(block, x, use_reentrant=False)
    gc.collect()
    assert inside[0]() is None  # the intermediate is gone after the forward
    plain = block(x)
    gc.collect()
    assert inside[1]() is not None  # (without checkpointing the tape holds it: the test can fail)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (x.exp().cos() * x.exp()).detach().numpy(),
                               rtol=1e-6)
    del plain


def _peak(run):
    dl.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(64, 64), nn.Tanh()) for _ in range(32)])
    x = dl.randn(1024, 64, requires_grad=True)
    gc.collect()
    tracemalloc.start()
    try:
        out = run(model, x)
        out.sum().backward()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_checkpoint_lowers_peak_memory():
    plain = _peak(lambda m, x: m(x))
    checked = _peak(lambda m, x: checkpoint_sequential(m, 8, x, use_reentrant=False))
    assert checked < 0.7 * plain, (checked, plain)


def test_gradcheck_through_checkpoint():
    w = dl.randn(3, dtype=dl.float64)

    def block(x, y):
        return (x.sin() * y + w).tanh()

    x = dl.randn(3, dtype=dl.float64, requires_grad=True)
    y = dl.randn(3, dtype=dl.float64, requires_grad=True)
    assert dl.autograd.gradcheck(lambda a, b: checkpoint(block, a, b, use_reentrant=False), (x, y))
    # autograd.grad reaches the inputs (the parameters' gradients go to their .grad)
    gx, gy = dl.autograd.grad(checkpoint(block, x, y, use_reentrant=True).sum(), (x, y))
    ex, ey = dl.autograd.grad(block(x, y).sum(), (x, y))
    np.testing.assert_array_equal(gx.numpy(), ex.numpy())
    np.testing.assert_array_equal(gy.numpy(), ey.numpy())


def test_nested_checkpoint_twice_backward_and_no_grad():
    dl.manual_seed(0)
    m1, m2 = nn.Linear(3, 3).double(), nn.Linear(3, 3).double()
    x = dl.randn(2, 3, dtype=dl.float64, requires_grad=True)

    def outer(t):
        return m2(checkpoint(lambda u: m1(u).tanh(), t, use_reentrant=False)).sin()

    def grads():
        out = [x.grad.clone(), m1.weight.grad.clone(), m2.weight.grad.clone()]
        x.grad = None
        m1.zero_grad()
        m2.zero_grad()
        return out

    outer(x).sum().backward()
    plain = grads()
    checkpoint(outer, x, use_reentrant=False).sum().backward()
    for a, b in zip(plain, grads()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    y = checkpoint(outer, x, use_reentrant=True).sum()
    y.backward(retain_graph=True)
    y.backward()  # a second walk recomputes again; the gradients add up
    for a, b in zip(plain, grads()):
        np.testing.assert_array_equal((2 * a).numpy(), b.numpy())
    with dl.no_grad():
        assert not checkpoint(outer, x, use_reentrant=False).requires_grad
