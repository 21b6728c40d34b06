"""Counts torch's public op surface that ferrograd provides, name by name.

Reads torch's own list of overridable public functions
(``torch.overrides.get_overridable_functions``), so it needs torch installed;
it is a development tool and no test depends on it. Families outside
ferrograd's scope are left out of the count: sparse and quantized tensors,
device- and backend-specific entry points (CUDA, cuDNN, MKL-DNN, MPS, XPU,
...), nested tensors and private names. Every other missing name is listed,
so the documented gaps in docs/op-coverage.md can be checked against it.

Usage::

    python scripts/op_surface.py            # summary and missing names
    python scripts/op_surface.py --summary  # one line per namespace
"""

from __future__ import annotations

import argparse
import re
import sys
import types

# Substrings of names from families ferrograd leaves out by design.
EXCLUDED = re.compile(
    r"sparse|quantiz|(^|_)q_|^q(scheme|_per)|int_repr|dequantize|fbgemm|mkldnn|cudnn|miopen|cuda|"
    r"^xpu|mps|vulkan|ipu|hpu|mtia|maia|nested|^is_nonzero$|_csr|_csc|_bsr|_bsc|to_padded_tensor|"
    r"^pin_memory$|^is_pinned$|^record_stream$|^share_memory_$|^is_shared$|^storage_offset$|"
    r"^untyped_storage$|^storage$|^coalesce$|^is_coalesced$|^indices$|^values$|^crow_indices$|"
    r"^col_indices$|^ccol_indices$|^row_indices$|^dense_dim$|^sparse_dim$|^smm$|^hspmm$|"
    r"^nnz$|^to_dense$|^sym_|^saddmm$|^dsmm$|^hsmm$|^spmm$|^sspaddmm$|^batch_norm_(backward|elemt|gather|stats|update)|"
    r"^(ccol_|col_|crow_|row_)?indices_copy$|^values_copy$|qparams|fake_quant|"
    r"^_"
)

# Each namespace: torch's keys in the overridable list, and the prefix its
# functions' ``__name__`` carries there (``linalg_det`` is ``torch.linalg.det``).
NAMESPACES = {
    "torch": (("torch", "torch.functional"), ""),
    "Tensor": (("Tensor",), ""),
    "nn.functional": (("torch.nn.functional",), ""),
    "linalg": (("torch.linalg",), "linalg_"),
    "special": (("torch.special",), "special_"),
    "fft": (("torch.fft",), "fft_"),
}


def torch_names(torch: types.ModuleType) -> dict[str, set[str]]:
    """Public names per namespace from torch's overridable-function list."""
    from torch.overrides import get_overridable_functions

    table = get_overridable_functions()
    by_key: dict[str, set[str]] = {}
    for key, funcs in table.items():
        label = "Tensor" if key is torch.Tensor else getattr(key, "__name__", None)
        if not isinstance(label, str):
            continue
        names = by_key.setdefault(label, set())
        for f in funcs:
            name = getattr(f, "__name__", None) or getattr(getattr(f, "fget", None), "__name__", None)
            if name:
                names.add(name)
    out: dict[str, set[str]] = {}
    for ns, (keys, prefix) in NAMESPACES.items():
        names = set().union(*(by_key.get(k, set()) for k in keys))
        names = {n.removeprefix(prefix) for n in names}
        out[ns] = {n for n in names if not EXCLUDED.search(n)}
    return out


def ferrograd_target(fg: types.ModuleType, ns: str) -> object:
    return {
        "torch": fg,
        "Tensor": fg.Tensor,
        "nn.functional": fg.nn.functional,
        "linalg": fg.linalg,
        "special": getattr(fg, "special", None),
        "fft": getattr(fg, "fft", None),
    }[ns]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", action="store_true", help="only the per-namespace counts")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("op_surface.py compares against torch's list: install torch to run it", file=sys.stderr)
        return 2
    import ferrograd as fg

    total_have = total_all = 0
    for ns, names in torch_names(torch).items():
        target = ferrograd_target(fg, ns)
        missing = sorted(n for n in names if target is None or not hasattr(target, n))
        have = len(names) - len(missing)
        total_have += have
        total_all += len(names)
        print(f"{ns:14s} {have:4d} / {len(names):4d}  {100.0 * have / max(len(names), 1):5.1f}%")
        if missing and not args.summary:
            print("    missing: " + ", ".join(missing))
    print(f"{'all':14s} {total_have:4d} / {total_all:4d}  {100.0 * total_have / total_all:5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
