"""What every step of a proposal policy sees, and what it answers.

A recipe's policy is an ordered list of steps (:class:`Step`).  For each proposal after the
initial design, once the model is ready, the :class:`~mfbo.proposal.proposer.Proposer` asks
the steps in order; the first that proposes a point decides the trial, and a step that does
not apply passes (returns None).  When every step passes the proposal is a random point.  A
step is frozen settings plus one method, :meth:`Step.propose`, reading one :class:`Context`.
"""

from __future__ import annotations

import zlib
from typing import ClassVar, Optional, Tuple

import numpy as np

from acquisitions import maximize_random_local, row_keys

__all__ = ["Step", "Context", "Point", "EXHAUSTED", "run_steps"]

#: a step's answer: ``(unit point, candidate row or None)``, or :data:`EXHAUSTED`
Point = Tuple[Optional[np.ndarray], Optional[int]]
#: the answer of a step that looked and found no configuration left to propose
EXHAUSTED: Point = (None, None)


class Step:
    """One mechanism of a proposal policy (a frozen dataclass of its settings).

    ``origin`` names the step in the trials it proposes (:attr:`~mfbo.Trial.origin`).
    """

    origin: ClassVar[str] = "step"

    def propose(self, ctx: "Context") -> Point | None:  # pragma: no cover - interface
        """A point for this proposal, :data:`EXHAUSTED`, or None to pass to the next step."""
        raise NotImplementedError


class Context:
    """One proposal in the making: the proposer and study it reads, the proposal's number and
    random stream, and what earlier steps of it left (a local step whose minimiser was
    already asked sets :attr:`converged`; the constant liar's model is built once, by the
    first step that scores points)."""

    def __init__(self, proposer, study, number: int, rng: np.random.Generator, lied=None):
        self.proposer = proposer
        self.study = study
        self.number = number
        self.rng = rng
        #: the constant liar's model of this ask, handed on to the next proposal
        self.lied = lied
        #: whether a local step was due but its minimiser is a point already asked
        self.converged = False
        #: the origin a step holding other steps sets for the point it returns (else None)
        self.origin: str | None = None
        self._score = None

    @property
    def space(self):
        return self.proposer.space

    @property
    def candidates(self):
        return self.proposer.candidates

    def due(self, every: int) -> bool:
        """Whether this proposal is the ``every``-th since the initial design, or a multiple of
        it (``every`` = 0: never): the rule of the periodic steps."""
        return bool(every) and (self.number - self.proposer.n_initial) % every == every - 1

    def due_from_first(self, every: int) -> bool:
        """Whether this proposal is the first since the initial design or a multiple of
        ``every`` after it (``every`` = 0: never): :meth:`due`'s slots moved one earlier."""
        return bool(every) and (self.number - self.proposer.n_initial) % every == 0

    def is_new(self, u: np.ndarray, known: np.ndarray | None = None,
               plateaus: bool = True) -> bool:
        """Whether ``u`` is neither an asked configuration nor within ``min_distance`` of an
        asked point (``known``: their unit-cube rows; default: the study's), nor, with
        ``plateaus``, inside a plateau the recipe's plateau escape excludes."""
        return self.proposer.is_new(self.study, u, self.study.asked.X if known is None else known,
                                    plateaus)

    def stream(self, name: str) -> np.random.Generator:
        """A random stream of this proposal of its own, named ``name``: drawing from it leaves
        the proposal's stream (:attr:`rng`), and so every other step, as it was."""
        entropy = np.atleast_1d(self.proposer._entropy).tolist()
        return np.random.default_rng([*entropy, self.number, zlib.crc32(name.encode())])

    def best_observed(self, k: int = 10) -> np.ndarray:
        """The unit points of the ``k`` best observations (all of them if fewer), best first
        (ties in the order told): where the acquisition's local searches start."""
        y = self.study.obs.y
        best = np.argpartition(y, k)[:k] if y.size > k else np.arange(y.size)
        return self.study.obs.X[best[np.argsort(y[best], kind="stable")]]

    def random_point(self) -> Point:
        """A uniformly random new point (a random available candidate), or EXHAUSTED."""
        return self.proposer.random_point(self.study, self.rng)

    def score(self):
        """The acquisition as a function of unit points (higher is better), made on first use:
        with trials pending under the constant liar, on the model told the lies.  In a
        conditional space a point is scored as its canonical form, and a forbidden point or
        one already asked scores ``-inf``."""
        if self._score is None:
            model, self.lied = self.proposer.scoring_model(self.study, self.lied)
            self._score = self.wrap_score(self.proposer.score_fn(self.study, model, self.rng))
        return self._score

    def wrap_score(self, score):
        """``score`` (a function of unit points) as the steps use it: in a conditional space
        a point is scored as its canonical form, and a forbidden point or one already asked
        scores ``-inf``; so does a point inside a plateau already bracketed where the recipe's
        plateau escape excludes them."""
        space, proposer = self.space, self.proposer
        if proposer.excludes_plateaus:
            # (called below with the canonical points of a conditional space)
            score = proposer.outside_plateaus(score, self.study)
        if not space.constrained:
            return score
        raw, asked = score, self.study.asked_keys

        def wrapped(U):
            C = space.canonical(U)
            out = np.asarray(raw(C), dtype=float).copy()
            bad = ~space.allowed(C)
            keys = row_keys(C)
            if not asked.isdisjoint(keys):  # (most batches hold no point already asked)
                bad |= np.array([k in asked for k in keys], dtype=bool)
            out[bad] = -np.inf
            return out
        return wrapped

    def best_where(self, inside, n_random: int, starts=None) -> Point:
        """The acquisition's best new point among those whose canonical form ``inside``
        (a function of unit rows) accepts: ``n_random`` random points and local searches
        from them and from ``starts``, every other point scored ``-inf``; a random point if
        none is accepted."""
        space, study, score = self.space, self.study, self.score()

        def restricted(U):
            out = np.asarray(score(U), dtype=float).copy()
            out[~inside(space.canonical(U))] = -np.inf
            return out

        pts = np.asarray(maximize_random_local(
            restricted, space.levels, n=10, rng=self.rng, n_random=n_random, starts=starts,
            n_local=10, patience=3, min_improvement=1e-3, exclude=study.asked_keys,
            far_from=study.asked.X, neighbourhood="joint", joint_dims=6))
        keep = inside(space.canonical(pts))
        return self.first_new(pts[keep]) if keep.any() else self.random_point()

    def first_new(self, points) -> Point:
        """The first of ``points`` that is new, else a random point (or EXHAUSTED)."""
        known = self.study.asked.X
        for u in points:
            if self.is_new(u, known):
                return u, None
        return self.random_point()


def run_steps(steps, ctx: Context, fallback: bool = True) -> tuple[Point | None, str | None]:
    """``(point, origin)``: the point of the first of ``steps`` that proposes one, and the
    origin it names (that of the step that made it, which for a step holding others is the
    inner step's); if every step passes, a random point (origin ``"random"``), or
    ``(None, None)`` without ``fallback``."""
    for step in steps:
        point = step.propose(ctx)
        if point is not None:
            return point, ctx.origin or step.origin
        ctx.origin = None
    return (ctx.random_point(), "random") if fallback else (None, None)
