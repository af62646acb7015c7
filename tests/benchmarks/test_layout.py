"""The benchmarks' layout rules.  Three rooms importing one way: the problems import neither
the harness nor an experiment, the harness never imports an experiment, an experiment never
imports another; every module lives in a room; figures never go through pyplot; and these
tests mirror the rooms (``tests/benchmarks/<room>/test_<module>.py``)."""

from pathlib import Path

import pytest

from tests.support import imported_modules as _imports

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parents[1] / "benchmarks"
ROOMS = ("problems", "harness", "experiments")


def _modules(room: str) -> list[Path]:
    return sorted(p for p in (ROOT / room).glob("*.py") if p.name != "__init__.py")


PROBLEMS, HARNESS, EXPERIMENTS = (_modules(room) for room in ROOMS)
ALL = PROBLEMS + HARNESS + EXPERIMENTS


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def test_every_module_lives_in_a_room():
    assert sorted(p.name for p in ROOT.glob("*.py")) == ["__init__.py"]
    assert sorted(p.name for p in ROOT.iterdir() if p.is_dir() and p.name != "__pycache__") \
        == sorted(ROOMS)
    for room in ROOMS:
        assert (ROOT / room / "__init__.py").is_file()
    assert {p.stem for p in PROBLEMS} >= {"problems", "sklearn_tune", "mixed", "bbob", "data"}
    assert {p.stem for p in HARNESS} >= {"bench", "report", "scaling", "cli", "methods",
                                         "timing", "tables", "figures", "environment"}
    assert {p.stem for p in EXPERIMENTS} >= {"bo_quick", "regression_friedman",
                                             "kernel_experiments"}


@pytest.mark.parametrize("path", PROBLEMS, ids=_id)
def test_a_problem_module_imports_neither_the_harness_nor_an_experiment(path):
    assert not any(name.startswith(("benchmarks.harness", "benchmarks.experiments"))
                   for name in _imports(path))


@pytest.mark.parametrize("path", HARNESS, ids=_id)
def test_the_harness_imports_no_experiment(path):
    assert not any(name.startswith("benchmarks.experiments") for name in _imports(path))


@pytest.mark.parametrize("path", EXPERIMENTS, ids=_id)
def test_an_experiment_imports_no_other_experiment(path):
    imported = _imports(path)
    others = {f"benchmarks.experiments.{p.stem}" for p in EXPERIMENTS if p != path}
    assert not imported & others


@pytest.mark.parametrize("path", ALL, ids=_id)
def test_figures_use_the_object_api(path):
    text = path.read_text(encoding="utf-8")
    assert "matplotlib.use(" not in text
    assert not any(name.startswith("matplotlib.pyplot") for name in _imports(path))


def test_the_tests_mirror_the_rooms():
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == ["test_layout.py"]
    for room in ROOMS:
        tests = sorted((TESTS / room).glob("test_*.py"))
        assert tests and (TESTS / room / "__init__.py").is_file()
        for test in tests:
            module = ROOT / room / f"{test.stem.removeprefix('test_')}.py"
            assert module.is_file(), f"{test.relative_to(TESTS)} tests no module of {room}/"
