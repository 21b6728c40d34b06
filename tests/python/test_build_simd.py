"""The installed extension keeps its SIMD intrinsics inline.

An x86 intrinsic (``_mm512_fmadd_ps`` and the rest) compiles to one
instruction only inside a function built with its target feature. Reached
through a generic helper that the inliner leaves out of line (an
``std::array::from_fn`` in a long kernel body, say), it becomes a call to
an out-of-line copy of the intrinsic, with its vectors passed through
memory: the kernel still gives the right bits, several times slower, so
no value test notices. Such a copy shows in the library's symbol table as
``core::core_arch::x86::<feature>::<intrinsic>``; this test reads the
table and wants none for the wide-vector features.
"""

from __future__ import annotations

import platform
import re
import struct
from pathlib import Path

import ferrograd
import pytest

# Modules of core::arch whose intrinsics the kernels use in target-feature
# functions (the SSE families are baseline or used only by dependencies).
WIDE = frozenset({
    "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512bf16", "avx512fp16", "avx2", "avx", "fma", "f16c",
})  # fmt: skip

# core::core_arch::x86::<module>::<name> in either of rustc's manglings:
# legacy (``_ZN4core9core_arch3x86`` ...) and v0 (``_R`` ... ``4core9core_arch
# 3x86`` ..., where an identifier that starts with ``_`` gets a ``_``
# separator after its length).
INTRINSIC = re.compile(rb"4core9core_arch3x86(\d+)")


def _extension() -> Path:
    core = ferrograd._core.__file__
    assert core is not None
    return Path(core)


def _symbol_names(data: bytes) -> list[bytes]:
    """The names in an ELF64 little-endian file's ``.symtab`` (empty when the
    file has none, i.e. it was stripped)."""
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not an ELF64 little-endian file"
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names: list[bytes] = []
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strtab = sections[link]
        str_off = strtab[4]
        for k in range(size // entsize):
            name_off = struct.unpack_from("<I", data, offset + k * entsize)[0]
            end = data.index(b"\0", str_off + name_off)
            names.append(data[str_off + name_off : end])
    return names


def _out_of_line_intrinsics(names: list[bytes]) -> list[str]:
    found = []
    for name in names:
        m = INTRINSIC.search(name)
        if m is None or not name.startswith((b"_ZN4core", b"_R")):
            continue
        start = m.end()
        module = name[start : start + int(m.group(1))].decode()
        rest = name[start + int(m.group(1)) :]
        length = re.match(rb"\d+", rest)
        assert length is not None
        begin = length.end() + (name.startswith(b"_R") and rest[length.end() : length.end() + 1] == b"_")
        intrinsic = rest[begin : begin + int(length.group())].decode()
        if module in WIDE:
            found.append(f"{module}::{intrinsic}")
    return sorted(found)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 intrinsics only")
def test_no_wide_intrinsic_is_out_of_line() -> None:
    path = _extension()
    if path.suffix != ".so":
        pytest.skip(f"reads ELF symbol tables only, not {path.name}")
    names = _symbol_names(path.read_bytes())
    if not names:
        pytest.skip(f"{path.name} is stripped")
    # The table is the real one: the module's own entry point is in it.
    assert any(n.startswith(b"PyInit__core") for n in names)
    assert _out_of_line_intrinsics(names) == []


def test_the_reader_finds_an_out_of_line_intrinsic() -> None:
    # The decoder on names built as rustc mangles them, one wide and one
    # baseline.
    legacy = b"_ZN4core9core_arch3x867avx512f17_mm512_slli_epi3217h0123456789abcdefE"
    v0 = b"_RNvNtNtNtCsgEmfK2I1SDS_4core9core_arch3x867avx512f15__mm512_loadu_ps"
    base = b"_RNvNtNtNtCsgEmfK2I1SDS_4core9core_arch3x864sse313__mm_addsub_pd"
    vec = (
        b"_ZN4core3ptr72drop_in_place$LT$alloc..vec..Vec$LT$core..core_arch..x86..__m256$GT$$GT$"
        b"17h84853dcbf07626b1E"
    )
    found = _out_of_line_intrinsics([legacy, v0, base, vec, b"PyInit__core"])
    assert found == ["avx512f::_mm512_loadu_ps", "avx512f::_mm512_slli_epi32"]
