"""The recurrent layers' speed paths, proven to change no result.

``nn.RNN``/``nn.LSTM``/``nn.GRU`` project the whole input sequence once per
layer (one ``linear`` before the time loop) and run each step's gates as one
fused primitive (``gru_cell``, ``lstm_cell_state``, ``lstm_hidden_state``).
These tests hold them to a plain per-step reference written from the cell
equations, to the composite they replaced, and to every differentiation
method; the primitives' registry-wide checks (replay, vmap, second order)
come from their entries in ``difflab.testing.samples``,
``tests/diff/test_second_order.py`` and ``tests/jit/test_jit_onnx.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
from difflab.autograd import gradcheck, gradgradcheck
from difflab.autograd.engine import apply
from difflab.ops import registry

GRU_CELL, CELL_STATE, HIDDEN_STATE = (registry.get(n) for n in (
    "gru_cell", "lstm_cell_state", "lstm_hidden_state"))

rng = np.random.default_rng(7)


def t64(*shape, requires_grad=True):
    return dl.tensor(rng.normal(size=shape), requires_grad=requires_grad)


# ------------------------------------------------- a plain per-step reference (NumPy)


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _reference_step(kind, x, state, w_ih, w_hh, b_ih, b_hh, nonlinearity="tanh"):
    """One step from the cell equations, on arrays: both projections inside the step."""
    gi, gh = x @ w_ih.T + b_ih, (state[0] if kind == "LSTM" else state) @ w_hh.T + b_hh
    if kind == "RNN":
        pre = gi + gh
        return np.tanh(pre) if nonlinearity == "tanh" else np.maximum(pre, 0.0)
    if kind == "GRU":
        (xr, xz, xn), (hr, hz, hn) = np.split(gi, 3, -1), np.split(gh, 3, -1)
        r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        return (1.0 - z) * n + z * state
    i, f, g, o = np.split(gi + gh, 4, -1)
    c = _sigmoid(f) * state[1] + _sigmoid(i) * np.tanh(g)
    return _sigmoid(o) * np.tanh(c), c


def _reference_layer(net, kind, x, states):
    """The layer, step by step from the equations: (outputs, each layer's last state)."""
    seq = x.transpose(1, 0, 2) if net.batch_first else x
    p = {name: t.detach().numpy() for name, t in net.named_parameters()}
    finals = []
    for layer in range(net.num_layers):
        state, outputs = states[layer], []
        for xt in seq:
            state = _reference_step(kind, xt, state, *(p[f"{n}_l{layer}"] for n in (
                "weight_ih", "weight_hh", "bias_ih", "bias_hh")),
                **({"nonlinearity": net._cell_kwargs["nonlinearity"]} if kind == "RNN" else {}))
            outputs.append(state[0] if kind == "LSTM" else state)
        seq = np.stack(outputs)
        finals.append(state)
    return (seq.transpose(1, 0, 2) if net.batch_first else seq), finals


LAYERS = {"RNN": nn.RNN, "LSTM": nn.LSTM, "GRU": nn.GRU}


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("kind", ["RNN", "RNN-relu", "LSTM", "GRU"])
def test_layers_equal_a_per_step_reference_from_the_equations(kind, with_state, batch_first):
    dl.manual_seed(3)
    name = kind.split("-")[0]
    extra = {"nonlinearity": "relu"} if kind == "RNN-relu" else {}
    net = LAYERS[name](3, 5, num_layers=2, batch_first=batch_first, **extra).double()
    x = rng.normal(size=(2, 4, 3) if batch_first else (4, 2, 3))
    h0, c0 = rng.normal(size=(2, 2, 5)), rng.normal(size=(2, 2, 5))
    zeros = np.zeros((2, 5))
    if name == "LSTM":
        states = [(h0[k], c0[k]) if with_state else (zeros, zeros) for k in range(2)]
        out, (h_n, c_n) = net(dl.tensor(x), (dl.tensor(h0), dl.tensor(c0)) if with_state
                              else None)
        finals = [h_n.detach().numpy(), c_n.detach().numpy()]
    else:
        states = [h0[k] if with_state else zeros for k in range(2)]
        out, h_n = net(dl.tensor(x), dl.tensor(h0) if with_state else None)
        finals = [h_n.detach().numpy()]
    want_out, want_finals = _reference_layer(net, name, x, states)
    np.testing.assert_allclose(out.detach().numpy(), want_out, rtol=0, atol=1e-12)
    want = ([np.stack([s[0] for s in want_finals]), np.stack([s[1] for s in want_finals])]
            if name == "LSTM" else [np.stack(want_finals)])
    for got, expected in zip(finals, want):
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


# -------------------------------------- the composite the fused primitives replaced


def _gru_composite(gi, gh, h):
    x_r, x_z, x_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r, z = (x_r + h_r).sigmoid(), (x_z + h_z).sigmoid()
    n = (x_n + r * h_n).tanh()
    return (1.0 - z) * n + z * h


def _lstm_composite(gates, c):
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _lstm_fused(gates, c):
    c = apply(CELL_STATE, gates, c)
    return apply(HIDDEN_STATE, gates, c), c


def _gradients(outputs, inputs):
    weights = [dl.tensor(rng.normal(size=tuple(o.shape))) for o in outputs]
    total = sum((o * w).sum() for o, w in zip(outputs, weights))
    return [g.numpy() for g in dl.autograd.grad(total, inputs)], weights


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)])
def test_the_fused_cells_equal_the_composite_in_value_and_gradient(shape):
    lead, hidden = shape[:-1], shape[-1]
    gi, gh, h = t64(*lead, 3 * hidden), t64(*lead, 3 * hidden), t64(*lead, hidden)
    fused, composite = apply(GRU_CELL, gi, gh, h), _gru_composite(gi, gh, h)
    np.testing.assert_allclose(fused.detach().numpy(), composite.detach().numpy(), atol=1e-15)
    seed = rng.normal(size=fused.shape)
    got = dl.autograd.grad((fused * seed).sum(), (gi, gh, h))
    want = dl.autograd.grad((composite * seed).sum(), (gi, gh, h))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0, atol=1e-14)

    gates, c = t64(*lead, 4 * hidden), t64(*lead, hidden)
    fused, composite = _lstm_fused(gates, c), _lstm_composite(gates, c)
    for a, b in zip(fused, composite):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-15)
    seeds = [rng.normal(size=tuple(o.shape)) for o in fused]
    got = dl.autograd.grad(sum((o * s).sum() for o, s in zip(fused, seeds)), (gates, c))
    want = dl.autograd.grad(sum((o * s).sum() for o, s in zip(composite, seeds)), (gates, c))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0, atol=1e-14)


def test_the_cells_pass_gradcheck_and_gradgradcheck_in_float64():
    gi, gh, h = t64(2, 9), t64(2, 9), t64(2, 3)
    gates, c = t64(2, 12), t64(2, 3)
    for f, inputs in ((lambda a, b, s: apply(GRU_CELL, a, b, s), (gi, gh, h)),
                      (lambda g, s: apply(CELL_STATE, g, s), (gates, c)),
                      (lambda g, s: apply(HIDDEN_STATE, g, s), (gates, c))):
        assert gradcheck(f, inputs)
        assert gradgradcheck(f, inputs)


def test_double_backward_through_whole_layers():
    dl.manual_seed(4)
    for cls in (nn.GRU, nn.LSTM):
        net = cls(2, 3, num_layers=2).double()
        assert gradgradcheck(lambda x, net=net: net(x)[0], (t64(3, 2, 2),))


@pytest.mark.slow  # (sympy and the graph compiler: a few seconds each)
@pytest.mark.parametrize("cls", [nn.GRU, nn.LSTM, nn.RNN])
def test_gradients_through_a_layer_agree_across_methods(cls):
    """The input gradient of a layer by every method: the tape, dual numbers, sympy, the
    compiled graph, finite differences."""
    dl.manual_seed(5)
    net = cls(2, 2).double().requires_grad_(False)  # (constants: x is what varies)
    weights = rng.normal(size=(1, 2))

    def f(x):  # (two steps, a batch of one: sympy's expressions grow with every step)
        return dl.sum(net(x.reshape(2, 1, 2))[0][-1] * weights)

    x = rng.uniform(-1.0, 1.0, 4)
    results = {m: np.asarray(dl.grad(f, method=m)(x), dtype=float)
               for m in ("reverse", "forward", "symbolic", "compiled", "numeric")}
    for method, got in results.items():
        tol = 1e-7 if method == "numeric" else 1e-12
        np.testing.assert_allclose(got, results["reverse"], rtol=tol, atol=tol, err_msg=method)


# ------------------------------------------------------------------ what is recorded


def test_one_input_projection_per_layer_and_one_record_per_step():
    dl.manual_seed(6)
    for cls, per_step in ((nn.GRU, {"gru_cell": 1}),
                          (nn.LSTM, {"lstm_cell_state": 1, "lstm_hidden_state": 1})):
        net = cls(3, 4, num_layers=2).double()
        graph = dl.jit.trace(lambda x, net=net: net(x)[0], dl.randn(5, 2, 3,
                                                                    dtype=dl.float64)).graph
        counts = {}
        for node in graph.nodes:
            counts[node.op_name] = counts.get(node.op_name, 0) + 1
        for name, k in per_step.items():
            assert counts[name] == 5 * 2 * k
        # each layer: 1 projection of the whole sequence + 1 of the state per step
        assert counts["linear"] == 2 * (1 + 5)


def test_a_compiled_training_step_equals_eager():
    dl.manual_seed(8)
    x = dl.randn(4, 3, 2, dtype=dl.float64)
    nets = [nn.GRU(2, 3).double() for _ in range(2)]
    nets[1].load_state_dict(nets[0].state_dict())
    compiled = dl.compile(nets[1])
    for net in (nets[0], compiled):
        for _ in range(3):
            net.zero_grad() if hasattr(net, "zero_grad") else None
            (net(x)[0] ** 2).sum().backward()
    for a, b in zip(nets[0].parameters(), nets[1].parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=0, atol=1e-12)


def test_the_gru_backward_record_reads_the_cells_gates_with_the_same_numbers():
    """gru_cell passes its saved gates to gru_cell_backward (the compiled backward then
    does not compute them again): the same packed adjoints bit for bit, the same first and
    second derivatives, and no adjoint for the gates themselves."""
    backward = registry.get("gru_cell_backward")
    g, gi, gh, h = t64(2, 3), t64(2, 9), t64(2, 9), t64(2, 3)
    ctx = registry.Context((True,) * 3)
    GRU_CELL.forward(ctx, np, gi.array, gh.array, h.array)
    rz, n = (dl.tensor(a) for a in ctx.saved[3:])
    plain = apply(backward, g, gi, gh, h)
    with_gates = apply(backward, g, gi, gh, h, rz, n)
    assert plain.detach().numpy().tobytes() == with_gates.detach().numpy().tobytes()
    v = dl.tensor(rng.normal(size=plain.shape))
    want = dl.autograd.grad((plain * v).sum(), [g, gi, gh, h])
    got = dl.autograd.grad((with_gates * v).sum(), [g, gi, gh, h])
    for a, b in zip(want, got):
        assert a.numpy().tobytes() == b.numpy().tobytes()
    # (no gradcheck with the gates held fixed: they are gi's and gh's gates, and move
    # with them; the rules' derivatives through them are the plain record's, checked above)
    tangents = [dl.tensor(rng.normal(size=t.shape)) for t in (g, gi, gh, h)]
    _, jvp_plain = dl.func.jvp(lambda *x: apply(backward, *x), (g, gi, gh, h), tangents)
    _, jvp_gates = dl.func.jvp(lambda *x: apply(backward, *x, rz, n), (g, gi, gh, h),
                               tangents)
    np.testing.assert_array_equal(jvp_plain.detach().numpy(), jvp_gates.detach().numpy())


def test_vmap_of_a_gru_cell_equals_a_loop():
    dl.manual_seed(9)
    cell = nn.GRUCell(3, 4).double()
    xs, h = dl.randn(5, 2, 3, dtype=dl.float64), dl.randn(2, 4, dtype=dl.float64)
    got = dl.func.vmap(lambda x: cell(x, h))(xs)
    want = dl.stack([cell(x, h) for x in xs])
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-15)


# ------------------------------------------------------------------------- errors


def test_bad_shapes_are_explained():
    with pytest.raises(ValueError, match=r"gru_cell: expected gi of shape \(\.\.\., 3·H\)"):
        apply(GRU_CELL, t64(2, 8), t64(2, 9), t64(2, 3))
    with pytest.raises(ValueError, match=r"lstm_cell_state: expected gates .* state \(4, 3\)"):
        apply(CELL_STATE, t64(2, 12), t64(4, 3))
    with pytest.raises(ValueError, match="GRUCell expected input with 3 features"):
        nn.GRU(3, 4)(dl.randn(5, 2, 4))
    with pytest.raises(ValueError, match="the input sequence is empty"):
        nn.LSTM(3, 4)(dl.randn(0, 2, 3))
    with pytest.raises(ValueError, match="expects a 3-D input"):
        nn.GRU(3, 4)(dl.randn(3))


def test_a_traced_first_order_training_step_takes_one_vjp_node_per_cell(tmp_path):
    """A traced step's backward that is not differentiated again (no create_graph) runs
    each cell's array rule as one node (``first_order_is_cheaper``), reading the gates the
    forward node saved; replayed at another input and after save/load it equals eager."""
    from difflab import export

    dl.manual_seed(10)
    for cls, names in ((nn.GRU, ("gru_cell",)),
                       (nn.LSTM, ("lstm_cell_state", "lstm_hidden_state"))):
        net = cls(3, 4).double()
        x0, x1 = rng.normal(size=(5, 2, 3)), rng.normal(size=(5, 2, 3))

        def step(x, net=net):
            loss = (net(x)[0] ** 2).sum()
            return (loss,) + dl.autograd.grad(loss, list(net.parameters()))

        ep = export.export(step, (dl.tensor(x0),))
        counts = ep.graph.op_counts()
        for name in names:  # (the first step's state is zeros: no adjoint asked of it)
            assert counts[f"{name}_vjp0"] == 5
        export.save(ep, tmp_path / "step.dlg")
        loaded = export.load(tmp_path / "step.dlg")
        for got, want in zip(loaded.graph.run(x1, **ep.state_dict), step(dl.tensor(x1))):
            np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-12, atol=1e-13)


def _composite_layer(net, x):
    """The GRU or LSTM layer as written before the fused cells: per-step composite ops."""
    zeros = dl.zeros(x.shape[1], net.hidden_size, dtype=dl.float64)
    h, c = zeros, zeros
    w_ih, w_hh, b_ih, b_hh = (getattr(net, f"{n}_l0") for n in (
        "weight_ih", "weight_hh", "bias_ih", "bias_hh"))
    outputs = []
    for t in range(x.shape[0]):
        gi = dl.nn.functional.linear(x[t], w_ih, b_ih)
        gh = dl.nn.functional.linear(h, w_hh, b_hh)
        if isinstance(net, nn.GRU):
            h = _gru_composite(gi, gh, h)
        else:
            h, c = _lstm_composite(gi + gh, c)
        outputs.append(h)
    return dl.stack(outputs)


@pytest.mark.parametrize("cls, records", [(nn.GRU, {"gru_cell_backward": 5}), (
    nn.LSTM, {"lstm_cell_state_backward": 5, "lstm_hidden_state_backward": 5})])
def test_a_gradient_penalty_is_one_backward_record_per_cell(cls, records):
    """create_graph=True records each cell's VJP as one ``*_backward`` primitive, whose
    own derivatives (a Hessian-vector product written by hand) give the penalty's
    gradient of the composite layer, eagerly and through dl.compile."""
    dl.manual_seed(11)
    net = cls(3, 4).double()
    x0 = rng.normal(size=(5, 2, 3))

    def penalty(x, layer):
        (gx,) = dl.autograd.grad((layer(x) ** 2).sum(), [x], create_graph=True)
        return (gx ** 2).sum()

    traced = dl.jit.trace(lambda x: penalty(x, lambda v: net(v)[0]),
                          dl.tensor(x0, requires_grad=True))
    counts = traced.graph.op_counts()
    assert {name: counts.get(name) for name in records} == records
    compiled = dl.compile(net)
    results = []
    for layer in (lambda v: net(v)[0], lambda v: _composite_layer(net, v),
                  lambda v: compiled(v)[0]):
        x = dl.tensor(x0, requires_grad=True)
        value = penalty(x, layer)
        results.append([value.detach().numpy()] + [
            g.numpy() for g in dl.autograd.grad(value, [x, *net.parameters()])])
    for other in results[1:]:
        for got, want in zip(results[0], other):
            np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("layer", ["RNN", "GRU", "LSTM"])
def test_a_single_sequence_without_a_batch_dimension_is_a_batch_of_one(layer, batch_first):
    # PyTorch's unbatched input: x (L, H_in), states (num_layers, H); outputs without N.
    module = getattr(nn, layer)(4, 3, num_layers=2, batch_first=batch_first).double()
    x = dl.randn(5, 4, dtype=dl.float64)
    batch = 0 if batch_first else 1
    out, state = module(x)
    out_b, state_b = module(x.unsqueeze(batch))
    assert tuple(out.shape) == (5, 3)
    np.testing.assert_array_equal(out.detach().numpy(), out_b.squeeze(batch).detach().numpy())
    states = state if layer == "LSTM" else (state,)
    states_b = state_b if layer == "LSTM" else (state_b,)
    for s, s_b in zip(states, states_b):
        assert tuple(s.shape) == (2, 3)
        np.testing.assert_array_equal(s.detach().numpy(), s_b.squeeze(1).detach().numpy())
    zeros = dl.zeros(2, 3, dtype=dl.float64)
    given = module(x, (zeros, zeros) if layer == "LSTM" else zeros)[0]
    np.testing.assert_array_equal(given.detach().numpy(), out.detach().numpy())
    with pytest.raises(ValueError, match="unbatched 2-D input, the state should also be 2-D"):
        module(x, (zeros[:, None], zeros[:, None]) if layer == "LSTM" else zeros[:, None])
    with pytest.raises(ValueError, match="3-D input .* or a 2-D one"):
        module(x[None, None])
