"""PyTorch's ``torch.compiler``: the switches around ``dl.compile`` (``torch.compile``).

* :func:`disable` keeps a function out of graphs: called inside a compiled
  function it is a graph break, and that call runs eagerly (``explain`` says so);
* :func:`reset` forgets every compiled function's graphs;
* :func:`is_compiling` is True while ``dl.compile`` traces;
* :func:`allow_in_graph` is accepted: the tracer records what a function applies.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from difflab.autograd import engine
from difflab.jit.compiler import reset

__all__ = ["allow_in_graph", "disable", "is_compiling", "is_dynamo_compiling", "reset"]


def disable(fn: Callable | None = None, recursive: bool = True, *,
            reason: str | None = None) -> Any:
    """Keep ``fn`` out of compiled graphs: inside a compiled function, calling it is a break.

    Outside ``dl.compile`` the wrapper calls ``fn`` unchanged.  While
    ``dl.compile`` traces, calling it is a graph break: that call of the
    compiled function runs eagerly, ``fn`` included, with the results of eager
    mode (PyTorch resumes a graph after ``fn``; difflab runs the call eagerly).
    :func:`difflab.jit.explain` lists the break and its reason.

    Parameters
    ----------
    fn : callable, optional
        The function; without it, ``disable(...)`` returns a decorator.
    recursive : bool, optional
        Accepted (PyTorch's False compiles what ``fn`` calls; here all of ``fn``'s call
        runs eagerly either way).
    reason : str, optional
        Shown in the graph break's reason.

    Returns
    -------
    callable
        The wrapped function (or a decorator).

    Examples
    --------
    >>> import difflab as dl
    >>> @dl.compiler.disable
    ... def log_norm(x):
    ...     return x.norm().log()
    >>> def f(x):
    ...     return log_norm(x) * x.sum()
    >>> x = dl.tensor([3.0, 4.0])
    >>> dl.compile(f)(x), f(x)
    (tensor(11.2661), tensor(11.2661))
    >>> dl.jit.explain(f)(x).graph_break_count
    1
    """
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    name = getattr(fn, "__qualname__", type(fn).__name__)
    what = f"{name}()" + (f" ({reason})" if reason else "")

    @functools.wraps(fn)
    def disabled(*args: Any, **kwargs: Any) -> Any:
        recorder = engine.GraphRecorder.active
        if recorder is not None:
            recorder.disabled_call(what)
        return fn(*args, **kwargs)

    disabled._torchdynamo_disable = True  # type: ignore[attr-defined]  (PyTorch's mark)
    return disabled


def is_compiling() -> bool:
    """Whether ``dl.compile`` is tracing the code that asks.

    A compiled function's Python runs only while it is traced, so code that
    asks and branches bakes the traced branch into the graph; a call that runs
    eagerly (a graph break) sees False.

    Returns
    -------
    bool

    Examples
    --------
    >>> import difflab as dl
    >>> def f(x):
    ...     return x + 1 if dl.compiler.is_compiling() else x - 1
    >>> dl.compiler.is_compiling(), f(dl.zeros(1)), dl.compile(f)(dl.zeros(1))
    (False, tensor([-1.]), tensor([1.]))
    """
    return bool(getattr(engine.GraphRecorder.active, "compiles", False))


is_dynamo_compiling = is_compiling


def allow_in_graph(fn: Callable) -> Callable:
    """Accepted for PyTorch's programs: returns ``fn`` itself.

    Dynamo puts such a function into its graph as one opaque call; difflab's
    tracer records the primitives ``fn`` applies, which is the same graph.

    Parameters
    ----------
    fn : callable

    Returns
    -------
    callable
        ``fn``.

    Examples
    --------
    >>> import difflab as dl
    >>> double = dl.compiler.allow_in_graph(lambda x: 2 * x)
    >>> dl.compile(double)(dl.ones(2))
    tensor([2., 2.])
    """
    return fn
