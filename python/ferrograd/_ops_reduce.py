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
    "argsort",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "kthvalue",
    "log_softmax",
    "logsumexp",
    "max",
    "mean",
    "min",
    "median",
    "msort",
    "nanmedian",
    "norm",
    "prod",
    "softmax",
    "sort",
    "std",
    "std_mean",
    "sum",
    "topk",
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
argsort = Tensor.argsort
count_nonzero = Tensor.count_nonzero
cumprod = Tensor.cumprod
cumsum = Tensor.cumsum
kthvalue = Tensor.kthvalue
log_softmax = Tensor.log_softmax
logsumexp = Tensor.logsumexp
max = Tensor.max  # noqa: A001
mean = Tensor.mean
min = Tensor.min  # noqa: A001
median = Tensor.median
msort = Tensor.msort
nanmedian = Tensor.nanmedian
norm = Tensor.norm
prod = Tensor.prod
softmax = Tensor.softmax
sort = Tensor.sort
std = Tensor.std
sum = Tensor.sum  # noqa: A001
topk = Tensor.topk
var = Tensor.var

# Argument descriptions and the example tensor that several docs below share.
_DIMS = """dim (int or tuple of ints, optional): the dimension(s) to reduce.
            Default: None (all of them).
        keepdim (bool): whether the reduced dimensions are kept with size 1.
            Default: False."""
_DIM = """dim (int, optional): the dimension to reduce.
        keepdim (bool): whether the reduced dimension is kept with size 1.
            Default: False."""
_CORRECTION = """input (Tensor): the input tensor (floating point or complex).
        dim (int or tuple of ints, optional): the dimension(s) to reduce.
            Default: None (all of them).
        unbiased (bool, optional): the older way to choose the correction:
            True means ``correction=1``, False ``correction=0``.
        keepdim (bool): whether the reduced dimensions are kept with size 1.
            Default: False.

    Keyword args:
        correction (int or float, optional): the difference between ``N``
            and the divisor. Default: 1."""
_SORT_ARGS = """input (Tensor): the input tensor (real dtypes).
        dim (int): the dimension to sort along. Default: -1.
        descending (bool): largest first. Default: False.

    Keyword args:
        stable (bool): keep equal elements in order (they always are).
            Default: False."""
_X = "x = ferrograd.tensor([[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]])"

# Module-level docs of the functions above that are Tensor methods (applied
# when ``ferrograd`` routes them; the methods keep their own docs).
DOCS: dict[str, str] = {
    "sum": f"""sum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    Returns the sum of the elements of ``input``, over all of them or over
    the dimension(s) ``dim``.

    Bool and integer inputs are summed as ``int64`` unless ``dtype`` is
    given. Differentiable (the gradient is broadcast back to the input).

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension(s) to reduce.
            Default: None (all of them, giving a 0-dim tensor).
        keepdim (bool): whether the reduced dimensions are kept with size 1.
            Default: False.

    Keyword args:
        dtype (dtype, optional): the dtype the input is cast to before
            summing, and of the result.

    Example:
        >>> {_X}
        >>> ferrograd.sum(x)
        tensor(15.)
        >>> ferrograd.sum(x, dim=1)
        tensor([8., 7.])
        >>> ferrograd.sum(x, dim=0, keepdim=True)
        tensor([[5., 5., 5.]])
    """,
    "mean": f"""mean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    Returns the mean of the elements of ``input``, over all of them or over
    the dimension(s) ``dim``.

    The input must be floating point or complex (or ``dtype`` must be one):
    integer tensors raise an error, as in torch.

    Args:
        input (Tensor): the input tensor.
        {_DIMS}

    Keyword args:
        dtype (dtype, optional): the dtype the input is cast to first.

    Example:
        >>> {_X}
        >>> ferrograd.mean(x)
        tensor(2.5000)
        >>> ferrograd.mean(x, dim=0)
        tensor([2.5000, 2.5000, 2.5000])
    """,
    "prod": """prod(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    Returns the product of the elements of ``input``, over all of them or
    over the dimension ``dim``.

    Bool and integer inputs multiply as ``int64`` unless ``dtype`` is given.
    The gradient is correct when some elements are zero.

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce. Default: None (all).
        keepdim (bool): whether the reduced dimension is kept with size 1.
            Default: False.

    Keyword args:
        dtype (dtype, optional): the dtype the input is cast to first.

    Example:
        >>> x = ferrograd.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        >>> ferrograd.prod(x)
        tensor(720.)
        >>> ferrograd.prod(x, dim=1)
        tensor([  6., 120.])
    """,
    "std": f"""std(input, dim=None, unbiased=None, keepdim=False, *, correction=None) -> Tensor

    Returns the standard deviation of the elements of ``input``, over all of
    them or over the dimension(s) ``dim``.

    It is ``sqrt(sum((x - mean)**2) / (N - correction))`` with ``N`` the
    number of elements reduced; the default correction of 1 (Bessel's) gives
    the sample standard deviation. See :func:`ferrograd.std_mean` to get the
    mean too.

    Args:
        {_CORRECTION}

    Example:
        >>> x = ferrograd.tensor([[1.0, 2.0, 3.0], [4.0, 6.0, 8.0]])
        >>> ferrograd.std(x)
        tensor(2.6077)
        >>> ferrograd.std(x, dim=1, correction=0)
        tensor([0.8165, 1.6330])
    """,
    "var": f"""var(input, dim=None, unbiased=None, keepdim=False, *, correction=None) -> Tensor

    Returns the variance of the elements of ``input``, over all of them or
    over the dimension(s) ``dim``.

    It is ``sum((x - mean)**2) / (N - correction)`` with ``N`` the number of
    elements reduced; the default correction of 1 (Bessel's) gives the
    sample variance. See :func:`ferrograd.var_mean` to get the mean too.

    Args:
        {_CORRECTION}

    Example:
        >>> ferrograd.var(ferrograd.tensor([[1.0, 2.0, 3.0], [4.0, 6.0, 8.0]]), dim=1)
        tensor([1., 4.])
    """,
    "max": f"""max(input, dim=None, keepdim=False) -> Tensor or (Tensor, LongTensor)

    Returns the largest element of ``input``, or the largest elements along
    a dimension together with their indices, or the elementwise maximum of
    two tensors.

    Three forms:

    * ``max(input)``: the largest element, as a 0-dim tensor.
    * ``max(input, dim, keepdim=False)``: a named tuple ``(values, indices)``
      of the maxima along ``dim`` and where they are (the first one when
      several are equal). The gradient flows to the elements picked.
    * ``max(input, other)``: the same as :func:`ferrograd.maximum`.

    Args:
        input (Tensor): the input tensor.
        {_DIM}
        other (Tensor): the second tensor, in the elementwise form.

    Example:
        >>> {_X}
        >>> ferrograd.max(x)
        tensor(5.)
        >>> values, indices = ferrograd.max(x, dim=1)
        >>> values, indices
        (tensor([5., 4.]), tensor([1, 0]))
        >>> ferrograd.max(x, ferrograd.full((3,), 2.5))
        tensor([[2.5000, 5.0000, 2.5000],
                [4.0000, 2.5000, 3.0000]])
    """,
    "min": f"""min(input, dim=None, keepdim=False) -> Tensor or (Tensor, LongTensor)

    Returns the smallest element of ``input``, or the smallest elements
    along a dimension together with their indices, or the elementwise
    minimum of two tensors.

    Three forms:

    * ``min(input)``: the smallest element, as a 0-dim tensor.
    * ``min(input, dim, keepdim=False)``: a named tuple ``(values, indices)``
      of the minima along ``dim`` and where they are (the first one when
      several are equal).
    * ``min(input, other)``: the same as :func:`ferrograd.minimum`.

    Args:
        input (Tensor): the input tensor.
        {_DIM}
        other (Tensor): the second tensor (only in the elementwise form).

    Example:
        >>> {_X}
        >>> ferrograd.min(x)
        tensor(0.)
        >>> ferrograd.min(x, dim=0)
        ferrograd.return_types.min(
        values=tensor([1., 0., 2.]),
        indices=tensor([0, 1, 0]))
    """,
    "amax": f"""amax(input, dim=None, keepdim=False) -> Tensor

    Returns the largest values of ``input`` over the dimension(s) ``dim``
    (all of them by default), without indices.

    Unlike :func:`ferrograd.max`, several dimensions can be reduced at
    once, and the gradient is shared evenly between equal maxima.

    Args:
        input (Tensor): the input tensor.
        {_DIMS}

    Example:
        >>> {_X}
        >>> ferrograd.amax(x, dim=0)
        tensor([4., 5., 3.])
    """,
    "amin": f"""amin(input, dim=None, keepdim=False) -> Tensor

    Returns the smallest values of ``input`` over the dimension(s) ``dim``,
    as :func:`ferrograd.amax` does for the largest (the gradient is shared
    evenly between equal minima).

    Args:
        input (Tensor): the input tensor.
        {_DIMS}

    Example:
        >>> ferrograd.amin(ferrograd.tensor([[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]]), dim=1)
        tensor([1., 0.])
    """,
    "aminmax": f"""aminmax(input, *, dim=None, keepdim=False) -> (Tensor, Tensor)

    Returns the smallest and the largest values of ``input`` in one pass, as
    a named tuple ``(min, max)``, over all elements or along ``dim``.

    Args:
        input (Tensor): the input tensor.

    Keyword args:
        dim (int, optional): the dimension to reduce. Default: None (all).
        keepdim (bool): whether the reduced dimension is kept with size 1.
            Default: False.

    Example:
        >>> {_X}
        >>> ferrograd.aminmax(x)
        ferrograd.return_types.aminmax(
        min=tensor(0.),
        max=tensor(5.))
        >>> ferrograd.aminmax(x, dim=1).max
        tensor([5., 4.])
    """,
    "median": """median(input, dim=None, keepdim=False) -> Tensor or (Tensor, LongTensor)

    Returns the lower median of ``input`` (for an even count, the smaller of
    the two middle values): of all its elements as a 0-dim tensor without
    ``dim``, else along ``dim`` as the named tuple ``(values, indices)``. A
    NaN makes the median NaN (and its index the first NaN's); see
    :func:`ferrograd.nanmedian`. The gradient goes to the median's element.

    Args:
        input (Tensor): the input tensor (real dtypes).
        dim (int, optional): the dimension to reduce. Default: None.
        keepdim (bool): whether the dimension is kept with size 1. Default: False.

    Example:
        >>> x = ferrograd.tensor([[4.0, 1.0, 3.0, 2.0], [0.0, 9.0, 8.0, 7.0]])
        >>> ferrograd.median(x)
        tensor(3.)
        >>> ferrograd.median(x, dim=1)
        ferrograd.return_types.median(
        values=tensor([2., 7.]),
        indices=tensor([3, 3]))
    """,
    "nanmedian": """nanmedian(input, dim=None, keepdim=False) -> Tensor or (Tensor, LongTensor)

    :func:`ferrograd.median` of the elements that are not NaN (NaN only
    where every element is).

    Args:
        input (Tensor): the input tensor (real dtypes).
        dim (int, optional): the dimension to reduce. Default: None.
        keepdim (bool): whether the dimension is kept with size 1. Default: False.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0, 3.0, -1.0]).sqrt()
        >>> x
        tensor([1.0000, 1.4142, 1.7321,    nan])
        >>> ferrograd.nanmedian(x)
        tensor(1.4142)
    """,
    "sort": f"""sort(input, dim=-1, descending=False, *, stable=False) -> (Tensor, LongTensor)

    Sorts the elements of ``input`` along ``dim``, ascending unless
    ``descending``, and returns the named tuple ``(values, indices)``, where
    ``indices`` holds the positions along ``dim`` the values came from. NaN
    sorts above every number; equal elements keep their order (the sort is
    always stable). The gradient of each value goes back to its position.

    Args:
        {_SORT_ARGS}

    Example:
        >>> x = ferrograd.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
        >>> values, indices = ferrograd.sort(x)
        >>> values
        tensor([[1., 2., 3.],
                [0., 4., 5.]])
        >>> indices
        tensor([[1, 2, 0],
                [0, 2, 1]])
    """,
    "argsort": f"""argsort(input, dim=-1, descending=False, *, stable=False) -> LongTensor

    Returns the indices that sort ``input`` along ``dim`` (the ``indices``
    of :func:`ferrograd.sort`).

    Args:
        {_SORT_ARGS}

    Example:
        >>> ferrograd.argsort(ferrograd.tensor([3.0, 1.0, 2.0]), descending=True)
        tensor([0, 2, 1])
    """,
    "msort": """msort(input) -> Tensor

    Returns ``input`` sorted along its first dimension, ascending (the
    ``values`` of ``sort(input, dim=0)``).

    Args:
        input (Tensor): the input tensor (real dtypes).

    Example:
        >>> ferrograd.msort(ferrograd.tensor([[3.0, 0.0], [1.0, 2.0]]))
        tensor([[1., 0.],
                [3., 2.]])
    """,
    "topk": """topk(input, k, dim=-1, largest=True, sorted=True) -> (Tensor, LongTensor)

    Returns the ``k`` largest elements of ``input`` along ``dim`` (the ``k``
    smallest unless ``largest``) as the named tuple ``(values, indices)``,
    in sorted order. Equal elements are taken in their order along ``dim``.

    Args:
        input (Tensor): the input tensor (real dtypes).
        k (int): how many elements to return (at most the size of ``dim``).
        dim (int): the dimension to select along. Default: -1.
        largest (bool): the largest elements, else the smallest. Default: True.
        sorted (bool): the results come sorted either way. Default: True.

    Example:
        >>> ferrograd.topk(ferrograd.tensor([1.0, 5.0, 3.0, 4.0]), 2)
        ferrograd.return_types.topk(
        values=tensor([5., 4.]),
        indices=tensor([1, 3]))
    """,
    "kthvalue": """kthvalue(input, k, dim=-1, keepdim=False) -> (Tensor, LongTensor)

    Returns the ``k``-th smallest element of ``input`` along ``dim``
    (counting from 1) and its index, as the named tuple
    ``(values, indices)``.

    Args:
        input (Tensor): the input tensor (real dtypes).
        k (int): which element, from 1 to the size of ``dim``.
        dim (int): the dimension to select along. Default: -1.
        keepdim (bool): whether the dimension is kept with size 1. Default: False.

    Example:
        >>> ferrograd.kthvalue(ferrograd.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]]), 2)
        ferrograd.return_types.kthvalue(
        values=tensor([2., 4.]),
        indices=tensor([2, 2]))
    """,
    "argmax": f"""argmax(input, dim=None, keepdim=False) -> LongTensor

    Returns the index of the largest element of ``input``: in the flattened
    tensor when ``dim`` is None, else along ``dim``. The first index wins
    when several elements are equal.

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce. Default: None.
        keepdim (bool): whether the reduced dimension is kept with size 1
            (only with ``dim``). Default: False.

    Example:
        >>> {_X}
        >>> ferrograd.argmax(x)
        tensor(1)
        >>> ferrograd.argmax(x, dim=1)
        tensor([1, 0])
    """,
    "argmin": """argmin(input, dim=None, keepdim=False) -> LongTensor

    Returns the index of the smallest element of ``input``, as
    :func:`ferrograd.argmax` does for the largest.

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension to reduce. Default: None.
        keepdim (bool): whether the reduced dimension is kept with size 1
            (only with ``dim``). Default: False.

    Example:
        >>> ferrograd.argmin(ferrograd.tensor([[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]]), dim=0, keepdim=True)
        tensor([[0, 1, 0]])
    """,
    "all": f"""all(input, dim=None, keepdim=False) -> Tensor

    Tests whether every element of ``input`` is true (non-zero), over all
    elements or along ``dim``. The result is a ``bool`` tensor.

    Args:
        input (Tensor): the input tensor, of any dtype.
        {_DIMS}

    Example:
        >>> x = ferrograd.tensor([[True, False], [True, True]])
        >>> ferrograd.all(x)
        tensor(False)
        >>> ferrograd.all(x, dim=1)
        tensor([False,  True])
    """,
    "any": f"""any(input, dim=None, keepdim=False) -> Tensor

    Tests whether at least one element of ``input`` is true (non-zero), over
    all elements or along ``dim``. The result is a ``bool`` tensor.

    Args:
        input (Tensor): the input tensor, of any dtype.
        {_DIMS}

    Example:
        >>> x = ferrograd.tensor([[0, 1], [0, 0]])
        >>> ferrograd.any(x)
        tensor(True)
        >>> ferrograd.any(x, dim=1)
        tensor([ True, False])
    """,
    "count_nonzero": """count_nonzero(input, dim=None) -> LongTensor

    Counts the non-zero elements of ``input``, over all elements or over the
    dimension(s) ``dim``.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension(s) to count
            along. Default: None (all of them).

    Example:
        >>> x = ferrograd.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
        >>> ferrograd.count_nonzero(x)
        tensor(3)
        >>> ferrograd.count_nonzero(x, dim=0)
        tensor([1, 0, 2])
    """,
    "cumsum": """cumsum(input, dim, *, dtype=None) -> Tensor

    Returns the cumulative sums of ``input`` along ``dim``: element ``i`` of
    the result is the sum of elements ``0`` to ``i``.

    Bool and integer inputs are summed as ``int64`` unless ``dtype`` is
    given.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to scan along.

    Keyword args:
        dtype (dtype, optional): the dtype the input is cast to first.

    Example:
        >>> ferrograd.cumsum(ferrograd.tensor([1, 2, 3, 4]), dim=0)
        tensor([ 1,  3,  6, 10])
    """,
    "cumprod": """cumprod(input, dim, *, dtype=None) -> Tensor

    Returns the cumulative products of ``input`` along ``dim``: element
    ``i`` of the result is the product of elements ``0`` to ``i``.

    Bool and integer inputs multiply as ``int64`` unless ``dtype`` is given.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to scan along.
        dtype (dtype, optional, keyword-only): the dtype the input is cast to first.

    Example:
        >>> ferrograd.cumprod(ferrograd.tensor([1.0, 2.0, 3.0, 4.0]), dim=0)
        tensor([ 1.,  2.,  6., 24.])
    """,
    "logsumexp": """logsumexp(input, dim, keepdim=False) -> Tensor

    Returns ``log(sum(exp(input)))`` over the dimension(s) ``dim``, computed
    stably (the maximum is subtracted before exponentiating, so large
    inputs do not overflow).

    Integer inputs give a result of the default float dtype.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints): the dimension(s) to reduce.
        keepdim (bool): whether the reduced dimensions are kept with size 1.
            Default: False.

    Example:
        >>> ferrograd.logsumexp(ferrograd.tensor([[0.0, 1.0], [1000.0, 1000.0]]), dim=1)
        tensor([   1.3133, 1000.6932])
    """,
    "softmax": """softmax(input, dim, dtype=None) -> Tensor

    Applies softmax along ``dim``: ``exp(x_i) / sum_j exp(x_j)``, so the
    values along ``dim`` are positive and sum to 1. Computed stably.

    Args:
        input (Tensor): the input tensor (floating point).
        dim (int): the dimension along which the values sum to 1.
        dtype (dtype, optional): the dtype the input is cast to first.

    Example:
        >>> ferrograd.softmax(ferrograd.tensor([1.0, 2.0, 3.0]), dim=0)
        tensor([0.0900, 0.2447, 0.6652])
    """,
    "log_softmax": """log_softmax(input, dim, dtype=None) -> Tensor

    Returns the logarithm of :func:`ferrograd.softmax` along ``dim``,
    computed as ``x - logsumexp(x, dim)`` (more accurate than taking the log
    of the softmax).

    Args:
        input (Tensor): the input tensor (floating point).
        dim (int): the dimension to normalise along.
        dtype (dtype, optional): the dtype the input is cast to first.

    Example:
        >>> ferrograd.log_softmax(ferrograd.tensor([1.0, 2.0, 3.0]), dim=0)
        tensor([-2.4076, -1.4076, -0.4076])
    """,
    "norm": f"""norm(input, p=None, dim=None, keepdim=False, dtype=None) -> Tensor

    Returns a vector or matrix norm of ``input``.

    With ``p`` a number it is the vector p-norm ``sum(abs(x)**p) ** (1/p)``
    over all the elements, or over ``dim``; ``p=float("inf")`` gives the
    largest absolute value. ``p=None`` and ``p="fro"`` give the 2-norm (the
    Frobenius norm for matrices) and ``p="nuc"`` the nuclear norm of the
    matrices over two dimensions. New code should use
    :func:`ferrograd.linalg.vector_norm` or
    :func:`ferrograd.linalg.matrix_norm`.

    Args:
        input (Tensor): the input tensor.
        p (int, float, inf, "fro" or "nuc", optional): the order of the
            norm. Default: None (the 2-norm).
        {_DIMS}
        dtype (dtype, optional): the dtype the input is cast to first.

    Example:
        >>> ferrograd.norm(ferrograd.tensor([3.0, 4.0]))
        tensor(5.)
        >>> ferrograd.norm(ferrograd.tensor([3.0, -4.0]), p=1)
        tensor(7.)
        >>> ferrograd.norm(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=1)
        tensor([2.2361, 5.0000])
    """,
}
