"""``ferrograd.nn.utils.prune``: zeroing parts of a module's parameters
through a mask.

Pruning ``module.weight`` moves the parameter to ``weight_orig``, adds a
buffer ``weight_mask`` of the parameter's dtype and shape (1 keeps an
entry, 0 prunes it) and sets ``module.weight = weight_orig * weight_mask``,
recomputed by a forward pre-hook before each call. Pruning the same tensor
again combines the masks (a :class:`PruningContainer`); :func:`remove`
makes the pruned value a plain parameter again.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any

import ferrograd
from ferrograd._core import Tensor

from ..modules.module import Module
from ._pre_hooks import pop_hook
from .convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured", "PruningContainer",
    "RandomStructured", "RandomUnstructured", "custom_from_mask", "global_unstructured", "identity",
    "is_pruned", "l1_unstructured", "ln_structured", "random_structured", "random_unstructured", "remove",
]  # fmt: skip


def _check_shape(scores: Tensor, like: Tensor, what: str) -> None:
    if scores.shape != like.shape:
        raise AssertionError(
            f"importance_scores should have the same shape as {what}, got {scores.shape} vs {like.shape}"
        )


class BasePruningMethod(ABC):
    r"""The base class of pruning methods.

    A subclass sets ``PRUNING_TYPE`` (``"unstructured"``, ``"structured"``
    with an attribute ``dim``, or ``"global"``) and implements
    :meth:`compute_mask`. An instance registered by :meth:`apply` is the
    module's forward pre-hook for the tensor ``_tensor_name``.
    """

    PRUNING_TYPE: str
    _tensor_name: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        r"""The mask for ``t`` (same shape): ``default_mask`` with the
        entries this method prunes set to 0.

        Args:
            t (Tensor): the tensor to prune (or the importance scores).
            default_mask (Tensor): the mask from earlier pruning (ones when
                there was none).
        """

    def apply_mask(self, module: Module) -> Tensor:
        r"""``<name>_orig * <name>_mask`` of ``module`` (differentiable with
        respect to ``<name>_orig``).

        Args:
            module (nn.Module): a module this method pruned.
        """
        name = getattr(self, "_tensor_name", None)
        if name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask: Tensor = getattr(module, name + "_mask")
        orig: Tensor = getattr(module, name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(
        cls, module: Module, name: str, *args: Any, importance_scores: Tensor | None = None, **kwargs: Any
    ) -> BasePruningMethod:
        r"""Prunes ``module.<name>`` with ``cls(*args, **kwargs)`` and
        registers the pruning; returns the method now attached to the
        tensor (a :class:`PruningContainer` when it was already pruned).

        Args:
            module (nn.Module): the module.
            name (str): its parameter to prune.
            *args: the arguments of ``cls``.
            importance_scores (Tensor, optional): the scores the mask is
                computed from, of the parameter's shape. Default: ``None``
                (the parameter itself).
            **kwargs: the keyword arguments of ``cls``.
        """
        new = cls(*args, **kwargs)
        new._tensor_name = name
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        _check_shape(importance_scores, orig, f"parameter {name} of {module}")
        hooks = module._forward_pre_hooks
        keys = [k for k, h in hooks.items() if isinstance(h, BasePruningMethod) and h._tensor_name == name]
        if len(keys) > 1:
            raise AssertionError(
                f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                "Use a PruningContainer."
            )
        old = hooks.pop(keys[0]) if keys else None
        method: BasePruningMethod = new
        if isinstance(old, PruningContainer):
            old.add_pruning_method(new)
            method = old
        elif old is not None:
            method = PruningContainer(old)
            method.add_pruning_method(new)
        if old is None:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ferrograd.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            # Leave the module as it was.
            if old is None:
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            else:
                if isinstance(method, PruningContainer) and method is old:
                    method._pruning_methods = method._pruning_methods[:-1]
                module.register_forward_pre_hook(old)
            raise
        return method

    def prune(
        self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None
    ) -> Tensor:
        r"""``t`` with this method's mask applied (``t * mask``).

        Args:
            t (Tensor): the tensor to prune.
            default_mask (Tensor, optional): the mask from earlier pruning.
                Default: ``None`` (all ones).
            importance_scores (Tensor, optional): the scores the mask is
                computed from, of ``t``'s shape. Default: ``None`` (``t``).
        """
        if importance_scores is None:
            importance_scores = t
        _check_shape(importance_scores, t, "tensor t")
        if default_mask is None:
            default_mask = ferrograd.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        r"""Makes ``module.<name>`` a plain parameter again, holding the
        pruned value (the object that was ``<name>_orig``), and drops
        ``<name>_orig`` and ``<name>_mask``. The hook is unregistered by
        :func:`remove`, not here.

        Args:
            module (nn.Module): a module this method pruned.
        """
        name = getattr(self, "_tensor_name", None)
        if name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters.pop(name + "_orig")
        orig.data = weight.detach()
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _mask_slice(method: BasePruningMethod, t: Tensor, mask: Tensor) -> Any:
    """The part of ``t`` that ``method`` prunes when it follows ``mask``:
    the entries still kept (``"unstructured"``), the channels along
    ``method.dim`` not yet all zero (``"structured"``), or all of it
    (``"global"``)."""
    kind = method.PRUNING_TYPE
    if kind == "unstructured":
        return mask == 1
    if kind == "structured":
        if not hasattr(method, "dim"):
            raise AttributeError(
                'Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` defined.'
            )
        n_dims = t.dim()
        dim = method.dim + n_dims if method.dim < 0 else method.dim
        if dim < 0:
            raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
        others = [d for d in range(n_dims) if d != dim]
        keep = mask.sum(dim=others) != 0 if others else mask != 0
        index: list[Any] = [slice(None)] * n_dims
        index[dim] = keep
        return tuple(index)
    if kind == "global":
        return (slice(None),) * t.dim()
    raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")


class PruningContainer(BasePruningMethod):
    r"""The pruning methods applied in turn to one tensor.

    Each new method prunes only what the earlier ones kept: the entries
    still unpruned (unstructured methods) or the channels not yet all zero
    (structured methods).

    Args:
        *args (BasePruningMethod): the methods, all acting on the same
            tensor name.
    """

    _pruning_methods: tuple[BasePruningMethod, ...]

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods = ()
        if args:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        r"""Appends ``method`` (which must act on the container's tensor).

        Args:
            method (BasePruningMethod): the method to add.
        """
        if method is None:
            return
        if not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if getattr(self, "_tensor_name", None) != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{getattr(self, '_tensor_name', None)}' to PruningContainer {self}. "
                f"Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[BasePruningMethod]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        r"""``default_mask`` further pruned by the last method, which sees
        only the part of ``t`` that ``default_mask`` leaves to it.

        Args:
            t (Tensor): the tensor to prune (or the importance scores).
            default_mask (Tensor): the mask of the earlier methods.
        """
        method = self._pruning_methods[-1]
        part = _mask_slice(method, t, default_mask)
        new_mask = default_mask.to(dtype=t.dtype).clone()
        partial = method.compute_mask(t[part], default_mask=default_mask[part])
        new_mask[part] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    r"""Prunes nothing: the mask is all ones (useful to give a module the
    ``<name>_orig``/``<name>_mask`` layout).

    Example:
        >>> m = nn.utils.prune.identity(nn.Linear(2, 2), "weight")
        >>> m.weight_mask
        tensor([[1., 1.],
                [1., 1.]])
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        r"""Registers an identity pruning of ``module.<name>``.

        Args:
            module (nn.Module): the module.
            name (str): its parameter.
        """
        return super().apply(module, name)


def _check_amount(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer"
        )


def _count_to_prune(amount: int | float, size: int) -> int:
    """How many of ``size`` units ``amount`` prunes: an int is a count
    (``ValueError`` above ``size``), a float a fraction (rounded)."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(
                f"amount={amount} should be smaller than the number of parameters to prune={size}"
            )
        return int(amount)
    return round(amount * size)


def _unstructured_mask(scores: Tensor, default_mask: Tensor, n_prune: int) -> Tensor:
    """``default_mask`` with 0 at the ``n_prune`` smallest ``scores``."""
    flat = default_mask.reshape(-1).clone()
    if n_prune:
        flat[ferrograd.topk(scores.reshape(-1), k=n_prune, largest=False).indices] = 0
    return flat.view(default_mask.shape)


def _channels_mask(t: Tensor, dim: int, channels: Tensor, default_mask: Tensor) -> Tensor:
    """Ones on the ``channels`` (indices or a boolean mask) along ``dim``,
    zeros elsewhere, times ``default_mask``."""
    mask = ferrograd.zeros_like(t)
    index: list[Any] = [slice(None)] * t.dim()
    index[dim] = channels
    mask[tuple(index)] = 1
    return mask * default_mask.to(dtype=mask.dtype)


def _structured_counts(t: Tensor, dim: int, amount: int | float) -> tuple[int, int]:
    """The number of channels along ``dim`` of ``t`` and how many of them
    ``amount`` prunes."""
    channels = _check_structured(t, dim)
    return channels, _count_to_prune(amount, channels)


def _check_structured(t: Tensor, dim: int) -> int:
    """The number of channels along ``dim`` of ``t``, which must have 2 or
    more dims."""
    if t.dim() <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
            f"{t.shape} with {t.dim()} dims"
        )
    if not -t.dim() <= dim < t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
    return t.shape[dim]


class _ByAmount(BasePruningMethod):
    """A method that prunes ``amount`` units (entries or channels): a
    count, or a fraction of them; checked on construction."""

    def __init__(self, amount: int | float) -> None:
        _check_amount(amount)
        self.amount = amount


class RandomUnstructured(_ByAmount):
    r"""Prunes ``amount`` entries chosen uniformly at random.

    Args:
        amount (int or float): how many entries to prune: a count, or a
            fraction in ``[0, 1]`` of the entries (rounded).
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        n_prune = _count_to_prune(self.amount, t.numel())
        # The entries with the largest random scores go.
        return _unstructured_mask(-ferrograd.rand_like(t) if n_prune else t, default_mask, n_prune)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float) -> BasePruningMethod:  # type: ignore[override]
        r"""Prunes ``module.<name>`` at random.

        Args:
            module (nn.Module): the module.
            name (str): its parameter.
            amount (int or float): a count or a fraction of the entries.
        """
        return super().apply(module, name, amount=amount)


class L1Unstructured(_ByAmount):
    r"""Prunes the ``amount`` entries of smallest absolute value.

    Args:
        amount (int or float): how many entries to prune: a count, or a
            fraction in ``[0, 1]`` of the entries (rounded).
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _unstructured_mask(t.abs(), default_mask, _count_to_prune(self.amount, t.numel()))

    @classmethod
    def apply(  # type: ignore[override]
        cls, module: Module, name: str, amount: int | float, importance_scores: Tensor | None = None
    ) -> BasePruningMethod:
        r"""Prunes the smallest entries of ``module.<name>`` (or of
        ``importance_scores``).

        Args:
            module (nn.Module): the module.
            name (str): its parameter.
            amount (int or float): a count or a fraction of the entries.
            importance_scores (Tensor, optional): scores of the parameter's
                shape to rank by. Default: ``None`` (the parameter).
        """
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(_ByAmount):
    r"""Prunes ``amount`` whole channels along ``dim``, chosen at random.

    Args:
        amount (int or float): how many channels to prune: a count, or a
            fraction in ``[0, 1]`` of the channels (rounded).
        dim (int): the channel dim. Default: ``-1``.
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        super().__init__(amount)
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        channels, n_prune = _structured_counts(t, self.dim, self.amount)
        if n_prune == 0:
            return default_mask.clone()
        # Keep the channels above the n_prune-th smallest of random scores.
        scores = ferrograd.rand(channels)
        threshold = ferrograd.kthvalue(scores, k=n_prune).values
        return _channels_mask(t, self.dim, scores > threshold, default_mask)

    @classmethod
    def apply(  # type: ignore[override]
        cls, module: Module, name: str, amount: int | float, dim: int = -1
    ) -> BasePruningMethod:
        r"""Prunes random channels of ``module.<name>``.

        Args:
            module (nn.Module): the module.
            name (str): its parameter.
            amount (int or float): a count or a fraction of the channels.
            dim (int): the channel dim. Default: ``-1``.
        """
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_ByAmount):
    r"""Prunes the ``amount`` channels along ``dim`` of smallest ``n``-norm.

    Args:
        amount (int or float): how many channels to prune: a count, or a
            fraction in ``[0, 1]`` of the channels (rounded).
        n (int, float, inf, -inf, 'fro' or 'nuc'): the norm, as the ``p``
            of :func:`ferrograd.norm`.
        dim (int): the channel dim. Default: ``-1``.
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        super().__init__(amount)
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        channels, n_prune = _structured_counts(t, self.dim, self.amount)
        if n_prune == 0:
            return default_mask.clone()
        dim = self.dim % t.dim()
        norms = ferrograd.norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        keep = ferrograd.topk(norms, k=channels - n_prune, largest=True).indices
        return _channels_mask(t, dim, keep, default_mask)

    @classmethod
    def apply(  # type: ignore[override]
        cls,
        module: Module,
        name: str,
        amount: int | float,
        n: Any,
        dim: int,
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:
        r"""Prunes the channels of ``module.<name>`` (or of
        ``importance_scores``) of smallest ``n``-norm.

        Args:
            module (nn.Module): the module.
            name (str): its parameter.
            amount (int or float): a count or a fraction of the channels.
            n (int, float, inf, -inf, 'fro' or 'nuc'): the norm.
            dim (int): the channel dim.
            importance_scores (Tensor, optional): scores of the parameter's
                shape to rank by. Default: ``None`` (the parameter).
        """
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    r"""Prunes where a given mask is 0.

    Args:
        mask (Tensor): 1 to keep an entry, 0 to prune it; of the pruned
            tensor's shape.
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"the mask's shape {self.mask.shape} differs from the tensor's {default_mask.shape}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor) -> BasePruningMethod:  # type: ignore[override]
        r"""Prunes ``module.<name>`` where ``mask`` is 0.

        Args:
            module (nn.Module): the module.
            name (str): its parameter.
            mask (Tensor): the mask.
        """
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    r"""Gives ``module.<name>`` the pruned layout (``<name>_orig``, buffer
    ``<name>_mask`` of ones, forward pre-hook) without pruning anything.

    Args:
        module (nn.Module): the module.
        name (str): its parameter.

    Returns:
        ``module``.
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    r"""Prunes ``amount`` entries of ``module.<name>`` chosen at random.

    Args:
        module (nn.Module): the module.
        name (str): its parameter.
        amount (int or float): a count, or a fraction in ``[0, 1]`` of the
            entries (rounded).

    Returns:
        ``module``.

    Example:
        >>> m = nn.utils.prune.random_unstructured(nn.Linear(4, 3), "weight", amount=0.25)
        >>> int(m.weight_mask.sum())
        9
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(
    module: Module, name: str, amount: int | float, importance_scores: Tensor | None = None
) -> Module:
    r"""Prunes the ``amount`` entries of ``module.<name>`` of smallest
    absolute value (of ``importance_scores`` when given).

    Args:
        module (nn.Module): the module.
        name (str): its parameter.
        amount (int or float): a count, or a fraction in ``[0, 1]`` of the
            entries (rounded).
        importance_scores (Tensor, optional): scores of the parameter's
            shape to rank by. Default: ``None`` (the parameter).

    Returns:
        ``module``.

    Example:
        >>> m = nn.Linear(3, 1, bias=False)
        >>> m.weight.data = ferrograd.tensor([[0.5, -0.1, 2.0]])
        >>> m = nn.utils.prune.l1_unstructured(m, "weight", amount=1)
        >>> m.weight
        tensor([[0.5000, -0.0000, 2.0000]], grad_fn=<MulBackward0>)
        >>> sorted(m.state_dict())
        ['weight_mask', 'weight_orig']
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    r"""Prunes ``amount`` whole channels of ``module.<name>`` along ``dim``,
    chosen at random.

    Args:
        module (nn.Module): the module.
        name (str): its parameter (2 or more dims).
        amount (int or float): a count, or a fraction in ``[0, 1]`` of the
            channels (rounded).
        dim (int): the channel dim.

    Returns:
        ``module``.
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(
    module: Module, name: str, amount: int | float, n: Any, dim: int, importance_scores: Tensor | None = None
) -> Module:
    r"""Prunes the ``amount`` channels of ``module.<name>`` along ``dim``
    of smallest ``n``-norm (of ``importance_scores`` when given).

    Args:
        module (nn.Module): the module.
        name (str): its parameter (2 or more dims).
        amount (int or float): a count, or a fraction in ``[0, 1]`` of the
            channels (rounded).
        n (int, float, inf, -inf, 'fro' or 'nuc'): the norm.
        dim (int): the channel dim.
        importance_scores (Tensor, optional): scores of the parameter's
            shape to rank by. Default: ``None`` (the parameter).

    Returns:
        nn.Module: ``module``, with ``<name>_orig`` and ``<name>_mask`` in place of ``<name>``.

    Example:
        >>> m = nn.Linear(2, 3, bias=False)
        >>> with ferrograd.no_grad():
        ...     _ = m.weight.copy_(ferrograd.tensor([[1.0, 1.0], [0.1, 0.0], [3.0, 0.0]]))
        >>> nn.utils.prune.ln_structured(m, "weight", amount=1, n=2, dim=0).weight_mask
        tensor([[1., 1.],
                [0., 0.],
                [1., 1.]])
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(
    parameters: Iterable[tuple[Module, str]],
    pruning_method: type[BasePruningMethod],
    importance_scores: dict[tuple[Module, str], Tensor] | None = None,
    **kwargs: Any,
) -> None:
    r"""Prunes several parameters together, as if they were one vector:
    ``amount`` (in ``kwargs``) counts over all of them, so that parameters
    with smaller entries lose more.

    Each parameter ends up pruned by a :class:`CustomFromMask` holding its
    part of the global mask.

    Args:
        parameters (iterable of (nn.Module, str)): the parameters.
        pruning_method (type): an unstructured pruning method class, such
            as :class:`L1Unstructured`.
        importance_scores (dict, optional): maps ``(module, name)`` to
            scores of that parameter's shape. Default: ``None`` (the
            parameters' values).
        **kwargs: the arguments of ``pruning_method`` (``amount=...``).

    Raises:
        TypeError: ``parameters`` is not iterable, ``importance_scores`` is
            not a dict, or the method is not unstructured.

    Example:
        >>> a, b = nn.Linear(2, 1, bias=False), nn.Linear(2, 1, bias=False)
        >>> with ferrograd.no_grad():
        ...     _ = a.weight.copy_(ferrograd.tensor([[0.1, 0.2]]))
        ...     _ = b.weight.copy_(ferrograd.tensor([[3.0, 0.3]]))
        >>> nn.utils.prune.global_unstructured(
        ...     [(a, "weight"), (b, "weight")], nn.utils.prune.L1Unstructured, amount=2)
        >>> a.weight_mask, b.weight_mask
        (tensor([[0., 0.]]), tensor([[1., 1.]]))
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
            f"{pruning_method} of type {method.PRUNING_TYPE}"
        )
    scores = parameters_to_vector(
        [importance_scores.get((module, name), getattr(module, name)) for module, name in parameters]
    )
    masks = [getattr(module, name + "_mask", None) for module, name in parameters]
    default_mask = parameters_to_vector(
        [
            ferrograd.ones_like(getattr(module, name)) if mask is None else mask
            for mask, (module, name) in zip(masks, parameters, strict=True)
        ]
    )
    container = PruningContainer()
    container._tensor_name = "temp"
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final_mask[start : start + param.numel()].view_as(param))
        start += param.numel()


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    r"""Prunes ``module.<name>`` where ``mask`` is 0.

    Args:
        module (nn.Module): the module.
        name (str): its parameter.
        mask (Tensor): 1 to keep an entry, 0 to prune it; of the
            parameter's shape.

    Returns:
        ``module``.

    Example:
        >>> m = nn.utils.prune.custom_from_mask(nn.Linear(2, 2), "bias", ferrograd.tensor([1.0, 0.0]))
        >>> m.bias_mask, bool(m.bias[1] == 0)
        (tensor([1., 0.]), True)
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    r"""Makes the pruning of ``module.<name>`` permanent: the parameter
    holds the pruned values, and ``<name>_orig``, ``<name>_mask`` and the
    hook go away.

    Args:
        module (nn.Module): the module.
        name (str): the pruned parameter.

    Returns:
        ``module``.

    Raises:
        ValueError: ``module.<name>`` is not pruned.

    Example:
        >>> m = nn.utils.prune.l1_unstructured(nn.Linear(3, 2), "weight", amount=2)
        >>> m = nn.utils.prune.remove(m, "weight")
        >>> sorted(m.state_dict()), int((m.weight == 0).sum())
        (['bias', 'weight'], 2)
    """
    missing = f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    pop_hook(module, BasePruningMethod, name, missing, attr="_tensor_name").remove(module)
    return module


def is_pruned(module: Module) -> bool:
    r"""Whether ``module`` or one of its submodules has a pruned tensor.

    Args:
        module (nn.Module): the module.

    Example:
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
        >>> _ = nn.utils.prune.identity(net[1], "weight")
        >>> nn.utils.prune.is_pruned(net), nn.utils.prune.is_pruned(net[0])
        (True, False)
    """
    return any(
        isinstance(hook, BasePruningMethod)
        for sub in module.modules()
        for hook in sub._forward_pre_hooks.values()
    )
