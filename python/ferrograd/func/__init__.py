"""``ferrograd.func``: composable function transforms, as ``torch.func``.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``,
``jacfwd`` and ``hessian`` take functions of tensors (or of nested tuples,
lists and dicts of tensors) and return functions or values; every
transform composes with every other in any order and nesting
(``grad(grad(f))``, ``jacrev(jacfwd(f))``, ``jvp`` of ``grad``...).
``functional_call`` runs an ``nn.Module`` with given parameters, and
``stack_module_state`` stacks the parameters of several modules. See
docs/func.md.
"""

from .._batched import reset_vmap_fallbacks, set_vmap_fallback_warning_enabled, vmap_fallbacks
from ._functional_call import functional_call, stack_module_state
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._vmap import vmap

__all__ = [
    "functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
    "linearize", "reset_vmap_fallbacks", "set_vmap_fallback_warning_enabled", "stack_module_state",
    "vjp", "vmap", "vmap_fallbacks",
]
