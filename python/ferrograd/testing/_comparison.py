"""``assert_close`` and ``assert_allclose``: comparing tensors, numbers and
containers of them, with torch's tolerances and error messages."""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import sys
import warnings
from collections.abc import Callable
from typing import Any

import ferrograd

from .. import _core
from .._core import Tensor

__all__ = ["assert_allclose", "assert_close"]

# Default (rtol, atol) per dtype; any dtype not listed (integers, bool) compares exactly.
_TOLERANCES = {
    _core.float16: (1e-3, 1e-5),
    _core.bfloat16: (1.6e-2, 1e-5),
    _core.float32: (1.3e-6, 1e-5),
    _core.float64: (1e-7, 1e-7),
    _core.complex64: (1.3e-6, 1e-5),
    _core.complex128: (1e-7, 1e-7),
}

# The older, looser table of the deprecated assert_allclose.
_ALLCLOSE_TOLERANCES = {
    _core.float16: (1e-3, 1e-3),
    _core.float32: (1e-4, 1e-5),
    _core.float64: (1e-5, 1e-8),
}

# The dtype whose tolerances a Python number gets.
_NUMBER_DTYPES = {
    bool: _core.int64,
    int: _core.int64,
    float: _core.float64,
    complex: _core.complex128,
}

_DEPRECATION = (
    "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
    "Please use `torch.testing.assert_close()` instead. "
    "You can find detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844."
)

Message = str | Callable[[str], str] | None


class _Failure(Exception):
    """A comparison failure: the exception type to raise, its text and the
    path of the failing item inside nested containers."""

    def __init__(self, kind: type[Exception], text: str, path: tuple[Any, ...] = ()) -> None:
        super().__init__(text)
        self.kind = kind
        self.text = text
        self.path = path

    def to_exception(self, msg: Message = None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.text
        if self.path:
            text += "\n\nThe failure occurred for item " + "".join(f"[{item!r}]" for item in self.path)
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """Raised by a comparison kind that cannot handle a pair of inputs."""


def _tolerances(
    dtypes: list[Any],
    rtol: float | None,
    atol: float | None,
    path: tuple[Any, ...],
    table: dict[Any, tuple[float, float]] | None = None,
) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise _Failure(
            ValueError,
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.",
            path,
        )
    if rtol is not None and atol is not None:
        return rtol, atol
    table = _TOLERANCES if table is None else table
    pairs = [table.get(dtype, (0.0, 0.0)) for dtype in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _mismatch_text(
    what: str,
    extra: str,
    abs_diff: Any,
    rel_diff: Any,
    rtol: float,
    atol: float,
    abs_index: tuple[int, ...] | None = None,
    rel_index: tuple[int, ...] | None = None,
) -> str:
    exact = rtol == 0 and atol == 0

    def line(name: str, diff: Any, index: tuple[int, ...] | None, tol: float) -> str:
        if index is None:
            text = f"{name.title()} difference: {diff}"
        else:
            text = f"Greatest {name} difference: {diff} at index {index}"
        return text if exact else f"{text} (up to {tol} allowed)"

    return "\n".join(
        [
            f"{what} are not {'equal' if exact else 'close'}!",
            "",
            extra,
            line("absolute", abs_diff, abs_index, atol),
            line("relative", rel_diff, rel_index, rtol),
        ]
    )


def _scalar_mismatch(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_text("Scalars", f"Expected {expected} but got {actual}.", abs_diff, rel_diff, rtol, atol)


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for size in reversed(shape):
        flat, rest = divmod(flat, size)
        index.append(rest)
    return tuple(reversed(index))


def _tensor_mismatch(actual: Tensor, expected: Tensor, matches: Tensor, rtol: float, atol: float) -> str:
    total = matches.numel()
    wrong = total - int(matches.sum().item())
    extra = f"Mismatched elements: {wrong} / {total} ({wrong / total:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        a, e = a.to(_core.int64), e.to(_core.int64)
    abs_diff = (a - e).abs().masked_fill(m, 0)
    abs_max, abs_at = ferrograd.max(abs_diff, 0)
    rel_diff = (abs_diff / e.abs()).masked_fill(m, 0)
    rel_max, rel_at = ferrograd.max(rel_diff, 0)
    shape = tuple(matches.shape)
    return _mismatch_text(
        "Tensor-likes",
        extra,
        abs_max.item(),
        rel_max.item(),
        rtol,
        atol,
        _unravel(int(abs_at.item()), shape),
        _unravel(int(rel_at.item()), shape),
    )


class _Pair:
    """Two leaves to compare; ``compare`` raises :class:`_Failure`."""

    def __init__(self, actual: Any, expected: Any, path: tuple[Any, ...]) -> None:
        self.actual = actual
        self.expected = expected
        self.path = path

    def fail(self, text: str, kind: type[Exception] = AssertionError) -> None:
        raise _Failure(kind, text, self.path)

    def compare(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class _NonePair(_Pair):
    def __init__(self, actual: Any, expected: Any, path: tuple[Any, ...], **options: Any) -> None:
        if actual is not None and expected is not None:
            raise _Unsupported
        super().__init__(actual, expected, path)

    def compare(self) -> None:
        if self.actual is not None or self.expected is not None:
            self.fail(f"None mismatch: {self.actual} is not {self.expected}")


def _numpy_scalars() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """numpy's bool and number scalar types, when numpy is loaded (numpy is
    optional: without it no value can be a numpy scalar)."""
    np = sys.modules.get("numpy")
    if np is None:
        return (), ()
    return (np.bool_,), (np.number,)


class _BoolPair(_Pair):
    def __init__(self, actual: Any, expected: Any, path: tuple[Any, ...], **options: Any) -> None:
        if not all(isinstance(x, (bool, *_numpy_scalars()[0])) for x in (actual, expected)):
            raise _Unsupported
        super().__init__(bool(actual), bool(expected), path)

    def compare(self) -> None:
        if self.actual is not self.expected:
            self.fail(f"Booleans mismatch: {self.actual} is not {self.expected}")


class _NumberPair(_Pair):
    def __init__(
        self,
        actual: Any,
        expected: Any,
        path: tuple[Any, ...],
        *,
        rtol: float | None,
        atol: float | None,
        equal_nan: bool,
        check_dtype: bool,
        **options: Any,
    ) -> None:
        numbers = _numpy_scalars()[1]
        if not all(isinstance(x, (int, float, complex, *numbers)) for x in (actual, expected)):
            raise _Unsupported
        actual, expected = (x.item() if isinstance(x, numbers) else x for x in (actual, expected))
        super().__init__(actual, expected, path)
        dtypes = [_NUMBER_DTYPES[type(x)] for x in (actual, expected)]
        self.rtol, self.atol = _tolerances(dtypes, rtol, atol, path)
        self.equal_nan = equal_nan
        self.check_dtype = check_dtype

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        if self.check_dtype and type(actual) is not type(expected):
            self.fail(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
        if actual == expected:
            return
        if self.equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        diff = abs(actual - expected)
        if cmath.isfinite(diff) and diff <= self.atol + self.rtol * abs(expected):
            return
        self.fail(_scalar_mismatch(actual, expected, self.rtol, self.atol))


class _TensorPair(_Pair):
    def __init__(
        self,
        actual: Any,
        expected: Any,
        path: tuple[Any, ...],
        *,
        allow_subclasses: bool,
        rtol: float | None,
        atol: float | None,
        equal_nan: bool,
        check_device: bool,
        check_dtype: bool,
        check_layout: bool,
        check_stride: bool,
    ) -> None:
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise _Unsupported
        if not allow_subclasses and type(actual) is not type(expected):
            raise _Unsupported
        actual, expected = (self._as_tensor(x) for x in (actual, expected))
        super().__init__(actual, expected, path)
        self.rtol, self.atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, path)
        self.equal_nan = equal_nan
        self.check_device = check_device
        self.check_dtype = check_dtype
        self.check_layout = check_layout
        self.check_stride = check_stride

    @staticmethod
    def _as_tensor(value: Any) -> Tensor:
        if isinstance(value, Tensor):
            return value
        try:
            return ferrograd.as_tensor(value)
        except Exception:
            raise _Unsupported from None

    def _attribute(self, name: str, actual: Any, expected: Any) -> None:
        self.fail(f"The values for attribute '{name}' do not match: {actual} != {expected}.")

    def compare(self) -> None:
        actual, expected = self.actual.detach(), self.expected.detach()
        if actual.shape != expected.shape:
            self._attribute("shape", actual.shape, expected.shape)
        # ferrograd has strided tensors only, so the layouts always agree.
        if self.check_stride and actual.stride() != expected.stride():
            self._attribute("stride()", actual.stride(), expected.stride())
        if self.check_device and actual.device != expected.device:
            self._attribute("device", actual.device, expected.device)
        if self.check_dtype and actual.dtype != expected.dtype:
            self._attribute("dtype", actual.dtype, expected.dtype)

        if actual.device != expected.device:
            actual, expected = actual.cpu(), expected.cpu()
        if actual.dtype != expected.dtype:
            common = ferrograd.promote_types(actual.dtype, expected.dtype)
            actual, expected = actual.to(common), expected.to(common)

        matches = ferrograd.isclose(
            actual, expected, rtol=self.rtol, atol=self.atol, equal_nan=self.equal_nan
        )
        if bool(matches.all().item()):
            return
        if actual.dim() == 0:
            self.fail(_scalar_mismatch(actual.item(), expected.item(), self.rtol, self.atol))
        self.fail(_tensor_mismatch(actual, expected, matches, self.rtol, self.atol))


_PAIR_KINDS = (_NonePair, _BoolPair, _NumberPair, _TensorPair)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, collections.abc.Sequence) and not isinstance(value, str)


def _pairs(actual: Any, expected: Any, path: tuple[Any, ...], options: dict[str, Any]) -> list[_Pair]:
    """Walks matching containers down to their leaves, one pair per leaf."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Failure(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                path,
            )
        return [p for i in range(len(actual)) for p in _pairs(actual[i], expected[i], (*path, i), options)]
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        keys, other = set(actual.keys()), set(expected.keys())
        if keys != other:
            raise _Failure(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(other - keys)}\n"
                f"Additional keys in the actual mapping: {sorted(keys - other)}",
                path,
            )
        ordered: Any = keys
        with contextlib.suppress(Exception):
            ordered = sorted(keys)
        return [p for k in ordered for p in _pairs(actual[k], expected[k], (*path, k), options)]
    for kind in _PAIR_KINDS:
        try:
            return [kind(actual, expected, path, **options)]
        except _Unsupported:
            continue
    raise _Failure(
        TypeError,
        f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.",
        path,
    )


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: Message = None,
) -> None:
    r"""Asserts that ``actual`` and ``expected`` are close.

    Tensors (and NumPy arrays, converted with :func:`ferrograd.as_tensor`)
    must have the same shape, and by default the same device and dtype; then
    every element must satisfy
    ``|actual - expected| <= atol + rtol * |expected|`` (as
    :func:`ferrograd.isclose`). Python numbers compare the same way, and
    ``bool`` and ``None`` must be identical. Sequences (not strings) and
    mappings are compared item by item and must have the same length or
    keys. Inputs of unrelated types (a tensor and a list, a tensor and a
    number) raise ``TypeError``.

    Without ``rtol`` and ``atol``, both come from the dtypes (the looser of
    the two inputs'):

    ============================  ==========  ========
    dtype                         rtol        atol
    ============================  ==========  ========
    float16                       ``1e-3``    ``1e-5``
    bfloat16                      ``1.6e-2``  ``1e-5``
    float32                       ``1.3e-6``  ``1e-5``
    float64                       ``1e-7``    ``1e-7``
    complex64                     ``1.3e-6``  ``1e-5``
    complex128                    ``1e-7``    ``1e-7``
    integers, bool                ``0``       ``0``
    ============================  ==========  ========

    A Python ``int`` counts as int64, a ``float`` as float64 and a
    ``complex`` as complex128.

    Args:
        actual (Any): the actual input.
        expected (Any): the expected input.

    Keyword args:
        allow_subclasses (bool): compare a tensor with an instance of a
            subclass (e.g. ``nn.Parameter``). Default: ``True``.
        rtol (float, optional): relative tolerance; give ``atol`` too.
        atol (float, optional): absolute tolerance; give ``rtol`` too.
        equal_nan (bool): count two NaNs as equal (for complex numbers, a
            NaN in either part makes the number NaN). Default: ``False``.
        check_device (bool): require the same device. Default: ``True``.
        check_dtype (bool): require the same dtype; otherwise both are
            promoted with :func:`ferrograd.promote_types` before comparing.
            Default: ``True``.
        check_layout (bool): accepted for compatibility; every ferrograd
            tensor is strided. Default: ``True``.
        check_stride (bool): require the same strides. Default: ``False``.
        msg (str or callable, optional): the message of a failed value or
            attribute comparison: a string replaces the generated one, a
            callable receives it and returns the new one.

    Raises:
        ValueError: if only one of ``rtol`` and ``atol`` is given.
        TypeError: if no comparison handles the types of two inputs.
        AssertionError: if the inputs differ (length, keys, shape, device,
            dtype, stride or values); the message says where and how much.

    Example:
        >>> from ferrograd.testing import assert_close
        >>> assert_close(ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([1.0, 2.0 + 1e-6]))
        >>> assert_close({"w": [1, 2]}, {"w": [1, 2]})
        >>> try:
        ...     assert_close(ferrograd.tensor([1.0, 2.0, 3.0]), ferrograd.tensor([1.0, 2.5, 3.5]))
        ... except AssertionError as error:
        ...     print(error)
        Tensor-likes are not close!
        <BLANKLINE>
        Mismatched elements: 2 / 3 (66.7%)
        Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
        Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)
        >>> try:
        ...     assert_close([1.0, 2.0], [1.0, 2.5], rtol=0.1, atol=0.0, msg=lambda m: "loss: " + m)
        ... except AssertionError as error:
        ...     print(error)
        loss: Scalars are not close!
        <BLANKLINE>
        Expected 2.5 but got 2.0.
        Absolute difference: 0.5 (up to 0.0 allowed)
        Relative difference: 0.2 (up to 0.1 allowed)
        <BLANKLINE>
        The failure occurred for item [1]
    """
    __tracebackhide__ = True
    options = {
        "allow_subclasses": allow_subclasses,
        "rtol": rtol,
        "atol": atol,
        "equal_nan": equal_nan,
        "check_device": check_device,
        "check_dtype": check_dtype,
        "check_layout": check_layout,
        "check_stride": check_stride,
    }
    try:
        pairs = _pairs(actual, expected, (), options)
    except _Failure as failure:
        raise failure.to_exception() from None
    for pair in pairs:
        try:
            pair.compare()
        except _Failure as failure:
            raise failure.to_exception(msg) from None


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    r"""Deprecated: use :func:`assert_close`.

    Emits a ``FutureWarning``, converts a non-tensor ``actual`` with
    :func:`ferrograd.tensor` and a non-tensor ``expected`` to a tensor of
    ``actual``'s dtype, then calls :func:`assert_close` with
    ``check_dtype=False`` and its older default tolerances: float16
    ``1e-3``/``1e-3``, float32 ``1e-4``/``1e-5``, float64 ``1e-5``/``1e-8``
    (rtol/atol), every other dtype exact. NaNs compare equal by default.

    Args:
        actual (Any): the actual input.
        expected (Any): the expected input.
        rtol (float, optional): relative tolerance; give ``atol`` too.
        atol (float, optional): absolute tolerance; give ``rtol`` too.
        equal_nan (bool): count two NaNs as equal. Default: ``True``.
        msg (str): a message replacing the generated one when not empty.

    Example:
        >>> import warnings
        >>> from ferrograd.testing import assert_allclose
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     assert_allclose(ferrograd.tensor([1.0, float("nan")]), [1.00001, float("nan")])
        >>> caught[0].category.__name__
        'FutureWarning'
    """
    warnings.warn(_DEPRECATION, FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = ferrograd.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = ferrograd.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances([actual.dtype, expected.dtype], None, None, (), _ALLCLOSE_TOLERANCES)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )
