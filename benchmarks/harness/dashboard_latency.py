"""How fresh ``mfbo dashboard`` is and what a page refresh costs its server, on a large SQLite
study and on a PostgreSQL study written by several worker processes.

1. A study of ``--trials`` finished trials is written (SQLite: by one process, configurations
   told directly; PostgreSQL: the same, into a throwaway server of
   :mod:`~benchmarks.harness.postgres_server`).
2. ``mfbo dashboard`` is started on it as a subprocess; the first page load (which replays the
   whole journal) is timed.
3. ``--workers`` worker processes (:mod:`~benchmarks.harness.shared_workers`, random search)
   add ``--new`` trials while the dashboard's API (what the page polls) is read every
   ``--poll`` seconds: each trial's *freshness* is the time from its tell (the worker's clock
   after the commit) to the first API answer that shows it complete.
4. With the workers done, one page refresh is timed: the requests a study page makes
   (``/api/meta``, ``/api/studies``, ``/api/studies/0``, ``/api/studies/0/param_importances``)
   and the live poll alone (``/api/studies/0?after=N``, what the page asks every few seconds),
   each ``--repeats`` times; on one host the wall time of a request is its server time plus
   a local round trip, and the server's processor seconds (``page_cpu``, ``poll_cpu``) are
   its own work, whatever else the machine runs.
5. With a headless Chromium (skipped without one), the trial list of the study is left open in
   a browser tab and ``--page-tells`` trials are told, a few seconds apart, by this process:
   each one's *on-page freshness* is the time from its tell to the page saying it has it (the
   page polls at most every ``mfbo dashboard --reload-interval`` seconds).

    python -m benchmarks.harness.dashboard_latency --storage sqlite --trials 10000
    python -m benchmarks.harness.dashboard_latency --storage postgresql --trials 2000 --workers 4
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import json
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

__all__ = ["write_study", "start_dashboard", "freshness", "refresh_cost", "page_freshness",
           "BrowserTab", "browser", "main"]

_ROOT = Path(__file__).resolve().parents[2]
STUDY = "watched"
#: the requests one load of a study page makes, after the page itself
PAGE = ("/api/meta", "/api/studies", "/api/studies/0", "/api/studies/0/param_importances")


#: the names of a headless browser, first found first used
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser() -> str | None:
    """The path of a Chromium (:data:`BROWSERS`), or None."""
    return next(filter(None, map(shutil.which, BROWSERS)), None)


def _high(fd: int) -> int:
    """``fd`` moved to a number of 10 or more."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class BrowserTab:
    """The tab of a headless Chromium, driven through its DevTools protocol over a pipe (what
    Playwright does, with the standard library only)."""

    def __init__(self, browser: str, profile: str):
        # Chromium reads fd 3 and writes fd 4: the pipes' ends, kept clear of those numbers,
        # are put there by a Python that then becomes the browser
        to_r, to_w, from_r, from_w = (_high(fd) for fd in (*os.pipe(), *os.pipe()))
        self.process = subprocess.Popen(
            [sys.executable, "-c", "import os, sys; os.dup2(int(sys.argv[1]), 3); "
             "os.dup2(int(sys.argv[2]), 4); os.execv(sys.argv[3], sys.argv[3:])", str(to_r),
             str(from_w), browser, "--headless", "--no-sandbox", "--disable-gpu",
             "--hide-scrollbars", "--window-size=1400,1000", "--remote-debugging-pipe",
             f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(to_r, from_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self._out, self._in, self._buffer, self._id = to_w, from_r, b"", 0
        pages = [t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page"]
        self.session = self.call("Target.attachToTarget", targetId=pages[0]["targetId"],
                                 flatten=True)["sessionId"]

    def call(self, method: str, session: str | None = None, **params):
        """The result of the DevTools command ``method`` (in the tab's ``session``, or of
        the browser)."""
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 60
        while True:
            while b"\0" not in self._buffer:
                if not select.select([self._in], [], [], max(0, deadline - time.monotonic()))[0]:
                    raise TimeoutError(f"no answer from Chromium to {method}")
                chunk = os.read(self._in, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed its DevTools pipe")
                self._buffer += chunk
            line, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(line)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def evaluate(self, expression: str):
        """The value of the script ``expression`` in the tab."""
        return self.call("Runtime.evaluate", self.session, expression=expression,
                         returnByValue=True)["result"].get("value")

    def go(self, url: str) -> None:
        """Load ``url`` in the tab."""
        self.call("Page.navigate", self.session, url=url)

    def shown(self) -> int:
        """The number of trials the trial list in the tab says it has (0 before it does)."""
        found = re.search(r"(\d+) Trials", self.evaluate("document.body.innerText") or "")
        return int(found.group(1)) if found else 0

    def wait_shown(self, n: int, timeout: float) -> None:
        """Wait until the trial list says it has ``n`` trials, at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self.shown() < n and time.monotonic() < deadline:
            time.sleep(0.2)

    def screenshot(self) -> bytes:
        """A PNG of the tab."""
        return base64.b64decode(self.call("Page.captureScreenshot", self.session,
                                          format="png")["data"])

    def close(self) -> None:
        os.close(self._out)
        os.close(self._in)
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()


def write_study(url: str, n: int, seed: int = 0) -> float:
    """Write ``n`` complete trials of Branin's function into study :data:`STUDY` at ``url``;
    the seconds it took."""
    import numpy as np

    from benchmarks.harness.shared_workers import SPACE, make_storage, objective
    from mfbo.study.study import Study

    study = Study(SPACE, make_storage(url), STUDY)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for x, y in zip(rng.uniform(-5, 10, n), rng.uniform(0, 15, n)):
        now = time.time()
        study.tell({"x": float(x), "y": float(y)}, "complete", objective(x, y), {}, None,
                   now, now, None)
    study.close()
    return time.perf_counter() - start


def _get(url: str):
    with urllib.request.urlopen(url, timeout=120) as response:
        return json.loads(response.read())


def _timed(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        response.read()
    return time.perf_counter() - start


def start_dashboard(storage: str) -> tuple[subprocess.Popen, str]:
    """``mfbo dashboard storage`` on a free port: the process and its base URL."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")])))
    process = subprocess.Popen([sys.executable, "-m", "mfbo", "dashboard", storage, "--port",
                                "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, env=env, cwd=_ROOT)
    line = process.stdout.readline()
    found = re.search(r"(http://\S+)/dashboard", line)
    if found is None:
        process.kill()
        raise RuntimeError(f"mfbo dashboard did not start: {line!r}")
    return process, found.group(1)


def freshness(base: str, url: str, n_before: int, new: int, workers: int,
              poll: float) -> tuple[list[float], list[float]]:
    """Seconds from each new trial's tell to the API showing it complete, as ``workers``
    processes add ``new`` trials to a study of ``n_before`` finished ones: of every new
    trial, and of those told once every worker had opened the study (each worker's opening
    replays the whole journal, which competes with the dashboard for the processors)."""
    from benchmarks.harness.shared_workers import start_worker

    told: dict[int, float] = {}
    opened: list[float] = []
    procs = [start_worker(url, STUDY, n_before + new, sleep=0.25, seed=s, surrogate="random")
             for s in range(workers)]

    def follow(proc):
        for line in proc.stdout:
            record = json.loads(line)
            if record["event"] == "tell":
                told[record["trial"]] = record["time"]
            elif record["event"] == "open":
                opened.append(record["time"])

    readers = [threading.Thread(target=follow, args=(p,), daemon=True) for p in procs]
    for r in readers:
        r.start()
    seen: dict[int, float] = {}
    deadline = None  # once the workers are done: 30 s more for the last trials to show
    while deadline is None or (time.monotonic() < deadline and set(told) - set(seen)):
        detail = _get(f"{base}/api/studies/0?after={n_before}")
        now = time.time()
        for t in detail["trials"]:
            if t["state"] == "Complete" and t["number"] not in seen:
                seen[t["number"]] = now
        time.sleep(poll)
        if deadline is None and all(p.poll() is not None for p in procs):
            for r in readers:
                r.join(timeout=10)
            deadline = time.monotonic() + 30
    lags = {i: seen[i] - told[i] for i in sorted(told) if i in seen}
    settled = max(opened, default=0.0)
    return list(lags.values()), [lag for i, lag in lags.items() if told[i] > settled]


def cpu_seconds(pid: int) -> float:
    """The processor seconds process ``pid`` has used (user and system; Linux's ``/proc``)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def refresh_cost(base: str, n_trials: int, repeats: int, pid: int | None = None) -> dict:
    """Median and largest seconds of each request of a page load, of the whole load, and of
    the live poll; with the server's ``pid``, also the processor seconds the server spent on
    a whole load and on a poll (``page_cpu``, ``poll_cpu``: its own work, whatever else the
    machine runs)."""
    times: dict[str, list[float]] = {path: [] for path in PAGE}
    times["page"], times["poll"] = [], []
    if pid is not None:
        times["page_cpu"], times["poll_cpu"] = [], []
    for _ in range(repeats):
        page = 0.0
        cpu = cpu_seconds(pid) if pid is not None else 0.0
        for path in PAGE:
            t = _timed(base + path)
            times[path].append(t)
            page += t
        times["page"].append(page)
        if pid is not None:
            times["page_cpu"].append(cpu_seconds(pid) - cpu)
            cpu = cpu_seconds(pid)
        times["poll"].append(_timed(f"{base}/api/studies/0?after={n_trials}"))
        if pid is not None:
            times["poll_cpu"].append(cpu_seconds(pid) - cpu)
    return {k: {"median": statistics.median(v), "max": max(v)} for k, v in times.items()}


def timed_tells(tab: BrowserTab, writer, shown: int, pauses, timeout: float) -> list[float]:
    """Seconds from each trial ``writer`` (a :class:`~mfbo.study.study.Study` of the
    dashboard's study) tells, after each of ``pauses`` seconds, to the trial list in ``tab``,
    which says it has ``shown`` trials before the first, saying it has it (``timeout`` at
    most for each)."""
    from benchmarks.harness.shared_workers import objective

    lags = []
    for pause in pauses:
        time.sleep(pause)
        now = time.time()
        writer.tell({"x": 1.0, "y": 2.0}, "complete", objective(1.0, 2.0), {}, None, now, now,
                    None)
        told, shown = time.monotonic(), shown + 1
        while tab.shown() < shown and time.monotonic() - told < timeout:
            time.sleep(0.05)
        lags.append(time.monotonic() - told)
    return lags


def page_freshness(base: str, url: str, tells: int, profile: str) -> tuple[list[float], bytes]:
    """Seconds from each of ``tells`` trials told (by this process, a few seconds apart) to
    the trial list of the study, open in a headless Chromium, saying it has it; and a
    screenshot of the page."""
    from benchmarks.harness.shared_workers import SPACE, make_storage
    from mfbo.study.study import Study

    writer = Study(SPACE, make_storage(url), STUDY)
    writer.refresh()
    n = writer.n_trials
    tab = BrowserTab(browser(), profile)
    try:
        tab.go(f"{base}/dashboard/studies/0/trials")
        tab.wait_shown(n, 120)
        # tells at several phases of the page's timer
        lags = timed_tells(tab, writer, n, [0.7 * (i % 5) for i in range(tells)], 30)
        return lags, tab.screenshot()
    finally:
        tab.close()
        writer.close()


def _summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    return {"n": len(values), "median": statistics.median(values),
            "p90": ordered[int(0.9 * (len(values) - 1))], "max": ordered[-1]}


def run(storage: str, trials: int, workers: int, new: int, poll: float, repeats: int,
        page_tells: int = 0, screenshot: str | None = None) -> dict:
    """The whole measurement (see the module) on a fresh ``storage`` ("sqlite" or
    "postgresql"); the on-page freshness of ``page_tells`` trials when a browser is found
    (the page's screenshot saved at ``screenshot``)."""
    with tempfile.TemporaryDirectory() as tmp:
        server = None
        if storage == "postgresql":
            from benchmarks.harness import postgres_server
            reason = postgres_server.unavailable()
            if reason is not None:
                raise SystemExit(f"no PostgreSQL server: {reason}")
            server = postgres_server.PostgresServer(durable=True)
            url = server.new_database()
        else:
            url = str(Path(tmp) / "watched.db")
        try:
            out = {"storage": storage, "trials": trials, "workers": workers,
                   "load_average_before": os.getloadavg(),
                   "write_seconds": write_study(url, trials)}
            process, base = start_dashboard(url)
            try:
                out["first_load_seconds"] = _timed(f"{base}/api/studies/0")
                lags, settled = freshness(base, url, trials, new, workers, poll)
                out["freshness_seconds"] = _summary(lags)
                out["freshness_once_open_seconds"] = _summary(settled)
                out["refresh_seconds"] = refresh_cost(base, trials + new, repeats, process.pid)
                if page_tells and browser() is not None:
                    lags, png = page_freshness(base, url, page_tells, str(Path(tmp) / "chrome"))
                    out["page_freshness_seconds"] = _summary(lags)
                    if screenshot:
                        Path(screenshot).write_bytes(png)
                elif page_tells:
                    out["page_freshness_seconds"] = f"no browser ({', '.join(BROWSERS)})"
                out["load_average_after"] = os.getloadavg()
            finally:
                process.kill()
                process.wait()
        finally:
            if server is not None:
                server.close()
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.harness.dashboard_latency",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--storage", choices=("sqlite", "postgresql"), default="sqlite")
    p.add_argument("--trials", type=int, default=10_000, help="finished trials written first")
    p.add_argument("--workers", type=int, default=4, help="worker processes adding trials")
    p.add_argument("--new", type=int, default=40, help="trials the workers add")
    p.add_argument("--poll", type=float, default=0.2, help="seconds between two API reads")
    p.add_argument("--repeats", type=int, default=5, help="page refreshes timed")
    p.add_argument("--page-tells", type=int, default=5, help="trials told while a browser "
                   "shows the study (0: no browser)")
    p.add_argument("--screenshot", default=None, help="save the browser's page to this PNG")
    p.add_argument("--json", default=None, help="also write the results to this file")
    a = p.parse_args(argv)
    for name in ("trials", "workers", "new", "repeats"):
        if getattr(a, name) < 1:
            p.error(f"--{name} must be at least 1")
    if a.page_tells < 0:
        p.error("--page-tells must be at least 0")
    out = run(a.storage, a.trials, a.workers, a.new, a.poll, a.repeats, a.page_tells,
              a.screenshot)
    text = json.dumps(out, indent=2)
    print(text)
    if a.json:
        Path(a.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
