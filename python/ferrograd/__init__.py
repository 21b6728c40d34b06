"""ferrograd: torch.autograd's power without PyTorch's weight.

A Rust tensor core (strided storage, views, rayon-parallel kernels) with a
torch-compatible Python API: ``import ferrograd as torch`` runs ordinary
tensor code.
"""

from __future__ import annotations

from math import e as e
from math import inf as inf
from math import nan as nan
from math import pi as pi

# `from m import x as x` marks a public re-export for type checkers (PEP 484).
from . import _core
from . import accelerator as accelerator
from . import autograd as autograd
from . import backends as backends
from . import cuda as cuda
from . import distributed as distributed
from . import fft as fft
from . import func as func
from . import linalg as linalg
from . import nn as nn
from . import optim as optim
from . import profiler as profiler
from . import testing as testing
from . import utils as utils
from ._config import are_deterministic_algorithms_enabled as are_deterministic_algorithms_enabled
from ._config import get_default_device as get_default_device
from ._config import (
    is_deterministic_algorithms_warn_only_enabled as is_deterministic_algorithms_warn_only_enabled,
)
from ._config import set_default_device as set_default_device
from ._config import use_deterministic_algorithms as use_deterministic_algorithms
from ._core import Tensor as Tensor
from ._core import as_tensor as as_tensor
from ._core import bfloat16 as bfloat16
from ._core import bool as bool  # noqa: A004  (torch.bool)
from ._core import channels_last as channels_last
from ._core import channels_last_3d as channels_last_3d
from ._core import complex as complex
from ._core import complex64 as complex64
from ._core import complex128 as complex128
from ._core import contiguous_format as contiguous_format
from ._core import device as device
from ._core import dtype as dtype
from ._core import empty as empty
from ._core import empty_like as empty_like
from ._core import float16 as float16
from ._core import float32 as float32
from ._core import float64 as float64
from ._core import from_dlpack as from_dlpack
from ._core import from_numpy as from_numpy
from ._core import frombuffer as frombuffer
from ._core import full as full
from ._core import full_like as full_like
from ._core import get_default_dtype as get_default_dtype
from ._core import get_num_threads as get_num_threads
from ._core import int8 as int8
from ._core import int16 as int16
from ._core import int32 as int32
from ._core import int64 as int64
from ._core import is_anomaly_check_nan_enabled as is_anomaly_check_nan_enabled
from ._core import is_anomaly_enabled as is_anomaly_enabled
from ._core import is_complex as is_complex
from ._core import is_floating_point as is_floating_point
from ._core import is_tensor as is_tensor
from ._core import memory_format as memory_format
from ._core import numel as numel
from ._core import ones as ones
from ._core import ones_like as ones_like
from ._core import polar as polar
from ._core import preserve_format as preserve_format
from ._core import promote_types as promote_types
from ._core import result_type as result_type
from ._core import set_anomaly_enabled as set_anomaly_enabled
from ._core import set_default_dtype as set_default_dtype
from ._core import set_num_threads as set_num_threads
from ._core import tensor as tensor
from ._core import uint8 as uint8
from ._core import view_as_complex as view_as_complex
from ._core import view_as_real as view_as_real
from ._core import zeros as zeros
from ._core import zeros_like as zeros_like
from ._dtype_info import can_cast as can_cast
from ._dtype_info import finfo as finfo
from ._dtype_info import iinfo as iinfo
from ._ops_composite import *  # noqa: F403
from ._ops_linalg import *  # noqa: F403
from ._ops_math import *  # noqa: F403
from ._ops_nn_aliases import *  # noqa: F403
from ._ops_pointwise import *  # noqa: F403
from ._ops_random import *  # noqa: F403
from ._ops_reduce import *  # noqa: F403
from ._ops_reduce_extra import *  # noqa: F403
from ._ops_scatter_copy import *  # noqa: F403
from ._ops_search import *  # noqa: F403
from ._ops_shape_extra import *  # noqa: F403
from ._ops_shape_index import *  # noqa: F403
from ._ops_signal import *  # noqa: F403
from ._ops_views import *  # noqa: F403
from ._size import Size as Size
from ._tensor_types import BFloat16Tensor as BFloat16Tensor
from ._tensor_types import BoolTensor as BoolTensor
from ._tensor_types import ByteTensor as ByteTensor
from ._tensor_types import CharTensor as CharTensor
from ._tensor_types import DoubleTensor as DoubleTensor
from ._tensor_types import FloatTensor as FloatTensor
from ._tensor_types import HalfTensor as HalfTensor
from ._tensor_types import IntTensor as IntTensor
from ._tensor_types import LongTensor as LongTensor
from ._tensor_types import ShortTensor as ShortTensor
from .autograd.grad_mode import enable_grad as enable_grad
from .autograd.grad_mode import inference_mode as inference_mode
from .autograd.grad_mode import is_grad_enabled as is_grad_enabled
from .autograd.grad_mode import is_inference_mode_enabled as is_inference_mode_enabled
from .autograd.grad_mode import no_grad as no_grad
from .autograd.grad_mode import set_grad_enabled as set_grad_enabled
from .func._vmap import vmap as vmap
from .serialization import load as load
from .serialization import save as save

float = float32  # noqa: A001
double = float64
half = float16
cfloat = complex64
cdouble = complex128
long = int64
int = int32  # noqa: A001
short = int16
newaxis = None  # indexing with it adds a dimension of size 1, as with NumPy

__version__: str = _core.__version__  # Cargo.toml's version

_DTYPES = {
    d.__repr__().split(".")[1]: d
    for d in (
        bool,
        uint8,
        int8,
        int16,
        int32,
        int64,
        float16,
        bfloat16,
        float32,
        float64,
        complex64,
        complex128,
    )
}


def _dtype_from_name(name: str) -> dtype:
    """Unpickles a dtype by its name."""
    return _DTYPES[name]


from . import (  # noqa: E402
    _ops_composite,
    _ops_linalg,
    _ops_pointwise,
    _ops_random,
    _ops_reduce,
    _ops_shape_index,
    _ops_views,
)
from ._routed import route_module as _route_module  # noqa: E402

# The module-level docs of the functions that are Tensor methods, aliases or
# factory-made, from the DOCS table of the module that defines each.
_route_module(globals(), "ferrograd", "", docs={
    **_ops_composite.DOCS, **_ops_linalg.DOCS, **_ops_pointwise.DOCS, **_ops_random.DOCS, **_ops_reduce.DOCS,
    **_ops_shape_index.DOCS, **_ops_views.DOCS,
})  # fmt: skip
del _route_module

# torch.amp and torch.cpu (with the two in-place ops of gradient scaling);
# torch.functional (the same functions as above), an attribute as in torch.
from . import amp as amp  # noqa: E402
from . import cpu as cpu  # noqa: E402
from . import distributions as distributions  # noqa: E402
from . import functional as functional  # noqa: E402
from . import special as special  # noqa: E402
from ._samplers import _dirichlet_grad as _dirichlet_grad  # noqa: E402
from ._samplers import _sample_dirichlet as _sample_dirichlet  # noqa: E402
from ._samplers import _standard_gamma as _standard_gamma  # noqa: E402
from ._samplers import _standard_gamma_grad as _standard_gamma_grad  # noqa: E402
from .amp import autocast_mode as _autocast_mode  # noqa: E402
from .amp.grad_scaler import (  # noqa: E402
    _amp_foreach_non_finite_check_and_unscale_ as _amp_foreach_non_finite_check_and_unscale_,
)
from .amp.grad_scaler import _amp_update_scale_ as _amp_update_scale_  # noqa: E402

# CPU autocast: the region manager and its state functions, and the cast
# policies of the listed ops (set once here, after every module is loaded).
autocast = _autocast_mode.autocast
autocast_decrement_nesting = _autocast_mode.autocast_decrement_nesting
autocast_increment_nesting = _autocast_mode.autocast_increment_nesting
clear_autocast_cache = _autocast_mode.clear_autocast_cache
get_autocast_cpu_dtype = _autocast_mode.get_autocast_cpu_dtype
get_autocast_dtype = _autocast_mode.get_autocast_dtype
is_autocast_cache_enabled = _autocast_mode.is_autocast_cache_enabled
is_autocast_cpu_enabled = _autocast_mode.is_autocast_cpu_enabled
is_autocast_enabled = _autocast_mode.is_autocast_enabled
set_autocast_cache_enabled = _autocast_mode.set_autocast_cache_enabled
set_autocast_cpu_dtype = _autocast_mode.set_autocast_cpu_dtype
set_autocast_cpu_enabled = _autocast_mode.set_autocast_cpu_enabled
set_autocast_dtype = _autocast_mode.set_autocast_dtype
set_autocast_enabled = _autocast_mode.set_autocast_enabled
_autocast_mode._install()

# ferrograd.compile: capture once, replay in the engine (docs/compile.md).
from . import _dynamo as _dynamo  # noqa: E402
from . import compiler as compiler  # noqa: E402
from ._compile import compile as compile  # noqa: E402, A004
