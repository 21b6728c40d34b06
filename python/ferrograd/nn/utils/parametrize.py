"""``ferrograd.nn.utils.parametrize``: a parameter or buffer of a module
computed on access from one or more stored tensors.

``register_parametrization(module, "weight", f)`` moves the tensor to
``module.parametrizations.weight.original`` and makes ``module.weight`` a
property that returns ``f(original)``. The module's class becomes a
subclass made for it (``ParametrizedLinear`` for a ``Linear``) that holds
the property; removing the last parametrization restores the class.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Sequence
from typing import Any

import ferrograd
from ferrograd._core import Tensor

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "transfer_parametrizations_and_params",
    "type_before_parametrizations",
]

# Note [Parametrization cache]: inside ``cached()`` the first access to a
# parametrized tensor stores its value under (id(module), name); later
# accesses return it. The count lets ``cached()`` nest; the cache is
# emptied when the outermost one exits.
_cache_depth = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    r"""Context manager under which each parametrized tensor is computed
    once, on its first access, and reused until the outermost ``cached()``
    exits.

    Useful when a parametrized weight is read several times in one forward
    pass (a recurrent layer's step loop) or when an expensive
    parametrization feeds several outputs.

    Example:
        >>> class Double(nn.Module):
        ...     def forward(self, X):
        ...         return 2 * X
        >>> m = nn.Linear(2, 2)
        >>> _ = register_parametrization(m, "weight", Double())
        >>> with cached():
        ...     m.weight is m.weight
        True
        >>> m.weight is m.weight
        False
    """
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if _cache_depth == 0:
            _cache.clear()


def _register_parameter_or_buffer(module: Module, name: str, t: Tensor) -> None:
    if isinstance(t, Parameter):
        module.register_parameter(name, t)
    else:
        module.register_buffer(name, t)


def _set_in_place(target: Tensor, value: Tensor) -> None:
    """Makes ``target`` (a parameter or buffer the optimizer may already
    hold) show ``value``: the object stays, its data becomes ``value``'s."""
    if value is not target:
        with ferrograd.no_grad():
            target.set_(value)


def _check_same_dtype_and_shape(got: Any, want: Tensor, got_label: str, want_label: str, action: str) -> None:
    """Raises ``ValueError`` unless ``got`` is a tensor of ``want``'s dtype
    and shape; the message names the two tensors (``got_label`` and
    ``want_label``) and what was being done (``action``)."""
    if not isinstance(got, Tensor):
        raise ValueError(f"{action}: {got_label} must be a tensor. Got {type(got).__name__}.")
    for attr in ("dtype", "shape"):
        if getattr(got, attr) != getattr(want, attr):
            raise ValueError(
                f"{action} may not change the {attr} of the tensor, unless the `unsafe` flag is enabled.\n"
                f"{want_label} {attr}: {getattr(want, attr)}\n{got_label} {attr}: {getattr(got, attr)}"
            )


class ParametrizationList(ModuleList):
    r"""The parametrizations of one tensor of a module, applied in order,
    with the stored tensor(s) they start from.

    ``register_parametrization`` builds it; it lives at
    ``module.parametrizations[tensor_name]``. The stored tensor is
    ``original``, or ``original0``, ``original1``, ... when the first
    parametrization's ``right_inverse`` returns a sequence of tensors.

    Args:
        modules (sequence of nn.Module): the parametrizations, at least one.
        original (Parameter or Tensor): the tensor being parametrized. When
            ``right_inverse`` returns one tensor, ``original`` keeps its
            identity and takes the new value in place.
        unsafe (bool): skip the checks that the parametrization keeps the
            dtype and shape. Default: ``False``.

    Example:
        >>> class Double(nn.Module):
        ...     def forward(self, X):
        ...         return 2 * X
        >>> m = register_parametrization(nn.Linear(3, 2), "weight", Double())
        >>> m.parametrizations.weight
        ParametrizationList(
          (0): Double()
        )
    """

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        # Run right_inverse from the last parametrization to the first;
        # one that has none (or raises NotImplementedError) is the identity.
        with ferrograd.no_grad():
            new: Any = original
            for module in reversed(list(self)):
                inverse = getattr(module, "right_inverse", None)
                if inverse is None:
                    continue
                with contextlib.suppress(NotImplementedError):
                    new = inverse(new)
        if isinstance(new, Tensor):
            self.is_tensor, self.ntensors = True, 1
            if new.dtype != original.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}"
                )
            _set_in_place(original, new)
            _register_parameter_or_buffer(self, "original", original)
        elif isinstance(new, Sequence):
            self.is_tensor, self.ntensors = False, len(new)
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                        f"Got element {i} of the sequence with type {type(part).__name__}."
                    )
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        else:
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        if not self.unsafe:
            # The tensor the module shows must keep its dtype and shape.
            _check_same_dtype_and_shape(
                self(), original, "parametrized", "unparametrized", "Registering a parametrization"
            )

    def _originals(self) -> list[Tensor]:
        if self.is_tensor:
            return [self.original]
        return [getattr(self, f"original{i}") for i in range(self.ntensors)]

    def right_inverse(self, value: Tensor) -> None:
        r"""Sets the stored tensor(s) so that the parametrized tensor becomes
        ``value``: runs each parametrization's ``right_inverse``, last to
        first, and writes the result into ``original`` (or ``original0``,
        ...) in place.

        Args:
            value (Tensor): the value the parametrized tensor should take.

        Raises:
            RuntimeError: a parametrization has no ``right_inverse``.
            ValueError: the result does not match the stored tensors.
        """
        with ferrograd.no_grad():
            for module in reversed(list(self)):
                inverse = getattr(module, "right_inverse", None)
                if inverse is None:
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = inverse(value)
            parts: Any = [value] if self.is_tensor else value
            if self.is_tensor and not isinstance(value, Tensor):
                raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
            if not self.is_tensor and not isinstance(value, Sequence):
                raise ValueError(
                    f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}."
                )
            if len(parts) != self.ntensors:
                raise ValueError(
                    f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                    f"Got a sequence of length {len(parts)}."
                )
            for i, (target, part) in enumerate(zip(self._originals(), parts, strict=True)):
                if not isinstance(part, Tensor):
                    raise ValueError(
                        f"`right_inverse` must return a sequence of tensors. Got element {i} of type "
                        f"{type(part).__name__}"
                    )
                if part.dtype != target.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {part.dtype} while the "
                        f"stored tensor it replaces has dtype {target.dtype}"
                    )
                _set_in_place(target, part)

    def forward(self) -> Tensor:
        r"""The parametrized tensor: the first parametrization applied to
        the stored tensor(s), then each following one to the result."""
        x: Tensor = self[0](*self._originals())
        for module in list(self)[1:]:
            x = module(x)
        return x


def _parametrized_class(cls: type) -> type:
    """The subclass of ``cls`` a parametrized module gets; it holds the
    properties of the parametrized tensors."""

    def __getstate__(self: Module) -> Any:
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict(): save "
            "module.state_dict() and load it into a module parametrized the same way."
        )

    def __deepcopy__(self: Module, memo: dict[int, Any]) -> Module:
        done: Module | None = memo.get(id(self))
        if done is not None:
            return done
        replica = self.__new__(type(self))
        memo[id(self)] = replica
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        return replica

    namespace: dict[str, Any] = {"__getstate__": __getstate__, "__module__": __name__}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = __deepcopy__
    return type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _add_property(module: Module, tensor_name: str) -> None:
    """Makes ``tensor_name`` a property of the module's (parametrized)
    class: reading evaluates ``module.parametrizations[tensor_name]``,
    assigning calls its ``right_inverse``."""

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _cache_depth == 0:
            result: Tensor = parametrization()
            return result
        key = (id(self), tensor_name)
        value = _cache.get(key)
        if value is None:
            value = _cache[key] = parametrization()
        return value

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(type(module), tensor_name, property(get_parametrized, set_original))


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    r"""Makes ``module.<tensor_name>`` the output of ``parametrization``
    applied to a stored tensor.

    The parameter or buffer moves to
    ``module.parametrizations.<tensor_name>.original`` (the same object, so
    an optimizer that holds it keeps working) and ``module.<tensor_name>``
    becomes ``parametrization(original)``, recomputed on each access
    (once under :func:`cached`); gradients flow to ``original``. The
    state dict holds ``parametrizations.<tensor_name>.original``.

    If ``parametrization`` has a method ``right_inverse``, the stored tensor
    starts as ``right_inverse`` of the current value (so that the
    parametrized tensor starts at that value when ``right_inverse`` is a
    true right inverse), and every assignment ``module.<tensor_name> =
    value`` stores ``right_inverse(value)``. It may return a
    sequence of tensors: they are stored as ``original0``, ``original1``,
    ... and ``parametrization.forward`` takes them as its arguments.
    Without ``right_inverse`` the value is stored as it is, and assignment
    raises ``RuntimeError``.

    Registering again on the same name appends ``parametrization`` to the
    list: they are applied in order of registration.

    Args:
        module (nn.Module): the module whose tensor is parametrized.
        tensor_name (str): the name of a parameter, buffer or already
            parametrized tensor of ``module``.
        parametrization (nn.Module): computes the tensor from the stored
            one(s).

    Keyword args:
        unsafe (bool): allow the parametrization to change the tensor's
            dtype or shape (the consistency checks are skipped).
            Default: ``False``.

    Returns:
        ``module``.

    Raises:
        ValueError: ``module`` has no tensor ``tensor_name``, or the
            parametrization changes its dtype or shape without ``unsafe``.

    Example:
        >>> class Symmetric(nn.Module):
        ...     def forward(self, X):
        ...         return X.triu() + X.triu(1).mT
        >>> m = register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
        >>> ferrograd.equal(m.weight, m.weight.T)
        True
        >>> type(m).__name__, list(m.state_dict())
        ('ParametrizedLinear', ['bias', 'parametrizations.weight.original'])
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            Y = getattr(module, tensor_name)
            X = parametrization(Y)
            here = f"module.{tensor_name}"
            action = "Registering a parametrization"
            _check_same_dtype_and_shape(X, Y, f"parametrization({here})", here, action)
            inverse = getattr(parametrization, "right_inverse", None)
            if inverse is not None:
                try:
                    Z = inverse(X)
                except NotImplementedError:
                    pass
                else:
                    _check_same_dtype_and_shape(
                        Z, Y, f"parametrization.right_inverse({here})", here, "parametrization.right_inverse"
                    )
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            module.__class__ = _parametrized_class(type(module))
            module.parametrizations = ModuleDict()
        _add_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with name "
            f"'{tensor_name}'"
        )
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    r"""Whether ``module`` has a parametrized tensor (``tensor_name`` or,
    when ``None``, any).

    Args:
        module (nn.Module): the module to look at.
        tensor_name (str, optional): the tensor to ask about.
            Default: ``None`` (any tensor).

    Example:
        >>> m = nn.Linear(2, 2)
        >>> is_parametrized(m)
        False
    """
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    r"""Removes the parametrizations of ``module.<tensor_name>``, leaving a
    plain parameter (or buffer) under that name.

    With ``leave_parametrized=True`` the tensor keeps its current
    (parametrized) value; otherwise it gets back the stored ``original``.
    Either way the stored object is reused when it is a single tensor, so
    optimizers holding it stay valid. When no parametrization is left the
    module gets back its class.

    Args:
        module (nn.Module): the parametrized module.
        tensor_name (str): the parametrized tensor.
        leave_parametrized (bool): keep the parametrized value rather than
            ``original``. Default: ``True``.

    Returns:
        ``module``.

    Raises:
        ValueError: ``tensor_name`` is not parametrized, or
            ``leave_parametrized=False`` with several stored tensors.

    Example:
        >>> class Double(nn.Module):
        ...     def forward(self, X):
        ...         return 2 * X
        >>> m = register_parametrization(nn.Linear(2, 2), "weight", Double())
        >>> w = m.weight
        >>> m = remove_parametrizations(m, "weight")
        >>> type(m).__name__, ferrograd.equal(m.weight, w), type(m.weight).__name__
        ('Linear', True, 'Parameter')
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with ferrograd.no_grad():
                value = getattr(module, tensor_name)
            _set_in_place(original, value)
    elif leave_parametrized:
        # The result is a parameter if any stored tensor asks for gradients.
        value = getattr(module, tensor_name)
        original = Parameter(value.detach(), value.requires_grad) if value.requires_grad else value
    else:
        raise ValueError(
            "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in "
            "terms of a sequence of tensors."
        )
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    r"""The class ``module`` had before any parametrization was registered
    (its class when it has none).

    Args:
        module (nn.Module): the module.

    Example:
        >>> class Double(nn.Module):
        ...     def forward(self, X):
        ...         return 2 * X
        >>> m = register_parametrization(nn.Linear(2, 2), "weight", Double())
        >>> type(m).__name__, type_before_parametrizations(m).__name__
        ('ParametrizedLinear', 'Linear')
    """
    if is_parametrized(module):
        return type(module).__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    r"""Registers on ``to_module`` the parametrizations of ``from_module``
    (those of ``tensor_name``, or all), sharing their stored tensors.

    A parametrized tensor that ``to_module`` lacks is first created as a
    parameter holding ``from_module``'s current value. The parametrization
    modules themselves are shared, not copied.

    Args:
        from_module (nn.Module): the module to take the parametrizations from.
        to_module (nn.Module): the module to register them on.
        tensor_name (str, optional): the one tensor to transfer.
            Default: ``None`` (all parametrized tensors).

    Returns:
        ``to_module``.

    Example:
        >>> class Double(nn.Module):
        ...     def forward(self, X):
        ...         return 2 * X
        >>> a = register_parametrization(nn.Linear(2, 2), "weight", Double())
        >>> b = transfer_parametrizations_and_params(a, nn.Linear(2, 2))
        >>> b.parametrizations.weight.original is a.parametrizations.weight.original
        True
    """
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        stored = ["original"] if source.is_tensor else [f"original{i}" for i in range(source.ntensors)]
        for attr in stored:
            setattr(target, attr, getattr(source, attr))
    return to_module
