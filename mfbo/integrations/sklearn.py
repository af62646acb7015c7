"""MondrianSearchCV: scikit-learn's cross-validated hyper-parameter search, proposing with
mfbo's Bayesian optimisation."""

from __future__ import annotations

import contextlib
import copy
import math
import numbers
import re
import warnings
from collections.abc import Mapping

import numpy as np
from scipy.stats import rankdata
from sklearn.base import is_classifier
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import check_cv
from sklearn.model_selection._search import BaseSearchCV
from sklearn.utils._param_validation import Interval

from acquisitions.pareto import non_dominated

from ..optimize.optimizer import Optimizer, StudyExhausted
from .._core.seeds import seed_sequence
from ..proposal.recipes import as_recipe
from ..space import (AllOf, Categorical, Condition, Dimension, Equals, In, Integer,
                     NotEquals, Real, Relation, Space)
from ..space.dimensions import check_name, json_key

__all__ = ["MondrianSearchCV"]

#: what scikit-learn raises when every fit of a call to evaluate_candidates failed
_ALL_FAILED = re.compile(r"All the \d+ fits failed")


#: the coded dimension choosing the entry of a list of spaces (its branches)
_BRANCH = "branch"


def _dimension(what: str, spec) -> tuple[Dimension, list | None]:
    """One entry ``what`` of a search space as the dimension searched, and the choices its
    values index (None: its values are the parameter's own).  ``spec`` is an mfbo dimension,
    ``(low, high)`` (an Integer when both are ints, else a Real) or a list of choices: distinct
    JSON values (str, int, float, bool, None) are a Categorical of themselves, any other list
    (estimators, arrays, repeats) a Categorical of its indices."""
    if isinstance(spec, Dimension):
        return spec, None
    if isinstance(spec, list):
        if not spec:
            raise ValueError(f"{what} is an empty list of choices.")
        if all(c is None or type(c) in (str, int, float, bool) for c in spec) and \
                len({json_key(c) for c in spec}) == len(spec):
            return Categorical(spec), None
        return Categorical(list(range(len(spec)))), list(spec)
    if isinstance(spec, tuple) and len(spec) == 2:
        try:
            if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in spec):
                return Integer(*spec), None
            return Real(*spec), None
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{what}: {exc}") from None
    hint = "; use Real(low, high) or Integer(low, high) for a range" \
        if hasattr(spec, "rvs") else ""
    raise TypeError(f"{what} must be an mfbo dimension (Real, Integer, Categorical, Ordinal), "
                    f"a (low, high) tuple or a list of choices, got {spec!r}{hint}.")


def _code(name: str, taken) -> str:
    """A name of the coded space for the parameter ``name``: an identifier (estimator
    parameters such as ``my-step__C`` need not be one) like it, not in ``taken``."""
    base = re.sub(r"\W", "_", name)
    try:
        check_name(base)
    except ValueError:  # (it starts with a digit, or NFKC normalisation changes it)
        base = "p"
    code, i = base, 1
    while code in taken:
        code, i = f"{base}_{i}", i + 1
    return code


def _same(a, b) -> bool:
    """Whether ``a`` and ``b`` are the same choice (one object, or equal as mfbo compares
    choices: 1 and 1.0 alike, True apart)."""
    try:
        return a is b or bool(json_key(a) == json_key(b))
    except (TypeError, ValueError):  # values whose == is not a bool (arrays)
        return False


def _recode(cond: Condition, codes: dict, what: str) -> Condition:
    """The user's condition ``cond`` (of ``what``) on the coded space: its parents renamed
    (``codes``: parameter name -> (coded name, choices or None), the parameters listed before),
    and its constants for a parent whose values are indices turned into those indices (an
    ``Equals``, ``NotEquals`` or ``In`` on such a parent is an ``In`` of the indices where it
    holds)."""
    return cond.map_leaves(lambda leaf: _recode_leaf(leaf, codes, what))


def _recode_leaf(cond: Condition, codes: dict, what: str) -> Condition:
    """One leaf of a condition recoded as :func:`_recode` says."""
    for parent in cond.parents():
        if parent not in codes:
            raise ValueError(f"{what}: the condition {cond!r} reads {parent!r}, which is not a "
                             f"parameter listed before it in the same space (listed before "
                             f"it: {list(codes)}).")
    if isinstance(cond, Relation):
        for parent in (cond.left, cond.right):
            if codes[parent][1] is not None:
                raise TypeError(f"{what}: the condition {cond!r} compares {parent!r}, whose "
                                f"choices are not all distinct JSON values; compare it with "
                                f"constants (Equals, In) instead.")
        return Relation(codes[cond.left][0], cond.op, codes[cond.right][0])
    code, choices = codes[cond.name]
    if choices is None:
        out = copy.copy(cond)
        out.name = code
        return out
    if not isinstance(cond, (Equals, In)):  # (NotEquals is an Equals)
        raise TypeError(f"{what}: the condition {cond!r} compares {cond.name!r} by order, but "
                        f"its choices are a list of objects.")
    hits = set()
    for v in cond.values if isinstance(cond, In) else [cond.value]:
        found = {i for i, c in enumerate(choices) if _same(c, v)}
        if not found:
            raise ValueError(f"{what}: the condition {cond!r} compares {cond.name!r} with "
                             f"{v!r}, which is not one of its choices {choices!r}.")
        hits |= found
    if type(cond) is NotEquals:
        hits = set(range(len(choices))) - hits
    return In(code, sorted(hits))


class _Coded:
    """A user's search space as the optimizer searches it: a dict ``name -> dimension`` or a
    :class:`~mfbo.Space` (conditions and forbidden configurations included), or a list of
    those, its branches.  A list is one conditional space: the dimension ``branch`` chooses an
    entry, whose parameters are active only under it (each entry's parameters are its own
    dimensions, whatever their names in the other entries).  Parameters are renamed to
    identifiers, and a list of choices that are not distinct JSON values is searched by index,
    so any object can be a choice; :meth:`decode` gives the estimator's parameters back."""

    def __init__(self, spec, label: str = "search_spaces"):
        entries = spec if isinstance(spec, list) else [spec]
        if not entries:
            raise ValueError(f"{label} is an empty list.")
        #: coded name -> (the estimator's parameter name, the choices its value indexes or None)
        self.params: dict[str, tuple[str, list | None]] = {}
        branched = len(entries) > 1
        dims = {_BRANCH: Categorical(list(range(len(entries))))} if branched else {}
        forbidden = []
        for k, entry in enumerate(entries):
            where = f"{label}[{k}]" if isinstance(spec, list) else label
            entry_forbidden = entry.forbidden if isinstance(entry, Space) else ()
            if isinstance(entry, Space):
                entry = entry.dimensions
            if not isinstance(entry, Mapping):
                raise TypeError(f"{where} must be a dict name -> dimension or a Space "
                                f"(search_spaces: one of those, a list of them searched as one "
                                f"space of branches, or a list with (space, n_iter) pairs "
                                f"searched one after the other), got {entry!r}.")
            if not (entry or branched):  # (an empty entry of a list: the estimator as it is)
                raise ValueError(f"{where} is an empty dict: there is nothing to search.")
            codes = {}
            for name, spec_k in entry.items():
                if not isinstance(name, str):
                    raise TypeError(f"{where}: parameter names must be strings, got {name!r}.")
                what = f"{where}[{name!r}]"
                dim, choices = _dimension(what, spec_k)
                when = dim.when if dim.when is None else _recode(dim.when, codes, what)
                if branched:
                    when = Equals(_BRANCH, k) if when is None else AllOf(Equals(_BRANCH, k), when)
                if when is not dim.when:
                    dim = copy.copy(dim)
                    dim.when = when
                code = _code(name, dims)
                dims[code] = dim
                codes[name] = (code, choices)
                self.params[code] = (name, choices)
            forbidden += [_recode(f, codes, f"{where}: forbidden[{i}]")
                          for i, f in enumerate(entry_forbidden)]
        try:
            self.space = Space(dims, forbidden=forbidden)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{label}: {exc}") from None

    def decode(self, params: dict) -> dict:
        """The estimator's parameters of a configuration of the coded space: the active ones,
        sorted by name as scikit-learn's samplers give them."""
        out = {}
        for code, v in params.items():
            if code in self.params:
                name, choices = self.params[code]
                out[name] = v if choices is None else choices[v]
        return dict(sorted(out.items()))


class _Fold:
    """One split of a cross-validation splitter, as a splitter of one split: the splits are
    drawn once (at the first call) and split ``k`` is handed out each time."""

    def __init__(self, race: "_Race", k: int):
        self.race, self.k = race, k

    def split(self, X, y=None, groups=None, **params):
        race = self.race
        if race.splits is None:
            cv = check_cv(race.cv, y, classifier=race.classifier)
            race.splits = list(cv.split(X, y, groups=groups, **params))
        return [race.splits[self.k]]

    def get_n_splits(self, X=None, y=None, groups=None, **params):
        return 1


class _Race:
    """What a racing search knows: its candidates, the (candidate, fold) of each fit
    scikit-learn ran (in the order it ran them), each candidate's fold scores and the
    incumbent (the best candidate every fold scored)."""

    def __init__(self, cv, classifier: bool, n_splits: int):
        self.cv, self.classifier, self.n_splits = cv, classifier, n_splits
        self.splits = None
        self.candidates: list[dict] = []
        self.rows: list[tuple[int, int]] = []
        self.pending: list[tuple[int, int]] = []  # the rows of the call under way
        self.scores: list[np.ndarray] = []  # the optimised metric of each fold (NaN: not run)
        self.incumbent: int | None = None

    def add(self, candidates: list) -> list[int]:
        first = len(self.candidates)
        self.candidates += candidates
        self.scores += [np.full(self.n_splits, np.nan) for _ in candidates]
        return list(range(first, len(self.candidates)))

    def drop_last(self, n: int) -> None:
        """Forget the last ``n`` candidates (none of their folds ran)."""
        del self.candidates[len(self.candidates) - n:]
        del self.scores[len(self.scores) - n:]

    def behind(self, c: int, k: int, z: float) -> bool:
        """Whether candidate ``c`` is clearly worse than the incumbent on folds ``0..k``: its
        mean paired difference on them below ``-z`` standard errors, the standard error being
        the incumbent's standard deviation over its folds divided by ``sqrt(k + 1)``; from the
        second fold on (``k >= 1``) also a difference just at that bound (at ``z=0``, a tie):
        a candidate must be strictly better than the incumbent to replace it."""
        if self.incumbent is None:
            return False
        inc = self.scores[self.incumbent]
        d = float(np.mean(self.scores[c][:k + 1] - inc[:k + 1]))
        spread = float(np.std(inc, ddof=1)) if self.n_splits > 1 else 0.0
        bound = -z * spread / math.sqrt(k + 1) if spread > 0.0 else 0.0
        # a tie up to rounding: fold differences that cancel leave ~1e-16 of the scores
        tie = 1e-12 * max(1.0, float(np.max(np.abs(inc))))
        return d < bound or (k >= 1 and d <= bound + tie)

    def update_incumbent(self, batch: list[int]) -> None:
        for c in batch:
            s = self.scores[c]
            if np.isfinite(s).all() and (self.incumbent is None or
                                         s.mean() > self.scores[self.incumbent].mean()):
                self.incumbent = c

    def ran(self) -> np.ndarray:
        """Which folds of each candidate ran: a boolean array candidates x folds."""
        out = np.zeros((len(self.candidates), self.n_splits), dtype=bool)
        for c, k in self.rows + self.pending:
            out[c, k] = True
        return out


def _blank(like: dict) -> dict:
    """A fit that did not run, shaped as scikit-learn's record ``like`` of one that did: zero
    scores and times (replaced by NaN in the results)."""
    out = dict(like)
    for key in ("test_scores", "train_scores"):
        if key in out:
            v = out[key]
            out[key] = {m: 0.0 for m in v} if isinstance(v, dict) else 0.0
    out.update(fit_time=0.0, score_time=0.0, n_test_samples=0, fit_error=None)
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
        :class:`~mfbo.Categorical` or :class:`~mfbo.Ordinal`, any of them with a ``when=``
        condition on parameters listed before it; ``(low, high)`` (an Integer when both are
        ints, else a Real); or a list of choices, which may be any objects (estimators, None,
        ...; a condition compares them by identity or equality).  An :class:`mfbo.Space` is
        taken with its conditions and forbidden configurations.  A list of such spaces is, as
        for ``RandomizedSearchCV``, several sub-spaces: here one conditional space whose first
        choice is the entry, each entry's parameters active only under it, so one surrogate
        learns from every candidate (e.g. ``[{"clf": [SVC()], "clf__C": Real(1e-3, 1e3,
        log=True)}, {"clf": [RandomForestClassifier()], "clf__max_depth": Integer(2, 20)}]``
        for a pipeline's step ``clf``).  A candidate holds its entry's active parameters only,
        so ``cv_results_`` masks the others' ``param_<name>`` and ``params`` and
        ``best_params_`` leave them out, as scikit-learn does.  A list that has ``(space,
        n_iter)`` pairs among its entries instead searches its spaces one after the other with
        their own optimizer, each for its own ``n_iter`` (``n_iter`` for an entry without), as
        scikit-optimize's ``BayesSearchCV`` does.
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
    racing : bool, default=False
        Cross-validate each candidate fold by fold and stop one whose first folds are clearly
        worse than the incumbent's (the best candidate so far that every fold scored) on the
        same folds, as SMAC3's intensification and irace's racing do: after fold ``k`` a
        candidate stops when its mean paired difference to the incumbent over folds ``0..k``
        is below ``-racing_z`` times the incumbent's standard deviation over its folds
        divided by ``sqrt(k + 1)``, or from the second fold on is not above it: at
        ``racing_z=0`` a candidate tied with the incumbent on its first two or more folds
        stops, since only a strictly better one replaces the incumbent (SMAC3 rejects a
        challenger that is not strictly better on the shared instances).  The folds are drawn
        once, so every candidate meets the same ones.  ``cv_results_`` keeps every candidate:
        ``split<k>_test_<metric>`` is NaN for a fold that did not run, ``n_splits_run`` counts
        the folds that did, the means and standard deviations are over those folds, and the
        ranks put the candidates that ran every fold first, so ``best_params_`` and the refit
        estimator are those of the best candidate every fold scored.  The optimizer is told a
        stopped candidate's mean over the folds it ran, as SMAC3's run history averages a
        configuration's costs over the instances it ran.
    racing_z : float, default=0.0
        How far behind the incumbent a candidate must be to stop, in the standard errors above
        (larger: fewer stops).  At 0, a candidate stops as soon as its mean over the folds it
        ran is below the incumbent's on the same folds, or equal to it over two folds or more.
    objectives : list of str or None, default=None
        With multi-metric scoring, two or more of its scorers' names to optimise together,
        each maximised (scikit-learn's scores are greater-is-better): the optimizer is told
        every one's ``mean_test_<name>`` and searches their Pareto front (:class:`mfbo.
        Optimizer`'s ``directions``; ``optimizer_kwargs`` may set ``pareto_method`` and
        ``outcome_options``), and
        ``pareto_front_`` lists the candidates on it.  ``refit`` still chooses the one
        candidate refitted (a scorer's name, a callable of ``cv_results_``, or False: none).
        Not with ``racing``, which compares one score.  None: the optimizer maximises the
        one score above.

    Attributes
    ----------
    cv_results_, best_estimator_, best_score_, best_params_, best_index_, scorer_, n_splits_,
    refit_time_, multimetric_
        As for ``RandomizedSearchCV``.
    pareto_front_ : ndarray of int
        With ``objectives``: the indices (rows of ``cv_results_``) of the candidates that no
        other candidate scored at least as well on every objective and better on one
        (candidates with a NaN score left out), in row order.
    """

    _parameter_constraints: dict = {
        **BaseSearchCV._parameter_constraints,
        "search_spaces": [dict, list, Space],
        "n_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_points": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "surrogate": "no_validation",
        "optimizer_kwargs": [dict, None],
        "racing": ["boolean"],
        "racing_z": [Interval(numbers.Real, 0, None, closed="left")],
        "objectives": [list, None],
    }

    def __init__(self, estimator, search_spaces, *, n_iter=50, scoring=None, n_jobs=None,
                 refit=True, cv=None, verbose=0, pre_dispatch="2*n_jobs", random_state=None,
                 error_score=np.nan, return_train_score=False, n_points=1,
                 surrogate="mondrian", optimizer_kwargs=None, racing=False, racing_z=0.0,
                 objectives=None):
        self.search_spaces = search_spaces
        self.objectives = objectives
        self.racing = racing
        self.racing_z = racing_z
        self.n_iter = n_iter
        self.random_state = random_state
        self.n_points = n_points
        self.surrogate = surrogate
        self.optimizer_kwargs = optimizer_kwargs
        super().__init__(estimator=estimator, scoring=scoring, n_jobs=n_jobs, refit=refit,
                         cv=cv, verbose=verbose, pre_dispatch=pre_dispatch,
                         error_score=error_score, return_train_score=return_train_score)

    def __sklearn_clone__(self):
        """A clone whose ``search_spaces`` are copied as one whole: a choice that a condition
        compares by identity (an estimator) stays the very object of its list of choices, where
        scikit-learn's ``clone`` would copy the two apart."""
        out = super().__sklearn_clone__()
        out.search_spaces = copy.deepcopy(self.search_spaces)
        return out

    def _spaces(self) -> list[tuple[_Coded, int]]:
        """The coded spaces searched one after the other, each with its ``n_iter``."""
        spaces = self.search_spaces
        if not (isinstance(spaces, list) and any(isinstance(e, tuple) for e in spaces)):
            return [(_Coded(spaces), self.n_iter)]
        out = []
        for j, entry in enumerate(spaces):
            n_iter = self.n_iter
            if isinstance(entry, tuple):
                if len(entry) != 2 or isinstance(entry[1], bool) or not isinstance(
                        entry[1], numbers.Integral) or entry[1] < 1:
                    raise ValueError(f"search_spaces entries given as tuples must be (space, "
                                     f"n_iter) with n_iter a positive int, got {entry!r}.")
                entry, n_iter = entry
            out.append((_Coded(entry, f"search_spaces[{j}]"), int(n_iter)))
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

    @contextlib.contextmanager
    def _subtask(self, parent, name: str, n: int, sequential: bool = False):
        """The callback context of a subtask ``name`` of ``parent`` with ``n`` subtasks of its
        own (scikit-learn >= 1.9; None without a parent)."""
        if parent is None:
            yield None
            return
        ctx = parent.subcontext(task_name=name, max_subtasks=n,
                                sequential_subtasks=sequential
                                ).call_on_fit_task_begin(estimator=self)
        try:
            yield ctx
        finally:
            ctx.call_on_fit_task_end(estimator=self)

    @staticmethod
    def _evaluate(evaluate_candidates, candidates: list, ctx, cv=None) -> dict:
        """Cross-validate ``candidates`` on ``cv`` (None: the search's ``cv``) under the
        callback context ``ctx`` (if any)."""
        if ctx is None:
            return evaluate_candidates(candidates, cv=cv)
        return evaluate_candidates(candidates, cv=cv, callback_ctx=ctx)

    def _race_batch(self, evaluate_candidates, candidates: list,
                    search_ctx) -> tuple[dict, np.ndarray]:
        """Cross-validate one batch fold by fold, stopping the candidates that fall behind
        the incumbent (see ``racing``); the results and the score to tell of each candidate
        (its mean over the folds it ran; NaN if one failed).  scikit-learn is asked for one
        fold at a time (its ``n_splits_`` is 1 during the call); :meth:`_format_results` puts
        the fits back in place."""
        race: _Race = self._race
        with self._subtask(search_ctx, "batch", race.n_splits, sequential=True) as ctx:
            return self._race_folds(evaluate_candidates, race, race.add(candidates), ctx)

    def _race_folds(self, evaluate_candidates, race: "_Race", batch: list[int],
                    ctx) -> tuple[dict, np.ndarray]:
        """The folds of :meth:`_race_batch`, for the candidates ``batch`` of ``race``."""
        alive, failed, results = list(batch), set(), None
        for k in range(race.n_splits):
            if not alive:
                break
            race.pending = [(c, k) for c in alive]
            n_splits, self.n_splits_ = self.n_splits_, 1
            try:
                with self._subtask(ctx, "fold", len(alive)) as fold_ctx:
                    results = self._evaluate(evaluate_candidates,
                                             [race.candidates[c] for c in alive], fold_ctx,
                                             cv=_Fold(race, k))
            except ValueError as exc:
                race.pending = []
                if k == 0:
                    race.drop_last(len(batch))  # no fold of theirs ran: as without racing
                if k == 0 or not _ALL_FAILED.search(str(exc)):
                    raise
                warnings.warn(f"Every fit of fold {k} of the candidate(s) "
                              f"{[race.candidates[c] for c in alive]} failed; they are failed "
                              f"trials of the optimizer.{exc}", FitFailedWarning, stacklevel=3)
                failed.update(alive)
                break
            finally:
                self.n_splits_ = n_splits
            race.rows += race.pending
            race.pending = []
            name = self._metric(results)[len("mean_"):]
            for c in alive:
                race.scores[c][k] = results[f"split{k}_{name}"][c]
            alive = [c for c in alive if np.isfinite(race.scores[c][k])
                     and not (k + 1 < race.n_splits and race.behind(c, k, self.racing_z))]
        race.update_incumbent(batch)
        values = np.asarray(results[self._metric(results)][batch], dtype=float)
        values[[i for i, c in enumerate(batch) if c in failed]] = np.nan
        return results, values

    def _format_results(self, candidate_params, n_splits, out, more_results=None):
        race = self.__dict__.get("_race")
        if race is None:
            return super()._format_results(candidate_params, n_splits, out, more_results)
        # the fits in place: candidate by candidate, fold by fold, a blank for a fold not run
        n = race.n_splits
        rows = race.rows + race.pending
        placed = [None] * (len(race.candidates) * n)
        for (c, k), fit in zip(rows, out):
            placed[c * n + k] = fit
        blank = _blank(out[0])
        placed = [blank if fit is None else fit for fit in placed]
        results = super()._format_results(race.candidates, n, placed, more_results)
        ran = race.ran()
        results["n_splits_run"] = ran.sum(axis=1)
        for key in ("fit_time", "score_time"):
            times = np.array([fit[key] for fit in placed], dtype=float).reshape(-1, n)
            self._over_run_folds(results, key, np.where(ran, times, np.nan), ran)
        for key in [k[len("split0_"):] for k in results if k.startswith("split0_")]:
            scores = np.column_stack([results[f"split{k}_{key}"] for k in range(n)])
            scores = np.where(ran, scores, np.nan)
            for k in range(n):
                results[f"split{k}_{key}"] = scores[:, k]
            self._over_run_folds(results, key, scores, ran)
        return results

    @staticmethod
    def _over_run_folds(results: dict, key: str, values: np.ndarray, ran: np.ndarray) -> None:
        """``mean_<key>``, ``std_<key>`` (and ``rank_<key>`` if scikit-learn ranks it) over the
        folds each candidate ran; the ranks put the candidates that ran every fold first."""
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # (a candidate of failed fits)
            mean = np.nanmean(np.where(ran, values, np.nan), axis=1)
            std = np.nanstd(np.where(ran, values, np.nan), axis=1)
        results[f"mean_{key}"], results[f"std_{key}"] = mean, std
        if f"rank_{key}" not in results:
            return
        complete = ran.all(axis=1)
        # NaN (failed) last, as scikit-learn ranks it; within each group by the mean
        worst = np.nanmin(mean) - 1 if np.isfinite(mean).any() else 0.0
        filled = np.where(np.isfinite(mean), mean, worst)
        order = np.where(complete, 0, 1)
        span = (np.max(filled) - np.min(filled) + 1) if len(filled) else 1.0
        results[f"rank_{key}"] = rankdata(order * span * 2 - filled, method="min").astype(
            np.int32)

    def _objectives(self, multimetric: bool) -> tuple[str, ...] | None:
        """The scorers optimised together (None: one score), checked against ``scoring``
        where its names are known before a fit (a dict or a list of names)."""
        objectives = self.objectives
        if objectives is None:
            return None
        if not multimetric:
            raise ValueError(f"objectives names scorers of multi-metric scoring (scoring as a "
                             f"dict, a list of names or a callable returning a dict), got "
                             f"scoring={self.scoring!r}.")
        if len(objectives) < 2 or not all(isinstance(n, str) for n in objectives) or \
                len(set(objectives)) != len(objectives):
            raise ValueError(f"objectives must list two or more distinct scorer names, got "
                             f"{objectives!r}.")
        if self.racing:
            raise ValueError("objectives cannot be used with racing=True: racing compares "
                             "one score.")
        if isinstance(self.scoring, (dict, list, tuple)):
            known = list(self.scoring)
            missing = [n for n in objectives if n not in known]
            if missing:
                raise ValueError(f"objectives names {missing!r}, which scoring does not: its "
                                 f"scorers are {known!r}.")
        return tuple(objectives)

    def _scores(self, results: dict, n: int, objectives) -> list:
        """What the optimizer is told of the last ``n`` candidates of ``results``: the score
        it maximises, or with ``objectives`` a dict of theirs."""
        if objectives is None:
            return list(np.asarray(results[self._metric(results)][-n:], dtype=float))
        missing = [o for o in objectives if f"mean_test_{o}" not in results]
        if missing:
            metrics = sorted(k[len("mean_test_"):] for k in results
                             if k.startswith("mean_test_"))
            raise ValueError(f"objectives names {missing!r}, which scoring does not: its "
                             f"scorers are {metrics!r}.")
        columns = {o: np.asarray(results[f"mean_test_{o}"][-n:], dtype=float)
                   for o in objectives}
        return [{o: float(columns[o][i]) for o in objectives} for i in range(n)]

    def fit(self, X, y=None, **params):
        """As ``RandomizedSearchCV.fit``; with ``objectives``, also sets ``pareto_front_``."""
        super().fit(X, y, **params)
        if self.objectives is not None:
            scores = np.column_stack([self.cv_results_[f"mean_test_{o}"]
                                      for o in self.objectives]).astype(float)
            rows = np.flatnonzero(np.isfinite(scores).all(axis=1))
            self.pareto_front_ = rows[non_dominated(-scores[rows])]
        return self

    def _run_search(self, evaluate_candidates, *, callback_ctx=None):
        spaces = self._spaces()
        multimetric = isinstance(self.scoring, (dict, list, tuple))
        objectives = self._objectives(multimetric or callable(self.scoring))
        if multimetric and objectives is None and not isinstance(self.refit, str):
            raise ValueError(f"With multi-metric scoring, MondrianSearchCV optimises the metric "
                             f"that refit names: refit must be a scorer name, got "
                             f"{self.refit!r}.")
        options = dict(self.optimizer_kwargs or {})
        for name in ("space", "random_state", "storage", "study_name", "direction",
                     "directions"):
            if name in options:
                raise ValueError(f"optimizer_kwargs cannot set {name!r}; MondrianSearchCV sets "
                                 f"it.")
        seeds = seed_sequence(self.random_state).spawn(len(spaces))
        search_ctx = None
        if callback_ctx is not None:
            n_batches = sum(math.ceil(n / self.n_points) for _, n in spaces)
            search_ctx = callback_ctx.subcontext(task_name="search", max_subtasks=n_batches
                                                 ).call_on_fit_task_begin(estimator=self)
        if self.racing:
            self._race = _Race(self.cv, is_classifier(self.estimator), self.n_splits_)
        try:
            self._search(spaces, seeds, options, evaluate_candidates, search_ctx, objectives)
        finally:
            self.__dict__.pop("_race", None)
        if search_ctx is not None:
            search_ctx.call_on_fit_task_end(estimator=self)

    def _search(self, spaces, seeds, options, evaluate_candidates, search_ctx,
                objectives=None) -> None:
        """Run the optimizers of ``spaces`` one after the other (see :meth:`_run_search`)."""
        direction = {"direction": "maximize"} if objectives is None else {
            "directions": {o: "maximize" for o in objectives}}
        recorded, failure = 0, None
        for (coded, n_iter), seed in zip(spaces, seeds):
            kwargs = dict(options)
            if "n_initial" not in kwargs:
                kwargs["n_initial"] = as_recipe(self.surrogate).initial_design.size_within(
                    len(coded.space), n_iter)
            opt = Optimizer(coded.space, surrogate=self.surrogate, random_state=seed,
                            **direction, **kwargs)
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
                        if self.racing:
                            _, scores = self._race_batch(evaluate_candidates, candidates,
                                                         search_ctx)
                        else:
                            with self._subtask(search_ctx, "batch",
                                               len(candidates) * self.n_splits_) as ctx:
                                results = self._evaluate(evaluate_candidates, candidates, ctx)
                            scores = self._scores(results, len(trials), objectives)
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
                    for t, score in zip(trials, scores):
                        # NaN (some candidates of a batch failed, error_score=nan): failed
                        opt.tell(t, score)
            finally:
                opt.close()
        if not recorded and failure is not None:
            raise failure
