"""The random-plus-local-search maximiser keeps its memory linear in the dimension: it scores
its points in batches and keeps only the best ones, with the answer of keeping them all."""

import tracemalloc

import numpy as np
import pytest

import acquisitions.maximizers as mx
from acquisitions import maximize_random_local, row_keys, snap


def _sphere(U):
    return -((U - 0.3) ** 2).sum(axis=1)


def _stepped(U):
    """Piecewise constant: plateaus of tied scores, as a forest's acquisition has."""
    return -np.round(((U - 0.6) ** 2).sum(axis=1) * 20) / 20


def test_local_search_memory_is_bounded_at_high_dimension():
    """D = 100, the Mondrian settings (joint moves, 2,000 random points, 20 starts): a round
    scores 24,000 points of 100 coordinates (19 MB).  Keeping every round's points took a
    traced peak of 156 MB for these 4 rounds (231 MB for 6, 381 MB for 10); batches and
    keeping only the best points bound it near 32 MB, whatever the number of rounds."""
    D = 100
    data = np.random.default_rng(1).random((5 * D + 5, D))
    tracemalloc.start()
    try:
        P = maximize_random_local(_sphere, [0] * D, n=10, rng=np.random.default_rng(0),
                                  n_random=2000, starts=data[:10], patience=3, max_rounds=4,
                                  far_from=data, neighbourhood="joint",
                                  exclude=set(row_keys(data)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert P.shape == (10, D)
    assert peak < 64 * 2 ** 20, f"traced peak {peak / 2 ** 20:.1f} MB"


def _near_ties(U):
    return (U[:, 0] > 0.5) + 1e-12 * U[:, 1]


CASES = [
    # (score, levels, options): ties and plateaus, mixed levels with exclusions, both
    # neighbourhoods, more random points than are ever kept, a large n
    (_stepped, [0] * 5, dict(n_random=40_000, neighbourhood="joint", far_from=True)),
    (_sphere, [0, 5, -3, 0, 2, -4], dict(n_random=30_000, patience=20, far_from=True,
                                         exclude=True)),
    (_stepped, [0] * 8, dict(n_random=1000, patience=30, far_from=True)),
    (_sphere, [0] * 8, dict(n_random=30_000, patience=4, n=300, far_from=True)),
    (_stepped, [0, 0, 3], dict(n_random=20_000, sampler="random", neighbourhood="joint")),
    # a plateau of 15,000 near-ties (within TIE_RTOL, not equal) ranked by distance
    (_near_ties, [0, 0], dict(n_random=30_000, far_from=True)),
    # a few discrete points, each drawn ~1,250 times: the best 1,024 rows are copies of one
    # point, so the selection looks at the best 8,192
    (_stepped, [4, 6], dict(n_random=30_000, sampler="random", n=4, patience=2)),
]


def _run(score, levels, opts, seed):
    levels = np.asarray(levels)
    opts = dict(opts)
    data = snap(np.random.default_rng(123).random((15, levels.size)), levels)
    if opts.pop("far_from", False):
        opts["far_from"] = data
    if opts.pop("exclude", False):
        opts["exclude"] = set(row_keys(data))
    rng = np.random.default_rng(seed)
    P = maximize_random_local(score, levels, **{"n": 10, **opts}, rng=rng, starts=data[:5])
    return P, rng.random(4)  # the points, and where the random stream was left


@pytest.mark.parametrize("case", range(len(CASES)))
def test_batched_and_pruned_search_equals_keeping_everything(monkeypatch, case):
    """Scoring in batches of 37 rows and pruning the kept points from 16,384 rows on gives
    bit for bit the points (and leaves the random stream where) keeping every point in one
    batch per round does."""
    score, levels, opts = CASES[case]
    monkeypatch.setattr(mx, "BATCH_FLOATS", 2 ** 40)
    monkeypatch.setattr(mx, "KEEP_FLOATS", 2 ** 40)
    calls = []
    monkeypatch.setattr(mx._BestPoints, "prune",
                        lambda self, f=mx._BestPoints.prune: (calls.append(1), f(self))[1])
    ref, ref_after = _run(score, levels, opts, case)
    assert not calls
    monkeypatch.setattr(mx, "BATCH_FLOATS", 1)
    monkeypatch.setattr(mx, "MIN_BATCH_ROWS", 37)
    monkeypatch.setattr(mx, "KEEP_FLOATS", 1)
    got, got_after = _run(score, levels, opts, case)
    assert calls  # the points were pruned
    assert got.tobytes() == ref.tobytes()
    assert got_after.tobytes() == ref_after.tobytes()


def test_pruned_selection_equals_the_full_selection():
    """:class:`_BestPoints` with a small limit keeps what :func:`_top_unique` needs: the same
    picks and random draws as on all rows, with ties, duplicates, exclusions, a plateau and a
    slot block whose scores rise after it was added."""
    rng = np.random.default_rng(0)
    for trial in range(6):
        D, n = 2, int(rng.integers(1, 40))
        blocks = []
        for _ in range(int(rng.integers(20, 60))):
            m = int(rng.integers(1, 3000))
            P = np.round(rng.random((m, D)), 2)  # many duplicate rows
            F = np.round(rng.normal(size=m), 1)  # many tied scores
            F[rng.random(m) < 0.01] = np.nan
            blocks.append((P, F))
        top = max(np.nanmax(F) for _, F in blocks)
        blocks[3][1][:50] = top  # a plateau of tied best scores
        slot_P, slot_F = rng.random((12, D)), np.full(12, -5.0)
        keep = 8 * max(1024, 16 * n)
        kept = mx._BestPoints(D, keep, plateau=True, limit_floats=1)
        for i, (P, F) in enumerate(blocks):
            kept.add(P, F)
            if i == 1:
                kept.add(slot_P, slot_F, slot=True)
        slot_P[:4], slot_F[:4] = 0.5, top - 0.05 * np.arange(4)  # the searches improved
        all_P = np.concatenate([blocks[0][0], blocks[1][0], slot_P] + [b[0] for b in blocks[2:]])
        all_F = np.concatenate([blocks[0][1], blocks[1][1], slot_F] + [b[1] for b in blocks[2:]])
        data = rng.random((30, D))
        excl = set(row_keys(all_P[rng.choice(all_P.shape[0], 200, replace=False)]))
        P, F = kept.points()
        assert kept.exact and P.shape[0] < all_P.shape[0] == kept.n_seen
        r1, r2 = np.random.default_rng(trial), np.random.default_rng(trial)
        ref = mx._top_unique(all_F, all_P, excl, n, r1, data)
        got = mx._top_unique(F, P, excl, n, r2, data, n_total=kept.n_seen)
        assert all_P[ref].tobytes() == P[got].tobytes()
        assert r1.random() == r2.random()


def test_ties_beyond_the_cap_are_dropped_and_flagged():
    """A flat score ties every point: beyond ``keep + MAX_PLATEAU`` rows the earliest are kept
    (the answer may then differ from keeping every point) and the search still returns
    distinct points."""
    kept = mx._BestPoints(2, 8192, plateau=True, limit_floats=1)
    for _ in range(20):
        kept.add(np.random.default_rng(0).random((3000, 2)), np.zeros(3000))
    P, _ = kept.points()
    assert not kept.exact and P.shape[0] == 8192 + mx.MAX_PLATEAU
    got = maximize_random_local(lambda U: np.zeros(len(U)), [0, 0], n=5,
                                rng=np.random.default_rng(0), n_random=40_000,
                                far_from=np.full((1, 2), 0.5))
    assert len(set(row_keys(got))) == 5


def test_neighbour_pieces_equal_the_whole_neighbourhood():
    rng = np.random.default_rng(0)
    levels = np.array([0, 4, 0, -3, 0])
    U = snap(rng.random((6, levels.size)), levels)
    for joint in (False, True):
        r1, r2 = np.random.default_rng(1), np.random.default_rng(1)
        V, own = mx._neighbours(U, levels, r1, [0.2, 0.02], 4, joint)
        pieces = list(mx._neighbour_blocks(U, levels, r2, [0.2, 0.02], 4, joint, max_rows=7))
        assert max(p[0].shape[0] for p in pieces) <= 7
        assert np.concatenate([p[0] for p in pieces]).tobytes() == V.tobytes()
        assert np.concatenate([p[1] for p in pieces]).tolist() == own.tolist()
        assert r1.random() == r2.random()
        batches = list(mx._batches(iter(pieces), 20))
        assert all(b[0].shape[0] <= 20 for b in batches)
        assert np.concatenate([b[0] for b in batches]).tobytes() == V.tobytes()
