"""The benchmarks' layout rules: experiments import the harness, never each other; the harness
never imports an experiment; figures never go through pyplot.  And the one timing policy."""

import ast
from pathlib import Path

import pytest

from benchmarks import timing

ROOT = Path(__file__).resolve().parents[2] / "benchmarks"
EXPERIMENTS = sorted(p for p in (ROOT / "experiments").glob("*.py") if p.name != "__init__.py")
HARNESS = sorted(ROOT.glob("*.py"))


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_there_are_experiments_and_a_harness():
    assert {p.stem for p in EXPERIMENTS} >= {"bo_quick", "regression_friedman",
                                             "kernel_experiments"}
    assert {p.stem for p in HARNESS} >= {"bench", "report", "scaling", "timing", "tables",
                                         "figures", "environment"}


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.stem)
def test_an_experiment_imports_no_other_experiment(path):
    imported = _imports(path)
    others = {f"benchmarks.experiments.{p.stem}" for p in EXPERIMENTS if p != path}
    assert not imported & others


@pytest.mark.parametrize("path", HARNESS, ids=lambda p: p.stem)
def test_the_harness_imports_no_experiment(path):
    assert not any(name.startswith("benchmarks.experiments") for name in _imports(path))


@pytest.mark.parametrize("path", HARNESS + EXPERIMENTS, ids=lambda p: p.stem)
def test_figures_use_the_object_api(path):
    text = path.read_text(encoding="utf-8")
    assert "matplotlib.use(" not in text
    assert not any(name.startswith("matplotlib.pyplot") for name in _imports(path))


def test_median_time_warms_up_and_returns_the_last_result():
    calls = []
    out, seconds = timing.median_time(lambda: calls.append(1) or len(calls), repeats=3)
    assert len(calls) == 4 and out == 4 and seconds >= 0
    out, _ = timing.median_time(lambda: calls.append(1) or len(calls), repeats=2, warmup=0)
    assert out == 6
    with pytest.raises(ValueError, match="repeats"):
        timing.median_time(lambda: None, repeats=0)
    assert timing.timed(lambda: "x")[0] == "x"
