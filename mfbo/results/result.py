"""Results of a study: best configuration, full history as a DataFrame, figures and the
importance of each dimension."""

from __future__ import annotations

import os

import numpy as np

from .importance import Importance, functional_anova
from .plots import (plot_convergence, plot_evaluations, plot_importance,
                    plot_intermediate_values, plot_objective)
from ..study.objectives import Objectives, check_direction
from ..study.pareto import hypervolume_history, pareto_trials
from .pareto_plots import plot_hypervolume_history, plot_pareto_front
from .surface import response_surface

__all__ = ["OptimizeResult", "STUDY_COLUMNS", "unique_names", "plot_convergence",
           "plot_evaluations", "plot_intermediate_values", "plot_objective", "plot_importance"]

#: the columns of :meth:`OptimizeResult.to_dataframe` that describe a trial rather than its
#: parameters or extra fields; they always have these names
STUDY_COLUMNS = ("id", "value", "state", "error", "asked_at", "start", "end", "duration",
                 "worker", "origin")


def unique_names(names, taken, prefix: str) -> dict:
    """A distinct name for each of ``names`` (distinct themselves), none of them in ``taken``:
    its own name when that is not in ``taken``, else ``prefix`` + its name, prefixed again
    while that is taken already (by ``taken`` or by another of ``names``).  Names that keep
    their own come first, so a name never depends on whether another one clashed; the result
    depends only on ``names`` (and their order), ``taken`` and ``prefix``."""
    names = list(names)
    taken = set(taken)
    chosen = {n: n for n in names if n not in taken}
    taken.update(chosen.values())
    for n in names:
        if n in chosen:
            continue
        name = f"{prefix}{n}"
        while name in taken:
            name = prefix + name
        chosen[n] = name
        taken.add(name)
    return {n: chosen[n] for n in names}


def _check_path(path) -> None:
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path or None, got {type(path).__name__}.")


class OptimizeResult:
    """What :func:`mfbo.minimize` returns (and :meth:`Optimizer.result`).

    Parameters
    ----------
    space : Space
    trials : list of Trial
    direction : {"minimize", "maximize"}, default="minimize"
        The study's: which value is best.  Values are kept as the objective returned them.
    objectives : Objectives, optional
        A study of several objectives or with constraints (in place of ``direction``).  With
        several objectives there is no single best trial (``best_*`` are None): the best
        trials are the Pareto front (:attr:`best_trials`, :meth:`pareto_front`), and
        :meth:`for_objective` gives one objective's view for its figures and importance.
        With constraints the best trial is the best feasible one.

    Attributes
    ----------
    trials : list of Trial
        Every trial, in the order asked.
    direction : str
    best_value : float or None
        The best value of a complete trial, the smallest or with ``direction="maximize"`` the
        largest (None if none completed).
    best_params : dict or None
        The best trial's parameters (in a conditional space its active ones only).
    best_trial : Trial or None
    x_iters, func_vals
        scikit-optimize-style views: params dicts and values of the finished trials
        (``nan`` for failed and pruned ones).  In a conditional space a params dict holds the
        trial's
        active parameters only; no value is made up for the others.
    """

    def __init__(self, space, trials: list, direction: str = "minimize",
                 objectives: Objectives | None = None):
        self.space = space
        self.trials = trials
        if objectives is None:
            objectives = Objectives((check_direction(direction),))
        elif not isinstance(objectives, Objectives):
            raise TypeError(f"objectives must be an Objectives, got {objectives!r}.")
        #: the study's objectives and constraints
        self.objectives = objectives
        self.direction = check_direction(objectives.directions[0]) if objectives.k == 1 \
            else None
        sign = float(objectives.signs[0])
        done = [t for t in trials if t.feasible] if objectives.k == 1 else []
        self.best_trial = min(done, key=lambda t: (sign * t.value, t.id)) if done else None
        self.best_value = self.best_trial.value if self.best_trial else None
        self.best_params = dict(self.best_trial.params) if self.best_trial else None

    @property
    def best_trials(self) -> list:
        """The complete (feasible) trials no other dominates in every objective: the Pareto
        front, in id order (with one objective: the trials tied at the best value)."""
        return pareto_trials(self.trials, self.objectives)

    def pareto_front(self):
        """:attr:`best_trials` as rows of :meth:`to_dataframe`."""
        df = self.to_dataframe()
        return df[df["id"].isin([t.id for t in self.best_trials])].reset_index(drop=True)

    def hypervolume_history(self, reference) -> np.ndarray:
        """The hypervolume the feasible complete trials dominate below ``reference`` (one
        value per objective, in the values' own units: worse than every value that
        matters), after each finished trial in the order they finished."""
        return hypervolume_history(self.trials, self.objectives, reference)

    def for_objective(self, objective) -> "OptimizeResult":
        """One objective's view of a study of several (``objective``: its name or
        position): a result of one value whose trials' ``value`` is that objective's, for its
        figures, partial dependence and importance (constraints still decide which trials are
        feasible)."""
        import dataclasses

        o = self.objectives
        labels = list(o.labels)
        if isinstance(objective, str) and objective in labels:
            j = labels.index(objective)
        elif isinstance(objective, int) and not isinstance(objective, bool) \
                and -o.k <= objective < o.k:
            j = objective % o.k
        else:
            raise ValueError(f"objective must be one of {labels} or a position below {o.k}, "
                             f"got {objective!r}.")
        one = Objectives((o.directions[j],), None, o.constraints)
        trials = [dataclasses.replace(t, value=None if t.values is None else t.values[j],
                                      values=None if t.values is None else (t.values[j],))
                  for t in self.trials]
        return OptimizeResult(self.space, trials, objectives=one)

    def estimated_best(self, n_estimators: int = 10, random_state=0,
                       min_samples_split: int = 5) -> dict:
        """The evaluated configuration that a Mondrian forest fitted to every complete trial
        (:func:`mfbo.results.surface.fit_forest`; a node of fewer than ``min_samples_split``
        trials is not split, so that a prediction pools neighbours) predicts best, rather
        than the one that was observed best: for a noisy objective (a cross-validated score)
        the observed best is often a lucky draw, while the forest's mean pools each
        configuration's neighbours and its repeated evaluations (a configuration told
        several times, e.g. with :meth:`mfbo.Optimizer.tell` and a params dict, is one
        candidate).  With constraints,
        only configurations evaluated feasible are candidates.

        Returns a dict: ``params``, ``estimate`` and ``std`` (the forest's mean and standard
        deviation there, in the values' units), ``observed`` (the mean of its evaluations),
        ``n_evaluations`` and ``trials`` (their ids).  :attr:`best_trial` stays the observed
        best."""
        from ..study.study import params_key
        from .surface import fit_forest

        if self.objectives.multi:
            raise ValueError("result has several objectives; use for_objective(name)."
                             "estimated_best().")
        forest = fit_forest(self, random_state=random_state, n_estimators=n_estimators,
                            min_samples_split=min_samples_split)
        groups: dict = {}
        for t in self.trials:
            if t.feasible:
                groups.setdefault(params_key(t.params), []).append(t)
        if not groups:
            raise ValueError("result has no complete feasible trial.")
        members = list(groups.values())
        U = self.space.to_unit([g[0].params for g in members])
        mean, std = forest.predict(U, return_std=True)
        sign = float(self.objectives.signs[0])
        i = min(range(len(members)), key=lambda j: (sign * mean[j], members[j][0].id))
        chosen = members[i]
        return {"params": dict(chosen[0].params), "estimate": float(mean[i]),
                "std": float(std[i]), "observed": float(np.mean([t.value for t in chosen])),
                "n_evaluations": len(chosen), "trials": [t.id for t in chosen]}

    @property
    def finished(self) -> list:
        return [t for t in self.trials if t.state != "pending"]

    @property
    def x_iters(self) -> list[dict]:
        return [t.params for t in self.finished]

    @property
    def func_vals(self) -> np.ndarray:
        """The finished trials' values (nan unless complete); with several objectives one
        row per trial, one column per objective."""
        if self.objectives.multi:
            return np.array([t.values if t.values is not None else [np.nan] * self.objectives.k
                             for t in self.finished], dtype=float).reshape(-1, self.objectives.k)
        return np.array([t.value if t.value is not None else np.nan for t in self.finished])

    @property
    def n_failed(self) -> int:
        return sum(t.state == "failed" for t in self.trials)

    @property
    def n_pruned(self) -> int:
        """How many trials were stopped early (state ``"pruned"``)."""
        return sum(t.state == "pruned" for t in self.trials)

    def intermediate_values(self):
        """The values the trials reported (:meth:`mfbo.Optimizer.report`) as a DataFrame: one
        row per trial that reported, indexed by trial id, one column per step (in order), NaN
        where the trial reported nothing at that step.  The trials' states are in
        :meth:`to_dataframe`."""
        import pandas as pd

        reported = {t.id: t.intermediate_values for t in self.trials if t.intermediate_values}
        steps = sorted({s for values in reported.values() for s in values})
        return pd.DataFrame([[v.get(s, np.nan) for s in steps] for v in reported.values()],
                          index=pd.Index(list(reported), name="id"),
                          columns=pd.Index(steps, name="step"), dtype=float)

    def best_so_far(self) -> np.ndarray:
        """Best value after each finished trial (the running minimum, or maximum when
        maximising), in the order they finished (nan before the first success)."""
        if self.objectives.multi:
            raise ValueError("a study of several objectives has no best value; see "
                             "hypervolume_history, or for_objective(name).best_so_far().")
        order = sorted(self.finished, key=lambda t: (t.end or 0.0, t.id))
        worst = np.inf if self.direction == "minimize" else -np.inf
        vals = np.array([t.value if t.feasible else worst for t in order])
        running = np.minimum if self.direction == "minimize" else np.maximum
        best = running.accumulate(vals) if vals.size else vals
        return np.where(np.isinf(best), np.nan, best)

    def column_names(self) -> tuple[dict, dict]:
        """``(params, extra)``: the column of :meth:`to_dataframe` holding each parameter
        (``{name: column}``, in the space's order) and each extra field (``{key: column}``,
        in the order the trials first return them)."""
        params = unique_names(self.space.names, STUDY_COLUMNS, "param_")
        keys = dict.fromkeys(k for t in self.trials for k in (t.extra or {}))
        taken = (*STUDY_COLUMNS, *params.values(), *self.outcome_columns(params).values())
        extra = unique_names(keys, taken, "extra_")
        return params, extra

    def outcome_columns(self, params: dict | None = None) -> dict:
        """The columns of :meth:`to_dataframe` holding each objective's value (several or
        named objectives) and each constraint's, and ``feasible`` (with constraints):
        ``{(kind, position): column}``, ``kind`` ``"value"``, ``"constraint"`` or
        ``"feasible"``; named as the objective or constraint unless that clashes with a
        trial's or a parameter's column (then ``outcome_`` + the name)."""
        o = self.objectives
        if params is None:
            params = unique_names(self.space.names, STUDY_COLUMNS, "param_")
        wanted = {}
        if o.multi or o.names is not None:
            wanted.update({("value", j): n for j, n in enumerate(o.labels)})
        wanted.update({("constraint", c): n for c, n in enumerate(o.constraints)})
        if o.m:
            wanted[("feasible", 0)] = "feasible"
        names = unique_names(list(wanted.values()), (*STUDY_COLUMNS, *params.values()),
                             "outcome_")
        return {key: names[n] for key, n in wanted.items()}

    def to_dataframe(self):
        """One row per trial; the columns: ``id``, every parameter (in the space's order),
        ``value``, ``state`` (``"complete"``, ``"pruned"``, ``"failed"`` or ``"pending"``),
        ``error``, ``asked_at``, ``start``, ``end``, ``duration``,
        ``worker``, ``origin`` (what proposed the trial: :attr:`~mfbo.Trial.origin`), then
        every extra field the objective returned (in the order first met;
        empty where a trial has not got it).

        In a conditional space a parameter's cell is NaN where it is inactive in the trial
        (so ``df["C"].isna()`` marks the trials of other branches; pandas holds a numeric
        column with missing cells as floats, an integer parameter's too).

        Every parameter and every extra field has a column of its own, and the column names
        are distinct.  The trial's columns (:data:`STUDY_COLUMNS`) always have the names
        above.  A parameter's column is its name (``df["x"]``) unless that is one of them:
        then ``param_<name>`` (``param_value`` for a parameter named ``value``).  An extra
        field's column is its key unless that is a trial's or a parameter's column: then
        ``extra_<key>``.  A prefixed name that is taken too is prefixed again
        (``param_param_value`` when the space also has a parameter ``param_value``); names
        that do not clash are never changed.  :meth:`column_names` gives the columns.
        """
        import pandas as pd

        params, extra = self.column_names()
        outcomes = self.outcome_columns(params)
        columns = ["id", *params.values(), "value", *outcomes.values(), "state", "error",
                   "asked_at", "start", "end", "duration", "worker", "origin", *extra.values()]
        rows = []
        for t in self.trials:
            row = {"id": t.id, "value": t.value, "state": t.state, "error": t.error,
                   "asked_at": t.asked_at, "start": t.start, "end": t.end,
                   "duration": t.duration, "worker": t.worker, "origin": t.origin}
            row.update((column, t.params.get(n, np.nan)) for n, column in params.items())
            for (kind, j), column in outcomes.items():
                if kind == "feasible":
                    row[column] = t.feasible if t.state == "complete" else None
                else:
                    told = t.values if kind == "value" else t.constraints
                    row[column] = None if told is None else told[j]
            row.update((extra[k], v) for k, v in (t.extra or {}).items())
            rows.append(row)
        return pd.DataFrame(rows, columns=columns)

    def __repr__(self):
        if self.objectives.multi:
            return (f"OptimizeResult(directions={list(self.objectives.directions)!r}, "
                    f"n_best_trials={len(self.best_trials)}, n_trials={len(self.trials)}, "
                    f"n_failed={self.n_failed})")
        direction = "" if self.direction == "minimize" else f", direction={self.direction!r}"
        pruned = f", n_pruned={self.n_pruned}" if self.n_pruned else ""
        return (f"OptimizeResult(best_value={self.best_value!r}, best_params={self.best_params!r},"
                f" n_trials={len(self.trials)}, n_failed={self.n_failed}{pruned}{direction})")

    def _in_units(self, fig, path, retitle: bool = False):
        """A figure of this result labelled in its values' terms (a maximised value is not a
        loss: the axis labels and, with ``retitle``, mfbo's default title say "value"); saved
        to ``path`` once relabelled."""
        if self.direction == "maximize":
            for ax in fig.axes:
                ax.set_ylabel(ax.get_ylabel().replace("loss", "value"))
            suptitle = getattr(fig, "_suptitle", None)
            if retitle and suptitle is not None:
                suptitle.set_text(suptitle.get_text().replace("loss", "value"))
        from ._figure import finish  # (matplotlib: imported by the first figure, not here)

        return finish(fig, path, owned=False) if path is not None else fig

    # -- figures and importance (see mfbo.results.plots); each returns a matplotlib Figure -----------
    def plot_convergence(self, path=None, title: str | None = None, ax=None):
        """Best-so-far value against the number of evaluations (:func:`mfbo.plot_convergence`);
        also saved when ``path`` is given."""
        _check_path(path)
        return self._in_units(plot_convergence([self.best_so_far()], title=title, ax=ax), path)

    def plot_evaluations(self, path=None, title: str | None = None):
        """Each parameter against the value of every complete trial
        (:func:`mfbo.plot_evaluations`); also saved when ``path`` is given."""
        _check_path(path)
        return self._in_units(plot_evaluations(self, title=title), path)

    def plot_pareto_front(self, path=None, title: str | None = None, ax=None):
        """The complete trials in the space of the (two or three) objectives, the Pareto front
        marked (:func:`mfbo.results.pareto_plots.plot_pareto_front`)."""
        _check_path(path)
        return plot_pareto_front(self, path=path, title=title, ax=ax)

    def plot_hypervolume_history(self, reference, path=None, title: str | None = None,
                                 ax=None):
        """:meth:`hypervolume_history` against the number of finished trials
        (:func:`mfbo.results.pareto_plots.plot_hypervolume_history`)."""
        _check_path(path)
        return plot_hypervolume_history(self, reference, path=path, title=title, ax=ax)

    def plot_intermediate_values(self, path=None, title: str | None = None, ax=None):
        """Each trial's reported values against their steps, coloured by state
        (:func:`mfbo.results.plots.plot_intermediate_values`); also saved when ``path`` is
        given."""
        _check_path(path)
        return self._in_units(plot_intermediate_values(self, title=title, ax=ax), path)

    def plot_objective(self, path=None, **kwargs):
        """Partial dependence of the surrogate's mean value on each dimension and pair
        (:func:`mfbo.plot_objective`, which takes the keyword arguments)."""
        _check_path(path)
        return self._in_units(plot_objective(self, **kwargs), path,
                              retitle=kwargs.get("title") is None)

    def plot_importance(self, path=None, **kwargs):
        """The fraction of the surrogate's variance each dimension explains
        (:func:`mfbo.plot_importance`, which takes the keyword arguments)."""
        return plot_importance(self, path=path, **kwargs)

    def importance(self, model=None, pairs: bool = False, method: str = "auto",
                   n_samples: int = 4096, random_state=0) -> Importance:
        """Functional ANOVA of the surrogate's mean loss (:mod:`mfbo.results.importance`): the
        fraction of its variance each dimension (and with ``pairs`` each pair) explains.
        ``model`` None fits a Mondrian forest to the complete trials
        (:func:`mfbo.results.surface.fit_forest`)."""
        f = response_surface(self, model, random_state)
        return functional_anova(f, self.space, pairs=pairs, method=method,
                                n_samples=n_samples, random_state=random_state)
