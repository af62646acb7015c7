"""The proposer feeds an online model one observation at a time: a study reopened from its
journal, or read in batches, proposes exactly as the uninterrupted run of one process."""

from __future__ import annotations

import pickle

import pytest

from mfbo import Categorical, Integer, Optimizer, Real
from mfbo.proposal.proposer import Proposer

MIXED = {"x": Real(-1.0, 1.0), "n": Integer(0, 9), "c": Categorical(["a", "b", "c"])}


def plateau_loss(x, n, c):
    """Rounded, so losses repeat (the model is told of the plateau mid-run); one region
    fails."""
    if x > 0.9:
        raise ValueError("diverged")
    return round((x - 0.2) ** 2 + 0.05 * abs(n - 4) + {"a": 0.0, "b": 0.1, "c": 0.3}[c], 2)


def run(path, stop=None, batch=None, n=30, seed=3):
    """The params of ``n`` trials, the study closed and reopened before trial ``stop``;
    ``batch``: asked ``batch`` at a time (told in order)."""
    opt = Optimizer(MIXED, storage=path, random_state=seed, n_initial=6)
    out = []
    while len(out) < n:
        if stop is not None and len(out) == stop:
            opt.close()
            opt = Optimizer(MIXED, storage=path, random_state=seed, n_initial=6)
        trials = [opt.ask()] if batch is None else opt.ask(batch)
        for t in trials:
            try:
                opt.tell(t, plateau_loss(**t.params))
            except ValueError:
                opt.tell(t, state="failed")
            out.append(t.params)
    opt.close()
    return out


@pytest.mark.parametrize("stop", [7, 16, 23])
def test_a_reopened_study_proposes_as_the_uninterrupted_run(tmp_path, stop):
    whole = run(str(tmp_path / "whole.db"))
    assert len({tuple(p.values()) for p in whole}) == len(whole)
    assert run(str(tmp_path / f"resumed{stop}.db"), stop=stop) == whole


def test_a_batch_read_at_once_is_fed_as_the_uninterrupted_run(tmp_path):
    """Trials asked three at a time: a reopened study proposes the same batches."""
    whole = run(str(tmp_path / "whole.db"), batch=3)
    assert run(str(tmp_path / "resumed.db"), batch=3, stop=15) == whole


def test_another_workers_trials_read_in_a_batch_are_fed_one_at_a_time(tmp_path):
    """A second handle that reads sixteen observations at once proposes what the handle that
    was told them one by one proposes next."""
    def first_16(path):
        a = Optimizer(MIXED, storage=path, random_state=5, n_initial=6)
        for _ in range(16):
            t = a.ask()
            a.tell(t, plateau_loss(**t.params) if t.params["x"] <= 0.9 else 9.0)
        return a

    alone = first_16(str(tmp_path / "alone.db"))
    pending = alone.ask()
    expected = alone.ask()
    path = str(tmp_path / "shared.db")
    a = first_16(path)
    assert a.ask().params == pending.params
    b = Optimizer(MIXED, storage=path, random_state=5, n_initial=6)  # reads all 16 at once
    assert b.ask().params == expected.params
    for opt in (alone, a, b):
        opt.close()


def test_a_proposer_pickled_without_the_later_state_reads_its_defaults():
    """A proposer pickled by an earlier version lacks the state added since (the plateau
    exclusion among it): it proposes as one told those defaults does."""
    def resumed(strip):
        opt = Optimizer(MIXED, random_state=4, n_initial=6)
        for _ in range(14):
            t = opt.ask()
            try:
                opt.tell(t, plateau_loss(**t.params))
            except ValueError:
                opt.tell(t, state="failed")
        for name, value in Proposer._PICKLE_DEFAULTS.items():
            if strip:
                delattr(opt.proposer, name)
            else:
                setattr(opt.proposer, name, value)
        opt = pickle.loads(pickle.dumps(opt))
        out = []
        for _ in range(8):
            t = opt.ask()
            opt.tell(t, plateau_loss(**t.params) if t.params["x"] <= 0.9 else 1.0)
            out.append(t.params)
        return out, opt.proposer

    stripped, proposer = resumed(True)
    assert proposer.excludes_plateaus is False and proposer._clips is False
    assert stripped == resumed(False)[0]
