"""The multi-objective experiment: its scores, its report, and a small run end to end."""

import math

import pytest

from benchmarks.experiments.multi_objective import main, run_method, score, summarise
from benchmarks.problems.multi_objective import OUTCOME_PROBLEMS


def test_scores():
    zdt = OUTCOME_PROBLEMS["zdt1"]
    # two points dominating boxes of the reference (1.1, 11): 1.1*11 - overlap
    outcomes = [{"f1": 0.0, "f2": 1.0}, {"f1": 1.0, "f2": 0.0}, {"f1": 1.0, "f2": 5.0}]
    assert score(zdt, outcomes) == pytest.approx(1.1 * 10 + 0.1 * 1.0)
    branin = OUTCOME_PROBLEMS["branin-constrained"]
    assert score(branin, [{"f": 0.5, "disc": 1.0}]) == math.inf
    assert score(branin, [{"f": 0.5, "disc": 1.0}, {"f": 3.0, "disc": -1.0}]) == 3.0


def _records(seeds: int) -> list[dict]:
    """Run records of mfbo and random on zdt1 and linear-constraint, mfbo better in each."""
    records = []
    for seed in range(seeds):
        for m, hv, best in [("mfbo", 10.0 + seed, 1.0), ("random", 5.0, 2.0 + seed)]:
            records.append({"method": m, "problem": "zdt1", "seed": seed, "budget": 50,
                            "score": hv, "feasible": 1.0})
            records.append({"method": m, "problem": "linear-constraint", "seed": seed,
                            "budget": 50, "score": best, "feasible": 0.5})
    return records


def test_the_report_ranks_and_tests_paired_runs():
    text = summarise(_records(6), ["mfbo", "random"])
    assert "| mfbo | 1.00 |" in text and "| random | 2.00 |" in text
    assert "vs random: 12 better, 0 worse, 0 tied of 12; p = 0.000488" in text


def test_a_small_run_end_to_end(tmp_path):
    outcomes = run_method("optuna-nsga2", OUTCOME_PROBLEMS["gramacy-toy"], 6, 0)
    assert len(outcomes) == 6 and {"f", "c1", "c2"} <= set(outcomes[0])
    assert main(["--problem", "linear-constraint", "--problem", "zdt1", "--seeds", "1",
                 "--budgets", "8", "--method", "mfbo", "--method", "random",
                 "--out", str(tmp_path)]) == 0
    report = (tmp_path / "report.md").read_text()
    assert "### 8 evaluations" in report and "vs random" in report
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == 4


def test_the_report_of_runs_already_made_by_kind_of_problem(tmp_path, capsys):
    import json

    rows = _records(3)
    # a run made twice: the last counts
    rows.append({**rows[0], "score": 0.0})
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["--report", "--problem", "zdt1", "--problem", "linear-constraint",
                 "--budgets", "50", "--method", "mfbo", "--method", "random",
                 "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "## all problems: zdt1, linear-constraint" in text
    assert "## several objectives (hypervolume): zdt1" in text
    assert "## one objective with constraints (best feasible value): linear-constraint" in text
    # zdt1's seed 0 now goes to random: 5 of the 6 paired runs to mfbo over all problems
    assert "vs random: 5 better, 1 worse, 0 tied of 6" in text
    assert "vs random: 2 better, 1 worse, 0 tied of 3" in text
    assert not (tmp_path / "report.md").exists()
    # the paired tests of another method against the others
    assert main(["--report", "--problem", "zdt1", "--problem", "linear-constraint",
                 "--budgets", "50", "--method", "mfbo", "--method", "random",
                 "--reference", "random", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "tests of random against each method" in text
    assert "vs mfbo: 1 better, 5 worse, 0 tied of 6" in text


def test_tree_feasibility_runs_and_leaves_the_default_as_it_was():
    from mfbo.proposal import proposer

    built = proposer.outcome_steps
    problem = OUTCOME_PROBLEMS["linear-constraint"]
    outcomes = run_method("mfbo-tree-feasibility", problem, 12, 0)
    assert len(outcomes) == 12 and proposer.outcome_steps is built


@pytest.mark.parametrize("method, problem", [("mfbo-front-parzen", "dtlz2-k2"),
                                             ("mfbo-parego-draws", "dtlz7-k3"),
                                             ("mfbo-no-front-local", "dtlz2-k4"),
                                             ("mfbo-uniform-centre", "zdt1"),
                                             ("mfbo-pof50", "camel-disc")])
def test_outcome_search_options_run_and_leave_the_default_as_it_was(method, problem):
    from mfbo.proposal import proposer

    built = proposer.outcome_steps
    outcomes = run_method(method, OUTCOME_PROBLEMS[problem], 14, 0)
    assert len(outcomes) == 14 and proposer.outcome_steps is built


def test_smac_parego_runs_problems_of_several_objectives_only():
    pytest.importorskip("smac", reason="SMAC3 is not installed (its pyrfr could not be built)")
    outcomes = run_method("smac-parego", OUTCOME_PROBLEMS["zdt1"], 10, 0)
    assert len(outcomes) == 10 and {"f1", "f2"} <= set(outcomes[0])
    with pytest.raises(ValueError, match="several objectives without constraints"):
        run_method("smac-parego", OUTCOME_PROBLEMS["gramacy-toy"], 10, 0)


def test_a_crash_counts_as_an_infeasible_evaluation():
    problem = OUTCOME_PROBLEMS["linear-crash"]
    for method in ("mfbo-infeasible", "optuna-tpe"):
        outcomes = run_method(method, problem, 12, 0)
        assert len(outcomes) == 12 and any(o.get("failed") for o in outcomes)
        best = min(o["f"] for o in outcomes if not o.get("failed"))
        assert score(problem, outcomes) == best


def test_a_method_skips_the_problems_it_does_not_run(tmp_path, monkeypatch):
    import json

    from benchmarks.experiments import multi_objective

    monkeypatch.setitem(multi_objective.RUNS_ONLY, "random", lambda p: p.k > 1)
    assert main(["--problem", "linear-constraint", "--problem", "zdt1", "--seeds", "1",
                 "--budgets", "8", "--method", "mfbo", "--method", "random",
                 "--out", str(tmp_path)]) == 0
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert sorted((r["method"], r["problem"]) for r in runs) == [
        ("mfbo", "linear-constraint"), ("mfbo", "zdt1"), ("random", "zdt1")]
    assert "| random | " in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize("problem, outcomes", [("gramacy-toy", {"f", "c1", "c2"}),
                                               ("zdt1", {"f1", "f2"})])
def test_optuna_gp_runs_several_objectives_and_constraints(problem, outcomes):
    pytest.importorskip("torch", reason="PyTorch is not installed (Optuna's GPSampler needs "
                                        "it: pip install torch==2.13.0)")
    # past the GPSampler's 10 random startup trials
    runs = run_method("optuna-gp", OUTCOME_PROBLEMS[problem], 12, 0)
    assert len(runs) == 12 and all(set(o) == outcomes for o in runs)
    assert math.isfinite(score(OUTCOME_PROBLEMS[problem], runs))


def test_optuna_gp_without_pytorch_names_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises
    with pytest.raises(ModuleNotFoundError, match="needs PyTorch.*torch==2.13.0"):
        run_method("optuna-gp", OUTCOME_PROBLEMS["zdt1"], 12, 0)
