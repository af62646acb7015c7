"""The conditional search space of an optuna study, inferred from its complete trials.

A define-by-run objective asks for some parameters only on some branches (``C`` only when
``model == "svm"``, ``units_2`` only when ``n_layers > 2``).  optuna does not record why a
parameter is absent from a trial, so the condition is read off the history: a parameter that
some complete trials lack is conditioned on the earliest parameter (in the order the trials
asked for them) whose values explain exactly which trials hold it:

- a categorical parent ``c``: ``In(c, values)``, the values ``c`` took in the trials holding
  the parameter, provided no trial lacking it had one of them;
- an integer parent ``n``: ``Greater(n, a)`` / ``Less(n, b)`` (or both), ``a`` the largest and
  ``b`` the smallest value of ``n`` among the trials lacking the parameter below and above
  the values it took where present, provided none of those lies between them;
- a parent present in exactly the trials holding the parameter (a sibling on the same branch):
  the parent being active (``In`` of all its choices, ``Between`` its bounds);
- else a pair of categorical parents, ``AllOf(In(a, ...), In(b, ...))`` by the same rule.

Categorical parents are tried before integer ones, each kind in the order of first appearance;
a parent must be present in every trial holding the child (a condition on an absent parameter
does not hold).  A parameter that nothing explains, or whose distribution differs between
trials, is left out (optuna's independent sampler draws it), as is a single-valued one.
Conditions are written over parameter names on the values of :class:`~.distributions.Codec`
(a categorical choice's index, a stepped range's grid index).

:class:`ConditionalSearchSpace` keeps the inference up to date incrementally: a new complete
trial that agrees with the structure (no new parameter or distribution, every parameter
present exactly where its condition holds) leaves it as it is, which is what inferring it
again would give, since adding trials can only rule explanations out.
"""

from __future__ import annotations

from optuna.distributions import BaseDistribution, IntDistribution
from optuna.trial import FrozenTrial, TrialState

from ...space import AllOf, Between, Condition, Greater, In, Less
from ...space.conditions import condition_from_json
from .distributions import Codec

__all__ = ["Structure", "ConditionalSearchSpace", "infer_structure", "renamed", "decoded"]


class Structure:
    """The parameters sampled jointly and their conditions.

    ``distributions``: name -> optuna distribution, parents before children;
    ``conditions``: name -> :class:`~mfbo.space.conditions.Condition` over parameter names on
    coded values (:class:`~.distributions.Codec`), or None for a parameter of every trial.
    """

    def __init__(self, distributions: dict[str, BaseDistribution],
                 conditions: dict[str, Condition | None]):
        self.distributions = dict(distributions)
        self.conditions = {n: conditions.get(n) for n in self.distributions}

    def __eq__(self, other):
        return isinstance(other, Structure) and self.distributions == other.distributions \
            and self.conditions == other.conditions

    def __repr__(self):
        return f"Structure({self.conditions!r})"

    def restricted(self, search_space: dict[str, BaseDistribution]) -> "Structure":
        """This structure over the parameters of ``search_space`` (what optuna hands
        ``sample_relative``, e.g. less the parameters a ``PartialFixedSampler`` fixes): a
        parameter it does not know, or knows with another distribution, is unconditional; one
        whose condition reads a parameter left out is left out."""
        kept: dict[str, Condition | None] = {}
        for name, cond in self.conditions.items():
            if search_space.get(name) == self.distributions[name] and (
                    cond is None or all(p in kept for p in cond.parents())):
                kept[name] = cond
        dists = {n: search_space[n] for n in kept}
        for name in sorted(search_space):
            if name not in self.conditions or search_space[name] != self.distributions[name]:
                dists[name] = search_space[name]
        return Structure(dists, kept)

    def ordered(self) -> list[str]:
        """The parameter names sorted, each moved after the parameters its condition reads."""
        out: dict[str, None] = {}

        def place(name):
            if name not in out:
                cond = self.conditions[name]
                for parent in () if cond is None else cond.parents():
                    place(parent)
                out[name] = None

        for name in sorted(self.distributions):
            place(name)
        return list(out)


def _rewritten(condition: Condition, name, constant) -> Condition:
    """``condition`` (conditions of one parameter each, and their combinations, as
    :func:`infer_structure` makes) with each leaf's parameter ``n`` renamed ``name(n)`` and
    each of its constants ``c`` replaced by ``constant(n, c)``."""

    def rewrite(leaf):
        (kind, (n, *rest)), = leaf.to_json().items()
        rest = [[constant(n, c) for c in r] if isinstance(r, list) else
                None if r is None else constant(n, r) for r in rest]
        return condition_from_json({kind: [name(n), *rest]})

    return condition.map_leaves(rewrite)


def renamed(condition: Condition, names: dict[str, str]) -> Condition:
    """``condition`` with every parameter name ``n`` replaced by ``names[n]``."""
    return _rewritten(condition, names.__getitem__, lambda n, c: c)


def decoded(condition: Condition, distributions: dict[str, BaseDistribution]) -> Condition:
    """``condition`` on the parameters' own values instead of their coded ones (a choice
    instead of its index, a stepped range's value instead of its grid index)."""
    codecs = {n: Codec(d) for n, d in distributions.items()}
    return _rewritten(condition, lambda n: n, lambda n, c: codecs[n].decode(c))


def _rows(trials: list[FrozenTrial], codecs: dict[str, Codec]) -> list[dict]:
    """The coded values of the trials' parameters that ``codecs`` codes (None for a value
    that is not one of the distribution)."""
    return [{n: codecs[n].encode(v) for n, v in t.params.items() if n in codecs}
            for t in trials]


def _leaf(parent: str, codec: Codec, rows: list[dict], present: list[bool]):
    """The condition on ``parent`` alone that holds exactly in the rows where ``present``
    (rows lacking ``parent`` lack the child, see :func:`_explain`), or None."""
    inside = [r[parent] for r, p in zip(rows, present) if p]
    outside = [r[parent] for r, p in zip(rows, present) if not p and parent in r]
    if None in inside or None in outside:
        return None
    dim = codec.dimension
    if codec.kind == "choice":
        if not outside:
            return In(parent, list(dim.choices))
        if set(inside) & set(outside):
            return None
        return In(parent, sorted(set(inside)))
    if not outside:
        return Between(parent, dim.low, dim.high)
    low, high = min(inside), max(inside)
    if any(low <= v <= high for v in outside):
        return None
    below, above = [v for v in outside if v < low], [v for v in outside if v > high]
    leaves = ([Greater(parent, max(below))] if below else []) + \
        ([Less(parent, min(above))] if above else [])
    return leaves[0] if len(leaves) == 1 else AllOf(*leaves)


def _pair(a: str, b: str, rows: list[dict], present: list[bool]):
    """``AllOf(In(a, ...), In(b, ...))`` of the values ``a`` and ``b`` take where the child is
    present, if it holds nowhere else, or None."""
    sets = [{r[c] for r, p in zip(rows, present) if p} for c in (a, b)]
    if any(None in s for s in sets):
        return None
    for r, p in zip(rows, present):
        if not p and a in r and b in r and r[a] in sets[0] and r[b] in sets[1]:
            return None
    return AllOf(In(a, sorted(sets[0])), In(b, sorted(sets[1])))


def _explain(rows: list[dict], present: list[bool], parents: list[str],
             codecs: dict[str, Codec]):
    """The condition explaining ``present`` (see the module's docstring) among the candidate
    ``parents`` (in order of first appearance), or None."""
    able = [c for c in parents if all(c in r for r, p in zip(rows, present) if p)]
    choices = [c for c in able if codecs[c].kind == "choice"]
    ints = [c for c in able if isinstance(codecs[c].distribution, IntDistribution)]
    for c in choices + ints:
        cond = _leaf(c, codecs[c], rows, present)
        if cond is not None:
            return cond
    for i, a in enumerate(choices):
        for b in choices[i + 1:]:
            cond = _pair(a, b, rows, present)
            if cond is not None:
                return cond
    return None


def infer_structure(trials: list[FrozenTrial]) -> tuple[Structure, dict, dict]:
    """The structure of complete ``trials`` (see the module's docstring), with what the
    incremental check needs: name -> the number of the first trial holding it, and name -> its
    distribution (None where two trials differ)."""
    trials = sorted(trials, key=lambda t: t.number)
    first: dict[str, int] = {}
    order: dict[str, tuple[int, int]] = {}  # (trial, position) of the first appearance
    dists: dict[str, BaseDistribution | None] = {}
    for i, t in enumerate(trials):
        for pos, (name, d) in enumerate(t.distributions.items()):
            if name not in dists:
                first[name], order[name], dists[name] = t.number, (i, pos), d
            elif dists[name] is not None and dists[name] != d:
                dists[name] = None
    codecs = {n: Codec(d) for n, d in dists.items() if d is not None and not d.single()}
    rows = _rows(trials, codecs)
    conditions: dict[str, Condition | None] = {}
    for name in sorted(codecs, key=order.__getitem__):
        present = [name in r for r in rows]
        if all(present):
            conditions[name] = None
            continue
        cond = _explain(rows, present, list(conditions), codecs)
        if cond is not None:
            conditions[name] = cond
    return Structure({n: dists[n] for n in conditions}, conditions), first, dists


class ConditionalSearchSpace:
    """The structure of one study's complete trials, kept up to date as trials finish (the
    role optuna's ``IntersectionSearchSpace`` has for the intersection): each call looks only
    at trials it has not seen finished, and infers the structure again only when one of them
    disagrees with it."""

    def __init__(self):
        self.structure = Structure({}, {})
        self._first: dict[str, int] = {}
        self._dists: dict[str, BaseDistribution | None] = {}
        self._codecs: dict[str, Codec] = {}
        #: every trial numbered below this is finished and looked at
        self._cursor = 0
        #: the finished trials at or above the cursor looked at
        self._seen: set[int] = set()

    def calculate(self, trials: list[FrozenTrial]) -> Structure:
        """The structure of the complete ones of ``trials`` (all trials of the study, in the
        order of their numbers)."""
        fresh = []
        for t in reversed(trials):
            if t.number < self._cursor:
                break
            fresh.append(t)
        stale, cursor = False, None
        for t in reversed(fresh):
            if not t.state.is_finished():
                cursor = t.number if cursor is None else cursor
            elif t.number not in self._seen:
                self._seen.add(t.number)
                stale = stale or t.state == TrialState.COMPLETE and not self._agrees(t)
        if fresh:
            self._cursor = fresh[0].number + 1 if cursor is None else cursor
            self._seen = {n for n in self._seen if n >= self._cursor}
        if stale:
            self.structure, self._first, self._dists = infer_structure(
                [t for t in trials if t.state == TrialState.COMPLETE])
            self._codecs = {n: Codec(d) for n, d in self.structure.distributions.items()}
        return self.structure

    def _agrees(self, trial: FrozenTrial) -> bool:
        """Whether inferring the structure with ``trial`` would leave it as it is: no new
        parameter or distribution, none first seen in a later trial, every parameter of the
        structure present exactly where its condition holds."""
        for name, d in trial.distributions.items():
            if name not in self._dists or self._first[name] > trial.number or \
                    self._dists[name] is not None and self._dists[name] != d:
                return False
        row, = _rows([trial], self._codecs)
        if None in row.values():
            return False
        return all((name in row) == (cond is None or cond.holds(row))
                   for name, cond in self.structure.conditions.items())

    def why_independent(self, name: str, distribution: BaseDistribution) -> str | None:
        """Why parameter ``name`` of ``distribution`` is outside the structure, or None if no
        complete trial has shown it yet (or it is in the structure)."""
        if name not in self._dists:
            return None
        if self._dists[name] != distribution:
            return "its distribution differs between trials"
        if name in self.structure.conditions:
            return "its condition reads a parameter outside the relative search space"
        return ("no parameter asked before it explains in which complete trials it is present "
                "(a categorical one by its values, an integer one by a threshold)")
