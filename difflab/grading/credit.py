"""Partial credit: a test marked ``@points(n, partial=True)`` may earn part of its points.

The share is always taken over what the instructor *wrote*, never over what the
student's code let the test reach: a comparison that was never made, or that an error
cut short, counts as a miss.  Two ways to earn a part, both decided in the grader's
trusted process:

* **by checks.**  Each ``check_*`` helper (and :func:`~difflab.grading.checks.assert_close`)
  called in the test is one part.  Before it calls the student's code, a check declares
  every element it is going to compare (a Function's output *and* the gradient of each
  input, say); it earns the share of those elements that were right, so a ``backward``
  that raises ``NotImplementedError`` leaves the gradients' elements as misses.  The test
  earns

  .. math::

     \\text{score} = n \\cdot \\frac{\\sum_{\\text{checks}} \\text{elements right} /
     \\text{elements declared}}{\\text{checks written in the test}}

  where the checks written are counted in the test's source (Python's ``ast``, nothing
  run), so checks that a failure before them kept from running count as 0.  An error
  raised outside any check (a plain ``assert``, the student's exception between two
  checks) counts as one more part, missed.

* **by named sub-checks.**  Each ``with subcheck("gradient", weight=2):`` block runs to
  its end or to its first failure, and the test goes on with the next block::

      @points(4, partial=True)
      def test_layer():
          with subcheck("output"):
              check_function(...)
          with subcheck("gradient of the weight", weight=2):
              check_gradient(...)

  The test earns ``n * sum(weights earned) / sum(weights written)``: a block that passed
  earns its weight, a failed block its weight times its checks' share (as above, within
  the block), and a block the test never reached (the student's process crashed or
  timed out in an earlier one) earns nothing but still counts in the total.

What cannot be counted earns nothing when the test is cut short: checks inside a loop
or a helper function, sub-checks in a loop or with a computed name or weight.  Write
them one per statement (or put a loop's body in sub-checks, which a failure does not
cut short) and a test cut short still earns what was right.

Tests without ``partial=True`` are all or nothing, whatever they use.  A timeout or a
crash of the student's process ends the test at once (no further sub-checks run).
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["subcheck", "check_part", "begin_test", "end_test", "TestCredit", "TestPlan",
           "plan_test"]

#: The functions that count as one check each when written in a test.
_CHECK_PREFIX, _CHECK_NAMES = "check_", ("assert_close",)


# --------------------------------------------------------------------------------------
# what the test's source declares
# --------------------------------------------------------------------------------------
@dataclass
class TestPlan:
    """The parts a test's source declares (read with ``ast``; nothing is run).

    ``checks`` counts the check calls outside sub-checks; ``blocks`` maps the first and
    last line of each ``with subcheck(...)`` statement to the checks in its body;
    ``named`` maps each sub-check's name to its weight.  ``None`` stands for "cannot be
    counted" (a loop, a helper, a computed name).
    """

    __test__ = False

    filename: str
    checks: int | None = 0
    blocks: dict[tuple[int, int], int | None] = field(default_factory=dict)
    named: dict[str, float] | None = field(default_factory=dict)


def _is_check(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name.startswith(_CHECK_PREFIX) or name in _CHECK_NAMES


def _subcheck_item(stmt: ast.AST) -> ast.Call | None:
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        for item in stmt.items:
            call = item.context_expr
            if isinstance(call, ast.Call):
                func = call.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name == "subcheck":
                    return call
    return None


_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp,
          ast.GeneratorExp, ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class _Counter:
    def __init__(self, plan: TestPlan, offset: int) -> None:
        self.plan, self.offset = plan, offset

    def count(self, nodes: list[ast.AST], looped: bool) -> int | None:
        """Outermost checks in ``nodes`` (None: uncountable); records sub-checks on the way."""
        total: int | None = 0
        for node in nodes:
            found = self.node(node, looped)
            total = None if total is None or found is None else total + found
        return total

    def node(self, node: ast.AST, looped: bool) -> int | None:
        call = _subcheck_item(node)
        if call is not None:
            self._block(node, call, looped)
            return 0
        if _is_check(node):
            return None if looped else 1
        if isinstance(node, ast.If):
            body = self.count(node.body, looped)
            orelse = self.count(node.orelse, looped)
            test = self.node(node.test, looped)
            if body is None or orelse is None or test is None:
                return None
            return test + max(body, orelse)
        inner = looped or isinstance(node, _LOOPS)
        return self.count(list(ast.iter_child_nodes(node)), inner)

    def _block(self, node: Any, call: ast.Call, looped: bool) -> None:
        first = node.lineno + self.offset
        last = (node.body[0].lineno - 1 if node.body else node.lineno) + self.offset
        self.plan.blocks[(first, max(first, last))] = self.count(node.body, False)
        name = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg == "name"), None)
        weight = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "weight"), ast.Constant(1.0))
        if (looped or self.plan.named is None or not isinstance(name, ast.Constant)
                or not isinstance(weight, ast.Constant)
                or not isinstance(weight.value, (int, float))):
            self.plan.named = None
        else:
            self.plan.named[str(name.value)] = float(weight.value)


_plans: dict[Any, TestPlan | None] = {}


def plan_test(function: Callable[..., Any]) -> TestPlan | None:
    """The parts ``function``'s source declares; None when its source cannot be read.

    Examples
    --------
    >>> def test_two():
    ...     check_function(f, ref, [x])
    ...     check_gradient(g, [x])
    >>> plan_test(test_two).checks
    2
    """
    code = getattr(function, "__code__", None)
    if code in _plans:
        return _plans[code]
    plan = None
    try:
        lines, start = inspect.getsourcelines(function)
        tree = ast.parse(textwrap.dedent("".join(lines)))
        body = tree.body[0].body if tree.body and isinstance(
            tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else []
        plan = TestPlan(filename=code.co_filename if code else "")
        plan.checks = _Counter(plan, start - 1).count(body, False)
    except (OSError, TypeError, SyntaxError, IndexError):
        plan = None
    if code is not None:
        _plans[code] = plan
    return plan


# --------------------------------------------------------------------------------------
# what the test earned while it ran
# --------------------------------------------------------------------------------------
@dataclass
class _Part:
    """One check: the elements it declared, those that were right, whether it finished."""

    declared: int = 0
    right: int = 0
    finished: bool = False

    @property
    def share(self) -> float:
        if self.declared:
            return min(self.right, self.declared) / self.declared
        return 1.0 if self.finished else 0.0


@dataclass
class _Scope:
    """The checks of a test (outside sub-checks) or of one sub-check."""

    planned: int | None = None  # checks written (None: unknown)
    parts: list[_Part] = field(default_factory=list)
    escaped: BaseException | None = None  # the last exception that left a check

    def share(self, error: BaseException | None) -> float:
        """The share earned when ``error`` ended the scope (None: it ran to its end)."""
        if error is None:
            return sum(p.share for p in self.parts) / len(self.parts) if self.parts else 1.0
        if self.planned is None or len(self.parts) > self.planned:
            return 0.0  # what the failure kept from running cannot be counted
        stray = 0 if error is self.escaped else 1  # an error outside a check: a miss
        total = max(self.planned, len(self.parts) + stray)
        return sum(p.share for p in self.parts) / total if total else 0.0


@dataclass
class _Block:
    name: str
    weight: float
    scope: _Scope
    error: BaseException | None = None  # None: passed

    @property
    def earned(self) -> float:
        if self.error is None:
            return self.weight
        return self.weight * self.scope.share(self.error)


@dataclass
class TestCredit:
    """What one test earned so far (kept by the trusted process, never by the student's)."""

    __test__ = False

    plan: TestPlan | None = None
    top: _Scope = field(default_factory=_Scope)
    blocks: list[_Block] = field(default_factory=list)
    current: _Block | None = None
    part: _Part | None = None
    error: BaseException | None = None  # what ended the test early (None: it ran through)

    def fraction(self) -> float | None:
        """The share of the test's points earned, or None when nothing was counted."""
        if self.blocks or (self.plan is not None and self.plan.blocks):
            return self._by_blocks()
        if not self.top.parts and self.error is None:
            return None
        return self.top.share(self.error)

    def _by_blocks(self) -> float:
        named = self.plan.named if self.plan is not None else None
        if self.error is not None and named is None:
            return 0.0  # the sub-checks not reached cannot be counted
        weights = {b.name: 0.0 for b in self.blocks}
        earned = dict(weights)
        for block in self.blocks:
            weights[block.name] += block.weight
            earned[block.name] += block.earned
        for name, weight in (named or {}).items():
            weights.setdefault(name, weight)  # written, never reached: a miss
        total = sum(weights.values())
        return sum(earned.values()) / total if total else 0.0

    def failures(self, describe: Callable[[BaseException], str]) -> list[str]:
        """The messages of the sub-checks that failed (``describe`` words each error)."""
        return [f"[{b.name}] {describe(b.error)}" for b in self.blocks if b.error is not None]


_test: TestCredit | None = None


def begin_test(function: Callable[..., Any] | None = None) -> None:
    """Start counting for a new test (the grading plugin calls this).

    ``function`` is the test function of a partial-credit test: its source declares the
    checks and sub-checks that count (:func:`plan_test`).
    """
    global _test
    plan = plan_test(function) if function is not None else None
    _test = TestCredit(plan=plan, top=_Scope(plan.checks if plan is not None else None))


def stop_test(error: BaseException) -> None:
    """The test ended early with ``error`` (what was not reached counts as missed)."""
    if _test is not None and _test.error is None:
        _test.error = error


def end_test() -> TestCredit:
    """Stop counting; what the test earned."""
    global _test
    credit, _test = _test or TestCredit(), None
    return credit


@contextmanager
def check_part(elements: int) -> Iterator[None]:
    """One check of a test: ``elements`` is every element it will compare, declared first.

    Checks nested in another (``check_function`` calling ``assert_close``) add to the
    outer one's count of right elements; only the outermost declares.  Outside a graded
    test it does nothing.

    Parameters
    ----------
    elements : int
        How many elements the check compares when it runs to its end.

    Examples
    --------
    >>> with check_part(8):   # a check of a Function's 4 outputs and 4 gradients
    ...     pass
    """
    if _test is None:
        yield
        return
    if _test.part is not None:
        yield
        return
    scope = _test.current.scope if _test.current is not None else _test.top
    part = _Part(declared=max(int(elements), 0))
    scope.parts.append(part)
    _test.part = part
    try:
        yield
        part.finished = True
    except BaseException as exc:
        scope.escaped = exc
        raise
    finally:
        _test.part = None


def record_elements(right: int, compared: int) -> None:
    """Count one comparison: ``right`` of ``compared`` elements were within tolerance.

    Called inside :func:`check_part`; a comparison outside any check declares itself.
    """
    if _test is None:
        return
    if _test.part is None:
        with check_part(compared):
            _test.part.right += int(right)
        return
    _test.part.right += int(right)


def _block_lines(plan: TestPlan | None) -> int | None:
    """Checks written in the sub-check being entered (found by its caller's line)."""
    if plan is None:
        return None
    frame = sys._getframe(2)
    for _ in range(4):
        if frame is None:
            break
        if frame.f_code.co_filename == plan.filename:
            for (first, last), checks in plan.blocks.items():
                if first <= frame.f_lineno <= last:
                    return checks
        frame = frame.f_back
    return None


@contextmanager
def subcheck(name: str, weight: float = 1.0) -> Iterator[None]:
    """A named part of a partial-credit test, worth ``weight`` shares of its points.

    A failure inside the block (a failed check or assertion, an error raised by the
    student's code) ends the block, not the test; the test fails at its end with the
    messages of the failed blocks.  Outside a graded run (plain pytest), the block
    behaves like ordinary code: the failure propagates.

    Parameters
    ----------
    name : str
        What the block checks, shown with its failure (``[gradient] ...``).
    weight : float, optional
        Its share of the test's points, relative to the other blocks.

    Returns
    -------
    context manager
        Use it in a ``with`` block inside a test marked ``@points(..., partial=True)``.

    Raises
    ------
    ValueError
        For a weight that is not a positive number, or a sub-check inside another.

    Examples
    --------
    >>> with subcheck("output", weight=2):
    ...     assert 1 + 1 == 2
    """
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight <= 0:
        raise ValueError(f"subcheck weight must be a positive number, got {weight!r}")
    if _test is None:
        yield
        return
    if _test.current is not None:
        raise ValueError(f"subcheck {name!r} inside subcheck {_test.current.name!r}: "
                         "sub-checks do not nest")
    from difflab.grading.sandbox import StudentStopped

    block = _Block(str(name), float(weight), _Scope(_block_lines(_test.plan)))
    _test.blocks.append(block)
    _test.current = block
    try:
        yield
    except StudentStopped as exc:  # a timeout or a dead process ends the whole test
        block.error = exc
        raise
    except Exception as exc:  # noqa: BLE001 -- the block failed; the test goes on
        block.error = exc
    finally:
        _test.current = None
