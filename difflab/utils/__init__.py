"""PyTorch's ``torch.utils`` spelling: ``difflab.utils.data`` is :mod:`difflab.data`;
``difflab.utils.checkpoint`` is activation checkpointing."""

from difflab.utils import checkpoint, data

__all__ = ["checkpoint", "data"]
