"""The multi-fidelity problems (benchmarks/problems/multi_fidelity.py): the synthetic functions
are Branin and Hartmann-3 at full fidelity, with their known optima; a learning curve has one
loss a step and is the same each time; a tabulated problem reads the nearest configuration's
curve and is kept in its cache; the suite splits dev from test."""

import numpy as np
import pytest

from benchmarks.problems import multi_fidelity as mf


def test_the_synthetic_functions_at_full_fidelity_are_branin_and_hartmann3():
    for x in [(-np.pi, 12.275), (np.pi, 2.275), (9.42478, 2.475)]:
        assert mf.branin_mf(*x, 1.0) == pytest.approx(0.397887, abs=1e-6)
    best = np.array([0.114614, 0.555649, 0.852547])
    assert mf.hartmann3_mf(best, 1.0) == pytest.approx(-3.86278, abs=1e-5)
    # a lower fidelity is another function
    assert mf.branin_mf(np.pi, 2.275, 0.0) != pytest.approx(0.397887, abs=1e-3)
    p = mf.PROBLEMS["branin-mf"]
    curve = p.curve_of({"x1": np.pi, "x2": 2.275})
    assert curve.shape == (mf.MAX_BUDGET,) and curve[-1] == pytest.approx(p.optimum, abs=1e-6)


def test_a_learning_curve_has_one_loss_a_step_and_is_reproducible():
    p = mf.PROBLEMS["sgd-breast_cancer"]
    params = {"alpha": 1e-4, "l1_ratio": 0.5, "eta0": 0.01, "power_t": 0.5}
    first = list(p.curve(params))
    assert len(first) == mf.MAX_BUDGET and all(0.0 <= v <= 1.0 for v in first)
    assert first == list(p.curve(params))


def test_a_tabulated_problem_reads_the_nearest_curve_and_keeps_its_table(tmp_path,
                                                                         monkeypatch):
    calls = []

    def curve(params):
        calls.append(params)
        for s in range(1, mf.MAX_BUDGET + 1):
            yield params["a"] + 1.0 / s

    def make():
        return mf.MultiFidelityProblem("toy", {"a": mf.Real(0.0, 1.0)}, curve, n_table=8)

    p = make().load(tmp_path)
    assert len(calls) == 8
    U, curves = p._table
    np.testing.assert_allclose(curves[:, -1], U[:, 0] + 1.0 / mf.MAX_BUDGET)
    assert p.optimum == pytest.approx(curves[:, -1].min())
    # the curve of the nearest tabulated configuration
    near = float(U[3, 0]) + 1e-9
    np.testing.assert_array_equal(p.curve_of({"a": near}), curves[3])
    # read back from the cache, not computed again
    again = make().load(tmp_path)
    assert len(calls) == 8 and np.array_equal(again._table[1], curves)


def test_the_suite_splits_dev_from_test():
    assert set(mf.DEV).isdisjoint(mf.TEST)
    assert set(mf.DEV) | set(mf.TEST) == set(mf.PROBLEMS)
    assert "digits" not in " ".join(mf.DEV) and "breast_cancer" not in " ".join(mf.TEST)
    # every family (a model, or synthetic) on both sides
    assert {mf.FAMILIES[n] for n in mf.DEV} == {mf.FAMILIES[n] for n in mf.TEST} \
        == {"mf-synthetic", "mf-sgd", "mf-mlp", "mf-boosting"}


def test_row_of_names_the_tabulated_configuration_whose_curve_a_configuration_gets():
    from benchmarks.problems.multi_fidelity import PROBLEMS

    assert PROBLEMS["branin-mf"].row_of({"x1": 0.0, "x2": 1.0}) is None
    p = PROBLEMS["sgd-breast_cancer"].load()
    U, curves = p._table
    for i in (0, 5, 127):
        params = p.unit_space.from_unit(U[i:i + 1])[0]
        assert p.row_of(params) == i
        assert (p.curve_of(params) == curves[i]).all()
