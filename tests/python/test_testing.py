"""``ferrograd.testing``: assert_close, assert_allclose and make_tensor.

Failure messages are checked word for word against torch's wording (written
out by hand); the numbers in them against NumPy computing the same
differences in the same dtype. make_tensor's values are checked for their
range, dtype and layout, and against ferrograd's generator drawn directly.
"""

from __future__ import annotations

import math
import re
import warnings

import ferrograd as fg
import ferrograd.testing
import numpy as np
import pytest
from ferrograd.testing import assert_allclose, assert_close, make_tensor

T = fg.tensor
NAN = float("nan")
INF = float("inf")


def failure(exc: type[Exception], actual, expected, **kwargs) -> str:
    """The message of the ``exc`` that ``assert_close`` must raise."""
    with pytest.raises(exc) as info:
        assert_close(actual, expected, **kwargs)
    assert type(info.value) is exc
    return str(info.value)


# ---------------------------------------------------------------- the module


def test_module_is_an_attribute_of_the_package():
    assert fg.testing is ferrograd.testing
    assert fg.testing.assert_close is assert_close
    assert sorted(fg.testing.__all__) == ["assert_allclose", "assert_close", "make_tensor"]


# ------------------------------------------------------- default tolerances

TOLERANCES = [
    (fg.float16, 1e-3, 1e-5),
    (fg.bfloat16, 1.6e-2, 1e-5),
    (fg.float32, 1.3e-6, 1e-5),
    (fg.float64, 1e-7, 1e-7),
    (fg.complex64, 1.3e-6, 1e-5),
    (fg.complex128, 1e-7, 1e-7),
]


@pytest.mark.parametrize(("dtype", "rtol", "atol"), TOLERANCES)
def test_default_tolerances_per_dtype(dtype, rtol, atol):
    ones = fg.ones(3, dtype=dtype)
    # Within: 0.4 of the tolerance at 1 (possibly rounded to exactly 1 in low precision).
    assert_close(ones, T([1.0, 1.0 + 0.4 * (rtol + atol), 1.0], dtype=dtype))
    # Outside: three times the tolerance, still so after rounding to the dtype.
    far = T([1.0, 1.0 + 3 * (rtol + atol), 1.0], dtype=dtype)
    assert abs(far[1].real.item() - 1.0) > rtol + atol
    text = failure(AssertionError, ones, far)
    assert text.startswith("Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n")
    assert f"at index (1,) (up to {atol} allowed)\n" in text
    assert text.endswith(f"at index (1,) (up to {rtol} allowed)")


@pytest.mark.parametrize("dtype", [fg.uint8, fg.int8, fg.int16, fg.int32, fg.int64])
def test_integers_compare_exactly(dtype):
    assert_close(T([1, 2, 3], dtype=dtype), T([1, 2, 3], dtype=dtype))
    text = failure(AssertionError, T([1, 2, 3], dtype=dtype), T([1, 2, 4], dtype=dtype))
    assert text == (
        "Tensor-likes are not equal!\n\nMismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 1 at index (2,)\n"
        "Greatest relative difference: 0.25 at index (2,)"
    )


def test_integer_differences_do_not_wrap_around():
    # 1 - 3 in uint8 would wrap to 254; the difference is taken in int64.
    text = failure(AssertionError, T([1, 2], dtype=fg.uint8), T([3, 2], dtype=fg.uint8))
    rel = float(np.float32(2) / np.float32(3))
    assert text == (
        "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 2 at index (0,)\n"
        f"Greatest relative difference: {rel} at index (0,)"
    )


def test_bool_tensors_compare_exactly():
    assert_close(T([True, False]), T([True, False]))
    text = failure(AssertionError, T([True, False]), T([True, True]))
    assert text == (
        "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 1 at index (1,)\n"
        "Greatest relative difference: 1.0 at index (1,)"
    )


def test_only_one_tolerance_is_a_value_error():
    with pytest.raises(
        ValueError, match=r"^Both 'rtol' and 'atol' must be either specified or omitted, but got no atol\.$"
    ):
        assert_close(T([1.0]), T([1.0]), rtol=0.1)
    with pytest.raises(ValueError, match=r"but got no rtol\.$"):
        assert_close(1.0, 1.0, atol=0.1)


def test_explicit_tolerances_replace_the_defaults():
    assert_close(T([1.0, 2.0]), T([1.0, 2.1]), rtol=0.0, atol=0.2)
    assert_close(T([1.0, 2.0]), T([1.0, 2.1]), rtol=0.1, atol=0.0)
    diff = float(abs(np.float32(2.0) - np.float32(2.1)))
    text = failure(AssertionError, T([1.0, 2.0]), T([1.0, 2.1]), rtol=0.0, atol=0.05)
    assert f"Greatest absolute difference: {diff} at index (1,) (up to 0.05 allowed)" in text
    assert "(up to 0.0 allowed)" in text


# ------------------------------------------------------------- the messages


def test_tensor_message_word_for_word():
    text = failure(AssertionError, T([1.0, 2.0, 3.0]), T([1.0, 2.5, 3.5]))
    rel = float(np.float32(0.5) / np.float32(2.5))
    assert text == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 2 / 3 (66.7%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        f"Greatest relative difference: {rel} at index (1,) (up to 1.3e-06 allowed)"
    )
    assert rel == 0.20000000298023224


def test_greatest_differences_have_their_own_indices():
    actual = np.array([[10.0, 0.2, 5.0], [7.0, 7.0, 7.0]], dtype=np.float32)
    expected = np.array([[11.0, 0.1, 5.0], [7.0, 7.0, 7.5]], dtype=np.float32)
    abs_diff = np.abs(actual - expected)
    rel_diff = abs_diff / np.abs(expected)
    a_at = np.unravel_index(np.argmax(abs_diff), abs_diff.shape)
    r_at = np.unravel_index(np.argmax(rel_diff), rel_diff.shape)
    assert a_at != r_at
    text = failure(AssertionError, T(actual), T(expected))
    assert text == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 3 / 6 (50.0%)\n"
        f"Greatest absolute difference: {float(abs_diff.max())} at index {tuple(map(int, a_at))} "
        "(up to 1e-05 allowed)\n"
        f"Greatest relative difference: {float(rel_diff.max())} at index {tuple(map(int, r_at))} "
        "(up to 1.3e-06 allowed)"
    )


def test_zero_dim_tensors_give_a_scalar_message():
    text = failure(AssertionError, T(1.0), T(2.0))
    assert text == (
        "Scalars are not close!\n\nExpected 2.0 but got 1.0.\n"
        "Absolute difference: 1.0 (up to 1e-05 allowed)\n"
        "Relative difference: 0.5 (up to 1.3e-06 allowed)"
    )
    text = failure(AssertionError, T(True), T(False))
    assert text == (
        "Scalars are not equal!\n\nExpected False but got True.\n"
        "Absolute difference: 1\nRelative difference: inf"
    )


def test_python_scalars():
    assert_close(1.0, 1.0 + 1e-8)
    assert_close(3, 3)
    text = failure(AssertionError, 1.0, 1.1)
    assert text == (
        "Scalars are not close!\n\nExpected 1.1 but got 1.0.\n"
        f"Absolute difference: {abs(1.0 - 1.1)} (up to 1e-07 allowed)\n"
        f"Relative difference: {abs(1.0 - 1.1) / 1.1} (up to 1e-07 allowed)"
    )
    text = failure(AssertionError, 1, 2)
    assert (
        text
        == "Scalars are not equal!\n\nExpected 2 but got 1.\nAbsolute difference: 1\nRelative difference: 0.5"
    )
    text = failure(AssertionError, 1 + 2j, 1 + 3j)
    assert text == (
        "Scalars are not close!\n\nExpected (1+3j) but got (1+2j).\n"
        f"Absolute difference: 1.0 (up to 1e-07 allowed)\n"
        f"Relative difference: {1 / abs(1 + 3j)} (up to 1e-07 allowed)"
    )


def test_python_scalar_types_must_match_unless_told_otherwise():
    assert failure(AssertionError, 1, 1.0) == "The (d)types do not match: <class 'int'> != <class 'float'>."
    assert_close(1, 1.0, check_dtype=False)
    assert_close(np.float32(1.5), 1.5)
    assert_close(np.int64(4), 4)


def test_booleans_and_none():
    assert_close(True, True)
    assert_close(np.bool_(True), True)
    assert failure(AssertionError, True, False) == "Booleans mismatch: True is not False"
    assert_close(None, None)
    assert failure(AssertionError, None, 1) == "None mismatch: None is not 1"


def test_attribute_mismatches():
    assert failure(AssertionError, T([1.0, 2.0, 3.0]), T([1.0, 2.0])) == (
        "The values for attribute 'shape' do not match: ferrograd.Size([3]) != ferrograd.Size([2])."
    )
    assert failure(AssertionError, T([1.0]), T([1.0], dtype=fg.float64)) == (
        "The values for attribute 'dtype' do not match: ferrograd.float32 != ferrograd.float64."
    )
    rows, cols = fg.ones(2, 3), fg.ones(3, 2).t()
    assert_close(rows, cols)
    assert failure(AssertionError, rows, cols, check_stride=True) == (
        "The values for attribute 'stride()' do not match: (3, 1) != (1, 2)."
    )


def test_unrelated_types_are_a_type_error():
    for actual, expected in [(T([1.0]), 1.0), (T([1.0]), [1.0]), (T([1.0]), np.array([1.0])), ("a", "a")]:
        text = failure(TypeError, actual, expected)
        assert text == (
            f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}."
        )


def test_subclasses():
    param = fg.nn.Parameter(fg.ones(2))
    assert_close(param, fg.ones(2))
    text = failure(TypeError, param, fg.ones(2), allow_subclasses=False)
    assert text.startswith("No comparison pair was able to handle inputs of type <class 'ferrograd.nn.")


# ---------------------------------------------------------------- containers


def test_sequences_compare_item_by_item():
    assert_close([T([1.0]), (2, 3.0)], (T([1.0]), [2, 3.0]))
    assert (
        failure(AssertionError, [1.0, 2.0], [1.0, 2.0, 3.0]) == "The length of the sequences mismatch: 2 != 3"
    )
    text = failure(AssertionError, [1.0, 2.0], [1.0, 2.1])
    assert text.startswith("Scalars are not close!\n\nExpected 2.1 but got 2.0.\n")
    assert text.endswith("\n\nThe failure occurred for item [1]")


def test_nested_path_in_the_message():
    text = failure(AssertionError, [T([1.0]), (T([2.0]),)], [T([1.0]), (T([2.1]),)])
    diff = float(abs(np.float32(2.0) - np.float32(2.1)))
    assert f"Greatest absolute difference: {diff} at index (0,)" in text
    assert text.endswith("\n\nThe failure occurred for item [1][0]")


def test_mappings_compare_by_key():
    assert_close({"a": 1.0, "b": T([2.0])}, {"b": T([2.0]), "a": 1.0})
    text = failure(AssertionError, {"a": 1.0, "b": 2.0}, {"a": 1.0, "c": 2.0})
    assert text == (
        "The keys of the mappings do not match:\n"
        "Missing keys in the actual mapping: ['c']\n"
        "Additional keys in the actual mapping: ['b']"
    )
    text = failure(AssertionError, {"net": {"w": [1, 2]}}, {"net": {"w": [1, 3]}})
    assert text.endswith("The failure occurred for item ['net']['w'][1]")


def test_the_first_failing_item_in_key_order_is_reported():
    text = failure(AssertionError, {"b": T([1.0]), "a": T([5.0])}, {"b": T([2.0]), "a": T([6.0])})
    assert text.endswith("The failure occurred for item ['a']")


def test_type_errors_are_found_before_value_mismatches():
    # Item 0 differs in value, item 1 cannot be compared at all: the TypeError wins.
    text = failure(TypeError, [1.0, "a"], [2.0, "a"])
    assert text == (
        "No comparison pair was able to handle inputs of type <class 'str'> and <class 'str'>."
        "\n\nThe failure occurred for item [1]"
    )


# ----------------------------------------------------------------------- msg


def test_msg_string_replaces_the_message():
    assert failure(AssertionError, T([1.0, 2.0]), T([1.0, 2.1]), msg="custom") == "custom"
    assert failure(AssertionError, [T([1.0])], [T([1.0, 2.0])], msg="custom") == "custom"


def test_msg_callable_receives_the_message_with_its_path():
    text = failure(AssertionError, [1.0, 2.0], [1.0, 2.5], rtol=0.1, atol=0.0, msg=lambda m: f"<{m}>")
    assert text == (
        "<Scalars are not close!\n\nExpected 2.5 but got 2.0.\n"
        "Absolute difference: 0.5 (up to 0.0 allowed)\n"
        "Relative difference: 0.2 (up to 0.1 allowed)\n\n"
        "The failure occurred for item [1]>"
    )


def test_msg_does_not_replace_structural_errors():
    # As in torch, msg applies to the comparison of two items, not to containers that do not match.
    assert failure(AssertionError, [1], [1, 2], msg="x") == "The length of the sequences mismatch: 1 != 2"
    assert failure(TypeError, [T(1.0)], [1.0], msg="x").startswith("No comparison pair")


# ------------------------------------------------------------- nan, inf, complex


def test_nan():
    text = failure(AssertionError, T([1.0, NAN]), T([1.0, NAN]))
    assert text == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: nan at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: nan at index (1,) (up to 1.3e-06 allowed)"
    )
    assert_close(T([1.0, NAN]), T([1.0, NAN]), equal_nan=True)
    failure(AssertionError, T([1.0, NAN]), T([1.0, 2.0]), equal_nan=True)
    assert failure(AssertionError, NAN, NAN).startswith("Scalars are not close!\n\nExpected nan but got nan.")
    assert_close(NAN, NAN, equal_nan=True)


def test_infinities():
    assert_close(T([1.0, INF, -INF]), T([1.0, INF, -INF]))
    text = failure(AssertionError, T([1.0, INF]), T([1.0, -INF]))
    assert "Greatest absolute difference: inf at index (1,)" in text
    assert "Greatest relative difference: nan at index (1,)" in text


def test_complex():
    assert_close(T([1 + 1j, 2]), T([1 + 1j, 2 + 1e-7j]))
    text = failure(AssertionError, T([1 + 1j, 2]), T([1 + 1j, 2 + 1j]))
    rel = float(np.float32(1) / np.abs(np.complex64(2 + 1j)))
    assert text == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 1.0 at index (1,) (up to 1e-05 allowed)\n"
        f"Greatest relative difference: {rel} at index (1,) (up to 1.3e-06 allowed)"
    )
    # A NaN in either part makes the number NaN; with equal_nan two such numbers are equal.
    failure(AssertionError, T([complex(NAN, 1)]), T([complex(NAN, 1)]))
    assert_close(T([complex(NAN, 1)]), T([complex(1, NAN)]), equal_nan=True)


# ------------------------------------------------------------- dtypes, numpy


def test_check_dtype_false_promotes():
    assert_close(T([1.0, 2.0]), T([1.0, 2.0], dtype=fg.float64), check_dtype=False)
    assert_close(T([1, 2]), T([1.0, 2.0]), check_dtype=False)
    text = failure(AssertionError, T([1.0, 2.0]), T([1.0, 2.1], dtype=fg.float64), check_dtype=False)
    # Compared in float64; the looser (float32) tolerances apply.
    diff = abs(float(np.float32(2.0)) - 2.1)
    assert f"Greatest absolute difference: {diff} at index (1,) (up to 1e-05 allowed)" in text
    assert "(up to 1.3e-06 allowed)" in text


def test_numpy_arrays():
    assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    assert_close(np.array(3.0), np.array(3.0))
    text = failure(AssertionError, np.array([1.0, 2.0]), np.array([1.0, 2.1]))
    assert f"Greatest absolute difference: {abs(2.0 - 2.1)} at index (1,) (up to 1e-07 allowed)" in text


def test_tensors_requiring_grad_compare_their_values():
    x = T([1.0, 2.0], requires_grad=True)
    assert_close(x * 1.0, T([1.0, 2.0]))
    failure(AssertionError, x, T([1.0, 2.5]))


def test_empty_tensors_are_close():
    assert_close(fg.zeros(0, 3), fg.zeros(0, 3))


# --------------------------------------------------------------- assert_allclose


def test_assert_allclose_warns_from_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert_allclose(T([1.0, 2.0]), [1.0, 2.0])
    assert len(caught) == 1
    assert caught[0].category is FutureWarning
    assert str(caught[0].message) == (
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
        "Please use `torch.testing.assert_close()` instead. "
        "You can find detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844."
    )
    assert caught[0].filename == __file__


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_assert_allclose_semantics():
    # float32 defaults rtol=1e-4, atol=1e-5: looser than assert_close's.
    assert_allclose(T([1.0, 2.0]), [1.0, 2.0001])
    failure(AssertionError, T([1.0, 2.0]), T([1.0, 2.0001]))
    with pytest.raises(AssertionError, match=r"\(up to 0\.0001 allowed\)"):
        assert_allclose(T([1.0, 2.0]), [1.0, 2.1])
    # NaNs are equal by default; not with equal_nan=False.
    assert_allclose(T([1.0, NAN]), [1.0, NAN])
    with pytest.raises(AssertionError):
        assert_allclose(T([1.0, NAN]), [1.0, NAN], equal_nan=False)
    # msg replaces the message; dtypes may differ; no broadcasting.
    with pytest.raises(AssertionError, match=r"^hey$"):
        assert_allclose(T([1.0, 2.0]), [1.0, 2.1], msg="hey")
    assert_allclose(T([1, 2]), T([1.0, 2.0]))
    with pytest.raises(
        AssertionError, match=r"'shape' do not match: ferrograd\.Size\(\[2\]\) != ferrograd\.Size\(\[\]\)"
    ):
        assert_allclose(T([1.0, 2.0]), 2.0)
    # The expected list takes actual's dtype (int64 here), so 3.7 becomes 3.
    assert_allclose(T([1, 3]), [1, 3.7])
    with pytest.raises(ValueError, match="got no atol"):
        assert_allclose(T([1.0]), [1.0], rtol=0.1)


# ------------------------------------------------------------------ make_tensor


def test_make_tensor_shapes():
    for shape, want in [
        ((2, 3), (2, 3)),
        (((2, 3),), (2, 3)),
        (([4],), (4,)),
        ((fg.Size([1, 2]),), (1, 2)),
        ((), ()),
    ]:
        t = make_tensor(*shape, dtype=fg.float32, device="cpu")
        assert tuple(t.shape) == want
        assert t.dtype == fg.float32
        assert t.device == fg.device("cpu")


@pytest.mark.parametrize(
    ("dtype", "low", "high"),
    [
        (fg.float16, -9, 9),
        (fg.bfloat16, -9, 9),
        (fg.float32, -9, 9),
        (fg.float64, -9, 9),
        (fg.int8, -9, 10),
        (fg.int16, -9, 10),
        (fg.int32, -9, 10),
        (fg.int64, -9, 10),
        (fg.uint8, 0, 10),
    ],
)
def test_make_tensor_default_ranges(dtype, low, high):
    fg.manual_seed(0)
    values = make_tensor(4000, dtype=dtype, device="cpu").to(fg.float64).numpy()
    assert values.min() >= low and values.max() < high
    if dtype.is_floating_point:
        # Uniform over the range: both ends are approached, the mean is near the middle.
        assert values.min() < low + 0.1 and values.max() > high - 0.1
        assert abs(values.mean() - (low + high) / 2) < 0.5
    else:
        assert set(values.astype(int).tolist()) == set(range(low, high))


def test_make_tensor_bool_and_complex():
    fg.manual_seed(0)
    flags = make_tensor(200, dtype=fg.bool, device="cpu")
    assert flags.dtype == fg.bool
    assert set(flags.tolist()) == {True, False}
    z = make_tensor(2000, dtype=fg.complex64, device="cpu").numpy()
    for part in (z.real, z.imag):
        assert part.min() >= -9 and part.max() < 9 and part.min() < -8.9 and part.max() > 8.9
    # The two parts are drawn independently, not equal to each other.
    assert not np.allclose(z.real, z.imag)


def test_make_tensor_low_high():
    fg.manual_seed(0)
    x = make_tensor(1000, dtype=fg.float64, device="cpu", low=2, high=3).numpy()
    assert x.min() >= 2 and x.max() < 3
    # Integer bounds are rounded up: [1.5, 3.2) -> [2, 4).
    ints = make_tensor(500, dtype=fg.int64, device="cpu", low=1.5, high=3.2).tolist()
    assert set(ints) == {2, 3}
    # Bounds beyond the dtype are clamped to it.
    wide = make_tensor(3000, dtype=fg.int8, device="cpu", low=-500, high=500).numpy()
    assert wide.min() == -128 and wide.max() == 127
    f16 = make_tensor(100, dtype=fg.float16, device="cpu", low=-1e6, high=1e6).to(fg.float64).numpy()
    assert np.isfinite(f16).all() and np.abs(f16).max() <= 65504 and np.abs(f16).max() > 1000
    huge = make_tensor(100, dtype=fg.float64, device="cpu", low=-INF, high=INF).numpy()
    assert np.isfinite(huge).all() and np.abs(huge).max() > 1e300
    # bool: [-4, 1) is clamped to [0, 1): all False.
    assert make_tensor(10, dtype=fg.bool, device="cpu", low=-4, high=1).tolist() == [False] * 10


def test_make_tensor_low_equal_high():
    with pytest.warns(FutureWarning, match=r"^Passing `low==high` to `torch\.testing\.make_tensor`"):
        t = make_tensor(2, 3, dtype=fg.float32, device="cpu", low=5, high=5)
    assert t.tolist() == [[5.0] * 3] * 2
    with pytest.raises(ValueError, match=r"^`low` must be less than `high`, but got 5 >= 5$"):
        make_tensor(3, dtype=fg.int8, device="cpu", low=5, high=5)


@pytest.mark.parametrize(
    ("kwargs", "exc", "text"),
    [
        (dict(dtype=fg.float32, low=5, high=4), ValueError, "`low` must be less than `high`, but got 5 >= 4"),
        (dict(dtype=fg.float32, high=-20), ValueError, "`low` must be less than `high`, but got -9 >= -20"),
        (
            dict(dtype=fg.float32, low=NAN),
            ValueError,
            "`low` and `high` cannot be NaN, but got low=nan and high=9",
        ),
        (
            dict(dtype=fg.uint8, low=-5, high=-1),
            ValueError,
            "The value interval specified by `low` and `high` is [-5, -1), "
            "but ferrograd.uint8 only supports [0, 256)",
        ),
        (
            dict(dtype=fg.float16, low=1e6, high=1e7),
            ValueError,
            "The value interval specified by `low` and `high` is [1000000.0, 10000000.0), "
            "but ferrograd.float16 only supports [-65504.0, 65504.0)",
        ),
        (
            dict(dtype=fg.int64, requires_grad=True),
            ValueError,
            "`requires_grad=True` is not supported for boolean and integral dtypes, "
            "but got dtype=ferrograd.int64",
        ),
        (
            dict(dtype=fg.float32, noncontiguous=True, memory_format="x"),
            ValueError,
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            "but got noncontiguous=True and memory_format=x",
        ),
        (dict(dtype="float32"), TypeError, "The requested dtype 'float32' is not supported"),
    ],
)
def test_make_tensor_errors(kwargs, exc, text):
    with pytest.raises(exc) as info:
        make_tensor(2, 3, device="cpu", **kwargs)
    assert str(info.value).startswith(text)


def test_make_tensor_noncontiguous():
    fg.manual_seed(0)
    t = make_tensor(4, 5, dtype=fg.float32, device="cpu", noncontiguous=True)
    assert tuple(t.shape) == (4, 5) and not t.is_contiguous()
    assert t.stride() == (10, 2)
    np.testing.assert_array_equal(t.contiguous().numpy(), t.numpy())
    assert make_tensor(3, 2, 4, dtype=fg.int16, device="cpu", noncontiguous=True).stride() == (16, 8, 2)
    # Fewer than two elements: the flag is ignored.
    assert make_tensor(1, dtype=fg.float32, device="cpu", noncontiguous=True).is_contiguous()
    assert make_tensor(dtype=fg.float32, device="cpu", noncontiguous=True).is_contiguous()


def test_make_tensor_exclude_zero():
    ones = make_tensor(2, 3, dtype=fg.int64, device="cpu", low=0, high=1, exclude_zero=True)
    assert ones.tolist() == [[1, 1, 1], [1, 1, 1]]
    assert (
        make_tensor(4, dtype=fg.bool, device="cpu", low=0, high=1, exclude_zero=True).tolist() == [True] * 4
    )
    with pytest.warns(FutureWarning):
        tiny16 = make_tensor(2, dtype=fg.float16, device="cpu", low=0, high=0, exclude_zero=True)
        tiny32 = make_tensor(2, dtype=fg.complex64, device="cpu", low=0, high=0, exclude_zero=True)
    assert tiny16.tolist() == [float(np.finfo(np.float16).tiny)] * 2
    assert tiny32.tolist() == [complex(float(np.finfo(np.float32).tiny), 0.0)] * 2


def test_make_tensor_requires_grad():
    t = make_tensor(3, dtype=fg.float64, device="cpu", requires_grad=True, noncontiguous=True)
    assert t.requires_grad and t.is_leaf
    (t * t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), 2 * t.detach().numpy())
    assert not make_tensor(3, dtype=fg.float32, device="cpu").requires_grad


def test_make_tensor_follows_manual_seed():
    fg.manual_seed(3)
    a = make_tensor(50, dtype=fg.float32, device="cpu")
    fg.manual_seed(3)
    b = make_tensor(50, dtype=fg.float32, device="cpu")
    assert a.tolist() == b.tolist()
    fg.manual_seed(4)
    assert make_tensor(50, dtype=fg.float32, device="cpu").tolist() != a.tolist()
    # The draws are ferrograd's own: the same as its generator gives directly.
    fg.manual_seed(3)
    assert a.tolist() == fg.empty(50).uniform_(-9, 9).tolist()
    fg.manual_seed(3)
    ints = make_tensor(50, dtype=fg.int64, device="cpu")
    fg.manual_seed(3)
    assert ints.tolist() == fg.randint(-9, 10, (50,)).tolist()


def test_make_tensor_round_trip_through_assert_close():
    fg.manual_seed(1)
    t = make_tensor(3, 4, dtype=fg.float64, device="cpu", noncontiguous=True)
    assert_close(t, t.contiguous())
    text = failure(AssertionError, t, t.contiguous(), check_stride=True)
    assert re.fullmatch(r"The values for attribute 'stride\(\)' do not match: \(8, 2\) != \(4, 1\)\.", text)
    assert math.isclose(float(t.abs().max().item()), float(np.abs(t.numpy()).max()))
