"""Optuna's parameter distributions as mfbo dimensions, and back.

Two codings serve two purposes.  :class:`Codec` is how :class:`MondrianSampler` searches one
distribution: every value it proposes is a valid value of the distribution (a stepped range is
searched as the integer index of its grid, a categorical one as the index of its choice, so that
any choice, however optuna compares it, is one level).  :func:`dimension_of` and
:func:`distribution_of` translate a user's space, whose values are the parameters themselves
(:func:`~mfbo.integrations.optuna.from_optuna`, :func:`~mfbo.integrations.optuna.to_optuna`).
"""

from __future__ import annotations

import math

from optuna.distributions import (BaseDistribution, CategoricalDistribution, FloatDistribution,
                                  IntDistribution)

from ...space import Categorical, Dimension, Integer, Ordinal, Real

__all__ = ["Codec", "dimension_of", "distribution_of", "user_value", "MAX_GRID"]

#: a stepped range of at most this many values becomes an :class:`~mfbo.Ordinal` of them in a
#: user's space; a finer one becomes the plain range (values then need not lie on the steps)
MAX_GRID = 10_000


#: how far :meth:`Codec.decode` looks, in grid steps and in steps of the last bit, for a value
#: that optuna accepts when the grid value itself is not one
SEARCH_STEPS = 64


def _grid_size(d) -> int:
    """Number of steps of a stepped distribution (``high`` is on the grid: optuna adjusts it)."""
    return int(round((d.high - d.low) / d.step))


class Codec:
    """One optuna distribution searched as one mfbo dimension (the sampler's coding).

    ``FloatDistribution`` without a step is a :class:`~mfbo.Real` (``log`` kept); with a step
    and ``IntDistribution`` with ``step > 1``, the :class:`~mfbo.Integer` index ``k`` of the
    value ``low + k * step``; ``IntDistribution`` with step 1 an :class:`~mfbo.Integer` (``log``
    kept); ``CategoricalDistribution`` a :class:`~mfbo.Categorical` of the choices' indices.
    The distribution must not be single-valued (optuna never samples those).  ``when``: the
    dimension's condition (over the names of the space it goes into), if it has one.

    Optuna accepts a relative sample only if its ``_contains`` does, which tests the value in
    floats: the integers beyond 2**53 that are not floats, and the values of a grid finer
    than the floats near them, fail it (optuna's own samplers then replace the value by an
    independent sample).  A value is therefore decoded to the nearest one that passes,
    searched among the neighbouring grid values and floats (:data:`SEARCH_STEPS` of each
    either way); any ordinary range's values all pass as they are.
    """

    def __init__(self, distribution: BaseDistribution, when=None):
        d = distribution
        self.distribution = d
        if isinstance(d, FloatDistribution):
            self.kind = "real" if d.step is None else "grid"
            self.dimension: Dimension = Real(d.low, d.high, log=d.log, when=when) \
                if d.step is None else Integer(0, _grid_size(d), when=when)
        elif isinstance(d, IntDistribution):
            self.kind = "int" if d.step == 1 else "grid"
            self.dimension = Integer(d.low, d.high, log=d.log, when=when) if d.step == 1 \
                else Integer(0, (d.high - d.low) // d.step, when=when)
        elif isinstance(d, CategoricalDistribution):
            self.kind = "choice"
            self.dimension = Categorical(list(range(len(d.choices))), when=when)
        else:
            raise TypeError(f"distribution must be an optuna Float-, Int- or "
                            f"CategoricalDistribution, got {type(d).__name__}.")

    def encode(self, value):
        """The mfbo value of the parameter value ``value``, or None when it is not a value of
        the distribution."""
        d = self.distribution
        try:
            internal = d.to_internal_repr(value)
            if not d._contains(internal):
                return None
        except (ValueError, TypeError):
            return None
        if self.kind == "real":
            return float(internal)
        if self.kind == "grid":
            if isinstance(d, IntDistribution):  # exactly, in ints: the nearest index
                k = (2 * (int(internal) - d.low) + d.step) // (2 * d.step)
            else:
                k = int(round((internal - d.low) / d.step))
            return min(max(k, 0), self.dimension.high)
        return int(internal)

    def decode(self, value):
        """The parameter value of the mfbo value ``value`` (a valid value of the
        distribution, of the type optuna's own samplers return)."""
        d = self.distribution
        if self.kind == "real":
            return float(min(max(value, d.low), d.high))
        if self.kind == "choice":
            return d.choices[int(value)]
        k = int(value) if self.kind == "grid" else int(value) - d.low
        v = self._grid_value(k)
        if self._accepted(v):
            return v
        last = self.dimension.high if self.kind == "grid" else d.high - d.low
        as_value = int if isinstance(d, IntDistribution) else float
        below = above = float(v)
        for j in range(1, SEARCH_STEPS + 1):
            below, above = math.nextafter(below, -math.inf), math.nextafter(above, math.inf)
            near = [self._grid_value(i) for i in (k - j, k + j) if 0 <= i <= last]
            for w in near + [as_value(below), as_value(above)]:
                if self._accepted(w):
                    return w
        return v  # (optuna will draw this parameter independently)

    def _grid_value(self, k: int):
        """The value of grid index ``k`` (``low + k * step``, at most ``high``), an int for an
        ``IntDistribution`` that equals its float (as optuna stores it)."""
        d = self.distribution
        v = min(d.low + k * d.step, d.high)
        return int(float(v)) if isinstance(d, IntDistribution) else float(v)

    def _accepted(self, value) -> bool:
        """Whether optuna takes ``value`` as a value of the distribution."""
        d = self.distribution
        return d._contains(d.to_internal_repr(value))


def dimension_of(name: str, distribution: BaseDistribution, when=None) -> Dimension:
    """The mfbo dimension of a user's space for an optuna distribution (values kept as they
    are): ranges without a step keep ``log``; a stepped range is an :class:`~mfbo.Ordinal` of
    its values (the plain range beyond :data:`MAX_GRID` values); a single-valued distribution
    and a categorical one are a :class:`~mfbo.Categorical`.  ``when``: its condition, if any."""
    d = distribution
    try:
        if d.single():
            value = d.choices[0] if isinstance(d, CategoricalDistribution) else d.low
            return Categorical([value], when=when)
        if isinstance(d, CategoricalDistribution):
            return Categorical(list(d.choices), when=when)
        if isinstance(d, FloatDistribution):
            if d.step is None:
                return Real(d.low, d.high, log=d.log, when=when)
            n = _grid_size(d)
            if n + 1 > MAX_GRID:
                return Real(d.low, d.high, when=when)
            return Ordinal([float(min(d.low + k * d.step, d.high)) for k in range(n + 1)],
                           when=when)
        if isinstance(d, IntDistribution):
            if d.step == 1:
                return Integer(d.low, d.high, log=d.log, when=when)
            if (d.high - d.low) // d.step + 1 > MAX_GRID:
                return Integer(d.low, d.high, when=when)
            return Ordinal(list(range(d.low, d.high + 1, d.step)), when=when)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"optuna parameter {name!r} ({d}) cannot be an mfbo dimension: "
                        f"{exc}") from None
    raise TypeError(f"optuna parameter {name!r} has a {type(d).__name__}, which has no mfbo "
                    f"dimension (Float-, Int- and CategoricalDistribution do).")


def user_value(dimension: Dimension, value):
    """``value`` of an optuna trial as a value of ``dimension`` (from :func:`dimension_of`):
    a stepped value is snapped to the grid value it stands for (the two may differ in the
    last bits)."""
    if isinstance(dimension, Ordinal) and all(isinstance(c, float) for c in dimension.choices) \
            and len(dimension.choices) > 1 and isinstance(value, (int, float)) \
            and not isinstance(value, bool):
        c = dimension.choices
        k = int(round((float(value) - c[0]) / (c[1] - c[0])))
        if 0 <= k < len(c) and abs(c[k] - value) <= 1e-8 * max(1.0, abs(c[1] - c[0])):
            return c[k]
    return value


def distribution_of(name: str, dimension: Dimension) -> BaseDistribution:
    """The optuna distribution of an mfbo dimension: :class:`~mfbo.Real` is a
    ``FloatDistribution``, :class:`~mfbo.Integer` an ``IntDistribution`` (``log`` kept), and
    :class:`~mfbo.Categorical` and :class:`~mfbo.Ordinal` a ``CategoricalDistribution``."""
    if isinstance(dimension, Real):
        return FloatDistribution(dimension.low, dimension.high, log=dimension.log)
    if isinstance(dimension, Integer):
        return IntDistribution(dimension.low, dimension.high, log=dimension.log)
    if isinstance(dimension, Categorical):
        return CategoricalDistribution(list(dimension.choices))
    raise TypeError(f"dimension {name!r} is a {type(dimension).__name__}, which has no optuna "
                    f"distribution.")
