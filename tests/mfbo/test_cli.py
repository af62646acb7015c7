import subprocess
import sys

from mfbo import __version__
from mfbo.cli import main


def test_version_and_help(capsys):
    assert main([]) == 0
    assert "usage: mfbo" in capsys.readouterr().out
    out = subprocess.run([sys.executable, "-m", "mfbo", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == f"mfbo {__version__}"
