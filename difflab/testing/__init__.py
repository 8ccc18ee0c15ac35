"""Tools for testing difflab itself (not part of the teaching path).

:mod:`difflab.testing.fake_cupy` is a stand-in for CuPy that runs on the CPU, so
that the GPU code paths run on every test run, also on machines without a GPU.
:mod:`difflab.testing.samples` is the one table of sample inputs: every
primitive and public function, with the edges a stranger brings (inf, nan,
-0.0, ties), read by the generic tests of every interpreter.
"""
