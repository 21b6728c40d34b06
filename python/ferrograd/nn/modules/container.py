"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``,
``ParameterList`` and ``ParameterDict``, as in torch.nn."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain, islice
from typing import Any

from ferrograd._core import Tensor

from ..parameter import Parameter
from .module import Module, _addindent

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


def _without_digits(keys: list[str]) -> list[str]:
    return [k for k in keys if not k.isdigit()]


def _renumber(modules: dict[str, Any]) -> dict[str, Any]:
    # Keys stay "0", "1", ... after a deletion, as in torch.
    return {str(i): m for i, m in enumerate(modules.values())}


class Sequential(Module):
    r"""Runs its modules in order, each on the previous one's output.

    Built from modules as arguments (named ``"0"``, ``"1"``, ...) or from an
    ``OrderedDict`` of named modules. Indexing with a slice returns a
    ``Sequential``.

    Args:
        *args (Module or OrderedDict): the modules in order, or one ``OrderedDict`` of named modules.

    Example:
        >>> net = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
        >>> net(ferrograd.ones(4, 3)).shape
        ferrograd.Size([4, 2])
        >>> len(net), type(net[0:1]).__name__
        (2, 'Sequential')
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator: Iterable[Any], idx: int) -> Any:
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        idx %= size
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        key = self._get_item_by_idx(self._modules.keys(), idx)
        setattr(self, key, module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))
        self._modules = _renumber(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                f"add operator supports only objects of Sequential class, but {str(type(other))} is given."
            )
        ret = Sequential()
        for layer in chain(self, other):
            ret.append(layer)
        return ret

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                f"add operator supports only objects of Sequential class, but {str(type(other))} is given."
            )
        for layer in list(other):
            self.append(layer)
        return self

    def __mul__(self, other: int) -> Sequential:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        ret = Sequential()
        for _ in range(other):
            for layer in self:
                ret.append(layer)
        return ret

    __rmul__ = __mul__

    def __imul__(self, other: int) -> Sequential:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        layers = list(self)
        for _ in range(other - 1):
            for layer in layers:
                self.append(layer)
        return self

    def __dir__(self) -> list[str]:
        return _without_digits(super().__dir__())

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        r"""Adds ``module`` at the end; returns ``self``."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        r"""Inserts ``module`` before position ``index``; returns ``self``."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        r"""Appends every module of ``sequential``; returns ``self``."""
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key: int | slice) -> Any:
        r"""Removes and returns the module (or ``Sequential``) at ``key``."""
        v = self[key]
        del self[key]
        return v

    # Typed for the usual pipeline of tensors, so that `model(x)` is a Tensor;
    # a Sequential passing other values through runs the same.
    def forward(self, input: Tensor) -> Tensor:
        """Calls each module in order on the previous one's output and returns the last output."""
        for module in self:
            input = module(input)
        return input


def _abs_string_index(self: Module, idx: int) -> str:
    """The key of position ``idx`` (negative counts from the end) in the list
    container ``self``."""
    idx = operator.index(idx)
    if not (-len(self) <= idx < len(self)):  # type: ignore[arg-type]
        raise IndexError(f"index {idx} is out of range")
    if idx < 0:
        idx += len(self)  # type: ignore[arg-type]
    return str(idx)


class ModuleList(Module):
    r"""Holds submodules in a list, registered under ``"0"``, ``"1"``, ...

    Args:
        modules (iterable of Modules, optional): the initial modules.

    Example:
        >>> blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        >>> _ = blocks.append(nn.ReLU())
        >>> len(blocks), len(list(blocks.parameters()))
        (4, 6)
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    _get_abs_string_index = _abs_string_index

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        self._modules = _renumber(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        # Runs of equal reprs print once: "(0-2): 3 x Block(...)".
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs: list[list[Any]] = []
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = []
        for start, end, r in runs:
            if start == end:
                local = f"({start}): {r}"
            else:
                local = f"({start}-{end}): {end - start + 1} x {r}"
            lines.append(_addindent(local, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self) -> list[str]:
        return _without_digits(super().__dir__())

    def insert(self, index: int, module: Module) -> None:
        r"""Inserts ``module`` before position ``index``."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> ModuleList:
        r"""Adds ``module`` at the end; returns ``self``."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int | slice) -> Any:
        r"""Removes and returns the module at ``key``."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        r"""Appends every module of ``modules``; returns ``self``."""
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got " + type(modules).__name__
            )
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    r"""Holds submodules in a dict, in insertion order.

    Args:
        modules (mapping or iterable of (str, Module) pairs, optional): the initial modules.

    Example:
        >>> heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Linear(2, 3)})
        >>> list(heads.keys()), heads["b"].out_features
        (['a', 'b'], 3)
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        r"""Removes every item."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        r"""Removes ``key`` and returns its module."""
        v = self[key]
        del self[key]
        return v

    def keys(self) -> Iterable[str]:
        r"""The keys."""
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        r"""The ``(key, module)`` pairs."""
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        r"""The modules."""
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        r"""Adds the items of a mapping, or of an iterable of ``(key, module)`` pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value pairs, but got "
                + type(modules).__name__
            )
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
        else:
            _update_from_pairs(self, "ModuleDict", modules)


def _update_from_pairs(target: Any, name: str, pairs: Iterable[Any]) -> None:
    """``target[key] = value`` for each ``(key, value)`` element of ``pairs``, as
    ``update`` does with a sequence; ``name`` (the dict's class) begins the error
    raised for an element that is not an iterable of length 2."""
    for j, pair in enumerate(pairs):
        element = f"{name} update sequence element #{j}"
        if not isinstance(pair, Iterable):
            raise TypeError(f"{element} should be Iterable; is{type(pair).__name__}")
        if not len(pair) == 2:  # type: ignore[arg-type]
            raise ValueError(f"{element} has length {len(pair)}; 2 is required")  # type: ignore[arg-type]
        target[pair[0]] = pair[1]  # type: ignore[index]


def _param_line(k: Any, p: Any, dtype_text: str) -> str:
    if isinstance(p, Tensor):
        size_str = "x".join(str(s) for s in p.size())
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        return f"  ({k}): {kind} containing: [{dtype_text} of size {size_str}]"
    return f"  ({k}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    r"""Holds parameters in a list; a plain tensor put in becomes a
    :class:`~ferrograd.nn.Parameter`.

    Args:
        values (iterable, optional): the initial parameters (or tensors).

    Example:
        >>> ps = nn.ParameterList([nn.Parameter(ferrograd.zeros(2)), ferrograd.ones(3)])
        >>> [type(p).__name__ for p in ps]
        ['Parameter', 'Parameter']
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    _get_abs_string_index = _abs_string_index

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        key = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, key, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return _without_digits(super().__dir__())

    def append(self, value: Any) -> ParameterList:
        r"""Adds ``value`` at the end; returns ``self``."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        r"""Appends every value of ``values``; returns ``self``."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got " + type(values).__name__
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        """One line per parameter: its index, type, shape and dtype."""
        return "\n".join(
            _param_line(k, p, str(p.dtype) if isinstance(p, Tensor) else "") for k, p in enumerate(self)
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    r"""Holds parameters in a dict, in insertion order (a plain ``dict``
    given to the constructor or :meth:`update` is added in sorted key order,
    as in torch); a plain tensor put in becomes a
    :class:`~ferrograd.nn.Parameter`.

    Args:
        parameters (mapping or iterable of pairs, optional): the initial parameters.

    Example:
        >>> pd = nn.ParameterDict({"b": ferrograd.zeros(1), "a": ferrograd.ones(2)})
        >>> list(pd.keys())
        ['a', 'b']
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key_to_attr(key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is "
                f"not a string (type is '{type(key).__name__}'). Open an issue on "
                "github if you need non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        attr = self._key_to_attr(key)
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        r"""A shallow copy (the same parameter objects)."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        r"""``self[key]``, first setting it to ``default`` if missing."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        r"""Removes every item."""
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str) -> Any:
        r"""Removes ``key`` and returns its value."""
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        r"""Removes and returns the last inserted ``(key, value)`` pair."""
        k, _ = self._keys.popitem()
        self._keys[k] = None  # ``del self[k]`` removes it again
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any = None) -> Any:
        r"""``self[key]`` if present, else ``default``."""
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        r"""A new ParameterDict with ``keys``, each set to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Iterable[str]:
        r"""The keys."""
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        r"""The ``(key, value)`` pairs."""
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        r"""The values."""
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        r"""Adds the items of a mapping, or of an iterable of ``(key, value)`` pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of key/value pairs, but got "
                + type(parameters).__name__
            )
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            _update_from_pairs(self, "ParameterDict", parameters)

    def extra_repr(self) -> str:
        """One line per parameter: its key, type and shape."""
        return "\n".join(
            _param_line(k, p, p.type() if isinstance(p, Tensor) else "") for k, p in self.items()
        )

    def __call__(self, input: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
