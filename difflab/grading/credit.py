"""Partial credit: a test marked ``@points(n, partial=True)`` may earn part of its points.

Two ways to earn a part, both decided in the grader's trusted process:

* **by elements.**  Every comparison a check makes (:func:`~difflab.grading.checks.assert_close`,
  used by all the ``check_*`` helpers) counts the elements it compared and those that were
  right.  A partial test that fails earns

  .. math::

     \\text{score} = n \\cdot
     \\frac{\\sum \\text{elements right}}{\\sum \\text{elements compared}}

  over the comparisons made before it stopped.  A check stops at its first wrong array,
  so this is the fraction *of what was compared*: use one comparison per test (or
  sub-checks, below) when the outputs should count separately.

* **by named sub-checks.**  Each ``with subcheck("gradient", weight=2):`` block runs to
  its end or to its first failure, and the test goes on with the next block::

      @points(4, partial=True)
      def test_layer():
          with subcheck("output"):
              check_function(...)
          with subcheck("gradient of the weight", weight=2):
              check_gradient(...)

  The test earns ``n * sum(weights of blocks that passed) / sum(all weights)`` and fails
  (with every failed block's message) unless all passed.  A block that failed after some
  comparisons earns its weight times the fraction of elements it got right.

Tests without ``partial=True`` are all or nothing, whatever they use.  A timeout or a
crash of the student's process ends the test at once (no further sub-checks run).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["subcheck", "record_elements", "begin_test", "end_test", "TestCredit"]


@dataclass
class _Block:
    name: str
    weight: float
    right: int = 0
    compared: int = 0
    error: BaseException | None = None  # None: passed

    @property
    def earned(self) -> float:
        if self.error is None:
            return self.weight
        return self.weight * (self.right / self.compared if self.compared else 0.0)


@dataclass
class TestCredit:
    """What one test earned so far (kept by the trusted process, never by the student's)."""

    __test__ = False

    right: int = 0
    compared: int = 0
    blocks: list[_Block] = field(default_factory=list)
    current: _Block | None = None

    def fraction(self) -> float | None:
        """The share of the test's points earned, or None when nothing was counted."""
        if self.blocks:
            total = sum(b.weight for b in self.blocks)
            return sum(b.earned for b in self.blocks) / total if total else None
        if self.compared:
            return self.right / self.compared
        return None

    def failures(self, describe: Callable[[BaseException], str]) -> list[str]:
        """The messages of the sub-checks that failed (``describe`` words each error)."""
        return [f"[{b.name}] {describe(b.error)}" for b in self.blocks if b.error is not None]


_test: TestCredit | None = None


def begin_test() -> None:
    """Start counting for a new test (the grading plugin calls this)."""
    global _test
    _test = TestCredit()


def end_test() -> TestCredit:
    """Stop counting; what the test earned."""
    global _test
    credit, _test = _test or TestCredit(), None
    return credit


def record_elements(right: int, compared: int) -> None:
    """Count one comparison: ``right`` of ``compared`` elements were within tolerance."""
    if _test is None:
        return
    target = _test.current if _test.current is not None else _test
    target.right += int(right)
    target.compared += int(compared)


@contextmanager
def subcheck(name: str, weight: float = 1.0) -> Iterator[None]:
    """A named part of a partial-credit test, worth ``weight`` shares of its points.

    A failure inside the block (a failed check or assertion, an error raised by the
    student's code) ends the block, not the test; the test fails at its end with the
    messages of the failed blocks.  Outside a graded run (plain pytest), the block
    behaves like ordinary code: the failure propagates.

    Raises
    ------
    ValueError
        For a weight that is not a positive number, or a sub-check inside another.
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

    block = _Block(str(name), float(weight))
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
