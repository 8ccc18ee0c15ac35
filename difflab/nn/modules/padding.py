"""Padding layers at PyTorch's path ``nn.modules.padding``: each calls
:func:`difflab.nn.functional.pad` with its mode and amounts."""

from __future__ import annotations

from typing import Any

from difflab.nn import functional as F
from difflab.nn.modules.module import Module
from difflab.tensor import Tensor
from difflab.tensor_arguments import shape_args

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]


class _Pad(Module):
    mode, _sides = "constant", 2

    def __init__(self, padding: Any, value: float = 0.0) -> None:
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * self._sides
        # (ints: 1.5 was truncated to 1; None was "'NoneType' object is not iterable")
        padding = shape_args((padding,), type(self).__name__, "the padding amounts")
        if len(padding) != self._sides:
            sides = "left, right" + (", top, bottom" if self._sides >= 4 else "") + (
                ", front, back" if self._sides == 6 else "")
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of "
                             f"{self._sides} amounts ({sides}), got {padding}")
        self.padding, self.value = padding, value

    def forward(self, x: Tensor) -> Tensor:
        if self.mode == "constant":
            return F.pad(x, self.padding, "constant", self.value)
        return F.pad(x, self.padding, self.mode)

    def extra_repr(self) -> str:  # (PyTorch's: the fill shown by the ConstantPad layers only)
        if type(self).__name__.startswith("Constant"):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


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


_PAD3D_DOC = r"""Pad the last three dimensions {how}.

    Parameters
    ----------
    padding : int or tuple of 6 ints
        (left, right, top, bottom, front, back); an int pads every side by it.{value}

    Shape
    -----
    - Input: :math:`(N, C, D_{{in}}, H_{{in}}, W_{{in}})` or without :math:`N`.
    - Output: the same with :math:`D_{{out}} = D_{{in}} + \text{{front}} + \text{{back}}`,
      :math:`H_{{out}} = H_{{in}} + \text{{top}} + \text{{bottom}}`,
      :math:`W_{{out}} = W_{{in}} + \text{{left}} + \text{{right}}`.

    Raises
    ------
    ValueError
        If ``padding`` is not an int or 6 amounts; when called, if the mode
        cannot make the padding (see :func:`~difflab.nn.functional.pad`).
    TypeError
        If an amount of ``padding`` is not an int (a float is not rounded).

    See Also
    --------
    {see}, difflab.nn.functional.pad

    Examples
    --------
    >>> import difflab as dl
    >>> x = dl.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> pad = dl.nn.{name}({args})
    >>> pad
    {repr}
    >>> y = pad(x)
    >>> y.shape, y[0, 0, :, 0, 0].tolist()
    (difflab.Size([{shape}]), {column})
    """


class ConstantPad3d(_Pad):
    __doc__ = _PAD3D_DOC.format(
        how="with ``value``", see="ConstantPad2d", name="ConstantPad3d",
        args="(1, 0, 0, 0, 1, 1), 9.0",
        repr="ConstantPad3d(padding=(1, 0, 0, 0, 1, 1), value=9.0)", shape="1, 1, 4, 2, 3",
        column="[9.0, 9.0, 9.0, 9.0]",
        value="\n    value : float\n        The fill.")
    _sides = 6

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ZeroPad3d(_Pad):
    __doc__ = _PAD3D_DOC.format(
        how="with zeros", see="ZeroPad2d", name="ZeroPad3d", args="(0, 1, 0, 0, 1, 0)",
        repr="ZeroPad3d((0, 1, 0, 0, 1, 0))", shape="1, 1, 3, 2, 3",
        column="[0.0, 0.0, 4.0]", value="")
    _sides = 6

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class ReflectionPad3d(_Pad):
    __doc__ = _PAD3D_DOC.format(
        how="with their mirror images (the edge not repeated)", see="ReflectionPad2d",
        name="ReflectionPad3d", args="(0, 0, 0, 0, 1, 1)",
        repr="ReflectionPad3d((0, 0, 0, 0, 1, 1))", shape="1, 1, 4, 2, 2",
        column="[4.0, 0.0, 4.0, 0.0]", value="")
    mode, _sides = "reflect", 6


class ReplicationPad3d(_Pad):
    __doc__ = _PAD3D_DOC.format(
        how="by repeating their edges", see="ReplicationPad2d", name="ReplicationPad3d",
        args="(0, 0, 0, 0, 1, 2)", repr="ReplicationPad3d((0, 0, 0, 0, 1, 2))",
        shape="1, 1, 5, 2, 2", column="[0.0, 0.0, 4.0, 4.0, 4.0]", value="")
    mode, _sides = "replicate", 6


class CircularPad3d(_Pad):
    __doc__ = _PAD3D_DOC.format(
        how="by wrapping around", see="CircularPad2d", name="CircularPad3d",
        args="(0, 0, 0, 0, 2, 1)", repr="CircularPad3d((0, 0, 0, 0, 2, 1))",
        shape="1, 1, 5, 2, 2", column="[0.0, 4.0, 0.0, 4.0, 0.0]", value="")
    mode, _sides = "circular", 6
