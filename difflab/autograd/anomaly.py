"""``detect_anomaly``: find the operation whose backward produced NaN."""

from __future__ import annotations

from difflab.autograd.engine import AnomalyMode


class detect_anomaly:  # noqa: N801  (PyTorch's name)
    """Inside this block, every backward step is checked for NaN.

    The first step that produces one raises a RuntimeError naming the
    operation and showing where its forward call was made.  It slows things
    down: use it to debug, not to train.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self.previous = AnomalyMode.enabled
        AnomalyMode.enabled = self.check_nan

    def __exit__(self, *exc: object) -> None:
        AnomalyMode.enabled = self.previous


def set_detect_anomaly(mode: bool) -> None:
    AnomalyMode.enabled = bool(mode)


def is_anomaly_enabled() -> bool:
    return AnomalyMode.enabled
