"""``ferrograd.nn.utils``: gradient clipping, parameter/vector conversion,
weight and spectral normalization, and the submodules ``rnn`` (padded and
packed sequences), ``parametrize`` and ``parametrizations`` (tensors
computed from stored ones), ``prune`` (masks on parameters) and
``stateless`` (``functional_call``)."""

from . import clip_grad as clip_grad
from . import convert_parameters as convert_parameters
from . import parametrizations as parametrizations
from . import parametrize as parametrize
from . import prune as prune
from . import rnn as rnn
from . import stateless as stateless
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "remove_spectral_norm",
    "remove_weight_norm",
    "spectral_norm",
    "vector_to_parameters",
    "weight_norm",
]
