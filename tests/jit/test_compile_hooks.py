"""Hooks and dl.compile: a hook added or removed after a graph was cached is seen (the
guard holds whether each module has hooks), and a compiled loss's gradients never alias
an input, a constant or each other in ``.grad``."""


import difflab as dl
from difflab import nn

# ------------------------------------------------- gradients handed to .grad


def test_compiled_loss_gradient_is_not_the_parameter_array():
    # d/da sum(a * W) = W: the graph's saved gradient is W's own array; kept as a.grad,
    # a.grad.add_ (or the next backward's +=) wrote into W
    a = dl.ones(3, requires_grad=True)
    w = dl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    f = dl.compile(lambda a, w: (a * w).sum())
    f(a, w).backward()
    f(a, w).backward()  # (accumulates into a.grad)
    assert a.grad.tolist() == [2.0, 4.0, 6.0] and w.tolist() == [1.0, 2.0, 3.0]
    a.grad.add_(1.0)
    assert w.tolist() == [1.0, 2.0, 3.0]


def test_compiled_loss_gradient_is_not_a_captured_constant():
    c = dl.tensor([1.0, 2.0, 3.0])
    f = dl.compile(lambda a: (a * c).sum())
    a = dl.ones(3, requires_grad=True)
    f(a).backward()
    a.grad.mul_(0.0)
    assert c.tolist() == [1.0, 2.0, 3.0]


def test_compiled_loss_gradients_accumulate_as_eager():
    # the gradients of a + b are one broadcast (read-only) array: accumulating into a
    # .grad that was that view failed with "output array is read-only"
    f = dl.compile(lambda a, b: (a + b).sum())
    a, b = dl.ones(3, requires_grad=True), dl.ones(3, requires_grad=True)
    for _ in range(3):
        f(a, b).backward()
    assert a.grad.tolist() == b.grad.tolist() == [3.0, 3.0, 3.0]
    a.grad.add_(1.0)
    assert b.grad.tolist() == [3.0, 3.0, 3.0]


def test_compiled_linear_bias_grad_accumulates():
    lin = nn.Linear(3, 2)
    c = dl.compile(lin)
    x = dl.ones(2, 3)
    c(x).sum().backward()
    c(x).sum().backward()
    lin(x).sum().backward()
    assert lin.bias.grad.tolist() == [6.0, 6.0]
