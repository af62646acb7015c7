"""Property-based test of a durable study: random sequences of ask, batch ask, tell (good,
extreme, failed and external configurations), enqueue, pickling of the surrogate and reopening
of the SQLite journal, checked against a plain record of what was asked, queued and told."""

import math
import pickle
import shutil
import tempfile

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mfbo import Categorical, Integer, Optimizer, Real
from surrogates._core._tree_kernels import NNODES
from surrogates._core.tree import check_invariants

SPACE = {"x": Real(-5.0, 10.0), "i": Integer(0, 7), "c": Categorical(["a", "b", "c"])}

LOSSES = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.sampled_from([0.0, 1e-300, 1.7e308, -1.7e308, math.nan, math.inf, -math.inf]))


class StudyMachine(RuleBasedStateMachine):
    """The record: ``told[id] = loss or None`` (failed), the set of pending ids and the queue
    of enqueued configurations not yet asked."""

    def __init__(self):
        super().__init__()
        self.dir = tempfile.mkdtemp()
        self.db = f"{self.dir}/study.db"
        self.opt = self._open(seed=0)
        self.told: dict[int, float | None] = {}
        self.pending: set[int] = set()
        self.params: dict[int, dict] = {}
        self.queue: list[dict] = []

    def _open(self, seed):
        return Optimizer(SPACE, storage=self.db, random_state=seed, n_initial=4,
                         n_random_candidates=200)

    def _record_asked(self, trials):
        for t in trials:
            assert t.id not in self.told, f"trial {t.id} handed out after it was told"
            if t.id in self.params:  # an orphan of a closed optimizer, asked again
                assert t.params == self.params[t.id]
            elif self.queue:  # enqueued configurations before any proposal, in order
                assert t.params == self.queue.pop(0)
            self.params[t.id] = dict(t.params)
            self.pending.add(t.id)

    @rule()
    def ask_one(self):
        self._record_asked([self.opt.ask()])

    @rule(n=st.integers(1, 5))
    def ask_batch(self, n):
        batch = self.opt.ask(n)
        assert len(batch) == n and len({t.id for t in batch}) == n
        self._record_asked(batch)

    @precondition(lambda self: self.pending)
    @rule(data=st.data(), loss=LOSSES)
    def tell(self, data, loss):
        tid = data.draw(st.sampled_from(sorted(self.pending)))
        t = self.opt.tell(tid, loss)
        self.pending.discard(tid)
        ok = math.isfinite(loss)
        assert t.state == ("complete" if ok else "failed")
        self.told[tid] = loss if ok else None

    @rule(x=st.floats(-5.0, 10.0), i=st.integers(0, 7), c=st.sampled_from(["a", "b", "c"]),
          loss=LOSSES)
    def tell_external(self, x, i, c, loss):
        t = self.opt.tell({"x": x, "i": i, "c": c}, loss)
        assert t.id not in self.params
        self.params[t.id] = {"x": x, "i": i, "c": c}
        self.told[t.id] = loss if math.isfinite(loss) else None

    @rule(x=st.floats(-5.0, 10.0), i=st.integers(0, 7), c=st.sampled_from(["a", "b", "c"]),
          n=st.integers(1, 3))
    def enqueue(self, x, i, c, n):
        configs = [{"x": x, "i": (i + k) % 8, "c": c} for k in range(n)]
        assert self.opt.enqueue(configs) == n
        self.queue.extend(configs)

    @precondition(lambda self: self.opt.model.ready)
    @rule()
    def pickle_surrogate(self):
        forest = self.opt.model.forest
        X = np.random.default_rng(1).random((16, len(SPACE)))
        copy = pickle.loads(pickle.dumps(forest))
        np.testing.assert_array_equal(copy.predict(X), forest.predict(X))
        self.opt.model.forest = copy  # go on with the trimmed, unpickled store

    @rule(seed=st.integers(0, 3))
    def reopen(self, seed):
        self.opt.close()
        self.opt = self._open(seed)  # its pending trials are now orphans, asked again later
        self._check_against_record(self.opt)

    def _check_against_record(self, opt):
        assert [t.id for t in opt.trials] == list(range(len(opt.trials)))
        assert len(opt.trials) == len(self.params)
        for t in opt.trials:
            assert t.params == self.params[t.id]
            if t.id in self.told:
                v = self.told[t.id]
                assert t.state == ("failed" if v is None else "complete")
                assert t.value == v
            else:
                assert t.state == "pending" and t.id in self.pending
        assert opt.n_finished == len(self.told)
        assert opt.queued == self.queue
        done = [v for v in self.told.values() if v is not None]
        assert (opt.best_trial is None) == (not done)
        if done:
            assert opt.best_trial.value == min(done)

    @invariant()
    def study_matches_the_record(self):
        self._check_against_record(self.opt)
        assert {t.id for t in self.opt.pending} == self.pending

    @invariant()
    def forest_is_a_valid_mondrian_forest(self):
        model = self.opt.model
        if model.ready:
            store = model.forest._store
            assert model.forest.n_samples_seen_ == self.opt._obs.n
            # no tree has more nodes than its arrays hold (the compiled kernels add nodes
            # without bounds checks; an unpickled store regains its margin before growing)
            assert store.meta[:, NNODES].max() <= store.inode.shape[1]
            check_invariants(store)

    def teardown(self):
        self.opt.close()
        try:
            self._check_against_record(self._open(seed=0))  # a fresh replay of the journal
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


StudyMachine.TestCase.settings = settings(
    max_examples=12, stateful_step_count=25, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
test_study_state_machine = StudyMachine.TestCase
