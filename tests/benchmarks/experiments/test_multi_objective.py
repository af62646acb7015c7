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


def test_the_report_ranks_and_tests_paired_runs():
    records = []
    for seed in range(6):
        for m, hv, best in [("mfbo", 10.0 + seed, 1.0), ("random", 5.0, 2.0 + seed)]:
            records.append({"method": m, "problem": "zdt1", "seed": seed, "budget": 50,
                            "score": hv, "feasible": 1.0})
            records.append({"method": m, "problem": "linear-constraint", "seed": seed,
                            "budget": 50, "score": best, "feasible": 0.5})
    text = summarise(records, ["mfbo", "random"])
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
