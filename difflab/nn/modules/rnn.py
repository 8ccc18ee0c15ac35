r"""Recurrent layers: ``RNNCell``/``RNN``, ``LSTMCell``/``LSTM`` and ``GRUCell``/``GRU``.

A recurrent layer is a Python ``for`` loop over time steps that applies the
*same* cell (the same weights) at every step.  The tape records each step
as it runs, so a sequence of length 5 gives a graph five cells long and a
sequence of length 50 one fifty cells long: a *dynamic* graph, built by the
loop.  Backpropagation through time is nothing but the ordinary backward
walk over that graph; the shared weights receive the *sum* of their
adjoints from every step.

Elman cell:  h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)

LSTM cell:   (i, f, g, o) = x W_ihᵀ + b_ih + h W_hhᵀ + b_hh, split in four;
             c' = σ(f)·c + σ(i)·tanh(g),  h' = σ(o)·tanh(c').

GRU cell:    (r, z, n) from x W_ihᵀ + b_ih and h W_hhᵀ + b_hh, each split in three;
             r = σ(x_r + h_r),  z = σ(x_z + h_z),  n = tanh(x_n + r·h_n),
             h' = (1 - z)·n + z·h.

All weights are initialised U(-1/√hidden, 1/√hidden), as in PyTorch.

Two things make the loop cheap, as in PyTorch's CPU and cuDNN kernels.  The
input's projection x_t W_ihᵀ + b_ih does not depend on the state, so a layer
computes it for all time steps at once, one ``linear`` before the loop; and
a step's gates (everything after the two projections) are one fused
primitive with a hand-written derivative (``gru_cell``; ``lstm_cell_state``
then ``lstm_hidden_state`` for the LSTM, in :mod:`difflab.ops.nn_recurrent`).
A GRU step is then three records on the tape, not about twenty.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from difflab import functions
from difflab.autograd.engine import apply
from difflab.dtypes import _Defaults
from difflab.nn import functional as F
from difflab.nn import init
from difflab.nn.modules import rnn_packing as packing
from difflab.nn.modules.module import Module
from difflab.nn.parameter import Parameter
from difflab.ops import nn_recurrent
from difflab.tensor import Tensor


def _zeros(*shape: int, like: Tensor) -> Tensor:
    """Zeros of ``like``'s dtype and device."""
    from difflab.creation import zeros

    return zeros(*shape, dtype=like.dtype, device=like.device)


class RNNCellBase(Module):
    r"""What the recurrent cells share: the weights of one step, PyTorch's ``RNNCellBase``.

    :class:`RNNCell`, :class:`LSTMCell` and :class:`GRUCell` derive from it
    (``isinstance(m, nn.RNNCellBase)`` finds them all).  It holds
    :math:`W_{ih}` :math:`(\text{num\_chunks} \cdot H, H_{in})`, :math:`W_{hh}`
    :math:`(\text{num\_chunks} \cdot H, H)` and the two biases, one chunk per gate
    (1 for an Elman cell, 4 for an LSTM, 3 for a GRU), drawn from
    :math:`\mathcal U(-1/\sqrt H, 1/\sqrt H)`; a subclass writes the step.

    Parameters
    ----------
    input_size : int
        :math:`H_{in}`.
    hidden_size : int
        :math:`H`.
    bias : bool
        Learn the biases :math:`b_{ih}, b_{hh}`.
    num_chunks : int
        The number of gates stacked in the weights.
    device, dtype : optional
        Where the parameters live and their dtype.

    Attributes
    ----------
    weight_ih, weight_hh : Parameter
        The input's and the state's weights, PyTorch's names and layout.
    bias_ih, bias_hh : Parameter or None
        :math:`(\text{num\_chunks} \cdot H,)`.

    See Also
    --------
    RNNCell, LSTMCell, GRUCell, RNNBase

    Examples
    --------
    >>> import difflab as dl
    >>> isinstance(dl.nn.LSTMCell(3, 5), dl.nn.RNNCellBase)
    True
    >>> cell = dl.nn.RNNCellBase(3, 5, True, num_chunks=2)
    >>> cell.weight_ih.shape, cell.weight_hh.shape
    (difflab.Size([10, 3]), difflab.Size([10, 5]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        from difflab.creation import zeros

        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        self.bias = bool(bias)
        dtype = dtype or _Defaults.dtype
        n = int(num_chunks) * hidden_size
        self.weight_ih = Parameter(zeros(n, input_size, dtype=dtype, device=device))
        self.weight_hh = Parameter(zeros(n, hidden_size, dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(zeros(n, dtype=dtype, device=device))
            self.bias_hh = Parameter(zeros(n, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Draw every weight and bias anew (PyTorch's initialisation).

        Each entry from :math:`\mathcal U(-k, k)`, :math:`k = 1/\sqrt{H}`.

        Returns
        -------
        None

        Examples
        --------
        >>> from difflab import nn
        >>> cell = nn.RNNCell(3, 4)
        >>> cell.reset_parameters()
        >>> bool(cell.weight_hh.abs().max() <= 0.5)
        True
        """
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _check_features(self, x: Tensor) -> None:
        if x.ndim == 0 or x.shape[-1] != self.input_size:
            raise ValueError(
                f"{type(self).__name__} expected input with {self.input_size} features "
                f"(input_size), got shape {tuple(x.shape)}"
            )

    def _input_projection(self, x: Tensor) -> Tensor:
        """x W_ihᵀ + b_ih: of one step, or of a whole sequence at once (one product)."""
        self._check_features(x)
        return F.linear(x, self.weight_ih, self.bias_ih)

    def _zero_state(self, gi: Tensor) -> Tensor:
        """The state left out: zeros shaped as one step's rows."""
        # (a dual number or sympy expressions, when the layer is differentiated by forward
        # mode or symbolically: zeros of the weights' dtype, constants to either)
        like = gi if isinstance(gi, Tensor) else self.weight_hh
        return _zeros(*gi.shape[:-1], self.hidden_size, like=like)

    def _step(self, gi: Tensor, state: Any) -> Any:
        """One step from the input's projection ``gi`` (the layers project a whole sequence
        first, then call this per step: only the state's projection is left in the loop)."""
        raise NotImplementedError

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class _CellBase(RNNCellBase):
    """The cells' own constructor, ``(input_size, hidden_size, bias=True, dtype=None)``:
    ``gates`` chunks (the class says how many)."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, self.gates, dtype=dtype)


class RNNCell(_CellBase):
    r"""One Elman RNN step: :math:`h' = \tanh(x W_{ih}^\top + b_{ih} + h W_{hh}^\top + b_{hh})`.

    Called as ``cell(x, h)``; ``h`` left out is zeros.  Loop over time steps
    yourself, or use :class:`RNN`.

    Parameters
    ----------
    input_size : int
        :math:`H_{in}`, the features of the input.
    hidden_size : int
        :math:`H`, the features of the state.
    bias : bool, default True
        Learn :math:`b_{ih}` and :math:`b_{hh}`.
    nonlinearity : {'tanh', 'relu'}, default 'tanh'
        The activation.
    dtype : difflab dtype, optional
        The parameters' dtype (the default dtype by default).

    Attributes
    ----------
    weight_ih : Parameter
        :math:`(H, H_{in})`; every parameter is drawn from
        :math:`\mathcal U(-k, k)`, :math:`k = 1/\sqrt{H}`.
    weight_hh : Parameter
        :math:`(H, H)`.
    bias_ih, bias_hh : Parameter or None
        :math:`(H,)`.

    Shape
    -----
    - Input: ``x`` :math:`(N, H_{in})` or :math:`(H_{in})`; ``h`` :math:`(N, H)` or :math:`(H)`.
    - Output: :math:`h'`, the shape of ``h``.

    Raises
    ------
    ValueError
        For another ``nonlinearity``, or an input whose last dimension is not ``input_size``.

    See Also
    --------
    RNN, LSTMCell, GRUCell

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> cell = nn.RNNCell(3, 5)
    >>> h = None
    >>> for x in dl.randn(4, 2, 3):        # 4 time steps, a batch of 2
    ...     h = cell(x, h)
    >>> h.shape
    difflab.Size([2, 5])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, bias, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, x: Tensor, h: Tensor | None = None) -> Tensor:
        return self._step(self._input_projection(x), h)

    def _step(self, gi: Tensor, h: Tensor | None) -> Tensor:
        if h is None:
            h = self._zero_state(gi)
        pre = gi + F.linear(h, self.weight_hh, self.bias_hh)
        # (difflab's functions: the same primitives on dual numbers and sympy expressions)
        return functions.tanh(pre) if self.nonlinearity == "tanh" else functions.relu(pre)


class LSTMCell(_CellBase):
    r"""One LSTM step: returns :math:`(h', c')`.

    .. math::
        (i, f, g, o) &= \text{split}_4(x W_{ih}^\top + b_{ih} + h W_{hh}^\top + b_{hh}) \\
        c' &= \sigma(f) \odot c + \sigma(i) \odot \tanh(g), \qquad h' = \sigma(o) \odot \tanh(c')

    Called as ``cell(x, (h, c))``; the state left out is zeros.  Each of the two
    equations is one fused primitive (``lstm_cell_state`` gives :math:`c'`, then
    ``lstm_hidden_state`` gives :math:`h'` from it), whose derivatives are written
    by hand beside them (:mod:`difflab.ops.nn_recurrent`).

    Parameters
    ----------
    input_size : int
        :math:`H_{in}`, the features of the input.
    hidden_size : int
        :math:`H`, the features of the state.
    bias : bool, default True
        Learn :math:`b_{ih}` and :math:`b_{hh}`.
    dtype : difflab dtype, optional
        The parameters' dtype (the default dtype by default).

    Attributes
    ----------
    weight_ih : Parameter
        :math:`(4H, H_{in})`, the gates in the order :math:`i, f, g, o`; every
        parameter drawn from :math:`\mathcal U(-k, k)`, :math:`k = 1/\sqrt{H}`.
    weight_hh : Parameter
        :math:`(4H, H)`.
    bias_ih, bias_hh : Parameter or None
        :math:`(4H,)`.

    Shape
    -----
    - Input: ``x`` :math:`(N, H_{in})`; ``h`` and ``c`` :math:`(N, H)` (or without :math:`N`).
    - Output: ``(h', c')``, each :math:`(N, H)`.

    Raises
    ------
    ValueError
        If the input's last dimension is not ``input_size``.

    See Also
    --------
    LSTM, GRUCell

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> cell = nn.LSTMCell(3, 5)
    >>> h, c = cell(dl.randn(2, 3))
    >>> h.shape, c.shape, cell.weight_ih.shape
    (difflab.Size([2, 5]), difflab.Size([2, 5]), difflab.Size([20, 3]))
    """

    gates = 4

    def forward(self, x: Tensor, state: tuple | None = None) -> tuple[Tensor, Tensor]:
        return self._step(self._input_projection(x), state)

    def _step(self, gi: Tensor, state: tuple | None) -> tuple[Tensor, Tensor]:
        if state is None:
            h = c = self._zero_state(gi)
        else:
            h, c = state
        gates = gi + F.linear(h, self.weight_hh, self.bias_hh)
        # the two equations, each one fused primitive: c' first, then h' from it
        c = apply(nn_recurrent.LSTMCellState, gates, c)
        return apply(nn_recurrent.LSTMHiddenState, gates, c), c


class RNNBase(Module):
    r"""What the recurrent layers share, PyTorch's ``RNNBase``: a stack of cells over a sequence.

    :class:`RNN`, :class:`LSTM` and :class:`GRU` derive from it
    (``isinstance(m, nn.RNNBase)`` finds them all); ``mode`` names the cell:
    ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'`` or ``'GRU'``.  It holds the layers'
    parameters under PyTorch's names (``weight_ih_l0``, ``weight_hh_l0``,
    ``bias_ih_l0``, ``bias_hh_l0``, then ``_l1``, ...); the subclasses run them.

    Parameters
    ----------
    mode : {'RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU'}
        The cell of every layer.
    input_size, hidden_size : int
        :math:`H_{in}`, :math:`H`.
    num_layers : int, default 1
        Stacked layers.
    bias : bool, default True
        Learn the biases.
    batch_first : bool, default False
        Inputs and outputs are :math:`(N, L, *)` instead of :math:`(L, N, *)`.
    dropout : float, default 0.0
        Dropout between the layers (not after the last).
    bidirectional : bool, default False
        Not supported (a clear error).
    proj_size : int, default 0
        Not supported above 0 (a clear error).
    device, dtype : optional
        Where the parameters live and their dtype.

    Raises
    ------
    ValueError
        For an unknown ``mode``, a ``dropout`` outside :math:`[0, 1]` or
        ``num_layers`` below 1.
    NotImplementedError
        For ``bidirectional=True`` or ``proj_size > 0``.

    See Also
    --------
    RNN, LSTM, GRU, RNNCellBase

    Examples
    --------
    >>> import difflab as dl
    >>> isinstance(dl.nn.GRU(3, 4), dl.nn.RNNBase)
    True
    >>> base = dl.nn.RNNBase("LSTM", 3, 4, num_layers=2)
    >>> base.mode, base.weight_ih_l1.shape              # four gates of H = 4, from H
    ('LSTM', difflab.Size([16, 4]))
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        kwargs = {"RNN_TANH": {"nonlinearity": "tanh"}, "RNN_RELU": {"nonlinearity": "relu"},
                  "LSTM": {}, "GRU": {}}
        if mode not in kwargs:
            raise ValueError(f"Unrecognized RNN mode: {mode!r} (one of {sorted(kwargs)})")
        if proj_size:
            raise NotImplementedError(f"{name}: proj_size > 0 is not supported in difflab; add "
                                      "an nn.Linear on the outputs instead")
        self.mode, self.proj_size = mode, 0
        cell_kwargs = kwargs[mode]
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or \
                not 0.0 <= dropout <= 1.0:
            raise ValueError(f"{name}: dropout should be a number in range [0, 1] representing "
                             f"the probability of an element being zeroed, got {dropout!r}")
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                f"dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}", UserWarning, stacklevel=4)
        if bidirectional:
            raise NotImplementedError(
                f"{name}: bidirectional=True is not supported in difflab; run a second "
                f"{name} on the time-reversed input (x.flip(0)) and concatenate the outputs"
            )
        if not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"{name}: num_layers must be a positive integer, got {num_layers!r}")
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        self.num_layers, self.batch_first = int(num_layers), batch_first
        self.dropout, self.bidirectional = float(dropout), False
        self._cell_kwargs = cell_kwargs
        for layer in range(num_layers):
            cell = self._cell_class()(input_size if layer == 0 else hidden_size, hidden_size,
                                      bias, dtype=dtype, **cell_kwargs)
            # PyTorch's parameter names: weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0
            for name, p in cell._parameters.items():
                self.register_parameter(f"{name}_l{layer}", p)
        self._bias = bias
        if device is not None:
            self.to(device)

    _mode = "RNN_TANH"  # (a checkpoint saved before ``mode`` existed: the class's cell)

    def _cell_class(self) -> type:
        """The cell class of ``mode`` (looked up, not stored: a checkpoint holds data only)."""
        mode = self.__dict__.get("mode", type(self)._mode)
        return {"LSTM": LSTMCell, "GRU": GRUCell}.get(mode, RNNCell)

    def flatten_parameters(self) -> None:
        """Nothing to do: PyTorch packs cuDNN's weights into one buffer here; difflab's
        layers use their parameters as they are (kept for programs that call it).

        Examples
        --------
        >>> import difflab as dl
        >>> lstm = dl.nn.LSTM(3, 4)
        >>> lstm.flatten_parameters()   # a no-op, as on PyTorch's CPU
        """

    def _between_layers(self, out: Tensor, layer: int) -> Tensor:
        """Dropout on a layer's outputs before the next layer reads them (not after the last)."""
        if self.dropout == 0.0 or not self.training or layer == self.num_layers - 1:
            return out
        return F.dropout(out, self.dropout, training=True)

    def _cell(self, layer: int) -> Any:
        """A cell that uses this layer's registered parameters (no copy)."""
        cell = object.__new__(self._cell_class())
        Module.__init__(cell)
        cell.input_size = self.input_size if layer == 0 else self.hidden_size
        cell.hidden_size = self.hidden_size
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            cell._parameters[name] = self._parameters.get(f"{name}_l{layer}")
        for key, value in self._cell_kwargs.items():
            object.__setattr__(cell, key, value)
        return cell

    def _run(self, x: Tensor, states: list) -> tuple[Tensor, list]:
        r"""Every layer over the sequence; ``states[layer]`` is its first state (None: zeros).

        A layer's input projection :math:`x_t W_{ih}^\top + b_{ih}` does not depend on
        the state, so it is one product over all the steps at once, before the loop (as
        PyTorch's CPU and cuDNN kernels do); the loop then applies only the state's
        projection and the gates, step after step.  Returns the top layer's outputs,
        :math:`(L, N, H)`, and each layer's last state.
        """
        seq = x.transpose(0, 1) if self.batch_first else x
        finals = []
        for layer in range(self.num_layers):
            cell = self._cell(layer)
            state = states[layer]
            outputs = []
            projected = cell._input_projection(seq)
            for t in range(seq.shape[0]):  # the loop *is* the graph: one cell per step
                state = cell._step(projected[t], state)
                outputs.append(state[0] if isinstance(state, tuple) else state)
            if not outputs:
                raise ValueError(f"{type(self).__name__}: the input sequence is empty "
                                 f"(shape {tuple(x.shape)}); give at least one time step")
            seq = self._between_layers(functions.stack(outputs, 0), layer)
            finals.append(state)
        return (seq.transpose(0, 1) if self.batch_first else seq), finals

    def _batched(self, x: Tensor, h0: Tensor | None) -> bool:
        """Whether ``x`` has a batch dimension: a 3-D input has; a 2-D one is a single
        sequence :math:`(L, H_{in})` (PyTorch's unbatched input), its states 2-D too."""
        if x.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__} expects a 3-D input (seq, batch, features) "
                             f"or a 2-D one (seq, features), got shape {tuple(x.shape)}")
        if h0 is not None and h0.ndim != x.ndim:
            kind = "batched 3-D" if x.ndim == 3 else "unbatched 2-D"
            raise ValueError(f"{type(self).__name__}: for {kind} input, the state should also "
                             f"be {x.ndim}-D, but got a {h0.ndim}-D tensor")
        return x.ndim == 3

    def _forward_one_state(self, x: Tensor, h0: Tensor | None) -> tuple[Tensor, Tensor]:
        """RNN's and GRU's forward: ``(output, h_n)``, a single sequence as a batch of one."""
        if isinstance(x, packing.PackedSequence):
            out, finals = packing.run_packed(self, x, self._first_states(h0))
            return out, functions.stack(finals, 0)
        if not self._batched(x, h0):  # (a batch of one, the batch dimension taken off again)
            batch = 0 if self.batch_first else 1
            out, h_n = self._forward_one_state(x.unsqueeze(batch),
                                               None if h0 is None else h0.unsqueeze(1))
            return out.squeeze(batch), h_n.squeeze(1)
        out, finals = self._run(x, self._first_states(h0))
        return out, functions.stack(finals, 0)

    def _first_states(self, h0: Tensor | None) -> list:
        """Each layer's first state from ``h0`` (num_layers, N, H), or None (zeros)."""
        return [None if h0 is None else h0[layer] for layer in range(self.num_layers)]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        return s


class _RecurrentBase(RNNBase):
    """The layers' own constructor (RNN's, LSTM's and GRU's signatures reach it): the mode
    from the class, and from RNN's ``nonlinearity``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, dtype: Any = None, device: Any = None,
                 nonlinearity: str | None = None) -> None:
        mode = self._mode
        if nonlinearity is not None:
            if nonlinearity not in ("tanh", "relu"):
                raise ValueError(f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
            mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


class RNN(_RecurrentBase):
    r"""A multi-layer Elman RNN over a sequence; returns ``(output, h_n)``.

    .. math::
        h_t = \tanh(x_t W_{ih}^\top + b_{ih} + h_{t-1} W_{hh}^\top + b_{hh})


    Called as ``rnn(x, h0)`` (``h0`` left out is zeros).

    Parameters
    ----------
    input_size : int
        :math:`H_{in}`.
    hidden_size : int
        :math:`H`.
    num_layers : int, default 1
        Stacked layers; layer :math:`l > 0` reads layer :math:`l - 1`'s outputs.
    nonlinearity : {'tanh', 'relu'}, default 'tanh'
        The activation.
    bias : bool, default True
        Learn the biases.
    batch_first : bool, default False
        Input and output are :math:`(N, L, \cdot)` instead of :math:`(L, N, \cdot)`
        (the states stay :math:`(\text{num\_layers}, N, H)`).
    dropout : float, default 0.0
        In training, dropout on each layer's outputs except the last layer's.
    bidirectional : bool, default False
        Not supported: ``True`` raises (run a second layer on ``x.flip(0)``).
    device, dtype : optional
        Where the parameters live and their dtype.

    Attributes
    ----------
    weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k} : Parameter
        Layer :math:`k`'s parameters (PyTorch's names and shapes, as :class:`RNNCell`),
        drawn from :math:`\mathcal U(-k, k)`, :math:`k = 1/\sqrt{H}`.

    Shape
    -----
    - Input: ``x`` :math:`(L, N, H_{in})` (or :math:`(N, L, H_{in})`); ``h0``
      :math:`(\text{num\_layers}, N, H)`.
    - Output: ``output`` :math:`(L, N, H)`, the top layer's state at every step;
      ``h_n`` :math:`(\text{num\_layers}, N, H)`, every layer's last state.
    - A single sequence without a batch dimension, ``x`` :math:`(L, H_{in})`, is
      taken as a batch of one: its states and outputs have no :math:`N` either.

    Raises
    ------
    ValueError
        For a ``dropout`` outside :math:`[0, 1]`, a ``num_layers`` that is not a
        positive int, an input that is neither 3-D nor 2-D or has the wrong features, or
        states whose dimensions do not match the input's.
    NotImplementedError
        With ``bidirectional=True``.

    Notes
    -----
    The layer is a Python loop over the time steps that applies the same cell at
    every step; the tape records each step, so backpropagation through time is the
    ordinary backward walk, and the shared weights receive the sum of their
    adjoints from every step.  The input's projection :math:`x_t W_{ih}^\top + b_{ih}`
    is computed for all steps at once, before the loop (it does not depend on the
    state); the loop does the state's projection and the cell's gates.  A dropout
    with one layer only warns (PyTorch's behaviour).

    See Also
    --------
    LSTM, GRU, RNNCell

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> rnn = nn.RNN(10, 20, num_layers=2)
    >>> output, h_n = rnn(dl.randn(5, 3, 10))
    >>> output.shape, h_n.shape
    (difflab.Size([5, 3, 20]), difflab.Size([2, 3, 20]))
    >>> [name for name, _ in rnn.named_parameters()][:4]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
    """

    cell_class = RNNCell

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, dtype, device, nonlinearity=nonlinearity)

    def forward(self, x: Tensor, h0: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return self._forward_one_state(x, h0)


class LSTM(_RecurrentBase):
    r"""A multi-layer LSTM over a sequence; returns ``(output, (h_n, c_n))``.

    Each step is :class:`LSTMCell`'s.

    Called as ``lstm(x, (h0, c0))``; the state left out is zeros.

    Parameters
    ----------
    input_size : int
        :math:`H_{in}`.
    hidden_size : int
        :math:`H`.
    num_layers : int, default 1
        Stacked layers; layer :math:`l > 0` reads layer :math:`l - 1`'s outputs.
    bias : bool, default True
        Learn the biases.
    batch_first : bool, default False
        Input and output are :math:`(N, L, \cdot)` instead of :math:`(L, N, \cdot)`
        (the states stay :math:`(\text{num\_layers}, N, H)`).
    dropout : float, default 0.0
        In training, dropout on each layer's outputs except the last layer's.
    bidirectional : bool, default False
        Not supported: ``True`` raises (run a second layer on ``x.flip(0)``).
    device, dtype : optional
        Where the parameters live and their dtype.
    proj_size : int, default 0
        Not supported: a positive value raises (add an ``nn.Linear`` on the outputs).

    Attributes
    ----------
    weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k} : Parameter
        Layer :math:`k`'s parameters, :math:`(4H, \cdot)` as :class:`LSTMCell`'s,
        drawn from :math:`\mathcal U(-k, k)`, :math:`k = 1/\sqrt{H}`.

    Shape
    -----
    - Input: ``x`` :math:`(L, N, H_{in})` (or :math:`(N, L, H_{in})`); ``h0``, ``c0``
      :math:`(\text{num\_layers}, N, H)`.
    - Output: ``output`` :math:`(L, N, H)`; ``h_n``, ``c_n`` :math:`(\text{num\_layers}, N, H)`.
    - A single sequence without a batch dimension, ``x`` :math:`(L, H_{in})`, is
      taken as a batch of one: its states and outputs have no :math:`N` either.

    Raises
    ------
    ValueError
        For a ``dropout`` outside :math:`[0, 1]`, a ``num_layers`` that is not a
        positive int, an input that is neither 3-D nor 2-D or has the wrong features, or
        states whose dimensions do not match the input's.
    NotImplementedError
        With ``bidirectional=True``.
        Also with ``proj_size > 0``.

    Notes
    -----
    The layer is a Python loop over the time steps that applies the same cell at
    every step; the tape records each step, so backpropagation through time is the
    ordinary backward walk, and the shared weights receive the sum of their
    adjoints from every step.  The input's projection :math:`x_t W_{ih}^\top + b_{ih}`
    is computed for all steps at once, before the loop (it does not depend on the
    state); the loop does the state's projection and the cell's gates.  A dropout
    with one layer only warns (PyTorch's behaviour).

    See Also
    --------
    GRU, RNN, LSTMCell

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> lstm = nn.LSTM(10, 20, batch_first=True)
    >>> output, (h_n, c_n) = lstm(dl.randn(3, 5, 10))
    >>> output.shape, h_n.shape, lstm.weight_ih_l0.shape
    (difflab.Size([3, 5, 20]), difflab.Size([1, 3, 20]), difflab.Size([80, 10]))
    """

    cell_class, _mode = LSTMCell, "LSTM"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        if proj_size:
            raise NotImplementedError("LSTM: proj_size > 0 is not supported in difflab; add "
                                      "an nn.Linear on the outputs instead")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, dtype, device)

    def forward(self, x: Tensor, state: tuple | None = None
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        if isinstance(x, packing.PackedSequence):
            starts = [None if state is None else (state[0][layer], state[1][layer])
                      for layer in range(self.num_layers)]
            out, finals = packing.run_packed(self, x, starts)
            return out, (functions.stack([h for h, _ in finals], 0),
                         functions.stack([c for _, c in finals], 0))
        if not self._batched(x, None if state is None else state[0]):  # (a batch of one)
            batch = 0 if self.batch_first else 1
            out, (h_n, c_n) = self.forward(
                x.unsqueeze(batch), None if state is None else tuple(s.unsqueeze(1) for s in state))
            return out.squeeze(batch), (h_n.squeeze(1), c_n.squeeze(1))
        starts = [None if state is None else (state[0][layer], state[1][layer])
                  for layer in range(self.num_layers)]
        out, finals = self._run(x, starts)
        h_n = functions.stack([h for h, _ in finals], 0)
        return out, (h_n, functions.stack([c for _, c in finals], 0))


# ---------------------------------------------------------------------------------------
# compat-ops (issue 14): the GRU, with PyTorch's gate order (r, z, n) and parameter names.


class GRUCell(_CellBase):
    r"""One GRU step, with PyTorch's reset (r), update (z) and new (n) gates.

    .. math::
        r &= \sigma(x W_{ir}^\top + b_{ir} + h W_{hr}^\top + b_{hr}), \qquad
        z = \sigma(x W_{iz}^\top + b_{iz} + h W_{hz}^\top + b_{hz}) \\
        n &= \tanh(x W_{in}^\top + b_{in} + r \odot (h W_{hn}^\top + b_{hn})), \qquad
        h' = (1 - z) \odot n + z \odot h

    The reset gate multiplies the *projected* state (PyTorch's form).  Everything
    after the two projections is one fused primitive, ``gru_cell``, whose derivative
    is written by hand beside it (:mod:`difflab.ops.nn_recurrent`).

    Parameters
    ----------
    input_size : int
        :math:`H_{in}`, the features of the input.
    hidden_size : int
        :math:`H`, the features of the state.
    bias : bool, default True
        Learn :math:`b_{ih}` and :math:`b_{hh}`.
    dtype : difflab dtype, optional
        The parameters' dtype (the default dtype by default).

    Attributes
    ----------
    weight_ih : Parameter
        :math:`(3H, H_{in})`, the gates in the order :math:`r, z, n`; every
        parameter drawn from :math:`\mathcal U(-k, k)`, :math:`k = 1/\sqrt{H}`.
    weight_hh : Parameter
        :math:`(3H, H)`.
    bias_ih, bias_hh : Parameter or None
        :math:`(3H,)`.

    Shape
    -----
    - Input: ``x`` :math:`(N, H_{in})`; ``h`` :math:`(N, H)` (or without :math:`N`).
    - Output: :math:`h'`, :math:`(N, H)`.

    Raises
    ------
    ValueError
        If the input's last dimension is not ``input_size``.

    See Also
    --------
    GRU, LSTMCell

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> cell = nn.GRUCell(3, 5)
    >>> cell(dl.randn(2, 3)).shape, cell.weight_ih.shape
    (difflab.Size([2, 5]), difflab.Size([15, 3]))
    """

    gates = 3

    def forward(self, x: Tensor, h: Tensor | None = None) -> Tensor:
        return self._step(self._input_projection(x), h)

    def _step(self, gi: Tensor, h: Tensor | None) -> Tensor:
        if h is None:
            h = self._zero_state(gi)
        # the gates r, z, n and h' in one fused primitive (the equations above)
        return apply(nn_recurrent.GRUCell, gi, F.linear(h, self.weight_hh, self.bias_hh), h)


class GRU(_RecurrentBase):
    r"""A multi-layer GRU over a sequence; returns ``(output, h_n)``.

    Each step is :class:`GRUCell`'s.

    Called as ``gru(x, h0)``; ``h0`` left out is zeros.

    Parameters
    ----------
    input_size : int
        :math:`H_{in}`.
    hidden_size : int
        :math:`H`.
    num_layers : int, default 1
        Stacked layers; layer :math:`l > 0` reads layer :math:`l - 1`'s outputs.
    bias : bool, default True
        Learn the biases.
    batch_first : bool, default False
        Input and output are :math:`(N, L, \cdot)` instead of :math:`(L, N, \cdot)`
        (the states stay :math:`(\text{num\_layers}, N, H)`).
    dropout : float, default 0.0
        In training, dropout on each layer's outputs except the last layer's.
    bidirectional : bool, default False
        Not supported: ``True`` raises (run a second layer on ``x.flip(0)``).
    device, dtype : optional
        Where the parameters live and their dtype.

    Attributes
    ----------
    weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k} : Parameter
        Layer :math:`k`'s parameters, :math:`(3H, \cdot)` as :class:`GRUCell`'s,
        drawn from :math:`\mathcal U(-k, k)`, :math:`k = 1/\sqrt{H}`.

    Shape
    -----
    - Input: ``x`` :math:`(L, N, H_{in})` (or :math:`(N, L, H_{in})`); ``h0``
      :math:`(\text{num\_layers}, N, H)`.
    - Output: ``output`` :math:`(L, N, H)`; ``h_n`` :math:`(\text{num\_layers}, N, H)`.
    - A single sequence without a batch dimension, ``x`` :math:`(L, H_{in})`, is
      taken as a batch of one: its states and outputs have no :math:`N` either.

    Raises
    ------
    ValueError
        For a ``dropout`` outside :math:`[0, 1]`, a ``num_layers`` that is not a
        positive int, an input that is neither 3-D nor 2-D or has the wrong features, or
        states whose dimensions do not match the input's.
    NotImplementedError
        With ``bidirectional=True``.

    Notes
    -----
    The layer is a Python loop over the time steps that applies the same cell at
    every step; the tape records each step, so backpropagation through time is the
    ordinary backward walk, and the shared weights receive the sum of their
    adjoints from every step.  The input's projection :math:`x_t W_{ih}^\top + b_{ih}`
    is computed for all steps at once, before the loop (it does not depend on the
    state); the loop does the state's projection and the cell's gates.  A dropout
    with one layer only warns (PyTorch's behaviour).

    See Also
    --------
    LSTM, RNN, GRUCell

    Examples
    --------
    >>> import difflab as dl
    >>> from difflab import nn
    >>> gru = nn.GRU(4, 6)
    >>> output, h_n = gru(dl.randn(7, 2, 4))
    >>> output.shape, h_n.shape, gru.weight_hh_l0.shape
    (difflab.Size([7, 2, 6]), difflab.Size([1, 2, 6]), difflab.Size([18, 6]))
    """

    cell_class, _mode = GRUCell, "GRU"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, dtype, device)

    def forward(self, x: Tensor, h0: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return self._forward_one_state(x, h0)
