"""The fingerprints: the same in two fresh processes, and compared name by name."""

import json
import subprocess
import sys

from benchmarks.harness import fingerprint
from tests.support import checkout_env


def test_quick_fingerprints_are_the_same_in_two_fresh_processes(tmp_path):
    paths = [tmp_path / f"{k}.json" for k in (1, 2)]
    for path in paths:
        subprocess.run([sys.executable, "-m", "benchmarks.harness.fingerprint", "--quick",
                        str(path)], check=True, env=checkout_env(), timeout=600)
    first, second = (json.loads(p.read_text()) for p in paths)
    assert first == second and {"branin-mondrian-{}-0", "est-MondrianForestRegressor"} <= \
        set(first)
    done = subprocess.run([sys.executable, "-m", "benchmarks.harness.fingerprint", "--compare",
                           *map(str, paths)], env=checkout_env(), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0 and "identical" in done.stdout


def test_compare_names_what_differs_or_is_missing(tmp_path, capsys):
    assert fingerprint.compare({"a": "1", "b": "2"}, {"a": "1", "b": "3", "c": "4"}) == \
        ["b", "c"]
    before, after = tmp_path / "b.json", tmp_path / "a.json"
    before.write_text(json.dumps({"a": "1"}))
    after.write_text(json.dumps({"a": "2"}))
    assert fingerprint.main(["--compare", str(before), str(after)]) == 1
    assert "differ: a" in capsys.readouterr().out
