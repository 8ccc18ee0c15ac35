r"""``difflab.special``: PyTorch's ``torch.special``, the special functions.

Every function here is a registry primitive (``lgamma``, ``digamma``,
``polygamma``, ``erfc``, ``erfinv``, ``erfcx``, ``i0``, ``i1``, ``i0e``,
``i1e``, ``bessel_j0``, ``bessel_j1``, ``scaled_modified_bessel_k0``/``k1``,
``zeta``, ``gammainc``, ``gammaincc``: :mod:`difflab.ops.special`, faced in
:mod:`difflab.special.primitives`) or a short composite of them
(:mod:`difflab.special.composites`), so all four differentiators, the jit
and ``vmap`` know each one, and its derivative is the chain rule over those
primitives.

>>> import difflab as dl
>>> dl.special.gammaln(dl.tensor([1.0, 5.0])).tolist()    # log Γ(x): log 4! = 3.178...
[0.0, 3.178...]
"""

from difflab.special.composites import (
    entr,
    exp2,
    expit,
    expm1,
    log1p,
    log_ndtr,
    log_softmax,
    logit,
    logsumexp,
    ndtr,
    ndtri,
    round,  # noqa: A004
    sinc,
    softmax,
    spherical_bessel_j0,
    xlog1py,
    xlogy,
)
from difflab.special.primitives import (
    bessel_j0,
    bessel_j1,
    digamma,
    erf,
    erfc,
    erfcx,
    erfinv,
    gammainc,
    gammaincc,
    gammaln,
    i0,
    i0e,
    i1,
    i1e,
    multigammaln,
    polygamma,
    psi,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    zeta,
)

__all__ = [
    "bessel_j0", "bessel_j1", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
    "expit", "expm1", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc",
    "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta", "gammainc", "gammaincc",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
]
