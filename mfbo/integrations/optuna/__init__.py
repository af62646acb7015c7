"""mfbo inside optuna, and trials moved between the two.

- :class:`MondrianSampler`: an optuna sampler whose relative sampling is mfbo's Bayesian
  optimisation with an online Mondrian forest, define-by-run conditional parameters included
  (their conditions inferred from the trials, :mod:`.structure`);
- :class:`MondrianPruner`: an optuna pruner stopping a trial that an online Mondrian forest over
  (configuration, budget) gives a low chance of beating the best complete trial;
- :func:`from_optuna`: an :class:`mfbo.Optimizer` warm-started with an optuna study's trials;
- :func:`to_optuna`: an mfbo result's trials added to an optuna study
  (also ``mfbo.to_optuna``).

optuna is optional (``pip install "mfbo[optuna]"``); it is imported with this module, which
mfbo itself imports only when one of these is used.
"""

import importlib

try:
    importlib.import_module("optuna")
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('mfbo.integrations.optuna needs the optuna package; install it with: '
                      'pip install "mfbo[optuna]" (or pip install optuna)') from exc

from .pruner import MondrianPruner
from .sampler import MondrianSampler
from .transfer import from_optuna, to_optuna

__all__ = ["MondrianSampler", "MondrianPruner", "from_optuna", "to_optuna"]
