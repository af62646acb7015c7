"""How the model scores a point for the steps that maximise over points: the acquisition and
its exploration weights."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from acquisitions import make_acquisition

__all__ = ["Acquisition", "check_finite_number", "checked_kappa"]


def check_finite_number(name: str, v, what: str) -> None:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be {what}, got {v!r}.")
    if not math.isfinite(float(v)):
        raise ValueError(f"{name} must be finite, got {v!r}.")


def checked_kappa(kappa) -> float | tuple[float, ...]:
    """``kappa`` as a float, or a tuple of floats for a cycle (a list is accepted)."""
    what = "a number or a non-empty tuple of numbers"
    if isinstance(kappa, (tuple, list)):
        if not kappa:
            raise ValueError(f"kappa must be {what}, got an empty sequence.")
        for k in kappa:
            check_finite_number("kappa", k, what)
        return tuple(float(k) for k in kappa)
    check_finite_number("kappa", kappa, what)
    return float(kappa)


@dataclass(frozen=True)
class Acquisition:
    """The acquisition function of a recipe and its weights.

    Parameters
    ----------
    name : str, default="ucb"
        Name for :func:`acquisitions.make_acquisition`.
    kappa : float or tuple of float, default=1
        UCB's exploration weight.  A tuple is a cycle: the proposal made from ``n``
        observations uses ``kappa[n % len(kappa)]``.
    xi : float, default=0
        Exploration weight of EI/PI.
    plateau_kappa : float or None, default=None
        UCB's weight (in place of ``kappa``) for every proposal made once any loss has
        repeated exactly, i.e. on a problem with plateaus (None: ``kappa`` throughout).  A
        flat mean gives the acquisition little to go on but the forest's spread; on a
        continuous loss no loss repeats, so there this changes nothing.
    """

    name: str = "ucb"
    kappa: float | tuple[float, ...] = 1.0
    xi: float = 0.0
    plateau_kappa: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "kappa", checked_kappa(self.kappa))
        for k in self.kappas:
            make_acquisition(self.name, kappa=k, xi=self.xi)  # checks all three
        if self.plateau_kappa is not None:
            check_finite_number("plateau_kappa", self.plateau_kappa, "a finite number >= 0")
            if self.plateau_kappa < 0:
                raise ValueError(f"plateau_kappa must be a finite number >= 0, got "
                                 f"{self.plateau_kappa!r}.")
            object.__setattr__(self, "plateau_kappa", float(self.plateau_kappa))

    @property
    def kappas(self) -> tuple[float, ...]:
        """UCB's cycle of exploration weights (one weight: a cycle of one)."""
        return self.kappa if isinstance(self.kappa, tuple) else (self.kappa,)

    def functions(self) -> tuple[list, object | None]:
        """``(cycle, plateau)``: one acquisition function per weight of the kappa cycle, and
        the plateau weight's (None without one)."""
        cycle = [make_acquisition(self.name, kappa=k, xi=self.xi) for k in self.kappas]
        plateau = None if self.plateau_kappa is None else \
            make_acquisition(self.name, kappa=self.plateau_kappa, xi=self.xi)
        return cycle, plateau
