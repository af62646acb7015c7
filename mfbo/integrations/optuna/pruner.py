"""mfbo's model-based pruning in any optuna study: :class:`MondrianPruner`, an
``optuna.pruners.BasePruner`` applying :class:`mfbo.optimize.pruners.mondrian.CurveForest`."""

from __future__ import annotations

import numpy as np
import optuna
from optuna.trial import FrozenTrial, TrialState

from ...optimize import pruners
from ...optimize.pruners.mondrian import Curve
from ...space import Space
from .distributions import Codec

__all__ = ["MondrianPruner"]


class _Coder:
    """The unit coordinates of a trial's parameters: one coordinate for each parameter of the
    first complete trials (sorted by name), coded as :class:`MondrianSampler` searches it; a
    parameter a trial lacks, or whose distribution differs, is at ``Space.inactive_unit``."""

    def __init__(self, trials: list[FrozenTrial]):
        distributions = {}
        for t in trials:
            for name, d in t.distributions.items():
                if name not in distributions and not d.single():
                    distributions[name] = d
        self.names = sorted(distributions)
        self.codecs = {n: Codec(distributions[n]) for n in self.names}
        self.spaces = {n: Space({n: c.dimension}) for n, c in self.codecs.items()}

    def unit(self, trial: FrozenTrial) -> np.ndarray:
        u = np.full(len(self.names), Space.inactive_unit)
        for j, name in enumerate(self.names):
            codec = self.codecs[name]
            if trial.distributions.get(name) != codec.distribution:
                continue
            value = codec.encode(trial.params[name])
            if value is not None:
                u[j] = self.spaces[name].to_unit([{name: value}])[0, 0]
        return u


class MondrianPruner(optuna.pruners.BasePruner):
    """Stop a trial of an optuna study when an online Mondrian forest over (configuration,
    budget), fed every intermediate value of the study's trials, gives it a probability below
    ``threshold`` of ending better than the best complete trial: the rule of
    :class:`mfbo.pruners.MondrianPruner` (:class:`~mfbo.optimize.pruners.mondrian.CurveForest`
    says how), for any sampler.

    The configuration's coordinates are the parameters of the complete trials seen when the
    warm-up ends, each coded in the unit interval as :class:`MondrianSampler` codes it (a
    categorical one by its choice's index).  The forest is rebuilt from the study's trials, so
    a new pruner on a stored study decides as the one that ran it.  Single-objective studies
    only (optuna refuses intermediate values in the others).

    Parameters are :class:`mfbo.pruners.MondrianPruner`'s.
    """

    def __init__(self, max_resource: int, threshold: float = 0.2, n_startup_trials: int = 3,
                 n_warmup_steps: int = 0, interval_steps: int = 1, *, n_min_trials: int = 1,
                 n_estimators: int = 10, min_samples_split: int = 5, seed: int | None = 0):
        self._pruner = pruners.MondrianPruner(
            max_resource, threshold, n_startup_trials, n_warmup_steps, interval_steps,
            n_min_trials=n_min_trials, n_estimators=n_estimators,
            min_samples_split=min_samples_split, seed=seed)
        #: study name -> the coder of its configurations, fixed when the warm-up ends
        self._coders: dict[str, _Coder] = {}
        #: study name -> trial number -> unit coordinates, of the finished trials
        self._units: dict[str, dict[int, np.ndarray]] = {}

    def prune(self, study: optuna.Study, trial: FrozenTrial) -> bool:
        if len(study.directions) > 1:
            raise ValueError("MondrianPruner prunes single-objective studies only.")
        sign = -1.0 if study.direction == optuna.study.StudyDirection.MAXIMIZE else 1.0
        trials = study.get_trials(deepcopy=False, states=(
            TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING))
        name = study.study_name
        rule = self._pruner.rule(name)
        if name not in self._coders:
            complete = [t for t in trials if t.state == TrialState.COMPLETE]
            if len(complete) < rule.n_startup_trials:
                return False  # (the rule would say so too; the coordinates wait for them)
            self._coders[name] = _Coder(complete)
        coder, units = self._coders[name], self._units.setdefault(name, {})

        def curve(t: FrozenTrial) -> Curve:
            unit = units.get(t.number)
            if unit is None:
                unit = coder.unit(t)
                if t.state != TrialState.RUNNING:
                    units[t.number] = unit
            final = sign * t.value if t.state == TrialState.COMPLETE else None
            return Curve(t.number, unit, t.intermediate_values, sign, final,
                         t.state != TrialState.RUNNING)
        # (the finished trials the rule has read for good are not read again)
        return rule.should_prune([curve(t) for t in trials if t.number not in rule.closed],
                                 curve(trial))

    def __repr__(self):
        return repr(self._pruner)
