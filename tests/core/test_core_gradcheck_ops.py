"""Every differentiable op against central differences, in float64, over several shapes.

Shapes include broadcasting, 0-d scalars and empty dimensions.  Elementwise
and matmul ops are also checked for double backward (gradgradcheck).
"""

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck, gradgradcheck
from difflab.ops import registry

RNG = np.random.default_rng(1234)


def make(shape, low=-2.0, high=2.0, device="cpu"):
    values = RNG.uniform(low, high, size=shape)
    return dl.tensor(values, dtype=dl.float64, device=device, requires_grad=True)


# name -> (function, input domain): every unary primitive of the registry, in the domain
# its rule names, and a few composite functions built from them.
UNARY = {op.name: (dl.functions.ELEMENTWISE[op.name], op.rule.domain)
         for op in registry.elementwise_ops(arity=1)}
UNARY.update({
    "square": (dl.square, (-2, 2)),
    "rsqrt": (lambda x: x.rsqrt(), (0.2, 3)),
    "pow_scalar": (lambda x: x**3, (-2, 2)),
    "pow_fraction": (lambda x: x**0.5, (0.2, 3)),
    "rpow": (lambda x: 2.0**x, (-2, 2)),
})
SHAPES = [(), (5,), (2, 3), (2, 0, 3)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradcheck_and_double_backward(name, shape, device):
    function, (low, high) = UNARY[name]
    x = make(shape, low, high, device=device)
    assert gradcheck(function, (x,))
    assert gradgradcheck(function, (x,))


BINARY = {op.name: (dl.functions.ELEMENTWISE[op.name], op.rule.domain)
          for op in registry.elementwise_ops(arity=2)}
BROADCAST_PAIRS = [((), ()), ((3,), ()), ((2, 3), (3,)), ((2, 1), (1, 3)), ((4, 1, 3), (2, 1)),
                   ((0, 3), (3,))]


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_gradcheck_with_broadcasting(name, shapes, device):
    function, (low, high) = BINARY[name]
    a, b = make(shapes[0], low, high, device=device), make(shapes[1], low, high, device=device)
    assert gradcheck(function, (a, b))
    assert gradgradcheck(function, (a, b))


def test_binary_with_python_scalars(device):
    x = make((3,), 0.5, 2, device=device)
    for function in (lambda a: 3.0 - a, lambda a: 2.0 / a, lambda a: a * 4, lambda a: 1 + a):
        assert gradcheck(function, (x,))


MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((5, 2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (4, 3, 2)),
                 ((0, 3), (3, 2))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_gradcheck_and_double_backward(shapes, device):
    a, b = make(shapes[0], device=device), make(shapes[1], device=device)
    assert gradcheck(lambda x, y: x @ y, (a, b))
    assert gradgradcheck(lambda x, y: x @ y, (a, b))


def test_mm_mv_dot_t(device):
    a, b, v = make((2, 3), device=device), make((3, 4), device=device), make((3,), device=device)
    assert gradcheck(dl.mm, (a, b))
    assert gradcheck(dl.mv, (a, v))
    assert gradcheck(dl.dot, (v, make((3,), device=device)))
    assert gradcheck(lambda x: x.t(), (a,))


REDUCTIONS = {
    "sum_all": lambda x: x.sum(),
    "sum_dim": lambda x: x.sum(1),
    "sum_dims_keep": lambda x: x.sum((0, 2), keepdim=True),
    "mean": lambda x: x.mean(0),
    "var": lambda x: x.var(1),
    "std": lambda x: x.std(2, keepdim=True),
    "max_dim": lambda x: x.max(1).values,
    "min_dim": lambda x: x.min(0).values,
    "amax_all": lambda x: x.amax(),
    "prod": lambda x: x.prod(2),
    "prod_all": lambda x: x.prod(),
    "cumsum": lambda x: x.cumsum(1),
    "norm": lambda x: x.norm(),
    "norm_dim": lambda x: x.norm(dim=2),
    "norm_1": lambda x: x.norm(p=1, dim=0),
    "logsumexp": lambda x: x.logsumexp(1),
    "softmax": lambda x: dl.softmax(x, 2),
    "log_softmax": lambda x: dl.log_softmax(x, 0),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name, device):
    x = make((2, 3, 4), device=device)
    assert gradcheck(REDUCTIONS[name], (x,))
    if name not in ("prod", "prod_all"):  # prod is documented first-order only
        assert gradgradcheck(REDUCTIONS[name], (x,))


def test_prod_with_a_zero_factor():
    x = dl.tensor([[2.0, 0.0, 3.0], [1.0, 4.0, 5.0]], dtype=dl.float64, requires_grad=True)
    x.prod(1).sum().backward()
    assert np.allclose(x.grad.numpy(), [[0.0, 6.0, 0.0], [20.0, 5.0, 4.0]])


SHAPE_OPS = {
    "reshape": lambda x: x.reshape(4, 6),
    "view_infer": lambda x: x.view(-1, 3),
    "flatten": lambda x: x.flatten(1),
    "permute": lambda x: x.permute(2, 0, 1),
    "transpose": lambda x: x.transpose(0, 2),
    "T": lambda x: x.T,
    "squeeze_unsqueeze": lambda x: x.unsqueeze(1).squeeze(1),
    "expand": lambda x: x[:, :1].expand(2, 5, 4),
    "repeat": lambda x: x.repeat(2, 1, 1),
    "flip": lambda x: x.flip((0, 2)),
    "cat": lambda x: dl.cat([x, 2 * x], dim=1),
    "stack": lambda x: dl.stack([x, x * x], dim=3),
    "split": lambda x: dl.split(x, [1, 3], dim=2)[1],
    "chunk": lambda x: x.chunk(2, dim=2)[0],
    "unbind": lambda x: x.unbind(1)[2],
    "slice": lambda x: x[1:, ::2, 1:3],
    "int_index": lambda x: x[1, 2],
    "int_array_repeats": lambda x: x[[0, 0, 1], :, [1, 1, 3]],
    "bool_mask": lambda x: x[x > 0],
    "ellipsis_none": lambda x: x[..., None, 1],
    "where": lambda x: dl.where(x > 0, x, x * x),
    "clamp": lambda x: x.clamp(-0.5, 0.5),
    "masked_fill": lambda x: x.masked_fill(x < 0, 0.0),
    "clone": lambda x: x.clone(),
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_shape_and_indexing_ops(name, device):
    x = make((2, 3, 4), device=device)
    assert gradcheck(SHAPE_OPS[name], (x,))
    assert gradgradcheck(SHAPE_OPS[name], (x,))


def test_setitem_records_on_the_tape(device):
    x = make((3, 4), device=device)
    v = make((4,), device=device)

    def put(a, b):
        out = a * 1.0
        out[1] = b * 2.0
        return out

    assert gradcheck(put, (x, v))


def test_inplace_on_non_leaf_is_differentiable(device):
    x = make((3,), device=device)

    def f(a):
        y = a * 2.0
        y.mul_(a)
        y += 1.0
        return y

    assert gradcheck(f, (x,))


def test_dtype_and_device_transfers_pass_gradients():
    x = make((3,))
    (x.float() * 3.0).sum().backward()  # float32 in the middle: compare exactly, not by FD
    assert x.grad.dtype == dl.float64 and np.array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])
    assert gradcheck(lambda a: a.to("cpu") * 2, (x,))


def test_custom_function_gradcheck(device):
    class Cube(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * 3 * x * x

    x = make((4,), device=device)
    assert gradcheck(Cube.apply, (x,))
    assert gradgradcheck(Cube.apply, (x,))


def test_gradcheck_catches_a_wrong_backward():
    class WrongSin(dl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * x.sin()  # should be cos

    with pytest.raises(dl.autograd.GradcheckError, match="input element"):
        gradcheck(WrongSin.apply, (make((3,)),))
    assert gradcheck(WrongSin.apply, (make((3,)),), raise_exception=False) is False
