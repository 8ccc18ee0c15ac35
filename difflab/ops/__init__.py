"""Primitive operations: each one's forward next to its derivative rule.

* ``elementwise``: the table of scalar rules (sin -> cos, exp -> exp, ...),
  shared by every differentiator;
* ``structural``: sums, matmul, reshapes, indexing, ... with JVP and VJP;
* ``functions``: the public math functions (``difflab.sin``, ...) that
  dispatch on what flows through them.
"""
