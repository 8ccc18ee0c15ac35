"""Every public name of difflab has a complete numpydoc docstring whose examples run.

The rules (summary, Parameters, Returns, Examples that pass; a Tensor method may forward
to a complete function instead) are in ``tests/docs/docstring_rules.py``.  The names not
there yet are listed, each with what it lacks, in ONE dict:
``tests/docs/docstring_exemptions.py``.  The list only shrinks: a name that becomes
complete must leave it (``test_no_exemption_is_stale``).  Regenerate it, and print the
counts per namespace, with::

    python -m tests.docs.test_docstrings            # the counts
    python -m tests.docs.test_docstrings --write    # rewrite the exemptions from the code
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.docs.docstring_exemptions import EXEMPT
from tests.docs.docstring_rules import NAMESPACES, SECTION, docstring, problems, run_examples
from tests.docs.docstring_rules import names as public


def names(namespace: str) -> Iterator[tuple[str, Any, bool]]:
    """``(qualified name, object, is a Tensor method)`` for each public name."""
    for name, obj, method in public(namespace):
        yield f"{namespace}.{name}", obj, method


def report() -> dict[str, dict[str, Any]]:
    """Per namespace: the count of names, complete ones, ones with an example, and what
    each incomplete name lacks."""
    table = {}
    for namespace in NAMESPACES:
        lacking = {}
        with_example = 0
        entries = list(names(namespace))
        for qualified, obj, method in entries:
            missing = problems(obj, method=method)
            if missing:
                lacking[qualified] = missing
            doc = docstring(obj)
            with_example += SECTION["Examples"] in doc and ">>>" in doc
        table[namespace] = {"names": len(entries), "complete": len(entries) - len(lacking),
                            "with_example": with_example, "lacking": lacking}
    return table


@pytest.fixture(scope="module")
def table() -> dict[str, dict[str, Any]]:
    return report()


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_public_name_is_documented_or_exempt(table, namespace):
    lacking = {name: missing for name, missing in table[namespace]["lacking"].items()
               if name not in EXEMPT}
    assert not lacking, (
        f"{len(lacking)} public name(s) of {namespace} lack a complete docstring (numpydoc: "
        f"a one-line summary, Parameters, Returns, an Examples section): "
        + "; ".join(f"{n}: {', '.join(m)}" for n, m in sorted(lacking.items())[:20]))


def test_no_exemption_is_stale(table):
    """An exempt name still exists and is still incomplete (else it leaves the list)."""
    lacking = {n for entry in table.values() for n in entry["lacking"]}
    stale = sorted(set(EXEMPT) - lacking)
    assert not stale, (f"{len(stale)} exemption(s) no longer needed (the name is complete or "
                       f"gone): {stale[:20]}; run `python -m tests.docs.test_docstrings --write`")


def test_no_parameters_section_lists_none():
    """A callable without parameters leaves the section out (numpydoc would render a
    parameter named "None")."""
    empty = SECTION["Parameters"] + "\nNone\n"

    def with_members() -> Iterator[tuple[str, Any]]:
        for namespace in NAMESPACES:
            for qualified, obj, _ in names(namespace):
                yield qualified, obj
                if isinstance(obj, type):  # (the methods of a public class too)
                    for member, value in vars(obj).items():
                        yield f"{qualified}.{member}", value

    offenders = sorted({qualified for qualified, obj in with_members()
                        if empty in docstring(obj) + "\n"})
    assert not offenders, f"leave the Parameters section out in: {offenders[:20]}"


def test_every_exemption_gives_a_reason():
    assert all(isinstance(r, str) and len(r) > 10 for r in EXEMPT.values())


#: Namespaces whose examples need an optional package (an extra): skipped without it.
NEEDS = {"difflab.onnx": "onnx"}


#: The examples that take seconds, each with why: they run once, in
#: ``test_the_slow_examples_run`` (marked slow), not with the rest of their namespace.
#: Only names whose example cannot be made fast without ceasing to show what the name
#: does belong here (measured on 2 loaded cores; the grading ones start sandboxed
#: child processes that import Python, NumPy and difflab).
SLOW_EXAMPLES = {
    "difflab.grading.grade": "grades a two-test assignment in a sandboxed child process "
                             "(~6-16 s)",
    "difflab.grading.check": "a student's check is a sandboxed grading (~6-12 s)",
    "difflab.grading.grade_batch": "grades two students, each in a sandboxed child "
                                   "process (~7-12 s)",
    "difflab.compare.tour": "runs every harness, quick sizes, and draws its 10 plots "
                            "(~10 s of CPU, ~30 s on 2 loaded cores)",
}


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_the_examples_run(namespace):
    """Each docstring example runs as a doctest, its printed output checked (the slow
    ones in ``test_the_slow_examples_run``)."""
    if namespace in NEEDS:
        pytest.importorskip(NEEDS[namespace], reason=f"{namespace}'s examples need it")
    seen: set[int] = set()
    failed = []
    for qualified, obj, _ in names(namespace):
        doc = docstring(obj)
        if ">>>" not in doc or id(obj) in seen or qualified in SLOW_EXAMPLES:
            continue
        seen.add(id(obj))
        result = run_examples(obj, qualified)
        if result.failed:
            failed.append(qualified)
    assert not failed, f"the examples of {failed} fail (run them with doctest to see how)"


def slow_example(qualified: str) -> Any:
    """The public object ``qualified`` names (``difflab.compare.tour``: the function, not
    the module of the same name)."""
    namespace, _, name = qualified.rpartition(".")
    return dict((n, obj) for n, obj, _ in names(namespace)).get(qualified)


def test_every_slow_example_is_a_public_name_with_an_example():
    """The list cannot hide a name: each entry is a public name that has an example."""
    for qualified in SLOW_EXAMPLES:
        obj = slow_example(qualified)
        assert obj is not None, f"{qualified} is not a public name"
        assert ">>>" in docstring(obj), f"{qualified} has no example"


@pytest.mark.slow
@pytest.mark.parametrize("qualified", sorted(SLOW_EXAMPLES))
def test_the_slow_examples_run(qualified):
    """The examples of SLOW_EXAMPLES run as doctests, their output checked."""
    result = run_examples(slow_example(qualified), qualified)
    assert result.attempted and not result.failed, (
        f"the examples of {qualified} fail (run them with doctest to see how)")


def test_the_checker_finds_what_a_docstring_lacks():
    """The rules themselves: a bare summary lacks everything; a full one lacks nothing."""
    def bare(x):
        """Twice x."""

    def full(x):
        """Twice x.

        Parameters
        ----------
        x : float

        Returns
        -------
        float

        Examples
        --------
        >>> 2 * 3
        6
        """

    def forwarding(self):
        """The sine.  See :func:`difflab.sin`."""

    assert problems(bare) == ["parameters", "returns", "examples"]
    assert problems(full) == []
    assert run_examples(full, "full").failed == 0
    assert problems(forwarding, method=True) in ([], ["a complete difflab.sin"])
    assert problems(forwarding) == ["returns", "examples"]
    assert "summary" in problems(lambda: None)


# -------------------------------------------------------------- the exemptions file

def write_exemptions(table: dict[str, dict[str, Any]]) -> None:
    """Rewrite ``docstring_exemptions.py`` from the code's docstrings as they are."""
    lines = [
        '"""The public names whose docstrings are not complete yet, each with what it lacks.',
        "",
        "Generated by ``python -m tests.docs.test_docstrings --write`` (do not edit by hand:",
        "complete the docstring, then regenerate).  Counts when generated (names / complete /",
        "with an example):",
        "",
    ]
    for namespace, entry in table.items():
        lines.append(f"* {namespace}: {entry['names']} / {entry['complete']} / "
                     f"{entry['with_example']}")
    lines += ['"""', "", "EXEMPT: dict[str, str] = {"]
    for entry in table.values():
        for name, missing in sorted(entry["lacking"].items()):
            lines.append(f"    {name!r}: {'lacks ' + ', '.join(missing)!r},")
    lines += ["}", ""]
    path = Path(__file__).with_name("docstring_exemptions.py")
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str]) -> None:
    table = report()
    print(f"{'namespace':28} {'names':>6} {'complete':>9} {'example':>8}")
    for namespace, entry in table.items():
        print(f"{namespace:28} {entry['names']:6} {entry['complete']:9} "
              f"{entry['with_example']:8}")
    total = {k: sum(e[k] for e in table.values()) for k in ("names", "complete",
                                                               "with_example")}
    print(f"{'all':28} {total['names']:6} {total['complete']:9} {total['with_example']:8}")
    if "--write" in argv:
        write_exemptions(table)


if __name__ == "__main__":
    main(sys.argv[1:])
