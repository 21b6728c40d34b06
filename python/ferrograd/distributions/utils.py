"""Helpers shared by the distributions: parameter broadcasting, the
probability/logit conversions and a cached-attribute descriptor."""

from __future__ import annotations

import math
import numbers

import ferrograd
from ferrograd import _batched

__all__ = [
    "all_true", "broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits",
    "tril_matrix_to_vec", "vec_to_tril_matrix",
]  # fmt: skip


def all_true(valid):
    """Whether every element of the boolean tensor ``valid`` is True, across
    all samples when called inside ``vmap`` (validation is a check on the
    whole batch, not data-dependent control flow per sample).

    Args:
        valid (Tensor): a boolean tensor.

    Example:
        >>> from ferrograd.distributions.utils import all_true
        >>> all_true(ferrograd.tensor([True, False]))
        False
    """
    while _batched.is_batched(valid):
        valid = valid._p  # the physical tensor holds every sample
    return bool(valid.all())


def broadcast_all(*values):
    """Broadcasts tensors and Python numbers to one shape.

    Numbers become tensors of the first tensor's dtype (the default dtype when
    there is none).

    Args:
        *values: tensors or Python numbers.

    Returns:
        tuple: the broadcast tensors.

    Example:
        >>> from ferrograd.distributions.utils import broadcast_all
        >>> a, b = broadcast_all(ferrograd.zeros(2), 1.0)
        >>> b
        tensor([1., 1.])
    """
    if not all(isinstance(v, (ferrograd.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or ferrograd.Tensor.")
    like = next((v for v in values if isinstance(v, ferrograd.Tensor)), None)
    dtype = like.dtype if like is not None else ferrograd.get_default_dtype()
    if like is not None and not like.dtype.is_floating_point:
        dtype = ferrograd.get_default_dtype()
    tensors = [v if isinstance(v, ferrograd.Tensor) else ferrograd.tensor(v, dtype=dtype) for v in values]
    return tuple(ferrograd.broadcast_tensors(*tensors))


def clamp_probs(probs):
    """Clamps probabilities into ``[eps, 1 - eps]`` of their dtype.

    Args:
        probs (Tensor): probabilities.

    Returns:
        Tensor: the clamped probabilities.

    Example:
        >>> from ferrograd.distributions.utils import clamp_probs
        >>> clamp_probs(ferrograd.tensor([0.0, 0.5])) > 0
        tensor([True, True])
    """
    eps = ferrograd.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """Turns logits into probabilities: a sigmoid when ``is_binary``, else a
    softmax over the last dimension.

    Args:
        logits (Tensor): the logits.
        is_binary (bool): one logit per event (Bernoulli) instead of a
            vector of category logits.

    Returns:
        Tensor: the probabilities.

    Example:
        >>> from ferrograd.distributions.utils import logits_to_probs
        >>> logits_to_probs(ferrograd.zeros(2))
        tensor([0.5000, 0.5000])
    """
    if is_binary:
        return ferrograd.sigmoid(logits)
    return ferrograd.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    """Turns probabilities into logits (the inverse of :func:`logits_to_probs`,
    up to the additive constant of a softmax).

    Args:
        probs (Tensor): the probabilities.
        is_binary (bool): one probability per event (Bernoulli).

    Returns:
        Tensor: the logits.

    Example:
        >>> from ferrograd.distributions.utils import probs_to_logits
        >>> probs_to_logits(ferrograd.tensor([0.5]), is_binary=True)
        tensor([0.])
    """
    p = clamp_probs(probs)
    if is_binary:
        return ferrograd.log(p) - ferrograd.log1p(-p)
    return ferrograd.log(p)


def _tril_count(n, diag):
    """The number of entries ``(i, j)`` of an ``n x n`` matrix with ``j - i <= diag``:
    row ``i`` holds ``clamp(i + diag + 1, 0, n)`` of them."""
    first = max(0, -diag)  # the first row with any
    full = min(n, max(first, n - diag - 1))  # the first row that is full
    partial = (full - first) * (first + full + 2 * diag + 1) // 2 if full > first else 0
    return partial + n * (n - full)


def _tril_side(size, diag):
    """The ``n`` whose triangle (``j - i <= diag``) holds ``size`` entries, or None."""
    if size < 0:
        return None
    b = 1 + 2 * diag
    guess = round((-b + math.sqrt(b * b + 8 * size + 4 * abs(diag) * (diag + 1))) / 2)
    slack = 2 + abs(diag)
    candidates = range(max(0, guess - slack), guess + slack + 1)
    return next((n for n in candidates if _tril_count(n, diag) == size), None)


def vec_to_tril_matrix(vec, diag=0):
    """Places the last dimension of ``vec`` row by row into the lower
    triangle (the entries with ``j - i <= diag``) of square matrices, the
    rest zero; the inverse of :func:`tril_matrix_to_vec`.

    Args:
        vec (Tensor): the entries, ``(*batch, N)``.
        diag (int): the highest diagonal filled (0 the main one, -1 the one
            below it).

    Returns:
        Tensor: ``(*batch, n, n)`` for the ``n`` whose triangle holds ``N``.

    Example:
        >>> from ferrograd.distributions.utils import vec_to_tril_matrix
        >>> vec_to_tril_matrix(ferrograd.tensor([1.0, 2.0, 3.0]), diag=-1)
        tensor([[0., 0., 0.],
                [1., 0., 0.],
                [2., 3., 0.]])
    """
    size = vec.shape[-1] if vec.dim() else -1
    n = _tril_side(size, diag)
    if n is None:
        raise ValueError(
            f"The size of last dimension is {size} which cannot be expressed as the lower triangular "
            f"part (diag={diag}) of a square D x D matrix."
        )
    mat = ferrograd.zeros(tuple(vec.shape[:-1]) + (n, n), dtype=vec.dtype, device=vec.device)
    rows, cols = ferrograd.tril_indices(n, n, diag)
    mat[..., rows, cols] = vec
    return mat


def tril_matrix_to_vec(mat, diag=0):
    """The entries of the lower triangle (``j - i <= diag``) of square
    matrices, row by row, along a new last dimension.

    Args:
        mat (Tensor): the matrices, ``(*batch, n, n)``.
        diag (int): the highest diagonal taken.

    Returns:
        Tensor: ``(*batch, N)``.

    Example:
        >>> from ferrograd.distributions.utils import tril_matrix_to_vec
        >>> tril_matrix_to_vec(ferrograd.arange(9.0).reshape(3, 3), diag=-1)
        tensor([3., 6., 7.])
    """
    if mat.dim() < 2 or mat.shape[-1] != mat.shape[-2]:
        raise ValueError(f"tril_matrix_to_vec expects square matrices, got shape {tuple(mat.shape)}")
    n = mat.shape[-1]
    rows, cols = ferrograd.tril_indices(n, n, diag)
    return mat[..., rows, cols]


class lazy_property:  # noqa: N801  (torch's name)
    """A property computed on first access and then stored on the instance.

    Args:
        wrapped (callable): the method computing the value.
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with ferrograd.enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value
