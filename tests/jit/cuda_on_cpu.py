"""The fused kernels' CUDA text, compiled for the CPU and run thread after thread.

``difflab.jit.cuda_kernels`` writes CUDA C++ in which every thread writes
only its own elements (outputs at its positions, scatters gathered, its own
partial sum).  So running the threads of the grid one after another on the
CPU computes what the GPU computes, and the system's C++ compiler checks the
text: every rule's C line, the numbers' types, the windows, broadcasts, sums
and scatters.  ``kernels_of_cuda_on_cpu()`` makes fused lines on NumPy
arrays run that way (the tests' third kind of kernel, beside numba and NumPy).
"""

import contextlib
import ctypes
import hashlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from difflab.jit import cuda_kernels, fusion

#: What the CUDA names mean on the CPU: one thread at a time, in a loop over the grid.
PRELUDE = """#include <math.h>
#include <string.h>
// (as under NVRTC, which has no <math.h>: the kernel's text defines these itself)
#undef INFINITY
#undef NAN
static inline float __int_as_float(int bits) { float f; memcpy(&f, &bits, 4); return f; }
#define __device__
#define __forceinline__ inline
#define __global__
#define __restrict__ __restrict
struct difflab_dim { unsigned x; };
static difflab_dim blockIdx, threadIdx, blockDim, gridDim;
"""

_BUILT: dict[str, ctypes.CDLL] = {}
_FOLDER = Path(tempfile.mkdtemp(prefix="difflab-cuda-on-cpu-"))


def compiler() -> str:
    found = shutil.which("c++") or shutil.which("g++")
    if found is None:
        pytest.skip("no C++ compiler to check the generated CUDA code with")
    return found


def compile_for_cpu(text: str):
    """``launch(blocks, threads, args)`` running the kernel ``text`` on NumPy arrays."""
    params = re.search(r"void difflab_fused\((.*?)\) \{", text).group(1)
    names = [p.split()[-1] for p in params.split(", ")]
    driver = (f'extern "C" void difflab_grid(unsigned blocks, unsigned threads, {params}) {{\n'
              "    blockDim.x = threads; gridDim.x = blocks;\n"
              "    for (unsigned b = 0; b < blocks; b++)\n"
              "        for (unsigned t = 0; t < threads; t++) {\n"
              "            blockIdx.x = b; threadIdx.x = t;\n"
              f"            difflab_fused({', '.join(names)});\n"
              "        }\n}\n")
    source = PRELUDE + text + driver
    key = hashlib.sha256(source.encode()).hexdigest()[:24]
    library = _BUILT.get(key)
    if library is None:
        path = _FOLDER / f"k{key}.cpp"
        path.write_text(source)
        # -ffp-contract=off: no fused multiply-add, as the GPU's --fmad=false
        run = subprocess.run([compiler(), "-O1", "-ffp-contract=off", "-shared", "-fPIC",
                              "-o", str(path.with_suffix(".so")), str(path)],
                             capture_output=True, text=True)
        assert run.returncode == 0, f"the generated CUDA text does not compile:\n{run.stderr}"
        library = _BUILT[key] = ctypes.CDLL(str(path.with_suffix(".so")))

    def launch(blocks, threads, args):
        converted = [ctypes.c_longlong(int(a)) if isinstance(a, np.integer)
                     else ctypes.c_void_p(a.ctypes.data) for a in args]
        for a in args:  # (the kernel reads and writes flat, contiguous memory)
            assert isinstance(a, np.integer) or (a.flags.c_contiguous and a.ndim == 1)
        library.difflab_grid(ctypes.c_uint(blocks), ctypes.c_uint(threads), *converted)

    return launch


@contextlib.contextmanager
def kernels_of_cuda_on_cpu():
    """Inside the block, fused lines on float64/float32 NumPy arrays run the CUDA kernel
    compiled for the CPU."""
    old_for, old_kernel = fusion._cupy_kernels_for, fusion._cuda_kernel

    def for_numpy(inputs):
        return bool(inputs) and all(type(a) is np.ndarray for a in inputs) \
            and inputs[0].dtype in (np.float64, np.float32) \
            and all(a.dtype == inputs[0].dtype for a in inputs)

    def cpu_kernel(layout):
        kernel = old_kernel(layout)
        return None if kernel is None else cuda_kernels.CudaKernel(layout, compile_for_cpu)

    old_numba = fusion.USE_NUMBA
    # (USE_NUMBA off: a program's prepared numba call would bypass the fused line's forward)
    fusion._cupy_kernels_for, fusion._cuda_kernel = for_numpy, cpu_kernel
    fusion.USE_NUMBA = False
    fusion.FUSED._kernels.clear()
    try:
        yield
    finally:
        fusion._cupy_kernels_for, fusion._cuda_kernel = old_for, old_kernel
        fusion.USE_NUMBA = old_numba
        fusion.FUSED._kernels.clear()
