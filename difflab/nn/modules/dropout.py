"""``torch.nn.modules.dropout``'s layer, at PyTorch's path (defined in :mod:`.layers`)."""

from difflab.nn.modules.layers import Dropout

__all__ = ["Dropout"]
