"""Tools for testing difflab itself (not part of the teaching path).

:mod:`difflab.testing.fake_cupy` is a stand-in for CuPy that runs on the CPU, so
that the GPU code paths run on every test run, also on machines without a GPU.
"""
