r"""``difflab.special``: PyTorch's ``torch.special``, the special functions.

Most of ``torch.special`` is difflab's registry primitives under other names
(``gammaln`` is ``lgamma``, ``psi`` is ``digamma``, ``expit`` is ``sigmoid``):
those names are the table :data:`FACES`, and ``difflab.special.<name>`` *is*
the function ``difflab.<face>`` (one function, two names; no wrapper), with
its docstring, its derivative rule (:mod:`difflab.ops.special`) and its routing.
The rest are short composites of those faces
(:mod:`difflab.special.composites`: ``ndtr``, ``log_ndtr``, ``xlogy``,
``multigammaln``, ...).  So all four differentiators and the jit know each
one (``round`` has no symbolic derivative; ``vmap`` refuses ``multigammaln``,
whose domain check reads the values).

What flows in flows through, as everywhere in difflab: a Tensor gives a
Tensor (recorded on the tape), a NumPy array or a number a NumPy result, a
dual number a dual number, a sympy expression an expression.  (PyTorch's
functions take tensors only; there the results agree.)

>>> import difflab as dl
>>> import numpy as np
>>> dl.special.gammaln(dl.tensor([1.0, 5.0])).tolist()    # log Γ(x): log 4! = 3.178...
[0.0, 3.178...]
>>> dl.special.gammaln is dl.lgamma
True
>>> dl.special.ndtr(np.array([0.0]))                     # an array gives an array
array([0.5])
"""

from difflab import functions as _functions
from difflab.special.composites import (
    entr,
    exp2,
    log_ndtr,
    logit,
    multigammaln,
    ndtr,
    ndtri,
    round,  # noqa: A004
    sinc,
    spherical_bessel_j0,
    xlog1py,
    xlogy,
)

#: ``torch.special``'s name -> the difflab function (a registry primitive's face) it is.
#: Each is checked against PyTorch's signature: ``polygamma(n, input)``, ``zeta(input,
#: other)``, ``softmax(input, dim, *, dtype=None)``, ``logsumexp(input, dim,
#: keepdim=False)``, the others ``(input, *, out=None)``; the faces take the same.
FACES: dict[str, str] = {
    "bessel_j0": "bessel_j0", "bessel_j1": "bessel_j1", "digamma": "digamma", "erf": "erf",
    "erfc": "erfc", "erfcx": "erfcx", "erfinv": "erfinv", "expit": "sigmoid",
    "expm1": "expm1", "gammainc": "gammainc", "gammaincc": "gammaincc", "gammaln": "lgamma",
    "i0": "i0", "i0e": "i0e", "i1": "i1", "i1e": "i1e", "log1p": "log1p",
    "log_softmax": "log_softmax", "logsumexp": "logsumexp", "polygamma": "polygamma",
    "psi": "digamma", "scaled_modified_bessel_k0": "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1": "scaled_modified_bessel_k1", "softmax": "softmax",
    "zeta": "zeta",
}
globals().update({name: getattr(_functions, face) for name, face in FACES.items()})

__all__ = sorted([
    *FACES, "entr", "exp2", "log_ndtr", "logit", "multigammaln", "ndtr", "ndtri", "round",
    "sinc", "spherical_bessel_j0", "xlog1py", "xlogy",
])
