"""``inplace=True`` on the activations (``nn.ReLU(inplace=True)``, ``F.relu(x, inplace=True)``,
``F.relu_``): the result is written into the input, as in PyTorch, by the tensor's in-place
machinery (version counter, autograd's rules for in-place changes)."""

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
import difflab.nn.functional as F

VALUES = [-2.0, -0.5, 0.25, 1.5, 7.0]

#: name -> (call with inplace, the out-of-place call)
FUNCTIONS = {
    "relu": (lambda x: F.relu(x, inplace=True), F.relu),
    "relu_": (F.relu_, F.relu),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2, inplace=True), lambda x: F.leaky_relu(x, 0.2)),
    "leaky_relu_": (lambda x: F.leaky_relu_(x, 0.2), lambda x: F.leaky_relu(x, 0.2)),
    "elu": (lambda x: F.elu(x, 0.5, inplace=True), lambda x: F.elu(x, 0.5)),
    "elu_": (lambda x: F.elu_(x, 0.5), lambda x: F.elu(x, 0.5)),
    "selu": (lambda x: F.selu(x, inplace=True), F.selu),
    "celu": (lambda x: F.celu(x, 2.0, inplace=True), lambda x: F.celu(x, 2.0)),
    "threshold": (lambda x: F.threshold(x, 0.3, -1.0, inplace=True),
                  lambda x: F.threshold(x, 0.3, -1.0)),
    "threshold_": (lambda x: F.threshold_(x, 0.3, -1.0), lambda x: F.threshold(x, 0.3, -1.0)),
    "silu": (lambda x: F.silu(x, inplace=True), F.silu),
    "mish": (lambda x: F.mish(x, inplace=True), F.mish),
    "hardsigmoid": (lambda x: F.hardsigmoid(x, inplace=True), F.hardsigmoid),
    "hardswish": (lambda x: F.hardswish(x, inplace=True), F.hardswish),
    "hardtanh": (lambda x: F.hardtanh(x, -1.0, 2.0, inplace=True),
                 lambda x: F.hardtanh(x, -1.0, 2.0)),
    "hardtanh_": (lambda x: F.hardtanh_(x, -1.0, 2.0), lambda x: F.hardtanh(x, -1.0, 2.0)),
    "relu6": (lambda x: F.relu6(x, inplace=True), F.relu6),
}

LAYERS = [nn.ReLU, nn.LeakyReLU, nn.ELU, nn.SELU, nn.CELU, nn.SiLU, nn.Mish, nn.Hardsigmoid,
          nn.Hardswish, nn.Hardtanh, nn.ReLU6, lambda **kw: nn.Threshold(0.3, -1.0, **kw)]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_result_is_written_into_the_input(name):
    in_place, out_of_place = FUNCTIONS[name]
    x = dl.tensor(VALUES, dtype=dl.float64)
    expected = out_of_place(x.clone()).array
    version = x._version[0]
    y = in_place(x)
    assert y is x
    np.testing.assert_allclose(x.array, expected)
    assert x._version[0] == version + 1


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_gradient_through_it_equals_the_out_of_place_one(name):
    in_place, out_of_place = FUNCTIONS[name]
    weights = dl.tensor([1.0, -2.0, 3.0, 0.5, 2.0], dtype=dl.float64)
    grads = []
    for f in (in_place, out_of_place):
        a = dl.tensor(VALUES, dtype=dl.float64, requires_grad=True)
        h = a * 1.5  # (a result, not a leaf: writing into it is allowed)
        (f(h) * weights).sum().backward()
        grads.append(a.grad.array)
    np.testing.assert_allclose(grads[0], grads[1])


@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_leaf_that_requires_grad_refuses_but_not_under_no_grad(name):
    in_place, out_of_place = FUNCTIONS[name]
    a = dl.tensor(VALUES, dtype=dl.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf tensor that requires grad is being used in "
                                           "an in-place operation"):
        in_place(a)
    np.testing.assert_array_equal(a.array, VALUES)  # (unchanged)
    with dl.no_grad():
        in_place(a)
    np.testing.assert_allclose(a.array, out_of_place(dl.tensor(VALUES, dtype=dl.float64)).array)


def test_the_error_names_the_call():
    a = dl.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\(relu_\)"):
        F.relu_(a)
    with pytest.raises(RuntimeError, match=r"\(relu\(inplace=True\)\)"):
        nn.ReLU(inplace=True)(a)
    with pytest.raises(TypeError, match="relu_: expected a Tensor, got list"):
        F.relu_([1.0])


def test_a_value_saved_for_backward_and_then_overwritten_is_caught():
    a = dl.tensor([-1.0, 2.0], requires_grad=True)
    h = a.exp()  # exp saves its output, which relu then overwrites
    y = F.relu(h, inplace=True)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_with_inplace_writes_into_its_input_and_keeps_the_gradient(layer):
    x = dl.tensor(VALUES, dtype=dl.float64)
    expected = layer()(x.clone()).array
    assert layer(inplace=True)(x) is x
    np.testing.assert_allclose(x.array, expected)
    grads = []
    for inplace in (True, False):
        a = dl.tensor(VALUES, dtype=dl.float64, requires_grad=True)
        (layer(inplace=inplace)(a - 0.1) ** 2).sum().backward()
        grads.append(a.grad.array)
    np.testing.assert_allclose(grads[0], grads[1])
    assert "inplace=True" in repr(layer(inplace=True))
    assert "inplace" not in repr(layer())


def test_a_network_with_relu_inplace_trains_as_the_out_of_place_one():
    grads = []
    for inplace in (True, False):
        dl.manual_seed(0)
        net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=inplace), nn.Linear(4, 1))
        net(dl.randn(5, 3)).pow(2).mean().backward()
        grads.append([p.grad.array.copy() for p in net.parameters()])
    for g_inplace, g_plain in zip(*grads):
        np.testing.assert_allclose(g_inplace, g_plain)


def test_a_traced_network_with_relu_inplace_replays_as_eager():
    dl.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 1))
    traced = dl.jit.trace(net, dl.randn(5, 3))
    x = dl.randn(5, 3)
    np.testing.assert_allclose(traced(x).array, net(x).array, rtol=1e-6)


#: name -> (the call, the input's shape)
DROPOUTS = {
    "dropout": (lambda x, **kw: F.dropout(x, 0.4, **kw), (24,)),
    "dropout1d": (lambda x, **kw: F.dropout1d(x, 0.4, **kw), (2, 3, 4)),
    "dropout2d": (lambda x, **kw: F.dropout2d(x, 0.4, **kw), (3, 2, 2, 2)),
    "alpha_dropout": (lambda x, **kw: F.alpha_dropout(x, 0.4, True, **kw), (24,)),
}
DATA = np.linspace(-1.0, 2.0, 24)


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_inplace_writes_the_same_draw_and_gradient_into_its_input(name):
    call, shape = DROPOUTS[name]
    data = DATA.reshape(shape)
    results, grads = [], []
    for inplace in (True, False):
        dl.manual_seed(3)
        x = dl.tensor(data, dtype=dl.float64)
        y = call(x, inplace=inplace)
        assert (y.data_ptr() == x.data_ptr()) is inplace
        results.append(y.array.reshape(-1).copy())
        dl.manual_seed(3)
        a = dl.tensor(data, dtype=dl.float64, requires_grad=True)
        (call(a * 2.0, inplace=inplace) ** 2).sum().backward()
        grads.append(a.grad.array)
    np.testing.assert_allclose(results[0], results[1])
    assert not np.allclose(results[0], DATA)  # (something was dropped)
    np.testing.assert_allclose(grads[0], grads[1])
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        call(dl.tensor(data, requires_grad=True), inplace=True)


def test_dropout_inplace_outside_training_leaves_the_input_alone():
    a = dl.tensor(DATA, requires_grad=True)
    assert F.dropout(a, 0.5, training=False, inplace=True) is a  # (no write: no refusal)
    layer = nn.Dropout(0.5, inplace=True).eval()
    assert layer(a) is a and a._version[0] == 0
    assert repr(layer) == "Dropout(p=0.5, inplace=True)"
    assert repr(nn.Dropout2d()) == "Dropout2d(p=0.5, inplace=False)"
    dl.manual_seed(0)
    x = dl.ones(2, 3, 4)
    assert nn.Dropout1d(0.5, inplace=True)(x) is x and x._version[0] == 1
