"""Module-level forms of the reductions and scans (``ferrograd.sum(t, dim=1)``)."""

from ._core import Tensor, std_mean, var_mean

__all__ = [
    "all",
    "amax",
    "amin",
    "aminmax",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "log_softmax",
    "logsumexp",
    "max",
    "mean",
    "min",
    "norm",
    "prod",
    "softmax",
    "std",
    "std_mean",
    "sum",
    "var",
    "var_mean",
]

all = Tensor.all  # noqa: A001
amax = Tensor.amax
amin = Tensor.amin
aminmax = Tensor.aminmax
any = Tensor.any  # noqa: A001
argmax = Tensor.argmax
argmin = Tensor.argmin
count_nonzero = Tensor.count_nonzero
cumprod = Tensor.cumprod
cumsum = Tensor.cumsum
log_softmax = Tensor.log_softmax
logsumexp = Tensor.logsumexp
max = Tensor.max  # noqa: A001
mean = Tensor.mean
min = Tensor.min  # noqa: A001
norm = Tensor.norm
prod = Tensor.prod
softmax = Tensor.softmax
std = Tensor.std
sum = Tensor.sum  # noqa: A001
var = Tensor.var
