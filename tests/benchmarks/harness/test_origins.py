"""The tally of which proposal steps a run's evaluations come from and which improve."""

from __future__ import annotations

import pytest

from benchmarks.harness import origins


def test_the_tally_counts_trials_after_the_design_their_improvements_and_final_bests():
    runs = [(["design", "design", "a", "b", "a"], [3.0, 2.0, 1.0, 1.0, 0.5], 2),
            (["design", "design", "b", "b", "a"], [1.0, 2.0, 0.9995, 0.5, 0.6], 2)]
    t = origins.tally(runs)
    # 0.9995 is below 1.0 by less than 0.1 %: not an improvement
    assert t == {"a": [3, 2, 1], "b": [3, 1, 1]}


def test_a_run_s_origins_are_those_of_its_trials_as_the_bench_runs_it():
    from benchmarks.harness import bench

    got, y, n_initial = origins.origins_of("branin", "mondrian", 0, 14)
    assert len(got) == len(y) == 14 and 0 < n_initial < 14
    assert got[:n_initial] == ["design"] * n_initial and "design" not in got[n_initial:]
    record = bench.run_one("branin", "mondrian", 0, 14)
    assert record["values"] == y


def test_bad_arguments_are_refused(capsys):
    with pytest.raises(SystemExit):
        origins.main(["--problem", "branin", "--method", "mondrian", "--seeds", "0"])
    assert "--seeds" in capsys.readouterr().err


def test_a_trial_is_in_the_incumbent_s_cell_where_its_categorical_values_are_the_best_s():
    params = [{"c": "a", "x": 0.1}, {"c": "b", "x": 0.2}, {"c": "b", "x": 0.3},
              {"c": "a", "x": 0.4}, {"c": "b", "x": 0.5}]
    y = [2.0, 1.0, 3.0, 0.5, 0.7]
    # after a design of 2: the best before trial 2 is trial 1 ("b"), before 3 and 4 still
    # trial 1, then trial 3 ("a")
    assert origins.in_incumbent_cell(params, y, 2, ["c"]) == [True, False, False]
    assert origins.in_incumbent_cell(params, y, 2, []) == [True, True, True]


def test_the_command_lists_the_trials_and_the_cell_share(capsys):
    assert origins.main(["--problem", "mixed-pipeline-breast_cancer", "--method", "mondrian",
                         "--seeds", "1", "--budget", "12", "--trials"]) == 0
    out = capsys.readouterr().out
    assert "categorical values of the best trial before them: mondrian" in out
    assert out.count("\n    ") == 12  # one line per trial
