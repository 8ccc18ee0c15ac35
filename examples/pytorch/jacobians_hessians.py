"""Jacobians, Hessians, hvp, vhp, and more: composing function transforms.

After PyTorch's tutorial of that name, at small sizes: the Jacobian row by row
with autograd.grad, then vjp under vmap, jacrev (with argnums), jacfwd against
jacrev on a tall and on a wide layer, hessian = jacfwd(jacrev(f)) against
jacfwd(jacfwd(f)) and jacrev(jacrev(f)), batched Jacobians and Hessians (vmap and
the sum trick), and Hessian-vector products forward over reverse and reverse over
reverse.  The tutorial's random data are fixed values here (smooth functions of a
range), so that every number printed can be compared with PyTorch's, and its
timings (torch.utils.benchmark) are left out: the shapes and values are printed.
"""
from functools import partial

import difflab as torch
import difflab.nn.functional as F
from difflab.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap


def fixed(*shape, phase=0.0):
    """Values that stand for the tutorial's torch.randn: the same on every library."""
    n = 1
    for size in shape:
        n *= size
    return torch.sin(torch.arange(n, dtype=torch.float64) * 0.37 + phase).reshape(*shape)


def show(label, t):
    print(f"{label}: {tuple(t.shape)} " + " ".join(f"{v:.6f}" for v in t.flatten()[:3].tolist())
          + f" | sum {t.sum().item():.6f}")


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


# --- the Jacobian, row by row and with vmap ---------------------------------------------
D = 8
weight = fixed(D, D)
bias = fixed(D, phase=1.0)
x = fixed(D, phase=2.0)


def compute_jac(xp):
    jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                     for vec in unit_vectors]
    return torch.stack(jacobian_rows)


xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D, dtype=torch.float64)

jacobian = compute_jac(xp)
print(jacobian.shape)
show("first row", jacobian[0])

_, vjp_fn = vjp(partial(predict, weight, bias), x)
ft_jacobian, = vmap(vjp_fn)(unit_vectors)
print("vmap(vjp) equals the loop:", torch.allclose(ft_jacobian, jacobian))

ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
print("jacrev equals the loop:", torch.allclose(ft_jacobian, jacobian))

ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
show("Jacobian in the weight", ft_jac_weight)
show("Jacobian in the bias", ft_jac_bias)

# --- jacrev against jacfwd, on a tall and on a wide layer -----------------------------
for Din, Dout in ((4, 64), (64, 4)):
    weight = fixed(Dout, Din, phase=0.5) * 0.2
    bias = fixed(Dout, phase=1.5)
    x = fixed(Din, phase=2.5)
    by_fwd = jacfwd(predict, argnums=2)(weight, bias, x)
    by_rev = jacrev(predict, argnums=2)(weight, bias, x)
    print(f"{Dout}x{Din} layer: jacfwd equals jacrev:", torch.allclose(by_fwd, by_rev))
    show(f"{Dout}x{Din} Jacobian", by_fwd)

# --- Hessians -----------------------------------------------------------------------------
Din, Dout = 12, 4
weight = fixed(Dout, Din, phase=0.2)
bias = fixed(Dout, phase=0.4)
x = fixed(Din, phase=0.6)

hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
show("Hessian", hess_api)
print("hessian equals jacfwd(jacfwd):", torch.allclose(hess_api, hess_fwdfwd))
print("hessian equals jacrev(jacrev):", torch.allclose(hess_api, hess_revrev))

# --- batch Jacobian and batch Hessian --------------------------------------------------
batch_size = 6
Din = 5
Dout = 7

weight = fixed(Dout, Din, phase=0.9)
print(f"weight shape = {weight.shape}")
bias = fixed(Dout, phase=1.9)
x = fixed(batch_size, Din, phase=2.9)

compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, x)
show("batch Jacobian", batch_jacobian0)


def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)


batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
print("the sum trick agrees:", torch.allclose(batch_jacobian0, batch_jacobian1))

compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))
batch_hess = compute_batch_hessian(weight, bias, x)
show("batch Hessian", batch_hess)


# --- Hessian-vector products -----------------------------------------------------------
def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def f(x):
    return x.sin().sum()


x = fixed(64, phase=0.3)
tangent = fixed(64, phase=1.3)

result = hvp(f, (x,), (tangent,))
show("hvp, forward over reverse", result)


def hvp_revrev(f, primals, tangents):
    _, vjp_fn = vjp(grad(f), *primals)
    return vjp_fn(*tangents)


result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
print("reverse over reverse agrees:", torch.allclose(result, result_hvp_revrev[0]))
print("the closed form -sin(x) v agrees:", torch.allclose(result, -x.sin() * tangent))
