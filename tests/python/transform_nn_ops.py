"""The sequence, loss, attention and spectral steps of the random transform
programs (``transform_programs.py``): ``ctc_loss``, ``multilabel_margin_loss``,
``linear_cross_entropy``, ``conv_tbc``, ``multi_head_attention_forward``,
``stft`` (its power), ``istft`` (of a filtered ``stft``) and
``Tensor.unfold``, applied to a vector or a matrix in float64 with
constants drawn from the program's generator. (``gumbel_softmax`` draws
new noise at every call, so no composition of transforms can be checked
against a loop of it; its tests are in ``test_nn_functional_extra.py``.)
"""

from __future__ import annotations

import ferrograd as torch
import ferrograd.nn.functional as F

DT = torch.float64


def _const(rng, *shape):
    return torch.tensor(rng.normal(size=shape), dtype=DT)


def _spectral(t, n_fft, window, weights=None):
    """The power of the centred stft of ``t``'s rows, or (with ``weights``
    per frequency) the istft of the filtered stft."""
    spec = torch.stft(t, n_fft, 1, window=window, return_complex=True)
    if weights is None:
        power = spec.real.square() + spec.imag.square()
        return power.reshape(t.shape[0], -1) if t.dim() == 2 else power
    return torch.istft(spec * weights, n_fft, 1, window=window, length=t.shape[-1])


def nn_ops(rng, s, k, add):
    """The steps applicable to shape ``s`` (``k`` a dim), offered through ``add``."""
    d = len(s)
    m = int(rng.integers(1, 4))
    n_last = s[-1]
    # Spectral: n_fft 2, hop 1, a positive window (so the overlap-add never vanishes).
    window = torch.tensor(rng.uniform(0.5, 1.5, 2), dtype=DT)
    weights = torch.tensor(rng.uniform(0.5, 1.5, (2, 1)), dtype=DT)
    frames = n_last + 1
    if n_last >= 2:  # the reflection padding of the centred frames needs two samples
        power_shape = (s[0], 2 * frames) if d == 2 else (2, frames)
        add("stft_power", lambda t, w=window: _spectral(t, 2, w), power_shape)
        add("istft_filter", lambda t, w=window, g=weights: _spectral(t, 2, w, g), s)
    size, step = min(2, s[k]), int(rng.integers(1, 3))
    count = (s[k] - size) // step + 1
    add(f"unfold(step={step})", lambda t, dd=k, z=size, st=step: t.unfold(dd, z, st).reshape(-1, z),
        (count * (s[0] if d == 2 and k == 1 else s[1] if d == 2 else 1), size))
    # Losses of the rows (a vector is one row).
    classes = n_last
    listed = [int(v) for v in rng.permutation(classes)[: int(rng.integers(1, classes + 1))]]
    target = torch.tensor(listed + [-1] * (classes - len(listed)), dtype=torch.int64)
    rows = s[0] if d == 2 else 1
    add("multilabel_margin_loss",
        lambda t, y=target: F.multilabel_margin_loss(t, y.expand(t.shape), reduction="none").reshape(-1),
        (rows,))
    w_lce = _const(rng, m + 1, n_last)
    lce_target = torch.tensor(rng.integers(0, m + 1, size=s[:-1]), dtype=torch.int64)
    smoothing = float(rng.choice([0.0, 0.2]))
    add(f"linear_cross_entropy(smoothing={smoothing})",
        lambda t, w=w_lce, y=lce_target, ls=smoothing: F.linear_cross_entropy(
            t, w, y, reduction="none", label_smoothing=ls).reshape(-1), (rows,))
    # CTC over time (the rows), with classes the columns (a vector's two
    # classes are itself and a function of it).
    steps = s[0]
    ctc_classes = s[1] if d == 2 else 2
    length = int(rng.integers(0, min(2, steps // 2) + 1))
    if ctc_classes < 2:
        length = 0  # only the blank
    labels = torch.tensor(rng.integers(1, max(ctc_classes, 2), size=length), dtype=torch.int64)
    reduction = str(rng.choice(["sum", "mean"]))

    def ctc(t, y=labels, red=reduction):
        logits = t if t.dim() == 2 else torch.stack([t, 0.3 * t.cos()], -1)
        return F.ctc_loss(logits.log_softmax(-1), y, (logits.shape[0],), (len(y),), reduction=red).reshape(1)

    add(f"ctc_loss({reduction})", ctc, (1,))
    if d == 2:
        r, c = s
        w_tbc, b_tbc = _const(rng, 2, c, m), _const(rng, m)
        add("conv_tbc", lambda t, w=w_tbc, b=b_tbc: F.conv_tbc(t.unsqueeze(1), w, b, 1).squeeze(1),
            (r + 1, m))
        heads = 2 if c % 2 == 0 else 1
        w_in, b_in, w_out = _const(rng, 3 * c, c) * 0.5, _const(rng, 3 * c), _const(rng, c, c) * 0.5
        add(f"multi_head_attention_forward(heads={heads})",
            lambda t, h=heads, wi=w_in, bi=b_in, wo=w_out: F.multi_head_attention_forward(
                t, t, t, t.shape[-1], h, wi, bi, None, None, False, 0.0, wo, None)[0], s)
