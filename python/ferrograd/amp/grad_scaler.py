"""Gradient scaling for mixed-precision training: ``GradScaler`` and the two
in-place ops it is built on (``torch.amp.grad_scaler``).

A loss computed in float16 or bfloat16 can have gradients too small to
represent. Multiplying the loss by a large *scale* before ``backward()``
lifts them into range; ``unscale_`` divides them back (recording whether any
came out inf or NaN, in which case the optimizer step is skipped), and
``update`` adapts the scale: it backs off after an overflow and grows after
``growth_interval`` clean steps. The scale lives in a float32 0-dim tensor
and the count of clean steps in an int32 one, both updated in place by
:func:`_amp_update_scale_`; gradients are checked and unscaled by
:func:`_amp_foreach_non_finite_check_and_unscale_`.
"""

from __future__ import annotations

import inspect
import math
import numbers
import struct
import warnings
from collections import abc, defaultdict
from enum import Enum
from typing import TYPE_CHECKING, Any, overload

import ferrograd as _fg

from .._core import Tensor
from ..autograd.grad_mode import no_grad

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..optim.optimizer import Optimizer

__all__ = ["GradScaler", "OptState"]


def _one_element(t: Any, name: str, dtype: Any, kind: str, fn: str) -> Tensor:
    """``t`` checked to be a one-element tensor of ``dtype`` (the state
    tensors the two ops read and write)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}: argument '{name}' must be Tensor, not {type(t).__name__}")
    if t.dtype != dtype:
        raise RuntimeError(f"{fn}: {name} must be a {kind} tensor ({dtype}), got {t.dtype}")
    if t.numel() != 1:
        raise RuntimeError(f"{fn}: {name} must be a 1-element tensor, got shape {list(t.shape)}")
    return t


def _as_float32(x: float) -> float:
    """``x`` rounded to the nearest float32 (an infinity past its range)."""
    try:
        return float(struct.unpack("f", struct.pack("f", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def _amp_foreach_non_finite_check_and_unscale_(self: Any, found_inf: Tensor, inv_scale: Tensor) -> None:
    """Checks gradients for infs and NaNs and multiplies them by ``inv_scale``.

    Every tensor of ``self`` is multiplied in place by ``inv_scale``; if any
    of them held an inf or a NaN before that, ``found_inf`` is set to 1.0
    (otherwise it is left as it was). The scaler's ``unscale_`` calls this.

    Args:
        self (list or tuple of Tensors): the floating tensors (gradients) to
            check and unscale, of any floating dtypes.
        found_inf (Tensor): a one-element float32 tensor, set to 1.0 when a
            non-finite value is found.
        inv_scale (Tensor): a one-element float32 tensor, the factor
            (usually the scale's reciprocal).

    Example:
        >>> grads = [ferrograd.tensor([2.0, 4.0]), ferrograd.tensor([float("inf")])]
        >>> found_inf = ferrograd.zeros(())
        >>> ferrograd._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, ferrograd.tensor(0.5))
        >>> grads[0], found_inf
        (tensor([1., 2.]), tensor(1.))
    """
    fn = "_amp_foreach_non_finite_check_and_unscale_()"
    if not isinstance(self, (list, tuple)):
        raise TypeError(
            f"{fn}: argument 'self' (position 1) must be tuple of Tensors, not {type(self).__name__}"
        )
    for i, grad in enumerate(self):
        if not isinstance(grad, Tensor):
            raise TypeError(
                f"{fn}: expected Tensor as element {i} in argument 0, but got {type(grad).__name__}"
            )
        if not grad.is_floating_point():
            raise NotImplementedError(f"{fn}: not implemented for {grad.dtype} (element {i}); floating only")
    _one_element(found_inf, "found_inf", _fg.float32, "float", fn)
    _one_element(inv_scale, "inv_scale", _fg.float32, "float", fn)
    identity = inv_scale.item() == 1.0
    with no_grad():
        # The check reads each tensor before its multiplication: a finite
        # value that overflows when unscaled is not counted.
        finite = True
        for grad in self:
            finite = finite and bool(grad.isfinite().all())
            if identity:
                continue
            if grad.dtype in (_fg.float16, _fg.bfloat16):
                # the product in float32, rounded once to the 16-bit type
                grad.copy_(grad.float().mul_(inv_scale))
            else:
                grad.mul_(inv_scale)
        if not finite:
            found_inf.fill_(1.0)


def _amp_update_scale_(
    self: Tensor,
    growth_tracker: Tensor,
    found_inf: Tensor,
    scale_growth_factor: float,
    scale_backoff_factor: float,
    growth_interval: int,
) -> Tensor:
    """Updates a loss scale and its count of clean steps in place.

    If ``found_inf`` is nonzero the scale is multiplied by
    ``scale_backoff_factor`` and the count reset to 0. Otherwise the count
    grows by one; when it reaches ``growth_interval`` the scale is
    multiplied by ``scale_growth_factor`` (unless the product would not be
    finite in float32) and the count reset to 0. The products are taken in
    float64 and rounded to float32 once. The scaler's ``update`` calls this.

    Args:
        self (Tensor): the scale, a one-element float32 tensor.
        growth_tracker (Tensor): the count of consecutive clean steps, a
            one-element int32 tensor.
        found_inf (Tensor): a one-element float32 tensor, nonzero when this
            step found infs or NaNs.
        scale_growth_factor (float): the factor of a growth.
        scale_backoff_factor (float): the factor of a back-off.
        growth_interval (int): the clean steps between two growths.

    Returns:
        Tensor: ``self``.

    Example:
        >>> scale, tracker = ferrograd.tensor(1024.0), ferrograd.tensor(1, dtype=ferrograd.int32)
        >>> ferrograd._amp_update_scale_(scale, tracker, ferrograd.zeros(()), 2.0, 0.5, 2)
        tensor(2048.)
        >>> ferrograd._amp_update_scale_(scale, tracker, ferrograd.ones(()), 2.0, 0.5, 2)
        tensor(1024.)
    """
    fn = "_amp_update_scale_()"
    _one_element(self, "current_scale", _fg.float32, "float", fn)
    _one_element(growth_tracker, "growth_tracker", _fg.int32, "int", fn)
    _one_element(found_inf, "found_inf", _fg.float32, "float", fn)
    for pos, name, value in ((4, "scale_growth_factor", scale_growth_factor),
                             (5, "scale_backoff_factor", scale_backoff_factor)):  # fmt: skip
        if not isinstance(value, numbers.Real):
            raise TypeError(
                f"{fn}: argument '{name}' (position {pos}) must be float, not {type(value).__name__}"
            )
    if not isinstance(growth_interval, numbers.Integral):
        raise TypeError(
            f"{fn}: argument 'growth_interval' (position 6) must be int, not {type(growth_interval).__name__}"
        )
    if self.requires_grad:
        raise RuntimeError(
            f"{fn}: a leaf Variable that requires grad is being used in an in-place operation."
        )
    scale = self.item()
    with no_grad():
        if found_inf.item() != 0:  # NaN counts as found
            self.fill_(_as_float32(scale * float(scale_backoff_factor)))
            growth_tracker.fill_(0)
            return self
        # int32 arithmetic, wrapping as the tensor's own type would
        clean = (int(growth_tracker.item()) + 1 + 2**31) % 2**32 - 2**31
        if clean == growth_interval:
            grown = _as_float32(scale * float(scale_growth_factor))
            if math.isfinite(grown):
                self.fill_(grown)
            clean = 0
        growth_tracker.fill_(clean)
    return self


class OptState(Enum):
    """Where an optimizer is in the current iteration, for its scaler."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict[str, Any]:
    # a module-level function (not a lambda), so that a scaler pickles
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _sum_found_inf(found: Iterable[Tensor]) -> Tensor:
    """The sum of the optimizers' ``found_inf`` tensors, as a new tensor."""
    total = _fg.zeros((), dtype=_fg.float32)
    for f in found:
        total += f
    return total


def _device_type(device: Any) -> str:
    """The device type a scaler is made for, as a string."""
    if isinstance(device, _fg.device):
        return str(device.type)
    if not isinstance(device, str):
        raise TypeError(
            f"GradScaler(): device must be a str or ferrograd.device, not {type(device).__name__}"
        )
    return device.split(":")[0]


class GradScaler:
    """Scales losses and unscales gradients so that float16 or bfloat16
    gradients neither underflow nor corrupt the parameters when they
    overflow.

    * ``scaler.scale(loss)`` multiplies the loss by the current scale; call
      ``backward()`` on the result.
    * ``scaler.step(optimizer)`` unscales the optimizer's gradients (unless
      ``unscale_`` already did) and runs ``optimizer.step()`` only if none
      of them is inf or NaN.
    * ``scaler.update()`` multiplies the scale by ``backoff_factor`` if a
      step was skipped, or by ``growth_factor`` after ``growth_interval``
      clean steps in a row.

    ferrograd computes on the CPU, so ``device`` defaults to ``"cpu"``
    (torch's default is ``"cuda"``). ``device="cuda"`` does what a
    CPU-only torch does: it warns that CUDA is not available and disables
    the scaler.

    Args:
        device (str or ferrograd.device): the device type, ``"cpu"``.
        init_scale (float): the initial scale. Default: ``2.0**16``.
        growth_factor (float): the factor of a growth, greater than 1.
            Default: ``2.0``.
        backoff_factor (float): the factor of a back-off, less than 1.
            Default: ``0.5``.
        growth_interval (int): the number of consecutive steps without infs
            or NaNs after which the scale grows. Default: ``2000``.
        enabled (bool): if False, ``scale`` returns its argument, ``step``
            just calls ``optimizer.step()`` and the other methods do nothing.
            Default: ``True``.

    Example:
        >>> model = nn.Linear(3, 1)
        >>> opt = optim.SGD(model.parameters(), lr=0.1)
        >>> scaler = ferrograd.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=1)
        >>> loss = model(ferrograd.ones(2, 3)).sum()
        >>> scaler.scale(loss).backward()
        >>> scaler.step(opt)
        >>> scaler.update()
        >>> scaler.get_scale()
        2048.0
    """

    def __init__(
        self,
        device: str = "cpu",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = _device_type(device)
        self._enabled = enabled
        if self._device == "cuda":
            if enabled:
                warnings.warn(
                    "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                    stacklevel=2,
                )
            self._enabled = False
        elif self._device != "cpu":
            raise RuntimeError(
                f"GradScaler(): ferrograd runs on the CPU only; device {device!r} is not available"
            )
        if not self._enabled:
            return
        if not growth_factor > 1.0:
            raise AssertionError(f"The growth factor must be > 1.0, got {growth_factor}.")
        if not backoff_factor < 1.0:
            raise AssertionError(f"The backoff factor must be < 1.0, got {backoff_factor}.")
        self._init_scale = init_scale
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        # made by the first scale() call
        self._scale: Tensor | None = None
        self._growth_tracker: Tensor | None = None
        self._per_optimizer_states: defaultdict[int, dict[str, Any]] = defaultdict(
            _refresh_per_optimizer_state
        )

    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        if self._scale is None or self._growth_tracker is None:
            raise AssertionError(
                f"Attempted {funcname} but _scale is None.  This may indicate your script did not use "
                "scaler.scale(loss or outputs) earlier in the iteration."
            )
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self) -> Tensor:
        if self._scale is None:
            self._scale = _fg.full((), self._init_scale, dtype=_fg.float32)
            self._growth_tracker = _fg.full((), self._init_growth_tracker, dtype=_fg.int32)
        return self._scale

    @overload
    def scale(self, outputs: Tensor) -> Tensor: ...

    @overload
    def scale(self, outputs: list[Tensor]) -> list[Tensor]: ...

    @overload
    def scale(self, outputs: tuple[Tensor, ...]) -> tuple[Tensor, ...]: ...

    @overload
    def scale(self, outputs: Iterable[Tensor]) -> Iterable[Tensor]: ...

    def scale(self, outputs: Tensor | Iterable[Tensor]) -> Tensor | Iterable[Tensor]:
        """Multiplies a tensor, or each tensor of a nested list, tuple or
        iterable, by the scale. Returns ``outputs`` itself when disabled.

        Lists and tuples come back as lists and tuples (nested ones too);
        other iterables as a lazy ``map``.

        Args:
            outputs (Tensor or iterable of Tensors): the tensors to scale,
                usually the loss.

        Returns:
            The scaled tensor or tensors, in the same structure.

        Example:
            >>> scaler = ferrograd.amp.GradScaler(init_scale=8.0)
            >>> scaler.scale([ferrograd.tensor(1.0), (ferrograd.tensor([2.0]),)])
            [tensor(8.), (tensor([16.]),)]
        """
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._lazy_init_scale_growth_tracker()

        def apply(value: Any) -> Any:
            if isinstance(value, Tensor):
                return value * self._lazy_init_scale_growth_tracker()
            if isinstance(value, abc.Iterable) and not isinstance(value, (str, bytes)):
                scaled = map(apply, value)
                return type(value)(scaled) if isinstance(value, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)  # type: ignore[no-any-return]

    def _unscale_grads_(
        self, optimizer: Optimizer, inv_scale: Tensor, found_inf: Tensor, allow_fp16: bool
    ) -> dict[Any, Tensor]:
        """Unscales the gradients of ``optimizer``'s parameters by
        ``inv_scale`` and records non-finite ones in ``found_inf``; returns
        ``{device: found_inf}`` (empty when no parameter has a gradient)."""
        grads = []
        for group in optimizer.param_groups:
            for param in group["params"]:
                if not isinstance(param, Tensor):
                    raise AssertionError(f"expected param to be a Tensor, got {type(param).__name__}")
                if param.grad is None:
                    continue
                if not allow_fp16 and param.grad.dtype == _fg.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                grads.append(param.grad)
        if not grads:
            return {}
        _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)
        return {found_inf.device: found_inf}

    def unscale_(self, optimizer: Optimizer) -> None:
        """Divides ("unscales") the optimizer's gradients by the scale.

        Optional: ``step`` unscales when this was not called. Call it to
        inspect or change the true gradients between ``backward()`` and
        ``step`` (gradient clipping, for one). At most once per optimizer
        per ``update()``, after all of the iteration's gradients have been
        accumulated; a second call raises RuntimeError. Whether any gradient
        is inf or NaN is recorded for ``step`` and ``update``.

        Args:
            optimizer (ferrograd.optim.Optimizer): the optimizer whose
                parameters' gradients are unscaled.

        Example:
            >>> w = nn.Parameter(ferrograd.tensor([1.0, 2.0]))
            >>> opt = optim.SGD([w], lr=0.1)
            >>> scaler = ferrograd.amp.GradScaler(init_scale=4.0)
            >>> scaler.scale((w * w).sum()).backward()
            >>> w.grad
            tensor([ 8., 16.])
            >>> scaler.unscale_(opt)
            >>> w.grad
            tensor([2., 4.])
        """
        if not self._enabled:
            return
        scale, _ = self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal in float64, rounded once to float32
        inv_scale = _fg.full((), _as_float32(1.0 / scale.item()), dtype=_fg.float32)
        found_inf = _fg.zeros((), dtype=_fg.float32)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer: Optimizer, state: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if any(v.item() for v in state["found_inf_per_device"].values()):
            return None
        return optimizer.step(*args, **kwargs)

    def step(self, optimizer: Optimizer, *args: Any, **kwargs: Any) -> Any:
        """Unscales the optimizer's gradients (unless ``unscale_`` already
        did) and, if none of them is inf or NaN, runs
        ``optimizer.step(*args, **kwargs)``; otherwise the step is skipped
        and the parameters are left alone.

        An optimizer with a true ``_step_supports_amp_scaling`` attribute
        handles scaling itself: its ``step`` is called directly, with
        ``grad_scaler=self`` when it takes that argument (a
        ``FutureWarning``, as in torch), otherwise with the attributes
        ``optimizer.grad_scale`` (the scale tensor) and
        ``optimizer.found_inf`` set for the call. Closures are not
        supported (RuntimeError).

        Args:
            optimizer (ferrograd.optim.Optimizer): the optimizer to step.
            *args: passed to ``optimizer.step``.
            **kwargs: passed to ``optimizer.step``.

        Returns:
            What ``optimizer.step`` returned, or None when the step was
            skipped.

        Example:
            >>> w = nn.Parameter(ferrograd.tensor([1.0]))
            >>> opt = optim.SGD([w], lr=0.5)
            >>> scaler = ferrograd.amp.GradScaler(init_scale=2.0**40)
            >>> scaler.scale(w * 1e30).backward()  # 1e30 * 2**40 overflows float32
            >>> scaler.step(opt)
            >>> w
            Parameter containing:
            tensor([1.], requires_grad=True)
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        scale, _ = self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            return self._step_amp_aware(optimizer, state, scale, args, kwargs)
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def _step_amp_aware(
        self,
        optimizer: Any,
        state: dict[str, Any],
        scale: Tensor,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """``step`` for an optimizer that unscales and skips by itself."""
        passes_scaler = "grad_scaler" in inspect.signature(optimizer.step).parameters
        if passes_scaler:
            warnings.warn(
                "GradScaler is going to stop passing itself as a keyword argument to the passed optimizer. "
                "In the near future GradScaler registers `grad_scale: Tensor` and `found_inf: Tensor` to the "
                "passed optimizer and let the optimizer use them directly.",
                FutureWarning,
                stacklevel=3,
            )
            kwargs["grad_scaler"] = self
        else:
            if state["stage"] is OptState.READY:
                self._check_inf_per_device(optimizer)
            found_inf = _sum_found_inf(state["found_inf_per_device"].values())
            # unscaled already: the gradients need no scale; otherwise the
            # scale multiplies any grad_scale the user set
            if state["stage"] is not OptState.UNSCALED:
                optimizer.grad_scale = scale * getattr(optimizer, "grad_scale", 1)
            else:
                optimizer.grad_scale = getattr(optimizer, "grad_scale", None)
            optimizer.found_inf = found_inf
        result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        if not passes_scaler:
            del optimizer.grad_scale
            del optimizer.found_inf
        return result

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Updates the scale at the end of an iteration, after ``step`` was
        called for every optimizer.

        Without ``new_scale``: the scale is multiplied by ``backoff_factor``
        if any optimizer found infs or NaNs this iteration, and by
        ``growth_factor`` after ``growth_interval`` clean iterations in a row.
        With it, the scale takes that value (a tensor's value is copied, so
        later changes to the tensor do not reach the scaler).

        Args:
            new_scale (float or Tensor, optional): the new scale, a number
                or a one-element float tensor that does not require grad.

        Example:
            >>> scaler = ferrograd.amp.GradScaler()
            >>> _ = scaler.scale(ferrograd.tensor(1.0))
            >>> scaler.update(256.0)
            >>> scaler.get_scale()
            256.0
        """
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            with no_grad():
                if isinstance(new_scale, numbers.Real) and not isinstance(new_scale, bool):
                    scale.fill_(float(new_scale))
                else:
                    reason = (
                        "new_scale should be a float or a 1-element ferrograd.FloatTensor with "
                        "requires_grad=False."
                    )
                    if not isinstance(new_scale, Tensor) or new_scale.numel() != 1 or new_scale.requires_grad:
                        raise AssertionError(reason)
                    scale.copy_(new_scale.reshape(()))
        else:
            states = self._per_optimizer_states.values()
            found = [f for s in states for f in s["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            _amp_update_scale_(
                scale, tracker, _sum_found_inf(found), self._growth_factor, self._backoff_factor,
                self._growth_interval,
            )  # fmt: skip
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self) -> Tensor | None:
        return self._scale

    def get_scale(self) -> float:
        """The current scale as a Python float: the initial scale before the
        first ``scale`` call, and 1.0 when the scaler is disabled.

        Example:
            >>> ferrograd.amp.GradScaler(init_scale=128.0).get_scale()
            128.0
        """
        if not self._enabled:
            return 1.0
        return float(self._init_scale if self._scale is None else self._scale.item())

    def get_growth_factor(self) -> float:
        """The factor the scale grows by."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Sets the factor the scale grows by.

        Args:
            new_factor (float): the new growth factor.
        """
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale backs off by."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Sets the factor the scale backs off by.

        Args:
            new_factor (float): the new back-off factor.
        """
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """The number of clean steps in a row after which the scale grows."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Sets the number of clean steps in a row after which the scale grows.

        Args:
            new_interval (int): the new growth interval.
        """
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return int(self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item())

    def is_enabled(self) -> bool:
        """Whether the scaler is enabled."""
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """The scaler's state: ``"scale"``, ``"growth_factor"``,
        ``"backoff_factor"``, ``"growth_interval"`` and ``"_growth_tracker"``
        (the clean steps in a row); an empty dict when disabled. Take it after
        ``update()`` to checkpoint an iteration's end.

        Example:
            >>> ferrograd.amp.GradScaler(init_scale=4.0, growth_interval=10).state_dict()
            {'scale': 4.0, 'growth_factor': 2.0, 'backoff_factor': 0.5, 'growth_interval': 10,
             '_growth_tracker': 0}
        """
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the state ``state_dict()`` returned; does nothing when
        disabled.

        Args:
            state_dict (dict): a state from ``state_dict()``; an empty one
                (from a disabled scaler) raises RuntimeError.
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled instance of "
                "GradScaler."
            )
        self._init_scale = state_dict["scale"]
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        with no_grad():
            if self._scale is not None:
                self._scale.fill_(state_dict["scale"])
            if self._growth_tracker is not None:
                self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError(
                    "A GradScaler instance may only be pickled at the beginning of an iteration, or at "
                    "the end after scaler.update()."
                )
            # the pickle holds numbers; the tensors are made again lazily
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer: Optimizer) -> dict[Any, Tensor]:
        """Records (without unscaling) whether the optimizer's gradients hold
        infs or NaNs; returns ``{device: found_inf}``."""
        self._check_scale_growth_tracker("_check_inf_per_device")
        one = _fg.ones((), dtype=_fg.float32)
        found_inf = _fg.zeros((), dtype=_fg.float32)
        state = self._per_optimizer_states[id(optimizer)]
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, one, found_inf, True)
        return self._found_inf_per_device(optimizer)

    def _found_inf_per_device(self, optimizer: Optimizer) -> dict[Any, Tensor]:
        found: dict[Any, Tensor] = self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
        return found
