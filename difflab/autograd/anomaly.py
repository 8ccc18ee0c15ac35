"""``detect_anomaly``: find the operation whose backward produced NaN."""

from __future__ import annotations

from difflab.autograd.engine import AnomalyMode


class detect_anomaly:  # noqa: N801  (PyTorch's name)
    """Inside this block, every backward step is checked for NaN.

    The first step that produces one raises a RuntimeError naming the
    operation and showing where its forward call was made.  It slows things
    down: use it to debug, not to train.

    Parameters
    ----------
    check_nan : bool, default True
        Check each step's results for NaN (False: only keep the forward call sites).

    Raises
    ------
    RuntimeError
        From the first backward step that returns NaN, naming it and the line of its
        forward call.

    Examples
    --------
    >>> import numpy as np
    >>> import difflab as dl
    >>> x = dl.tensor([4.0, 0.0], requires_grad=True)
    >>> try:
    ...     with dl.autograd.detect_anomaly(), np.errstate(all="ignore"):
    ...         (dl.sqrt(x) * 0).sum().backward()      # 0 · ∞ at x = 0
    ... except RuntimeError as error:
    ...     print(str(error).splitlines()[0])
    Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self.previous = AnomalyMode.enabled
        AnomalyMode.enabled = self.check_nan

    def __exit__(self, *exc: object) -> None:
        AnomalyMode.enabled = self.previous


def set_detect_anomaly(mode: bool) -> None:
    """Switch the NaN check of every backward step on or off, until switched again.

    Parameters
    ----------
    mode : bool
        True to check (slower), False not to.

    Returns
    -------
    None

    See Also
    --------
    detect_anomaly : the same for one block.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.autograd.set_detect_anomaly(True)
    >>> dl.autograd.is_anomaly_enabled()
    True
    >>> dl.autograd.set_detect_anomaly(False)
    """
    AnomalyMode.enabled = bool(mode)


def is_anomaly_enabled() -> bool:
    """Whether backward steps are being checked for NaN now.

    Returns
    -------
    bool

    Examples
    --------
    >>> import difflab as dl
    >>> dl.autograd.is_anomaly_enabled()
    False
    >>> with dl.autograd.detect_anomaly():
    ...     print(dl.autograd.is_anomaly_enabled())
    True
    """
    return AnomalyMode.enabled
