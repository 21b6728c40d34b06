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
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = [
    "Beta", "Binomial", "Chi2", "Dirichlet", "Gamma", "Poisson", "StudentT",
    "CatTransform", "ContinuousBernoulli", "CorrCholeskyTransform", "CumulativeDistributionTransform",
    "ExpRelaxedCategorical", "ExponentialFamily", "HalfCauchy", "IndependentTransform",
    "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "LowerCholeskyTransform", "MixtureSameFamily",
    "Pareto", "PositiveDefiniteTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "ReshapeTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform", "VonMises",
    "Weibull", "biject_to", "transform_to",
    "AbsTransform", "AffineTransform", "Bernoulli", "Categorical", "Cauchy", "ComposeTransform",
    "Distribution", "ExpTransform", "Exponential", "Geometric", "Gumbel", "HalfNormal", "Independent",
    "Laplace", "LogNormal", "Multinomial", "MultivariateNormal", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "PowerTransform", "SigmoidTransform", "SoftmaxTransform",
    "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "constraints", "identity_transform",
    "kl_divergence", "register_kl", "transforms",
    "FisherSnedecor", "GeneralizedPareto", "InverseGamma", "Kumaraswamy", "LKJCholesky", "LogisticNormal",
    "NegativeBinomial", "Wishart",
]  # fmt: skip
