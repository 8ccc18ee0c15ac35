"""The four differentiators side by side: accuracy, expression swell, cost.

Three harnesses, each returning a :class:`~difflab.compare.report.Report`
(records that print as a table, export as CSV or JSON, and draw themselves
with matplotlib):

* :func:`accuracy` and :func:`step_sweep`: each method's derivative against a
  50-digit mpmath reference, float64 beside float32; the V-shaped error of
  finite differences against the step h.
* :func:`blowup` and :func:`logistic_table`: how large the symbolic
  derivative grows with depth (with and without common-subexpression
  elimination) beside the reverse-mode tape, for the logistic map of Baydin
  et al. (2018, Table 1) and other families.
* :func:`cost`: time, peak memory and evaluations of a gradient or Jacobian as
  the number of inputs grows, with each method's fitted growth exponent.

>>> from difflab import compare
>>> report = compare.accuracy("sin(x) * exp(-x**2)", at="x=1.3")
>>> print(report)                  # a table           # doctest: +SKIP
>>> report.save_plot("acc.png")    # a plot            # doctest: +SKIP
>>> report.to_json()               # plain data        # doctest: +SKIP

The same runs are on the command line as ``difflab compare``, ``difflab
steps``, ``difflab blowup``, ``difflab cost`` and ``difflab tour``.
"""

from difflab.compare.accuracy import AccuracyReport, StepReport, accuracy, reference, step_sweep
from difflab.compare.blowup import (
    BlowupReport,
    Estimate,
    TooExpensiveError,
    blowup,
    estimate,
    logistic_table,
)
from difflab.compare.cost import CostReport, cost, fit_exponent
from difflab.compare.methods import METHODS, parse_methods
from difflab.compare.problems import FAMILIES, PROBLEMS, Family, Problem
from difflab.compare.report import Column, Report
from difflab.compare.tour import tour

__all__ = [
    "FAMILIES",
    "METHODS",
    "PROBLEMS",
    "AccuracyReport",
    "BlowupReport",
    "Column",
    "CostReport",
    "Estimate",
    "Family",
    "Problem",
    "Report",
    "StepReport",
    "TooExpensiveError",
    "accuracy",
    "blowup",
    "cost",
    "estimate",
    "fit_exponent",
    "logistic_table",
    "parse_methods",
    "reference",
    "step_sweep",
    "tour",
]
