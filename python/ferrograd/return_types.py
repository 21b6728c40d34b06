"""Named tuples returned by reductions, like ``torch.return_types``.

``t.max(dim)`` returns ``max(values, indices)``: a tuple subclass whose
fields are also attributes, so both ``v, i = t.max(0)`` and
``t.max(0).indices`` work.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Self

__all__ = [
    "aminmax", "linalg_cholesky_ex", "linalg_eig", "linalg_eigh", "linalg_inv_ex", "linalg_ldl_factor",
    "linalg_ldl_factor_ex", "linalg_lstsq", "linalg_lu", "linalg_lu_factor", "linalg_lu_factor_ex",
    "linalg_qr", "linalg_slogdet", "linalg_solve_ex", "linalg_svd", "lu_unpack", "max", "min", "qr", "frexp",
    "mode", "cummax", "cummin", "histogram", "histogramdd",
    "kthvalue", "median", "nanmedian", "slogdet", "sort", "svd", "topk", "triangular_solve",
]  # fmt: skip


class _StructSeq(tuple):
    """A fixed-length tuple with named fields (built from one sequence)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __new__(cls, sequence: Iterable[Any] = ()) -> Self:
        items = tuple(sequence)
        if len(items) != len(cls._fields):
            raise TypeError(
                f"{cls.__module__}.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                f"({len(items)}-sequence given)"
            )
        return super().__new__(cls, items)

    def __repr__(self) -> str:
        body = ",\n".join(f"{n}={v!r}" for n, v in zip(self._fields, self, strict=True))
        return f"{self.__module__}.{type(self).__name__}(\n{body})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (tuple(self),))


def _make(name: str, fields: tuple[str, ...]) -> type:
    doc = f"The named tuple ``({', '.join(fields)})`` returned by ``{name}``."
    namespace = {"__slots__": (), "_fields": fields, "__module__": __name__, "__doc__": doc}
    for i, field in enumerate(fields):
        namespace[field] = property(lambda self, i=i: self[i], doc=f"Alias for field {i}.")
    return type(name, (_StructSeq,), namespace)


max = _make("max", ("values", "indices"))  # noqa: A001
min = _make("min", ("values", "indices"))  # noqa: A001
aminmax = _make("aminmax", ("min", "max"))
sort = _make("sort", ("values", "indices"))
topk = _make("topk", ("values", "indices"))
frexp = _make("frexp", ("mantissa", "exponent"))
mode = _make("mode", ("values", "indices"))
cummax = _make("cummax", ("values", "indices"))
cummin = _make("cummin", ("values", "indices"))
histogram = _make("histogram", ("hist", "bin_edges"))
histogramdd = _make("histogramdd", ("hist", "bin_edges"))
kthvalue = _make("kthvalue", ("values", "indices"))
median = _make("median", ("values", "indices"))
nanmedian = _make("nanmedian", ("values", "indices"))
linalg_cholesky_ex = _make("linalg_cholesky_ex", ("L", "info"))
linalg_qr = _make("linalg_qr", ("Q", "R"))
linalg_eigh = _make("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_ldl_factor = _make("linalg_ldl_factor", ("LD", "pivots"))
linalg_ldl_factor_ex = _make("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
linalg_eig = _make("linalg_eig", ("eigenvalues", "eigenvectors"))
linalg_lstsq = _make("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
linalg_svd = _make("linalg_svd", ("U", "S", "Vh"))
linalg_slogdet = _make("linalg_slogdet", ("sign", "logabsdet"))
slogdet = _make("slogdet", ("sign", "logabsdet"))
qr = _make("qr", ("Q", "R"))
svd = _make("svd", ("U", "S", "V"))
linalg_lu_factor = _make("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex = _make("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_lu = _make("linalg_lu", ("P", "L", "U"))
lu_unpack = _make("lu_unpack", ("P", "L", "U"))
_lu_with_info = _make("_lu_with_info", ("LU", "pivots", "info"))
linalg_solve_ex = _make("linalg_solve_ex", ("result", "info"))
linalg_inv_ex = _make("linalg_inv_ex", ("inverse", "info"))
triangular_solve = _make("triangular_solve", ("solution", "cloned_coefficient"))
