"""``from difflab.utils.data import DataLoader``: the objects of :mod:`difflab.data`."""

from difflab.data import *  # noqa: F403
from difflab.data import __all__  # noqa: F401
