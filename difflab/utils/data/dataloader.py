"""``torch.utils.data.dataloader``: :class:`~difflab.data.DataLoader` and its collate."""

from difflab.data.dataloader import DataLoader, default_collate

__all__ = ["DataLoader", "default_collate"]
