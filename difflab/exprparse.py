r"""A safe parser for math expressions typed by a person: ``"sin(x)**2 + exp(-x*y)"``.

The command line takes functions as text.  Handing that text to Python's
``eval`` would run *any* Python (``__import__('os').system('rm -rf ~')``), so
this module never evaluates text.  It does three things instead:

1. ``ast.parse(text, mode="eval")`` turns the text into a syntax tree (this
   only *reads* the text; nothing runs);
2. a walk over the tree accepts only math: numbers, variable names, the
   operators ``+ - * / **`` and calls of the functions in :data:`FUNCTIONS`.
   Anything else (attribute access ``a.b``, subscripts, strings, lambdas,
   comprehensions, keyword arguments, names starting with ``_``, ...) is
   rejected with an :class:`ExpressionError` that names the construct and
   points at its column;
3. the accepted tree is compiled into a tree of small Python closures, one per
   node, that call the functions of a :class:`Namespace`.

The same parsed expression can therefore be run with difflab's functions
(which accept floats, arrays, ``Dual`` numbers, ``Tensor`` and sympy
expressions, so every differentiator can use it) or with mpmath's (for a
50-digit reference value):

>>> e = parse("x*sin(y) + 1")
>>> e.variables
('x', 'y')
>>> float(e(2.0, 0.5))
1.958851077208406
>>> e.evaluate({"x": 2, "y": 0.5}, namespace="mpmath")     # doctest: +SKIP
mpf('1.958851077208406...')
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from difflab.ops.mpmath_namespace import MPMATH, _mp_power

__all__ = [
    "CONSTANTS",
    "FUNCTIONS",
    "Expression",
    "ExpressionError",
    "Namespace",
    "parse",
    "parse_assignments",
]

#: Longest expression accepted (characters): a guard against pathological input.
MAX_LENGTH = 10_000

#: Friendlier names an expression may use for some primitives.
ALIASES: dict[str, str] = {"max": "maximum", "min": "minimum"}


class _Functions(Mapping):
    """The functions an expression may call: name -> (number of arguments, meaning).

    Read from the primitive registry on every lookup, so every elementwise
    primitive (one registered at run time too) can be called by its name.
    """

    def _table(self) -> dict[str, tuple[int, str]]:
        from difflab.ops import registry

        table = {}
        for op in registry.elementwise_ops():
            arity = 1 if isinstance(op, registry.UnaryOp) else 2
            table[op.name] = (arity, op.rule.description or op.name)
        for alias, name in ALIASES.items():
            if name in table:
                table[alias] = table[name]
        return table

    def __getitem__(self, name: str) -> tuple[int, str]:
        return self._table()[name]

    def __iter__(self):
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


#: The functions an expression may call, with their number of arguments and meaning.
FUNCTIONS: Mapping[str, tuple[int, str]] = _Functions()

#: Named constants an expression may use.
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}


class ExpressionError(ValueError):
    """The text is not an expression this parser accepts.

    Attributes
    ----------
    text : str
        The text that was parsed.
    column : int or None
        1-based column of the offending construct, when known.
    reason : str
        The message without the caret picture.
    """

    def __init__(self, reason: str, text: str = "", column: int | None = None) -> None:
        self.reason = reason
        self.text = text
        self.column = column
        message = reason
        if column is not None and text and "\n" not in text:
            message += f" (column {column})\n    {text}\n    {' ' * (column - 1)}^"
        super().__init__(message)


# --------------------------------------------------------------------- namespaces


@dataclass(frozen=True)
class Namespace:
    """The functions and number type an expression is evaluated with.

    Parameters
    ----------
    name : str
        A label (``"difflab"``, ``"mpmath"``, ...).
    functions : dict
        One callable per name in :data:`FUNCTIONS`.
    number : callable
        ``number(value, source)`` turns a numeric literal (its Python value and
        its source text, ``"0.1"``) into a number; mpmath reads the text, so
        ``0.1`` is one tenth at its working precision, not the nearest double.
    constants : dict
        Values of ``pi`` and ``e``.
    """

    name: str
    functions: Mapping[str, Callable[..., Any]]
    number: Callable[[int | float, str], Any]
    constants: Mapping[str, Any] = field(default_factory=dict)


def _python_number(value: int | float, source: str) -> Any:
    return value


def _mpmath_number(value: int | float, source: str) -> Any:
    import mpmath

    if isinstance(value, int):
        return mpmath.mpf(value)
    try:
        return mpmath.mpf(source.replace("_", ""))
    except (ValueError, TypeError):
        return mpmath.mpf(value)


def _primitive_name(name: str) -> str:
    return ALIASES.get(name, name)


def difflab_namespace() -> Namespace:
    """difflab's math functions: they accept floats, arrays, Dual, Tensor and sympy."""
    from difflab import functions as F

    table = {name: F.ELEMENTWISE[_primitive_name(name)] for name in FUNCTIONS}
    return Namespace("difflab", table, _python_number, dict(CONSTANTS))


def mpmath_namespace() -> Namespace:
    """mpmath's functions, at whatever precision ``mpmath.mp.dps`` is set to: each
    primitive's own forward rule, computed in mpmath."""
    import mpmath

    from difflab.ops import registry

    def with_mpmath(op: Any) -> Callable[..., Any]:
        return lambda *values: op.rule.forward(MPMATH, *values)

    table = {name: with_mpmath(registry.get(_primitive_name(name))) for name in FUNCTIONS}
    table["pow"] = _mp_power  # guarded as ``**`` is: mpmath's exponents have no limit
    return Namespace("mpmath", table, _mpmath_number, {"pi": mpmath.pi, "e": mpmath.e})


_NAMESPACES: dict[str, Callable[[], Namespace]] = {
    "difflab": difflab_namespace,
    "mpmath": mpmath_namespace,
}


def _resolve(namespace: str | Namespace) -> Namespace:
    if isinstance(namespace, Namespace):
        return namespace
    try:
        return _NAMESPACES[namespace]()
    except KeyError:
        raise ValueError(
            f"unknown namespace {namespace!r}: expected one of {sorted(_NAMESPACES)} "
            f"or a Namespace"
        ) from None


# ------------------------------------------------------------------ the compiler

# A compiled node: given the variable values and a namespace, return the value.
Node = Callable[[Mapping[str, Any], Namespace], Any]

_BINARY_NAMES = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**",
}
_REJECTED_OPERATORS = {
    ast.BitXor: "'^' is not a power here: write x**2 (or pow(x, 2))",
    ast.FloorDiv: "'//' (floor division) is not differentiable: use '/'",
    ast.Mod: "'%' (remainder) is not supported",
    ast.MatMult: "'@' (matrix product) is not supported in expressions",
    ast.LShift: "'<<' is not supported", ast.RShift: "'>>' is not supported",
    ast.BitAnd: "'&' is not supported", ast.BitOr: "'|' is not supported",
}
_CONSTRUCT_NAMES = {
    ast.Attribute: "attribute access (a.b)",
    ast.Subscript: "subscripts (a[i])",
    ast.Lambda: "lambda",
    ast.IfExp: "conditional expressions (a if c else b)",
    ast.Compare: "comparisons",
    ast.BoolOp: "boolean operators (and/or)",
    ast.ListComp: "comprehensions", ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions", ast.GeneratorExp: "comprehensions",
    ast.List: "lists", ast.Tuple: "tuples", ast.Dict: "dicts", ast.Set: "sets",
    ast.JoinedStr: "strings", ast.Starred: "starred arguments (*a)",
    ast.NamedExpr: "assignment (:=)", ast.Await: "await",
    ast.Yield: "yield", ast.YieldFrom: "yield",
}


def _pow(a: Any, b: Any) -> Any:
    # Python ints have unlimited size: 9**9**9 would run for minutes.  Raising a
    # plain int to an int power is done in floating point (it overflows at once).
    if type(a).__module__.startswith("mpmath") or type(b).__module__.startswith("mpmath"):
        return _mp_power(a, b)
    try:
        if isinstance(a, int) and isinstance(b, int):
            return float(a) ** float(b)
        return a**b
    except OverflowError:  # Python floats raise where arrays give inf: say which power
        raise OverflowError(
            f"{a:g}**{b:g} is too large for a floating-point number (it overflows)"
        ) from None


_BINARY_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: _pow,
}


class _Compiler:
    """Walks an ``ast`` tree, checks every node, and builds the closure tree."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.variables: list[str] = []
        self.functions: list[str] = []

    def error(self, reason: str, node: ast.AST, column: int | None = None) -> ExpressionError:
        if column is None:
            column = getattr(node, "col_offset", None)
        return ExpressionError(reason, self.text, None if column is None else column + 1)

    def operator_column(self, node: ast.BinOp) -> int:
        """0-based column of a binary operator (the tree only knows where operands are)."""
        start, stop = node.left.end_col_offset, node.right.col_offset
        gap = self.text[start:stop]
        stripped = gap.lstrip(" \t()")
        return start + len(gap) - len(stripped)

    def compile(self, node: ast.AST) -> Node:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.UnaryOp):
            return self.unaryop(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        what = _CONSTRUCT_NAMES.get(type(node), type(node).__name__)
        column = None
        if isinstance(node, ast.Attribute):  # point at the dot of `.attr`
            column = node.end_col_offset - len(node.attr) - 1
            what = f"attribute access ('.{node.attr}')"
        raise self.error(f"{what} not allowed: only numbers, variables, + - * / ** and "
                         f"calls of known functions", node, column)

    def constant(self, node: ast.Constant) -> Node:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            kind = "complex numbers" if isinstance(value, complex) else (
                f"the constant {value!r}" if value is None or isinstance(value, bool)
                else f"{type(value).__name__} literals")
            raise self.error(f"{kind} not allowed: only real numbers", node)
        source = ast.get_source_segment(self.text, node) or repr(value)

        return lambda env, ns: ns.number(value, source)

    def name(self, node: ast.Name) -> Node:
        name = node.id
        if name.startswith("_"):
            raise self.error(f"names starting with '_' are not allowed: {name!r}", node)
        if name in FUNCTIONS:
            raise self.error(f"{name!r} is a function: call it, as in {name}(x)", node)
        if name in CONSTANTS:
            return lambda env, ns: ns.constants[name]
        if name not in self.variables:
            self.variables.append(name)

        def variable(env: Mapping[str, Any], ns: Namespace) -> Any:
            try:
                return env[name]
            except KeyError:
                raise ExpressionError(f"variable {name!r} has no value") from None

        return variable

    def binop(self, node: ast.BinOp) -> Node:
        kind = type(node.op)
        if kind in _REJECTED_OPERATORS:
            raise self.error(_REJECTED_OPERATORS[kind], node, self.operator_column(node))
        left, right = self.compile(node.left), self.compile(node.right)
        operation = _BINARY_OPS[kind]
        return lambda env, ns: operation(left(env, ns), right(env, ns))

    def unaryop(self, node: ast.UnaryOp) -> Node:
        operand = self.compile(node.operand)
        if isinstance(node.op, ast.USub):
            return lambda env, ns: -operand(env, ns)
        if isinstance(node.op, ast.UAdd):
            return operand
        symbol = {ast.Not: "'not'", ast.Invert: "'~'"}.get(type(node.op), "this operator")
        raise self.error(f"{symbol} not allowed", node)

    def call(self, node: ast.Call) -> Node:
        if not isinstance(node.func, ast.Name):
            if isinstance(node.func, ast.Attribute):
                self.compile(node.func)  # raises, pointing at the dot
            raise self.error("only calls of known functions are allowed", node.func)
        name = node.func.id
        if name not in FUNCTIONS:
            known = ", ".join(sorted(FUNCTIONS))
            raise self.error(f"unknown function {name!r}; known functions: {known}", node.func)
        if node.keywords:
            raise self.error(f"keyword arguments not allowed in {name}(...)", node.keywords[0]
                             if hasattr(node.keywords[0], "col_offset") else node)
        arity = FUNCTIONS[name][0]
        if len(node.args) != arity:
            plural = "argument" if arity == 1 else "arguments"
            raise self.error(f"{name} takes {arity} {plural}, got {len(node.args)}", node)
        args = [self.compile(a) for a in node.args]
        if name not in self.functions:
            self.functions.append(name)
        if arity == 1:
            (arg,) = args
            return lambda env, ns: ns.functions[name](arg(env, ns))
        first, second = args
        return lambda env, ns: ns.functions[name](first(env, ns), second(env, ns))


# ------------------------------------------------------------------ expression


@dataclass(frozen=True)
class Expression:
    """A parsed, checked expression; call it to evaluate.

    Attributes
    ----------
    text : str
        The source text.
    variables : tuple of str
        Free variables in order of first appearance: the order of positional
        arguments of :meth:`__call__`.
    functions : tuple of str
        The known functions it calls.
    """

    text: str
    variables: tuple[str, ...]
    functions: tuple[str, ...]
    _root: Node = field(repr=False, compare=False)

    def evaluate(self, values: Mapping[str, Any], namespace: str | Namespace = "difflab") -> Any:
        """Value of the expression with the variables set from ``values``.

        Raises
        ------
        ExpressionError
            If a variable has no value.
        """
        missing = [v for v in self.variables if v not in values]
        if missing:
            raise ExpressionError(
                f"variable {missing[0]!r} has no value (give it one, e.g. "
                f"--at {missing[0]}=1.0)" if len(missing) == 1 else
                f"variables {', '.join(map(repr, missing))} have no value"
            )
        return self._root(values, _resolve(namespace))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Evaluate with difflab's functions; positional arguments follow ``variables``."""
        if len(args) > len(self.variables):
            raise TypeError(f"{self.text!r} has {len(self.variables)} variables "
                            f"{self.variables}, got {len(args)} values")
        values = dict(zip(self.variables, args))
        values.update(kwargs)
        return self.evaluate(values)

    def function(self, namespace: str | Namespace = "difflab") -> Callable[..., Any]:
        """A plain function of the variables (positional, in order), for a differentiator."""
        ns = _resolve(namespace)
        root, names = self._root, self.variables

        def f(*args: Any) -> Any:
            return root(dict(zip(names, args)), ns)

        f.__name__ = "expression"
        f.__doc__ = f"f({', '.join(names)}) = {self.text}"
        return f

    def __str__(self) -> str:
        return self.text


def parse(text: str) -> Expression:
    """Parse and check ``text``; see the module docstring for what is accepted.

    Raises
    ------
    ExpressionError
        For a syntax error (with the column and a caret) or a construct that is
        not plain math (naming it).
    """
    if not isinstance(text, str):
        raise TypeError(f"expected the expression as a string, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise ExpressionError("the expression is empty")
    if len(stripped) > MAX_LENGTH:
        raise ExpressionError(f"the expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(stripped, mode="eval")
    except SyntaxError as exc:
        column = exc.offset if exc.offset and exc.lineno == 1 else None
        reason = f"syntax error: {exc.msg}"
        raise ExpressionError(reason, stripped, column) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        raise ExpressionError(f"cannot parse the expression: {exc}") from None
    compiler = _Compiler(stripped)
    try:
        root = compiler.compile(tree.body)
    except RecursionError:
        raise ExpressionError("the expression is nested too deeply") from None
    return Expression(stripped, tuple(compiler.variables), tuple(compiler.functions), root)


def parse_assignments(text: str | Mapping[str, Any]) -> dict[str, float]:
    """Read point values such as ``"x=1.3,y=-2"`` (a mapping passes through).

    Raises
    ------
    ExpressionError
        If an item is not ``name=number``.
    """
    if isinstance(text, Mapping):
        return {str(k): float(v) for k, v in text.items()}
    values: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name.isidentifier():
            raise ExpressionError(f"expected name=number, got {item!r} (e.g. x=1.3)")
        try:
            values[name] = float(value)
        except ValueError:
            raise ExpressionError(
                f"the value of {name} must be a number, got {value!r} (e.g. {name}=1.3)"
            ) from None
        if not math.isfinite(values[name]):
            raise ExpressionError(f"the value of {name} must be finite, got {value!r}")
    if not values:
        raise ExpressionError("no values given: expected name=number, e.g. x=1.3")
    return values
