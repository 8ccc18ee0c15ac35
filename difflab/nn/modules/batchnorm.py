"""``torch.nn.modules.batchnorm``'s layers, at PyTorch's path (defined in :mod:`.layers`)."""

from difflab.nn.modules.layers import BatchNorm1d, BatchNorm2d

__all__ = ["BatchNorm1d", "BatchNorm2d"]
