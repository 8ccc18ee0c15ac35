"""``torch.nn.modules.flatten``'s layers, at PyTorch's path (defined in :mod:`.layers`)."""

from difflab.nn.modules.layers import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
