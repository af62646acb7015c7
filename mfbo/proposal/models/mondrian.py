"""The online Mondrian forest as the optimizer's model: each new point is added with
``partial_fit`` (O(log n), never a refit)."""

from __future__ import annotations

import copy
import numbers

import numpy as np

from ..._core.arguments import check_int
from .base import Model
from .targets import (RAW_SAFE_MAGNITUDE, SAFE_MAGNITUDE, check_transform, log_shift, raw_as_none,
                      safe_exponent, smac_log_constants, symlog)

__all__ = ["MondrianModel", "CATEGORICAL_ENCODINGS"]

#: how a categorical coordinate may enter the forest (:class:`MondrianModel`'s ``categorical``)
CATEGORICAL_ENCODINGS = ("ordinal", "one-hot", "one-hot-narrow")


class MondrianModel(Model):
    """The online Mondrian regression forest (the papers' BO setting, plus an output transform
    and a noise-free acquisition std, both documented parameters).

    10 trees, ``min_samples_split=2``, lifetime inf, the fast empirical posterior (or ``"bp"``,
    or both in turn: ``"alternating"``, the ``mondrian`` recipe's choice),
    noise ``Var(y)/min(2N, 500)`` (``K_cap=500``, the reference code) refreshed after every
    observation, inputs known to lie in the unit cube.  Every new observation is one
    ``partial_fit``; the forest is never re-grown.

    Parameters
    ----------
    y_transform : {"log", "smac-log", "rank", "symlog", "raw", None}, default="log"
        What the forest models.  ``"log"``: ``log(y - c)`` with ``c = min(y) - 0.3 (median(y)
        - min(y))`` (:func:`log_shift`; at least a thousandth of the range): the best loss sits
        at 0.3 of the better half's spread above ``c``, so the transform is the same whatever
        constant or unit the losses come in.  It compresses the bad losses (a few huge ones
        no longer dominate the variance, which sends UCB to the corners) and resolves the good
        ones (near-optimal cells of a grid differ visibly).  ``"smac-log"``: SMAC3's
        ``log(y - min')``, ``min' = min(y) - (p5 - min(y))`` (:func:`smac_log_transform`).
        ``"rank"``: normal scores of the ranks.  ``"symlog"``: ``sign(y) log(1 + |y|)``
        (:func:`symlog`, for a constraint's value: its sign and zero kept).  ``"raw"`` or
        ``None``: raw losses, as in the papers.
        ``c`` (or the ranks) are re-derived when a new best loss arrives and whenever the
        number of observations has doubled; then the node statistics are recomputed from the
        transformed losses (:meth:`MondrianForestRegressor.refit_targets`: the partitions are
        kept, O(n log n), amortised O(log n) per observation).  Losses beyond about 7e305 are
        first divided by a power of two, so that no difference of losses overflows.  How the
        offset and the default transform were chosen: benchmarks/DEFAULTS.md, "Output
        transform, initial design, maximiser, min_distance".
    shift_from : {"all", "design"}, default="all"
        Whose median sets the ``"log"`` transform's ``c``: all the losses, or the initial
        design's only (:meth:`set_initial_size`; all while it has not been told).  As a run
        concentrates its trials near the incumbent, the median of all losses falls towards
        the best and ``c`` with it, and the transform stretches the incumbent's
        neighbourhood ever deeper below the rest; the design's median, a sample of the whole
        space, does not move.
    repeat_y_transform : {"log", "smac-log", "rank", "raw", None}, default=None
        The output transform from the moment two complete trials have returned exactly the
        same loss (:meth:`on_repeated_loss`) on: exact repeats mark a plateau problem (a
        cross-validated accuracy), on which a transform chosen for continuous losses may not
        suit.  None: ``y_transform`` throughout.  The forest keeps its partitions (they do
        not depend on the losses) and only its node statistics are recomputed.
    trend : {False, True, "if-integers"}, default=False
        Whether the forest models what a linear trend leaves: a ridge regression of the
        transformed losses on the coordinates (continuous and ordered ones; the order of a
        categorical coordinate's choices means nothing, so those are left out, see
        :meth:`set_levels`) is refitted on every observation, the forest's leaves hold the
        residuals (:meth:`MondrianForestRegressor.refit_targets`, partitions kept) and every
        prediction adds the trend back.  A forest's mean is flat beyond its data; with the
        trend it goes on falling where the losses fall, so the acquisition looks at the
        bounds a loss decreases towards (a decision tree's smallest leaves and largest
        depth) instead of only beside the data.  ``"if-integers"``: only in a space with an
        ordered (integer) coordinate, as :meth:`set_levels` tells; such spaces are mostly
        a model's capacity (depth, width, neighbours), whose loss often runs to a bound,
        while past an optimum inside the box the trend would point on to the box's bounds
        (on the continuous bbob functions it is worse).  The ridge penalty is ``1e-3 n``
        on the slopes (none on the intercept), on coordinates centred at 0.5.  The
        ``mondrian`` recipe takes it with ``trend_window=10``; why: benchmarks/DEFAULTS.md,
        "The linear trend, chosen online".
    trend_window : int or None, default=None
        With the trend on, also keep the forest without it, and predict with whichever of
        the two predicted the last ``trend_window`` observations better: the smaller sum of
        absolute errors of its mean on the transformed scale, each prediction made before
        that observation was told (a prequential comparison; ties, and the proposals before
        any observation has been predicted: without the trend).  The two forests have the
        same partitions (those do not depend on the losses), so this costs a second set of
        node statistics.  Where the losses fall towards bounds the trend predicts better
        and is taken; past an optimum inside the box it predicts worse and is dropped.
        Only observations told after the first fit are scored, so a model fed a study's
        observations in one batch (a study resumed from storage replays them so) starts
        the comparison afresh; a pickled model keeps its scores.  None: the trend always.
        The ``mondrian`` recipe's window is 10 (benchmarks/DEFAULTS.md, "The linear trend,
        chosen online").
    noise_in_std : bool, default=False
        Whether the std handed to the acquisition includes the forest's observation noise
        ``sigma_y^2``.  The objectives are deterministic, so by default it does not (like
        scikit-optimize's GP): an evaluated point then has no exploration bonus and the
        optimizer does not spend evaluations next to the incumbent.
    posterior : {"empirical", "bp", "alternating"}, default="empirical"
        The forest's predictive posterior: the fast empirical moments of the leaves, the exact
        Gaussian belief-propagation posterior (hierarchically smoothed leaves with
        observation noise), or ``"alternating"``: one forest, predicted with the empirical
        posterior from an even number of observations and with BP from an odd number, so
        that consecutive proposals come from the two models in turn (the ``mondrian``
        recipe's default; benchmarks/DEFAULTS.md, "Alternating posteriors").
    categorical : {"ordinal", "one-hot", "one-hot-narrow"}, default="ordinal"
        How a categorical coordinate of three or more choices enters the forest.
        ``"ordinal"``: as the space encodes it, choice ``i`` of ``k`` at ``(i + 0.5) / k``, so
        a cut groups neighbouring choices by an order that means nothing, and a choice never
        observed is predicted from the leaf of its neighbours in that order.  ``"one-hot"``:
        one coordinate per choice, 1 where the point takes it and 0 elsewhere (all 0 for an
        inactive coordinate of a conditional space), so a cut separates one choice from the
        others, and a choice that no observation in a block takes lies outside the block's
        box, where the Mondrian predictive branches off and widens the spread.
        ``"one-hot-narrow"``: the same with coordinates of width ``1 / k``, so that a
        categorical coordinate is cut about as often as a numeric one.  Two choices stay one
        coordinate (any cut separates them).  The coordinates' kinds come from
        :meth:`set_levels`; the model's inputs are unit-cube points either way.
    y_cap : float or None, default=None
        A fence on the transformed losses: none above ``m + y_cap (m - b)``, where ``m`` is
        the transformed median loss and ``b`` the transformed best, both as the transform
        was last derived (the transformed worst loss in place of ``m`` in the spread where
        half the losses tie at the best).  A loss that diverges (``1e25`` where the others are
        near 1) then enters the forest as a bad loss, not as one that spreads its leaves'
        variance, which an optimistic acquisition would read as promise.  Losses below the
        fence, and so the best ones, are modelled as before.  None: no fence.
    relevance : {"mutual_info", "f_score"} or None, default=None
        Each coordinate stretched by its relevance to the transformed losses of the initial
        design (the forest's ``feature_weights``): the forest is grown afresh, with those
        weights, from the observations once the initial design's last one is told (at least
        5), and updated online after that.  A Mondrian cut ignores the losses, so a parameter
        that does not matter (nearest neighbours' ``leaf_size``) is cut as often as one that
        does, and the forest stays as unsure along it as it was before any observation; a
        coordinate of weight ``w`` is cut about ``w`` times as often.  None: all weigh the
        same (the papers' setting).
    relevance_floor : float, default=0.001
        The least weight, as a share of the largest: an estimate from a few dozen
        observations can put a coordinate that matters near 0, which the forest would then
        hardly ever cut.
    robust_shift : bool, default=False
        With the ``"log"`` transform: the shift's floor of a thousandth of the losses' range
        at most ``0.3`` of the median distance from the best of the losses above it
        (:func:`log_shift`).  Without it, one diverging loss sets the floor, and every other
        loss then sits at the same transformed value.  The ``mondrian`` recipe takes it
        (benchmarks/DEFAULTS.md, "Adopted: the log transform's shift floored robustly").
    """

    one_at_a_time = True

    def __init__(self, n_dims: int, random_state, n_estimators: int = 10,
                 posterior: str = "empirical", min_samples_split: int = 2, K_cap: float = 500.0,
                 y_transform: str | None = "log", noise_in_std: bool = False,
                 repeat_y_transform: str | None = None, trend: bool | str = False,
                 trend_window: int | None = None, shift_from: str = "all",
                 categorical: str = "ordinal", y_cap: float | None = None,
                 robust_shift: bool = False, relevance: str | None = None,
                 relevance_floor: float = 1e-3, **kwargs):
        check_transform("y_transform", y_transform)
        check_transform("repeat_y_transform", repeat_y_transform)
        if posterior not in ("empirical", "bp", "alternating"):
            raise ValueError(f"posterior must be 'empirical', 'bp' or 'alternating', got "
                             f"{posterior!r}.")
        self.y_transform = raw_as_none(y_transform)
        self.repeat_y_transform = repeat_y_transform
        if shift_from not in ("all", "design"):
            raise ValueError(f"shift_from must be 'all' or 'design', got {shift_from!r}.")
        self.shift_from = shift_from
        self._initial = None  # the initial design's size (set_initial_size)
        self.noise_in_std = bool(noise_in_std)
        if not (isinstance(trend, (bool, np.bool_)) or trend == "if-integers"):
            raise TypeError(f"trend must be True, False or 'if-integers', got {trend!r}.")
        self.trend = trend if isinstance(trend, str) else bool(trend)
        self._trend_on = self.trend is True  # "if-integers": decided by set_levels
        self._trend_dims = None  # coordinates in the trend (None: all), see set_levels
        self._beta = None  # the trend's coefficients: intercept, then one per trend coordinate
        self.trend_window = check_int(trend_window, "trend_window", or_none=True)
        self.posterior = posterior
        if categorical not in CATEGORICAL_ENCODINGS:
            raise ValueError(f"categorical must be one of {CATEGORICAL_ENCODINGS}, got "
                             f"{categorical!r}.")
        self.categorical = categorical
        if y_cap is not None and (isinstance(y_cap, bool)
                                  or not isinstance(y_cap, numbers.Real)
                                  or not y_cap > 0 or not np.isfinite(y_cap)):
            raise ValueError(f"y_cap must be a positive number or None, got {y_cap!r}.")
        self.y_cap = None if y_cap is None else float(y_cap)
        if not isinstance(robust_shift, (bool, np.bool_)):
            raise TypeError(f"robust_shift must be True or False, got {robust_shift!r}.")
        self.robust_shift = bool(robust_shift)
        if relevance not in (None, "mutual_info", "f_score"):
            raise ValueError(f"relevance must be None, 'mutual_info' or 'f_score', got "
                             f"{relevance!r}.")
        self.relevance = relevance
        if isinstance(relevance_floor, bool) or not isinstance(relevance_floor, numbers.Real) \
                or not 0 < relevance_floor <= 1:
            raise ValueError(f"relevance_floor must be a number in (0, 1], got "
                             f"{relevance_floor!r}.")
        self.relevance_floor = float(relevance_floor)
        self._weighted = False  # whether the forest was grown with the relevance weights
        self._one_hot = None  # (kept coordinates, [(coordinate, choices, width), ...])
        self._forest_args = dict(n_estimators=n_estimators, min_samples_split=min_samples_split,
                                 K_cap=K_cap, random_state=random_state, **kwargs)
        self._make_forest(n_dims)
        # with trend_window: the forest without the trend (built at the first observation if
        # the trend is on), each observation's absolute errors of the two forests' means
        # (with the trend, without), and whether the trend's forest is the one predicting
        self._plain = None
        self._errors = []
        self._use_trend = True
        self._n = 0
        # (min', max - min', n and best loss when they were derived, the power of two the
        # losses are divided by)
        self._tf = None
        self._cap = None  # the largest transformed loss the forest is told (None: no cap)
        self._retarget = False  # the transform changed: re-derive it at the next observation

    #: the settings and state a model pickled by an earlier version may lack, with the values
    #: that reproduce its behaviour then
    _PICKLE_DEFAULTS = {"categorical": "ordinal", "_one_hot": None, "repeat_y_transform": None,
                        "shift_from": "all", "robust_shift": False, "y_cap": None, "_cap": None,
                        "_retarget": False, "_trend_on": False, "_trend_dims": None,
                        "trend_window": None, "_plain": None, "_errors": [], "_use_trend": True,
                        "_beta": None, "posterior": "empirical", "_initial": None,
                        "relevance": None, "relevance_floor": 1e-3, "_weighted": False}

    def __setstate__(self, state: dict) -> None:
        for name, value in self._PICKLE_DEFAULTS.items():
            state.setdefault(name, copy.copy(value))
        self.__dict__.update(state)

    def _make_forest(self, n_features: int) -> None:
        """The forest, over ``n_features`` input coordinates in [0, 1]."""
        # scikit-learn and numba: imported by the first model made, not by ``import mfbo``
        from surrogates import MondrianForestRegressor

        self.forest = MondrianForestRegressor(
            posterior="empirical" if self.posterior == "alternating" else self.posterior,
            feature_bounds=[[0.0, 1.0]] * n_features, **self._forest_args)
        # on a fresh install the prediction and update kernels compile in a second process
        # while this one imports the rest and evaluates the initial design
        self.forest.compile_kernels_ahead()

    def set_initial_size(self, n: int) -> None:
        """The number of trials of the initial design (the first losses observed): with
        ``shift_from="design"``, the ``"log"`` transform's median is theirs."""
        self._initial = int(n)

    def set_levels(self, levels) -> None:
        """Leave the categorical coordinates (negative ``levels``) out of the trend, and with
        ``trend="if-integers"`` take it only if a coordinate is ordered (positive)."""
        levels = np.asarray(levels)
        self._trend_dims = np.flatnonzero(levels >= 0)
        if self.trend == "if-integers":
            self._trend_on = bool(np.any(levels > 0))
        if self.categorical != "ordinal" and self._n == 0:
            wide = [int(d) for d in np.flatnonzero(levels <= -3)]
            if wide:
                kept = np.flatnonzero(levels > -3)
                narrow = self.categorical == "one-hot-narrow"
                self._one_hot = (kept, [(d, -int(levels[d]), 1.0 / -int(levels[d]) if narrow
                                         else 1.0) for d in wide])
                self._make_forest(kept.size + sum(k for _, k, _ in self._one_hot[1]))

    def encode(self, X) -> np.ndarray:
        """``X`` (unit-cube points) as the forest takes them: with ``categorical`` one-hot,
        each categorical coordinate of three or more choices replaced by one coordinate per
        choice, after the others."""
        X = np.asarray(X, dtype=float)
        plan = self._one_hot
        if plan is None:
            return X
        kept, wide = plan
        parts = [X[..., kept]]
        for d, k, width in wide:
            u = X[..., d]
            index = np.minimum(np.floor(u * k), k - 1)
            active = (u >= 0.0) & (u <= 1.0)
            parts.append(np.where(active[..., None] & (index[..., None] == np.arange(k)),
                                  width, 0.0))
        return np.concatenate(parts, axis=-1)

    def on_repeated_loss(self) -> None:
        target = self.repeat_y_transform
        if target is not None:
            self.y_transform = raw_as_none(target)
            self.repeat_y_transform = None
            self._retarget = True

    def on_targets_changed(self) -> None:
        self._retarget = True  # every target is derived afresh at the next observation

    def _limit(self) -> float:
        # raw losses are squared by the forest's variances; logs of losses are not
        return RAW_SAFE_MAGNITUDE if self.y_transform is None else SAFE_MAGNITUDE

    def _set_transform(self, y: np.ndarray) -> None:
        lo = float(y.min())
        k = safe_exponent(y, self._limit())
        ys = np.ldexp(y, -k)
        self._cap = None
        if self.y_transform is None:
            self._tf = (None, None, y.shape[0], lo, k)
        elif self.y_transform == "symlog":  # (no scaling: it is not scale-free)
            self._tf = (None, None, y.shape[0], lo, 0)
        elif self.y_transform == "log":
            rows = self._initial if self.shift_from == "design" else None
            robust = self.robust_shift
            self._tf = (float(ys.min()) - log_shift(ys, rows, robust), 1.0, y.shape[0], lo, k)
        elif self.y_transform == "smac-log":
            self._tf = (*smac_log_constants(ys), y.shape[0], lo, k)
        else:
            self._tf = (np.sort(y), None, y.shape[0], lo, k)
        if self.y_cap is not None:
            best, middle, top = self._transform([lo, float(np.median(y)), float(y.max())])
            spread = middle - best if middle > best else top - best  # (half tied at the best)
            self._cap = float(middle + self.y_cap * spread) if spread > 0 else None

    def _transform(self, values) -> np.ndarray:
        t = self._uncapped(values)
        cap = self._cap
        return t if cap is None else np.minimum(t, cap)

    def _uncapped(self, values) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        if self.y_transform is None:
            return np.ldexp(values, -self._tf[4]) if self._tf[4] else values
        if self.y_transform == "symlog":
            return symlog(values)
        if self.y_transform != "rank":
            shifted_min, denom = self._tf[:2]
            values = np.ldexp(values, -self._tf[4])
            return np.log(np.maximum(values - shifted_min, 1e-300) / denom)
        ref = self._tf[0]
        below = np.searchsorted(ref, values, side="left")
        upto = np.searchsorted(ref, values, side="right")
        u = (below + 0.5 * (upto - below) + 0.5) / (ref.shape[0] + 1.0)
        from scipy.special import ndtri

        return ndtri(u)

    def observe(self, X, y, n_new):
        if n_new == 0:
            return
        y = np.asarray(y, dtype=float)
        new = y[-n_new:]
        retarget = self._retarget
        self._retarget = False
        trend = self._trend_on
        choosing = trend and self.trend_window is not None
        if choosing and self._n and not retarget and self._aug is None:
            # (not scored: observations told with a new output transform, whose scale the
            # predictions were not made on; and a constant liar's copy's lies: they say
            # nothing of which forest predicts better)
            self._record_errors(X[-n_new:], new)
        regrow = self.relevance is not None and not self._weighted and \
            X.shape[0] >= max(5, self._initial or 0)
        if regrow:  # the design is complete: the forest grown afresh with relevance weights
            self._weighted = True
            self._n, self._plain, self._errors = 0, None, []
        if self._n == 0:
            self._set_transform(y)
            t = self._transform(y)
            F = self.encode(X)
            if regrow:
                self._forest_args["feature_weights"] = self._relevance_weights(F, t)
                self._make_forest(F.shape[1])
            if choosing:
                self._plain = copy.deepcopy(self.forest)  # unfitted: the same random stream
                self._plain.fit(F, t)
            self.forest.fit(F, self._targets(X, t, trend))
        else:
            # another transform, a new best loss, twice the data or a loss too large for the
            # current scaling: re-derive the transform
            rederive = retarget or safe_exponent(new, self._limit()) > self._tf[4] or \
                self.y_transform not in (None, "symlog") and \
                (new.min() < self._tf[3] or y.shape[0] >= 2 * self._tf[2])
            if rederive:
                self._set_transform(y)
            everything = rederive or trend  # every target changes (with the trend: its residual)
            t = self._transform(y) if everything else None
            t_new = t[-n_new:] if everything else self._transform(new)
            F_new = self.encode(X[-n_new:])
            if choosing:  # the forest without the trend, as it would be without one
                self._plain.partial_fit(F_new, t_new)
                if rederive:
                    self._plain.refit_targets(t)
            if everything:
                targets = self._targets(X, t, trend)
                self.forest.partial_fit(F_new, targets[-n_new:])
                self.forest.refit_targets(targets)
            else:
                self.forest.partial_fit(F_new, t_new)
        self._n = X.shape[0]
        if choosing:
            recent = np.asarray(self._errors[-self.trend_window:]).reshape(-1, 2)
            with_trend, without = recent.sum(axis=0)
            self._use_trend = bool(recent.size) and with_trend < without

    def _relevance_weights(self, F, t) -> np.ndarray:
        """Each forest coordinate's relevance to the transformed losses ``t`` of the
        observations ``F`` (as the forest takes them; ``relevance``'s estimate,
        scikit-learn's), as a share of the largest, at least ``relevance_floor``; all 1 where
        none is relevant."""
        from sklearn.feature_selection import f_regression, mutual_info_regression

        if self.relevance == "f_score":
            with np.errstate(divide="ignore", invalid="ignore"):
                raw = f_regression(F, t)[0]
        else:
            raw = mutual_info_regression(F, t, random_state=0)
        raw = np.nan_to_num(np.asarray(raw, dtype=float), nan=0.0, posinf=0.0)
        top = raw.max()
        return np.maximum(raw / top, self.relevance_floor) if top > 0 else np.ones(F.shape[1])

    def _record_errors(self, X_new, y_new) -> None:
        """Before new observations are told: each one's absolute errors of the means of the
        forest with the trend and of the forest without it, on the current transformed scale
        (the scale their predictions were made on)."""
        t = self._transform(y_new)
        self._posterior_now()
        F = self.encode(X_new)
        with_trend = self.forest.predict(F) + self._trend_at(X_new)
        without = self._plain.predict(F)
        self._errors.extend(zip(np.abs(t - with_trend).tolist(), np.abs(t - without).tolist()))
        del self._errors[:-self.trend_window]  # only the last trend_window are compared

    def _predicting(self):
        """``(forest, with_trend)``: the forest the predictions come from."""
        if self._plain is not None and not self._use_trend:
            return self._plain, False
        return self.forest, True

    def _targets(self, X, t, trend: bool) -> np.ndarray:
        """What the forest holds for all observations, given their transformed losses ``t``:
        ``t``, or with the trend (refitted here) its residuals."""
        if not trend:
            return t
        A = self._trend_design(X)
        R = 1e-3 * X.shape[0] * np.eye(A.shape[1])
        R[0, 0] = 0.0
        self._beta = np.linalg.solve(A.T @ A + R, A.T @ t)
        return t - A @ self._beta

    def _trend_design(self, X) -> np.ndarray:
        """The trend's regressors: a constant and the trend coordinates minus 0.5."""
        X = np.asarray(X, dtype=float)
        dims = self._trend_dims
        Z = X if dims is None else X[:, dims]
        return np.hstack([np.ones((X.shape[0], 1)), Z - 0.5])

    def _trend_at(self, X, designs: dict | None = None):
        """The trend at ``X`` (0 without one).  ``designs``: the trend's regressors at ``X``
        by trend coordinates, read and filled here, so that several models of one space build
        them once (the same numbers)."""
        beta = self._beta
        if beta is None:
            return 0.0
        if designs is None:
            return self._trend_design(X) @ beta
        dims = self._trend_dims
        key = None if dims is None else np.asarray(dims).tobytes()
        A = designs.get(key)
        if A is None:
            A = designs[key] = self._trend_design(X)
        return A @ beta

    @property
    def ready(self):
        return self._n > 0

    def _posterior_now(self) -> None:
        """With ``posterior="alternating"``, the forests' posterior for the current number of
        observations."""
        if self.posterior == "alternating":
            posterior = "bp" if self._n % 2 else "empirical"
            self.forest.posterior = posterior
            if self._plain is not None:
                self._plain.posterior = posterior

    def predicting_forest(self):
        """``(forest, with_trend)``: the forest the next prediction reads (its posterior made
        current) and whether the trend is added to its mean.  :meth:`from_forest` and
        :meth:`from_forest_trees` turn that forest's outputs into the model's: a caller that
        computes them another way (several forests at once) gets the same numbers."""
        self._posterior_now()
        return self._predicting()

    def from_forest(self, X, forest, with_trend: bool, m, s, noise_var: float | None = None,
                    designs: dict | None = None):
        """:meth:`predict`'s answer at ``X`` from ``forest``'s mean ``m`` and std ``s``: the
        std without the observation noise (unless ``noise_in_std``), the trend added.
        ``noise_var``: the forest's ``hyperparameters_["noise_var"]`` if the caller has it
        (read here if None); ``designs``: as :meth:`_trend_at` takes it."""
        if not self.noise_in_std:
            if noise_var is None:
                noise_var = forest.hyperparameters_["noise_var"]
            s = np.sqrt(np.maximum(s * s - noise_var, 0.0))
        return (m + self._trend_at(X, designs) if with_trend else m), s

    def from_forest_trees(self, X, with_trend: bool, m, v, designs: dict | None = None):
        """:meth:`predict_per_tree`'s answer at ``X`` from the forest's per-tree means ``m``
        and variances ``v``: the trend added to every tree's mean (``designs``: as
        :meth:`_trend_at` takes it)."""
        t = self._trend_at(X, designs) if with_trend else 0.0
        return (m + t[:, None] if np.ndim(t) else m), v

    def predict(self, X):
        forest, with_trend = self.predicting_forest()
        m, s = forest.predict(self.encode(X), return_std=True)
        return self.from_forest(X, forest, with_trend, m, s)

    def predict_per_tree(self, X):
        forest, with_trend = self.predicting_forest()
        m, v = forest.predict_per_tree(self.encode(X))
        return self.from_forest_trees(X, with_trend, m, v)

    def incumbent(self, y):
        return float(self._transform([np.min(y)])[0])

    def to_model_scale(self, values):
        return self._transform(values)
