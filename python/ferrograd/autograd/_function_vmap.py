"""``autograd.Function`` under ``vmap``.

With a user ``vmap`` staticmethod, the Function's batching rule is the
user's: it gets the arguments with the innermost level's batch dim in
front (``in_dims`` says which), ``info.batch_size`` and
``info.randomness``, and returns the outputs and where their batch dim is.

With ``generate_vmap_rule = True``, ``forward``, ``setup_context``,
``backward`` (and ``jvp``) run on batched tensors, so their own ops are
batched: a Function on the physical tensors wraps them, and its node in
the graph calls the user's ``backward`` with batched gradients.

This module sits below ``autograd.function`` and ``func._vmap`` and imports
neither: ``Function.apply`` passes the ``Function`` class in, and
``func._vmap`` installs its routing here (``set_routing``) when it is
imported.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, NamedTuple

from .. import _batched as B
from .. import _core
from .._batched import BatchedTensor

Tensor = _core.Tensor


class VmapInfo(NamedTuple):
    """What a Function's ``vmap`` staticmethod learns about the vmap."""

    batch_size: int
    randomness: str


# The routing of ``func._vmap`` (a context manager that counts a running
# vmap and puts the batching dispatchers in place), installed by
# ``func._vmap`` when it is imported. Only Functions applied to batched
# arguments use it, so only inside a vmap, after ``func._vmap`` is imported.
_routing: AbstractContextManager[Any] | None = None


def set_routing(routing: AbstractContextManager[Any]) -> None:
    """Installs the vmap routing that the physical Function of a generated
    rule enters around the user's methods."""
    global _routing
    _routing = routing


def apply_batched(base: Any, cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``cls.apply(*args)`` when an argument is batched. ``base`` is
    ``autograd.Function``: its ``setup_context`` and ``vmap`` are the ones
    a Function must override, and a generated rule's physical Function
    subclasses it."""
    if cls.setup_context is base.setup_context:
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
            "...), it must override the setup_context staticmethod. For more details, please see "
            "https://pytorch.org/docs/main/notes/extending.func.html"
        )
    if getattr(cls, "generate_vmap_rule", False):
        if _user_vmap(base, cls):
            raise RuntimeError(
                f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and an "
                "overridden vmap staticmethod. Please set generate_vmap_rule=False or delete the "
                "overridden vmap staticmethod to avoid ambiguity."
            )
        return _generated(base, cls, args, kwargs)
    if not _user_vmap(base, cls):
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override "
            "and implement the vmap staticmethod or set generate_vmap_rule=True. For more details, "
            "please see https://pytorch.org/docs/main/notes/extending.func.html"
        )
    return _user_rule(cls, args, kwargs)


def _user_vmap(base: Any, cls: Any) -> bool:
    return cls.vmap is not base.vmap


def _user_rule(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    levels, sizes = B.collect(args, kwargs)
    top = levels[-1]
    level = next((lv for lv in B.active_levels() if lv.id == top), None)
    randomness = level.randomness if level is not None else "error"
    in_dims = []
    inner = []
    for a in args:
        if type(a) is BatchedTensor and a._lv[-1] == top:
            in_dims.append(0)
            inner.append(B.wrap(a._p, a._lv[:-1]))
        else:
            in_dims.append(None)
            inner.append(a)
    result = cls.vmap(VmapInfo(sizes[top], randomness), tuple(in_dims), *inner, **kwargs)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(
            f"{cls.__name__}.vmap: expected the vmap staticmethod to return a tuple (output, out_dims) "
            f"of two elements, got {type(result).__name__}"
        )
    out, out_dims = result
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    dims = (out_dims,) * len(outs) if single or not isinstance(out_dims, tuple) else out_dims
    if len(dims) != len(outs):
        raise RuntimeError(
            f"{cls.__name__}.vmap: returned {len(outs)} outputs but out_dims has {len(dims)} entries"
        )
    wrapped = []
    for o, d in zip(outs, dims, strict=True):
        if not isinstance(o, Tensor) or d is None:
            wrapped.append(o)
            continue
        p, lv = (o._p, o._lv) if type(o) is BatchedTensor else (o, ())
        nb = len(lv)
        n = p.dim() - nb
        p = p.movedim(nb + d % n, nb)
        wrapped.append(BatchedTensor(p, lv + (top,)))
    return wrapped[0] if single else tuple(wrapped)


class _Spec:
    """Carried through the physical Function as its first argument."""

    __slots__ = ("levels", "sizes", "single")

    def __init__(self, levels: tuple[int, ...], sizes: dict[int, int]) -> None:
        self.levels = levels
        self.sizes = sizes
        self.single = True


class _CtxProxy:
    """The ``ctx`` the user's methods see: saves and marks the physical
    tensors of batched ones, and hands back batched tensors."""

    def __init__(self, ctx: Any, spec: _Spec) -> None:
        object.__setattr__(self, "_ctx", ctx)
        object.__setattr__(self, "_spec", spec)
        object.__setattr__(self, "_saved_kinds", ())

    def _phys(self, t: Any) -> Any:
        return B.physical(t, self._spec.levels, self._spec.sizes) if isinstance(t, Tensor) else t

    def save_for_backward(self, *tensors: Any) -> None:
        object.__setattr__(self, "_saved_kinds", tuple(type(t) is BatchedTensor for t in tensors))
        self._ctx.save_for_backward(*[t._p if type(t) is BatchedTensor else t for t in tensors])

    def save_for_forward(self, *tensors: Any) -> None:
        self.save_for_backward(*tensors)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        saved = self._ctx.saved_tensors
        return tuple(B.wrap(t, self._spec.levels) if k else t
                     for t, k in zip(saved, self._saved_kinds, strict=True))

    def mark_non_differentiable(self, *tensors: Any) -> None:
        self._ctx.mark_non_differentiable(*[t._p if type(t) is BatchedTensor else t for t in tensors])

    def mark_dirty(self, *tensors: Any) -> None:
        self._ctx.mark_dirty(*[t._p if type(t) is BatchedTensor else t for t in tensors])

    def set_materialize_grads(self, value: bool) -> None:
        self._ctx.set_materialize_grads(value)

    @property
    def needs_input_grad(self) -> tuple[bool, ...]:
        return tuple(self._ctx.needs_input_grad[1:])


_PHYSICAL: dict[Any, Any] = {}


def _physical_function(base: Any, cls: Any) -> Any:
    phys = _PHYSICAL.get(cls)
    if phys is not None:
        return phys
    if _routing is None:
        raise RuntimeError(
            f"{cls.__name__}.apply: no vmap routing is installed (ferrograd.func._vmap is not imported)")
    routing = _routing

    def wrap_all(spec: _Spec, xs: Any) -> list[Any]:
        return [B.wrap(x, spec.levels) if isinstance(x, Tensor) else x for x in xs]

    def unwrap_all(spec: _Spec, xs: Any) -> list[Any]:
        return [B.physical(x, spec.levels, spec.sizes) if isinstance(x, Tensor) else x for x in xs]

    class Physical(base):  # type: ignore[misc]
        @staticmethod
        def forward(spec: _Spec, *args: Any) -> Any:
            with routing:
                out = cls.forward(*wrap_all(spec, args))
            spec.single = not isinstance(out, tuple)
            outs = unwrap_all(spec, (out,) if spec.single else out)
            return outs[0] if spec.single else tuple(outs)

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            spec = inputs[0]
            proxy = _CtxProxy(ctx, spec)
            ctx._vmap_ctx = proxy
            outs = wrap_all(spec, (output,) if spec.single else output)
            with routing:
                result = outs[0] if spec.single else tuple(outs)
                cls.setup_context(proxy, tuple(wrap_all(spec, inputs[1:])), result)

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            proxy = ctx._vmap_ctx
            spec = proxy._spec
            with routing:
                res = cls.backward(proxy, *wrap_all(spec, grads))
            res = res if isinstance(res, tuple) else (res,)
            return (None, *unwrap_all(spec, res))

        @staticmethod
        def jvp(ctx: Any, *tangents: Any) -> Any:
            proxy = ctx._vmap_ctx
            spec = proxy._spec
            with routing:
                res = cls.jvp(proxy, *wrap_all(spec, tangents[1:]))
            outs = unwrap_all(spec, res if isinstance(res, tuple) else (res,))
            return outs[0] if spec.single else tuple(outs)

    Physical.__name__ = Physical.__qualname__ = cls.__name__
    _PHYSICAL[cls] = Physical
    return Physical


def _generated(base: Any, cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if kwargs:
        raise RuntimeError(f"{cls.__name__}.apply: keyword arguments are not supported under vmap")
    levels, sizes = B.collect(args, {})
    spec = _Spec(levels, sizes)
    phys_args = [B.physical(a, levels, sizes) if isinstance(a, Tensor) else a for a in args]
    out = _physical_function(base, cls).apply(spec, *phys_args)
    if isinstance(out, tuple):
        return tuple(B.wrap(o, levels) for o in out)
    return B.wrap(out, levels)
