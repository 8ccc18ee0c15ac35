"""The order the suite runs in: the files with a slow test first (tests/conftest.py).

Under pytest-xdist's worksteal each worker starts with half of the tests in this order;
a minutes-long test that came last would run alone at the end while the other core
idles.
"""

from pathlib import Path

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent


def test_the_files_with_a_slow_test_run_first_each_kept_together_and_in_order(pytester):
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    pytester.makeini("[pytest]\nmarkers =\n    slow: takes more than a few seconds\n")
    pytester.makepyfile(
        test_a="def test_a1():\n    pass\n\ndef test_a2():\n    pass\n",
        test_b=("import pytest\n\ndef test_b1():\n    pass\n\n"
                "@pytest.mark.slow\ndef test_b2():\n    pass\n\ndef test_b3():\n    pass\n"),
        test_c="def test_c1():\n    pass\n",
        test_d="import pytest\n\npytestmark = pytest.mark.slow\n\ndef test_d1():\n    pass\n",
    )
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    collected = [line for line in result.outlines if "::" in line]
    assert collected == [
        "test_b.py::test_b1", "test_b.py::test_b2", "test_b.py::test_b3",  # (one file: together)
        "test_d.py::test_d1",
        "test_a.py::test_a1", "test_a.py::test_a2", "test_c.py::test_c1",
    ]
