"""NumPy references for the sequence, multi-label and spectral ops
(``ctc_loss``, ``multilabel_margin_loss``, ``conv_tbc``, multi-head
attention, ``stft``/``istft``), written from their definitions: the tests
and the op fuzzer's composites compare ferrograd with them.
"""

from __future__ import annotations

import itertools

import numpy as np


def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def _collapse(path: tuple[int, ...], blank: int) -> tuple[int, ...]:
    """An alignment's labels: repeats merged, then blanks removed."""
    merged = [k for i, k in enumerate(path) if i == 0 or k != path[i - 1]]
    return tuple(k for k in merged if k != blank)


def ctc_brute(log_probs: np.ndarray, target: list[int], blank: int = 0) -> float:
    """``-log`` of the summed probability of every alignment (a label per
    frame of ``log_probs`` ``(T, C)``) that collapses to ``target``, by
    enumerating all ``C ** T`` of them (tiny cases only)."""
    steps, classes = log_probs.shape
    total = 0.0
    for path in itertools.product(range(classes), repeat=steps):
        if _collapse(path, blank) == tuple(target):
            total += float(np.exp(sum(log_probs[t, k] for t, k in enumerate(path))))
    return -np.log(total) if total > 0 else np.inf


def ctc_dp(log_probs: np.ndarray, target: list[int], blank: int = 0) -> float:
    """The same by the forward recursion over the extended label sequence
    (blank, l1, blank, ..., blank), in probability space with one scale per
    frame."""
    ext = [blank]
    for k in target:
        ext += [k, blank]
    probs = np.exp(log_probs)
    alpha = np.zeros(len(ext))
    alpha[0] = 1.0  # before the first frame: the virtual start
    log_scale = 0.0
    for t in range(len(probs)):
        new = alpha.copy()
        new[1:] += alpha[:-1]
        for s in range(2, len(ext)):
            if ext[s] != blank and ext[s] != ext[s - 2]:
                new[s] += alpha[s - 2]
        alpha = new * probs[t, ext]
        scale = alpha.max()
        if scale == 0:
            return np.inf
        alpha /= scale
        log_scale += np.log(scale)
    end = alpha[-1] + (alpha[-2] if len(ext) > 1 else 0.0)
    return -(np.log(end) + log_scale) if end > 0 else np.inf


def multilabel_margin(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-row multilabel margin loss of ``(N, C)`` scores and ``-1``-terminated targets."""
    out = np.zeros(len(x))
    classes = x.shape[1]
    for n in range(len(x)):
        listed = []
        for k in y[n]:
            if k == -1:
                break
            listed.append(int(k))
        others = [i for i in range(classes) if i not in listed]
        out[n] = sum(max(0.0, 1.0 - (x[n, j] - x[n, i])) for j in listed for i in others) / classes
    return out


def conv_tbc(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    """``out[t, n, o] = b[o] + sum_{k, c} xp[t + k, n, c] w[k, c, o]`` with ``x`` zero-padded in time."""
    xp = np.pad(x, ((pad, pad), (0, 0), (0, 0)))
    k = w.shape[0]
    steps = xp.shape[0] - k + 1
    return np.stack([np.einsum("knc,kco->no", xp[t : t + k], w) for t in range(steps)]) + b


def mha(q: np.ndarray, k: np.ndarray, v: np.ndarray, heads: int, w_in: np.ndarray, b_in: np.ndarray,
        w_out: np.ndarray, b_out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention of sequence-first ``(L, N, E)`` inputs with a
    packed ``(3E, E)`` input projection: the output and the head-averaged
    weights ``(N, L, S)``."""
    e = q.shape[-1]
    hd = e // heads
    pq, pk, pv = (x @ w_in[i * e : (i + 1) * e].T + b_in[i * e : (i + 1) * e]
                  for i, x in enumerate((q, k, v)))
    outs, weights = [], []
    for n in range(q.shape[1]):
        head_out, head_w = [], []
        for h in range(heads):
            cols = slice(h * hd, (h + 1) * hd)
            scores = pq[:, n, cols] @ pk[:, n, cols].T / np.sqrt(hd)
            w = np.exp(log_softmax(scores))
            head_out.append(w @ pv[:, n, cols])
            head_w.append(w)
        outs.append(np.concatenate(head_out, -1) @ w_out.T + b_out)
        weights.append(np.mean(head_w, 0))
    return np.stack(outs, 1), np.stack(weights)


# torch's padding modes by NumPy's names.
NUMPY_PAD = {"replicate": "edge", "circular": "wrap"}


def stft(x: np.ndarray, n_fft: int, hop: int, window: np.ndarray, center: bool = True,
         pad_mode: str = "reflect", onesided: bool = True) -> np.ndarray:
    """The STFT of ``(..., L)`` signals: frames of the (centred) signal times
    the window (padded to ``n_fft``), ``np.fft`` of each, ``(..., freq, frames)``."""
    win = window.shape[0]
    left = (n_fft - win) // 2
    full = np.zeros(n_fft, dtype=window.dtype)
    full[left : left + win] = window
    if center:
        width = [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)]
        x = np.pad(x, width, mode=NUMPY_PAD.get(pad_mode, pad_mode))
    count = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[..., m * hop : m * hop + n_fft] * full for m in range(count)], -2)
    spec = np.fft.rfft(frames) if onesided else np.fft.fft(frames)
    return np.swapaxes(spec, -1, -2)


def istft(spec: np.ndarray, n_fft: int, hop: int, window: np.ndarray, center: bool = True,
          length: int | None = None) -> np.ndarray:
    """The inverse of :func:`stft` (onesided) by weighted overlap-add:
    ``sum_m w[k] frame_m[k]`` divided by ``sum_m w[k]^2`` at each sample."""
    win = window.shape[0]
    left = (n_fft - win) // 2
    full = np.zeros(n_fft)
    full[left : left + win] = window
    frames = np.fft.irfft(np.swapaxes(spec, -1, -2), n=n_fft) * full
    count = frames.shape[-2]
    total = n_fft + hop * (count - 1)
    y = np.zeros((*frames.shape[:-2], total))
    env = np.zeros(total)
    for m in range(count):
        y[..., m * hop : m * hop + n_fft] += frames[..., m, :]
        env[m * hop : m * hop + n_fft] += full**2
    start = n_fft // 2 if center else 0
    end = total - start if length is None else min(start + length, total)
    y = y[..., start:end] / env[start:end]
    if length is not None and y.shape[-1] < length:
        y = np.concatenate([y, np.zeros((*y.shape[:-1], length - y.shape[-1]))], -1)
    return y
