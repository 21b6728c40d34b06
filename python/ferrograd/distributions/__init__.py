"""Probability distributions with sampling, densities and KL divergences,
after ``torch.distributions``.

Each distribution has a ``batch_shape`` and an ``event_shape``; ``sample``
draws without gradients, ``rsample`` (where ``has_rsample``) draws through
the reparameterization trick so that gradients flow to the parameters, and
``log_prob`` is differentiable in both the value and the parameters.

Example:
    >>> from ferrograd.distributions import Normal
    >>> loc = ferrograd.tensor(0.5, requires_grad=True)
    >>> Normal(loc, 1.0).log_prob(ferrograd.tensor(1.5)).backward()
    >>> loc.grad
    tensor(1.)
"""

from __future__ import annotations

from . import constraints as constraints
from . import transforms as transforms
from .bernoulli import Bernoulli
from .categorical import Categorical
from .cauchy import Cauchy
from .distribution import Distribution
from .exponential import Exponential
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Categorical", "Cauchy", "ComposeTransform",
    "Distribution", "ExpTransform", "Exponential", "Geometric", "Gumbel", "HalfNormal", "Independent",
    "Laplace", "LogNormal", "Multinomial", "MultivariateNormal", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "PowerTransform", "SigmoidTransform", "SoftmaxTransform",
    "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "constraints", "identity_transform",
    "kl_divergence", "register_kl", "transforms",
]  # fmt: skip
