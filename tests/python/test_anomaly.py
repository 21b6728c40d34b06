"""Anomaly detection: forward tracebacks of failing nodes, NaN checks,
modes (thread-local, restoring), parent tracebacks for double backward."""

from __future__ import annotations

import contextlib
import inspect
import threading
import warnings

import ferrograd as fg
import pytest
from custom_functions import Double, Square
from ferrograd.autograd import Function


class FailingBackward(Double):
    @staticmethod
    def backward(ctx, g):
        raise ValueError("backward failed on purpose")


class NanSecondOutput(Function):
    @staticmethod
    def forward(ctx, x, y):
        return x + y

    @staticmethod
    def backward(ctx, g):
        return g, g * float("nan")


def leaf(values):
    return fg.tensor(values, dtype=fg.float64, requires_grad=True)


@contextlib.contextmanager
def anomaly_mode_recording():
    """``detect_anomaly()`` with every warning recorded in the list it gives."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with fg.autograd.detect_anomaly():
            yield record


def anomaly_reports(record):
    return [str(w.message) for w in record if "Error detected in" in str(w.message)]


def test_detect_anomaly_warns_and_is_thread_local_and_restores():
    assert not fg.is_anomaly_enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = fg.autograd.detect_anomaly(check_nan=False)
    seen = {}

    def other():
        seen["other"] = fg.is_anomaly_enabled()

    with ctx:
        assert fg.is_anomaly_enabled() and not fg.is_anomaly_check_nan_enabled()
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen["other"] is False
    assert not fg.is_anomaly_enabled() and fg.is_anomaly_check_nan_enabled()


def test_set_detect_anomaly_as_function_and_context_manager():
    fg.autograd.set_detect_anomaly(True)
    try:
        assert fg.is_anomaly_enabled()
        with fg.autograd.set_detect_anomaly(False):
            assert not fg.is_anomaly_enabled()
        assert fg.is_anomaly_enabled()
    finally:
        fg.autograd.set_detect_anomaly(False)
    assert not fg.is_anomaly_enabled()
    with fg.autograd.set_detect_anomaly(True, check_nan=False):
        assert fg.is_anomaly_enabled() and not fg.is_anomaly_check_nan_enabled()
    assert not fg.is_anomaly_enabled() and fg.is_anomaly_check_nan_enabled()


def test_failing_backward_reports_the_forward_line_then_reraises():
    x = leaf([1.0, 2.0])
    with anomaly_mode_recording() as record:
        forward_line = inspect.currentframe().f_lineno + 1
        y = FailingBackward.apply(x)
        with pytest.raises(ValueError, match="backward failed on purpose"):
            y.sum().backward()
    (report,) = anomaly_reports(record)
    assert report.startswith(
        "Error detected in FailingBackwardBackward. Traceback of forward call that caused the error:"
    )
    assert f'test_anomaly.py", line {forward_line}' in report
    assert "y = FailingBackward.apply(x)" in report


def test_nan_in_backward_output_names_node_and_index():
    x, y = leaf([1.0]), leaf([2.0])
    with anomaly_mode_recording() as record:
        out = NanSecondOutput.apply(x, y)
        with pytest.raises(
            RuntimeError,
            match="Function 'NanSecondOutputBackward' returned nan values in its 1th output.",
        ):
            out.sum().backward()
    assert anomaly_reports(record)[0].startswith("Error detected in NanSecondOutputBackward")
    # The failed call did not accumulate anything.
    assert x.grad is None and y.grad is None


def test_nan_from_builtin_node():
    z = leaf([0.0, 1.0])
    with anomaly_mode_recording() as record:
        forward_line = inspect.currentframe().f_lineno + 1
        out = (z.sqrt() * 0).sum()
        with pytest.raises(
            RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output."
        ):
            out.backward()
    (report,) = anomaly_reports(record)
    assert f"line {forward_line}" in report


def test_check_nan_false_and_mode_off_let_nan_through():
    z = leaf([0.0, 1.0])
    with pytest.warns(UserWarning):
        with fg.autograd.detect_anomaly(check_nan=False):
            (z.sqrt() * 0).sum().backward()
    assert z.grad[0].isnan().item()
    z.grad = None
    (z.sqrt() * 0).sum().backward()
    assert z.grad[0].isnan().item()


def test_graph_built_outside_anomaly_mode_says_no_forward_information():
    x = leaf([1.0])
    y = FailingBackward.apply(x)
    with anomaly_mode_recording() as record:
        with pytest.raises(ValueError):
            y.sum().backward()
    (report,) = anomaly_reports(record)
    assert "No forward pass information available" in report


def test_double_backward_reports_the_parent_forward_call():
    class BadSecond(Square):
        """Its backward records a node whose own backward fails."""

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return FailingBackward.apply(g * x)

    x = leaf([1.5])
    with anomaly_mode_recording() as record:
        forward_line = inspect.currentframe().f_lineno + 1
        y = BadSecond.apply(x)
        (g,) = fg.autograd.grad(y.sum(), x, create_graph=True)
        assert g.item() == 2 * 1.5  # FailingBackward doubles
        with pytest.raises(ValueError, match="on purpose"):
            g.sum().backward()
    messages = [str(w.message) for w in record]
    first = next(
        i for i, m in enumerate(messages) if m.startswith("Error detected in FailingBackwardBackward")
    )
    assert "return FailingBackward.apply(g * x)" in messages[first]
    parent = messages[first + 1]
    assert "Previous calculation was induced by BadSecondBackward" in parent
    assert f"line {forward_line}" in parent


def test_anomaly_mode_reaches_parallel_backward_workers():
    w = fg.randn(128, 128, dtype=fg.float64, requires_grad=True)
    branches = [((w @ w) * (k + 1)).tanh().sum() for k in range(4)]
    bad = (w.sqrt() * 0).sum()  # sqrt of negative entries gives NaN values
    total = sum(branches, bad)
    before = fg._core._parallel_waves()
    with anomaly_mode_recording() as record:
        total2 = sum([((w @ w) * (k + 1)).tanh().sum() for k in range(4)], (w.sqrt() * 0).sum())
        with pytest.raises(RuntimeError, match="returned nan values"):
            total2.backward()
    assert fg._core._parallel_waves() > before
    assert anomaly_reports(record)
    # Outside anomaly mode the same graph runs and gives NaN gradients.
    total.backward()
    assert w.grad.isnan().any().item()
