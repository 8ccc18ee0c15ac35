"""PyTorch's ``torch.utils`` spelling: ``difflab.utils.data`` is :mod:`difflab.data`;
``difflab.utils.checkpoint`` is activation checkpointing; ``difflab.utils.benchmark`` times
statements (``Timer``, ``Compare``)."""

from difflab.utils import benchmark, checkpoint, data

__all__ = ["benchmark", "checkpoint", "data"]
