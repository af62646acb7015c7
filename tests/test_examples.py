"""Every script in examples/ runs to completion."""

import pathlib
import runpy

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files (plots) where they run
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()
