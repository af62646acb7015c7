"""The report: its statistics, malformed records, unknown optima and suite summaries."""

import json

import numpy as np
import pytest

from benchmarks.harness import report
from benchmarks.problems.problems import SUITES


def _record(method, seed, best, hit, problem="toy", budget=3, optimum=0.0):
    trace = [best + 1.0] * (budget - 1) + [best]
    return {"problem": problem, "method": method, "seed": seed, "budget": budget,
            "best": best, "optimum": optimum, "target": optimum, "trace": trace,
            "values": trace, "evals_to_target": hit, "optimizer_time_s": 0.5,
            "continuous": False, "kind": "table", "grid": None}


def _rec(problem, method, seed, trace, optimum=None):
    return {"problem": problem, "method": method, "seed": seed, "budget": len(trace),
            "best": trace[-1], "optimum": optimum, "target": optimum, "trace": trace,
            "values": trace, "evals_to_target": None, "reached": None,
            "optimizer_time_s": 0.1, "continuous": True, "kind": "mixed", "grid": None}


def test_report_statistics(tmp_path):
    recs = [_record("a", s, b, h) for s, (b, h) in enumerate([(0.0, 3), (0.0, 1), (2.0, None)])]
    recs += [_record("b", s, b, h) for s, (b, h) in enumerate([(0.0, 2), (1.0, None)])]
    s = report.summarize(recs[:3])
    assert s["n"] == 3 and s["reached"] == 2 and s["median_evals"] == 3
    assert s["best_mean"] == pytest.approx(2 / 3) and s["best_sd"] == pytest.approx(
        np.std([0, 0, 2], ddof=1))
    assert report.summarize(recs[3:])["median_evals"] == np.inf  # half never reach it
    text = report.to_markdown(recs)
    assert "| a | 3 | 0.666667 ± 1.15 | 2/3 | 3 | 0.5 |" in text
    assert "| b | 2 | 0.5 ± 0.707 | 1/2 | — | 0.5 |" in text
    # optimizer time per evaluation: 0.5 s over the trace's 3 evaluations, or over n_evals
    assert s["ms_per_eval"] == pytest.approx(500 / 3) and "| 0.5 | 167 |" in text
    assert report.ms_per_eval(dict(recs[0], n_evals=2)) == pytest.approx(250)
    assert report.ms_per_eval(dict(recs[0], n_evals=0, trace=[])) is None
    timed = [dict(r, optimizer_time_s=t) for r, t in zip(recs[:3], (0.3, 0.03, 3.0))]
    assert report.summarize(timed)["ms_per_eval"] == pytest.approx(100)  # the median run
    with pytest.raises(TypeError, match="n_evals"):
        report.check_record(dict(recs[0], n_evals="3"))
    # a run found in two files counts once, the later one
    f1, f2 = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    f1.write_text("".join(json.dumps(r) + "\n" for r in recs))
    f2.write_text(json.dumps(_record("b", 1, 0.0, 3)) + "\n")
    assert report.summarize([r for r in report.load_records([f1, f2])
                             if r["method"] == "b"])["reached"] == 2
    with pytest.raises(FileNotFoundError):
        report.load_records(tmp_path / "none.jsonl")


def test_report_skips_a_malformed_record_naming_file_and_line(tmp_path, capsys):
    bad = json.dumps({"problem": "toy", "method": "a", "seed": 5, "budget": 3})
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(_record("a", 0, 1.0, None)) + "\n" + bad + "\n")
    with pytest.warns(UserWarning, match=r"r\.jsonl:2: .*no field 'best'"):
        recs = report.load_records(path)
    assert [r["seed"] for r in recs] == [0]
    # a file of nothing but that line: a clear error, not a KeyError
    path.write_text(bad + "\n")
    with pytest.warns(UserWarning, match=r"r\.jsonl:1"):
        assert report.main([str(path), "--out", str(tmp_path / "rep"), "--no-plots"]) == 2
    assert "no complete run" in capsys.readouterr().err
    wrong = dict(_record("a", 0, 1.0, None), trace="oops")
    path.write_text(json.dumps(wrong) + "\n")
    with pytest.warns(UserWarning, match=r"r\.jsonl:1: .*trace is not a list"):
        assert report.load_records(path) == []


def test_an_unknown_optimum_is_the_best_value_found_and_suites_are_summarised():
    a, b = SUITES["sklearn-tune"].test[:2]
    recs = [_rec(a, "mondrian", 0, [0.5, 0.2, 0.1]), _rec(a, "mondrian", 1, [0.4, 0.3, 0.3]),
            _rec(a, "random", 0, [0.6, 0.5, 0.4]), _rec(a, "random", 1, [0.5, 0.5, 0.5]),
            _rec(a, "rf-smac", 0, [0.3, 0.3, 0.3]), _rec(a, "rf-smac", 1, [0.3, 0.3, 0.3]),
            _rec(b, "mondrian", 0, [2.0, 1.0, 1.0]), _rec(b, "random", 0, [3.0, 3.0, 3.0])]
    for r in recs:
        report.check_record(r)  # a null optimum and target are allowed
    methods, estimated = report._with_reference(report._groups(recs)[(a, 3)])
    assert estimated and all(r["optimum"] == 0.1 for rs in methods.values() for r in rs)
    assert [r["evals_to_target"] for r in methods["mondrian"]] == [3, None]
    assert report.summarize(methods["mondrian"])["reached"] == 1
    md = report.to_markdown(recs)
    assert f"## {a}, 3 evaluations" in md and "Optimum unknown; f* = 0.1, the best" in md
    assert "| mondrian | 2 | 0.2 ± 0.141 | 1/2 | — | 0.1 |" in md
    # mean bests on a: mondrian 0.2, rf-smac 0.3, random 0.45; on b: mondrian 1, random 3
    rows = report.suite_summary({k: v for k, v in report._groups(recs).items()})
    assert rows["mondrian"]["mean_rank"] == 1.0 and rows["random"]["mean_rank"] == 2.5
    assert rows["rf-smac"]["problems"] == 1 and rows["rf-smac"]["mean_rank"] == 2.0
    assert rows["rf-smac"]["mean_regret"] == pytest.approx(0.1 / 0.25)
    assert rows["random"]["mean_regret"] == 1.0 and rows["mondrian"]["worst_regret"] == 0.0
    assert "## Summary: sklearn-tune (test split), 2 problems" in md
    assert "| mondrian | 2 | 1.00 | 0 | 0 |" in md and "| rf-smac | 1 | 2.00 | 0.4 | 0.4 |" in md
    # beside quality, the median optimizer time per evaluation over the split's runs
    assert rows["mondrian"]["ms_per_eval"] == pytest.approx(100 / 3)
    assert "optimizer ms/eval" in md and "seed 1: 0.4 | 33.3 |" in md
    slow = [dict(r, optimizer_time_s=0.9) if r["method"] == "random" and r["problem"] == b
            else r for r in recs]
    assert report.suite_summary(report._groups(slow))["random"]["ms_per_eval"] == \
        pytest.approx(100 / 3)  # median of 33.3, 33.3 and 300 ms
    with pytest.raises(TypeError, match="optimum"):
        report.check_record(dict(recs[0], optimum="x"))


def test_the_summary_counts_collapsed_runs_and_names_the_fragile_problems():
    a, b = SUITES["sklearn-tune"].test[:2]
    recs = [_rec(a, "mondrian", 0, [0.5, 0.1]), _rec(a, "mondrian", 1, [0.5, 0.35]),
            _rec(a, "random", 0, [0.6, 0.4]), _rec(a, "random", 1, [0.6, 0.5]),
            # on b random search's mean (1.2) is nearer the best (1.1) than its runs' spread
            _rec(b, "mondrian", 0, [2.0, 1.0]), _rec(b, "mondrian", 1, [2.0, 1.2]),
            _rec(b, "random", 0, [2.0, 1.0]), _rec(b, "random", 1, [2.0, 1.4])]
    rows = report.suite_summary(report._groups(recs))
    m, r = rows["mondrian"], rows["random"]
    # a: best mean 0.225, random 0.45: mondrian's runs at -0.556 and 0.556, random's 0.78, 1.22
    # b: best 1.1, random 1.2: mondrian's runs at -1 and 1, random's -1 and 3
    assert m["run_regrets"] == pytest.approx([-5 / 9, 5 / 9, -1.0, 1.0])
    assert (m["collapsed"], m["runs"], m["collapsed_robust"], m["runs_robust"]) == (2, 4, 1, 2)
    assert (r["collapsed"], r["runs"], r["collapsed_robust"], r["runs_robust"]) == (3, 4, 2, 2)
    assert m["worst_decile"] == pytest.approx(np.quantile([-5 / 9, 5 / 9, -1, 1], 0.9))
    assert m["fragile"] == [(b, 2)] and r["fragile"] == [(b, 2)]
    # random's median run: 0.45 on a, 1.2 on b; only random's 0.5 and 1.4 are worse
    assert (m["worse_than_random"], m["runs_vs_random"]) == (0, 4)
    assert (r["worse_than_random"], r["runs_vs_random"]) == (2, 4)
    # mondrian has the best mean on both: its runs are the floor (1 of 2 collapsed on each)
    assert (m["collapsed_as_best"], m["worse_than_random_as_best"], m["runs_as_best"]) == \
        (2, 0, 4)
    assert (r["collapsed_as_best"], r["runs_as_best"]) == (0, 0)
    assert report.collapse_floor(rows) == (2, 0, 4)
    md = report.to_markdown(recs)
    assert "collapsed runs (regret >= 0.5)" in md and "| 2 of 4 (50 %) | 1 of 2 (50 %) |" in md
    assert "as good as the best on every problem: 2 of 4 (50 %) collapsed, 0 of 4 (0 %) " \
           "worse than random search's median run." in md
    assert "runs worse than random search's median run" in md
    assert f"Fragile problems (random search's mean within one standard deviation of its " \
           f"runs of the best mean; their normalised regrets are mostly noise): {b} (2 evals)." \
           in md
