"""The layout rules of the packages: mfbo's rooms import downwards only and never in a circle,
only ``mfbo/__init__`` reaches into the integrations, results never import the optimizer, the
library packages never import mfbo, and mfbo's tests mirror its modules."""

from pathlib import Path

import pytest

from tests.support import imported_modules as _imports, module_name as _module

ROOT = Path(__file__).resolve().parents[2]
#: mfbo's rooms from the bottom up: a module may import from its own room and those below
ROOMS = ["_core", "space", "storage", "study", "proposal", "results", "optimize", "cli",
         "integrations"]


def _files(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts)


MFBO = _files("mfbo")


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ROOMS else None


def test_every_mfbo_module_lives_in_a_room():
    loose = [_module(p) for p in MFBO if _room(_module(p)) is None]
    assert sorted(loose) == ["mfbo", "mfbo.__main__"]


@pytest.mark.parametrize("path", MFBO, ids=lambda p: _module(p))
def test_rooms_import_downwards_only(path):
    room = _room(_module(path))
    if room is None:
        return  # mfbo/__init__ and __main__: the top
    up = {name for name in _imports(path) if _room(name) is not None
          and ROOMS.index(_room(name)) > ROOMS.index(room)}
    assert not up, f"{_module(path)} ({room}) imports from rooms above it: {sorted(up)}"


@pytest.mark.parametrize("path", MFBO, ids=lambda p: _module(p))
def test_only_mfbo_init_reaches_into_the_integrations(path):
    module = _module(path)
    if module == "mfbo" or module.startswith("mfbo.integrations"):
        return
    assert not {n for n in _imports(path) if n.startswith("mfbo.integrations")}


def test_mfbo_init_names_the_integrations_lazily():
    # as strings for its lazy hook, never as an import
    init = ROOT / "mfbo" / "__init__.py"
    assert not {n for n in _imports(init) if n.startswith("mfbo.integrations")}


@pytest.mark.parametrize("path", [p for p in MFBO if _room(_module(p)) == "results"],
                         ids=lambda p: _module(p))
def test_results_never_import_the_optimizer(path):
    assert not {n for n in _imports(path) if n.startswith("mfbo.optimize")}


@pytest.mark.parametrize("path", _files("surrogates") + _files("acquisitions"),
                         ids=lambda p: _module(p))
def test_the_library_packages_never_import_mfbo_or_the_benchmarks(path):
    assert not {n for n in _imports(path) if n.split(".")[0] in ("mfbo", "benchmarks")}


def test_the_mfbo_import_graph_has_no_circle():
    modules = {_module(p): p for p in MFBO}

    def resolve(name):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None
    edges = {m: {resolve(n) for n in _imports(p)} - {None, m} for m, p in modules.items()}
    # a package's __init__ importing its own modules, and those importing siblings, is the
    # usual shape; a circle is a path from a module back to itself
    state: dict[str, int] = {}
    circle: list[str] = []

    def visit(m, path):
        state[m] = 1
        for n in sorted(edges[m]):
            if state.get(n) == 1:
                circle.extend(path[path.index(n):] + [m, n] if n in path else [m, n])
                return True
            if n not in state and visit(n, path + [m]):
                return True
        state[m] = 2
        return False
    for m in sorted(modules):
        if m not in state and visit(m, []):
            break
    assert not circle, " -> ".join(circle)


TESTS = ROOT / "tests" / "mfbo"
#: suites that check across the modules of a room (or of the package) rather than one module;
#: each lives in the room it mostly concerns, or at the top of tests/mfbo
CROSS_CUTTING = ["test_layout.py", "optimize/test_reliability.py",
                 "proposal/models/test_model_contract.py", "study/test_study_concurrency.py",
                 "study/test_study_properties.py",
                 # conditional spaces through each room's modules
                 "study/test_conditional_study.py", "results/test_conditional.py",
                 "integrations/test_sklearn_conditional.py",
                 "integrations/test_optuna_conditional.py",
                 # several objectives and constraints through each room's modules
                 "optimize/test_multi_objective.py"]
TEST_FILES = sorted(p for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)


def _tested(path: Path) -> Path:
    """The module of mfbo at the same relative path as the test file ``path``."""
    relative = path.relative_to(TESTS)
    return ROOT / "mfbo" / relative.parent / relative.name.removeprefix("test_")


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_every_test_file_is_named_after_the_module_it_tests(path):
    relative = path.relative_to(TESTS)
    assert (ROOT / "mfbo" / relative.parent).is_dir(), \
        f"tests/mfbo/{relative.parent} has no package mfbo/{relative.parent} to mirror"
    if relative.as_posix() in CROSS_CUTTING:
        return
    module = _tested(path)
    assert module.is_file() or (module.with_suffix("") / "__init__.py").is_file(), \
        (f"tests/mfbo/{relative} tests no module mfbo/{relative.parent / relative.name[5:]}: "
         f"name it test_<module>.py after the module it tests, or list it in CROSS_CUTTING")


def test_the_cross_cutting_suites_exist():
    assert [name for name in CROSS_CUTTING if not (TESTS / name).is_file()] == []


def test_every_room_has_a_tests_folder():
    assert [room for room in ROOMS if not (TESTS / room / "__init__.py").is_file()] == []


def test_every_tests_folder_is_a_package():
    # the test modules import each other as tests.mfbo.<room>...
    folders = {p.parent for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts}
    assert sorted(str(f.relative_to(TESTS)) for f in folders
                  if not (f / "__init__.py").is_file()) == []
