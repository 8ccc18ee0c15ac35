"""``torch.utils.data.distributed``: :class:`~difflab.data.DistributedSampler`."""

from difflab.data.sampler import DistributedSampler

__all__ = ["DistributedSampler"]
