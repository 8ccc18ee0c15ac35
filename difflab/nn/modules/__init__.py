"""The layer classes of :mod:`difflab.nn`."""

from difflab.nn.modules.container import ModuleDict, ModuleList, ParameterList, Sequential
from difflab.nn.modules.layers import (
    GELU,
    AdaptiveAvgPool2d,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSoftmax,
    MaxPool2d,
    ReLU,
    Sigmoid,
    Softmax,
    Tanh,
    Unflatten,
)
from difflab.nn.modules.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
)
from difflab.nn.modules.module import Module
from difflab.nn.modules.rnn import LSTM, RNN, LSTMCell, RNNCell

# isort: split
# compat-ops (issue 14): attention and the GRU
from difflab.nn.modules.attention import MultiheadAttention
from difflab.nn.modules.rnn import GRU, GRUCell

# isort: split
# breadth (issue 27): PyTorch's module files (torch.nn.modules.linear, ...), the 1-D layers,
# Hardtanh/ReLU6, the robust losses and the Transformer
from difflab.nn.modules import (
    activation,
    batchnorm,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,
    linear,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    sparse,
    transformer,
    upsampling,
)
from difflab.nn.modules.activation import (
    CELU,
    ELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LogSigmoid,
    Mish,
    PReLU,
    ReLU6,
    SiLU,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from difflab.nn.modules.container import ParameterDict
from difflab.nn.modules.conv import Conv1d, Conv3d, ConvTranspose1d, ConvTranspose2d
from difflab.nn.modules.distance import CosineSimilarity, PairwiseDistance
from difflab.nn.modules.dropout import AlphaDropout, Dropout1d, Dropout2d
from difflab.nn.modules.fold import Fold, Unfold
from difflab.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from difflab.nn.modules.linear import Bilinear
from difflab.nn.modules.loss import (
    CosineEmbeddingLoss,
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    MarginRankingLoss,
    MultiLabelSoftMarginLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from difflab.nn.modules.normalization import CrossMapLRN2d, GroupNorm, LocalResponseNorm, RMSNorm
from difflab.nn.modules.padding import (
    CircularPad1d,
    CircularPad2d,
    ConstantPad1d,
    ConstantPad2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    ZeroPad1d,
    ZeroPad2d,
)
from difflab.nn.modules.pixelshuffle import PixelShuffle, PixelUnshuffle
from difflab.nn.modules.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    MaxPool1d,
)
from difflab.nn.modules.sparse import EmbeddingBag
from difflab.nn.modules.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from difflab.nn.modules.upsampling import Upsample

# isort: split
# nn breadth (3-D layers, lazy modules, more losses): PyTorch's remaining torch.nn names
from difflab.nn.modules.activation import RReLU, Softmax2d
from difflab.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss
from difflab.nn.modules.batchnorm import BatchNorm3d, SyncBatchNorm
from difflab.nn.modules.conv import ConvTranspose3d
from difflab.nn.modules.dropout import Dropout3d, FeatureAlphaDropout
from difflab.nn.modules.lazy import (
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    LazyLinear,
)
from difflab.nn.modules.loss import (
    MultiLabelMarginLoss,
    MultiMarginLoss,
    NLLLoss2d,
    TripletMarginWithDistanceLoss,
)
from difflab.nn.modules.padding import (
    CircularPad3d,
    ConstantPad3d,
    ReflectionPad3d,
    ReplicationPad3d,
    ZeroPad3d,
)
from difflab.nn.modules.pixelshuffle import ChannelShuffle
from difflab.nn.modules.pooling import (
    AvgPool3d,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from difflab.nn.modules.rnn import RNNBase, RNNCellBase
from difflab.nn.modules.upsampling import UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = [
    "GELU", "LSTM", "RNN", "AdaptiveAvgPool2d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss",
    "BatchNorm1d", "BatchNorm2d", "Conv2d", "CrossEntropyLoss", "Dropout", "Embedding",
    "Flatten", "Identity", "L1Loss", "LSTMCell", "LayerNorm", "LeakyReLU", "Linear",
    "LogSoftmax", "MSELoss", "MaxPool2d", "Module", "ModuleDict", "ModuleList", "NLLLoss",
    "ParameterList", "RNNCell", "ReLU", "Sequential", "Sigmoid", "Softmax", "Tanh", "Unflatten",
]
__all__ += ["GRU", "GRUCell", "MultiheadAttention"]  # compat-ops (issue 14)

__all__ += ["CELU", "ELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "LogSigmoid",
            "Mish", "PReLU", "SiLU", "Softmin", "Softplus", "Softshrink", "Softsign",
            "Tanhshrink", "Threshold"]
__all__ += ["AvgPool1d", "Conv1d", "Hardtanh", "HuberLoss", "MaxPool1d", "ReLU6",
            "SmoothL1Loss", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
            "TransformerEncoder", "TransformerEncoderLayer"]
__all__ += ["AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
            "AdaptiveMaxPool3d", "AlphaDropout",
            "Bilinear", "CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d",
            "CTCLoss", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "CosineEmbeddingLoss",
            "CosineSimilarity",
            "Dropout1d", "Dropout2d", "EmbeddingBag", "Fold", "GaussianNLLLoss", "GroupNorm",
            "HingeEmbeddingLoss", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "KLDivLoss",
            "LocalResponseNorm", "MarginRankingLoss", "MultiLabelSoftMarginLoss",
            "PairwiseDistance", "ParameterDict", "PixelShuffle", "PixelUnshuffle",
            "PoissonNLLLoss", "RMSNorm", "ReflectionPad1d", "ReflectionPad2d",
            "ReplicationPad1d", "ReplicationPad2d", "SoftMarginLoss", "TripletMarginLoss",
            "Unfold", "Upsample", "ZeroPad1d", "ZeroPad2d"]

__all__ += ["AvgPool3d", "BatchNorm3d", "ConvTranspose3d", "Dropout3d", "FeatureAlphaDropout",
            "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d",
            "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
            "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear",
            "MaxPool3d", "MultiLabelMarginLoss", "MultiMarginLoss",
            "TripletMarginWithDistanceLoss", "CircularPad3d", "ConstantPad3d", "ReflectionPad3d",
            "ReplicationPad3d", "ZeroPad3d", "ChannelShuffle", "Softmax2d",
            "UpsamplingBilinear2d", "UpsamplingNearest2d", "RReLU", "LPPool1d", "LPPool2d",
            "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "NLLLoss2d", "RNNBase",
            "RNNCellBase", "AdaptiveLogSoftmaxWithLoss", "FractionalMaxPool2d",
            "FractionalMaxPool3d"]  # nn breadth
__all__ += ["CrossMapLRN2d", "SyncBatchNorm"]
