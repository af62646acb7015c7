"""mfbo: Bayesian optimization with an online Mondrian forest surrogate.

>>> import mfbo
>>> result = mfbo.minimize(lambda x, y: (x - 1) ** 2 + y ** 2,
...                        {"x": (-5.0, 5.0), "y": (-5.0, 5.0)}, n_calls=30,
...                        random_state=0, progress_bar=False)       # doctest: +SKIP
"""

from surrogates._core.exports import MovedModules

from .optimize import Objective, Optimizer, StudyExhausted, minimize, objective
from .proposal import RECIPES, Model, Recipe, get_recipe, register_surrogate
from .optimize import pruners
from .optimize.pruners import (HyperbandPruner, MedianPruner, NopPruner, PercentilePruner,
                               Pruner, SuccessiveHalvingPruner)
from .results import (Importance, OptimizeResult, plot_convergence, plot_evaluations,
                      plot_importance, plot_intermediate_values, plot_objective)
from .space import (AllOf, AnyOf, Between, Categorical, Condition, Equals, Greater, In, Integer,
                    Less, NotEquals, Ordinal, Real, Relation, Space)
from .storage import InMemoryStorage, SQLiteStorage, StorageLocked, StorageUnavailable
from .study import Study, Trial, TrialFinished, TrialPruned

__version__ = "0.1.0"

#: the named surrogates and their recipes (read-only; add one with :func:`register_surrogate`)
SURROGATES = RECIPES

#: names imported on first use: scikit-learn's search module and optuna are slow to import.
#: ``from_configspace``, ``to_configspace``, ``from_optuna`` and ``to_optuna`` stay out of
#: ``__all__``: ConfigSpace and optuna are optional, and ``from mfbo import *`` must work without
#: them.  These hooks are the only place in mfbo that reaches into :mod:`mfbo.integrations`.
_LAZY = {"MondrianSearchCV": "mfbo.integrations.sklearn",
         "SQLAlchemyStorage": "mfbo.storage.sql",
         "from_configspace": "mfbo.integrations.configspace",
         "to_configspace": "mfbo.integrations.configspace",
         "from_optuna": "mfbo.integrations.optuna",
         "to_optuna": "mfbo.integrations.optuna"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mfbo' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["AllOf", "AnyOf", "Between", "Categorical", "Condition", "Equals", "Greater", "In",
           "Less", "NotEquals", "Relation", "Importance", "Integer", "InMemoryStorage", "Model",
           "MondrianSearchCV", "Objective", "OptimizeResult", "Optimizer", "Ordinal", "RECIPES",
           "Real", "Recipe", "SQLAlchemyStorage", "SQLiteStorage", "StorageLocked",
           "StorageUnavailable", "SURROGATES", "Space", "Study", "StudyExhausted", "Trial",
           "TrialFinished", "TrialPruned", "Pruner", "NopPruner", "MedianPruner",
           "PercentilePruner", "SuccessiveHalvingPruner", "HyperbandPruner", "get_recipe",
           "minimize", "objective", "plot_convergence", "plot_evaluations", "plot_importance",
           "plot_intermediate_values", "plot_objective", "register_surrogate", "__version__"]

# ``mfbo.pruners`` names the pruners' package (``from mfbo.pruners import MedianPruner``, as in
# Optuna), which lives in the room of the optimizer that consults them
MovedModules.install({f"{__name__}.pruners": f"{__name__}.optimize.pruners"})
# where the modules of the flat 0.1 layout live now
MovedModules.install({f"{__name__}.{old}": f"{__name__}.{new}" for old, new in {
    "api": "optimize.minimize", "optimizer": "optimize.optimizer", "parallel": "optimize.workers",
    "checks": "_core.arguments", "candidates": "space.candidates", "trial": "study.trial",
    "liveness": "study.ownership", "heartbeat": "study.ownership", "models": "proposal.models",
    "recipes": "proposal.recipes", "local_model": "proposal.steps.local_models",
    "parzen": "proposal.steps.parzen", "plots": "results.plots", "figure": "results._figure",
    "importance": "results.importance", "dependence": "results.dependence",
    "surface": "results.surface", "study_command": "cli.study"}.items()})
