"""Paired Wilcoxon tests of the report: pairing by (problem, budget, seed), scaling by the
problem's spread, known answers (one method better on every pair, identical methods), per
family, and the worst run of the suite summary."""

import pytest

from benchmarks.harness import paired, report
from benchmarks.problems.problems import family_of


def _rec(problem, method, seed, best, budget=6):
    trace = [best + 1.0] * (budget - 1) + [best]
    return {"problem": problem, "method": method, "seed": seed, "budget": budget,
            "best": best, "optimum": 0.0, "target": 1e-3, "trace": trace, "values": trace,
            "evals_to_target": None, "reached": False, "optimizer_time_s": 0.1,
            "continuous": True, "kind": "continuous", "grid": None}


DEV = ["bbob-f01-d02-i01", "bbob-f01-d02-i02", "bbob-f01-d02-i03"]  # one family, dev split


def _records(better=True):
    """mondrian, random and rf-smac on 3 problems x 4 seeds = 12 pairs; mondrian beats
    random on every pair (or loses every one), rf-smac always equals mondrian."""
    recs = []
    for k, problem in enumerate(DEV):
        scale = 10.0 ** k  # problems of very different scales
        for seed in range(4):
            mine = scale * (1.0 + 0.1 * seed)
            # distinct scaled differences: the exact test, not the permutation one for ties
            theirs = mine + scale * (0.5 + 0.01 * seed + 0.002 * k) * (1 if better else -0.5)
            recs += [_rec(problem, "mondrian", seed, mine), _rec(problem, "random", seed, theirs),
                     _rec(problem, "rf-smac", seed, mine)]
    return recs


def test_one_method_better_on_every_pair_is_significant():
    r = paired.signed_rank_test([-1.0] * 12)
    assert r == {"n": 12, "wins": 12, "ties": 0, "losses": 0, "p": pytest.approx(2 / 2**12),
                 "verdict": "better"}
    assert paired.signed_rank_test([0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0])["verdict"] == "worse"
    # five pairs cannot reach 0.05 two-sided (the exact minimum is 2/32)
    r = paired.signed_rank_test([-1.0, -2.0, -3.0, -4.0, -5.0])
    assert r["p"] == pytest.approx(0.0625) and r["verdict"] == "no"


def test_identical_results_are_ties_not_an_error():
    r = paired.signed_rank_test([0.0] * 12)
    assert r == {"n": 12, "wins": 0, "ties": 12, "losses": 0, "p": 1.0, "verdict": "no"}
    assert paired.signed_rank_test([])["p"] is None
    r = paired.signed_rank_test([0.0, 0.0, -1.0])
    assert r["ties"] == 2 and r["wins"] == 1 and r["p"] == 1.0
    with pytest.raises(ValueError, match="finite"):
        paired.signed_rank_test([float("nan")])


def test_pairs_share_problem_budget_and_seed_and_are_scaled_by_the_spread():
    recs = [_rec("a", "m", 0, 1.0), _rec("a", "m", 1, 2.0), _rec("a", "r", 0, 3.0),
            _rec("a", "r", 2, 9.0),  # seed 2 has no partner
            _rec("a", "m", 0, 5.0, budget=8), _rec("a", "r", 0, 5.0, budget=8),
            dict(_rec("b", "m", 0, 0.0), best=None), _rec("b", "r", 0, 1.0)]
    groups = report._groups(recs)
    pairs = paired.pair_differences(groups, "m", "r")
    # spread on (a, 6): 9 - 1 = 8; on (a, 8) every run has one value: difference 0
    assert pairs == [("a", 6, 0, pytest.approx(-2.0 / 8)), ("a", 8, 0, 0.0)]
    assert paired.compare(groups, "m")["r"]["n"] == 2


def test_the_report_tests_the_reference_against_each_method_overall_and_per_family():
    groups = report._groups(_records())
    results = paired.compare(groups, "mondrian")
    assert results["random"]["wins"] == 12 and results["random"]["verdict"] == "better"
    assert results["random"]["p"] < 0.05
    assert results["rf-smac"] == {"n": 12, "wins": 0, "ties": 12, "losses": 0, "p": 1.0,
                                  "verdict": "no"}
    by_family = paired.compare_by(groups, "mondrian", family_of)
    assert list(by_family) == ["bbob-f01-d02"]
    md = report.to_markdown(_records())
    assert "### Paired tests: bbob (dev split), mondrian against each method" in md
    assert "| random | 12 | 12 | 0 | 0 | 0.00049 | yes: mondrian better |" in md
    assert "| rf-smac | 12 | 0 | 12 | 0 | 1.000 | no |" in md
    assert "| bbob-f01-d02 | 12/0/0, p 0.00049, better | 0/12/0, p 1.000 |" in md
    assert ("Families where mondrian is significantly worse than random search (dev split): "
            "none.") in md
    worse = report.to_markdown(_records(better=False))
    assert "| random | 12 | 0 | 0 | 12 | 0.00049 | yes: mondrian worse |" in worse
    assert ("Families where mondrian is significantly worse than random search (dev split): "
            "bbob-f01-d02.") in worse
    # another reference; a reference without runs is said so
    assert "| mondrian | 12 | 0 | 12 | 0 | 1.000 | no |" in report.to_markdown(
        _records(), reference="rf-smac")
    assert "No runs of the reference method 'smac' in the dev split" in report.to_markdown(
        _records(), reference="smac")


def test_the_summary_shows_each_methods_worst_run():
    rows = report.suite_summary(report._groups(_records()))
    # on each problem mondrian's mean is the best and random's mean is 1 by definition
    problem, budget, seed, regret = rows["random"]["worst_run"]
    assert (budget, seed) == (6, 3) and regret > 1.0
    assert rows["mondrian"]["worst_run"][2] == 3 and rows["mondrian"]["worst_run"][3] > 0
    md = report.to_markdown(_records())
    assert "worst run (its normalised regret)" in md
    assert f"{problem}, 6 evals, seed 3: " in md
