"""The first-minute measurement runs at reduced sizes (CI smoke test)."""

import json


def test_first_minute_quick_prints_its_three_tables(tmp_path, capsys):
    from benchmarks.harness import first_minute

    res = first_minute.main(["--quick", "--json", str(tmp_path / "first.json")])
    out = capsys.readouterr().out
    tables = out.split("## ")[1:]
    assert [t.split()[0].rstrip(",") for t in tables] == ["Import", "First", "Compiled"]
    imports = [line for line in tables[0].splitlines() if line.startswith("| ")][1:]
    assert [line.split(" | ")[0][2:] for line in imports] == list(first_minute.HEAVY)
    runs = [line for line in tables[1].splitlines() if line.startswith("| ")][1:]
    assert len(runs) == len(first_minute.RUNS) and all(r.count("|") == 9 for r in runs)
    header = tables[2].splitlines()[2]
    assert header.count("|") == 2 + 2 * len(first_minute.RUNS)
    assert json.loads((tmp_path / "first.json").read_text()) == res
    assert set(res["runs"]) == set(first_minute.RUNS) and len(res["imports"]["mfbo"]) == 1
    for run in res["runs"].values():
        assert set(run["usual"]) == {"import_s", "call_s", "call_cpu_s", "compile_s",
                                     "functions"}
        assert 0.0 < run["usual"]["call_cpu_s"]


def test_a_run_in_a_fresh_clone_compiles_there(tmp_path):
    import subprocess

    from benchmarks.harness import first_minute

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(first_minute._ROOT), str(clone)], check=True)
    cold = first_minute.measure_run("forest", None, clone)
    assert cold["compile_s"] > 0 and any(f["compile_s"] > 0 for f in cold["functions"].values())
    assert list(clone.glob("surrogates/**/__pycache__/*.nbi"))  # numba's cache in the clone
    warm = first_minute.measure_run("forest", None, clone)
    assert warm["compile_s"] == 0
