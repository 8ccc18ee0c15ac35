"""Helpers shared by the grading tests (a uniquely named module, importable from them)."""

from __future__ import annotations

import textwrap
from pathlib import Path

COURSE = Path(__file__).resolve().parents[2] / "examples" / "course"

#: Short limits keep the suite fast; the memory limit leaves room for numpy + difflab.
FAST = {"timeout": 3.0, "memory_mb": 1024, "total_timeout": 120.0}


def write(path: Path, text: str) -> Path:
    """Write dedented ``text`` to ``path`` (creating folders) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def by_name(results: dict) -> dict:
    """The results' tests keyed by test function name (the part after '::')."""
    return {t["name"].split("::")[-1]: t for t in results["tests"]}
