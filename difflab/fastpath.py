"""Speed shortcuts: the same numbers in fewer passes over memory.  Skip this on a first read.

Nothing here changes a result.  The plain path (the rules in ``difflab/ops``
and the backward walk in ``difflab/autograd/engine.py``) is the whole
mathematics; each shortcut below replaces one plain step by a faster one that
computes the same bits, and hooks in where that step is defined:

==============================  =================================  ===========================
shortcut                        replaces                           hooked in at
==============================  =================================  ===========================
1. allocator tuning             glibc's return of freed memory     import of difflab
2. adjoints added in place      ``x̄ = x̄ + g`` (a new array)        ``engine.Adjoints``
3. slices' adjoints unwritten   scatter of ȳ into ``zeros(x)``     ``structural.Index.vjp``
4. scaling by a number          ``ȳ · f'(x)`` on broadcast arrays  ``elementwise_primitives._scale``
5. the square's derivative      ``2·a¹`` (a copy, then a product)  ``elementwise.Pow.d_da``
6. fresh adjoints kept          the copy of a gradient into        ``jit.joint._Call.backward``
                                ``.grad``
7. compiled grad's later calls  every method's per-call checks     ``diff.compiled.Compiled.grad``,
   (and jacobian's, hessian's)  (in ``diff/compiled_steady.py``)   ``.jacobian``, ``.hessian``
8. ``dl.compile``'s later       building the full guard, the       ``CompiledFunction.__call__``
   calls (``jit/steady.py``)    general replay, walking the        (``jit.compiler``)
                                module tree again, ``apply``'s
                                steps for the replayed output's
                                record
9. prepared fused lines         the fused forward's look-ups and   ``jit.program.Program``
                                copies at every call, numba's
                                dispatch on the argument types,
                                a ``Context`` per call
10. one-record backward walk    gathering, sorting and scanning    ``engine.run_backward``
    (``engine_steady.py``)      the tape's records
11. flat optimizer updates      a dozen NumPy calls per            ``optim.Optimizer.step``
    (``optim/foreach.py``)      parameter (Adam's: one numba
                                loop, where numba is loaded;
                                plain SGD's ``p -= lr * g``: one
                                loop per parameter there)
12. eager recording             ``apply``'s general steps for a    ``engine.apply``
    (``engine_quick.py``)       call of one or two NumPy tensors
                                or numbers
13. eager walk                  ``run_backward``'s loop, its       ``engine.run_backward``
    (``engine_quick.py``)       checks for readers and hooks
14. prepared plain steps        a primitive's checks and notes     ``jit.program.Program``
    (``prepared_steps.py``)     for its VJP (sum, reshape,
                                permute, matmul, index, cat,
                                add); NumPy's call per row of
                                a sum, mean, softmax or
                                normalize along the last axis,
                                and of a linear's bias added
                                to many short rows; a loss's
                                nll_loss, a matrix's
                                scatter_add of two index
                                arrays (``row_kernels.py``)
15. programs written out        ``Program.run``'s loop over its    ``jit.program.Program.run``
    (``program_source.py``)     steps (one function, a local
                                per slot)
16. a convolution's backward    ``Ȳ Xᵀ`` with the long columns     ``ops.nn_conv.Conv2d.vjp``
    (``ops/conv_products.py``)  read transposed (computed as
                                ``(X Ȳᵀ)ᵀ``); a same-size
                                convolution's ``col2im`` (one
                                NumPy call per output row and
                                kernel position; here one flat
                                add per kernel position)
17. a max pool's backward on    ``ȳ · mask`` for all the windows,  ``ops.nn_conv.MaxPool2d.vjp``
    tiles                       added into zeros by ``col2im``
    (``ops/pool_tiles.py``)     (windows that tile the image:
                                each product written in place)
18. a loss's backward           ``backward()``'s general steps     ``Tensor.backward``
    (``engine_loss.py``)        (lists of outputs and seeds, the
                                recorder, ``run_backward``'s
                                layers) for a scalar loss whose
                                tape is one record
19. fused lines by rows         a fused line's loop reading a      ``jit.program.PreparedKernel``
    (``jit/row_loops.py``)      bias or a column through a
                                counter moved at each element
                                (no SIMD); here a loop over rows
20. relu and sign loops         NumPy's ``maximum(0, x)`` and      ``jit.prepared_steps``
    (``jit/sign_loops.py``)     ``sign(y)`` (a ReLU and its
                                backward's mask) on large float
                                arrays: one SIMD loop each
==============================  =================================  ===========================

Set the environment variable ``DIFFLAB_FASTPATH=0`` before importing difflab
to run the plain path only: every gradient is then the same, bit for bit
(``tests/core/test_core_backward_shortcuts.py`` checks it), just slower.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from difflab import backend


def _enabled_from_environment() -> bool:
    value = os.environ.get("DIFFLAB_FASTPATH", "1").strip().lower()
    if value in ("1", "on", "true", "yes", ""):
        return True
    if value in ("0", "off", "false", "no"):
        return False
    raise ValueError(
        f"DIFFLAB_FASTPATH={value!r} is not understood: set it to 0 (plain path only, "
        f"no speed shortcuts) or 1 (the default)."
    )


ENABLED: bool = _enabled_from_environment()
"""Whether the shortcuts are on (read once, from ``DIFFLAB_FASTPATH``, at import)."""


# ------------------------------------------------------------ 1. the allocator


def keep_freed_memory_for_reuse() -> None:
    """Ask glibc's malloc to keep freed large blocks instead of unmapping them.

    By default a NumPy array of more than a few MB is given its own pages by
    the OS and returned on free, so every temporary of a large computation
    pays for fresh page faults (about as long as the arithmetic itself).
    A backward pass makes many such temporaries.  Keeping freed memory in the
    heap plays the role of PyTorch's caching allocator; it applies to plain
    NumPy code in the same process just as much.  Set DIFFLAB_DEFAULT_MALLOC=1
    (or DIFFLAB_FASTPATH=0) to leave the allocator alone.
    """
    if os.environ.get("DIFFLAB_DEFAULT_MALLOC") or not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (musl, ...): nothing to tune
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    libc.mallopt(m_mmap_threshold, 32 * 2**20)  # the largest value glibc accepts
    libc.mallopt(m_trim_threshold, 512 * 2**20)


if ENABLED:
    keep_freed_memory_for_reuse()


# ------------------------------------------------- 2. adjoints added in place


def may_write_into(array: Any) -> bool:
    """May a shortcut write into ``array``'s memory (given that no one else holds it)?

    NumPy answers in ``flags.writeable``: False for a broadcast view and for a
    NumPy scalar.  CuPy has no such flag (a real GPU run found code that read
    it): every CuPy array can be written, a broadcast view too, where one
    write would land in many elements through the zero strides.  There only a
    contiguous array, which has no zero stride, counts as writeable.
    """
    flags = getattr(array, "flags", None)
    if flags is None:
        return False
    if hasattr(flags, "writeable"):
        return bool(flags.writeable)
    return bool(flags.c_contiguous or flags.f_contiguous)



class InPlaceAdjoints(dict):
    """``engine.Adjoints`` with sums written into buffers this pass allocated.

    The plain store computes ``x̄ = x̄ + g``, a new array for every extra use
    of a value.  Adding in place (``x̄ += g``) saves that array, but only a
    buffer that nobody else holds may be changed: an adjoint handed back by
    a VJP may be shared (an add hands the same ȳ to both inputs) or be a
    read-only broadcast view.  So the store remembers the buffers it
    allocated itself (``owned``, id -> buffer) and updates only those.

    It also accepts :class:`SliceAdjoint` values (shortcut 3) and adds them
    into ``x̄[index]`` only.
    """

    __slots__ = ("owned",)

    def __init__(self) -> None:
        super().__init__()
        self.owned: dict = {}  # (holding a buffer also keeps its id from being reused)

    def add(self, key: Any, g: Any) -> None:
        """``x̄ += g`` for ``key``'s adjoint, in place where that is safe."""
        if type(g) is FreshAdjoint:  # (shortcut 6: an array nobody else holds)
            g = self._own(g.values)
        old = self.get(key)
        if old is None:  # the common case: the first adjoint to arrive
            self[key] = g
            return
        if type(old) is SliceAdjoint:  # a second adjoint arrives: write the first out
            old = self[key] = self._own(old.dense())
        if type(g) is SliceAdjoint:
            if self._may_update(old, g.values) and old.shape == g.shape:
                old[g.index] += g.values  # touches the slice only, not all of x
                return
            g = g.dense()
        if self._may_update(old, g) and old.shape == g.shape:
            old += g  # (with create_graph, a recorded Tensor adjoint must not go in place)
        else:
            total = self[key] = old + g
            if type(total) is np.ndarray or may_write_into(total):  # (a sum just made: ours)
                self.owned[id(total)] = total

    def take(self, key: Any) -> Any:
        """Remove and return ``key``'s adjoint, written out whole (``None`` if none)."""
        g = self.pop(key, None)
        if type(g) is SliceAdjoint:  # the record's vjp needs the whole array
            return g.dense()
        # From here on the VJP may pass g along to several inputs: no longer ours.
        self.owned.pop(id(g), None)
        return g

    def total(self, key: Any) -> tuple[Any, bool]:
        """A leaf's total adjoint, whole, and whether this pass allocated it (no copy needed)."""
        g = self.get(key)
        if type(g) is SliceAdjoint:
            g = self[key] = self._own(g.dense())
        return g, g is not None and self.owned.get(id(g)) is g

    def _own(self, buffer: Any) -> Any:
        self.owned[id(buffer)] = buffer
        return buffer

    def _may_update(self, old: Any, g: Any) -> bool:
        """May ``g`` be added into ``old`` in place?  Only into our own buffer, same kind."""
        return self.owned.get(id(old)) is old and type(g) is type(old) and g.dtype == old.dtype


class FreshAdjoint:
    """Shortcut 6: an adjoint a VJP allocated for this backward pass alone.

    The store may then keep ``values`` as its own buffer, and a leaf may take
    it as its ``.grad`` without the copy an adjoint that others may hold needs.
    A compiled loss's VJP hands over the gradients its forward graph computed
    (``difflab.jit.joint``).  Only with the shortcuts on (the plain store
    would not know the wrapper).
    """

    __slots__ = ("values",)

    def __init__(self, values: Any) -> None:
        self.values = values


# --------------------------------------------- 3. slices' adjoints unwritten


class SliceAdjoint:
    """The adjoint of ``x[index]`` (a basic index: slices, integers), not yet written out.

    It stands for the array ``zeros(shape)`` with ``values`` at ``[index]``.
    Writing that array costs a pass over all of x just to put zeros down,
    which is wasted when the adjoint is about to be added to another one:
    :class:`InPlaceAdjoints` instead adds ``values`` into the other's
    ``[index]``, in place.  (Rosenbrock's f reads ``x[1:]`` once and
    ``x[:-1]`` twice, so three adjoints of slices meet at x.)
    """

    __slots__ = ("values", "index", "shape")

    def __init__(self, values: Any, index: Any, shape: tuple) -> None:
        self.values, self.index, self.shape = values, index, tuple(shape)

    @property
    def dtype(self) -> Any:
        return self.values.dtype

    def conjugate(self) -> SliceAdjoint:
        """The complex conjugate, still unwritten (``numpy.conj`` calls this)."""
        return SliceAdjoint(self.values.conjugate(), self.index, self.shape)

    conj = conjugate  # (complex_adjoints calls the method: CuPy's conj ufunc would not)

    @property
    def real(self) -> SliceAdjoint:
        """The real part, still unwritten (what a real input receives)."""
        return SliceAdjoint(self.values.real, self.index, self.shape)

    def dense(self) -> Any:
        """The array itself: zeros, with the values in their slice."""
        out = backend.array_module(self.values).zeros(self.shape, dtype=self.values.dtype)
        out[self.index] = self.values
        return out


_unwritten_namespaces: dict = {}


def _namespace_with_unwritten_slices(xp: types.ModuleType) -> types.ModuleType:
    """``xp`` with ``scatter_add`` of a basic index returning a :class:`SliceAdjoint`."""
    namespace = _unwritten_namespaces.get(xp)
    if namespace is None:
        namespace = types.ModuleType(xp.__name__)
        namespace.__dict__.update(vars(xp))
        scatter_add = xp.scatter_add

        def unwritten_scatter_add(values: Any, index: Any, shape: tuple) -> Any:
            if backend.is_basic_index(index):
                return SliceAdjoint(values, index, shape)
            return scatter_add(values, index, shape)

        namespace.scatter_add = unwritten_scatter_add
        _unwritten_namespaces[xp] = namespace
    return namespace


def unwritten_slices(vjp: Callable) -> Callable:
    """Decorator for a VJP that returns ``xp.scatter_add(ȳ, index, shape)`` as it is.

    Inside the decorated VJP, the scatter of a basic index is left unwritten
    (a :class:`SliceAdjoint`); the adjoint store adds it where it belongs.
    Only for VJPs that hand that result straight back to the engine; a
    recorded backward (``create_graph``, where ȳ is a Tensor) is left alone.
    """
    if not ENABLED:
        return vjp

    @functools.wraps(vjp)
    def vjp_with_unwritten_slices(ctx: Any, xp: Any, g: Any, *saved: Any) -> Any:
        # raw arrays: not a recorded backward, nor dual numbers (forward over reverse)
        if xp is backend.array_module(g) and (type(g) is np.ndarray or backend.is_gpu_array(g)):
            xp = _namespace_with_unwritten_slices(xp)
        return vjp(ctx, xp, g, *saved)

    return vjp_with_unwritten_slices


# ------------------------------------------------------ 4. scaling by a number


# Below this many elements an array is cheap to read and write; the shortcuts
# in scale save passes over memory, so they only pay for large arrays.
LARGE = 4096


def single_value(g: Any) -> Any:
    """The number ``g`` holds everywhere, if it is one number broadcast to a shape.

    The adjoint a sum hands back is such a view (every stride 0): ȳ once, seen
    as many.  Multiplying by it is multiplying by a number, which reads one
    array instead of two, and a number times a number needs no array at all.
    """
    if any(g.strides):
        return None
    return g[(0,) * g.ndim]


def scale(xp: Any, g: Any, factor: Any, saved: tuple = ()) -> Any:
    """g · factor, as the plain ``elementwise_primitives._scale``, in fewer passes over memory.

    Skips the multiplication when the factor is the number 1.  For large
    arrays, two more shortcuts: when ``g`` is one number broadcast (see
    :func:`single_value`) it is used as that number; and when the factor is
    a temporary array the rule just computed (not one of the ``saved``
    arrays, and already of the product's shape and dtype), the product is
    written into its memory, so a large backward pass allocates half as much.
    """
    if type(factor) is float and factor == 1.0:
        return g
    if type(g) is np.ndarray and g.size < LARGE:  # (the common small array, checked first)
        return g * factor
    if not hasattr(g, "strides") or g.size < LARGE:  # (a Tensor, with create_graph)
        return g * factor
    value = single_value(g)
    if not hasattr(factor, "shape"):  # a number
        return g * factor if value is None else xp.broadcast_to(value * factor, g.shape)
    temporary = (
        type(factor) is type(g)
        and may_write_into(factor)
        and factor.shape == g.shape
        and factor.dtype == g.dtype
        and not any(factor is s for s in saved)
    )
    if value is not None and factor.shape == g.shape:
        if not temporary:
            return factor * value
        if value != 1:
            factor *= value
        return factor
    if temporary:
        factor *= g
        return factor
    return g * factor


def scaling(plain_scale: Callable) -> Callable:
    """Decorator for the plain ``ȳ · f'(x)``: :func:`scale` when the shortcuts are on."""
    return scale if ENABLED else plain_scale


# ---------------------------------------------------- 5. the square's derivative


def square_shortcut(d_da: Callable) -> Callable:
    """Decorator for ∂(aᵇ)/∂a = b·aᵇ⁻¹: for b = 2, computes 2·a directly.

    ``a ** 1.0`` is a copy of a, so the plain rule makes two passes (the copy,
    then the product) where one does; ``x ** 2`` is common enough to matter.
    """
    if not ENABLED:
        return d_da

    @functools.wraps(d_da)
    def d_da_with_square_shortcut(xp: Any, a: Any, b: Any, z: Any) -> Any:
        if isinstance(b, (int, float)) and b == 2:
            return 2.0 * a
        return d_da(xp, a, b, z)

    return d_da_with_square_shortcut
