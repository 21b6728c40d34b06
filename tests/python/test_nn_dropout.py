"""Channel dropout (F.dropout1d/2d/3d, nn.Dropout2d/3d) on the ranks torch
2.13 still accepts with a deprecation warning: the warnings' category and
text as torch writes them, and the masks checked structurally (which
elements share one mask value, kept values scaled by ``1 / (1 - p)``)."""

from __future__ import annotations

import warnings

import ferrograd as fg
import ferrograd.nn as nn
import ferrograd.nn.functional as F
import numpy as np
import pytest
from conftest import to_np


def deprecated_rank_message(name, rank, nd):
    return (
        f"{name}: Received a {rank}-D input to {name}, which is deprecated and will result in an error "
        "in a future release. To retain the behavior and silence this warning, please use dropout "
        f"instead. Note that {name} exists to provide channel-wise dropout on inputs with {nd} spatial "
        f"dimensions, a channel dimension, and an optional batch dimension (i.e. {nd + 1}D or {nd + 2}D "
        "inputs)."
    )


DROPOUT2D_3D_MESSAGE = (
    "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
    "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
    "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
    "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
    "instead."
)


NEEDS_2_DIMS = "Feature dropout requires at least 2 dimensions in the input"


def call_warning_once(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` and the text of the single UserWarning it gives."""
    with pytest.warns(UserWarning) as record:
        out = fn(*args, **kwargs)
    assert len(record) == 1
    assert record[0].category is UserWarning
    return out, str(record[0].message)


def assert_groups_constant(out, group_dims):
    """Every slice sharing the indices of the first ``group_dims`` dimensions
    holds one value, 0 or 2 (p = 0.5), and both values occur."""
    groups = out.reshape(int(np.prod(out.shape[:group_dims])), -1)
    assert np.all(groups.min(-1) == groups.max(-1))
    assert set(np.unique(groups)) == {0.0, 2.0}


def test_dropout2d_on_2d_input_warns_and_drops_elements_one_by_one():
    fg.manual_seed(0)
    out, msg = call_warning_once(F.dropout2d, fg.ones(30, 40), 0.5)
    assert msg == deprecated_rank_message("dropout2d", 2, 2)
    out = to_np(out)
    assert set(np.unique(out)) == {0.0, 2.0}
    # Elementwise: rows and columns both mix dropped and kept elements.
    mixed_rows = (out.min(1) != out.max(1)).sum()
    mixed_cols = (out.min(0) != out.max(0)).sum()
    assert mixed_rows == 30 and mixed_cols == 40
    assert 0.4 < (out == 0).mean() < 0.6


def test_dropout2d_on_3d_input_reads_it_as_batched_1d_channels():
    fg.manual_seed(1)
    out, msg = call_warning_once(F.dropout2d, fg.ones(6, 8, 5), 0.5)
    assert msg == DROPOUT2D_3D_MESSAGE
    assert_groups_constant(to_np(out), 2)  # input[n, c] dropped or kept whole


@pytest.mark.parametrize("shape", [(3, 4, 2, 2, 3), (3, 4, 1, 2, 1, 2)])
def test_dropout2d_on_5d_and_more_warns_and_masks_over_the_first_two_dims(shape):
    fg.manual_seed(2)
    out, msg = call_warning_once(F.dropout2d, fg.ones(*shape), 0.5)
    assert msg == deprecated_rank_message("dropout2d", len(shape), 2)
    assert_groups_constant(to_np(out), 2)


def test_dropout2d_on_1d_and_0d_input_warns_then_fails_in_training_only():
    for x in (fg.ones(5), fg.tensor(3.0)):
        with pytest.warns(UserWarning, match=f"Received a {x.dim()}-D input to dropout2d"):
            with pytest.raises(RuntimeError, match=NEEDS_2_DIMS):
                F.dropout2d(x, 0.5)
        with pytest.warns(UserWarning, match="which is deprecated"):
            assert to_np(F.dropout2d(x * 2, 0.5, training=False)).tolist() == (to_np(x) * 2).tolist()
        with pytest.warns(UserWarning, match="which is deprecated"):
            assert np.all(to_np(F.dropout2d(x, 1.0)) == 0)  # p = 1 needs no mask


@pytest.mark.parametrize("shape", [(7, 3, 4), (7, 3), (7, 2, 1, 3, 1, 2)])
def test_dropout3d_reads_other_ranks_as_unbatched(shape):
    fg.manual_seed(3)
    out, msg = call_warning_once(F.dropout3d, fg.ones(*shape), 0.5)
    assert msg == deprecated_rank_message("dropout3d", len(shape), 3)
    assert_groups_constant(to_np(out), 1)  # input[c] dropped or kept whole


def test_dropout3d_on_1d_input_drops_elements_and_0d_fails_in_training():
    fg.manual_seed(4)
    out, msg = call_warning_once(F.dropout3d, fg.ones(200), 0.5)
    assert msg == deprecated_rank_message("dropout3d", 1, 3)
    out = to_np(out)
    assert set(np.unique(out)) == {0.0, 2.0} and 0.35 < (out == 0).mean() < 0.65
    with pytest.warns(UserWarning, match="Received a 0-D input to dropout3d"):
        with pytest.raises(RuntimeError, match=NEEDS_2_DIMS):
            F.dropout3d(fg.tensor(1.0), 0.5)


def test_dropout3d_inplace_on_deprecated_rank_writes_the_input():
    fg.manual_seed(5)
    x = fg.ones(10, 4)
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout3d"):
        out = F.dropout3d(x, 0.5, inplace=True)
    assert out is x
    assert_groups_constant(to_np(x), 1)


@pytest.mark.parametrize(
    ("fn", "shape"),
    [
        (F.dropout2d, (2, 3, 4)),
        (F.dropout2d, (2, 3, 4, 4)),
        (F.dropout3d, (2, 3, 2, 2)),
        (F.dropout3d, (2, 3, 2, 2, 2)),
        (F.dropout1d, (2, 3)),
        (F.dropout1d, (2, 3, 4)),
    ],
)
def test_supported_ranks_give_no_deprecation_warning(fn, shape):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fn(fg.ones(*shape), 0.5)
    texts = [str(w.message) for w in record]
    if fn is F.dropout2d and len(shape) == 3:
        assert texts == [DROPOUT2D_3D_MESSAGE]  # the one warning a supported rank gets
    else:
        assert texts == []


def test_dropout2d_batched_4d_drops_per_sample_channel_and_3d_channels_of_dropout3d_4d():
    fg.manual_seed(6)
    assert_groups_constant(to_np(F.dropout2d(fg.ones(5, 6, 2, 3), 0.5)), 2)
    assert_groups_constant(to_np(F.dropout3d(fg.ones(12, 2, 2, 3), 0.5)), 1)  # unbatched (C, D, H, W)


def test_dropout1d_rejects_other_ranks_with_torchs_message():
    expected = (
        "dropout1d: Expected 2D or 3D input, but received a 4D input. Note that dropout1d exists to provide "
        "channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional "
        "batch dimension (i.e. 2D or 3D inputs)."
    )
    with pytest.raises(RuntimeError) as info:
        F.dropout1d(fg.ones(2, 2, 2, 2), 0.5, training=False)
    assert str(info.value) == expected


def test_dropout_modules_warn_on_deprecated_ranks():
    fg.manual_seed(7)
    out, msg = call_warning_once(nn.Dropout2d(0.5), fg.ones(20, 30))
    assert msg == deprecated_rank_message("dropout2d", 2, 2)
    out = to_np(out)
    assert (out.min(1) != out.max(1)).all()  # elementwise, as dropout
    out, msg = call_warning_once(nn.Dropout3d(0.5), fg.ones(9, 4, 4))
    assert msg == deprecated_rank_message("dropout3d", 3, 3)
    assert_groups_constant(to_np(out), 1)
    m = nn.Dropout3d(0.5).eval()
    out, msg = call_warning_once(m, fg.ones(3, 2))
    assert to_np(out).tolist() == [[1.0, 1.0]] * 3
