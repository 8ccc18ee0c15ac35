"""PyTorch's ``torch.utils.benchmark``: time statements with ``Timer``, compare with ``Compare``.

>>> from difflab.utils.benchmark import Timer
>>> m = Timer("x * 2", globals={"x": 3}).blocked_autorange(min_run_time=0.01)
>>> m.median > 0
True

Timings are never exact: read the median with its IQR, run the contestants
in the same minute on the same machine, and trust ratios over absolute times.
"""

from difflab.utils.benchmark.compare import Compare
from difflab.utils.benchmark.measurement import Measurement, TaskSpec, select_unit
from difflab.utils.benchmark.timer import Timer

__all__ = ["Compare", "Measurement", "TaskSpec", "Timer", "select_unit"]
