"""``torch.backends.mps``: Apple's Metal backend, which difflab does not have.

Programs pick their device with ``"cuda" if torch.cuda.is_available() else
"mps" if torch.backends.mps.is_available() else "cpu"``; here the answer is
False, so they fall through to what difflab has.

Examples
--------
>>> import difflab as dl
>>> dl.backends.mps.is_available(), dl.backends.mps.is_built()
(False, False)
"""


def is_available() -> bool:
    """Whether an MPS device can be used: never in difflab.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.backends.mps.is_available()
    False
    """
    return False


def is_built() -> bool:
    """Whether difflab was built with MPS: it was not.

    Examples
    --------
    >>> import difflab as dl
    >>> dl.backends.mps.is_built()
    False
    """
    return False
