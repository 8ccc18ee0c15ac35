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
V, SEQ, IMG = (2, 4), (1, 2, 8), (1, 2, 4, 4)

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
    "AdaptiveAvgPool3d": (lambda nn: nn.AdaptiveAvgPool3d((2, None, 1)), (1, 2, 3, 3, 4),
                          PROMOTES),
    "Dropout": (lambda nn: nn.Dropout(0.3), (4,), PROMOTES),
    # (the layers of PyTorch's breadth)
    "AdaptiveAvgPool1d": (lambda nn: nn.AdaptiveAvgPool1d(2), SEQ, PROMOTES),
    "AlphaDropout": (lambda nn: nn.AlphaDropout(0.3), V, PROMOTES),
    "AvgPool1d": (lambda nn: nn.AvgPool1d(2), SEQ, PROMOTES),
    "Bilinear": (lambda nn: _Twice(nn.Bilinear(4, 4, 3)), V, PROMOTES),
    "CELU": (lambda nn: nn.CELU(), V, PROMOTES),
    "Conv1d": (lambda nn: nn.Conv1d(2, 3, 3), SEQ, PROMOTES),
    "Conv3d": (lambda nn: nn.Conv3d(1, 2, 2), (1, 1, 3, 4, 4), PROMOTES),
    "ConvTranspose1d": (lambda nn: nn.ConvTranspose1d(2, 3, 3), SEQ, PROMOTES),
    "ConvTranspose2d": (lambda nn: nn.ConvTranspose2d(2, 3, 3), IMG, PROMOTES),
    "CosineSimilarity": (lambda nn: _Twice(nn.CosineSimilarity()), V, PROMOTES),
    "Dropout1d": (lambda nn: nn.Dropout1d(0.3), SEQ, PROMOTES),
    "Dropout2d": (lambda nn: nn.Dropout2d(0.3), IMG, PROMOTES),
    "ELU": (lambda nn: nn.ELU(), V, PROMOTES),
    "GLU": (lambda nn: nn.GLU(), V, PROMOTES),
    "GroupNorm": (lambda nn: nn.GroupNorm(1, 2), IMG, PROMOTES),
    "Hardshrink": (lambda nn: nn.Hardshrink(), V, PROMOTES),
    "Hardsigmoid": (lambda nn: nn.Hardsigmoid(), V, PROMOTES),
    "Hardswish": (lambda nn: nn.Hardswish(), V, PROMOTES),
    "Hardtanh": (lambda nn: nn.Hardtanh(), V, PROMOTES),
    "InstanceNorm1d": (lambda nn: nn.InstanceNorm1d(2), SEQ, PROMOTES),
    "InstanceNorm2d": (lambda nn: nn.InstanceNorm2d(2), IMG, PROMOTES),
    "InstanceNorm3d": (lambda nn: nn.InstanceNorm3d(2), (1, 2, 2, 3, 4), PROMOTES),
    "LocalResponseNorm": (lambda nn: nn.LocalResponseNorm(2), IMG, PROMOTES),
    "LogSigmoid": (lambda nn: nn.LogSigmoid(), V, PROMOTES),
    "Mish": (lambda nn: nn.Mish(), V, PROMOTES),
    "PReLU": (lambda nn: nn.PReLU(), V, PROMOTES),
    "PairwiseDistance": (lambda nn: _Twice(nn.PairwiseDistance()), V, PROMOTES),
    "RMSNorm": (lambda nn: nn.RMSNorm(4), V, PROMOTES),
    "ReLU6": (lambda nn: nn.ReLU6(), V, PROMOTES),
    "SELU": (lambda nn: nn.SELU(), V, PROMOTES),
    "SiLU": (lambda nn: nn.SiLU(), V, PROMOTES),
    "Softmin": (lambda nn: nn.Softmin(-1), V, PROMOTES),
    "Softplus": (lambda nn: nn.Softplus(), V, PROMOTES),
    "Softshrink": (lambda nn: nn.Softshrink(), V, PROMOTES),
    "Softsign": (lambda nn: nn.Softsign(), V, PROMOTES),
    "Tanhshrink": (lambda nn: nn.Tanhshrink(), V, PROMOTES),
    "Threshold": (lambda nn: nn.Threshold(0.5, -1.0), V, PROMOTES),
    "Transformer": (lambda nn: _Twice(nn.Transformer(4, 2, 1, 1, 8)), (3, 1, 4), PROMOTES),
    "TransformerDecoder": (lambda nn: _Twice(nn.TransformerDecoder(
        nn.TransformerDecoderLayer(4, 2, 8), 1)), (3, 1, 4), PROMOTES),
    "TransformerDecoderLayer": (lambda nn: _Twice(nn.TransformerDecoderLayer(4, 2, 8)),
                                (3, 1, 4), PROMOTES),
    "TransformerEncoder": (lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8),
                                                            1), (3, 1, 4), PROMOTES),
    "TransformerEncoderLayer": (lambda nn: nn.TransformerEncoderLayer(4, 2, 8), (3, 1, 4),
                                PROMOTES),
    # selections and rearrangements keep the dtype (a constant pad of 0.5 included, as in
    # PyTorch: the value is cast to the input's dtype)
    "AdaptiveMaxPool1d": (lambda nn: nn.AdaptiveMaxPool1d(2), SEQ, KEEPS),
    "AdaptiveMaxPool2d": (lambda nn: nn.AdaptiveMaxPool2d(2), IMG, KEEPS),
    "AdaptiveMaxPool3d": (lambda nn: nn.AdaptiveMaxPool3d((1, None, 3)), (1, 2, 2, 3, 4), KEEPS),
    "MaxPool1d": (lambda nn: nn.MaxPool1d(2), SEQ, KEEPS),
    "CircularPad1d": (lambda nn: nn.CircularPad1d(1), SEQ, KEEPS),
    "CircularPad2d": (lambda nn: nn.CircularPad2d(1), IMG, KEEPS),
    "ConstantPad1d": (lambda nn: nn.ConstantPad1d(1, 0.5), SEQ, KEEPS),
    "ConstantPad2d": (lambda nn: nn.ConstantPad2d(1, 0.5), IMG, KEEPS),
    "ReflectionPad1d": (lambda nn: nn.ReflectionPad1d(1), SEQ, KEEPS),
    "ReflectionPad2d": (lambda nn: nn.ReflectionPad2d(1), IMG, KEEPS),
    "ReplicationPad1d": (lambda nn: nn.ReplicationPad1d(1), SEQ, KEEPS),
    "ReplicationPad2d": (lambda nn: nn.ReplicationPad2d(1), IMG, KEEPS),
    "ZeroPad1d": (lambda nn: nn.ZeroPad1d(1), SEQ, KEEPS),
    "ZeroPad2d": (lambda nn: nn.ZeroPad2d(1), IMG, KEEPS),
    "Fold": (lambda nn: nn.Fold((3, 3), 2), (1, 8, 4), KEEPS),
    "Unfold": (lambda nn: nn.Unfold(2), IMG, KEEPS),
    "PixelShuffle": (lambda nn: nn.PixelShuffle(2), (1, 4, 2, 2), KEEPS),
    "PixelUnshuffle": (lambda nn: nn.PixelUnshuffle(2), (1, 1, 4, 4), KEEPS),
    "Upsample": (lambda nn: nn.Upsample(scale_factor=2), IMG, KEEPS),
    "ReLU": (lambda nn: nn.ReLU(), (4,), KEEPS),
    "MaxPool2d": (lambda nn: nn.MaxPool2d(2), (1, 1, 4, 4), KEEPS),
    "Flatten": (lambda nn: nn.Flatten(), (2, 3, 2), KEEPS),
    "Unflatten": (lambda nn: nn.Unflatten(1, (2, 2)), (3, 4), KEEPS),
    "Identity": (lambda nn: nn.Identity(), (4,), KEEPS),
    # (the 3-D layers, the lazy layers and the rest of PyTorch's nn)
    "AvgPool3d": (lambda nn: nn.AvgPool3d(2), (1, 2, 2, 4, 4), PROMOTES),
    "BatchNorm3d": (lambda nn: nn.BatchNorm3d(2), (2, 2, 2, 2, 2), PROMOTES),
    "SyncBatchNorm": (lambda nn: nn.SyncBatchNorm(2), (2, 2, 3), PROMOTES),
    "CrossMapLRN2d": (lambda nn: nn.CrossMapLRN2d(3), IMG, PROMOTES),
    "ConvTranspose3d": (lambda nn: nn.ConvTranspose3d(2, 3, 2), (1, 2, 2, 2, 2), PROMOTES),
    "Dropout3d": (lambda nn: nn.Dropout3d(0.3), (1, 2, 2, 2, 2), PROMOTES),
    "FeatureAlphaDropout": (lambda nn: nn.FeatureAlphaDropout(0.3), IMG, PROMOTES),
    "LazyLinear": (lambda nn: nn.LazyLinear(2), (4, 3), PROMOTES),
    "LazyConv1d": (lambda nn: nn.LazyConv1d(3, 3), SEQ, PROMOTES),
    "LazyConv2d": (lambda nn: nn.LazyConv2d(3, 3), IMG, PROMOTES),
    "LazyConv3d": (lambda nn: nn.LazyConv3d(2, 2), (1, 1, 3, 4, 4), PROMOTES),
    "LazyConvTranspose1d": (lambda nn: nn.LazyConvTranspose1d(3, 3), SEQ, PROMOTES),
    "LazyConvTranspose2d": (lambda nn: nn.LazyConvTranspose2d(3, 3), IMG, PROMOTES),
    "LazyConvTranspose3d": (lambda nn: nn.LazyConvTranspose3d(3, 2), (1, 2, 2, 2, 2),
                            PROMOTES),
    "LazyBatchNorm1d": (lambda nn: nn.LazyBatchNorm1d(), (4, 3), PROMOTES),
    "LazyBatchNorm2d": (lambda nn: nn.LazyBatchNorm2d(), (2, 1, 3, 3), PROMOTES),
    "LazyBatchNorm3d": (lambda nn: nn.LazyBatchNorm3d(), (2, 2, 2, 2, 2), PROMOTES),
    "LazyInstanceNorm1d": (lambda nn: nn.LazyInstanceNorm1d(), SEQ, PROMOTES),
    "LazyInstanceNorm2d": (lambda nn: nn.LazyInstanceNorm2d(), IMG, PROMOTES),
    "LazyInstanceNorm3d": (lambda nn: nn.LazyInstanceNorm3d(), (1, 2, 2, 3, 4), PROMOTES),
    "LPPool1d": (lambda nn: nn.LPPool1d(2, 2), SEQ, PROMOTES),
    "LPPool2d": (lambda nn: nn.LPPool2d(2, 2), IMG, PROMOTES),
    "LPPool3d": (lambda nn: nn.LPPool3d(2, 2), (1, 2, 2, 4, 4), PROMOTES),
    "RReLU": (lambda nn: nn.RReLU(), V, PROMOTES),
    "Softmax2d": (lambda nn: nn.Softmax2d(), IMG, PROMOTES),
    "UpsamplingBilinear2d": (lambda nn: nn.UpsamplingBilinear2d(scale_factor=2), IMG, PROMOTES),
    "MaxPool3d": (lambda nn: nn.MaxPool3d(2), (1, 2, 2, 4, 4), KEEPS),
    # (fractional pooling draws its windows in floating point: integers are pooled as floats)
    "FractionalMaxPool2d": (lambda nn: nn.FractionalMaxPool2d(2, 2), IMG, PROMOTES),
    "FractionalMaxPool3d": (lambda nn: nn.FractionalMaxPool3d(2, 1), (1, 2, 3, 3, 3), PROMOTES),
    "ChannelShuffle": (lambda nn: nn.ChannelShuffle(2), IMG, KEEPS),
    "UpsamplingNearest2d": (lambda nn: nn.UpsamplingNearest2d(scale_factor=2), IMG, KEEPS),
    "CircularPad3d": (lambda nn: nn.CircularPad3d(1), (1, 2, 2, 3, 3), KEEPS),
    "ConstantPad3d": (lambda nn: nn.ConstantPad3d(1, 0.5), (1, 2, 2, 3, 3), KEEPS),
    "ReflectionPad3d": (lambda nn: nn.ReflectionPad3d(1), (1, 2, 2, 3, 3), KEEPS),
    "ReplicationPad3d": (lambda nn: nn.ReplicationPad3d(1), (1, 2, 2, 3, 3), KEEPS),
    "ZeroPad3d": (lambda nn: nn.ZeroPad3d(1), (1, 2, 2, 3, 3), KEEPS),
}
# Layers whose input is not data of a dtype to promote (indices, targets, containers).
NOT_DATA = {"Embedding", "EmbeddingBag", "Module", "ModuleDict", "ModuleList", "ParameterList",
            "ParameterDict", "Sequential", "DataParallel", "OptimizedModule",
            # (losses: their inputs are a model's output and targets)
            "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss",
            "CTCLoss", "CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss",
            "HuberLoss", "KLDivLoss", "MarginRankingLoss", "MultiLabelSoftMarginLoss",
            "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
            "MultiMarginLoss", "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss", "NLLLoss2d",
            # (values and the indices a max pool returned)
            "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
            # (the recurrent bases: the subclasses' rows run them)
            "RNNBase", "RNNCellBase",
            "AdaptiveLogSoftmaxWithLoss"}  # (a loss: a model's output and its targets)


class _Twice:
    """A layer of two inputs fed the same one twice (Bilinear, a decoder's memory)."""

    def __init__(self, layer) -> None:
        self.layer = layer

    def __call__(self, x):
        return self.layer(x, x)


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
