"""Gradients through complex values: PyTorch's convention, pinned, checked by finite differences.

For a real loss L of a complex z = a + ib, PyTorch's gradient is ∂L/∂a + i·∂L/∂b
(twice the conjugate Wirtinger derivative ∂L/∂z*), so the gradient of |z|² is 2z,
and a real input receives the real part of what reaches it.  Each program below
has PyTorch 2.13's gradient pinned as numbers (:data:`PYTORCH`), so the suite
checks it without torch; ``test_the_programs_match_pytorch`` reruns PyTorch where
it is installed.  Finite differences on the real and imaginary parts separately
check every program, and every elementwise primitive of the registry, without
either (a primitive that cannot be right on complex values must refuse them).
"""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
from difflab import fastpath
from difflab.autograd.engine import apply
from difflab.ops import registry

# complex128 z, float64 x, 2 × 2 complex128 m: the inputs of every program
Z = [0.7 + 0.4j, -0.3 + 1.1j, 1.5 - 0.6j]
X = [1.5, -2.0, 0.45]
M = [[0.5 + 0.2j, -0.1 + 0.7j], [1.2 - 0.3j, 0.4 + 0.9j]]
INPUTS = {"z": (Z, "complex128"), "x": (X, "float64"), "m": (M, "complex128")}

#: name -> (input, program of (lib, t) with lib difflab or torch, a real scalar loss)
PROGRAMS = {
    # the programs (cplx.py, cplx2.py)
    "real": ("z", lambda lib, z: z.real.sum()),
    "imag": ("z", lambda lib, z: z.imag.sum()),
    "abs": ("z", lambda lib, z: z.abs().sum()),
    "square_real": ("z", lambda lib, z: (z * z).real.sum()),
    "square_abs": ("z", lambda lib, z: (z * z).abs().sum()),
    "exp_real": ("z", lambda lib, z: z.exp().real.sum()),
    "conj_times_z": ("z", lambda lib, z: (z.conj() * z).real.sum()),
    "angle": ("z", lambda lib, z: z.angle().sum()),
    "affine_imag": ("z", lambda lib, z: (z * 2 + 1).imag.sum()),
    "x_times_i_abs": ("x", lambda lib, x: (x * 1j).abs().sum()),
    "x_times_1_plus_i_abs": ("x", lambda lib, x: (x * (1 + 1j)).abs().sum()),
    "x_to_complex_abs": ("x", lambda lib, x: x.to(lib.complex128).abs().sum()),
    "x_times_1_plus_i_squared_abs": ("x", lambda lib, x: ((x * (1 + 1j)) ** 2).abs().sum()),
    "complex_tensor_times_x_abs": ("x", lambda lib, x: (lib.tensor(
        [1 + 1j, 2 - 1j, 0.5j], dtype=lib.complex128) * x).abs().sum()),
    "exp_of_x_complex_abs": ("x", lambda lib, x: lib.exp(x * (0.5 + 1j)).abs().sum()),
    # the brief's table
    "abs_squared": ("z", lambda lib, z: (z.abs() ** 2).sum()),
    "exp_abs": ("z", lambda lib, z: lib.exp(z).abs().sum()),
    "log_abs": ("z", lambda lib, z: lib.log(z).abs().sum()),
    "sin_abs": ("z", lambda lib, z: lib.sin(z).abs().sum()),
    "tanh_abs": ("z", lambda lib, z: lib.tanh(z).abs().sum()),
    "sqrt_abs": ("z", lambda lib, z: lib.sqrt(z).abs().sum()),
    "acosh_abs": ("z", lambda lib, z: lib.acosh(z).abs().sum()),
    "matmul_abs": ("m", lambda lib, m: (m @ m).abs().sum()),
    "matmul_constant_abs": ("m", lambda lib, m: (m @ lib.tensor(
        [[1 + 1j, 2], [0.5j, -1]], dtype=lib.complex128)).abs().sum()),
    "conjugate_transpose": ("m", lambda lib, m: (m.H @ m).real.sum()),
    "sum_abs": ("z", lambda lib, z: (z * z).sum().abs()),
    "mean_abs": ("z", lambda lib, z: (z * z).mean().abs()),
    "index_abs": ("z", lambda lib, z: (z[1:] * z[0]).abs().sum()),
    "cat_abs": ("z", lambda lib, z: lib.cat([z * z, z[:2] * 1j]).abs().sum()),
    "reshape_abs": ("m", lambda lib, m: (m * m).reshape(-1).abs().sum()),
    "x_through_complex_constants": ("x", lambda lib, x: ((x + 2j) * (x - 1j)).imag.sum()),
    "division_abs": ("z", lambda lib, z: (z / (z[0] + 2)).abs().sum()),
    "reciprocal_real": ("z", lambda lib, z: (1 / z).real.sum()),
    "x_divides_complex": ("x", lambda lib, x: (lib.tensor(
        [1 + 1j, 2 - 1j, 3j], dtype=lib.complex128) / x).abs().sum()),
    "integer_power_abs": ("z", lambda lib, z: (z ** 3).abs().sum()),
    "complex_power_abs": ("z", lambda lib, z: (z ** (0.5 + 1j)).abs().sum()),
    "complex_base_abs": ("z", lambda lib, z: ((1.5 + 0.5j) ** z).abs().sum()),
    "z_to_the_z_abs": ("z", lambda lib, z: (z ** z).abs().sum()),
    # the new functions
    "view_as_real": ("z", lambda lib, z: (lib.view_as_real(z * z) ** 2).sum()),
    "view_as_complex": ("x", lambda lib, x: lib.view_as_complex(
        lib.stack([x, x * 2], -1)).exp().imag.sum()),
    "polar": ("x", lambda lib, x: lib.polar(x * x + 1, x).imag.sum()),
    "complex_of_two_reals": ("x", lambda lib, x: lib.complex(x, x * x).abs().sum()),
    "sgn": ("z", lambda lib, z: (z.sgn() * z.conj() * 1j).imag.sum()),
    "vdot": ("z", lambda lib, z: lib.vdot(z, z * (1 + 1j)).abs()),
    "norm": ("z", lambda lib, z: lib.linalg.vector_norm(z)),
    "var": ("z", lambda lib, z: z.var()),
    "stack_flip_abs": ("z", lambda lib, z: lib.stack([z.flip(0), z.conj() * 2]).abs().sum()),
    "where_abs": ("z", lambda lib, z: lib.where(z.real > 0, z * z, z).abs().sum()),
    "prod_cumsum_abs": ("z", lambda lib, z: z.prod().abs() + z.cumsum(0).abs().sum()),
    "inverse_abs": ("m", lambda lib, m: lib.linalg.inv(m).abs().sum()),
    "solve_abs": ("m", lambda lib, m: lib.linalg.solve(m, m[:, :1] * 2 + 1).abs().sum()),
}

#: PyTorch 2.13's gradients of :data:`PROGRAMS` (flattened), printed by a script that ran
#: each program with ``lib = torch`` (rounded to 12 decimals).
PYTORCH = {
    "real": [(1+0j), (1+0j), (1+0j)],
    "imag": [1j, 1j, 1j],
    "abs": [(0.868243142124+0.496138938357j), (-0.263117405792+0.964763821238j),
        (0.928476690885-0.371390676354j)],
    "square_real": [(1.4-0.8j), (-0.6-2.2j), (3+1.2j)],
    "square_abs": [(1.4+0.8j), (-0.6+2.2j), (3-1.2j)],
    "exp_real": [(1.854789070419-0.784192241163j), (0.336032271583-0.660222650739j),
        (3.698897604701+2.530552001663j)],
    "conj_times_z": [(1.4+0.8j), (-0.6+2.2j), (3-1.2j)],
    "angle": [(-0.615384615385+1.076923076923j), (-0.846153846154-0.230769230769j),
        (0.229885057471+0.574712643678j)],
    "affine_imag": [2j, 2j, 2j],
    "x_times_i_abs": [1.0, -1.0, 1.0],
    "x_times_1_plus_i_abs": [1.414213562373, -1.414213562373, 1.414213562373],
    "x_to_complex_abs": [1.0, -1.0, 1.0],
    "x_times_1_plus_i_squared_abs": [6.0, -8.0, 1.8],
    "complex_tensor_times_x_abs": [1.414213562373, -2.2360679775, 0.5],
    "exp_of_x_complex_abs": [1.058500008306, 0.183939720586, 0.626161358096],
    "abs_squared": [(1.4+0.8j), (-0.6+2.2j), (3-1.2j)],
    "exp_abs": [(2.01375270747+0j), (0.740818220682+0j), (4.481689070338+0j)],
    "log_abs": [(-0.981103739632+0.758878771967j), (-0.860441865475-0.1699134055j),
        (0.307385518436-0.537267070932j)],
    "sin_abs": [(0.644906895917+0.581202322949j), (-0.206382762878+1.629118819206j),
        (0.059627187621-0.637790039008j)],
    "tanh_abs": [(0.457915346874+0.532542406132j), (1.219791111993+3.120339829087j),
        (0.069184831459-0.178838275788j)],
    "sqrt_abs": [(0.483485024622+0.276277156927j), (-0.123206535274+0.451757296004j),
        (0.36524214352-0.146096857408j)],
    "acosh_abs": [(-0.707180026324+0.803176866572j), (-0.630864972665+0.22888148762j),
        (0.409380550379-0.574815892177j)],
    "matmul_abs": [(1.886150517579+2.359487788611j), (-0.847504324945+3.675607456198j),
        (2.719310901223-0.491750823771j), (2.663055553147+2.857129108396j)],
    "matmul_constant_abs": [(2.849885629092+0.547516172802j), (-0.466236578487+0.301465655234j),
        (3.013831290826-1.167120202539j), (-0.438322227928+0.254762126659j)],
    "conjugate_transpose": [(0.8+1.8j), (0.8+1.8j), (3.2+1.2j), (3.2+1.2j)],
    "sum_abs": [(0.009109750373-1.612425816107j), (-2.204559590384-0.583024023903j),
        (2.541620354202-1.995035331793j)],
    "mean_abs": [(0.003036583458-0.537475272036j), (-0.734853196795-0.194341341301j),
        (0.847206784734-0.665011777264j)],
    "index_abs": [(2.392639217563+1.367222410036j), (-0.212132034356+0.777817459305j),
        (0.74856183952-0.299424735808j)],
    "cat_abs": [(2.268243142124+1.296138938357j), (-0.863117405792+3.164763821238j), (3-1.2j)],
    "reshape_abs": [(1+0.4j), (-0.2+1.4j), (2.4-0.6j), (0.8+1.8j)],
    "x_through_complex_constants": [1.0, 1.0, 1.0],
    "division_abs": [(-0.154852527452+0.111704249878j), (-0.09639875882+0.353462115675j),
        (0.340167539755-0.136067015902j)],
    "reciprocal_real": [(-0.781065088757-1.325443786982j), (0.662721893491+0.390532544379j),
        (-0.277447483155+0.264235698243j)],
    "x_divides_complex": [-0.628539361055, 0.559016994375, -14.814814814815],
    "integer_power_abs": [(1.693074127143+0.967470929796j), (-1.026157882589+3.762578902827j),
        (7.269972489632-2.907988995853j)],
    "complex_power_abs": [(0.616472847934-0.410981898622j), (0.124292841991+0.111209384939j),
        (0.106871695257-1.282460343085j)],
    "complex_base_abs": [(0.555122084167-0.389856258773j), (0.280287904992-0.196843175828j),
        (1.104839006846-0.775916530869j)],
    "z_to_the_z_abs": [(0.548261550162-0.362764153253j), (0.144158104674-0.23411385711j),
        (2.418219156655+0.621858003645j)],
    "view_as_real": [(1.82+1.04j), (-1.56+5.72j), (15.66-6.264j)],
    "view_as_complex": [-8.241221105734, -0.074500009074, 3.178258113313],
    "polar": [3.222380865232, 1.556455524567, 1.474256621279],
    "complex_of_two_reals": [3.050851079239, -4.0249223595, 1.281249714771],
    "sgn": [(0.868243142124+0.496138938357j), (-0.263117405792+0.964763821238j),
        (0.928476690885-0.371390676354j)],
    "vdot": [(1.979898987322+1.131370849898j), (-0.848528137424+3.111269837221j),
        (4.242640687119-1.697056274848j)],
    "norm": [(0.327805034054+0.187317162316j), (-0.140487871737+0.51512219637j),
        (0.702439358686-0.280975743475j)],
    "var": [(0.066666666667+0.1j), (-0.933333333333+0.8j), (0.866666666667-0.9j)],
    "stack_flip_abs": [(2.604729426373+1.488416815071j), (-0.789352217376+2.894291463713j),
        (2.785430072656-1.114172029062j)],
    "where_abs": [(1.4+0.8j), (-0.263117405792+0.964763821238j), (3-1.2j)],
    "prod_cumsum_abs": [(3.62895598381+2.804352995401j), (0.81869069969+2.650923846808j),
        (1.757229652482+0.086689619304j)],
    "inverse_abs": [(30.361653732519+7.121222873591j), (1.084710059151-32.710163511144j),
        (-16.354007335583+6.181601258653j), (9.708173579278+15.564092279105j)],
    "solve_abs": [(6.55002109416-0.732114213619j), (-6.631137299487-8.177516114888j),
        (-2.147748967091+3.181982617291j), (6.130725732815+0.14526359601j)],
}


def _input(lib, kind):
    values, dtype = INPUTS[kind]
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)


def _gradient(name):
    kind, program = PROGRAMS[name]
    t = _input(dl, kind)
    program(dl, t).backward()
    return t.grad


def _finite_difference(name, h=1e-6):
    """∂L/∂a + i·∂L/∂b by central differences, for each element z = a + ib of the input."""
    kind, program = PROGRAMS[name]
    values, dtype = INPUTS[kind]
    base = np.array(values, dtype=dtype)
    units = (1, 1j) if base.dtype.kind == "c" else (1,)
    out = np.zeros(base.size, dtype=base.dtype)
    for k in range(base.size):
        for unit in units:
            up, down = base.copy().reshape(-1), base.copy().reshape(-1)
            up[k] += h * unit
            down[k] -= h * unit
            with dl.no_grad():
                f_up = program(dl, dl.tensor(up.reshape(base.shape))).item()
                f_down = program(dl, dl.tensor(down.reshape(base.shape))).item()
            out[k] += (f_up - f_down) / (2 * h) * unit
    return out


def test_every_program_has_pinned_numbers():
    assert set(PYTORCH) == set(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_gradient_is_pytorchs(name):
    grad = _gradient(name)
    kind = PROGRAMS[name][0]
    assert grad.dtype == (dl.float64 if kind == "x" else dl.complex128)  # a real x: real
    np.testing.assert_allclose(grad.numpy().reshape(-1), np.array(PYTORCH[name]),
                               rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_gradient_is_the_finite_difference_of_the_real_and_imaginary_parts(name):
    np.testing.assert_allclose(_gradient(name).numpy().reshape(-1), _finite_difference(name),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_programs_match_pytorch(name):
    torch = pytest.importorskip("torch")
    kind, program = PROGRAMS[name]
    t = _input(torch, kind)
    program(torch, t).backward()
    np.testing.assert_allclose(_gradient(name).numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_plain_walk_gives_the_same_bits(name, monkeypatch):
    fast = _gradient(name).numpy()
    monkeypatch.setattr(fastpath, "ENABLED", False)  # (the quick and one-record walks off)
    np.testing.assert_array_equal(_gradient(name).numpy(), fast)


@pytest.mark.parametrize("name", ["square_abs", "x_times_1_plus_i_abs", "view_as_complex",
                                  "angle", "sgn", "polar"])
def test_a_compiled_or_traced_gradient_is_the_tapes(name):
    kind, program = PROGRAMS[name]
    want = _gradient(name).numpy()
    for make in (dl.compile, lambda f: dl.jit.trace(f, (_input(dl, kind).detach(),))):
        t = _input(dl, kind)
        make(lambda v: program(dl, v))(t).backward()
        np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["x_times_1_plus_i_squared_abs", "exp_of_x_complex_abs",
                                  "polar", "complex_of_two_reals", "view_as_complex",
                                  "x_through_complex_constants"])
def test_second_derivatives_through_complex_values(name):
    # reverse over reverse (the backward recorded through conj and the real parts) against
    # central differences of the gradient
    program = PROGRAMS[name][1]
    f = lambda v: program(dl, v)  # noqa: E731
    x = np.array(X)
    hessian = dl.hessian(f, method="reverse")(x)
    h = 1e-5
    rows = [(np.asarray(dl.grad(f)(x + h * e)) - np.asarray(dl.grad(f)(x - h * e))) / (2 * h)
            for e in np.eye(3)]
    np.testing.assert_allclose(hessian, np.array(rows), rtol=1e-5, atol=1e-6)


# ------------------------------------------------ every elementwise primitive of the registry

_W = np.array([1.1 - 0.2j, 0.6 + 0.5j, -0.8 + 0.3j, 0.4 + 1.2j])
_C = np.array([0.3 + 0.7j, -1.2 + 0.1j, 0.5 - 0.4j, 0.9 + 0.2j])
_Z4 = np.array([0.7 + 0.4j, -0.3 + 1.1j, 1.5 - 0.6j, 0.2 - 0.9j])


def _registry_loss(op, z):
    """A real loss that is not holomorphic in op's output: Re(c·y) + |y|²/10."""
    y = apply(op, z, dl.tensor(_W)) if isinstance(op, registry.BinaryOp) else apply(op, z)
    return (y * dl.tensor(_C)).real.sum() + (y.abs() ** 2).sum() * 0.1


@pytest.mark.parametrize("op", registry.elementwise_ops(), ids=lambda op: op.name)
def test_every_elementwise_primitive_is_right_on_complex_values_or_refuses(op):
    z = dl.tensor(_Z4, requires_grad=True)
    try:
        loss = _registry_loss(op, z)
    except (TypeError, NotImplementedError) as error:  # NumPy has no complex loop, or
        assert op.name in str(error)  # (the primitive refuses, as relu, by its name)
        return
    loss.backward()
    h, want = 1e-6, np.zeros(4, complex)
    for k in range(4):
        for unit in (1, 1j):
            up, down = _Z4.copy(), _Z4.copy()
            up[k] += h * unit
            down[k] -= h * unit
            with dl.no_grad():
                difference = (_registry_loss(op, dl.tensor(up)).item()
                              - _registry_loss(op, dl.tensor(down)).item())
            want[k] += difference / (2 * h) * unit
    np.testing.assert_allclose(z.grad.numpy(), want, rtol=1e-6, atol=1e-6)


def test_the_complex_capable_primitives_are_tested():
    # the holomorphic ones a complex program meets most, and abs, are among those checked
    checked = {op.name for op in registry.elementwise_ops()}
    assert {"exp", "log", "sin", "tanh", "sqrt", "abs", "mul", "div", "pow", "acosh"} <= checked


# ------------------------------------------------------------------------ what refuses


def test_a_complex_loss_needs_a_gradient():
    z = dl.tensor([1 + 2j], requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (z * z).sum().backward()
    (z * z).sum().backward(dl.tensor(1 + 0j, dtype=dl.complex64))  # ȳ given: ∂(Re y)
    np.testing.assert_allclose(z.grad.numpy(), [2 - 4j])


def test_forward_mode_refuses_complex_values():
    f = lambda x: (x * (1 + 1j)).abs().sum()  # noqa: E731
    with pytest.raises(NotImplementedError, match="forward mode .* complex values"):
        dl.func.jacfwd(f)(dl.tensor([1.5, -2.0]))
    with pytest.raises(NotImplementedError, match="forward mode .* complex values"):
        dl.grad(f, method="forward")(np.array([1.5, -2.0]))
    for method in ("forward", "symbolic"):  # (dl.complex of dual numbers, of symbols)
        with pytest.raises(NotImplementedError, match="complex: forward mode .* symbolic"):
            dl.grad(lambda x: dl.complex(x, x * x).abs().sum(), method=method)(
                np.array([1.5, -2.0]))
    traced = dl.jit.trace(f, (dl.tensor([1.5, -2.0]),))
    with pytest.raises(NotImplementedError, match="jvp: forward mode does not follow complex"):
        dl.jit.jvp(traced.graph)
    np.testing.assert_allclose(dl.func.jacrev(f)(dl.tensor([1.5, -2.0])).numpy(),
                               [2 ** 0.5, -(2 ** 0.5)], rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda m: dl.linalg.det(m), lambda m: dl.linalg.slogdet(m)[1],
    lambda m: dl.linalg.qr(m)[1].abs().sum(), lambda m: dl.linalg.pinv(m).abs().sum(),
])
def test_matrix_decompositions_refuse_complex_gradients(call):
    m = _input(dl, "m")
    with pytest.raises(NotImplementedError, match="real matrices only"):
        call(m).abs().backward()


def test_values_without_an_order_refuse():
    z = dl.tensor([1 + 2j])
    with pytest.raises(TypeError, match="relu is not defined for complex"):
        dl.relu(z)
    with pytest.raises(TypeError, match="use difflab.sgn"):
        dl.sign(z)
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex"):
        _ = dl.tensor([1.0]).imag
    with pytest.raises(RuntimeError, match="view_as_complex: expected .* last dimension"):
        dl.view_as_complex(dl.tensor([1.0, 2.0, 3.0]))


# --------------------------------------------------------------------------- edge values


def test_angle_abs_and_sgn_at_zero_have_gradient_zero():
    z = dl.tensor([0j, 1 + 1j], requires_grad=True)
    (z.angle() + z.abs() + z.sgn().real).sum().backward()
    assert z.grad.numpy()[0] == 0
    assert np.isfinite(z.grad.numpy()).all()


def test_a_real_tensors_parts_and_conjugate_are_itself():
    x = dl.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    (x.real * x.conj() + x.angle()).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * x.detach().numpy())
    assert x.grad.dtype == dl.float32


def test_complex64_keeps_its_precision():
    z = dl.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    (z * z).abs().sum().backward()
    assert z.grad.dtype == dl.complex64
    np.testing.assert_allclose(z.grad.numpy(), [2 + 4j, 6 - 2j], rtol=1e-6)
    x = dl.tensor([1.5, -2.0], requires_grad=True)
    (x * 1j).abs().sum().backward()
    assert x.grad.dtype == dl.float32


def test_symbolic_and_numeric_methods_of_complex_intermediates():
    f = lambda x: ((x * 1j).conj() * (x + 1j)).imag.sum() + (x + 0.5j).angle().sum()  # noqa: E731
    x = np.array([1.5, -2.0])
    want = np.asarray(dl.grad(f, method="reverse")(x))
    for method in ("symbolic", "numeric"):
        np.testing.assert_allclose(np.asarray(dl.grad(f, method=method)(x)), want, rtol=1e-6)


def test_a_complex_slices_gradient_on_the_device(device):
    """The unwritten adjoint of a slice is conjugated by its method (CuPy's conj ufunc takes
    no such object; it failed on the stand-in before)."""
    z = dl.tensor([1 + 1j, 2 - 1j, 0.5j, 3.0], device=device, requires_grad=True)
    (z[1:] * 2).abs().sum().backward()
    want = np.array([0, 2 * (2 - 1j) / abs(2 - 1j), 2j, 2])
    np.testing.assert_allclose(z.grad.cpu().numpy(), want, rtol=1e-6)
