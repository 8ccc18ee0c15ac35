"""torch.autograd.functional (issue 27): jacobian, hessian, vjp, jvp, hvp, vhp.

Checked against difflab.jacobian/hessian (method="reverse"), central finite
differences, PyTorch's documented shapes, and PyTorch itself when installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab.autograd import functional as AF  # noqa: N812

RNG = np.random.default_rng(0)


def _fd_jacobian(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences of a NumPy-in, NumPy-out function: shape out.shape + x.shape."""
    out = np.asarray(f(x))
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.stack(cols, axis=-1).reshape(out.shape + x.shape)


def _np(t) -> np.ndarray:
    return np.asarray(t.detach().numpy() if isinstance(t, dl.Tensor) else t)


VECTOR_FUNCS = {
    "sin_times_sum": lambda x: dl.sin(x) * x.sum(),
    "exp_outer": lambda x: dl.exp(x)[:, None] * x[None, :],
    "softmax_like": lambda x: dl.exp(x) / dl.exp(x).sum(),
}


@pytest.mark.parametrize("name", sorted(VECTOR_FUNCS))
def test_jacobian_matches_reverse_and_finite_differences(name):
    f = VECTOR_FUNCS[name]
    x = RNG.normal(size=3)
    J = AF.jacobian(f, dl.tensor(x))
    assert isinstance(J, dl.Tensor) and not J.requires_grad
    out_shape = tuple(f(dl.tensor(x)).shape)
    assert tuple(J.shape) == out_shape + (3,)
    fd = _fd_jacobian(lambda a: _np(f(dl.tensor(a))), x)
    np.testing.assert_allclose(_np(J), fd, rtol=1e-5, atol=1e-7)
    if len(out_shape) == 1:  # difflab.jacobian's matrix layout
        np.testing.assert_allclose(_np(J), np.asarray(dl.jacobian(f, method="reverse")(
            dl.tensor(x))), rtol=1e-10)


def test_jacobian_scalar_output_and_matrix_input_shapes():
    x = dl.tensor(RNG.normal(size=(2, 3)))
    J = AF.jacobian(lambda a: (a ** 2).sum(), x)
    assert tuple(J.shape) == (2, 3)  # () + (2, 3)
    np.testing.assert_allclose(_np(J), 2 * _np(x))
    J = AF.jacobian(lambda a: a.T * 3.0, x)
    assert tuple(J.shape) == (3, 2, 2, 3)
    assert float(J[1, 0, 0, 1]) == 3.0 and float(J[1, 0, 0, 0]) == 0.0


def test_jacobian_tuple_layouts_follow_pytorch():
    """PyTorch's docs: tuple inputs -> J[j]; tuple outputs -> J[i]; both -> J[i][j]."""
    a, b = dl.tensor(RNG.normal(size=2)), dl.tensor(RNG.normal(size=3))
    J = AF.jacobian(lambda a, b: a * b.sum(), (a, b))
    assert isinstance(J, tuple) and [tuple(t.shape) for t in J] == [(2, 2), (2, 3)]
    np.testing.assert_allclose(_np(J[1]), np.outer(_np(a), np.ones(3)))
    J = AF.jacobian(lambda a: (a.sum(), a * 2), a)
    assert isinstance(J, tuple) and [tuple(t.shape) for t in J] == [(2,), (2, 2)]
    J = AF.jacobian(lambda a, b: (a * b[0], b ** 2), (a, b))
    assert [[tuple(t.shape) for t in row] for row in J] == [[(2, 2), (2, 3)], [(3, 2), (3, 3)]]
    np.testing.assert_allclose(_np(J[1][1]), np.diag(2 * _np(b)))
    np.testing.assert_allclose(_np(J[1][0]), np.zeros((3, 2)))  # independent: zeros


def test_jacobian_strict_raises_for_an_independent_input():
    a, b = dl.tensor([1.0, 2.0]), dl.tensor([3.0])
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                           "independent of input 1"):
        AF.jacobian(lambda a, b: a * 2, (a, b), strict=True)
    with pytest.raises(RuntimeError, match="independent"):
        AF.jacobian(lambda a: dl.tensor([1.0, 2.0]), a, strict=True)
    J = AF.jacobian(lambda a: dl.tensor([1.0, 2.0]), a)
    np.testing.assert_allclose(_np(J), np.zeros((2, 2)))


def test_jacobian_create_graph_is_differentiable():
    x = dl.tensor([0.5, 1.5], requires_grad=True)
    J = AF.jacobian(lambda a: a ** 3, x, create_graph=True)
    assert J.requires_grad
    (g,) = dl.autograd.grad(J.sum(), x)  # d/dx of sum(3x^2 on the diagonal) = 6x
    np.testing.assert_allclose(_np(g), 6 * _np(x))
    assert x.grad is None
    assert not AF.jacobian(lambda a: a ** 3, x).requires_grad


def test_jacobian_bad_arguments_are_explained():
    with pytest.raises(TypeError, match="tuple of Tensors"):
        AF.jacobian(lambda a: a, [dl.tensor(1.0)])
    with pytest.raises(TypeError, match="outputs of the user-provided function"):
        AF.jacobian(lambda a: 3.0, dl.tensor(1.0))
    with pytest.raises(NotImplementedError, match="jacfwd"):
        AF.jacobian(lambda a: a, dl.tensor(1.0), strategy="forward-mode")
    with pytest.raises(ValueError, match="reverse-mode"):
        AF.jacobian(lambda a: a, dl.tensor(1.0), strategy="sideways")


def _rosen(x):
    return ((1 - x[:-1]) ** 2 + 10 * (x[1:] - x[:-1] ** 2) ** 2).sum()


def test_hessian_matches_reverse_and_finite_differences():
    x = RNG.normal(size=4)
    H = AF.hessian(_rosen, dl.tensor(x))
    assert tuple(H.shape) == (4, 4) and not H.requires_grad
    np.testing.assert_allclose(_np(H), np.asarray(dl.hessian(_rosen, method="reverse")(
        dl.tensor(x))), rtol=1e-10)
    grad_np = lambda a: _np(AF.jacobian(_rosen, dl.tensor(a)))  # noqa: E731
    np.testing.assert_allclose(_np(H), _fd_jacobian(grad_np, x), rtol=1e-5, atol=1e-6)


def test_hessian_tuple_inputs_and_errors():
    a, b = dl.tensor([1.0, 2.0]), dl.tensor(3.0)
    H = AF.hessian(lambda a, b: (a ** 2 * b).sum(), (a, b))
    assert [[tuple(t.shape) for t in row] for row in H] == [[(2, 2), (2,)], [(2,), ()]]
    np.testing.assert_allclose(_np(H[0][0]), np.diag([6.0, 6.0]))
    np.testing.assert_allclose(_np(H[0][1]), [2.0, 4.0])
    np.testing.assert_allclose(_np(H[1][0]), [2.0, 4.0])
    assert float(H[1][1]) == 0.0
    with pytest.raises(RuntimeError, match="single element"):
        AF.hessian(lambda a: a ** 2, a)
    with pytest.raises(RuntimeError, match="independent"):
        AF.hessian(lambda a, b: (a ** 2).sum() + b, (a, b), strict=True)
    H = AF.hessian(lambda a: (a ** 3).sum(), a, create_graph=True)
    assert H.requires_grad


def test_vjp_and_jvp_match_the_jacobian():
    f = VECTOR_FUNCS["sin_times_sum"]
    x, v, u = (RNG.normal(size=3) for _ in range(3))
    J = _np(AF.jacobian(f, dl.tensor(x)))
    out, g = AF.vjp(f, dl.tensor(x), dl.tensor(v))
    np.testing.assert_allclose(_np(out), _np(f(dl.tensor(x))))
    np.testing.assert_allclose(_np(g), v @ J, rtol=1e-10)
    out, jv = AF.jvp(f, dl.tensor(x), dl.tensor(u))
    np.testing.assert_allclose(_np(jv), J @ u, rtol=1e-10)
    assert not out.requires_grad and not jv.requires_grad


def test_vjp_jvp_tuples_v_checks_and_strict():
    a, b = dl.tensor([1.0, 2.0]), dl.tensor([3.0])
    f = lambda a, b: (a * b, b ** 2)  # noqa: E731
    outs, (ga, gb) = AF.vjp(f, (a, b), (dl.tensor([1.0, 1.0]), dl.tensor([1.0])))
    assert isinstance(outs, tuple) and len(outs) == 2
    np.testing.assert_allclose(_np(ga), [3.0, 3.0])
    np.testing.assert_allclose(_np(gb), [3.0 + 6.0])
    outs, (ja, jb) = AF.jvp(f, (a, b), (dl.tensor([1.0, 0.0]), dl.tensor([1.0])))
    np.testing.assert_allclose(_np(ja), [3.0 + 1.0, 2.0])
    np.testing.assert_allclose(_np(jb), [6.0])
    _, s = AF.vjp(lambda x: (x ** 2).sum(), dl.tensor([1.0, 3.0]))  # v = 1 for one element
    np.testing.assert_allclose(_np(s), [2.0, 6.0])
    with pytest.raises(RuntimeError, match="v can only be None"):
        AF.vjp(lambda x: x ** 2, a)
    with pytest.raises(RuntimeError, match="invalid size"):
        AF.jvp(lambda x: x ** 2, a, dl.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.vjp(lambda a, b: a * 2, (a, b), dl.tensor([1.0, 1.0]), strict=True)
    with pytest.raises(RuntimeError, match="independent"):
        AF.jvp(lambda a: dl.tensor([1.0]), a, dl.tensor([1.0, 1.0]), strict=True)
    _, z = AF.jvp(lambda a: dl.tensor([1.0]), a, dl.tensor([1.0, 1.0]))
    np.testing.assert_allclose(_np(z), [0.0])


def test_products_with_create_graph_are_differentiable():
    x = dl.tensor([0.5, 2.0], requires_grad=True)
    v = dl.tensor([1.0, 1.0])
    _, g = AF.vjp(lambda a: a ** 3, x, v, create_graph=True)
    (gg,) = dl.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(_np(gg), 6 * _np(x))
    _, jv = AF.jvp(lambda a: a ** 3, x, v, create_graph=True)
    (gj,) = dl.autograd.grad(jv.sum(), x)
    np.testing.assert_allclose(_np(gj), 6 * _np(x))


def test_hvp_and_vhp_match_the_hessian():
    x, v = RNG.normal(size=4), RNG.normal(size=4)
    H = _np(AF.hessian(_rosen, dl.tensor(x)))
    out, hv = AF.hvp(_rosen, dl.tensor(x), dl.tensor(v))
    np.testing.assert_allclose(float(out), float(_rosen(dl.tensor(x))))
    np.testing.assert_allclose(_np(hv), H @ v, rtol=1e-10)
    out, vh = AF.vhp(_rosen, dl.tensor(x), dl.tensor(v))
    np.testing.assert_allclose(_np(vh), v @ H, rtol=1e-10)
    a, b = dl.tensor([1.0, 2.0]), dl.tensor([3.0])
    f = lambda a, b: (a ** 2 * b).sum()  # noqa: E731
    va, vb = dl.tensor([1.0, 0.0]), dl.tensor([1.0])
    for product in (AF.hvp, AF.vhp):
        _, (pa, pb) = product(f, (a, b), (va, vb))
        np.testing.assert_allclose(_np(pa), [6.0 + 2.0, 4.0])
        np.testing.assert_allclose(_np(pb), [2.0])
    with pytest.raises(RuntimeError, match="single element"):
        AF.hvp(lambda a: a ** 2, a, va)
    with pytest.raises(RuntimeError, match="independent of input"):
        AF.vhp(lambda a, b: (a ** 2).sum() + b.sum(), (a, b), (va, vb), strict=True)
    with pytest.raises(RuntimeError, match="independent of input"):
        AF.hvp(lambda a, b: (a ** 2).sum() + b.sum(), (a, b), (va, vb), strict=True)
    _, (za, zb) = AF.hvp(lambda a, b: (a ** 2).sum() + b.sum(), (a, b), (va, vb))
    np.testing.assert_allclose(_np(zb), [0.0])
    _, hv = AF.hvp(lambda a: (a ** 3).sum(), dl.tensor([1.0, 2.0], requires_grad=True), va,
                   create_graph=True)
    assert hv.requires_grad


def test_inside_no_grad_the_walks_still_record():
    with dl.no_grad():
        J = AF.jacobian(lambda a: a ** 2, dl.tensor([1.0, 3.0]))
        H = AF.hessian(lambda a: (a ** 3).sum(), dl.tensor([1.0, 3.0]))
        _, jv = AF.jvp(lambda a: a ** 2, dl.tensor([1.0, 3.0]), dl.tensor([1.0, 1.0]))
        _, hv = AF.hvp(lambda a: (a ** 3).sum(), dl.tensor([1.0, 3.0]), dl.tensor([1.0, 1.0]))
    np.testing.assert_allclose(_np(J), np.diag([2.0, 6.0]))
    np.testing.assert_allclose(_np(H), np.diag([6.0, 18.0]))
    np.testing.assert_allclose(_np(jv), [2.0, 6.0])
    np.testing.assert_allclose(_np(hv), [6.0, 18.0])
    assert dl.is_grad_enabled() is True


def test_torch_autograd_functional_spelling():
    import difflab as torch

    assert torch.autograd.functional.jacobian is AF.jacobian
    assert {"jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"} <= set(dir(AF))


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    TF = torch.autograd.functional  # noqa: N806
    x = RNG.normal(size=3)
    v = RNG.normal(size=3)
    pairs = [
        (lambda m: lambda a: m.sin(a) * a.sum(), "jacobian"),
        (lambda m: lambda a: (m.exp(a) * a).sum(), "hessian"),
    ]
    for make, name in pairs:
        ours = getattr(AF, name)(make(dl), dl.tensor(x))
        theirs = getattr(TF, name)(make(torch), torch.tensor(x))
        np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=1e-10)
    make_f = pairs[0][0]
    for name in ("vjp", "jvp"):
        ours = getattr(AF, name)(make_f(dl), dl.tensor(x), dl.tensor(v))
        theirs = getattr(TF, name)(make_f(torch), torch.tensor(x), torch.tensor(v))
        np.testing.assert_allclose(_np(ours[1]), theirs[1].numpy(), rtol=1e-10)
    for name in ("hvp", "vhp"):
        f = lambda m: lambda a: (m.exp(a) * a).sum()  # noqa: E731
        ours = getattr(AF, name)(f(dl), dl.tensor(x), dl.tensor(v))
        theirs = getattr(TF, name)(f(torch), torch.tensor(x), torch.tensor(v))
        np.testing.assert_allclose(_np(ours[1]), theirs[1].numpy(), rtol=1e-10)
