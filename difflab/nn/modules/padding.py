"""Padding layers at PyTorch's path ``nn.modules.padding``: each calls
:func:`difflab.nn.functional.pad` with its mode and amounts."""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor
from difflab.tensor_arguments import shape_args

__all__ = ["CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d",
           "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d",
           "ZeroPad1d", "ZeroPad2d"]


class _Pad(Module):
    mode, _sides = "constant", 2

    def __init__(self, padding: Any, value: float = 0.0) -> None:
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * self._sides
        # (ints: 1.5 was truncated to 1; None was "'NoneType' object is not iterable")
        padding = shape_args((padding,), type(self).__name__, "the padding amounts")
        if len(padding) != self._sides:
            sides = "left, right" + (", top, bottom" if self._sides == 4 else "")
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of "
                             f"{self._sides} amounts ({sides}), got {padding}")
        self.padding, self.value = padding, value

    def forward(self, x: Tensor) -> Tensor:
        if self.mode == "constant":
            return F.pad(x, self.padding, "constant", self.value)
        return F.pad(x, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}" + (f", value={self.value}" if self.mode == "constant" else "")


class ConstantPad1d(_Pad):
    r"""Pad the last dimension with ``value``: ``padding`` = (left, right) or one int.

    Parameters
    ----------
    padding : int or tuple of 2 ints
        (left, right); an int pads every side by it (negative amounts crop).
    value : float
        The fill.

    Shape
    -----
    - Input: :math:`(N, C, W_{in})` or :math:`(C, W_{in})`.
    - Output: the same with :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Raises
    ------
    ValueError
        If ``padding`` is not an int or 2 amounts; when called, if the mode
        cannot make the padding (see :func:`~difflab.nn.functional.pad`).
    TypeError
        If an amount of ``padding`` is not an int (a float is not rounded).

    See Also
    --------
    difflab.nn.functional.pad

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.ConstantPad1d((1, 2), 9.0)(dl.tensor([[1.0, 2.0]])).tolist()
    [[9.0, 1.0, 2.0, 9.0, 9.0]]
    """

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ConstantPad2d(_Pad):
    r"""Pad the last two dimensions with ``value``: (left, right, top, bottom) or one int.

    Parameters
    ----------
    padding : int or tuple of 4 ints
        (left, right, top, bottom); an int pads every side by it (negative amounts crop).
    value : float
        The fill.

    Shape
    -----
    - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
    - Output: the same with :math:`H_{out} = H_{in} + \text{top} + \text{bottom}`,
      :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Raises
    ------
    ValueError
        If ``padding`` is not an int or 4 amounts; when called, if the mode
        cannot make the padding (see :func:`~difflab.nn.functional.pad`).
    TypeError
        If an amount of ``padding`` is not an int (a float is not rounded).

    See Also
    --------
    difflab.nn.functional.pad

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.ConstantPad2d(1, 0.5)(dl.ones(1, 2, 2)).shape
    difflab.Size([1, 4, 4])
    """

    _sides = 4

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ZeroPad1d(_Pad):
    r"""Pad the last dimension with zeros.

    Parameters
    ----------
    padding : int or tuple of 2 ints
        (left, right); an int pads every side by it (negative amounts crop).

    Shape
    -----
    - Input: :math:`(N, C, W_{in})` or :math:`(C, W_{in})`.
    - Output: the same with :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Raises
    ------
    ValueError
        If ``padding`` is not an int or 2 amounts; when called, if the mode
        cannot make the padding (see :func:`~difflab.nn.functional.pad`).
    TypeError
        If an amount of ``padding`` is not an int (a float is not rounded).

    See Also
    --------
    difflab.nn.functional.pad

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.ZeroPad1d(1)(dl.tensor([[1.0]])).tolist()
    [[0.0, 1.0, 0.0]]
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class ZeroPad2d(_Pad):
    r"""Pad the last two dimensions with zeros.

    Parameters
    ----------
    padding : int or tuple of 4 ints
        (left, right, top, bottom); an int pads every side by it (negative amounts crop).

    Shape
    -----
    - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
    - Output: the same with :math:`H_{out} = H_{in} + \text{top} + \text{bottom}`,
      :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Raises
    ------
    ValueError
        If ``padding`` is not an int or 4 amounts; when called, if the mode
        cannot make the padding (see :func:`~difflab.nn.functional.pad`).
    TypeError
        If an amount of ``padding`` is not an int (a float is not rounded).

    See Also
    --------
    difflab.nn.functional.pad

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.ZeroPad2d((1, 0, 0, 1))(dl.ones(1, 1, 1)).tolist()
    [[[0.0, 1.0], [0.0, 0.0]]]
    """

    _sides = 4

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class ReflectionPad1d(_Pad):
    r"""Pad the last dimension with its mirror image (the edge not repeated).

    Parameters
    ----------
    padding : int or tuple of 2 ints
        (left, right); an int pads every side by it (negative amounts crop).

    Shape
    -----
    - Input: :math:`(N, C, W_{in})` or :math:`(C, W_{in})`.
    - Output: the same with :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Raises
    ------
    ValueError
        If ``padding`` is not an int or 2 amounts; when called, if the mode
        cannot make the padding (see :func:`~difflab.nn.functional.pad`).
    TypeError
        If an amount of ``padding`` is not an int (a float is not rounded).

    See Also
    --------
    difflab.nn.functional.pad

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.ReflectionPad1d(2)(dl.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
    """

    mode = "reflect"


class ReflectionPad2d(_Pad):
    r"""Pad the last two dimensions with their mirror image.

    Parameters
    ----------
    padding : int or tuple of 4 ints
        (left, right, top, bottom); an int pads every side by it (negative amounts crop).

    Shape
    -----
    - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
    - Output: the same with :math:`H_{out} = H_{in} + \text{top} + \text{bottom}`,
      :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Raises
    ------
    ValueError
        If ``padding`` is not an int or 4 amounts; when called, if the mode
        cannot make the padding (see :func:`~difflab.nn.functional.pad`).
    TypeError
        If an amount of ``padding`` is not an int (a float is not rounded).

    See Also
    --------
    difflab.nn.functional.pad

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.ReflectionPad2d(1)(dl.randn(1, 3, 4, 4)).shape
    difflab.Size([1, 3, 6, 6])
    """

    mode, _sides = "reflect", 4


class ReplicationPad1d(_Pad):
    r"""Pad the last dimension by repeating its edge values.

    Parameters
    ----------
    padding : int or tuple of 2 ints
        (left, right); an int pads every side by it (negative amounts crop).

    Shape
    -----
    - Input: :math:`(N, C, W_{in})` or :math:`(C, W_{in})`.
    - Output: the same with :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Raises
    ------
    ValueError
        If ``padding`` is not an int or 2 amounts; when called, if the mode
        cannot make the padding (see :func:`~difflab.nn.functional.pad`).
    TypeError
        If an amount of ``padding`` is not an int (a float is not rounded).

    See Also
    --------
    difflab.nn.functional.pad

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.ReplicationPad1d((2, 1))(dl.tensor([[1.0, 2.0]])).tolist()
    [[1.0, 1.0, 1.0, 2.0, 2.0]]
    """

    mode = "replicate"


class ReplicationPad2d(_Pad):
    r"""Pad the last two dimensions by repeating their edge values.

    Parameters
    ----------
    padding : int or tuple of 4 ints
        (left, right, top, bottom); an int pads every side by it (negative amounts crop).

    Shape
    -----
    - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
    - Output: the same with :math:`H_{out} = H_{in} + \text{top} + \text{bottom}`,
      :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Raises
    ------
    ValueError
        If ``padding`` is not an int or 4 amounts; when called, if the mode
        cannot make the padding (see :func:`~difflab.nn.functional.pad`).
    TypeError
        If an amount of ``padding`` is not an int (a float is not rounded).

    See Also
    --------
    difflab.nn.functional.pad

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.ReplicationPad2d(2)(dl.randn(1, 3, 4, 4)).shape
    difflab.Size([1, 3, 8, 8])
    """

    mode, _sides = "replicate", 4


class CircularPad1d(_Pad):
    r"""Pad the last dimension by wrapping around.

    Parameters
    ----------
    padding : int or tuple of 2 ints
        (left, right); an int pads every side by it (negative amounts crop).

    Shape
    -----
    - Input: :math:`(N, C, W_{in})` or :math:`(C, W_{in})`.
    - Output: the same with :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Raises
    ------
    ValueError
        If ``padding`` is not an int or 2 amounts; when called, if the mode
        cannot make the padding (see :func:`~difflab.nn.functional.pad`).
    TypeError
        If an amount of ``padding`` is not an int (a float is not rounded).

    See Also
    --------
    difflab.nn.functional.pad

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.CircularPad1d(1)(dl.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 1.0, 2.0, 3.0, 1.0]]
    """

    mode = "circular"


class CircularPad2d(_Pad):
    r"""Pad the last two dimensions by wrapping around.

    Parameters
    ----------
    padding : int or tuple of 4 ints
        (left, right, top, bottom); an int pads every side by it (negative amounts crop).

    Shape
    -----
    - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
    - Output: the same with :math:`H_{out} = H_{in} + \text{top} + \text{bottom}`,
      :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Raises
    ------
    ValueError
        If ``padding`` is not an int or 4 amounts; when called, if the mode
        cannot make the padding (see :func:`~difflab.nn.functional.pad`).
    TypeError
        If an amount of ``padding`` is not an int (a float is not rounded).

    See Also
    --------
    difflab.nn.functional.pad

    Examples
    --------
    >>> import difflab as dl
    >>> dl.nn.CircularPad2d(1)(dl.randn(1, 2, 3, 3)).shape
    difflab.Size([1, 2, 5, 5])
    """

    mode, _sides = "circular", 4
