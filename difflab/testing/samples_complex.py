"""Sample inputs of the complex-number primitives, for :mod:`difflab.testing.samples`.

Each is built from real inputs (``dl.complex``) and read back as real numbers, so every
method's derivative, and finite differences, are of real numbers.
"""

from __future__ import annotations

from typing import Any


def complex_table(dl: Any, F34: tuple) -> dict[str, tuple]:  # noqa: N803
    """name -> (function of the sample arrays, the arrays' (shape, range) specs).

    Parameters
    ----------
    dl : module
        difflab.
    F34 : tuple
        The table's usual (3, 4) input spec.

    Returns
    -------
    dict
        One entry per complex-number primitive.

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab.testing.samples_complex import complex_table
    >>> sorted(complex_table(dl, ((3, 4), (-2, 2))))[:3]
    ['angle', 'conj', 'imag']
    """
    return {
        "real": (lambda x, y: dl.real(dl.complex(x, y) * dl.complex(y, x)) + dl.real(x),
                 [F34, F34]),
        "imag": (lambda x, y: dl.imag(dl.complex(x, y).exp()), [F34, F34]),
        "conj": (lambda x, y: dl.real(dl.conj(dl.complex(x, y)) * dl.complex(y, x * y))
                 + dl.conj(x), [F34, F34]),
        "angle": (lambda x, y: dl.angle(dl.complex(x, y) * dl.complex(y, x)) + dl.angle(x),
                  [F34, F34]),
        "view_as_real": (lambda x, y: dl.view_as_real(dl.complex(x, y) ** 2), [F34, F34]),
        "view_as_complex": (lambda x: dl.view_as_complex(x * x).sin().abs(), [((3, 2), (-2, 2))]),
    }
