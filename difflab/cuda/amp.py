"""``torch.cuda.amp``: PyTorch's older spelling of :mod:`difflab.amp` for CUDA.

Both names still work in PyTorch with a FutureWarning that points to the new
spelling; difflab warns the same way.
"""

from __future__ import annotations

import warnings
from typing import Any

from difflab import amp as _amp

__all__ = ["GradScaler", "autocast"]


class autocast(_amp.autocast):  # noqa: N801
    """``difflab.amp.autocast('cuda', ...)`` under its old name (warns, as PyTorch does).

    Examples
    --------
    >>> import warnings, difflab as dl
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with dl.cuda.amp.autocast():
    ...         y = dl.ones(2) * 2
    >>> y
    tensor([2., 2.])
    """

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True
                 ) -> None:
        warnings.warn("`difflab.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`difflab.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``difflab.amp.GradScaler('cuda', ...)`` under its old name (warns, as PyTorch does).

    Without CUDA it disables itself (a second warning) and passes everything through.

    Examples
    --------
    >>> import warnings, difflab as dl
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     scaler = dl.cuda.amp.GradScaler()
    >>> scaler.is_enabled() == dl.cuda.is_available()
    True
    """

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`difflab.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`difflab.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
