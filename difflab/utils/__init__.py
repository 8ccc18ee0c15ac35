"""PyTorch's ``torch.utils`` spelling: ``difflab.utils.data`` is :mod:`difflab.data`."""

from difflab.utils import data

__all__ = ["data"]
