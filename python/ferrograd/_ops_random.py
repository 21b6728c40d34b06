"""Range creation, the seeded generator and random sampling.

``arange``/``linspace``/``logspace``/``eye`` build tensors from ranges;
``manual_seed`` seeds the default generator; ``rand``/``randn``/``randint``/
``randperm``/``normal``/``bernoulli``/``multinomial`` sample new tensors, and
the Tensor methods ``uniform_``/``normal_``/``random_``/``bernoulli_``/
``exponential_`` fill tensors in place.
"""

from ._core import (
    Generator,
    Tensor,
    arange,
    default_generator,
    eye,
    get_rng_state,
    initial_seed,
    linspace,
    logspace,
    manual_seed,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
)

__all__ = [
    "Generator",
    "arange",
    "bernoulli",
    "default_generator",
    "eye",
    "get_rng_state",
    "initial_seed",
    "linspace",
    "logspace",
    "manual_seed",
    "multinomial",
    "normal",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "seed",
    "set_rng_state",
]

bernoulli = Tensor.bernoulli
multinomial = Tensor.multinomial
