r"""Products of many factors: ``einsum`` and ``cumprod``, forward next to JVP and VJP.

**einsum** names every axis of every operand with a letter and multiplies
along the named axes:  ``"ij,jk->ik"`` is C_ik = Σ_j A_ij B_jk.  It is
*linear in each operand*, so

* JVP: Ċ = einsum(Ȧ, B, ...) + einsum(A, Ḃ, ...), one term per operand, the
  same equation with the tangent in that operand's place;
* VJP (the transpose of that linear map): Ā = einsum(C̄, B, ... -> A's letters),
  the output's adjoint contracted with the *other* operands onto the letters of
  A.  For ``"ij,jk->ik"`` that is Ā = C̄ Bᵀ, the matmul rule.

An operand that repeats a letter (``"ii->i"``, the diagonal) gets its adjoint
on that diagonal: the repeated letter is renamed and tied to the original by
an identity matrix, Ā_ab = v_a δ_ab.

**cumprod** yᵢ = Π_{j≤i} xⱼ along an axis.  ∂yᵢ/∂xⱼ = Π_{k≤i, k≠j} x_k for
j ≤ i (0 above the diagonal), so x̄ⱼ = Σ_{i≥j} ȳᵢ Π_{k≤i, k≠j} x_k.  Without
zeros in x that is (Σ_{i≥j} ȳᵢ yᵢ) / xⱼ, a reversed cumulative sum divided by
x; with a zero the division is 0/0, and the rule takes the exact product of
the others instead (see :meth:`CumProd.others`).
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from difflab import backend
from difflab.ops.primitive import Primitive
from difflab.ops.shapes import dim_index, plain_values, sum_to_shape

LETTERS = string.ascii_letters  # the labels NumPy's einsum accepts


# ------------------------------------------------------------------- equations


def _split_equation(equation: Any, operands: int) -> tuple[list[str], str, bool]:
    """The operand terms, the output term and whether there is an arrow, each checked."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the equation must be a string, got {type(equation).__name__}")
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise ValueError(f"einsum: equation {equation!r} has more than one '->'")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != operands:
        raise ValueError(
            f"einsum: equation {equation!r} has {len(terms)} operand term"
            f"{'s' if len(terms) != 1 else ''} ({lhs!r}) but {operands} operand"
            f"{'s were' if operands != 1 else ' was'} given"
        )
    for term in terms + ([rhs] if arrow else []):
        named = term.replace("...", "", 1)
        bad = sorted(set(named) - set(LETTERS) - {"."})
        if bad or "." in named:
            what = f"characters {bad}" if bad else "a '.' that is not part of one '...'"
            raise ValueError(
                f"einsum: equation {equation!r} contains {what} in {term!r}; subscripts "
                f"are letters a-z, A-Z, with at most one '...' per operand"
            )
    return terms, rhs, bool(arrow)


def _ellipsis_span(term: str, shape: tuple) -> int:
    """How many axes of ``shape`` the term's ``...`` stands for (0 without one)."""
    named = len(term.replace("...", ""))
    has_ellipsis = "..." in term
    if named > len(shape) or (not has_ellipsis and named != len(shape)):
        raise ValueError(
            f"einsum: operand term {term!r} names {named} axes but its operand has "
            f"{len(shape)} (shape {tuple(shape)}); use '...' for the axes in between"
        )
    return len(shape) - named if has_ellipsis else 0


def _check_output(output: str, inputs: str, equation: str) -> None:
    for c in output:
        if output.count(c) > 1:
            raise ValueError(f"einsum: output subscript {c!r} appears more than once in "
                             f"{equation!r}")
        if c not in inputs:
            raise ValueError(f"einsum: output subscript {c!r} in {equation!r} does not "
                             f"appear in any operand")


def _letter_sizes(inputs: list[str], shapes: list[tuple], equation: str) -> dict[str, int]:
    """Each letter's length; a size-1 axis broadcasts against a longer one of its letter."""
    sizes: dict[str, int] = {}
    for term, shape in zip(inputs, shapes):
        for c, n in zip(term, shape):
            known = sizes.get(c, 1)
            if n != 1 and known != 1 and n != known:
                raise ValueError(
                    f"einsum: subscript {c!r} has size {known} in one place and {n} in "
                    f"another (equation {equation!r}, shapes {[tuple(s) for s in shapes]})"
                )
            sizes[c] = max(n, known) if n and known else 0
    return sizes


class EinsumEquation:
    """A parsed einsum equation: one string of letters per operand and the output's.

    ``...`` is replaced by letters of its own (right-aligned, as broadcasting
    aligns shapes), and the implicit form (no ``->``) gets NumPy's and
    PyTorch's output: the letters used once, in alphabetical order, after the
    ellipsis.  ``sizes`` maps every letter to its length.
    """

    def __init__(self, equation: str, shapes: list[tuple]) -> None:
        terms, rhs, arrow = _split_equation(equation, len(shapes))
        spans = [_ellipsis_span(term, shape) for term, shape in zip(terms, shapes)]
        # the letters for '...': as many as the operand with the most broadcast axes needs
        free = [c for c in LETTERS if c not in equation]
        ellipsis = "".join(free[:max(spans, default=0)])
        self.inputs = [
            term.replace("...", ellipsis[len(ellipsis) - span:]) for term, span in zip(terms, spans)
        ]
        if arrow:  # (an output without '...' sums the broadcast axes away, as in PyTorch)
            output = rhs.replace("...", ellipsis)
        else:
            counts = {c: "".join(self.inputs).count(c) for c in set("".join(self.inputs))}
            output = ellipsis + "".join(
                sorted(c for c, n in counts.items() if n == 1 and c not in ellipsis))
        _check_output(output, "".join(self.inputs), equation)
        self.output = output
        self.sizes = _letter_sizes(self.inputs, shapes, equation)
        self.full_shapes = [tuple(self.sizes[c] for c in term) for term in self.inputs]

    def text(self, inputs: list[str], output: str) -> str:
        return ",".join(inputs) + "->" + output

    def spare_letters(self, k: int) -> str:
        """``k`` letters no subscript uses (for the tangents' leading axis, for diagonals)."""
        used = set("".join(self.inputs))
        free = [c for c in LETTERS if c not in used]
        if len(free) < k:
            raise ValueError("einsum: too many distinct subscripts to differentiate this equation")
        return "".join(free[:k])


class Einsum(Primitive):
    """y = einsum(equation, x₁, x₂, ...): a sum of products over named axes.

    JVP: ẏ = Σᵢ einsum(x₁, ..., ẋᵢ, ..., xₙ), linear in each operand.
    VJP: x̄ᵢ = einsum(ȳ, the other operands -> xᵢ's letters), the transpose;
    summed back to xᵢ's shape where xᵢ was broadcast (a size-1 axis).
    """

    name = "einsum"
    math = "∂/∂A einsum('ij,jk->ik', A, B) · C̄ = einsum('ik,jk->ij', C̄, B) (= C̄ Bᵀ)"
    numpy_function = np.einsum  # its NumPy face: np.einsum("ij,j->i", A, x) on Tensor or Dual

    @staticmethod
    def numpy_arguments(subscripts, *operands, out=None, **_):
        """``np.einsum(subscripts, *operands)`` (NumPy's ``optimize=`` is ignored)."""
        if out is not None or not isinstance(subscripts, str):
            raise TypeError("np.einsum on differentiable values takes the subscripts as a "
                            "string first, and no out=")
        return operands, {"equation": subscripts}

    @staticmethod
    def forward(ctx, xp, *operands, equation):
        parsed = EinsumEquation(equation, [tuple(x.shape) for x in operands])
        ctx.parsed, ctx.shapes = parsed, [tuple(x.shape) for x in operands]
        # size-1 axes that meet a longer axis of the same letter: broadcast them first, so
        # every letter has one length (and the VJP sums back over them)
        ctx.save(*operands)  # (as given: the recorded backward must see the inputs themselves)
        return xp.einsum(parsed.text(parsed.inputs, parsed.output),
                         *Einsum._broadcast(xp, parsed, operands))

    @staticmethod
    def _broadcast(xp, parsed, operands):
        return [x if tuple(x.shape) == s else xp.broadcast_to(x, s)
                for x, s in zip(operands, parsed.full_shapes)]

    @staticmethod
    def vjp(ctx, xp, g, *operands):
        parsed = ctx.parsed
        operands = Einsum._broadcast(xp, parsed, operands)
        grads = []
        for i, (term, needed) in enumerate(zip(parsed.inputs, ctx.needs_input_grad)):
            if not needed:
                grads.append(None)
                continue
            others = [x for j, x in enumerate(operands) if j != i]
            other_terms = [t for j, t in enumerate(parsed.inputs) if j != i]
            unique = "".join(dict.fromkeys(term))  # the letters of xᵢ, each once
            # a letter of xᵢ that no other factor carries was summed away: its adjoint is
            # the same along it (a broadcast), written as a factor of ones
            carried = set(parsed.output + "".join(other_terms))
            summed = [c for c in unique if c not in carried]
            ones = [_constant(g, parsed.sizes[c], "ones") for c in summed]
            grad = xp.einsum(parsed.text([parsed.output, *other_terms, *summed], unique),
                             g, *others, *ones)
            if unique != term:
                grad = Einsum._onto_diagonals(xp, parsed, grad, unique, term)
            grads.append(sum_to_shape(grad, ctx.shapes[i]))
        return tuple(grads)

    @staticmethod
    def _onto_diagonals(xp, parsed, grad, unique, term):
        """The adjoint v (letters ``unique``) of an operand that repeats letters (``term``):
        v placed on the diagonals, ā_{..a..b..} = v_{..a..} δ_ab, via identity matrices."""
        spare = iter(parsed.spare_letters(len(term) - len(unique)))
        seen, renamed, factors, factor_terms = set(), "", [], []
        for c in term:
            if c in seen:
                d = next(spare)
                renamed += d
                factors.append(_constant(grad, parsed.sizes[c], "eye"))
                factor_terms.append(c + d)
            else:
                seen.add(c)
                renamed += c
        return xp.einsum(parsed.text([unique, *factor_terms], renamed), grad, *factors)

    @staticmethod
    def jvp(ctx, xp, *args):
        n = len(ctx.parsed.inputs)
        tangents, operands = args[:n], args[n:]
        parsed = ctx.parsed
        operands = Einsum._broadcast(xp, parsed, operands)
        k = parsed.spare_letters(1)  # the tangents' leading axis
        out = None
        for i, dx in enumerate(tangents):
            if dx is None:
                continue
            dx = xp.broadcast_to(dx, dx.shape[:1] + parsed.full_shapes[i])
            terms = [k + t if j == i else t for j, t in enumerate(parsed.inputs)]
            factors = [dx if j == i else x for j, x in enumerate(operands)]
            term = xp.einsum(parsed.text(terms, k + parsed.output), *factors)
            out = term if out is None else out + term
        return out


def _constant(like: Any, n: int, kind: str) -> Any:
    """The n × n identity (``kind="eye"``) or n ones (``"ones"``) on ``like``'s device, in
    its dtype: constants of a rule, no gradient flows into them."""
    array = getattr(like, "array", like)  # (a Tensor when the backward is recorded)
    xp = backend.array_module(array)
    return xp.eye(n, dtype=array.dtype) if kind == "eye" else xp.ones(n, dtype=array.dtype)


# -------------------------------------------------------------------- cumprod


class CumProd(Primitive):
    """yᵢ = Π_{j≤i} xⱼ along ``axis``.

    VJP: x̄ⱼ = Σ_{i≥j} ȳᵢ Π_{k≤i, k≠j} x_k;  JVP: ẏᵢ = Σ_{j≤i} ẋⱼ Π_{k≤i, k≠j} x_k,
    its transpose.  On arrays without zeros both use Π_{k≤i, k≠j} x_k = yᵢ / xⱼ
    (a cumulative sum and a division); with zeros, and always when the rule
    is itself recorded or runs on dual numbers (a branch on values would be
    baked into a traced graph), ``CumProd.others`` builds the products exactly,
    from ``where`` and ``cumprod`` itself, so the tape differentiates the
    rule again, to any order.
    """

    name = "cumprod"
    math = "∂yᵢ/∂xⱼ = Π_{k≤i, k≠j} x_k  (j ≤ i),  x̄ⱼ = Σ_{i≥j} ȳᵢ yᵢ / xⱼ without zeros"
    tensor_method = dl_function = "cumprod"  # x.cumprod(dim), dl.cumprod(x, dim)
    description = "the cumulative product of the elements along a dimension"
    doc = """
        Parameters
        ----------
        input : Tensor, array or sequence
            The values (a 0-d one is its own cumulative product).
        dim : int
            The dimension to multiply along (negative counts from the end); ``axis`` is
            NumPy's name for it.
        dtype : dtype, optional, keyword-only
            Cast the input to it first.

        Returns
        -------
        Tensor or array
            ``input``'s shape: element i along ``dim`` is the product of elements 0 .. i.

        Raises
        ------
        TypeError
            If ``dim`` is missing or not an int.
        IndexError
            If ``dim`` is out of range.

        See Also
        --------
        difflab.prod : the whole product.
        difflab.cumsum : the running sum.

        Examples
        --------
        >>> import difflab as dl
        >>> x = dl.tensor([2.0, 0.0, 3.0], requires_grad=True)
        >>> y = dl.cumprod(x, 0)
        >>> y
        tensor([2., 0., 0.], grad_fn=<...>)
        >>> y.sum().backward()
        >>> x.grad                  # exact at the zero: 1 + x₁ + x₁x₂, x₀ + x₀x₂, x₀x₁
        tensor([1., 8., 0.])
        >>> dl.cumprod(dl.tensor([[1, 2], [3, 4]]), dim=1, dtype=dl.float64)
        tensor([[ 1.,  2.],
                [ 3., 12.]], dtype=difflab.float64)
    """
    numpy_function = np.cumprod  # its NumPy face: np.cumprod(x, axis) on Tensor or Dual

    @staticmethod
    def arguments(input, dim=None, *, dtype=None, axis=None):  # noqa: A002
        """``cumprod(input, dim, *, dtype=None)``: yᵢ = Π_{j≤i} xⱼ along ``dim`` (NumPy's
        ``axis=`` too); ``dtype`` casts the input first.  Differentiable to any order,
        zeros included."""
        dim = axis if dim is None else dim
        dim = dim_index(dim, len(input.shape), "cumprod")
        if dtype is not None:
            input = input.astype(dtype)  # noqa: A001
        return (input,), {"axis": dim}

    @staticmethod
    def numpy_arguments(a, axis=None, dtype=None, out=None):
        """``np.cumprod(a, axis)`` (no axis: over the flattened input)."""
        if axis is None:
            return (a.reshape(-1),), {"axis": 0}
        return (a,), {"axis": axis}

    @staticmethod
    def forward(ctx, xp, x, axis):
        if x.ndim == 0:  # one element: its own cumulative product
            ctx.axis = None
            ctx.save(x, x)
            return x * 1
        ctx.axis = axis % x.ndim
        y = xp.cumprod(x, axis=ctx.axis)
        ctx.save(x, y)
        return y

    @staticmethod
    def _exact(x):
        """True where the quotient rule y / x is exact: an array (not a tensor being
        recorded, nor dual numbers) without zeros."""
        plain = isinstance(x, np.ndarray) or backend.is_gpu_array(x)
        return plain and not bool((x == 0).any())

    @staticmethod
    def others(xp, x, axis):
        """P[..., j, i] = Π_{j<k≤i} x_k for i ≥ j, 0 for i < j (``axis`` swapped last).

        Row j is the cumulative product of x with x_0 .. x_j replaced by 1: an
        n × n matrix per row of x, built with ``where`` and ``cumprod``.
        """
        moved = xp.swapaxes(x, axis, -1)
        n = moved.shape[-1]
        module = backend.array_module(plain_values(x))  # (the masks on x's device)
        upper = module.triu(module.ones((n, n), dtype=bool))  # i ≥ j
        rows = xp.where(module.triu(upper, 1), xp.expand_dims(moved, -2), 1.0)  # k > j
        return xp.where(upper, xp.cumprod(rows, axis=-1), 0.0)

    @staticmethod
    def _before(xp, x, axis):
        """E_j = Π_{k<j} x_k, the exclusive cumulative product (``axis`` swapped last)."""
        moved = xp.swapaxes(x, axis, -1)
        ones = xp.ones_like(moved[..., :1])
        return xp.cumprod(xp.concatenate([ones, moved[..., :-1]], axis=-1), axis=-1)

    @staticmethod
    def vjp(ctx, xp, g, x, y):
        axis = ctx.axis
        if axis is None or 0 in x.shape:
            return (g,)
        if CumProd._exact(x):
            flipped = xp.flip(g * y, axis)
            return (xp.flip(xp.cumsum(flipped, axis=axis), axis) / x,)
        # x̄ⱼ = E_j Σ_{i≥j} P[j, i] ȳᵢ
        p = CumProd.others(xp, x, axis)
        gm = xp.expand_dims(xp.swapaxes(g, axis, -1), -2)
        grad = CumProd._before(xp, x, axis) * (p * gm).sum(axis=-1)
        return (xp.swapaxes(grad, -1, axis),)

    @staticmethod
    def jvp(ctx, xp, dx, x, y):
        axis = ctx.axis  # of x; the tangents carry one more axis in front
        if axis is None or 0 in x.shape:
            return dx
        if CumProd._exact(x):
            return xp.cumsum(dx * (1.0 / x), axis=axis + 1) * y
        # ẏᵢ = Σ_{j≤i} E_j P[j, i] ẋⱼ
        p = CumProd.others(xp, x, axis)
        weighted = xp.swapaxes(dx, axis + 1, -1) * CumProd._before(xp, x, axis)
        out = (xp.expand_dims(weighted, -1) * p).sum(axis=-2)
        return xp.swapaxes(out, -1, axis + 1)
