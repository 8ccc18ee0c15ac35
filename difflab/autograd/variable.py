"""``Variable``: PyTorch's old wrapper, kept as a thin alias that warns.

Since PyTorch 0.4 every tensor can require grad and ``Variable(t)`` just
returns ``t``; old tutorials still write it.  difflab accepts it and says so.
"""

from __future__ import annotations

import warnings
from typing import Any


def Variable(data: Any, requires_grad: bool = False, volatile: bool = False) -> Any:  # noqa: N802
    """``data`` as a tensor (``requires_grad`` as asked).  Deprecated: use the tensor itself."""
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
