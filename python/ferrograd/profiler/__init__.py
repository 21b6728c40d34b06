"""torch.profiler's API: record what a program's ops, backward passes and
labelled ranges cost, with optional schedules for training loops.

>>> import ferrograd as torch
>>> from ferrograd.profiler import ProfilerActivity, profile, record_function
>>> with profile(activities=[ProfilerActivity.CPU]) as prof:
...     with record_function("step"):
...         y = (torch.ones(3, requires_grad=True) * 2).sum()
...     y.backward()
>>> "aten::mul" in {e.key for e in prof.key_averages()}
True

ferrograd records CPU work only; see docs/profiler.md.
"""

from __future__ import annotations

from ..autograd.profiler import KinetoStepTracker as KinetoStepTracker
from ..autograd.profiler import record_function
from ..autograd.profiler_util import DeviceType
from .profiler import (
    ProfilerAction,
    ProfilerActivity,
    kineto_available,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)
from .profiler import _KinetoProfile as _KinetoProfile

__all__ = [
    "profile",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
    "ProfilerAction",
    "ProfilerActivity",
    "kineto_available",
    "DeviceType",
    "record_function",
]
