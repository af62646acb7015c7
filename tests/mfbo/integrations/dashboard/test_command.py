"""``mfbo dashboard``: its errors, and the dashboard rendered by a real headless browser
(Chromium) on a study that another process is writing: the page as loaded, and a page left open
while trials are told."""

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from mfbo.study.study import Study
from tests.support import ROOT, checkout_env, run_mfbo

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def _browser() -> str | None:
    return next(filter(None, map(shutil.which, BROWSERS)), None)


def test_a_missing_file_or_study_is_one_line_and_exit_code_2(tmp_path):
    missing = run_mfbo("dashboard", str(tmp_path / "none.db"), timeout=120)
    assert missing.returncode == 2
    assert missing.stderr.strip().startswith("mfbo dashboard: error: no study file")
    bad_port = run_mfbo("dashboard", "x.db", "--port", "70000", timeout=120)
    assert bad_port.returncode == 2 and "--port must be an integer" in bad_port.stderr
    for interval in ("0", "11", "soon"):
        slow = run_mfbo("dashboard", "x.db", "--reload-interval", interval, timeout=120)
        assert slow.returncode == 2 and "--reload-interval must be a number of seconds above 0 " \
            "and at most 10" in slow.stderr


def test_without_optuna_dashboard_the_extra_is_named(tmp_path, monkeypatch, capsys):
    from mfbo import Optimizer
    from mfbo.cli.main import main
    from mfbo.integrations.dashboard import EXTRA_MESSAGE
    db = str(tmp_path / "s.db")
    Optimizer({"x": (0.0, 1.0)}, storage=db).close()
    monkeypatch.setitem(sys.modules, "optuna_dashboard", None)  # as if not installed
    assert main(["dashboard", db, "--port", "0"]) == 2
    assert capsys.readouterr().err.strip() == f"mfbo dashboard: error: {EXTRA_MESSAGE}"
    assert 'pip install "mfbo[dashboard]"' in EXTRA_MESSAGE


def _text(dom: str) -> str:
    dom = re.sub(r"<(style|script)\b.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom))


def _render(browser: str, url: str, *flags: str) -> str:
    """The text of the page at ``url`` once Chromium has run its scripts for 8 s of virtual
    time (optuna-dashboard renders in the browser from its JSON API)."""
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--window-size=1400,1000",
                           "--virtual-time-budget=8000", *flags, url],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return _text(done.stdout)


def _drain(stream) -> None:
    threading.Thread(target=lambda: stream.read(), daemon=True).start()


@pytest.mark.skipif(_browser() is None, reason=f"no headless browser ({', '.join(BROWSERS)}); "
                    f".ci/run installs Debian's chromium when it runs as root")
def test_a_browser_shows_the_trials_and_best_value_and_new_trials_as_they_come(tmp_path):
    pytest.importorskip("optuna_dashboard", reason='pip install "mfbo[dashboard]"')
    from benchmarks.harness.shared_workers import start_worker
    browser, db = _browser(), str(tmp_path / "live.db")
    worker = start_worker(db, "live", target=1000, sleep=0.1, seed=0)
    dashboard = None
    try:
        tells = 0
        while tells < 10:  # the study has a few trials before the dashboard starts
            tells += '"tell"' in worker.stdout.readline()
        _drain(worker.stdout)
        dashboard = subprocess.Popen([sys.executable, "-m", "mfbo", "dashboard", db,
                                      "--port", "0"], cwd=ROOT, env=checkout_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True)
        url = re.search(r"(http://\S+)/dashboard", dashboard.stdout.readline()).group(1)
        worker.send_signal(signal.SIGSTOP)  # hold the study still while it is compared
        try:
            time.sleep(1.0)
            study = Study.open(db, "live")
            trials_page = _render(browser, f"{url}/dashboard/studies/0/trials", "--dump-dom")
            top_page = _render(browser, f"{url}/dashboard/studies/0", "--dump-dom")
        finally:
            worker.send_signal(signal.SIGCONT)
        shown = int(re.search(r"(\d+) Trials", trials_page).group(1))
        assert shown == study.n_trials >= 10
        best = re.search(r"Best Trial \(number=(\d+)\) (\S+)", top_page)
        assert int(best.group(1)) == study.best.id
        assert float(best.group(2)) == study.best.value
        time.sleep(3.0)
        later = _render(browser, f"{url}/dashboard/studies/0/trials", "--dump-dom")
        assert int(re.search(r"(\d+) Trials", later).group(1)) > shown
        screenshot = tmp_path / "dashboard.png"
        _render(browser, f"{url}/dashboard/studies/0", f"--screenshot={screenshot}")
        assert screenshot.read_bytes().startswith(b"\x89PNG")
        assert screenshot.stat().st_size > 20_000
        print(f"screenshot: {screenshot}")
    finally:
        for process in (worker, dashboard):
            if process is not None and process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()


@pytest.mark.skipif(_browser() is None, reason=f"no headless browser ({', '.join(BROWSERS)}); "
                    f".ci/run installs Debian's chromium when it runs as root")
def test_a_page_left_open_shows_a_told_trial_within_5_s_on_a_study_of_over_500_trials(
        tmp_path):
    pytest.importorskip("optuna_dashboard", reason='pip install "mfbo[dashboard]"')
    from benchmarks.harness.dashboard_latency import STUDY, BrowserTab, timed_tells, write_study
    from benchmarks.harness.shared_workers import SPACE, make_storage
    from mfbo.integrations.dashboard import RELOAD_INTERVAL
    db, n = str(tmp_path / "large.db"), 520  # optuna-dashboard alone: a poll every 10 s
    write_study(db, n)
    dashboard = tab = None
    try:
        dashboard = subprocess.Popen([sys.executable, "-m", "mfbo", "dashboard", db,
                                      "--port", "0"], cwd=ROOT, env=checkout_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True)
        url = re.search(r"(http://\S+)/dashboard", dashboard.stdout.readline()).group(1)
        tab = BrowserTab(_browser(), str(tmp_path / "profile"))  # over its DevTools pipe
        tab.go(f"{url}/dashboard/studies/0/trials")
        tab.wait_shown(n, 90)
        assert tab.shown() == n
        writer = Study(SPACE, make_storage(db), STUDY)  # this process: the dashboard's other
        # tells at several phases of the page's timer
        lags = timed_tells(tab, writer, n, (0.0, 1.1, 2.3), 20)
        polls = tab.evaluate("performance.getEntriesByType('resource').filter(e => "
                             "e.name.includes('/api/studies/0?after=')).map(e => e.startTime)")
        gaps = [(b - a) / 1000 for a, b in zip(polls, polls[1:])]
        print(f"seconds from tell to page: {[round(x, 2) for x in lags]}; between polls: "
              f"{[round(x, 2) for x in gaps]}")
        assert max(lags) < 5.0
        assert len(gaps) >= 2 and max(gaps) < RELOAD_INTERVAL + 1.5
        writer.close()
        screenshot = tmp_path / "dashboard-live.png"
        screenshot.write_bytes(tab.screenshot())
        assert screenshot.stat().st_size > 20_000
        print(f"screenshot: {screenshot}")
    finally:
        if tab is not None:
            tab.close()
        if dashboard is not None and dashboard.poll() is None:
            os.kill(dashboard.pid, signal.SIGKILL)
            dashboard.wait()
