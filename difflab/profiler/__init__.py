"""PyTorch's ``torch.profiler``: record where a program's time goes (see
:mod:`difflab.autograd.profiler`, which ``torch.autograd.profiler`` also names).

>>> import difflab as dl
>>> from difflab.profiler import profile, record_function, ProfilerActivity
>>> with profile(activities=[ProfilerActivity.CPU]) as prof:
...     with record_function("work"):
...         _ = dl.ones(3).sin().sum()
>>> [row.key for row in prof.key_averages()]
['work', 'sin', 'sum']
"""

from difflab.autograd.profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)
from difflab.autograd.profiler_util import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerAction",
           "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]
