"""``Variable``: PyTorch's old wrapper, kept as a thin alias that warns.

Since PyTorch 0.4 every tensor can require grad and ``Variable(t)`` just
returns ``t``; old tutorials still write it.  difflab accepts it and says so.
"""

from __future__ import annotations

import warnings
from typing import Any


def Variable(data: Any, requires_grad: bool = False, volatile: bool = False) -> Any:  # noqa: N802
    """Deprecated: ``data`` as a tensor (``requires_grad`` as asked); use the tensor itself.

    PyTorch before 0.4 wrapped tensors in a ``Variable`` to record operations on them;
    since then every tensor can require grad, and ``Variable(t)`` returns ``t``.  Old
    tutorials still write it: difflab accepts it and warns, saying what to write
    instead.

    Parameters
    ----------
    data : Tensor or array_like
        The values (a tensor is returned as it is, not copied).
    requires_grad : bool, default False
        Set ``requires_grad`` on the result (as ``t.requires_grad_()`` does).
    volatile : bool, default False
        PyTorch's old flag for inference; ignored (use :class:`difflab.no_grad`).

    Returns
    -------
    Tensor
        ``data`` as a tensor.

    Warns
    -----
    DeprecationWarning
        Always, naming the replacement.

    See Also
    --------
    difflab.tensor : make a tensor, with ``requires_grad=True`` if wanted.
    difflab.Tensor.requires_grad_ : switch recording on for an existing tensor.

    Examples
    --------
    >>> import warnings
    >>> import difflab as dl
    >>> from difflab.autograd import Variable
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     v = Variable(dl.tensor([1.0, 2.0]), requires_grad=True)
    >>> v
    tensor([1., 2.], requires_grad=True)
    >>> caught[0].category.__name__
    'DeprecationWarning'
    >>> (v * v).sum().backward()
    >>> v.grad
    tensor([2., 4.])
    """
    from difflab.creation import as_tensor

    warnings.warn(
        "Variable is deprecated: tensors record their operations themselves. Write "
        "t.requires_grad_() (or difflab.tensor(..., requires_grad=True)) instead of "
        "Variable(t, requires_grad=True)",
        DeprecationWarning,
        stacklevel=2,
    )
    t = as_tensor(data)
    if requires_grad:
        t.requires_grad_(True)
    return t
