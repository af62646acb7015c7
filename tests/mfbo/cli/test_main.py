import subprocess
import sys

import pytest

from mfbo import __version__
from mfbo.cli.main import main


def test_version_and_help(capsys):
    assert main([]) == 0
    assert "usage: mfbo" in capsys.readouterr().out
    out = subprocess.run([sys.executable, "-m", "mfbo", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == f"mfbo {__version__}"


def test_layering_mfbo_does_not_import_benchmarks():
    code = ("import sys, mfbo, mfbo.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'benchmarks'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_subcommands_come_from_entry_points(capsys):
    import mfbo.cli.main as cli

    names = [ep.name for ep in cli._command_entry_points()]
    assert {"bench", "report"} <= set(names), (
        "the mfbo.commands entry points are not registered: pip install -e . (pyproject.toml)")
    cli.build_parser().print_help()
    help_text = capsys.readouterr().out
    assert "bench" in help_text and "report" in help_text
    assert main(["bench", "--problem", "nope", "--method", "random"]) == 2
    assert "unknown problem 'nope'" in capsys.readouterr().err


class _FakeEntryPoint:
    def __init__(self, name, load):
        self.name, self.value, self.load = name, f"fake:{name}", load


def test_plugin_commands_and_a_broken_plugin(monkeypatch, capsys):
    import mfbo.cli.main as cli

    def hello(subparsers):
        p = subparsers.add_parser("hello", help="say hello")
        p.add_argument("--code", type=int, default=0)
        p.set_defaults(handler=lambda args: print("hello") or args.code)

    def broken():
        raise ImportError("missing dependency")

    eps = [_FakeEntryPoint("hello", lambda: hello), _FakeEntryPoint("broken", broken)]
    monkeypatch.setattr(cli, "_command_entry_points", lambda: eps)
    with pytest.warns(RuntimeWarning, match="'broken'.*missing dependency"):
        assert main(["hello", "--code", "3"]) == 3
    assert capsys.readouterr().out.strip() == "hello"
    with pytest.warns(RuntimeWarning):
        assert main([]) == 0
    assert "hello" in capsys.readouterr().out
