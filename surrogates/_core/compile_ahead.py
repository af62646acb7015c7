"""Compiling kernels ahead in a second process, while this one compiles the kernels it needs
first.

On a fresh install (an empty numba cache) a model's first fit, prediction and update each
compile their kernels in turn, one core working and the other idle.  :func:`start` hands the
kernels needed later to a second Python process, which compiles them with the signatures
given; numba writes each to its on-disk cache.  Before a kernel's first call here,
:func:`ready` waits until the second process has written it, and numba then loads it from the
cache instead of compiling it: the first fit and prediction take about the longer of the two
compilations instead of their sum.  Short kernels needed soon after are compiled here while
this process would otherwise wait.  The compiled code is the same, so every number is too.

A kernel is sent ahead only where numba would otherwise compile it here: its signature is
neither compiled in this process nor in the on-disk cache, numba caches to a directory that
both processes see, and the machine has a second core.  Where anything goes wrong (no second
core, no interpreter to start, a failed process), numba compiles here as it would without this
module.  The second process is a copy of this one (``fork``) where this process runs a single
thread on Linux, else a new interpreter.  ``SURROGATES_COMPILE_AHEAD=0`` turns it off.
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import subprocess
import sys
import threading

from numba import types

__all__ = ["array", "compile_all", "compiling", "ready", "start"]

#: the second process when it is a new interpreter: reads (sys.path, [(module, name,
#: signature), ...]) from its standard input and runs :func:`compile_all`, printing each
#: "module:name" it has done
_CHILD = f"""\
import importlib, pickle, sys
path, jobs = pickle.load(sys.stdin.buffer)
sys.path[:] = path
from {__name__} import compile_all
compile_all([(getattr(importlib.import_module(m), n), s) for m, n, s in jobs],
            lambda key: print(key, flush=True))
"""

_lock = threading.Lock()
_pending: dict = {}  # "module:name" -> the process compiling it
_sent: set = set()   # every "module:name" handed to a process (each is sent once)
_owner = [None]      # the process id that started the second process
_meanwhile: list = []  # (kernel, signature) compiled here while waiting for the other process


def array(dtype, ndim: int):
    """numba's type of a C-contiguous, writable array of ``dtype`` with ``ndim`` axes."""
    return types.Array(dtype, ndim, "C")


def _key(kernel) -> str:
    return f"{kernel.py_func.__module__}:{kernel.py_func.__name__}"


def _enabled() -> bool:
    if os.environ.get("SURROGATES_COMPILE_AHEAD", "1") == "0" or not sys.executable:
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every platform)
        cores = os.cpu_count() or 1
    return cores >= 2


def _would_compile(kernel, sig) -> bool:
    """Whether the first call of ``kernel`` with ``sig`` would compile it here: compiled
    neither in this process nor in a cache on disk that a second process writes too."""
    from numba.core.caching import NullCache

    from .cache import ProcessCacheLocator

    if tuple(sig) in kernel.overloads:
        return False
    cache = kernel._cache
    if isinstance(cache, NullCache) or isinstance(cache._impl.locator, ProcessCacheLocator):
        return False  # no cache, or one private to this process
    key = cache._index_key(tuple(sig), kernel.targetctx.codegen())
    return key not in cache._cache_file._load_index()


def _compile(kernel, sig) -> None:
    """Compile ``kernel`` for ``sig``; if that fails, the kernel's first call compiles it
    (and raises) as without this module."""
    try:
        kernel.compile(sig)
    except Exception:  # noqa: BLE001
        pass


def compile_all(todo, report) -> None:
    """The second process's work: compile each ``(kernel, signature)`` of ``todo`` in turn and
    ``report`` its "module:name" when done."""
    for kernel, sig in todo:
        _compile(kernel, sig)
        report(_key(kernel))


class _Forked:
    """A forked copy of this process compiling kernels, with the parts of ``Popen`` used
    here."""

    def __init__(self, pid: int, stdout):
        self.pid = pid
        self.stdout = stdout
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self):
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode

    def kill(self):
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _can_fork() -> bool:
    """Whether a copy of this process can compile: fork is available and this process runs
    one thread (a copy of a process with others could inherit a lock they hold); the copy
    starts with numba imported and its compiler set up, about a second sooner than a new
    interpreter."""
    return hasattr(os, "fork") and sys.platform.startswith("linux") \
        and threading.active_count() == 1


def _fork(todo) -> _Forked:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy: compile, report each, and leave without running exit handlers
        try:
            os.close(r)
            compile_all(todo, lambda key: os.write(w, (key + "\n").encode()))
        finally:
            os._exit(0)
    os.close(w)
    return _Forked(pid, os.fdopen(r, "rb", buffering=0))  # (unbuffered: see _has_output)


def _spawn(todo) -> subprocess.Popen:
    payload = pickle.dumps((list(sys.path), [(k.py_func.__module__, k.py_func.__name__, s)
                                             for k, s in todo]))
    proc = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
    proc.stdin.write(payload)
    proc.stdin.close()
    return proc


def start(jobs, meanwhile=()) -> None:
    """Compile ``jobs``, ``(kernel, signature)`` pairs in the order they will be needed, in a
    second process, those of them that numba would otherwise compile here; ``meanwhile``
    (short kernels needed soon after them) are compiled here while :func:`ready` would
    otherwise wait."""
    if not _enabled():
        return
    with _lock:
        try:
            todo = [(k, tuple(s)) for k, s in jobs
                    if _key(k) not in _sent and _would_compile(k, s)]
        except Exception:  # noqa: BLE001 - numba's cache internals differ: compile here
            return
        if not todo:
            return
        try:
            proc = _fork(todo) if _can_fork() else _spawn(todo)
        except Exception:  # noqa: BLE001 - no second process: compile here
            return
        if not _sent:
            atexit.register(_stop)
        _owner[0] = os.getpid()
        for k, _ in todo:
            _sent.add(_key(k))
            _pending[_key(k)] = proc
        _meanwhile.extend((k, tuple(s)) for k, s in meanwhile if _key(k) not in _sent)
        _sent.update(_key(k) for k, _ in meanwhile)


def ready(*kernels) -> None:
    """Wait until the second process has compiled each of ``kernels`` it was given (at once
    for any other kernel)."""
    if not _pending:
        return
    with _lock:
        if _not_owner():
            return
        for kernel in kernels:
            key = _key(kernel)
            proc = _pending.get(key)
            while proc is not None and key in _pending:
                if _meanwhile and not _has_output(proc):
                    _compile(*_meanwhile.pop(0))
                    continue
                if not _read_report(proc):
                    break


def compiling(kernel) -> bool:
    """Whether the second process is still compiling ``kernel``, from what it has reported so
    far (never waits): a caller with another way to compute the same numbers can take it
    until then."""
    if not _pending:
        return False
    with _lock:
        if _not_owner():
            return False
        key = _key(kernel)
        proc = _pending.get(key)
        while proc is not None and key in _pending and _has_output(proc):
            if not _read_report(proc):
                break
        return key in _pending


def _not_owner() -> bool:
    """Whether this is a forked copy of the process that started the second one (whose pipe
    is its parent's): then nothing is pending here."""
    if os.getpid() == _owner[0]:
        return False
    _pending.clear()
    _meanwhile.clear()
    return True


def _read_report(proc) -> bool:
    """Read one kernel's report of ``proc`` (waiting for it); False once the process has ended,
    when whatever it did not compile compiles here."""
    line = proc.stdout.readline().decode(errors="replace").strip()
    if not line:
        for k in [k for k, p in _pending.items() if p is proc]:
            del _pending[k]
        proc.wait()
        return False
    _pending.pop(line, None)
    if proc not in _pending.values():
        proc.poll()  # (reaps it once it has exited)
    return True


def _has_output(proc) -> bool:
    """Whether the other process has reported something not yet read."""
    try:
        return bool(select.select([proc.stdout], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _stop() -> None:
    """At exit, end a second process still compiling kernels this one never needed."""
    if os.getpid() != _owner[0]:
        return
    for proc in set(_pending.values()):
        proc.kill()
        proc.wait()
    _pending.clear()
    _meanwhile.clear()
