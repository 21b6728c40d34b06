"""``DataParallel``: single-process data parallelism, as torch has it on a
machine without accelerators.

torch's ``DataParallel`` splits each batch across the GPUs of one process.
ferrograd runs on the CPU only, and there torch's wrapper reduces to a
pass-through: it holds the module as its ``module`` submodule, keeps
``device_ids`` empty, and its forward calls the module. ferrograd does the
same, so code written for ``nn.DataParallel`` (and checkpoints whose keys
carry its ``module.`` prefix) runs unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Wraps ``module`` for data parallelism across devices; on the CPU,
    the only device ferrograd has, it calls ``module`` directly.

    As torch does on a machine without GPUs, ``device_ids``,
    ``output_device`` and ``dim`` are accepted and not checked;
    ``device_ids`` ends up an empty list, and ``output_device`` and ``dim``
    are not stored (reading them raises ``AttributeError``, as in torch).
    The wrapped module is the submodule ``module``, so ``state_dict`` keys
    gain the prefix ``module.``.

    Args:
        module (Module): the module to wrap.
        device_ids (sequence of int or device, optional): the devices to
            split the batch across. Ignored on the CPU.
        output_device (int or device, optional): the device to gather the
            outputs on. Ignored on the CPU.
        dim (int): the dimension the batch is split along. Default: ``0``.
            Ignored on the CPU.

    Example:
        >>> model = nn.DataParallel(nn.Linear(3, 2))
        >>> list(model.state_dict())
        ['module.weight', 'module.bias']
        >>> model.device_ids
        []
        >>> model(ferrograd.ones(4, 3)).shape
        ferrograd.Size([4, 2])
    """

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
    ) -> None:
        super().__init__()
        # With no accelerator torch records only the module and an empty
        # device list; the other arguments are dropped unexamined.
        self.module = module
        self.device_ids: list[Any] = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Calls the wrapped module with the same arguments (its hooks run)."""
        return self.module(*inputs, **kwargs)
