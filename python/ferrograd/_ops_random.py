"""Range creation, the seeded generator and random sampling.

``arange``/``linspace``/``logspace``/``eye`` build tensors from ranges;
``manual_seed`` seeds the default generator; ``rand``/``randn``/``randint``/
``randperm``/``normal``/``bernoulli``/``multinomial``/``poisson``/``binomial``
sample new tensors, and
the Tensor methods ``uniform_``/``normal_``/``random_``/``bernoulli_``/
``exponential_`` fill tensors in place.
"""

from ._core import (
    Generator,
    Tensor,
    arange,
    binomial,
    default_generator,
    eye,
    get_rng_state,
    initial_seed,
    linspace,
    logspace,
    manual_seed,
    normal,
    poisson,
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
    "binomial",
    "default_generator",
    "eye",
    "get_rng_state",
    "initial_seed",
    "linspace",
    "logspace",
    "manual_seed",
    "multinomial",
    "normal",
    "poisson",
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

# Module-level docs of the functions above that are Tensor methods (applied
# when ``ferrograd`` routes them; the methods keep their own docs).
DOCS: dict[str, str] = {
    "bernoulli": """bernoulli(input, p=None, *, generator=None, out=None) -> Tensor

    Draws 0 or 1 for each element: element ``i`` of the result is 1 with
    probability ``input[i]`` (or ``p``, when given), else 0.

    The result has the shape and dtype of ``input``, whose values must lie
    in ``[0, 1]``.

    Args:
        input (Tensor): the probabilities (floating point).
        p (float, optional): a probability used for every element instead
            of the values of ``input``.

    Keyword args:
        generator (Generator, optional): the generator to draw from.
            Default: the default generator.
        out (Tensor, optional): a tensor of the result's shape to write into.

    Example:
        >>> ferrograd.bernoulli(ferrograd.tensor([0.0, 0.5, 1.0]))
        tensor([0., 0., 1.])
    """,
    "multinomial": """multinomial(input, num_samples, replacement=False, *, generator=None, out=None)

    Draws ``num_samples`` category indices from the distribution whose
    (unnormalised, non-negative) weights are the values of ``input``.

    A 1-D input gives a vector of indices; for a 2-D input each row is a
    distribution and gives one row of indices. Without replacement, each
    category is drawn at most once, so ``num_samples`` cannot exceed the
    number of categories of non-zero weight.

    Args:
        input (Tensor): the weights, 1-D or 2-D.
        num_samples (int): how many indices to draw per distribution.
        replacement (bool): whether a category can be drawn more than once.
            Default: False.

    Keyword args:
        generator (Generator, optional): the generator to draw from.
            Default: the default generator.
        out (Tensor, optional): a tensor of the result's shape to write into.

    Returns:
        LongTensor: the drawn indices.

    Example:
        >>> weights = ferrograd.tensor([0.0, 1.0, 3.0])
        >>> ferrograd.multinomial(weights, 4, replacement=True)
        tensor([2, 2, 2, 2])
        >>> ferrograd.multinomial(weights, 2)
        tensor([2, 1])
    """,
}
