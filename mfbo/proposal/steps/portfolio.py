"""A portfolio of proposal policies, chosen per proposal by the improvements each produced.

No one policy suits every loss: the model's acquisition wins where the forest is right, and
where it is wrong (a branch of a conditional space whose few design points were poor, a
plateau the forest believes flat, a good region it has not seen) only points it would not
choose find better losses.  A :class:`Portfolio` holds several policies (arms, each an
ordered list of steps) and, for each proposal, draws one by Thompson sampling over their
chances of producing a new best loss: arm ``a`` has a Beta posterior whose successes are the
observations it proposed that improved on every loss observed before them, and whose
failures are those that did not, each weighted by ``discount ** age`` (age: observations
told since), so an arm that has stopped improving loses its share and one not tried for
long regains its prior's.  This is discounted Thompson sampling for a bandit whose rewards
drift (Raj & Kalyani 2017), in the spirit of GP-Hedge's portfolio of acquisitions (Hoffman,
Brochu & de Freitas 2011), credited by what the proposals achieved rather than by the
model's opinion of them.

The arm that proposed an observation is read from its trial's origin (the step that made it,
:attr:`~mfbo.Trial.origin`), so the credit is replayed from the journal, identically after a
study is reopened or by another worker.  An arm owns the origins of its steps; a random
point made because every step of an arm passed has the origin ``"random"``, and is credited
to the arm owning that origin, if any.  The draw uses its own random stream, so the steps
after the portfolio see the same stream whichever arm is drawn.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .base import Context, Point, Step, run_steps

__all__ = ["Arm", "Portfolio"]


@dataclass(frozen=True)
class Arm:
    """One policy of a :class:`Portfolio`: a name, its steps in order, and the Beta prior
    ``(successes, failures)`` of its chance to improve on the best loss (its share before
    it has proposed, and what it returns to when its proposals are old)."""

    name: str
    steps: tuple = ()
    prior: tuple = (1.0, 1.0)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Arm(name=...) must be a non-empty string, got {self.name!r}.")
        if isinstance(self.steps, (str, bytes)) or not hasattr(self.steps, "__iter__"):
            raise TypeError(f"Arm {self.name!r}: steps must be a sequence of steps, got "
                            f"{self.steps!r}.")
        steps = tuple(self.steps)
        if not steps:
            raise ValueError(f"Arm {self.name!r}: steps must hold at least one step.")
        for s in steps:
            if not isinstance(s, Step) or isinstance(s, Portfolio):
                raise TypeError(f"Arm {self.name!r}: steps must be steps of "
                                f"mfbo.proposal.steps other than a Portfolio, got {s!r}.")
        object.__setattr__(self, "steps", steps)
        prior = self.prior
        if isinstance(prior, (str, bytes)) or not hasattr(prior, "__len__") or \
                len(prior) != 2 or not all(isinstance(v, numbers.Real) and
                                           not isinstance(v, bool) and 0 < v < np.inf
                                           for v in prior):
            raise ValueError(f"Arm {self.name!r}: prior must be two positive numbers "
                             f"(successes, failures), got {prior!r}.")
        object.__setattr__(self, "prior", (float(prior[0]), float(prior[1])))

    @property
    def origins(self) -> frozenset:
        """The origins of the trials this arm proposes."""
        return frozenset(s.origin for s in self.steps)


@dataclass(frozen=True)
class Portfolio(Step):
    """Each proposal made by one of ``arms``, drawn by discounted Thompson sampling over
    their chances of producing a new best loss (see the module's text).

    Parameters
    ----------
    arms : sequence of Arm
        At least two, with distinct names and no origin in two of them.
    discount : float in (0, 1], default=0.9
        The weight of an observation ``k`` observations old is ``discount ** k`` (1: no
        forgetting).
    """

    arms: tuple = field(default=())
    discount: float = 0.9

    origin: ClassVar[str] = "portfolio"

    def __post_init__(self):
        if isinstance(self.arms, (str, bytes)) or not hasattr(self.arms, "__iter__"):
            raise TypeError(f"Portfolio(arms=...) must be a sequence of Arm, got "
                            f"{self.arms!r}.")
        arms = tuple(self.arms)
        if len(arms) < 2 or not all(isinstance(a, Arm) for a in arms):
            raise ValueError(f"Portfolio(arms=...) must hold at least two Arm, got "
                             f"{self.arms!r}.")
        names = [a.name for a in arms]
        if len(set(names)) != len(names):
            raise ValueError(f"Portfolio(arms=...): arm names must be distinct, got {names}.")
        seen: dict[str, str] = {}
        for a in arms:
            for o in a.origins:
                if o in seen:
                    raise ValueError(f"Portfolio(arms=...): arms {seen[o]!r} and {a.name!r} "
                                     f"both have a step of origin {o!r}, so a trial's arm "
                                     f"could not be told from its origin.")
                seen[o] = a.name
        object.__setattr__(self, "arms", arms)
        d = self.discount
        if isinstance(d, bool) or not isinstance(d, numbers.Real) or not 0 < d <= 1:
            raise ValueError(f"Portfolio(discount=...) must be in (0, 1], got {d!r}.")

    def posteriors(self, y: np.ndarray, origins) -> np.ndarray:
        """The Beta parameters ``(alpha, beta)`` of each arm, one row per arm, given the
        observed losses ``y`` in the order told and the origin of each."""
        y = np.asarray(y, dtype=float)
        n = y.shape[0]
        out = np.array([a.prior for a in self.arms], dtype=float)
        if n < 2:
            return out
        arm_of = {o: i for i, a in enumerate(self.arms) for o in a.origins}
        which = np.array([arm_of.get(o, -1) for o in origins[1:n]], dtype=int)
        improved = y[1:] < np.minimum.accumulate(y)[:-1]
        weight = self.discount ** np.arange(n - 2, -1, -1, dtype=float)
        for i in range(len(self.arms)):
            mine = which == i
            out[i, 0] += weight[mine & improved].sum()
            out[i, 1] += weight[mine & ~improved].sum()
        return out

    def ranked(self, ctx: Context) -> list[Arm]:
        """The arms in the order of one draw from each arm's posterior, largest first (from
        the proposal's own stream for the portfolio)."""
        study = ctx.study
        ab = self.posteriors(study.obs.y, study.obs_origins)
        draws = ctx.stream("portfolio").beta(ab[:, 0], ab[:, 1])
        return [self.arms[i] for i in np.argsort(-draws, kind="stable")]

    def choose(self, ctx: Context) -> Arm:
        """The arm drawn for this proposal (the first of :meth:`ranked`)."""
        return self.ranked(ctx)[0]

    def propose(self, ctx: Context) -> Point | None:
        """The drawn arm's point; if every step of it passes (a step that does not apply to
        this space), the next arm's in the draw's order, and so on (None if all pass)."""
        for arm in self.ranked(ctx):
            point, origin = run_steps(arm.steps, ctx, fallback=False)
            if point is not None:
                ctx.origin = origin
                return point
        return None
