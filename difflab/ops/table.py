"""Every tape primitive by name: what ``Tensor`` methods and ``difflab`` functions call."""

from difflab.ops.structural import (  # noqa: F401  (re-exported)
    BINARY_OPS,
    UNARY_OPS,
    Cast,
    Clamp,
    Clone,
    Concatenate,
    CumSum,
    Expand,
    Flip,
    Index,
    IndexPut,
    MatMul,
    MaxReduce,
    Permute,
    Prod,
    Reshape,
    ScatterAdd,
    Sum,
    ToDevice,
    Where,
)

UNARY = UNARY_OPS
BINARY = BINARY_OPS
ADD = BINARY_OPS["add"]
SUB = BINARY_OPS["sub"]
MUL = BINARY_OPS["mul"]
DIV = BINARY_OPS["div"]
POW = BINARY_OPS["pow"]
