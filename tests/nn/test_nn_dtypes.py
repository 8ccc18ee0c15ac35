"""One dtype rule for every layer (the module docstring of ``difflab.nn.functional``).

A layer computes in the dtype its tensor operations would: the input meets the
float32 parameters as in ``x @ W.T + b`` (int64 data gives float32, float64
data gives float64); a layer that needs fractions turns integers into the
default float; a layer that only selects keeps the input's dtype.  The table
below has one row per layer class of ``difflab.nn``; a new layer without a row
fails ``test_every_layer_has_a_row``.
"""

import pytest

import difflab as dl
from difflab import nn

F32, F64, I64 = "float32", "float64", "int64"
# What each input dtype gives: the tensor rule, and PyTorch's where it accepts the call.
PROMOTES = {I64: F32, F32: F32, F64: F64}  # parameters (float32) meet the input
KEEPS = {I64: I64, F32: F32, F64: F64}  # selects or passes through

LAYERS = {
    "Linear": (lambda nn: nn.Linear(3, 2), (4, 3), PROMOTES),
    "Conv2d": (lambda nn: nn.Conv2d(1, 2, 2), (1, 1, 4, 4), PROMOTES),
    "BatchNorm1d": (lambda nn: nn.BatchNorm1d(3), (4, 3), PROMOTES),
    "BatchNorm2d": (lambda nn: nn.BatchNorm2d(1), (2, 1, 3, 3), PROMOTES),
    "LayerNorm": (lambda nn: nn.LayerNorm(3), (4, 3), PROMOTES),
    "RNN": (lambda nn: nn.RNN(3, 2), (5, 1, 3), PROMOTES),
    "LSTM": (lambda nn: nn.LSTM(3, 2), (5, 1, 3), PROMOTES),
    "GRU": (lambda nn: nn.GRU(3, 2), (5, 1, 3), PROMOTES),
    "RNNCell": (lambda nn: nn.RNNCell(3, 2), (1, 3), PROMOTES),
    "LSTMCell": (lambda nn: nn.LSTMCell(3, 2), (1, 3), PROMOTES),
    "GRUCell": (lambda nn: nn.GRUCell(3, 2), (1, 3), PROMOTES),
    "MultiheadAttention": (lambda nn: _SelfAttention(nn.MultiheadAttention(4, 2)), (3, 1, 4),
                           PROMOTES),
    "Sigmoid": (lambda nn: nn.Sigmoid(), (4,), PROMOTES),
    "Tanh": (lambda nn: nn.Tanh(), (4,), PROMOTES),
    "GELU": (lambda nn: nn.GELU(), (4,), PROMOTES),
    "LeakyReLU": (lambda nn: nn.LeakyReLU(), (4,), PROMOTES),
    "Softmax": (lambda nn: nn.Softmax(-1), (4,), PROMOTES),
    "LogSoftmax": (lambda nn: nn.LogSoftmax(-1), (4,), PROMOTES),
    "AvgPool2d": (lambda nn: nn.AvgPool2d(2), (1, 1, 4, 4), PROMOTES),
    "AdaptiveAvgPool2d": (lambda nn: nn.AdaptiveAvgPool2d(1), (1, 1, 4, 4), PROMOTES),
    "Dropout": (lambda nn: nn.Dropout(0.3), (4,), PROMOTES),
    "ReLU": (lambda nn: nn.ReLU(), (4,), KEEPS),
    "MaxPool2d": (lambda nn: nn.MaxPool2d(2), (1, 1, 4, 4), KEEPS),
    "Flatten": (lambda nn: nn.Flatten(), (2, 3, 2), KEEPS),
    "Unflatten": (lambda nn: nn.Unflatten(1, (2, 2)), (3, 4), KEEPS),
    "Identity": (lambda nn: nn.Identity(), (4,), KEEPS),
}
# Layers whose input is not data of a dtype to promote (indices, targets, containers).
NOT_DATA = {"Embedding", "Module", "ModuleDict", "ModuleList", "ParameterList", "Sequential",
            "DataParallel", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss",
            "MSELoss", "NLLLoss"}


class _SelfAttention:
    def __init__(self, attention) -> None:
        self.attention = attention

    def __call__(self, x):
        return self.attention(x, x, x)[0]


def _input(dtype: str, shape: tuple) -> dl.Tensor:
    return (dl.arange(dl.tensor(shape).prod().item()) % 3 - 1).reshape(shape).to(
        getattr(dl, dtype))


def test_every_layer_has_a_row():
    layers = {name for name in dir(nn) if isinstance(getattr(nn, name), type)
              and issubclass(getattr(nn, name), nn.Module)}
    assert layers - NOT_DATA - set(LAYERS) == set()


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("dtype", [I64, F32, F64])
def test_layer_output_dtype_follows_the_rule(name, dtype):
    make, shape, rule = LAYERS[name]
    layer = make(nn)
    out = layer(_input(dtype, shape))
    out = out[0] if isinstance(out, tuple) else out
    assert str(out.dtype) == f"difflab.{rule[dtype]}", (
        f"{name} fed {dtype} gave {out.dtype}, the rule says {rule[dtype]}")


@pytest.mark.parametrize("dtype", [I64, F32, F64])
def test_a_layer_agrees_with_the_operations_it_is_made_of(dtype):
    layer = nn.Linear(3, 2)
    x = _input(dtype, (4, 3))
    assert layer(x).dtype == (x @ layer.weight.T + layer.bias).dtype
    assert dl.relu(x).dtype == x.relu().dtype == nn.ReLU()(x).dtype


def test_int64_data_in_a_float32_model_keeps_the_loss_float32():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    x = dl.tensor([[1, 2, 3], [4, 5, 6]])
    loss = nn.functional.mse_loss(model(x), dl.tensor([[1.0], [0.0]]))
    assert loss.dtype == dl.float32
    loss.backward()
    assert all(p.grad.dtype == dl.float32 for p in model.parameters())


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("dtype", [I64, F32, F64])
def test_layer_dtype_matches_pytorch_where_it_accepts_the_call(name, dtype):
    torch = pytest.importorskip("torch")
    make, shape, rule = LAYERS[name]
    x = torch.tensor(_input(dtype, shape).numpy())
    try:
        theirs = make(torch.nn)(x)
    except RuntimeError:
        pytest.skip(f"PyTorch refuses {name} on {dtype} (difflab promotes, as its operators do)")
    theirs = theirs[0] if isinstance(theirs, tuple) else theirs
    assert str(theirs.dtype).split(".")[-1] == rule[dtype]
