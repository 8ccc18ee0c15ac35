"""``import difflab`` does not import sympy; the symbolic method and sympy values still work.

Each check runs in a fresh interpreter, since this test session has sympy imported
already.  They check which modules are loaded, never how long anything takes.
"""

from __future__ import annotations

import doctest
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_difflab_does_not_import_sympy():
    assert run_fresh("""
        import sys
        import difflab
        import difflab.diff.differentiators
        print(sorted(m for m in ("sympy", "difflab.diff.symbolic") if m in sys.modules))
    """) == "[]"


def test_symbolic_method_is_listed_and_imported_when_used():
    assert run_fresh("""
        import sys
        import difflab as dl
        assert "symbolic" in dl.differentiators.available()
        assert "sympy" not in sys.modules
        print(dl.derivative(lambda x: x * dl.sin(x), method="symbolic")(0.0))
        print(type(dl.differentiators.get("symbolic")) is dl.differentiators.Symbolic)
        print(dl.differentiators.get("symbolic", cse=False).cse)
    """).split() == ["0.0", "True", "False"]


def test_sympy_value_imports_its_handler():
    # a sympy expression made by the user, before difflab's symbolic module was imported
    assert run_fresh("""
        import sympy
        import difflab as dl
        x = sympy.Symbol("x")
        print(dl.sin(x), dl.maximum(x, 1.0), dl.exp(2 * x))
    """) == "sin(x) Max(1.0, x) exp(2*x)"


def test_symbolic_names_import_from_their_old_places():
    assert run_fresh("""
        from difflab.diff import SymbolicTraceError
        from difflab.diff.differentiators import Symbolic
        from difflab.diff.symbolic import SymbolicTraceError as same
        print(SymbolicTraceError is same, Symbolic.__module__)
    """) == "True difflab.diff.symbolic"


def test_registering_a_method_under_the_lazy_name_replaces_it():
    assert run_fresh("""
        import sys
        import difflab as dl
        dl.differentiators.register("symbolic", dl.differentiators.Forward)
        print(type(dl.differentiators.get("symbolic")).__name__, "sympy" in sys.modules)
    """) == "Forward False"


def test_register_type_module_example_runs():
    from difflab import functions

    test, = doctest.DocTestFinder().find(functions.register_type_module,
                                         "register_type_module", globs={})
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.tries and not runner.failures
