"""MondrianSearchCV: scikit-learn's cross-validated hyper-parameter search, proposing with
mfbo's Bayesian optimisation."""

from __future__ import annotations

import math
import numbers
import re
import warnings
from collections.abc import Mapping

import numpy as np
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection._search import BaseSearchCV
from sklearn.utils._param_validation import Interval

from ..optimize.optimizer import Optimizer, StudyExhausted
from .._core.seeds import seed_sequence
from ..proposal.recipes import as_recipe
from ..space import Categorical, Dimension, Integer, Ordinal, Real, Space

__all__ = ["MondrianSearchCV"]

#: what scikit-learn raises when every fit of a call to evaluate_candidates failed
_ALL_FAILED = re.compile(r"All the \d+ fits failed")


def _dimension(name: str, spec) -> Dimension:
    """One entry of a search space: an mfbo dimension, ``(low, high)`` (an Integer when both
    are ints, else a Real) or a list of choices (any objects, e.g. estimators)."""
    if isinstance(spec, Dimension):
        return spec
    if isinstance(spec, list):
        if not spec:
            raise ValueError(f"search_spaces[{name!r}] is an empty list of choices.")
        return Categorical(list(range(len(spec))))
    if isinstance(spec, tuple) and len(spec) == 2:
        try:
            if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in spec):
                return Integer(*spec)
            return Real(*spec)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"search_spaces[{name!r}]: {exc}") from None
    hint = "; use Real(low, high) or Integer(low, high) for a range" \
        if hasattr(spec, "rvs") else ""
    raise TypeError(f"search_spaces[{name!r}] must be an mfbo dimension (Real, Integer, "
                    f"Categorical, Ordinal), a (low, high) tuple or a list of choices, got "
                    f"{spec!r}{hint}.")


class _Coded:
    """A user's search space as the optimizer searches it: parameter ``i`` is the dimension
    ``p{i}`` (estimator parameter names such as ``clf__C`` need not be identifiers), and
    choices are searched by their index (so any object can be a choice)."""

    def __init__(self, space):
        if isinstance(space, Space):
            space = space.dimensions
        if not isinstance(space, Mapping) or not space:
            raise TypeError(f"search_spaces must be a non-empty dict name -> dimension, a "
                            f"Space, or a list of those (optionally as (space, n_iter) pairs), "
                            f"got {space!r}.")
        self.names, self.choices, dims = [], [], {}
        for i, (name, spec) in enumerate(space.items()):
            if not isinstance(name, str):
                raise TypeError(f"search_spaces parameter names must be strings, got {name!r}.")
            dim = _dimension(name, spec)
            choices = list(spec) if isinstance(spec, list) else \
                list(dim.choices) if isinstance(dim, Categorical) else None
            if choices is not None:
                # an Ordinal keeps its order (local search steps to neighbours)
                kind = Ordinal if isinstance(dim, Ordinal) else Categorical
                dim = kind(list(range(len(choices))))
            self.names.append(name)
            self.choices.append(choices)
            dims[f"p{i}"] = dim
        self.space = Space(dims)

    def decode(self, params: dict) -> dict:
        out = {}
        for i, (name, choices) in enumerate(zip(self.names, self.choices)):
            v = params[f"p{i}"]
            out[name] = choices[v] if choices is not None else v
        return out


class MondrianSearchCV(BaseSearchCV):
    """Cross-validated search over hyper-parameters by Bayesian optimisation with an online
    Mondrian forest: a drop-in for ``RandomizedSearchCV`` (same attributes, same ``fit``).

    The optimizer (:class:`mfbo.Optimizer`) proposes ``n_points`` candidates at a time; each
    batch is cross-validated by scikit-learn (in parallel over candidates and folds with
    ``n_jobs``), and the optimizer (``direction="maximize"``) is told the ``mean_test_score``
    of each candidate (of the ``refit`` metric with multi-metric scoring).

    Failed fits: with ``error_score=np.nan`` a candidate whose fits failed scores NaN and is a
    failed trial of the optimizer (its region is avoided, as for any mfbo failure).
    scikit-learn refuses a batch in which every fit failed (with ``n_points=1``: one failing
    candidate); its candidates are then failed trials too, left out of ``cv_results_`` with a
    ``FitFailedWarning``, and the search goes on (it raises scikit-learn's error only if no
    candidate could be scored at all).

    Parameters
    ----------
    estimator : estimator object
        Cloned for every fit; a pipeline's parameters are named ``step__param``.
    search_spaces : dict, Space or list
        ``name -> dimension``: an mfbo :class:`~mfbo.Real`, :class:`~mfbo.Integer`,
        :class:`~mfbo.Categorical` or :class:`~mfbo.Ordinal`; ``(low, high)`` (an Integer
        when both are ints, else a Real); or a list of choices, which may be any objects
        (estimators, None, ...).  An :class:`mfbo.Space` is taken as it is.  A list of such
        spaces, each alone or as a ``(space, n_iter)`` pair, searches them one after the
        other with their own optimizer, each for its own ``n_iter`` (``n_iter`` when not
        given), as scikit-optimize's ``BayesSearchCV`` does.
    n_iter : int, default=50
        Candidates evaluated per space (fewer when a finite space has fewer).
    scoring, n_jobs, refit, cv, verbose, pre_dispatch, error_score, return_train_score
        As for ``RandomizedSearchCV``.  With multi-metric scoring ``refit`` must name the
        metric to optimise (a ``ValueError`` says so before anything is fitted).
    random_state : int, RandomState or None, default=None
        Seeds the optimizer (its initial design, surrogate and proposals): the same
        ``random_state`` gives the same candidates, whatever ``n_jobs``.  Splitters with their
        own randomness need their own ``random_state`` for reproducible scores.
    n_points : int, default=1
        Candidates proposed (and cross-validated) together; the optimizer accounts for the
        ones not yet scored by its ``batch_strategy``.
    surrogate : str, Recipe or estimator, default="mondrian"
        As for :class:`mfbo.Optimizer`.
    optimizer_kwargs : dict or None, default=None
        Further arguments of :class:`mfbo.Optimizer` (``acquisition``, ``n_initial``,
        ``batch_strategy``, ``surrogate_options``, ...).  Without ``n_initial`` the initial
        design is the surrogate's recipe's size, capped at a quarter of ``n_iter``, as in
        :func:`mfbo.minimize`.

    Attributes
    ----------
    cv_results_, best_estimator_, best_score_, best_params_, best_index_, scorer_, n_splits_,
    refit_time_, multimetric_
        As for ``RandomizedSearchCV``.
    """

    _parameter_constraints: dict = {
        **BaseSearchCV._parameter_constraints,
        "search_spaces": [dict, list, Space],
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_points": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "surrogate": "no_validation",
        "optimizer_kwargs": [dict, None],
    }

    def __init__(self, estimator, search_spaces, *, n_iter=50, scoring=None, n_jobs=None,
                 refit=True, cv=None, verbose=0, pre_dispatch="2*n_jobs", random_state=None,
                 error_score=np.nan, return_train_score=False, n_points=1,
                 surrogate="mondrian", optimizer_kwargs=None):
        self.search_spaces = search_spaces
        self.n_iter = n_iter
        self.random_state = random_state
        self.n_points = n_points
        self.surrogate = surrogate
        self.optimizer_kwargs = optimizer_kwargs
        super().__init__(estimator=estimator, scoring=scoring, n_jobs=n_jobs, refit=refit,
                         cv=cv, verbose=verbose, pre_dispatch=pre_dispatch,
                         error_score=error_score, return_train_score=return_train_score)

    def _spaces(self) -> list[tuple[_Coded, int]]:
        spaces = self.search_spaces
        if not isinstance(spaces, list):
            spaces = [spaces]
        if not spaces:
            raise ValueError("search_spaces is an empty list.")
        out = []
        for entry in spaces:
            n_iter = self.n_iter
            if isinstance(entry, tuple):
                if len(entry) != 2 or isinstance(entry[1], bool) or not isinstance(
                        entry[1], numbers.Integral) or entry[1] < 1:
                    raise ValueError(f"search_spaces entries given as tuples must be (space, "
                                     f"n_iter) with n_iter a positive int, got {entry!r}.")
                entry, n_iter = entry
            out.append((_Coded(entry), int(n_iter)))
        return out

    def _metric(self, results: dict) -> str:
        """The ``cv_results_`` key of the score the optimizer maximises."""
        if "mean_test_score" in results:
            return "mean_test_score"
        if isinstance(self.refit, str) and f"mean_test_{self.refit}" in results:
            return f"mean_test_{self.refit}"
        metrics = sorted(k[len("mean_test_"):] for k in results if k.startswith("mean_test_"))
        raise ValueError(f"With multi-metric scoring, MondrianSearchCV optimises the metric "
                         f"that refit names: refit must be one of {metrics}, got "
                         f"{self.refit!r}.")

    def _evaluate(self, evaluate_candidates, candidates: list, search_ctx) -> dict:
        """Cross-validate one batch (under its own callback context on scikit-learn >= 1.9)."""
        if search_ctx is None:
            return evaluate_candidates(candidates)
        ctx = search_ctx.subcontext(task_name="batch",
                                    max_subtasks=len(candidates) * self.n_splits_,
                                    sequential_subtasks=False
                                    ).call_on_fit_task_begin(estimator=self)
        try:
            return evaluate_candidates(candidates, callback_ctx=ctx)
        finally:
            ctx.call_on_fit_task_end(estimator=self)

    def _run_search(self, evaluate_candidates, *, callback_ctx=None):
        spaces = self._spaces()
        multimetric = isinstance(self.scoring, (dict, list, tuple))
        if multimetric and not isinstance(self.refit, str):
            raise ValueError(f"With multi-metric scoring, MondrianSearchCV optimises the metric "
                             f"that refit names: refit must be a scorer name, got "
                             f"{self.refit!r}.")
        options = dict(self.optimizer_kwargs or {})
        for name in ("space", "random_state", "storage", "study_name", "direction"):
            if name in options:
                raise ValueError(f"optimizer_kwargs cannot set {name!r}; MondrianSearchCV sets "
                                 f"it.")
        seeds = seed_sequence(self.random_state).spawn(len(spaces))
        search_ctx = None
        if callback_ctx is not None:
            n_batches = sum(math.ceil(n / self.n_points) for _, n in spaces)
            search_ctx = callback_ctx.subcontext(task_name="search", max_subtasks=n_batches
                                                 ).call_on_fit_task_begin(estimator=self)
        recorded, failure = 0, None
        for (coded, n_iter), seed in zip(spaces, seeds):
            kwargs = dict(options)
            if "n_initial" not in kwargs:
                kwargs["n_initial"] = as_recipe(self.surrogate).initial_design.size_within(
                    len(coded.space), n_iter)
            opt = Optimizer(coded.space, surrogate=self.surrogate, random_state=seed,
                            direction="maximize", **kwargs)
            try:
                done = 0
                while done < n_iter:
                    try:
                        trials = opt.ask(min(self.n_points, n_iter - done))
                    except StudyExhausted:  # a finite space with fewer than n_iter points
                        break
                    done += len(trials)
                    candidates = [coded.decode(t.params) for t in trials]
                    try:
                        results = self._evaluate(evaluate_candidates, candidates, search_ctx)
                    except ValueError as exc:
                        if not _ALL_FAILED.search(str(exc)):
                            raise
                        # scikit-learn refuses a batch whose every fit failed: its candidates
                        # are failed trials, and the search goes on
                        failure = exc
                        warnings.warn(f"Every fit of the candidate(s) {candidates} failed; they "
                                      f"are failed trials of the optimizer and are left out of "
                                      f"cv_results_.{exc}", FitFailedWarning, stacklevel=2)
                        for t in trials:
                            opt.tell(t, error=str(exc).strip().splitlines()[0])
                        continue
                    recorded += len(trials)
                    scores = np.asarray(results[self._metric(results)][-len(trials):],
                                        dtype=float)
                    for t, score in zip(trials, scores):
                        # NaN (some candidates of a batch failed, error_score=nan): failed
                        opt.tell(t, score)
            finally:
                opt.close()
        if not recorded and failure is not None:
            raise failure
        if search_ctx is not None:
            search_ctx.call_on_fit_task_end(estimator=self)
