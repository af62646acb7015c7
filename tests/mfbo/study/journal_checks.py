"""A plain model of what a study journal must say, replayed independently of :mod:`mfbo.study`,
and checks of it against what the workers that wrote the journal reported.

The library replays its own journal (:class:`mfbo.study.Study`) and refuses some damage, but a
test that only asks the library whether its journal is fine learns nothing when the library is
wrong.  Here the journal rows (``storage.read(study, 0)``: ``(id, kind, payload)``) are replayed
by a few lines of code that know only the rules:

* event ids strictly increase (every reader sees the events in commit order);
* ``ask`` ids run 0, 1, 2, ... in journal order (no trial lost, none numbered twice);
* a ``claim`` hands a *pending* trial to *another* owner;
* a ``tell`` finishes a pending trial: at most one tell per trial; a complete one has a value,
  a failed or pruned one none;
* a ``report`` gives a pending trial a value at a step it has not reported, a ``rung`` the
  next rung of successive halving it has not reached;
* ``enqueue`` numbers run 0, 1, 2, ...; an ask that takes a queued configuration names the
  first one still queued (in order, each at most once) and carries its params, and no proposal
  is asked while configurations are queued (they go before any proposal).

:func:`check_reports` then holds the journal to what the workers saw: what they were handed,
what they told, what they enqueued, the states they read, and what became of the trials of a
worker that was killed.  Every failure is a :class:`JournalViolation` naming the event or the
report.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from typing import Callable, Iterable, Mapping

__all__ = ["JournalViolation", "TrialRecord", "Replay", "replay", "check_finished",
           "check_reports", "signature"]


class JournalViolation(AssertionError):
    """The journal, or the workers' reports about it, break a rule of the study."""


@dataclasses.dataclass
class TrialRecord:
    """One trial as the journal tells it."""

    id: int
    params: dict
    #: every owner it had, in order: the one that asked it, then one per claim
    owners: list
    enqueued: int | None = None
    state: str = "pending"
    value: float | None = None
    worker: str | None = None
    #: event ids of its claims, and of its tell
    claims: list = dataclasses.field(default_factory=list)
    told_at: int | None = None
    #: the owner that held it when it was told
    owner_when_told: str | None = None
    #: step -> value of its reports, rung -> value of its rungs
    reports: dict = dataclasses.field(default_factory=dict)
    rungs: dict = dataclasses.field(default_factory=dict)

    @property
    def owner(self) -> str:
        return self.owners[-1]


@dataclasses.dataclass
class Replay:
    """The state a journal leads to, and the state after each of its events."""

    trials: list
    #: enqueue number -> params, of the configurations not yet asked, in order
    queue: dict
    enqueued: list
    #: ``signature`` after each prefix of the journal (the first: the empty study)
    history: list
    events: int

    @property
    def pending(self) -> list:
        return [t for t in self.trials if t.state == "pending"]


def signature(trials: Iterable) -> tuple:
    """``((state, value), ...)`` in trial order: what a reader of the study sees."""
    return tuple((t.state, t.value) for t in trials)


def _params_key(params: Mapping) -> str:
    return json.dumps(params, sort_keys=True)


def replay(events) -> Replay:
    """Replay ``events`` (``(id, kind, payload)`` rows in the order the storage returns them)
    under the rules of the module docstring; a :class:`JournalViolation` names the first event
    that breaks one.  Every prefix of a valid journal is valid, so this also checks a journal
    read while workers are still appending to it."""
    trials: list[TrialRecord] = []
    queue: dict[int, dict] = {}
    enqueued: list[dict] = []
    history = [()]
    previous = None

    def fail(eid, kind, text):
        raise JournalViolation(f"journal event {eid} ({kind}): {text}")

    for eid, kind, p in events:
        if not isinstance(eid, int) or (previous is not None and eid <= previous):
            fail(eid, kind, f"event ids are not strictly increasing (after {previous})")
        previous = eid
        if kind == "ask":
            if p.get("id") != len(trials):
                fail(eid, kind, f"trial id {p.get('id')!r}, expected {len(trials)}: ask ids "
                                f"must run 0..n-1 in journal order")
            number = p.get("enqueued")
            if number is not None:
                if number not in queue:
                    taken = isinstance(number, int) and 0 <= number < len(enqueued)
                    fail(eid, kind, f"takes enqueued configuration {number!r}, which is "
                                    f"{'asked already' if taken else 'not enqueued'}")
                first = next(iter(queue))
                if number != first:
                    fail(eid, kind, f"takes enqueued configuration {number} before {first}: "
                                    f"the queue is taken in order")
                if queue[number] != p["params"]:
                    fail(eid, kind, f"params {p['params']} differ from those of enqueued "
                                    f"configuration {number} ({queue[number]})")
                del queue[number]
            elif queue:
                fail(eid, kind, f"a proposal was asked while configurations {list(queue)} were "
                                f"queued (they go before any proposal)")
            if not isinstance(p.get("owner"), str):
                fail(eid, kind, f"owner {p.get('owner')!r} is not an owner token")
            trials.append(TrialRecord(id=len(trials), params=dict(p["params"]),
                                      owners=[p["owner"]], enqueued=number))
        elif kind in ("claim", "tell", "report", "rung"):
            i = p.get("id")
            if not isinstance(i, int) or not 0 <= i < len(trials):
                fail(eid, kind, f"no trial {i!r} has been asked ({len(trials)} asked)")
            t = trials[i]
            if t.state != "pending":
                fail(eid, kind, f"trial {i} is not pending: it was told at event {t.told_at} "
                                f"({t.state})" + (" - told twice" if kind == "tell" else ""))
            if kind == "report":
                if p.get("step") in t.reports:
                    fail(eid, kind, f"trial {i} reported step {p.get('step')!r} twice")
                t.reports[p["step"]] = p["value"]
            elif kind == "rung":
                if p.get("rung") != len(t.rungs):
                    fail(eid, kind, f"trial {i} reaches rung {p.get('rung')!r}, expected "
                                    f"{len(t.rungs)}")
                t.rungs[p["rung"]] = p["value"]
            elif kind == "claim":
                if not isinstance(p.get("owner"), str):
                    fail(eid, kind, f"owner {p.get('owner')!r} is not an owner token")
                if p["owner"] == t.owner:
                    fail(eid, kind, f"trial {i} is claimed by the owner that holds it")
                t.owners.append(p["owner"])
                t.claims.append(eid)
            else:
                if p.get("state") not in ("complete", "failed", "pruned"):
                    fail(eid, kind, f"state {p.get('state')!r}")
                if (p["state"] == "complete") != (p.get("value") is not None):
                    fail(eid, kind, f"state {p['state']} with value {p.get('value')!r}")
                t.state, t.value, t.worker = p["state"], p.get("value"), p.get("worker")
                t.told_at, t.owner_when_told = eid, t.owner
        elif kind == "enqueue":
            if p.get("number") != len(enqueued):
                fail(eid, kind, f"enqueue number {p.get('number')!r}, expected {len(enqueued)}")
            queue[p["number"]] = dict(p["params"])
            enqueued.append(dict(p["params"]))
        else:
            fail(eid, kind, "unknown kind of event")
        history.append(signature(trials))
    return Replay(trials, queue, enqueued, history, len(history) - 1)


def check_finished(model: Replay) -> None:
    """The end of a study: every trial told and every enqueued configuration asked."""
    pending = [t.id for t in model.pending]
    if pending:
        raise JournalViolation(f"trials {pending} are still pending at the end (owners "
                               f"{sorted({model.trials[i].owner for i in pending})})")
    if model.queue:
        raise JournalViolation(f"enqueued configurations {list(model.queue)} were never asked")


def check_reports(model: Replay, reports: list, objective: Callable[[dict], float], *,
                  killed: set = frozenset(), planned_enqueues: Iterable = (),
                  live_claims: bool = True, final: bool = False) -> dict:
    """Hold the journal (``model``) to the workers' ``reports`` (dicts with ``worker`` and
    ``event`` among ``open`` (``owner``), ``ask`` (``id``, ``params``, ``owner``), ``tell``
    (``id``, ``value``, ``state``), ``lost`` (``id``: the tell found it told already),
    ``enqueue`` (``configs``), ``view`` (``trials``: ``[id, state, value]`` as the worker read
    them), ``evaluating`` (``id``), ``closed`` (``owner``), ``error`` (``text``)).

    ``killed``: names of the workers killed (their last acts may be in the journal unreported);
    ``planned_enqueues``: the configurations the killed workers were to enqueue (an enqueue
    committed just before the kill is unreported); ``live_claims``: whether a live owner's trial
    may be claimed (a heartbeat later than a short grace period on a loaded machine) - if not,
    only owners that were killed or closed lose trials; ``final``: the study is over (the trials
    a killed worker was evaluating must have been claimed and told by others).

    Returns counts of what was seen (claims, claims of live owners, lost tells)."""
    errors = [r for r in reports if r["event"] == "error"]
    if errors:
        raise JournalViolation(f"worker {errors[0]['worker']} raised:\n{errors[0]['text']}")
    owners_of: dict[str, set] = {}
    dead = set()
    for r in reports:
        if r["event"] == "open":
            owners_of.setdefault(r["worker"], set()).add(r["owner"])
        elif r["event"] == "closed":
            dead.add(r["owner"])
    for name in killed:
        dead |= owners_of.get(name, set())
    worker_of = {o: w for w, owners in owners_of.items() for o in owners}
    n = len(model.trials)

    def trial(r) -> TrialRecord:
        if not 0 <= r["id"] < n:
            raise JournalViolation(f"worker {r['worker']} reported {r['event']} of trial "
                                   f"{r['id']}, which is not in the journal ({n} trials): "
                                   f"a trial was lost")
        return model.trials[r["id"]]

    told_by = {}
    for r in reports:
        kind = r["event"]
        if kind == "ask":
            t = trial(r)
            if t.params != r["params"]:
                raise JournalViolation(f"trial {t.id}: worker {r['worker']} was handed params "
                                       f"{r['params']}, the journal holds {t.params}")
            if r["owner"] not in t.owners:
                raise JournalViolation(f"trial {t.id} was handed to worker {r['worker']} "
                                       f"(owner {r['owner']}), which the journal never made its "
                                       f"owner (owners: {t.owners})")
        elif kind == "tell":
            t = trial(r)
            if t.state != r["state"] or t.value != r["value"] or t.worker != r["worker"]:
                raise JournalViolation(
                    f"trial {t.id}: worker {r['worker']} told it {r['state']} with value "
                    f"{r['value']!r}; the journal holds {t.state} {t.value!r} told by "
                    f"{t.worker}")
            told_by[t.id] = r["worker"]
        elif kind == "lost":
            t = trial(r)
            # (told by the claimer, or by this worker once the trial was handed back to it)
            if t.state == "pending" or len(t.owners) < 2:
                raise JournalViolation(
                    f"trial {t.id}: worker {r['worker']} was refused its tell as told already, "
                    f"yet the journal shows it {t.state}, told by {t.worker}, owners {t.owners}")
            if not live_claims:
                raise JournalViolation(
                    f"trial {t.id} was claimed from worker {r['worker']} while it was "
                    f"evaluating it (owners {t.owners}), with a grace period that should have "
                    f"kept it")
    for t in model.trials:
        if t.state == "pending":
            continue
        if t.state == "complete" and t.value != objective(t.params):
            raise JournalViolation(f"trial {t.id} holds value {t.value!r}, not the objective's "
                                   f"{objective(t.params)!r} at its params")
        if t.worker not in owners_of:
            raise JournalViolation(f"trial {t.id} was told by unknown worker {t.worker!r}")
        if t.worker not in killed and told_by.get(t.id) != t.worker:
            raise JournalViolation(f"trial {t.id} was told by worker {t.worker} in the journal, "
                                   f"which never reported telling it")
        if not owners_of[t.worker] & set(t.owners):
            raise JournalViolation(f"trial {t.id} was told by worker {t.worker}, which never "
                                   f"owned it (owners {t.owners})")
        if not live_claims and t.owner_when_told not in owners_of[t.worker]:
            raise JournalViolation(f"trial {t.id} was told by worker {t.worker} after owner "
                                   f"{t.owner_when_told} had claimed it")
    # claims: of owners that were dead, unless live owners may lose trials
    counts = Counter()
    for t in model.trials:
        for before, after in zip(t.owners, t.owners[1:]):
            counts["claims"] += 1
            if before not in dead:
                counts["claims of live owners"] += 1
                if not live_claims:
                    raise JournalViolation(
                        f"trial {t.id} was claimed by {after} from owner {before} "
                        f"(worker {worker_of.get(before)}), which was neither killed nor closed")
    counts["lost tells"] = sum(1 for r in reports if r["event"] == "lost")
    # enqueued configurations: all reported ones are in the journal; the others were planned
    # by a worker that was killed
    extra = Counter(_params_key(p) for p in model.enqueued)
    for r in reports:
        if r["event"] == "enqueue":
            for config in r["configs"]:
                key = _params_key(config)
                if not extra[key]:
                    raise JournalViolation(f"configuration {config} enqueued by worker "
                                           f"{r['worker']} is not in the journal's queue")
                extra[key] -= 1
    extra -= Counter()
    planned = Counter(_params_key(p) for p in planned_enqueues)
    if extra - planned:
        raise JournalViolation(f"the journal enqueues {sorted(extra - planned)}, which no "
                               f"worker reported enqueuing")
    # what every worker read was a state the journal went through
    seen = set(model.history)
    for r in reports:
        if r["event"] == "view":
            ids = [i for i, _, _ in r["trials"]]
            view = tuple((state, value) for _, state, value in r["trials"])
            if ids != list(range(len(ids))) or view not in seen:
                raise JournalViolation(f"worker {r['worker']} read trials {r['trials']}, which "
                                       f"is no state the journal went through")
    # the trials a killed worker was evaluating go to others
    for r in reports:
        if r["event"] == "evaluating" and r["worker"] in killed:
            t = trial(r)
            victims = owners_of[r["worker"]]
            if t.worker == r["worker"]:
                raise JournalViolation(f"trial {t.id} was told by worker {r['worker']}, killed "
                                       f"while evaluating it")
            # with live claims it may also have been told by the live owner the killed worker
            # had claimed it from (too early), who went on evaluating it
            if final and (t.state == "pending" or (not live_claims and (
                    t.owner_when_told in victims or not t.claims))):
                raise JournalViolation(
                    f"trial {t.id}, which killed worker {r['worker']} was evaluating, was not "
                    f"claimed and told by another worker ({t.state}, owners {t.owners})")
    return dict(counts)
