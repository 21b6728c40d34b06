"""``torch.amp``: automatic mixed precision. :class:`autocast` runs each op
of a region in the precision chosen for it; :class:`GradScaler` scales
losses so that low-precision gradients neither underflow nor, when they
overflow, corrupt the parameters.
"""

from __future__ import annotations

from . import autocast_mode as autocast_mode
from . import grad_scaler as grad_scaler
from .autocast_mode import autocast as autocast
from .autocast_mode import custom_bwd as custom_bwd
from .autocast_mode import custom_fwd as custom_fwd
from .autocast_mode import is_autocast_available as is_autocast_available
from .grad_scaler import GradScaler as GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
