"""PyTorch's process-wide switches that programs set first thing: recorded, checked, read back.

``torch.set_float32_matmul_precision("high")``, ``torch.use_deterministic_algorithms(True)``
and ``torch.set_num_threads(1)`` open many training scripts.  In difflab none of them
changes a result: every float32 product is a full float32 one (no TF32 or bfloat16
shortcut), every operation is deterministic, and NumPy's BLAS keeps its own threads.
So each setting is checked (a wrong value is an error, as in PyTorch) and kept, to be
read back by its getter.
"""

from __future__ import annotations

import os

__all__ = ["are_deterministic_algorithms_enabled", "get_float32_matmul_precision",
           "get_num_interop_threads", "get_num_threads",
           "is_deterministic_algorithms_warn_only_enabled", "is_warn_always_enabled",
           "set_float32_matmul_precision", "set_flush_denormal", "set_num_interop_threads",
           "set_num_threads", "set_warn_always", "use_deterministic_algorithms"]

_PRECISIONS = ("highest", "high", "medium")
_settings = {"precision": "highest", "deterministic": False, "warn_only": False,
             "threads": os.cpu_count() or 1}


def set_float32_matmul_precision(precision: str) -> None:
    """Record the float32 matrix-product precision PyTorch may lower (TF32 or bfloat16).

    difflab always multiplies float32 matrices at full float32 precision, which is
    PyTorch's ``"highest"``; ``"high"`` and ``"medium"`` only permit a faster, less
    precise product, so every setting gives difflab's same results.

    Parameters
    ----------
    precision : {'highest', 'high', 'medium'}
        The precision PyTorch would allow.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        For any other value.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.set_float32_matmul_precision("high")
    >>> dl.get_float32_matmul_precision()
    'high'
    >>> dl.set_float32_matmul_precision("highest")
    """
    if precision not in _PRECISIONS:
        raise ValueError(f"set_float32_matmul_precision: precision must be one of "
                         f"{', '.join(map(repr, _PRECISIONS))}, got {precision!r}")
    _settings["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The precision last given to :func:`set_float32_matmul_precision` (``'highest'`` at start).

    Returns
    -------
    str

    Examples
    --------
    >>> import difflab as dl
    >>> dl.get_float32_matmul_precision()
    'highest'
    """
    return _settings["precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record PyTorch's switch for deterministic kernels; difflab's always are.

    Every difflab operation gives the same bits for the same inputs on the CPU (NumPy
    has no atomics-based reductions), so the switch changes nothing here.

    Parameters
    ----------
    mode : bool
        Whether PyTorch should insist on deterministic algorithms.
    warn_only : bool, default False
        Whether PyTorch should warn instead of raising where one has none.

    Returns
    -------
    None

    Raises
    ------
    TypeError
        If ``mode`` or ``warn_only`` is not a bool.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.use_deterministic_algorithms(True)
    >>> dl.are_deterministic_algorithms_enabled()
    True
    >>> dl.use_deterministic_algorithms(False)
    """
    for name, value in (("mode", mode), ("warn_only", warn_only)):
        if not isinstance(value, bool):
            raise TypeError(f"use_deterministic_algorithms: {name} must be True or False, "
                            f"got {type(value).__name__} {value!r}")
    _settings["deterministic"], _settings["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` was last switched on.

    Returns
    -------
    bool

    Examples
    --------
    >>> import difflab as dl
    >>> dl.are_deterministic_algorithms_enabled()
    False
    """
    return _settings["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The ``warn_only`` last given to :func:`use_deterministic_algorithms`.

    Returns
    -------
    bool

    Examples
    --------
    >>> import difflab as dl
    >>> dl.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return _settings["warn_only"]


def set_num_threads(num: int) -> None:
    """Record the number of threads PyTorch would use for its CPU kernels.

    difflab computes with NumPy, whose BLAS library chooses its own threads (set them
    with the environment variable ``OMP_NUM_THREADS`` before Python starts); the
    number is kept for :func:`get_num_threads` and changes no result.

    Parameters
    ----------
    num : int
        At least 1.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        If ``num`` is not a positive int.

    Examples
    --------
    >>> import difflab as dl
    >>> before = dl.get_num_threads()
    >>> dl.set_num_threads(2)
    >>> dl.get_num_threads()
    2
    >>> dl.set_num_threads(before)
    """
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise ValueError(f"set_num_threads: expected a positive int, got {num!r}")
    _settings["threads"] = num


def get_num_threads() -> int:
    """The number last given to :func:`set_num_threads` (at start: the CPU count).

    PyTorch starts at the number of physical cores; difflab at ``os.cpu_count()``.

    Returns
    -------
    int

    Examples
    --------
    >>> import difflab as dl
    >>> dl.get_num_threads() >= 1
    True
    """
    return _settings["threads"]


def set_num_interop_threads(num: int) -> None:
    """Record the number of threads PyTorch would run independent operations on.

    difflab runs one operation after another, so the number changes nothing; it is
    kept for :func:`get_num_interop_threads` (PyTorch allows setting it once, before
    any parallel work; difflab lets it be set again).

    Parameters
    ----------
    num : int
        A positive number of threads.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        For a number below 1 or not an int.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.set_num_interop_threads(2)
    >>> dl.get_num_interop_threads()
    2
    """
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise ValueError(f"set_num_interop_threads: expected a positive int, got {num!r}")
    _settings["interop_threads"] = num


def get_num_interop_threads() -> int:
    """The number last given to :func:`set_num_interop_threads` (at start: the CPU count).

    Returns
    -------
    int

    Examples
    --------
    >>> import difflab as dl
    >>> dl.get_num_interop_threads() >= 1
    True
    """
    return _settings.get("interop_threads", _settings["threads"])


def set_flush_denormal(mode: bool) -> bool:
    """Ask for subnormal floats to be flushed to zero: not supported, so always False.

    PyTorch sets the CPU's flush-to-zero flags where the processor has them and
    answers whether it could.  NumPy gives no such switch, so difflab keeps IEEE
    subnormals and answers False, as PyTorch does on a CPU without the flags.

    Parameters
    ----------
    mode : bool
        Whether to flush (ignored).

    Returns
    -------
    bool
        False: subnormals are kept.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.set_flush_denormal(True)
    False
    """
    return False


def set_warn_always(b: bool) -> None:
    """Record PyTorch's switch that repeats its once-per-process warnings every time.

    difflab's warnings go through Python's ``warnings``, whose filters decide how
    often each shows (``warnings.simplefilter("always")`` repeats them all); this
    only records the switch, for :func:`is_warn_always_enabled`.

    Parameters
    ----------
    b : bool
        On or off.

    Returns
    -------
    None

    Examples
    --------
    >>> import difflab as dl
    >>> dl.set_warn_always(True)
    >>> dl.is_warn_always_enabled()
    True
    >>> dl.set_warn_always(False)
    """
    _settings["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether :func:`set_warn_always` was last called with True.

    Returns
    -------
    bool

    Examples
    --------
    >>> import difflab as dl
    >>> dl.is_warn_always_enabled()
    False
    """
    return _settings.get("warn_always", False)
