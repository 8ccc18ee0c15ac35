"""``torch.nn.modules.normalization``'s layer, at PyTorch's path (defined in :mod:`.layers`)."""

from difflab.nn.modules.layers import LayerNorm

__all__ = ["LayerNorm"]
