"""What an objective of :func:`mfbo.minimize` that declares a parameter named ``trial`` is given:
a :class:`TrialHandle` to report intermediate values through and ask whether to stop."""

from __future__ import annotations

import inspect

from .channel import ReportClient

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
    raising :class:`~mfbo.TrialPruned`.

    ``link`` is what the calls go to: the :class:`~mfbo.Optimizer` itself in its own process
    (threads included), or a :class:`~mfbo.optimize.channel.ReportClient` of the study's
    process in a worker process of the same host; only the latter can be pickled.
    """

    def __init__(self, link, trial_id: int, params: dict):
        self._link = link
        self._id = int(trial_id)
        self._params = dict(params)

    def __getstate__(self):
        if not isinstance(self._link, ReportClient):
            raise TypeError("this trial handle works in the process of its study only; "
                            "minimize gives worker processes handles of their own.")
        return self.__dict__.copy()

    @property
    def id(self) -> int:
        return self._id

    @property
    def params(self) -> dict:
        return dict(self._params)

    def report(self, value: float, step: int) -> None:
        """Record ``value`` (finite, in the objective's units) measured at ``step`` (a
        non-negative integer); see :meth:`mfbo.Optimizer.report`."""
        self._link.report(self._id, step, value)

    def should_prune(self) -> bool:
        """Whether the study's pruner says to stop now (raise :class:`~mfbo.TrialPruned`
        then); see :meth:`mfbo.Optimizer.should_prune`."""
        return self._link.should_prune(self._id)

    def close(self) -> None:
        """Hang up a worker's connection to the study (nothing to do in its process)."""
        if isinstance(self._link, ReportClient):
            self._link.close()

    def __repr__(self):
        return f"TrialHandle(id={self._id}, params={self._params!r})"
