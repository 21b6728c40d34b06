"""``repr`` of tensors in torch's format.

``tensor([1.5000, 2.0000], requires_grad=True)``: 4 decimals, integer-valued
floats printed as ``1.``, scientific notation when magnitudes span more than
three orders (or exceed 1e8 or fall below 1e-4, the last only for values
that are not all integers), summarised with ``...`` past 1000 elements, and
``dtype=`` shown when it is not the default for its kind. A suffix that does
not fit on the data's last line goes on a line of its own.
Complex elements print as ``1.0000+2.0000j``: real and imaginary parts each
get the float rules over all the shown parts of their kind.
"""

from __future__ import annotations

import math

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


def _shown(values, shape, summarize):
    """The nested lists of values that will be printed (edges only when summarised)."""
    if not shape:
        return values
    n = shape[0]
    if summarize and n > 2 * EDGEITEMS:
        idx = list(range(EDGEITEMS)) + [None] + list(range(n - EDGEITEMS, n))
    else:
        idx = list(range(n))
    return [None if i is None else _shown(values[i], shape[1:], summarize) for i in idx]


def _flat(nested, out):
    if isinstance(nested, list):
        for x in nested:
            if x is not None:
                _flat(x, out)
    else:
        out.append(nested)
    return out


class _Formatter:
    def __init__(self, values, kind):
        self.kind = kind
        self.sci = False
        self.int_mode = True
        if kind == "float":
            finite = [abs(v) for v in values if math.isfinite(v)]
            nonzero = [v for v in finite if v != 0]
            self.int_mode = all(v == math.floor(v) for v in finite)
            if nonzero:
                lo, hi = min(nonzero), max(nonzero)
                # Integer-valued floats skip only the small-magnitude test.
                self.sci = hi / lo > 1000.0 or hi > 1e8 or (not self.int_mode and lo < 1e-4)
        if kind == "float":
            # As torch: only nonzero finite values set the width (nan, inf and
            # zeros are padded to it but never widen it).
            shown = [v for v in values if math.isfinite(v) and v != 0]
            self.width = max((len(self.fmt(v)) for v in shown), default=1)
        else:
            self.width = max((len(self.fmt(v)) for v in values), default=1)

    def fmt(self, v):
        if self.kind == "bool":
            return "True" if v else "False"
        if self.kind == "int":
            return str(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if self.sci:
            return f"{v:.{PRECISION}e}"
        if self.int_mode:
            return f"{v:.0f}."
        return f"{v:.{PRECISION}f}"

    def cell(self, v):
        return self.fmt(v).rjust(self.width)


class _ComplexFormatter:
    """Real parts padded to a common width; imaginary parts unpadded, signed, with ``j``."""

    def __init__(self, values):
        self.real = _Formatter([z.real for z in values], "float")
        self.imag = _Formatter([z.imag for z in values], "float")
        self.width = self.real.width + self.imag.width + 1

    def cell(self, z):
        imag = self.imag.fmt(z.imag) + "j"
        if imag[0] not in "+-":
            imag = "+" + imag
        return self.real.cell(z.real) + imag


def _render(nested, ndim, fmt, indent):
    if ndim == 0:
        return fmt.cell(nested)
    if ndim == 1:
        # torch writes a row's elision as one more cell, " ...".
        cells = [" ..." if v is None else fmt.cell(v) for v in nested]
        per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
        lines = [", ".join(cells[i : i + per_line]) for i in range(0, len(cells), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    sep = "," + "\n" * (ndim - 1) + " " * (indent + 1)
    parts = ["..." if x is None else _render(x, ndim - 1, fmt, indent + 1) for x in nested]
    return "[" + sep.join(parts) + "]"


def tensor_repr(t, prefix: str = "tensor(") -> str:
    """torch-style ``repr`` of a tensor."""
    import ferrograd

    dt = t.dtype
    shape = tuple(t.shape)
    if dt.is_floating_point:
        kind, default_dtype = "float", ferrograd.get_default_dtype()
    elif dt.is_complex:
        kind, default_dtype = "complex", ferrograd.get_default_dtype().to_complex()
    elif dt == ferrograd.bool:
        kind, default_dtype = "bool", ferrograd.bool
    else:
        kind, default_dtype = "int", ferrograd.int64
    suffixes = []
    indent = len(prefix)
    if t.numel() == 0:
        body = "[]"
        if shape != (0,):
            suffixes.append(f"size={shape}")
        if dt != ferrograd.get_default_dtype():
            suffixes.append(f"dtype={dt!r}")
    else:
        summarize = t.numel() > THRESHOLD
        values = t.detach().tolist()
        nested = _shown(values, shape, summarize)
        flat = _flat(nested, []) if shape else [nested]
        fmt = _ComplexFormatter(flat) if kind == "complex" else _Formatter(flat, kind)
        body = _render(nested, len(shape), fmt, indent)
        if dt != default_dtype:
            suffixes.append(f"dtype={dt!r}")
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, indent)


def _with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """``text`` closed with its suffixes (``dtype=...``, ``grad_fn=<...>``).

    As torch: a suffix that would take its line past ``LINEWIDTH`` starts a
    line of its own, indented under the data. torch counts the data's last
    line two characters longer than it is, so a suffix stays there only when
    that line, closing ``)`` included, remains under 80 characters; a line
    a suffix started is counted at its true length, without the ``)``.
    """
    parts = [text]
    line = len(text) - (text.rfind("\n") + 1) + 2
    for suffix in suffixes:
        if line + 2 + len(suffix) > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line += 2 + len(suffix)
    parts.append(")")
    return "".join(parts)
