"""``torch.nn.modules.sparse``'s layer, at PyTorch's path (defined in :mod:`.layers`)."""

from difflab.nn.modules.layers import Embedding

__all__ = ["Embedding"]
