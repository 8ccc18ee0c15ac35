"""Stateless neural-network functions: ``difflab.nn.functional`` (``F`` by habit).

Every layer of :mod:`difflab.nn` calls one of these; they check their
inputs (so that a wrong shape or dtype is reported in the words of the
layer, not from deep inside NumPy) and then run one fused primitive of
:mod:`difflab.ops.nn_ops`, or a few ordinary tensor operations.

Dtypes follow the rule of the tensor operations a layer is made of, so a
layer never changes precision behind the user's back:

* an input meets the layer's parameters as in ``x @ W.T + b``: they are
  promoted together (:func:`difflab.promote_types`), so a float32 layer fed
  int64 data computes in float32, and fed float64 data in float64;
* a function that needs fractions (softmax, GELU, average pooling,
  normalisation, dropout's scaling) turns an integer input into the default
  floating dtype, as ``dl.sigmoid`` does;
* a function that only selects (ReLU, max pooling, flatten) keeps the
  input's dtype.

The functions live in nine modules, gathered here: ``functional_core`` (the
checks they share and the common layers; the checks of their arguments are in
``functional_arguments``, and where a max pool's maxima are in ``functional_windows``,
both below it) and the eight that build on it, ``functional_activations``,
``functional_embedding`` (the lookup), ``functional_layers``, ``functional_conv``,
``functional_pooling``, ``functional_sampling`` (resizing, the spatial transformer),
``functional_vision`` and ``functional_losses``.  They import from ``functional_core``
(and each other, never in a circle), never from this module, so there is no import
cycle (docs/architecture.md, "Import layers").
"""

from difflab.nn.functional_activations import *  # noqa: F403
from difflab.nn.functional_conv import *  # noqa: F403
from difflab.nn.functional_core import *  # noqa: F403
from difflab.nn.functional_core import (  # noqa: F401  (the layers read them)
    _legacy_reduction,
    _normalized_shape,
    _probability,
    _single,
    _window,
)
from difflab.nn.functional_embedding import *  # noqa: F403
from difflab.nn.functional_layers import *  # noqa: F403
from difflab.nn.functional_losses import *  # noqa: F403
from difflab.nn.functional_pooling import *  # noqa: F403
from difflab.nn.functional_sampling import *  # noqa: F403
from difflab.nn.functional_vision import *  # noqa: F403
