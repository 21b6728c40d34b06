"""``ferrograd.nn.utils``: gradient clipping, parameter/vector conversion and
(in ``ferrograd.nn.utils.rnn``) padded and packed sequences."""

from . import clip_grad as clip_grad
from . import convert_parameters as convert_parameters
from . import rnn as rnn
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
]
