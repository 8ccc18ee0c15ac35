"""``torch.utils.data.dataloader``: :class:`~difflab.data.DataLoader` and its helpers."""

from difflab.data.dataloader import DataLoader, default_collate, default_convert, get_worker_info

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]
