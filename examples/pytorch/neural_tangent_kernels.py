"""Neural tangent kernels, after PyTorch's tutorial of that name, at small sizes.

The empirical NTK J(x1) J(x2)^T of a small CNN, two ways: by contracting the
Jacobians (vmap over jacrev of functional_call, then einsum: full, trace, diagonal),
and by NTK-vector products (a vjp for each column of the identity, then a jvp,
under three vmaps).  The tutorial's random data and initial weights are fixed
values here (smooth functions of a range), so that every number printed can be
compared with PyTorch's; the images are 8x8 instead of 32x32, the device the CPU.
"""
import difflab as torch
import difflab.nn as nn
from difflab.func import functional_call, jacrev, jvp, vjp, vmap

device = "cpu"


def fixed(*shape, phase=0.0, scale=1.0):
    """Values that stand for torch.randn: the same on every library."""
    n = 1
    for size in shape:
        n *= size
    return scale * torch.sin(torch.arange(n, dtype=torch.float32) * 0.61 + phase).reshape(*shape)


def show(label, t):
    print(f"{label}: {tuple(t.shape)} " + " ".join(f"{v:.5f}" for v in t.flatten()[:3].tolist())
          + f" | sum {t.sum().item():.5f}")


class CNN(nn.Module):
    def __init__(self):
        super(CNN, self).__init__()
        self.conv1 = nn.Conv2d(3, 4, (3, 3))
        self.conv2 = nn.Conv2d(4, 4, (3, 3))
        self.conv3 = nn.Conv2d(4, 4, (3, 3))
        self.fc = nn.Linear(16, 3)

    def forward(self, x):
        x = self.conv1(x)
        x = x.relu()
        x = self.conv2(x)
        x = x.relu()
        x = self.conv3(x)
        x = x.flatten(1)
        x = self.fc(x)
        return x


x_train = fixed(4, 3, 8, 8, phase=0.1)
x_test = fixed(2, 3, 8, 8, phase=0.7)

net = CNN().to(device)
with torch.no_grad():
    for k, (name, p) in enumerate(net.named_parameters()):
        p.copy_(fixed(*p.shape, phase=k, scale=0.3))

# detached: no Tensor.backward() here
params = {k: v.detach() for k, v in net.named_parameters()}


def fnet_single(params, x):
    return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)


# --- method 1: Jacobian contraction --------------------------------------------------
def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute="full"):
    # J(x1)
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = jac1.values()
    jac1 = [j.flatten(2) for j in jac1]

    # J(x2)
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = jac2.values()
    jac2 = [j.flatten(2) for j in jac2]

    # J(x1) @ J(x2).T
    einsum_expr = None
    if compute == "full":
        einsum_expr = "Naf,Mbf->NMab"
    elif compute == "trace":
        einsum_expr = "Naf,Maf->NM"
    elif compute == "diagonal":
        einsum_expr = "Naf,Maf->NMa"
    else:
        assert False

    result = torch.stack([torch.einsum(einsum_expr, j1, j2) for j1, j2 in zip(jac1, jac2)])
    result = result.sum(0)
    return result


result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test)
print(result.shape)
show("NTK", result)
result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, "trace")
print(result.shape)
show("NTK trace", result)
show("NTK diagonal", empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test,
                                                        "diagonal"))


# --- method 2: NTK-vector products ---------------------------------------------------
def empirical_ntk_ntk_vps(func, params, x1, x2, compute="full"):
    def get_ntk(x1, x2):
        def func_x1(params):
            return func(params, x1)

        def func_x2(params):
            return func(params, x2)

        output, vjp_fn = vjp(func_x1, params)

        def get_ntk_slice(vec):
            # vec @ J(x2).T, for a unit vector vec (a row of the identity)
            vjps = vjp_fn(vec)
            # J(x1) @ vjps
            _, jvps = jvp(func_x2, (params,), vjps)
            return jvps

        basis = torch.eye(output.numel(), dtype=output.dtype,
                          device=output.device).view(output.numel(), -1)
        return vmap(get_ntk_slice)(basis)

    # the NTK between every pair of data points of {x1} and {x2}
    result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)

    if compute == "full":
        return result
    if compute == "trace":
        return torch.einsum("NMKK->NM", result)
    if compute == "diagonal":
        return torch.einsum("NMKK->NMK", result)


result_from_jacobian_contraction = empirical_ntk_jacobian_contraction(
    fnet_single, params, x_test, x_train)
result_from_ntk_vps = empirical_ntk_ntk_vps(fnet_single, params, x_test, x_train)
show("NTK by contraction", result_from_jacobian_contraction)
show("NTK by NTK-vector products", result_from_ntk_vps)
print("the two methods agree:", torch.allclose(result_from_jacobian_contraction,
                                               result_from_ntk_vps, atol=1e-5))
show("NTK trace by NTK-vector products",
     empirical_ntk_ntk_vps(fnet_single, params, x_test, x_train, "trace"))
