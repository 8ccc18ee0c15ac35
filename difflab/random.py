"""Random numbers: seeded generators, PyTorch's ``Generator`` on NumPy's.

Every random function of difflab (``rand``, ``randn``, ``randint``,
``randperm``, ``normal``, ``multinomial``, ``bernoulli``, the ``nn.init``
functions, ``DataLoader(shuffle=True)``, ``random_split``) takes a
``generator=`` and otherwise draws from ``default_generator``, which
:func:`manual_seed` reseeds.  A generator seeded with s gives the same
stream on every run and every machine: NumPy's PCG64 bit generator, seeded
with s.  (The numbers differ from PyTorch's, whose generator is another one;
the *reproducibility* is the same.)

Every draw on tensors is a primitive of the registry (:class:`Uniform`,
:class:`Normal`, :class:`Integers`, :class:`Bernoulli`, :class:`Randperm`,
:class:`Multinomial`, :class:`DropoutMask`), applied through
``engine.apply`` like ``sin``.  So a traced graph holds the *draw*, not the
numbers drawn while tracing: each replay draws anew from the generator in
effect then (``manual_seed(0)`` before a replay gives what it gives before
the eager call).  Their ``generator`` setting is ``None`` for the default
generator, looked up at each run, which is also how a saved graph names it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import numpy as np

from difflab import backend
from difflab.ops import registry
from difflab.ops.primitive import NoDerivative
from difflab.tensor_arguments import wrap

#: The seed of a generator nobody seeded (PyTorch's default_generator starts from it too).
DEFAULT_SEED = 67280421310721


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"a seed must be an integer, got {type(seed).__name__} {seed!r}")
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError(f"a seed must lie in [-2**63, 2**64), got {seed}")
    return seed % 2**64  # (negative seeds as PyTorch reads them: two's complement)


class Generator:
    """A seeded source of random numbers: ``Generator().manual_seed(0)``.

    Pass it as ``generator=`` to any random function, a ``DataLoader`` or
    ``random_split``; two generators seeded alike give the same numbers.

    Parameters
    ----------
    device : str or Device, default "cpu"
        Where its numbers are drawn.

    Examples
    --------
    >>> import difflab as dl
    >>> g = dl.Generator().manual_seed(0)
    >>> dl.randn(2, generator=g)
    tensor([ 0.1257, -0.1321])
    >>> again = dl.randn(2, generator=dl.Generator().manual_seed(0))
    >>> again                    # seeded alike: the same numbers
    tensor([ 0.1257, -0.1321])
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = backend.device(device)
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed``; returns the generator (to chain)."""
        self._seed = _check_seed(seed)
        self.rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed."""
        seed = int(np.random.SeedSequence().entropy % 2**63)
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the stream started from."""
        return self._seed

    def get_state(self) -> Any:
        """The generator's state as a uint8 tensor (give it to :meth:`set_state`)."""
        text = json.dumps({"seed": self._seed, "state": self.rng.bit_generator.state})
        return wrap(np.frombuffer(text.encode(), dtype=np.uint8).copy())

    def set_state(self, state: Any) -> Generator:
        """Continue from a state :meth:`get_state` returned."""
        try:
            saved = json.loads(backend.to_numpy(getattr(state, "array", state)).tobytes())
            rng = np.random.default_rng()
            rng.bit_generator.state = saved["state"]
            seed = _check_seed(saved["seed"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"not a generator state (pass what Generator.get_state() returned): {exc}"
            ) from None
        self.rng, self._seed = rng, seed
        return self

    def __repr__(self) -> str:
        return f"<difflab.Generator seed={self._seed} device={self.device}>"


#: The generator every random function uses when given none.
default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed every random function of difflab (and CuPy's generator, if loaded).

    Parameters
    ----------
    seed : int
        The seed; the same seed gives the same numbers from ``rand``, ``randn``,
        ``randint``, ``randperm``, dropout and ``DataLoader(shuffle=True)``.

    Returns
    -------
    Generator
        ``difflab.default_generator``, now seeded.

    See Also
    --------
    Generator : a stream of its own, passed as ``generator=``.
    get_rng_state, set_rng_state : save and restore the state.

    Examples
    --------
    >>> import difflab as dl
    >>> saved = dl.get_rng_state()
    >>> _ = dl.manual_seed(0)
    >>> a = dl.rand(2)
    >>> _ = dl.manual_seed(0)
    >>> bool((dl.rand(2) == a).all())
    True
    >>> dl.set_rng_state(saved)
    """
    default_generator.manual_seed(seed)
    if backend._cupy is not None:
        backend._cupy.random.seed(default_generator.initial_seed() % 2**32)
    return default_generator


def seed() -> int:
    """Seed the default generator from the operating system's entropy; returns the seed.

    The opposite of :func:`manual_seed`: the numbers that follow differ from run
    to run.  Print or log the seed it returns to repeat a run later with
    ``manual_seed(seed)``.

    Returns
    -------
    int
        The new seed, in [0, 2**63); :func:`initial_seed` answers it too.

    See Also
    --------
    difflab.manual_seed : a chosen seed, to repeat a run.
    difflab.initial_seed : the seed in use.

    Examples
    --------
    >>> import difflab as dl
    >>> saved = dl.get_rng_state()
    >>> s = dl.seed()
    >>> 0 <= s < 2**63, dl.initial_seed() == s
    (True, True)
    >>> first = dl.rand(2)
    >>> _ = dl.manual_seed(s)                       # the logged seed repeats the run
    >>> bool((dl.rand(2) == first).all())
    True
    >>> dl.set_rng_state(saved)
    """
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator started from (the last :func:`manual_seed` or :func:`seed`).

    A generator nobody seeded starts from ``DEFAULT_SEED`` (67280421310721, as
    PyTorch's).  The seed says where the stream began, not how far it has gone:
    for that, save :func:`get_rng_state`.

    Returns
    -------
    int
        The seed, in [0, 2**64) (a negative seed given to ``manual_seed`` is read as
        PyTorch reads it, in two's complement).

    See Also
    --------
    difflab.manual_seed : set it.
    difflab.get_rng_state : where the stream is now.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(42)
    >>> dl.initial_seed()
    42
    >>> _ = dl.rand(3)                              # drawing does not change it
    >>> dl.initial_seed()
    42
    """
    return default_generator.initial_seed()


def get_rng_state() -> Any:
    """The default generator's state (a uint8 tensor), to restore with :func:`set_rng_state`.

    Save it before code that draws numbers, restore it after, and the draws that
    follow are as if that code had not run (a test that must not disturb the
    stream, or repeating one step of training exactly).

    Returns
    -------
    Tensor
        1-D, uint8: the generator's seed and position, as bytes (a copy: drawing
        later does not change it).

    See Also
    --------
    difflab.set_rng_state : restore it.
    difflab.Generator.get_state : the same for a generator of one's own.

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> state = dl.get_rng_state()
    >>> state.dtype
    difflab.uint8
    >>> a = dl.rand(2)
    >>> dl.set_rng_state(state)
    >>> bool((dl.rand(2) == a).all())               # the same numbers again
    True
    """
    return default_generator.get_state()


def set_rng_state(state: Any) -> None:
    """Restore the default generator's state from :func:`get_rng_state`.

    The draws that follow repeat those that followed when the state was saved.

    Parameters
    ----------
    state : Tensor
        What :func:`get_rng_state` (or ``Generator.get_state``) returned.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        When ``state`` is not a saved state (other bytes, another tensor).

    See Also
    --------
    difflab.get_rng_state : save it.
    difflab.manual_seed : restart from a seed instead.

    Examples
    --------
    >>> import difflab as dl
    >>> state = dl.get_rng_state()
    >>> a = dl.randn(3)
    >>> dl.set_rng_state(state)
    >>> bool((dl.randn(3) == a).all())
    True
    >>> dl.set_rng_state(dl.tensor([1, 2], dtype=dl.uint8))
    Traceback (most recent call last):
    ...
    ValueError: not a generator state (pass what Generator.get_state() returned): ...
    """
    default_generator.set_state(state)


@contextlib.contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, device_type: str = "cuda"
             ) -> Iterator[None]:
    """Within the block, draw random numbers freely; after it, the stream goes on as before.

    PyTorch's ``torch.random.fork_rng``: the default generator's state is saved on
    entry and restored on exit (also when the block raises), so the numbers drawn
    after the block are those that would have been drawn without it.  Tensors on
    the GPU draw from the same default generator in difflab, so ``devices`` and
    ``device_type`` (which name the GPUs whose generators PyTorch also saves) are
    accepted and need nothing more.

    Parameters
    ----------
    devices : iterable of int, optional
        PyTorch's GPU indices; accepted (see above).
    enabled : bool, default True
        False makes the block an ordinary one (nothing is saved or restored).
    device_type : str, default "cuda"
        PyTorch's device kind; accepted (see above).

    Yields
    ------
    None

    Examples
    --------
    >>> import difflab as dl
    >>> _ = dl.manual_seed(0)
    >>> with dl.random.fork_rng():
    ...     _ = dl.rand(5)                 # draws that leave no trace
    >>> a = dl.rand(2)
    >>> _ = dl.manual_seed(0)
    >>> bool((dl.rand(2) == a).all())
    True
    """
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


class Draws:
    """Who is asked before a random function draws: ``check(what)`` (``None``: nobody).

    vmap (:mod:`difflab.func`) sets it, so that a draw under
    ``randomness='error'`` is refused with a message saying what to pass.
    """

    check: Any = None


def _rng(generator: Generator | None) -> np.random.Generator:
    if Draws.check is not None:
        Draws.check("a random draw")
    if generator is None:
        return default_generator.rng
    if not isinstance(generator, Generator):
        raise TypeError(
            f"generator must be a difflab.Generator, got {type(generator).__name__}; make one "
            f"with difflab.Generator().manual_seed(seed)"
        )
    return generator.rng


def _place(array: np.ndarray, dtype: Any, device: Any) -> Any:
    array = array.astype(dtype, copy=False)
    if device is not None and backend.Device(device).type == "cuda":
        array = backend.to_device(array, backend.device(device))
    return array


def normal_array(mean: float, std: float, shape: tuple, dtype: Any, device: Any = None,
                 generator: Generator | None = None) -> Any:
    return _place(_rng(generator).normal(mean, std, size=shape), dtype, device)


def uniform_array(low: float, high: float, shape: tuple, dtype: Any, device: Any = None,
                  generator: Generator | None = None) -> Any:
    return _place(_rng(generator).uniform(low, high, size=shape), dtype, device)


def integers_array(low: int, high: int, shape: tuple, dtype: Any, device: Any = None,
                   generator: Generator | None = None) -> Any:
    return _place(_rng(generator).integers(low, high, size=shape), dtype, device)


def draw_array(distribution: str, *params: float, shape: tuple, dtype: Any, device: Any = None,
               generator: Generator | None = None) -> Any:
    """Draws from one of NumPy's ``Generator`` distributions by name (``"exponential"``,
    ``"geometric"``, ``"standard_cauchy"``, ``"lognormal"``, ``"random"``), placed as a
    tensor's array: the in-place samplers (``x.exponential_()``, ...) share it."""
    return _place(getattr(_rng(generator), distribution)(*params, size=shape), dtype, device)


def permutation(n: int, generator: Generator | None = None) -> np.ndarray:
    return _rng(generator).permutation(n)


def multinomial_array(weights: np.ndarray, num_samples: int, replacement: bool,
                      generator: Generator | None = None) -> np.ndarray:
    """Category indices drawn with probability proportional to ``weights``.

    ``weights`` has one row of k non-negative weights (1-D), or one row per
    distribution (2-D); the result has ``num_samples`` indices per row.
    Without replacement a category is drawn at most once per row (each draw
    renormalizes the weights left).  Errors name what is wrong.
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim not in (1, 2):
        raise ValueError(
            f"multinomial: weights must be 1-D (one distribution) or 2-D (one per row), got "
            f"{weights.ndim}-D"
        )
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(f"multinomial: num_samples must be an integer, got {num_samples!r}")
    if num_samples <= 0:
        raise ValueError(f"multinomial: num_samples must be positive, got {num_samples}")
    rows = np.atleast_2d(weights)
    categories = rows.shape[1]
    if categories == 0:
        raise ValueError("multinomial: the weights have no categories (size 0)")
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise ValueError(
            "multinomial: weights must be finite and non-negative (found a negative, inf or "
            "nan weight); pass probabilities or unnormalized counts, e.g. softmax(logits)"
        )
    totals = rows.sum(axis=1)
    if (totals <= 0).any():
        row = int(np.argmax(totals <= 0))
        raise ValueError(
            f"multinomial: the weights of row {row} are all zero: there is nothing to draw "
            f"from (sum of weights must be positive)"
        )
    if not replacement:
        if num_samples > categories:
            raise ValueError(
                f"multinomial: cannot draw {num_samples} samples without replacement from "
                f"{categories} categories; pass replacement=True or fewer samples"
            )
        nonzero = (rows > 0).sum(axis=1)
        if (nonzero < num_samples).any():
            row = int(np.argmax(nonzero < num_samples))
            raise ValueError(
                f"multinomial: row {row} has only {int(nonzero[row])} categories of non-zero "
                f"weight, fewer than the {num_samples} samples asked without replacement"
            )
    rng = _rng(generator)
    if not len(rows):  # (a batch of no distributions: NumPy's stack of nothing failed)
        return np.zeros((0, num_samples), dtype=np.int64)
    out = np.stack([
        rng.choice(categories, size=num_samples, replace=replacement, p=row / row.sum())
        for row in rows
    ])
    return out if weights.ndim == 2 else out[0]


# ------------------------------------------------------------ the draws as primitives


def _setting(generator: Generator | None) -> Generator | None:
    """The ``generator`` setting of a draw: None stands for the default generator (looked up
    at each run, and what a saved graph can name); another generator is checked here."""
    if generator is None or generator is default_generator:
        return None
    _rng(generator)  # (a clear TypeError for anything but a Generator)
    return generator


class _Draw(NoDerivative):
    """A draw from a generator: no derivative, drawn anew at every run (``random``)."""

    random = True
    math = "no derivative (a random draw)"


class Uniform(_Draw):
    """Uniform numbers in [low, high) of ``shape`` (``rand``, ``rand_like``, ``uniform_``)."""

    name = "uniform"
    description = "uniform random numbers in [low, high)"

    @staticmethod
    def forward(ctx: Any, xp: Any, low: Any, high: Any, shape: tuple = (), dtype: Any = None,
                device: Any = None, generator: Any = None) -> Any:
        if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):  # (OverflowError)
            raise ValueError(f"expects finite bounds, got from={low}, to={high}")
        if np.any(np.asarray(low) > np.asarray(high)):  # (NumPy: "high - low < 0")
            raise ValueError(f"expects a [from, to) range, but found from={low} > "
                             f"to={high}")
        return _place(_rng(generator).uniform(low, high, size=shape), dtype, device)


class Normal(_Draw):
    """Normal numbers of mean ``mean`` and deviation ``std`` (numbers or arrays) of ``shape``
    (``randn``, ``randn_like``, ``normal``, ``normal_``)."""

    name = "normal"
    description = "normal random numbers"

    @staticmethod
    def forward(ctx: Any, xp: Any, mean: Any, std: Any, shape: tuple = (), dtype: Any = None,
                device: Any = None, generator: Any = None) -> Any:
        mean, std = (backend.to_numpy(v) if hasattr(v, "shape") else v for v in (mean, std))
        if not np.all(np.asarray(std) >= 0):  # (NumPy: "scale < 0"; a nan std drew nans)
            raise ValueError(f"expects std >= 0.0, but found std {std}")
        return _place(_rng(generator).normal(mean, std, size=shape), dtype, device)


class Integers(_Draw):
    """Integers in [low, high) of ``shape`` (``randint``, ``randint_like``)."""

    name = "integers"
    description = "random integers in [low, high)"

    @staticmethod
    def forward(ctx: Any, xp: Any, low: Any, high: Any, shape: tuple = (), dtype: Any = None,
                device: Any = None, generator: Any = None) -> Any:
        if np.any(np.asarray(low) >= np.asarray(high)):  # (NumPy: "low >= high")
            raise ValueError(f"randint expects low to be less than high, but got low={low} >= "
                             f"high={high}")
        return _place(_rng(generator).integers(low, high, size=shape), dtype, device)


class Bernoulli(_Draw):
    """1 with probability ``probs`` (an array, or a number with ``shape``), else 0."""

    name = "bernoulli"
    description = "1 with the given probability, else 0"

    @staticmethod
    def forward(ctx: Any, xp: Any, probs: Any, shape: Any = None, dtype: Any = None,
                device: Any = None, generator: Any = None) -> Any:
        if hasattr(probs, "shape"):
            device = backend.device_of(probs) if device is None else device
            shape = probs.shape if shape is None else shape
            dtype = probs.dtype if dtype is None else dtype
            probs = backend.to_numpy(probs)
        checked = np.asarray(probs)
        if ((checked < 0) | (checked > 1) | np.isnan(checked)).any():
            raise ValueError("bernoulli: probabilities must lie in [0, 1]")
        return _place(_rng(generator).random(shape) < probs, dtype, device)


class Draw(_Draw):
    """Draws from one of NumPy's ``Generator`` distributions whose parameters are arrays:
    ``standard_gamma(concentration)``, ``poisson(rate)``, ``binomial(count, probs)``,
    ``multinomial(count, probs)`` (the last dimension of probs: the categories)
    (``difflab.distributions`` samples with it where no reparameterization applies)."""

    name = "draw"
    description = "random numbers of a named distribution (gamma, Poisson, binomial, ...)"
    #: The distributions it may draw from (NumPy's names), a closed list.
    DISTRIBUTIONS = ("standard_gamma", "poisson", "binomial", "multinomial")

    @staticmethod
    def forward(ctx: Any, xp: Any, *params: Any, distribution: str = "", shape: tuple = (),
                dtype: Any = None, device: Any = None, generator: Any = None) -> Any:
        if distribution not in Draw.DISTRIBUTIONS:
            raise ValueError(f"draw: distribution must be one of {Draw.DISTRIBUTIONS}, got "
                             f"{distribution!r}")
        if params and hasattr(params[0], "shape"):
            device = backend.device_of(params[0]) if device is None else device
            dtype = params[0].dtype if dtype is None else dtype
        values = [backend.to_numpy(v) if hasattr(v, "shape") else v for v in params]
        if distribution == "poisson" and ((np.asarray(values[0]) < 0).any()
                                          or np.isnan(values[0]).any()):
            raise ValueError("poisson: the rates must be non-negative numbers (not nan)")
        if distribution in ("binomial", "multinomial"):  # (NumPy's count is an integer)
            values[0] = np.asarray(values[0]).astype(np.int64)
        drawn = getattr(_rng(generator), distribution)(*values, size=shape)
        return _place(np.asarray(drawn), dtype, device)


class Randperm(_Draw):
    """A random permutation of 0 .. n-1."""

    name = "randperm"
    description = "a random permutation"

    @staticmethod
    def forward(ctx: Any, xp: Any, n: int, dtype: Any = None, device: Any = None,
                generator: Any = None) -> Any:
        return _place(_rng(generator).permutation(n), dtype, device)


class Multinomial(_Draw):
    """Category indices drawn with probability proportional to ``weights`` (int64)."""

    name = "multinomial"
    description = "category indices drawn from weights"

    @staticmethod
    def forward(ctx: Any, xp: Any, weights: Any, num_samples: int = 1,
                replacement: bool = False, generator: Any = None) -> Any:
        drawn = multinomial_array(backend.to_numpy(weights), num_samples, replacement,
                                  generator)
        return _place(drawn, np.int64, backend.device_of(weights))


class DropoutMask(_Draw):
    """Dropout's mask: 1/(1 - p) where a uniform draw is ≥ p, else 0, shaped like ``x``."""

    name = "dropout_mask"
    description = "a random mask keeping each element with probability 1 - p"

    @staticmethod
    def forward(ctx: Any, xp: Any, x: Any, p: float = 0.5, generator: Any = None) -> Any:
        keep = _rng(generator).random(x.shape) >= p
        mask = (keep / (1.0 - p)).astype(x.dtype)
        return backend.to_device(mask, backend.device_of(x))


for _draw in (Uniform, Normal, Integers, Bernoulli, Draw, Randperm, Multinomial, DropoutMask):
    registry.register(_draw)
