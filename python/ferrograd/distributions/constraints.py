"""Constraints: the sets a distribution's parameters and samples live in.

Each constraint's ``check(value)`` returns a boolean tensor saying, per
event, whether ``value`` lies in the set; ``event_dim`` says how many
right-most dimensions make one event (a simplex checks whole vectors).
"""

from __future__ import annotations

import ferrograd

from .utils import all_true

__all__ = [
    "Constraint", "MixtureSameFamilyConstraint", "boolean", "cat", "corr_cholesky", "dependent",
    "dependent_property", "greater_than", "greater_than_eq", "half_open_interval", "independent",
    "integer_interval", "interval", "is_dependent", "less_than", "lower_cholesky", "lower_triangular",
    "multinomial", "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_definite",
    "positive_integer", "positive_semidefinite", "real", "real_vector", "simplex", "square", "stack",
    "symmetric", "unit_interval",
]  # fmt: skip


class Constraint:
    """A region over which a variable is valid.

    Attributes:
        is_discrete (bool): whether the set is discrete.
        event_dim (int): the number of right-most dimensions forming one event.
    """

    is_discrete = False
    event_dim = 0

    def check(self, value):
        """Returns a boolean tensor of shape ``value.shape[:-event_dim]`` saying
        whether each event satisfies the constraint.

        Args:
            value (Tensor): the values to check.
        """
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """Placeholder for a support that depends on other variables; it cannot
    be checked.

    Args:
        is_discrete (bool): whether the set is discrete.
        event_dim (int): the event dimensions.
    """

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """Returns a dependent constraint with the given static attributes.

        Args:
            is_discrete (bool): whether the set is discrete.
            event_dim (int): the event dimensions.
        """
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether ``constraint`` is a dependent (uncheckable) constraint.

    Args:
        constraint (Constraint): the constraint.

    Example:
        >>> from ferrograd.distributions import constraints
        >>> constraints.is_dependent(constraints.dependent), constraints.is_dependent(constraints.real)
        (True, False)
    """
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is a dependent constraint when read from the class
    and the computed constraint when read from an instance.

    Args:
        fn (callable): the method computing the constraint.
        is_discrete (bool): whether the set is discrete.
        event_dim (int): the event dimensions.
    """

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """A constraint whose ``reinterpreted_batch_ndims`` right-most batch
    dimensions are folded into the event.

    Args:
        base_constraint (Constraint): the constraint per element.
        reinterpreted_batch_ndims (int): the extra event dimensions.
    """

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(
                f"reinterpreted_batch_ndims must be an int >= 0, got {reinterpreted_batch_ndims}"
            )
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        if self.reinterpreted_batch_ndims:
            result = result.reshape(*result.shape[: result.dim() - self.reinterpreted_batch_ndims], -1).all(
                -1
            )
        return result

    def __repr__(self):
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        return is_boolean.all(-1) & (value.sum(-1) == 1)


class _IntegerInterval(Constraint):
    """Integers in ``[lower_bound, upper_bound]``.

    Args:
        lower_bound: the least value.
        upper_bound: the greatest value.
    """

    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    """Integers at least ``lower_bound``.

    Args:
        lower_bound: the least value.
    """

    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value):
        return value == value  # False exactly at NaN


class _GreaterThan(Constraint):
    """Reals strictly above ``lower_bound``.

    Args:
        lower_bound: the bound.
    """

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value


class _LessThan(Constraint):
    """Reals strictly below ``upper_bound``.

    Args:
        upper_bound: the bound.
    """

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """Reals in the closed interval ``[lower_bound, upper_bound]``.

    Args:
        lower_bound: the least value.
        upper_bound: the greatest value.
    """

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return ferrograd.all(value >= 0, dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Count vectors summing to at most ``upper_bound``.

    Args:
        upper_bound (int): the total count.
    """

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        full = ferrograd.full(value.shape[:-2], value.shape[-2] == value.shape[-1], dtype=ferrograd.bool)
        return full


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not all_true(square):
            return square
        return ferrograd.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return (value.tril() == value).reshape(*value.shape[:-2], -1).min(-1).values


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).reshape(*value.shape[:-2], -1).min(-1).values
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).min(-1).values
        return lower & positive_diagonal


class _CorrCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        tol = ferrograd.finfo(value.dtype).eps * value.size(-1) * 10
        row_norm = ferrograd.linalg.norm(value.detach(), dim=-1)
        unit_rows = (row_norm - 1.0).abs().le(tol).all(dim=-1)
        return _LowerCholesky().check(value) & unit_rows


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not all_true(sym):
            return sym
        return ferrograd.linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        if not all_true(sym):
            return sym
        return ferrograd.linalg.cholesky_ex(value).info.eq(0)


class _Parts(Constraint):
    """The parts shared by the constraints applying one constraint per slice
    along ``dim`` (``cat``, ``stack``): discrete if any part is."""

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)


class _Cat(_Parts):
    """Applies a sequence of constraints to consecutive slices along ``dim``.

    Args:
        cseq (list): the constraints.
        dim (int): the dimension sliced.
        lengths (list): the slice lengths (1 each by default).
    """

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"cat: {len(self.cseq)} constraints but {len(self.lengths)} lengths")
        self.dim = dim

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for constr, length in zip(self.cseq, self.lengths, strict=True):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start += length
        return ferrograd.cat(checks, self.dim)


class _Stack(_Parts):
    """Applies a sequence of constraints to the slices ``value.select(dim, i)``,
    one constraint per index along ``dim``.

    Args:
        cseq (list): the constraints, one per slice.
        dim (int): the dimension sliced.
    """

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        if not all(isinstance(c, Constraint) for c in self.cseq):
            raise TypeError("stack expects a sequence of Constraint instances")
        self.dim = dim

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        # A negative ``dim`` counted from the right reaches into the event.
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        if not -value.dim() <= self.dim < value.dim():
            raise IndexError(f"stack: dim {self.dim} out of range for a value with {value.dim()} dimensions")
        if value.size(self.dim) != len(self.cseq):
            raise ValueError(
                f"stack: value.size({self.dim}) = {value.size(self.dim)} "
                f"but there are {len(self.cseq)} constraints"
            )
        slices = value.unbind(self.dim)
        return ferrograd.stack([c.check(v) for c, v in zip(self.cseq, slices, strict=True)], self.dim)


class MixtureSameFamilyConstraint(Constraint):
    """The support of a :class:`~ferrograd.distributions.MixtureSameFamily`:
    a value is checked against the component distribution's constraint with
    the component dimension put back (as size 1), and is valid where it is
    valid for every component.

    Args:
        base_constraint (Constraint): the component distribution's support.

    Example:
        >>> from ferrograd.distributions import constraints
        >>> constraints.MixtureSameFamilyConstraint(constraints.positive).check(ferrograd.tensor([1.0, -1.0]))
        tensor([ True, False])
    """

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        event_dim = self.event_dim
        if value.dim() < event_dim:
            raise ValueError(f"Expected value.dim() >= {event_dim} but got {value.dim()}")
        result = self.base_constraint.check(value.unsqueeze(-1 - event_dim))
        keep = value.dim() - event_dim
        return result.reshape(*result.shape[:keep], -1).all(-1)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_constraint!r})"


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
