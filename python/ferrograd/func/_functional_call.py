"""``functional_call`` (run a module with given parameters and buffers)
and ``stack_module_state`` (the parameters of several same-shaped modules,
stacked for ensembling)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from .. import _core

__all__ = ["functional_call", "stack_module_state"]

Tensor = _core.Tensor
_MISSING = object()


def _owner(module: Any, key: str) -> tuple[Any, str]:
    """The submodule holding dotted name ``key`` and the last component."""
    *path, leaf = key.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


def _registry_of(module: Any, name: str) -> dict[str, Any] | None:
    for reg in ("_parameters", "_buffers"):
        d = module.__dict__.get(reg)
        if d is not None and name in d:
            return d
    return None


def _state_slots(module: Any) -> dict[str, tuple[dict[str, Any], str, Any]]:
    """Every parameter and buffer name (tied and shared names included, as
    ``named_modules(remove_duplicate=False)`` reaches them) to the registry
    dict holding it, its name there and its tensor."""
    slots: dict[str, tuple[dict[str, Any], str, Any]] = {}
    _collect_slots(module, "", slots)
    return slots


def _collect_slots(mod: Any, prefix: str, slots: dict[str, tuple[dict[str, Any], str, Any]]) -> None:
    d = mod.__dict__
    for reg in ("_parameters", "_buffers"):
        r = d.get(reg)
        if r:
            for name, t in r.items():
                if t is not None:
                    slots[prefix + name] = (r, name, t)
    children = d.get("_modules")
    if children:
        for name, child in children.items():
            if child is not None:
                _collect_slots(child, f"{prefix}{name}.", slots)


def _merge(parameter_and_buffer_dicts: Any) -> dict[str, Any]:
    if isinstance(parameter_and_buffer_dicts, dict):
        return dict(parameter_and_buffer_dicts)
    if not isinstance(parameter_and_buffer_dicts, (tuple, list)):
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
            f"{type(parameter_and_buffer_dicts)}"
        )
    merged: dict[str, Any] = {}
    for d in parameter_and_buffer_dicts:
        repeated = [k for k in d if k in merged]
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous"
            )
        merged.update(d)
    return merged


_R = TypeVar("_R")


def functional_call(module: Callable[..., _R], parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> _R:
    """Calls ``module(*args, **kwargs)`` with some of its parameters and
    buffers replaced by the given tensors, for the duration of the call.

    The names are dotted, as ``state_dict`` gives them. The module is
    restored afterwards, also when the call raises. This turns a module
    into a function of its parameters, for :func:`grad`, :func:`vmap`
    (model ensembles with :func:`stack_module_state`) and the other
    transforms.

    For a tensor parametrized with :mod:`ferrograd.nn.utils.parametrize`,
    the key ``<name>`` is assigned as ``module.<name> = value`` is, through
    the parametrization's ``right_inverse`` (as in torch); the key
    ``parametrizations.<name>.original`` replaces the stored tensor, which
    the parametrization then maps (and gradients reach the given tensor).

    Args:
        module (nn.Module): the module to call.
        parameter_and_buffer_dicts (dict or tuple of dicts): maps names to
            the tensors to use; several dicts must not repeat a name.
        args (Any or tuple, optional): the positional arguments (a single
            non-tuple value is one argument). Default: ``None`` (none).
        kwargs (dict, optional): the keyword arguments. Default: ``None``.

    Keyword args:
        tie_weights (bool): a name that shares its tensor with a given one
            (tied weights) uses the given tensor too. Default: ``True``.
        strict (bool): require exactly the module's parameter and buffer
            names. Default: ``False``.

    Returns:
        what ``module`` returns.

    Example:
        >>> lin = nn.Linear(2, 1)
        >>> params = {"weight": ferrograd.tensor([[1.0, 2.0]]), "bias": ferrograd.tensor([0.5])}
        >>> functional_call(lin, params, (ferrograd.tensor([[1.0, 1.0]]),))
        tensor([[3.5000]])
    """
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, _merge(parameter_and_buffer_dicts), tie_weights, strict):
        return module(*args, **(kwargs or {}))


@contextlib.contextmanager
def _reparametrize_module(module: Any, given: dict[str, Any], tie_weights: bool = False,
                          strict: bool = False) -> Iterator[None]:
    """Puts the tensors of ``given`` (dotted names) in place of the module's
    for the duration of the block, as :func:`functional_call` describes;
    restores the module on exit, also when the block raises."""
    slots = _state_slots(module)
    values = dict(given)
    if tie_weights:
        by_id: dict[int, list[str]] = {}
        for name, slot in slots.items():
            by_id.setdefault(id(slot[2]), []).append(name)
        for name in given:
            if name not in slots:
                continue
            aliases = by_id[id(slots[name][2])]
            if len(aliases) == 1:
                continue
            for alias in aliases:
                if alias in given and given[alias] is not given[name]:
                    raise ValueError(
                        f"functional_call got multiple values for keys {sorted([name, alias])}, "
                        "which are tied. Consider using tie_weights=False"
                    )
                values.setdefault(alias, given[name])
    if strict:
        missing = [k for k in slots if k not in values]
        unexpected = [k for k in given if k not in slots]
        if missing or unexpected:
            lines = []
            if unexpected:
                lines.append("\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(
                f"Error(s) in reparametrizing for {type(module).__name__}:\n" + "\n".join(lines)
            )
    # Each entry undoes one swap: (dict, name, old value) or, for a
    # parametrized tensor (a property), (owner, name, old value) to assign.
    restore: list[tuple[Any, str, Any, bool]] = []
    try:
        for key, value in values.items():
            found = slots.get(key)
            if found is not None:
                reg, name = found[0], found[1]
                restore.append((reg, name, reg[name], False))
                reg[name] = value
                continue
            owner, name = _owner(module, key)
            owner_reg = _registry_of(owner, name)
            if owner_reg is not None:
                restore.append((owner_reg, name, owner_reg[name], False))
                owner_reg[name] = value
            elif isinstance(getattr(type(owner), name, None), property):
                # As torch: assigning goes through the parametrization's
                # right_inverse, and so does the restore.
                restore.append((owner, name, getattr(owner, name), True))
                setattr(owner, name, value)
            else:
                restore.append((owner.__dict__, name, owner.__dict__.get(name, _MISSING), False))
                owner.__dict__[name] = value
        yield
    finally:
        for where, name, old, assign in reversed(restore):
            if assign:
                setattr(where, name, old)
            elif old is _MISSING:
                del where[name]
            else:
                where[name] = old


def stack_module_state(models: Sequence[Any]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """Stacks the parameters and buffers of several modules of the same
    structure along a new leading dim, for running an ensemble with
    :func:`vmap` and :func:`functional_call`.

    Stacked parameters are new leaves that require grad when the originals
    do (they do not share memory with the modules).

    Args:
        models (sequence of nn.Module): modules of the same class, all in
            training or all in eval mode.

    Returns:
        tuple: ``(params, buffers)``, two dicts from dotted names to the
            stacked tensors.

    Example:
        >>> models = [nn.Linear(2, 1) for _ in range(3)]
        >>> params, buffers = stack_module_state(models)
        >>> {name: tuple(p.shape) for name, p in params.items()}
        {'weight': (3, 1, 2), 'bias': (3, 1)}
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    per_model = [dict(m.named_parameters()) for m in models]
    params = {}
    for name in per_model[0]:
        ts = [p[name] for p in per_model]
        needs = {t.requires_grad for t in ts}
        if len(needs) != 1:
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        params[name] = _core.stack([t.detach() for t in ts]).requires_grad_(needs.pop())
    per_model_b = [dict(m.named_buffers()) for m in models]
    buffers = {name: _core.stack([b[name].detach() for b in per_model_b]) for name in per_model_b[0]}
    return params, buffers
