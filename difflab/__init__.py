"""difflab: four ways to differentiate a function, side by side.

``import difflab as dl`` gives a PyTorch-shaped tensor library on NumPy or
CuPy (``dl.tensor``, ``dl.nn``, ``dl.optim``, ...) whose math functions
(``dl.sin``, ``dl.exp``, ``@``, ...) also accept floats, arrays, dual numbers
and sympy expressions, so one function can be differentiated in four ways.
"""

import math as _math
import sys as _sys

from difflab import autograd, backend, cuda, data, dtypes, nn, optim, profiler, random, utils
from difflab.autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from difflab.backend import Device, device
from difflab.creation import (
    arange,
    as_tensor,
    asarray,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    range,
    tensor,
    zeros,
    zeros_like,
)
from difflab.diff import (  # the four differentiators behind one interface
    Dual,
    derivative,
    differentiators,
    grad,
    hessian,
    jacobian,
    jvp,
    vjp,
)
from difflab.dtypes import (
    bool_,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int32,
    int64,
    long,
    set_default_dtype,
    uint8,
)
from difflab.functions import ELEMENTWISE as _ELEMENTWISE
from difflab.functions import (
    allclose,
    argmax,
    argmin,
    cat,
    chunk,
    clamp,
    clip,
    clone,
    concatenate,
    cumsum,
    dot,
    flatten,
    flip,
    isnan,
    log_softmax,
    logsumexp,
    matmul,
    max,
    mean,
    min,
    mm,
    mv,
    norm,
    numel,
    permute,
    prod,
    register_primitive,
    register_type,
    reshape,
    sign,
    softmax,
    split,
    square,
    squeeze,
    stack,
    std,
    sum,
    t,
    transpose,
    unsqueeze,
    var,
)
from difflab.numpy_protocol import UnsupportedNumPyFunction
from difflab.random import Generator, initial_seed, manual_seed
from difflab.serialization import load, save
from difflab.tensor import Tensor, set_printoptions

# isort: split
# dl.compile (issue 28): torch.compile's face, guarded graphs from the tracer
from difflab import _dynamo, compiler, jit
from difflab.jit import compile  # noqa: A004

# isort: split
# compat-ops (issue 14): indexing along a dimension, sorting, products
from difflab.functions import (
    argsort,
    baddbmm,
    bmm,
    cumprod,
    einsum,
    gather,
    ger,
    index_select,
    masked_fill,
    outer,
    roll,
    scatter,
    scatter_add,
    sort,
    topk,
)

# isort: split
# matrix calculus (issue 27): torch.linalg, and PyTorch's older names for it
from difflab import linalg
from difflab.linalg.faces import (
    cholesky,
    det,
    inverse,
    logdet,
    lu,
    matrix_exp,
    matrix_power,
    pinverse,
    qr,
    slogdet,
    svd,
)

# dl.sin, dl.exp, dl.maximum, ...: one function per elementwise primitive of the registry.
globals().update(_ELEMENTWISE)

bool = bool_  # noqa: A001  (difflab.bool, as torch.bool)
float = float32  # noqa: A001
int = int32  # noqa: A001
__version__ = "0.1.0"


def is_tensor(obj: object) -> bool:
    """Whether ``obj`` is a difflab tensor (a :class:`difflab.Tensor` or a subclass).

    NumPy arrays, Python numbers and lists are not tensors, though difflab's
    functions accept them; ``nn.Parameter`` is one.

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    bool
        ``isinstance(obj, difflab.Tensor)``.

    See Also
    --------
    difflab.as_tensor : make a tensor of the others.

    Examples
    --------
    >>> import difflab as dl
    >>> import numpy as np
    >>> dl.is_tensor(dl.tensor([1.0])), dl.is_tensor(np.ones(2)), dl.is_tensor(1.0)
    (True, False, False)
    >>> dl.is_tensor(dl.nn.Parameter(dl.zeros(2)))
    True
    """
    return isinstance(obj, Tensor)


def is_storage(obj: object) -> bool:
    """Whether ``obj`` is a storage object: always False, as difflab has none.

    A difflab tensor's values live in its NumPy or CuPy array (``t.array``), not
    in a separate storage as PyTorch's do; this is PyTorch's
    ``torch.is_storage``, for code that asks.

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    bool
        False.

    See Also
    --------
    difflab.is_tensor : whether ``obj`` is a tensor.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.is_storage(dl.tensor([1.0])), dl.is_storage(dl.tensor([1.0]).array)
    (False, False)
    """
    return False

# ========================================================================= compat-core
# PyTorch names for teaching programs (issue 14, compat-core block).
# ===================================================================== end compat-core
# breadth (issue 27): torch.amp, torch.backends and torch.autocast at PyTorch's paths;
# torch.func (issue 28): vmap, grad, jacrev, jacfwd, hessian, vjp, jvp, functional_call
from difflab import amp, backends, distributions, export, fft, func, onnx, special, testing  # noqa: E402
from difflab.amp import autocast  # noqa: E402
from difflab.autograd import inference_mode  # noqa: E402
from difflab.autograd.grad_mode import is_inference_mode_enabled  # noqa: E402
from difflab.backends.settings import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    get_float32_matmul_precision,
    get_num_interop_threads,
    get_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    is_warn_always_enabled,
    set_float32_matmul_precision,
    set_flush_denormal,
    set_num_interop_threads,
    set_num_threads,
    set_warn_always,
    use_deterministic_algorithms,
)
from difflab.creation import (  # noqa: E402
    BoolTensor,
    ByteTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    bernoulli,
    get_default_device,
    multinomial,
    poisson,
    set_default_device,
)
from difflab.cuda import amp as _cuda_amp  # noqa: E402, F401  (dl.cuda.amp)
from difflab.dtype_info import finfo, iinfo  # noqa: E402
from difflab.dtypes import (  # noqa: E402
    bfloat16,
    can_cast,
    channels_last,
    channels_last_3d,
    contiguous_format,
    dtype,
    int8,
    int16,
    is_complex,
    is_floating_point,
    layout,
    memory_format,
    preserve_format,
    promote_types,
    result_type,
    short,
    strided,
    uint16,
    uint32,
    uint64,
)

# torch.autograd.forward_ad: dual tensors on forward mode's dual numbers.  It reads
# difflab.diff, a layer above the tape, so it lives in difflab.func and is hung here on
# autograd under PyTorch's path (`import difflab.autograd.forward_ad as fwAD` finds it).
from difflab.func import forward_ad as _forward_ad  # noqa: E402
from difflab.func import vmap  # noqa: E402  (torch.vmap is torch.func.vmap)
from difflab.functions import (  # noqa: E402
    all,
    amax,
    amin,
    any,
    ceil,
    count_nonzero,
    eq,
    equal,
    floor,
    floor_divide,
    ge,
    greater,
    greater_equal,
    gt,
    histc,
    histogram,
    is_nonzero,
    isclose,
    isfinite,
    isinf,
    le,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    ne,
    not_equal,
    reciprocal,
    round,
    rsqrt,
    swapaxes,
    tril,
    triu,
    true_divide,
    unbind,
)
from difflab.functions_aliases import (  # noqa: E402
    clamp_max,
    clamp_min,
    clip_,
    detach,
    fill,
    float_power,
    nan_to_num_,
    rsub,
    sigmoid_,
    tanh_,
    trapz,
    typename,
    zero_,
)
from difflab.functions_counting import (  # noqa: E402
    angle,
    bincount,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    complex,
    cross,
    gcd,
    lcm,
    mode,
    polar,
    unique,
    unique_consecutive,
)

# joining, splitting, picking and products, composed from the primitives (issue 27)
from difflab.functions_joining import (  # noqa: E402
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    column_stack,
    concat,
    dsplit,
    dstack,
    fliplr,
    flipud,
    hsplit,
    hstack,
    moveaxis,
    movedim,
    ravel,
    rot90,
    row_stack,
    swapdims,
    tensor_split,
    tile,
    unflatten,
    vsplit,
    vstack,
)
from difflab.functions_math import (  # noqa: E402
    addcdiv,
    addcmul,
    bitwise_not,
    deg2rad,
    exp2,
    fmax,
    fmin,
    frac,
    frexp,
    heaviside,
    hypot,
    isin,
    isneginf,
    isposinf,
    isreal,
    ldexp,
    lerp,
    logaddexp,
    logaddexp2,
    logit,
    masked_scatter,
    nan_to_num,
    positive,
    rad2deg,
    sgn,
    signbit,
    sinc,
    trunc,
    xlogy,
)
from difflab.functions_picking import (  # noqa: E402
    addbmm,
    addmm,
    addmv,
    addr,
    as_strided,
    cartesian_prod,
    chain_matmul,
    diag,
    diag_embed,
    diagflat,
    diagonal,
    inner,
    kron,
    meshgrid,
    narrow,
    select,
    take,
    take_along_dim,
    tensordot,
    trace,
    tril_indices,
    triu_indices,
    vander,
    vdot,
)
from difflab.functions_scattering import (  # noqa: E402
    diagonal_scatter,
    index_copy,
    index_reduce,
    scatter_reduce,
    select_scatter,
    slice_scatter,
)
from difflab.functions_selecting import (  # noqa: E402
    argwhere,
    index_add,
    index_fill,
    index_put,
    masked_select,
    nonzero,
    where,
)
from difflab.functions_sequences import (  # noqa: E402
    combinations,
    logcumsumexp,
    nanquantile,
    quantile,
    renorm,
    repeat_interleave,
    unravel_index,
)
from difflab.functions_statistics import (  # noqa: E402
    aminmax,
    bucketize,
    cdist,
    corrcoef,
    cov,
    cummax,
    cummin,
    cumulative_trapezoid,
    dist,
    kthvalue,
    median,
    msort,
    nanmean,
    nanmedian,
    nansum,
    searchsorted,
    std_mean,
    trapezoid,
    var_mean,
)
from difflab.random import (  # noqa: E402
    default_generator,
    get_rng_state,
    seed,
    set_rng_state,
)
from difflab.tensor_arguments import Size  # noqa: E402

autograd.forward_ad = _forward_ad
_sys.modules["difflab.autograd.forward_ad"] = _forward_ad

# PyTorch's constants (plain floats, as torch.pi is)
pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan

# the neural-network functions PyTorch also names torch.<name>: nn.functional's own
# function where the signature is the same, ATen's argument order where it is not
from difflab.creation import (  # noqa: E402
    empty_strided,
    from_dlpack,
    frombuffer,
    scalar_tensor,
    to_dlpack,
)
from difflab.nn.functional import (  # noqa: E402
    adaptive_avg_pool1d,
    avg_pool1d,
    bilinear,
    celu,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    cosine_similarity,
    group_norm,
    hardshrink,
    layer_norm,
    max_pool1d,
    max_pool2d,
    pairwise_distance,
    pdist,
    pixel_shuffle,
    pixel_unshuffle,
    prelu,
    relu_,
    selu,
    threshold,
)
from difflab.nn.functional_torch import (  # noqa: E402
    batch_norm,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    ctc_loss,
    dropout,
    embedding,
    hinge_embedding_loss,
    instance_norm,
    kl_div,
    margin_ranking_loss,
    poisson_nll_loss,
    triplet_margin_loss,
)
from difflab.windows import (  # noqa: E402
    bartlett_window,
    blackman_window,
    hamming_window,
    hann_window,
    kaiser_window,
)
