"""The von Mises distribution: a circular normal on angles."""

from __future__ import annotations

import math

import ferrograd

from . import constraints
from .distribution import _AtLoc
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Note [von Mises rejection loop]: every round draws the full (3, *shape)
# block of uniforms, as torch does, so that a seeded program reproduces
# torch's samples; an element accepted again in a later round takes the
# later value (each round is independent of the current values, so this
# leaves the distribution unchanged). Elements whose proposal is not finite
# (concentration NaN, 0 or infinite, reachable only without validation)
# could never be accepted: they return NaN instead of looping forever, and
# a bound on the rounds (the acceptance rate is above 0.65 for every
# concentration) turns anything else unforeseen into an error, not a hang.
_MAX_ROUNDS = 10_000


def _log_bessel_i0(x):
    """``log I_0(x)`` for ``x > 0``, through the scaled ``i0e`` (no overflow)."""
    return ferrograd.special.i0e(x).log() + x


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best and Fisher's (1979) wrapped-Cauchy envelope sampler, in the dtype
    of ``loc``; see Note [von Mises rejection loop]."""
    x = ferrograd.zeros(shape, dtype=loc.dtype)
    proposal_r = proposal_r.expand(shape)
    hopeless = ~proposal_r.isfinite()
    x = ferrograd.where(hopeless, math.nan, x)
    done = hopeless
    rounds = 0
    while not bool(done.all()):
        rounds += 1
        if rounds > _MAX_ROUNDS:
            raise RuntimeError(f"VonMises.sample: no acceptance after {_MAX_ROUNDS} rounds")
        u1, u2, u3 = ferrograd.rand((3,) + tuple(shape), dtype=loc.dtype).unbind()
        z = ferrograd.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        accept = accept & ~hopeless
        if bool(accept.any()):
            x = ferrograd.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(_AtLoc):
    """The von Mises distribution on the circle, with density
    ``exp(concentration * cos(x - loc)) / (2 pi I_0(concentration))``.

    ``loc`` and the values may be any real numbers (convenient for
    unconstrained optimisation); they are read as angles modulo ``2 pi``.
    Samples lie in ``[-pi, pi)``; they are drawn by Best and Fisher's
    rejection sampler, in float64 whatever the parameters' dtype (in single
    precision the loop stalls for small concentrations), then cast back.

    Args:
        loc (float or Tensor): the mean angle, in radians.
        concentration (float or Tensor): the concentration ``kappa``,
            positive (``1 / kappa`` plays the role of a variance).
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import VonMises
        >>> VonMises(0.0, 1.0).log_prob(ferrograd.tensor(0.0))
        tensor(-1.0738)
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, _instance, {"loc": (), "concentration": ()})

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            self.concentration * ferrograd.cos(value - self.loc)
            - math.log(2 * math.pi)
            - _log_bessel_i0(self.concentration)
        )

    @lazy_property
    def _proposal_r(self):
        """The envelope's parameter ``r = (1 + rho^2) / (2 rho)``, in float64
        (``1 / kappa + kappa`` to first order below ``kappa = 1e-5``, where
        the exact form loses all precision)."""
        kappa = self.concentration.detach().to(ferrograd.float64)
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        exact = (1 + rho**2) / (2 * rho)
        return ferrograd.where(kappa < 1e-5, 1 / kappa + kappa, exact)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with ferrograd.no_grad():
            loc = self.loc.to(ferrograd.float64)
            concentration = self.concentration.to(ferrograd.float64)
            samples = _rejection_sample(loc, concentration, self._proposal_r, shape)
        return samples.to(self.loc.dtype)

    @property
    def variance(self):
        """Tensor: the circular variance ``1 - I_1(kappa) / I_0(kappa)``."""
        kappa = self.concentration
        return 1 - ferrograd.special.i1e(kappa) / ferrograd.special.i0e(kappa)
