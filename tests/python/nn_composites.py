"""The sequence, loss, attention and spectral composites of the in-place/view
program fuzzer (see ``inplace_composites.py``): ``ctc_loss``,
``multilabel_margin_loss``, ``gumbel_softmax`` (seeded), ``stft`` (its
power), ``istft`` (of a filtered ``stft``), ``conv_tbc``,
``linear_cross_entropy``, ``multi_head_attention_forward`` and
``Tensor.unfold`` of a slot ``a`` with a constant ``c``: each as ferrograd
(or torch) computes it, and by its formula in NumPy (``nn_reference``),
which also rejects inputs near a kink while programs are generated.

torch's ``ctc_loss``, ``multilabel_margin_loss`` and ``conv_tbc`` have no
forward mode; for torch's verdict on a program they are written here with
its other ops (the same values, from the same slot).
"""

from __future__ import annotations

from typing import Any

import ferrograd
import numpy as np
from nn_reference import conv_tbc, ctc_dp, istft, log_softmax, mha, multilabel_margin, stft

NN_COMPOSITES = [
    "ctc_loss", "multilabel_margin", "gumbel_softmax", "stft_power", "istft_filter", "conv_tbc",
    "linear_cross_entropy", "mha_forward", "unfold",
]  # fmt: skip
NN_NDIMS = {
    "ctc_loss": (2, 3), "multilabel_margin": (1, 2), "stft_power": (1, 2), "istft_filter": (1, 2),
    "conv_tbc": (3,), "linear_cross_entropy": (2,), "mha_forward": (2, 3), "unfold": (1, 2, 3),
}  # fmt: skip
KINK_MARGIN = 1e-2
GUMBEL_SEED = 1234


# ---------------------------------------------------------------------------
# The constants each composite reads off the slot's shape and c


def _ctc_target(classes: int, steps: int, c: float) -> tuple[int, list[int]]:
    """The blank and a target that fits in ``steps`` frames (no more than
    ``steps // 2`` labels, so even a repeated label fits)."""
    blank = 0 if c >= 0 else classes - 1
    if classes < 2:
        return blank, []
    return blank, [(blank + 1 + j % (classes - 1)) % classes for j in range(min(2, steps // 2))]


def _listed_classes(classes: int) -> list[int]:
    """The targets of every multilabel_margin row: the first and last classes."""
    return [0] if classes == 1 else [0, classes - 1]


def _signal_setup(length: int, c: float) -> tuple[int, bool, str, np.ndarray]:
    """n_fft, center, pad_mode and window of the spectral composites."""
    n_fft = 2 if length >= 2 else 1
    return n_fft, length >= 2, "reflect" if c >= 0 else "constant", np.array([0.8, 1.2])[:n_fft]


def _spectral_weights(n_fft: int, c: float) -> np.ndarray:
    return np.array([1.0, 0.5 + 0.25 * c])[: n_fft // 2 + 1, None]


def _tbc_weights(channels: int, c: float) -> tuple[np.ndarray, np.ndarray]:
    k, ci, co = np.meshgrid(np.arange(2), np.arange(channels), np.arange(2), indexing="ij")
    return 0.3 * (k + 1) - 0.2 * ci + 0.1 * co * c, np.array([0.1, -0.2])


def _lce_setup(features: int, c: float) -> tuple[np.ndarray, float]:
    """The (3, features) weight and the label smoothing."""
    rows, cols = np.meshgrid(np.arange(3), np.arange(features), indexing="ij")
    return np.sin(rows + 0.7 * cols + c), 0.1 if c > 0 else 0.0


def _mha_setup(embed: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    heads = 2 if embed % 2 == 0 else 1
    i, j = np.meshgrid(np.arange(3 * embed), np.arange(embed), indexing="ij")
    w_in = 0.5 * np.sin(1.3 * i + 0.7 * j)
    i, j = np.meshgrid(np.arange(embed), np.arange(embed), indexing="ij")
    w_out = 0.5 * np.cos(0.9 * i - 0.4 * j)
    return heads, w_in, 0.1 * np.arange(3 * embed), w_out, -0.05 * np.arange(embed)


def _gumbel_noise(shape: tuple[int, ...]) -> np.ndarray:
    """The Gumbel draws ``gumbel_softmax`` makes right after
    ``manual_seed(GUMBEL_SEED)`` (the global generator is left as it was)."""
    state = ferrograd.get_rng_state()
    ferrograd.manual_seed(GUMBEL_SEED)
    e = ferrograd.empty(shape, dtype=ferrograd.float64).exponential_().numpy()
    ferrograd.set_rng_state(state)
    return -np.log(e)


def _ctc_recursion(T: Any, lp: Any, blank: int, target: list[int]) -> Any:
    """``-log p(target)`` for one ``(steps, C)`` sequence by the log-space
    forward recursion written with plain tensor ops (torch's side)."""
    ext = [blank]
    for k in target:
        ext += [k, blank]
    log_zero = T.tensor(-1e30, dtype=lp.dtype)
    alpha = [T.tensor(0.0, dtype=lp.dtype)] + [log_zero] * (len(ext) - 1)
    for t in range(lp.shape[0]):
        new = []
        for s, k in enumerate(ext):
            terms = [alpha[s]] + ([alpha[s - 1]] if s >= 1 else [])
            if s >= 2 and k != blank and k != ext[s - 2]:
                terms.append(alpha[s - 2])
            new.append(T.logsumexp(T.stack(terms), 0) + lp[t, k])
        alpha = new
    return -T.logsumexp(T.stack(alpha[-2:] if len(ext) > 1 else alpha[-1:]), 0)


# ---------------------------------------------------------------------------
# The composites


def torch_nn(T: Any, name: str, a: Any, c: float) -> Any:
    """Composite ``name`` of slot ``a`` with constant ``c`` on the tensor module ``T``."""
    F = T.nn.functional
    is_torch = T.__name__ == "torch"
    if name == "ctc_loss":
        blank, target = _ctc_target(a.shape[-1], a.shape[0], c)
        lp = a.log_softmax(-1)
        if is_torch:
            seqs = [lp] if a.ndim == 2 else list(lp.unbind(1))
            out = T.stack([_ctc_recursion(T, s, blank, target) for s in seqs])
            return out[0] if a.ndim == 2 else out
        batch = 1 if a.ndim == 2 else a.shape[1]
        targets = T.tensor([target] * batch if a.ndim == 3 else target, dtype=T.int64)
        return F.ctc_loss(lp, targets, [a.shape[0]] * batch, [len(target)] * batch, blank=blank,
                          reduction="none")
    if name == "multilabel_margin":
        classes = a.shape[-1]
        listed = _listed_classes(classes)
        if is_torch:
            others = [i for i in range(classes) if i not in listed]
            terms = [(1 - a[..., j] + a[..., i]).clamp(min=0) for j in listed for i in others]
            return sum(terms, T.zeros(a.shape[:-1], dtype=a.dtype)) / classes
        target = T.full(a.shape, -1, dtype=T.int64)
        target[..., : len(listed)] = T.tensor(listed, dtype=T.int64)
        return F.multilabel_margin_loss(a, target, reduction="none")
    if name == "gumbel_softmax":
        state = T.get_rng_state()
        T.manual_seed(GUMBEL_SEED)
        out = F.gumbel_softmax(a, tau=0.5 + abs(c))
        T.set_rng_state(state)
        return out
    if name in ("stft_power", "istft_filter"):
        n_fft, center, pad_mode, window = _signal_setup(a.shape[-1], c)
        w = T.tensor(window, dtype=a.dtype)
        spec = T.stft(a, n_fft, 1, window=w, center=center, pad_mode=pad_mode, return_complex=True)
        if name == "stft_power":  # a fresh tensor (not the .real view, which takes no in-place writes)
            return spec.real.square() + spec.imag.square()
        filtered = spec * T.tensor(_spectral_weights(n_fft, c), dtype=a.dtype)
        return T.istft(filtered, n_fft, 1, window=w, center=center, length=a.shape[-1])
    if name == "conv_tbc":
        w, b = (T.tensor(v, dtype=a.dtype) for v in _tbc_weights(a.shape[-1], c))
        if is_torch:
            return F.conv1d(a.permute(1, 2, 0), w.permute(2, 1, 0), b, padding=1).permute(2, 0, 1)
        return F.conv_tbc(a, w, b, 1)
    if name == "linear_cross_entropy":
        w, smoothing = _lce_setup(a.shape[-1], c)
        target = T.tensor([n % 3 for n in range(a.shape[0])], dtype=T.int64)
        return F.linear_cross_entropy(a, T.tensor(w, dtype=a.dtype), target, reduction="none",
                                      label_smoothing=smoothing)
    if name == "mha_forward":
        heads, w_in, b_in, w_out, b_out = (
            v if isinstance(v, int) else T.tensor(v, dtype=a.dtype) for v in _mha_setup(a.shape[-1]))
        # need_weights=True: torch's path without it (fused attention) has no second derivative.
        return F.multi_head_attention_forward(a, a, a, a.shape[-1], heads, w_in, b_in, None, None, False, 0.0,
                                              w_out, b_out, need_weights=True)[0]
    if name == "unfold":
        return a.unfold(-1, min(2, a.shape[-1]), 1 if c >= 0 else 2) * 1.5
    raise ValueError(name)


def numpy_nn(be: Any, name: str, a: np.ndarray, c: float) -> np.ndarray:
    """The same composite by its formula in NumPy (``be``: the NumPy backend)."""
    if name == "ctc_loss":
        blank, target = _ctc_target(a.shape[-1], a.shape[0], c)
        lp = log_softmax(a)
        if a.ndim == 2:
            return np.array(ctc_dp(lp, target, blank))
        return np.array([ctc_dp(lp[:, n], target, blank) for n in range(a.shape[1])])
    if name == "multilabel_margin":
        classes = a.shape[-1]
        listed = _listed_classes(classes)
        rows = a.reshape(-1, classes)
        others = [i for i in range(classes) if i not in listed]
        if others:
            margins = 1 - rows[:, listed][:, :, None] + rows[:, others][:, None, :]
            be.reject_if(np.abs(margins).min() < KINK_MARGIN, "multilabel_margin: a hinge near its kink")
        target = np.full(rows.shape, -1)
        target[:, : len(listed)] = listed
        return multilabel_margin(rows, target).reshape(a.shape[:-1])
    if name == "gumbel_softmax":
        if a.ndim == 0:
            return np.array(1.0)
        return np.exp(log_softmax((a + _gumbel_noise(a.shape)) / (0.5 + abs(c))))
    if name in ("stft_power", "istft_filter"):
        n_fft, center, pad_mode, window = _signal_setup(a.shape[-1], c)
        spec = stft(a, n_fft, 1, window, center, pad_mode)
        if name == "stft_power":
            return np.abs(spec) ** 2
        return istft(spec * _spectral_weights(n_fft, c), n_fft, 1, window, center, a.shape[-1])
    if name == "conv_tbc":
        return conv_tbc(a, *_tbc_weights(a.shape[-1], c), 1)
    if name == "linear_cross_entropy":
        w, smoothing = _lce_setup(a.shape[-1], c)
        lp = log_softmax(a @ w.T)
        nll = -lp[np.arange(len(a)), np.arange(len(a)) % 3]
        return (1 - smoothing) * nll - smoothing * lp.mean(-1)
    if name == "mha_forward":
        heads, *weights = _mha_setup(a.shape[-1])
        x = a[:, None] if a.ndim == 2 else a
        out = mha(x, x, x, heads, *weights)[0]
        return out[:, 0] if a.ndim == 2 else out
    if name == "unfold":
        size, step = min(2, a.shape[-1]), 1 if c >= 0 else 2
        windows = np.lib.stride_tricks.sliding_window_view(a, size, axis=-1)
        return 1.5 * windows[..., ::step, :]
    raise ValueError(name)

