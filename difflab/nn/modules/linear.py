"""``torch.nn.modules.linear``'s layers, at PyTorch's path (defined in :mod:`.layers`)."""

from difflab.nn.modules.layers import Identity, Linear

__all__ = ["Identity", "Linear"]
