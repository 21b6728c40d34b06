"""ferrograd: torch.autograd's power without PyTorch's weight.

A Rust tensor core (strided storage, views, rayon-parallel kernels) with a
torch-compatible Python API: ``import ferrograd as torch`` runs ordinary
tensor code.
"""

from __future__ import annotations

from . import _core
from . import accelerator as accelerator
from . import autograd as autograd
from . import backends as backends
from . import cuda as cuda
from . import distributed as distributed
from . import func as func
from . import linalg as linalg
from . import nn as nn
from . import optim as optim
from . import profiler as profiler
from . import utils as utils
from ._config import (
    are_deterministic_algorithms_enabled,
    get_default_device,
    is_deterministic_algorithms_warn_only_enabled,
    set_default_device,
    use_deterministic_algorithms,
)
from ._core import (
    Tensor,
    as_tensor,
    bfloat16,
    complex,
    complex64,
    complex128,
    device,
    dtype,
    empty,
    empty_like,
    float16,
    float32,
    float64,
    from_dlpack,
    from_numpy,
    full,
    full_like,
    get_default_dtype,
    get_num_threads,
    int8,
    int16,
    int32,
    int64,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_complex,
    is_floating_point,
    is_tensor,
    numel,
    ones,
    ones_like,
    polar,
    promote_types,
    result_type,
    set_anomaly_enabled,
    set_default_dtype,
    set_num_threads,
    tensor,
    uint8,
    view_as_complex,
    view_as_real,
    zeros,
    zeros_like,
)
from ._core import bool as bool  # noqa: A004  (torch.bool)
from ._ops_linalg import *  # noqa: F403
from ._ops_pointwise import *  # noqa: F403
from ._ops_random import *  # noqa: F403
from ._ops_reduce import *  # noqa: F403
from ._ops_shape_index import *  # noqa: F403
from ._ops_views import *  # noqa: F403
from ._size import Size
from ._tensor_types import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .func._vmap import vmap
from .serialization import load, save

float = float32  # noqa: A001
double = float64
half = float16
cfloat = complex64
cdouble = complex128
long = int64
int = int32  # noqa: A001
short = int16

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


from ._routed import route_module as _route_module  # noqa: E402

_route_module(globals(), "ferrograd", "")
del _route_module
