"""``torch.utils.data`` at PyTorch's paths: the objects of :mod:`difflab.data`.

``from difflab.utils.data import DataLoader`` and the module files programs
import directly (``difflab.utils.data.dataloader``, ``.dataset``, ``.sampler``,
``.distributed``) re-export what :mod:`difflab.data` defines.
"""

from difflab.data import *  # noqa: F403
from difflab.data import __all__  # noqa: F401
from difflab.utils.data import dataloader, dataset, distributed, sampler  # noqa: E402
