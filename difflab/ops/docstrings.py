r"""The docstrings of the faces generated from the registry: a primitive is documented once.

``difflab.sin`` and ``Tensor.sin`` are generated from the rule ``Sin`` (see
:mod:`difflab.ops.registry`); so are their docstrings, here, from what the rule
declares: the summary from its ``description``, the derivative from its ``math``,
where it is not differentiable from its ``kinks``, and an example at two points inside
its ``domain``.  The example's printed values are not copied from difflab: the value is
NumPy's own ufunc (the rule's ``numpy_name``; the rule's forward on NumPy arrays where
NumPy has none), and the gradient a central difference of it in float64, so the doctest
checks the face, the tape and the rule against an independent computation.

``Tensor.sin`` says what it computes and points at ``difflab.sin`` (``See
:func:`difflab.sin```), where the full entry is.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

#: How an example prints a float32 array (``repr`` of a Tensor, given by the tensor layer).
Show = Callable[[np.ndarray], str]


def sample_points(domain: tuple[float, float]) -> list[float]:
    """Two points well inside ``domain``, with one decimal (where the example evaluates)."""
    lo, hi = domain
    return [round(lo + 0.25 * (hi - lo), 1), round(lo + 0.8 * (hi - lo), 1)]


def reference(rule: Any) -> Callable[..., np.ndarray]:
    """f on NumPy arrays, computed without difflab's faces: NumPy's ufunc when there is one,
    else Python's ``math`` function of that name, else the rule's forward on NumPy arrays
    (in mpmath for a special function NumPy lacks).
    (Never SciPy: these run while ``import difflab`` does, which must stay quick.)"""
    ufunc = getattr(np, rule.numpy_name or rule.name, None)
    if isinstance(ufunc, np.ufunc):
        return ufunc
    scalar = getattr(math, rule.name, None)
    if scalar is not None:
        return np.vectorize(scalar, otypes=[np.float64])

    def on_numpy(*xs: np.ndarray) -> np.ndarray:
        try:
            return rule.forward(np, *xs)
        except AttributeError:  # a special function: NumPy has none, SciPy's would slow
            from difflab.ops.mpmath_namespace import MPMATH  # down import difflab: mpmath's

            arrays = np.broadcast_arrays(*xs)
            values = [float(rule.forward(MPMATH, *map(float, x)))
                      for x in zip(*(a.ravel() for a in arrays))]
            return np.array(values).reshape(arrays[0].shape)

    return on_numpy


def central_difference(f: Callable[..., np.ndarray], args: list[np.ndarray],
                       i: int, h: float = 1e-6) -> np.ndarray:
    """∂f/∂args[i] by a central difference in float64 (error about 1e-10 here)."""
    up, down = list(args), list(args)
    up[i], down[i] = args[i] + h, args[i] - h
    return (f(*up) - f(*down)) / (2 * h)


def _header(rule: Any, arity: int) -> list[str]:
    what = rule.description or rule.name
    summary = f"{what[0].upper()}{what[1:]}, elementwise."
    if len(summary) < 16:  # (a short description: say which function)
        summary = f"{summary[:-1]}: ``{rule.name}`` of each element."
    variables = "x" if arity == 1 else "a, b"
    return [summary, "",
            f"Computes y = {rule.name}({variables}) element by element"
            + (" (broadcasting ``input`` and ``other``)" if arity == 2 else "") + "."]


def function_docstring(op: Any, show: Show) -> str:
    """The numpydoc docstring of ``difflab.<name>`` for the elementwise primitive ``op``."""
    rule = op.rule
    arity = 1 if not hasattr(rule, "d_da") else 2
    lines = _header(rule, arity)
    lines += ["", "Parameters", "----------",
              "input : Tensor, array, float, Dual or sympy expression",
              "    The argument; a Tensor is recorded on the tape, a dual number carries its "
              "tangent,", "    a sympy expression builds the expression."]
    if arity == 2:
        lines += ["other : Tensor, array, float, Dual or sympy expression",
                  "    The second argument, broadcast against ``input``."]
    lines += _declared(rule, "options")  # (keyword-only parameters of its own)
    lines += ["out : Tensor, optional", "    Written into (and returned) instead of a new "
              "tensor.",
              "", "Returns", "-------", "Tensor, array, float, Dual or sympy expression",
              "    Of the kind given (a Tensor if either argument is one), the shape of the "
              "input" + ("s broadcast." if arity == 2 else "."),
              "", "Raises", "------", "TypeError",
              "    For an argument of another type (a string, ``None``)."]
    lines += _declared(rule, "raises")
    lines += ["", "See Also", "--------",
              f"difflab.Tensor.{op.name} : the same, as a method.",
              "difflab.derivative : the derivative of a function built from these.",
              "", "Notes", "-----",
              "The derivative rule, the one every method of difflab (forward, reverse,",
              f"symbolic, the jit) reads: ``{rule.math}``."]
    if rule.kinks:
        lines += ["", f"Where {rule.name} is not differentiable: {rule.kinks}."]
    lo, hi = rule.domain
    lines += ["", f"Tests sample it on [{lo}, {hi}], inside its domain."]
    lines += ["", "Examples", "--------", ">>> import difflab as dl"]
    lines += _example(op, rule, arity, show)
    examples = _declared(rule, "examples")
    return "\n".join(lines + ([""] + examples if examples else []))


def _declared(rule: Any, section: str) -> list[str]:
    """The lines a rule adds to its face's docstring (``options``, ``raises``,
    ``examples``: a face with parameters of its own, as ``div``'s ``rounding_mode``)."""
    text = getattr(rule, section, "")
    return inspect.cleandoc(text).splitlines() if text else []


def _example(op: Any, rule: Any, arity: int, show: Show) -> list[str]:
    xs = sample_points(rule.domain)
    f = reference(rule)
    if arity == 1:
        a = np.array(xs)
        value = f(a.astype(np.float32))
        grads = [central_difference(f, [a], 0)]
        lines = [f">>> x = dl.tensor({xs}, requires_grad=True)", f">>> y = dl.{op.name}(x)",
                 ">>> y", show(value)[:-1] + ", grad_fn=<...>)",
                 ">>> y.sum().backward()", ">>> x.grad", show(grads[0].astype(np.float32))]
        return lines
    bs = list(reversed(xs))
    a, b = np.array(xs), np.array(bs)
    value = f(a.astype(np.float32), b.astype(np.float32))
    da, db = (central_difference(f, [a, b], i).astype(np.float32) for i in (0, 1))
    return [f">>> a = dl.tensor({xs}, requires_grad=True)",
            f">>> b = dl.tensor({bs}, requires_grad=True)",
            f">>> z = dl.{op.name}(a, b)", ">>> z", show(value)[:-1] + ", grad_fn=<...>)",
            ">>> z.sum().backward()", ">>> a.grad", show(da), ">>> b.grad", show(db)]


def face_docstring(op: Any) -> str:
    """``difflab.<name>`` for a structural primitive with faces (``prod``, ``softmax``, ...).

    The summary is the primitive's ``description``, then the call its ``arguments``
    reads, the sections it declares in ``doc``, and as Notes its own docstring: the
    rule, JVP and VJP side by side, with their math.
    """
    what = op.description or op.name
    lines = [f"{what[0].upper()}{what[1:]}.", ""]
    call = inspect.cleandoc(op.arguments.__doc__ or "")
    if call:
        lines += [call, ""]
    declared = inspect.cleandoc(op.doc)
    head, marker, examples = declared.partition("Examples\n--------")
    if head.strip():
        lines += [head.strip(), ""]
    rule = inspect.cleandoc(type(op).__doc__ if not isinstance(op, type) else op.__doc__ or "")
    if rule:
        lines += ["Notes", "-----", rule, ""]
    if marker:
        lines += [marker + examples]
    return "\n".join(lines).rstrip() + "\n"


def forwarding_docstring(op: Any, name: str, function: str) -> str:
    """``Tensor.<name>`` for a primitive's face method: what it is, and where it is documented."""
    what = op.description or op.name
    return (f"{what[0].upper()}{what[1:]}.\n\n``x.{name}(...)`` is ``{function}(x, ...)``.\n"
            f"See :func:`{function}` for the parameters, the derivative rule and examples.\n")


def method_docstring(op: Any, function: str, show: Show) -> str:
    """``Tensor.<name>``: what it computes, a short example, and where the full entry is."""
    rule = op.rule
    arity = 1 if not hasattr(rule, "d_da") else 2
    xs = sample_points(rule.domain)
    f = reference(rule)
    call = f"x.{op.name}()" if arity == 1 else f"x.{op.name}(dl.tensor({xs[::-1]}))"
    value = (f(np.array(xs, np.float32)) if arity == 1
             else f(np.array(xs, np.float32), np.array(xs[::-1], np.float32)))
    return "\n".join(_header(rule, arity)[:1] + [
        "", f"``x.{op.name}({'' if arity == 1 else 'other'})`` is ``{function}(x"
        f"{'' if arity == 1 else ', other'})``.",
        f"See :func:`{function}` for the parameters, the derivative rule and the kinks.",
        "", "Examples", "--------", ">>> import difflab as dl",
        f">>> x = dl.tensor({xs})", f">>> {call}", show(value)])
