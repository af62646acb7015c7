"""What an objective of :func:`mfbo.minimize` that declares a parameter named ``trial`` is given:
a :class:`TrialHandle` to report intermediate values through and ask whether to stop."""

from __future__ import annotations

import inspect

__all__ = ["TrialHandle", "takes_trial"]


def takes_trial(f) -> bool:
    """Whether ``f`` declares a parameter named ``trial`` (by name, not through ``**kwargs``):
    :func:`mfbo.minimize` then calls it with a :class:`TrialHandle` as ``trial=``."""
    try:
        params = inspect.signature(f).parameters
    except (TypeError, ValueError):  # no signature to read (some builtins): it takes none
        return False
    p = params.get("trial")
    return p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)


class TrialHandle:
    """The running trial, as an objective of :func:`mfbo.minimize` sees it (Optuna's
    ``trial.report`` and ``trial.should_prune``).

    ``params`` is the configuration (a copy; the objective is also called with it as keyword
    arguments); ``id`` the trial's id.  :meth:`report` records an intermediate value,
    :meth:`should_prune` asks the study's pruner whether to stop; the objective stops by
    raising :class:`~mfbo.TrialPruned`.  A handle works in the process of its optimizer (a
    thread of it included): it cannot be pickled to a worker process.
    """

    def __init__(self, optimizer, trial):
        self._optimizer = optimizer
        self._trial = trial

    @property
    def id(self) -> int:
        return self._trial.id

    @property
    def params(self) -> dict:
        return dict(self._trial.params)

    def report(self, value: float, step: int) -> None:
        """Record ``value`` (finite, in the objective's units) measured at ``step`` (a
        non-negative integer); see :meth:`mfbo.Optimizer.report`."""
        self._optimizer.report(self._trial.id, step, value)

    def should_prune(self) -> bool:
        """Whether the study's pruner says to stop now (raise :class:`~mfbo.TrialPruned`
        then); see :meth:`mfbo.Optimizer.should_prune`."""
        return self._optimizer.should_prune(self._trial.id)

    def __reduce__(self):
        raise TypeError("a trial handle cannot leave the process of its study: an objective "
                        "taking a `trial` argument runs in the process that calls minimize "
                        "(n_workers=1, or an executor running in this process, such as a "
                        "ThreadPoolExecutor).")

    def __repr__(self):
        return f"TrialHandle(id={self.id}, params={self._trial.params!r})"
