"""``difflab tour``: a short run of every harness on built-in functions.

It prints each table and writes each plot (PNG and SVG) with its data (CSV
and JSON) into one folder; the whole tour takes well under a minute on two
cores.  :func:`tour` is the library side of the command.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from difflab.compare.accuracy import accuracy, step_sweep
from difflab.compare.blowup import blowup, logistic_table
from difflab.compare.cost import cost
from difflab.compare.report import Report

__all__ = ["TOUR_EXPRESSION", "TOUR_POINT", "tour"]

#: The function of the accuracy and step-size parts of the tour.
TOUR_EXPRESSION = "exp(sin(x)) / (1 + x**2)"
TOUR_POINT = "x=1.3"

ProgressFactory = Callable[[str, int], contextlib.AbstractContextManager]


@contextlib.contextmanager
def _no_progress(label: str, total: int) -> Iterator[Callable[[int], None]]:
    yield lambda n: None


def tour(
    out: str | Path = "difflab-tour",
    echo: Callable[[str], None] = print,
    progress: ProgressFactory | None = None,
    quick: bool = False,
) -> dict[str, Any]:
    """Run accuracy, step sweep, Table 1, blowup and cost; print tables; save plots.

    Parameters
    ----------
    out : str or Path
        Folder for the plots and data (created if needed).
    echo : callable
        Prints one block of text (a table).
    progress : callable, optional
        ``progress(label, total)`` returns a context manager yielding
        ``update(n)``, for progress bars.
    quick : bool
        Smaller sizes (for tests): the same steps, a few seconds in all.

    Returns
    -------
    dict
        ``{"reports": {name: Report}, "files": [Path, ...], "seconds": float}``.

    Raises
    ------
    OSError
        When ``out`` cannot be created or written (``difflab tour`` reports it as a
        usage error).

    See Also
    --------
    accuracy, step_sweep, logistic_table, blowup, cost : the harnesses it runs.

    Examples
    --------
    The quick tour into a temporary folder (about 10 s of CPU: it draws 6 plots):

    >>> import tempfile
    >>> from difflab.compare import tour
    >>> printed = []
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     result = tour(folder, echo=printed.append, quick=True)
    ...     files = sorted(path.name for path in result["files"])
    >>> sorted(result["reports"])                     # doctest: +NORMALIZE_WHITESPACE
    ['accuracy', 'blowup-logistic', 'blowup-nested-sin', 'cost-sum-sin', 'cost-tanh-layer',
     'steps', 'table1']
    >>> print(printed[0].splitlines()[0])               # each table, printed as it is made
    Derivative of f = exp(sin(x)) / (1 + x**2) at x=1.3
    >>> [name for name in files if name.startswith("accuracy")]   # data and plots
    ['accuracy.csv', 'accuracy.json', 'accuracy.png', 'accuracy.svg']
    >>> len(files)                                      # table1 has no plot
    26
    """
    start = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    progress = progress or _no_progress
    reports: dict[str, Report] = {}
    files: list[Path] = []

    def save(name: str, report: Report, plot: bool = True) -> None:
        reports[name] = report
        echo(report.to_text() + "\n")
        report.to_csv(out / f"{name}.csv")
        report.to_json(out / f"{name}.json")
        files.extend([out / f"{name}.csv", out / f"{name}.json"])
        if plot:
            files.extend(report.save_plots(out / name))

    with progress("accuracy", 2) as update, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny steps warn on purpose in the sweep
        save("accuracy", accuracy(TOUR_EXPRESSION, TOUR_POINT))
        update(1)
        save("steps", step_sweep(TOUR_EXPRESSION, "x=1.0",
                                 steps=_steps(2 if quick else 4)))
        update(1)

    save("table1", logistic_table(4), plot=False)
    depths = range(1, 8 if quick else 10)
    with progress("blowup: logistic map", len(depths)) as update:
        save("blowup-logistic", blowup("logistic", depths, max_seconds=None, progress=update))
    with progress("blowup: nested sin", len(depths)) as update:
        save("blowup-nested-sin", blowup("nested-sin", depths, max_seconds=None,
                                         progress=update))

    ns = (10, 100, 1000) if quick else (10, 100, 1000, 10_000)
    with progress("cost: gradient", 4 * len(ns)) as update:
        save("cost-sum-sin", cost("sum-sin", ns, max_seconds=0.5 if quick else 4.0,
                                  min_time=0.02 if quick else 0.05, progress=update))
    ms = (1, 10, 100) if quick else (1, 10, 100, 1000)
    with progress("cost: Jacobian", 4 * len(ms)) as update:
        save("cost-tanh-layer", cost("tanh-layer", ns=(30,) if quick else (100,), ms=ms,
                                     max_seconds=0.5 if quick else 4.0,
                                     min_time=0.02 if quick else 0.05, progress=update))
    files = [f for f in files if f.exists()]
    return {"reports": reports, "files": sorted(set(files)),
            "seconds": time.perf_counter() - start}


def _steps(per_decade: int) -> list[float]:
    import numpy as np

    return list(np.logspace(-16, 0, 16 * per_decade + 1))
