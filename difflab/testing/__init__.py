"""PyTorch's ``torch.testing`` (:func:`assert_close`, :func:`make_tensor`), and tools for
testing difflab itself (not part of the teaching path).

:mod:`difflab.testing.fake_cupy` is a stand-in for CuPy that runs on the CPU, so
that the GPU code paths run on every test run, also on machines without a GPU.
:mod:`difflab.testing.samples` is the one table of sample inputs: every
primitive and public function, with the edges a stranger brings (inf, nan,
-0.0, ties), read by the generic tests of every interpreter.
"""

from difflab.testing.comparison import assert_close, make_tensor

__all__ = ["assert_close", "make_tensor"]
