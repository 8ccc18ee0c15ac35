r"""``difflab.linalg``: PyTorch's ``torch.linalg``, differentiable in every method.

Solves, inverses, determinants, decompositions (Cholesky, QR, symmetric
eigenproblems, SVD), the pseudo-inverse, the matrix exponential, norms and
products, batched over leading dimensions on NumPy or CuPy.  The primitives
(``solve``, ``inv``, ``det``, ``slogdet``, ``cholesky``, ``qr``, ``eigh``,
``eigvalsh``, ``svd``, ``svdvals``, ``pinv``, ``matrix_exp``) carry their forward
and reverse rules, the standard matrix-derivative results cited in
:mod:`difflab.ops.linalg`; everything else is composed of them.  So each works
on tensors (the tape, ``create_graph`` for second order), dual numbers
(forward mode), static graphs (``method="compiled"``), sympy ``Matrix``
expressions on small sizes (the symbolic method: ``solve``, ``inv``, ``det``,
``slogdet``, ``cholesky``, ``pinv``, ``matrix_exp``) and finite differences.

Errors are PyTorch's: a singular matrix in ``solve``/``inv`` or one that is
not positive-definite in ``cholesky`` raises :class:`~difflab.ops.linalg.LinAlgError` (the
``*_ex`` variants report it in ``info`` instead).  Where eigenvalues or
singular values repeat, the eigenvectors' or singular vectors' gradient is
inf or NaN, as in PyTorch; ``eigvalsh`` and ``svdvals`` stay finite.
"""

from difflab.linalg.decompositions import (
    cholesky,
    cholesky_ex,
    det,
    eigh,
    eigvalsh,
    qr,
    slogdet,
    svd,
    svdvals,
)
from difflab.linalg.elimination import (
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
)
from difflab.linalg.norms import (
    cond,
    cross,
    diagonal,
    householder_product,
    matmul,
    matrix_norm,
    matrix_rank,
    multi_dot,
    norm,
    vander,
    vecdot,
    vector_norm,
)
from difflab.linalg.solvers import (
    inv,
    inv_ex,
    lstsq,
    matrix_exp,
    matrix_power,
    pinv,
    solve,
    solve_ex,
    solve_triangular,
    tensorinv,
    tensorsolve,
)
from difflab.ops.linalg import LinAlgError

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh",
    "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex",
    "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp",
    "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet",
    "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve",
    "vander", "vecdot", "vector_norm",
]
