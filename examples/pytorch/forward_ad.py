"""Forward-mode automatic differentiation, after PyTorch's tutorial of that name.

Dual tensors (torch.autograd.forward_ad): make_dual attaches a tangent to a tensor
inside a dual_level, every operation carries it along, unpack_dual reads the
Jacobian-vector product.  Then modules (their parameters replaced by dual tensors, or
passed to functional_call), a custom autograd.Function with its own jvp checked by
gradcheck, the functional API (torch.func.jvp), and forward over reverse (a
Hessian-vector product).  The tutorial's random inputs are fixed values here
(smooth functions of a range), so that every number printed can be compared with
PyTorch's; ``make_functional_with_buffers`` (functorch, deprecated) is
``functional_call``.
"""
import functools

import difflab as torch
import difflab.autograd.forward_ad as fwAD
import difflab.nn as nn
from difflab.func import functional_call


def fixed(*shape, phase=0.0, dtype=torch.float32):
    """Values that stand for the tutorial's torch.randn: the same on every library."""
    n = 1
    for size in shape:
        n *= size
    return torch.sin(torch.arange(n, dtype=dtype) * 0.7 + phase).reshape(*shape)


def show(label, t):
    print(f"{label}: " + " ".join(f"{v:.5f}" for v in t.flatten()[:4].tolist())
          + f" | sum {t.sum().item():.5f}")


# --- basic usage ----------------------------------------------------------------------
primal = fixed(10, 10)
tangent = fixed(10, 10, phase=1.0)


def fn(x, y):
    return x ** 2 + y ** 2


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent

    # a tangent of another layout (a transpose) is copied into the primal's
    dual_input_alt = fwAD.make_dual(primal, tangent.T)
    assert fwAD.unpack_dual(dual_input_alt).tangent is not tangent

    # tensors without a tangent are constants (a zero tangent)
    plain_tensor = fixed(10, 10, phase=2.0)
    dual_output = fn(dual_input, plain_tensor)

    jvp = fwAD.unpack_dual(dual_output).tangent
    show("jvp of fn", jvp)
    show("expected 2 x t", 2 * primal * tangent)

print("tangent after the level:", fwAD.unpack_dual(dual_output).tangent)
show("output after the level", dual_output)

# --- usage with modules ---------------------------------------------------------------
model = nn.Linear(5, 5)
with torch.no_grad():
    model.weight.copy_(fixed(5, 5, phase=0.3) * 0.4)
    model.bias.copy_(fixed(5, phase=0.9) * 0.1)
input = fixed(16, 5, phase=1.7)

params = {name: p for name, p in model.named_parameters()}
tangents = {name: fixed(*p.shape, phase=2.5) for name, p in params.items()}

with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))

    out = model(input)
    jvp = fwAD.unpack_dual(out).tangent
show("module jvp", jvp)

# --- using the functional module API -------------------------------------------------
model = nn.Linear(5, 5)
dual_params = {}
with fwAD.dual_level():
    for name, p in params.items():
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, input)
    jvp2 = fwAD.unpack_dual(out).tangent
show("functional_call jvp", jvp2)
print("module and functional_call agree:", torch.allclose(jvp, jvp2))


# --- custom autograd Function ---------------------------------------------------------
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        # tensors stored in ctx can be used in the forward gradient computation
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        # not needed by a backward pass: free it
        del ctx.result
        return gO


fn = Fn.apply

primal = fixed(10, 10, dtype=torch.double).requires_grad_()
tangent = fixed(10, 10, phase=1.0)

with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = fn(dual_input)
    jvp = fwAD.unpack_dual(dual_output).tangent
show("Function jvp", jvp)

print("gradcheck of the jvp:", torch.autograd.gradcheck(
    Fn.apply, (primal,), check_forward_ad=True, check_backward_ad=False,
    check_undefined_grad=False, check_batched_grad=False))


# PyTorch's newer style: forward without ctx, setup_context, ctx.save_for_forward
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_forward(x)

    @staticmethod
    def jvp(ctx, gx):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * gx


with fwAD.dual_level():
    out = Cube.apply(fwAD.make_dual(fixed(4), fixed(4, phase=1.0)))
    show("setup_context jvp", fwAD.unpack_dual(out).tangent)

# --- functional API -------------------------------------------------------------------
primal0 = fixed(10, 10)
tangent0 = fixed(10, 10, phase=0.5)
primal1 = fixed(10, 10, phase=1.5)
tangent1 = fixed(10, 10, phase=2.5)


def fn(x, y):
    return x ** 2 + y ** 2


primal_out, tangent_out = torch.func.jvp(fn, (primal0, primal1), (tangent0, tangent1))
show("func.jvp", tangent_out)

primal = fixed(10, 10, phase=3.0)
tangent = fixed(10, 10, phase=3.5)
y = fixed(10, 10, phase=4.0)

new_fn = functools.partial(fn, y=y)
primal_out, tangent_out = torch.func.jvp(new_fn, (primal,), (tangent,))
show("func.jvp of a partial", tangent_out)

# --- the functional API with modules --------------------------------------------------
model = nn.Linear(5, 5)
with torch.no_grad():
    model.weight.copy_(fixed(5, 5, phase=0.3) * 0.4)
    model.bias.copy_(fixed(5, phase=0.9) * 0.1)
input = fixed(16, 5, phase=1.7)
tangents = tuple(fixed(*p.shape, phase=2.5) for p in model.parameters())
names = [name for name, _ in model.named_parameters()]


def func_params_only(*params):
    return functional_call(model, dict(zip(names, params)), (input,))


model_output, jvp_out = torch.func.jvp(func_params_only, tuple(model.parameters()), tangents)
show("func.jvp over parameters", jvp_out)

# --- forward over reverse: a Hessian-vector product ------------------------------------
x = fixed(6, dtype=torch.double).requires_grad_()
v = fixed(6, phase=1.0, dtype=torch.double)


def f(x):
    return (x.sin() * x.exp()).sum()


with fwAD.dual_level():
    y = f(fwAD.make_dual(x, v))
    (g,) = torch.autograd.grad(y, x)
    hvp = fwAD.unpack_dual(g).tangent
show("hvp, forward over reverse", hvp)
show("hvp, autograd.functional", torch.autograd.functional.hvp(f, x.detach(), v)[1])
