"""Products: einsum and cumprod (primitives of the registry), bmm, baddbmm and outer.

Values against NumPy, gradients against central differences (first and second
order), each primitive's JVP against its VJP (forward mode = reverse mode),
and the errors for malformed equations and shapes.
"""

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import gradcheck, gradgradcheck
from difflab.autograd.engine import apply
from difflab.autograd.gradcheck import analytical_jacobian
from difflab.ops import products, registry
from difflab.ops.primitive import Primitive

RNG = np.random.default_rng(11)


def make(shape, device="cpu", low=-2.0, high=2.0):
    return dl.tensor(RNG.uniform(low, high, size=shape), dtype=dl.float64, device=device,
                     requires_grad=True)


# equation, operand shapes: matrix products, batches, broadcasting, implicit outputs,
# diagonals, traces, outer products, sums
EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 2)]),
    ("i...j,j->i...", [(2, 3, 4), (4,)]),
    ("...ij,...ij->...i", [(2, 3, 4, 5), (1, 3, 1, 5)]),
    ("...ij->j", [(2, 3, 4)]),  # broadcast axes left out of the output are summed
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ba", [(2, 3)]),
    ("i,i", [(4,), (4,)]),
    ("ij, jk , kl -> il", [(2, 3), (3, 2), (2, 2)]),
]


@pytest.mark.parametrize("equation, shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_matches_numpy_with_gradients(equation, shapes, device):
    xs = [make(s, device) for s in shapes]
    out = dl.einsum(equation, *xs)
    # (NumPy refuses to sum '...' axes left out of the output; PyTorch sums them)
    numpy_equation = {"...ij->j": "aij->j"}.get(equation, equation)
    expected = np.einsum(numpy_equation, *[x.detach().cpu().numpy() for x in xs])
    np.testing.assert_allclose(out.detach().cpu().numpy(), expected, rtol=1e-12, atol=1e-12)
    assert out.device == xs[0].device
    assert gradcheck(lambda *a: dl.einsum(equation, *a), xs)
    assert gradgradcheck(lambda *a: dl.einsum(equation, *a), xs)


def test_einsum_takes_a_list_and_plain_arrays():
    a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(3,))
    np.testing.assert_allclose(dl.einsum("ij,j->i", [dl.tensor(a), dl.tensor(b)]).numpy(),
                               a @ b, rtol=1e-6)
    np.testing.assert_allclose(dl.einsum("ij,j->i", a, b), a @ b)  # arrays: computed only


@pytest.mark.parametrize("equation, shapes, message", [
    ("ij,jk->ik", [(2, 3)], "2 operand terms .* but 1 operand was given"),
    ("ijk->i", [(2, 3)], "names 3 axes but its operand has 2"),
    ("ij->ik", [(2, 3)], "output subscript 'k' .* does not appear in any operand"),
    ("ij->ii", [(2, 3)], "output subscript 'i' appears more than once"),
    ("ij,jk->ik", [(2, 3), (4, 5)], "subscript 'j' has size 3 in one place and 4"),
    ("i1->i", [(2, 3)], r"characters \['1'\]"),
    ("ij->i->j", [(2, 3)], "more than one '->'"),
    ("i..j->ij", [(2, 3)], "'.' that is not part of one '...'"),
])
def test_einsum_malformed_equations_name_the_problem(equation, shapes, message):
    with pytest.raises(ValueError, match=message):
        dl.einsum(equation, *[dl.randn(*s) for s in shapes])


# ----------------------------------------------------------------------- cumprod


@pytest.mark.parametrize("values", [
    [1.5, -0.5, 2.0, 0.7],
    [1.5, 0.0, 2.0, -1.0],          # one zero: the division-free rule
    [0.0, 2.0, 0.0, 3.0, -1.0],     # two zeros
], ids=["no-zero", "one-zero", "two-zeros"])
def test_cumprod_gradients_with_and_without_zeros(values, device):
    x = dl.tensor(values, dtype=dl.float64, device=device, requires_grad=True)
    np.testing.assert_allclose(dl.cumprod(x, 0).detach().cpu().numpy(), np.cumprod(values))
    assert gradcheck(lambda a: dl.cumprod(a, 0), (x,))


def test_cumprod_along_a_dimension(device):
    x = make((3, 4, 2), device)
    np.testing.assert_allclose(x.cumprod(1).detach().cpu().numpy(),
                               np.cumprod(x.detach().cpu().numpy(), axis=1), rtol=1e-14)
    assert gradcheck(lambda a: a.cumprod(-1), (x,))
    zeros = dl.tensor([[2.0, 0.0, 3.0], [1.0, 4.0, 0.0]], dtype=dl.float64, device=device,
                      requires_grad=True)
    zeros.cumprod(1).sum().backward()
    # y = (2, 0, 0), (1, 4, 0): ∂/∂x of Σy, by hand
    assert zeros.grad.tolist() == [[1.0, 8.0, 0.0], [5.0, 1.0, 4.0]]
    assert dl.cumprod(dl.tensor([1, 2, 3]), 0, dtype=dl.float64).dtype == dl.float64


@pytest.mark.parametrize("values", [[1.5, -0.5, 2.0], [1.5, 0.0, 2.0], [0.0, 2.0, 0.0]])
def test_cumprod_to_second_order_zeros_included(values):
    # its VJP is written with where and cumprod itself, so the tape differentiates it again
    x = dl.tensor(values, dtype=dl.float64, requires_grad=True)
    assert gradgradcheck(lambda a: a.cumprod(0), (x,))
    assert gradgradcheck(lambda a: dl.cumprod(a.reshape(1, 3) * a.reshape(3, 1), 1), (x,))


# ----------------------------------------------------- the registry: forward = reverse


def _jvp_jacobian(op, arrays, params):
    """The full Jacobian of ``op`` from its JVP: every input direction at once (k = n)."""
    columns = []
    for i, a in enumerate(arrays):
        n = a.size
        tangents = [None] * len(arrays)
        tangents[i] = np.eye(n).reshape((n,) + a.shape)
        ctx = registry.Context(needs_input_grad=tuple(t is not None for t in tangents))
        y = op.forward(ctx, np, *arrays, **params)
        dy = op.jvp(ctx, np, *tangents, *ctx.saved)
        columns.append(np.asarray(dy).reshape(n, y.size).T)
    return columns


PRODUCT_SAMPLES = {
    "einsum": [(dict(equation=e), shapes) for e, shapes in EQUATIONS],
    "cumprod": [(dict(axis=1), [(2, 4)]), (dict(axis=0), [(5,)])],
}


def test_every_product_primitive_is_registered_and_sampled():
    mine = {p.name for p in vars(products).values()
            if isinstance(p, type) and issubclass(p, Primitive) and p is not Primitive}
    assert mine == set(PRODUCT_SAMPLES)
    for name in mine:
        assert registry.get(name).math  # the rule as a student writes it


@pytest.mark.parametrize("name, params, shapes", [
    (name, params, shapes) for name, cases in PRODUCT_SAMPLES.items()
    for params, shapes in cases])
def test_product_primitives_forward_mode_equals_reverse_mode(name, params, shapes):
    op = registry.get(name)
    arrays = [RNG.uniform(-2, 2, size=s) for s in shapes]
    if name == "cumprod":
        arrays[0].flat[1] = 0.0  # through the zero-safe rule too
    forward = _jvp_jacobian(op, arrays, params)
    tensors = [dl.tensor(a, requires_grad=True) for a in arrays]

    def f(*xs):
        return apply(op, *xs, **params)

    reverse = analytical_jacobian(f, tensors)[0]  # J[output 0][input i]
    for i, (fwd, rev) in enumerate(zip(forward, reverse)):
        np.testing.assert_allclose(fwd, rev, rtol=1e-12, atol=1e-12, err_msg=f"{name} input {i}")


# -------------------------------------------------------------- bmm, baddbmm, outer


def test_bmm_baddbmm_outer_values_and_gradients(device):
    a, b = make((3, 2, 4), device), make((3, 4, 5), device)
    c = make((2, 5), device)  # broadcast over the batch
    np.testing.assert_allclose(dl.bmm(a, b).detach().cpu().numpy(),
                               a.detach().cpu().numpy() @ b.detach().cpu().numpy())
    assert gradcheck(dl.bmm, (a, b))
    out = dl.baddbmm(c, a, b, beta=0.5, alpha=2.0)
    expected = 0.5 * c.detach().cpu().numpy() + 2.0 * (a.detach().cpu().numpy()
                                                       @ b.detach().cpu().numpy())
    np.testing.assert_allclose(out.detach().cpu().numpy(), expected, rtol=1e-12)
    assert gradcheck(lambda x, y, z: x.baddbmm(y, z, beta=0.5, alpha=2.0), (c, a, b))
    nan = dl.full((3, 2, 5), float("nan"), dtype=dl.float64, device=device)
    assert not dl.baddbmm(nan, a, b, beta=0).isnan().any()  # beta = 0 ignores the input
    u, v = make((3,), device), make((4,), device)
    np.testing.assert_allclose(dl.outer(u, v).detach().cpu().numpy(),
                               np.outer(u.detach().cpu().numpy(), v.detach().cpu().numpy()))
    assert gradcheck(lambda x, y: x.outer(y), (u, v))
    assert dl.ger(u, v).shape == (3, 4)


def test_bmm_and_outer_errors():
    with pytest.raises(RuntimeError, match="must be 3-D"):
        dl.bmm(dl.randn(2, 3), dl.randn(3, 2))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        dl.bmm(dl.randn(2, 3, 4), dl.randn(3, 4, 5))
    with pytest.raises(RuntimeError, match="two 1-D tensors"):
        dl.outer(dl.randn(2, 2), dl.randn(2))


def test_cumprod_and_einsum_of_zero_dimensional_tensors():
    x = dl.tensor(3.0, dtype=dl.float64, requires_grad=True)
    y = dl.cumprod(x, 0)
    assert y.shape == () and y.item() == 3.0
    y.backward()
    assert x.grad.item() == 1.0
    assert dl.einsum(",ij->ij", dl.tensor(2.0), dl.ones(2, 2)).tolist() == [[2, 2], [2, 2]]
