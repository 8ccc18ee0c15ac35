"""PyTorch's ``torch._dynamo``: the names programs call on ``torch.compile``'s tracer.

``explain`` is :func:`difflab.jit.explain`; ``config`` is ``dl.compile``'s settings
(``cache_size_limit`` is ``recompile_limit``); ``reset``, ``disable`` and
``is_compiling`` are :mod:`difflab.compiler`'s; ``graph_break()`` makes a break.
"""

from __future__ import annotations

from difflab.compiler import allow_in_graph, disable, is_compiling, reset
from difflab.jit.compiler import config, explain

__all__ = ["allow_in_graph", "config", "disable", "explain", "graph_break", "is_compiling",
           "reset"]


@disable
def graph_break() -> None:
    """A graph break here: the compiled call that reaches it runs eagerly.

    Returns
    -------
    None

    Examples
    --------
    >>> import difflab as dl
    >>> def f(x):
    ...     y = x * 2
    ...     dl._dynamo.graph_break()
    ...     return y + 1
    >>> dl._dynamo.explain(f)(dl.ones(2)).graph_break_count
    1
    """
