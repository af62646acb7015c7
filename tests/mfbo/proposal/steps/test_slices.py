"""Slices of tied losses: made by hand, made as observations arrive or at once (a property
test), tested through the index's tables or slice by slice, and the index updated as slices
come and go or made afresh."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mfbo.proposal.steps.categories import branch_codes
from mfbo.proposal.steps import slices as slices_module
from mfbo.proposal.steps.slices import SliceIndex, Slices, in_slices, plateau_slices


def _each(U, slices, levels):
    """Whether each unit row of ``U`` lies in one of ``slices``, slice by slice."""
    L = branch_codes(np.atleast_2d(U), levels, np.arange(len(levels)))
    each = np.zeros(L.shape[0], dtype=bool)
    for low, high, _ in slices:
        each |= np.all((L >= low) & (L <= high), axis=1)
    return each


def _drawn(data, kinds, low, high):
    """Drawn levels (of ``kinds``), between ``low`` and ``high`` observations of them (unit
    rows) and their losses (three)."""
    levels = np.array(data.draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=4)))
    n = data.draw(st.integers(low, high))
    codes = data.draw(st.lists(st.lists(st.integers(0, 4), min_size=levels.size,
                                        max_size=levels.size), min_size=n, max_size=n))
    X = (np.minimum(np.array(codes), np.abs(levels) - 1) + 0.5) / np.abs(levels)
    y = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=float)
    return levels, X, y


def test_the_slices_of_equal_losses_by_hand():
    levels = np.array([3, -2, 4])  # an integer of three levels, a categorical, an integer

    def centre(i, k):
        return (i + 0.5) / k

    X = np.array([[centre(0, 3), centre(1, 2), centre(0, 4)],
                  [centre(0, 3), centre(1, 2), centre(3, 4)],    # loss 1: differs in the last
                  [centre(2, 3), centre(0, 2), centre(1, 4)],    # loss 2
                  [centre(1, 3), centre(0, 2), centre(1, 4)],    # loss 2: differs in the first
                  [centre(0, 3), centre(0, 2), centre(1, 4)]])   # loss 5, in that slice
    y = np.array([1.0, 1.0, 2.0, 2.0, 5.0])
    (low, high, loss), = plateau_slices(X, y, levels)  # the second pair's slice holds loss 5
    assert list(low) == [0, 1, -1] and list(high) == [0, 1, 4]  # the last coordinate free
    assert loss == 1.0
    U = np.array([[centre(0, 3), centre(1, 2), centre(2, 4)],   # the slice, another level
                  [0.01, 0.99, 0.5],                             # the same levels off-centre
                  [centre(1, 3), centre(1, 2), centre(0, 4)]])   # another first coordinate
    assert list(in_slices(U, [(low, high, loss)], levels)) == [True, True, False]
    # reach 0: an integer the two differ in allows only the levels between theirs, so the
    # second pair's slice (first coordinate 1 to 2) no longer holds loss 5 (first coordinate 0)
    first, second = plateau_slices(X, y, levels, reach=0)
    assert list(first[0]) == [0, 1, 0] and list(first[1]) == [0, 1, 3]
    assert list(second[0]) == [1, 0, 1] and list(second[1]) == [2, 0, 1]
    V = np.array([[centre(2, 3), centre(0, 2), centre(1, 4)],    # in the second
                  [centre(1, 3), centre(0, 2), centre(2, 4)],    # its last coordinate differs
                  [centre(0, 3), centre(0, 2), centre(1, 4)]])   # loss 5's point: outside
    assert list(in_slices(V, [first, second], levels)) == [True, False, False]
    # widened by their distance on either side, within the levels: loss 1's pair (last
    # coordinate 0 and 3) reaches all four levels, loss 2's (first 1 and 2) the first's three,
    # which holds loss 5 again
    (low, high, loss), = plateau_slices(X, y, levels, reach=1)
    assert list(low) == [0, 1, 0] and list(high) == [0, 1, 6]
    assert list(in_slices(V, [(low, high, loss)], levels)) == [False, False, False]
    # a categorical the two differ in stays free when bracketed
    Z = np.array([[centre(0, 3), centre(0, 2), centre(2, 4)],
                  [centre(0, 3), centre(1, 2), centre(2, 4)]])
    (low, high, _), = plateau_slices(Z, np.array([3.0, 3.0]), levels, reach=0)
    assert list(low) == [0, -1, 2] and list(high) == [0, 4, 2]
    assert plateau_slices(np.hstack([X, X[:, :1]]), y, [3, -2, 4, 0]) == []  # a real: none


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_slices_made_as_observations_arrive_are_those_made_at_once(data):
    levels, X, y = _drawn(data, [-3, -2, 2, 3, 5], 2, 25)
    n = y.size
    reach = data.draw(st.sampled_from([None, 0.0, 1.0]))
    cuts = sorted(set(data.draw(st.lists(st.integers(2, n), max_size=4)) + [n]))

    def as_set(slices):
        return sorted((lw.tolist(), hg.tolist(), loss) for lw, hg, loss in slices)

    m, slices = 2, plateau_slices(X[:2], y[:2], levels, reach)
    for k in cuts:
        slices, m = plateau_slices(X[:k], y[:k], levels, reach, (m, slices)), k
    assert as_set(slices) == as_set(plateau_slices(X, y, levels, reach))
    if len(slices):  # the ranges kept to make none twice are those of the slices
        assert slices.made == {(lw.tobytes(), hg.tobytes()) for lw, hg, _ in slices}
        assert len(set(slices.ids)) == len(slices) and slices.ids.max() < slices.issued
    held = in_slices(X, slices, levels)
    for lw, hg, loss in slices:  # no observation of another loss in any slice
        inside = np.all((X * np.abs(levels) // 1 >= lw) & (X * np.abs(levels) // 1 <= hg), axis=1)
        assert not np.any(inside & (y != loss)) and held[inside].all()


@pytest.mark.parametrize("seed, n", [(0, 60), (1, 60), (2, 60), (3, 60), (4, 400), (5, 400)])
@pytest.mark.parametrize("few", [False, True])
def test_the_tables_of_slices_answer_as_each_slice_does(seed, n, few, monkeypatch):
    if few:  # the fewest words at a time, whatever the rows
        monkeypatch.setattr(slices_module, "_CELLS", 1)
    rng = np.random.default_rng(seed)
    levels = np.array([7, -3, 2000, -2, 5])  # 2,000 levels: compared, not tabled
    codes = np.column_stack([rng.integers(0, min(abs(k), 9), size=n) for k in levels])
    X = (codes + 0.5) / np.abs(levels)
    X[rng.random(X.shape) < 0.1] = -1.0  # inactive coordinates
    # (with many observations, losses set by the first coordinate: thousands of slices)
    y = (rng.integers(0, 3, size=n) if n < 100 else codes[:, 0] // 2).astype(float)
    slices = plateau_slices(X, y, levels, reach=[None, 1.0][seed % 2])
    U = np.vstack([X, rng.random((300, levels.size))])
    each = _each(U, slices, levels)
    index = SliceIndex(slices, levels)
    tables = index.blocks[0].tables
    assert tables[2] is None and all(t is not None for i, t in enumerate(tables) if i != 2)
    assert slices and each.any() and not each.all()
    if n > 100:  # (slices of several words, tested a few words at a time)
        assert len(slices) > 64 * 8
    assert np.array_equal(in_slices(U, slices, levels, index), each)
    assert np.array_equal(in_slices(U, slices, levels), each)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_an_index_updated_as_slices_come_and_go_answers_as_one_made_afresh(data):
    levels, X, y = _drawn(data, [-3, -2, 2, 3, 5, 1500], 4, 40)
    n = y.size
    reach = data.draw(st.sampled_from([None, 1.0]))
    U = np.vstack([X, np.random.default_rng(n).random((50, levels.size))])
    m, slices = 2, plateau_slices(X[:2], y[:2], levels, reach)
    index = SliceIndex(Slices.stack(slices, levels.size), levels)
    for k in range(3, n + 1):  # one observation at a time: slices unmade and added
        slices, m = plateau_slices(X[:k], y[:k], levels, reach, (m, slices)), k
        if len(slices):
            index = index.updated(slices)
            assert np.array_equal(in_slices(U, slices, levels, index), _each(U, slices, levels))
            assert index.lineage is slices.lineage


def test_ids_are_never_issued_twice_and_a_new_lineage_makes_the_index_afresh():
    levels = np.array([4, -2])  # an integer of four levels, a categorical of two
    codes = np.array([[0, 0], [0, 1],   # loss 1: slice A, first level 0, either category
                      [2, 1], [3, 1],   # loss 2: slice B, first 2 to 3, category 1
                      [0, 0],           # loss 3 in slice A: A is gone
                      [3, 0]])          # loss 2: C (first 2 to 3) and D (first 3), any category
    X = (codes + 0.5) / np.abs(levels)
    y = np.array([1.0, 1.0, 2.0, 2.0, 3.0, 2.0])
    first = plateau_slices(X[:2], y[:2], levels, reach=0)
    second = plateau_slices(X[:4], y[:4], levels, 0, earlier=(2, first))
    third = plateau_slices(X, y, levels, 0, earlier=(4, second))
    assert [list(s.ids) for s in (first, second, third)] == [[0], [0, 1], [1, 2, 3]]
    assert third.issued == 4 and first.lineage is second.lineage is third.lineage
    index = SliceIndex(first, levels).updated(second).updated(third)
    assert len(index.blocks) == 3 and index.blocks[0].kept == 0  # A masked out
    U = np.vstack([X, np.random.default_rng(0).random((40, 2))])
    held = in_slices(U, third, levels, index)
    assert np.array_equal(held, _each(U, third, levels)) and not held[0] and held[2]
    afresh = plateau_slices(X, y, levels, 0)  # made at once: another lineage, one block
    remade = index.updated(afresh)
    assert afresh.lineage is not third.lineage and len(remade.blocks) == 1
    assert np.array_equal(in_slices(U, afresh, levels, remade), held)
