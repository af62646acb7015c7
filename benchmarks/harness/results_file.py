"""The JSONL results file of :mod:`benchmarks.harness.bench`, shared by concurrent runs.

One record per line.  Several processes may run benchmarks into one file at once: each job is
run by exactly one of them, and no record is lost or merged with another.  They coordinate
through POSIX record locks (``fcntl.lockf``) on a side file, ``<results file>.lock``, which
stays empty:

* byte 0 is a mutex, held while a process reads what the others appended, claims a job or
  appends a record, so "is this job done or claimed?" and "claim it" are one step;
* a job is claimed by locking one byte of the side file at an offset derived from the job's
  key, for as long as the job runs.  The kernel drops a process's locks when it exits, so the
  claim of a run that was killed frees itself and the next run takes the job over.

A side file rather than the results file itself, because closing *any* descriptor of a file
drops all of a process's POSIX locks on it: a reader of the results in the same process would
silently release them.  For the same reason the locks exclude other processes, not other
threads: two runs on one file in one process are not kept apart.  Where ``fcntl`` does not
exist (Windows) nothing is locked and one writer per file is assumed.

Each record is appended with a single ``write`` of one whole line, then forced to disk
(``fsync``).  A line that a writer killed mid-write left without its newline is closed first, so
it cannot swallow the next record; readers skip such a line with a warning naming it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Callable, Iterator

try:
    import fcntl
except ImportError:  # Windows: no POSIX record locks
    fcntl = None

__all__ = ["ResultsFile", "ResultsFileError", "read_records", "record_key"]


class ResultsFileError(OSError):
    """The results file cannot be created or appended to.

    Attributes
    ----------
    path : str
        The results file.
    reason : str
        Why, as the operating system put it.
    """

    def __init__(self, path: str | os.PathLike, reason: str):
        self.path, self.reason = os.fspath(path), reason
        super().__init__(f"cannot write the results file {self.path!r} ({reason}); give a "
                         f"writable path.")


def record_key(record: dict) -> tuple:
    """What identifies a run: ``(problem, method, seed, budget)``."""
    return (record["problem"], record["method"], int(record["seed"]), int(record["budget"]))


def _parse(line: bytes | str, where: str,
           validate: Callable[[dict], object] | None) -> dict | None:
    """The record on one line, or ``None`` (with a warning naming ``where``) if it is not one."""
    try:
        rec = json.loads(line)
        if not isinstance(rec, dict):
            raise TypeError(f"a JSON {type(rec).__name__}, not an object")
        record_key(rec)
        if validate is not None:
            validate(rec)
    except KeyError as err:
        reason = f"no field {err}"
    except (ValueError, TypeError) as err:
        reason = str(err)
    else:
        return rec
    warnings.warn(f"{where}: not a complete result line ({reason}); skipped.", stacklevel=3)
    return None


def read_records(path: str | os.PathLike,
                 validate: Callable[[dict], object] | None = None) -> list[dict]:
    """The records of a JSONL results file, in file order.

    A line that is not a record (cut off by a kill, or lacking the fields of a run) is
    skipped with a warning naming the file and line number.

    Parameters
    ----------
    path : str or path-like
        The results file; a missing file holds no record.
    validate : callable or None, default=None
        Called with each record; a record for which it raises ``KeyError``, ``ValueError``
        or ``TypeError`` is skipped with a warning giving the error.

    Returns
    -------
    list of dict
        The records.
    """
    path = Path(path)
    if not path.exists():
        return []
    out = []
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                rec = _parse(line, f"{path}:{number}", validate)
                if rec is not None:
                    out.append(rec)
    return out


def _claim_offset(key: tuple) -> int:
    """The byte of the lock file that stands for job ``key`` (never byte 0, the mutex)."""
    digest = hashlib.sha256(json.dumps(list(key)).encode()).digest()
    # 56 bits: two jobs sharing a byte (odds 2**-56) would only run one after the other
    return 1 + int.from_bytes(digest[:7], "big")


class ResultsFile:
    """A results file opened for appending records and claiming jobs (see the module docs).

    Opening creates the file, its directory and its lock file if needed, so an unwritable
    path fails here, before any job runs.  Use as a context manager.

    Parameters
    ----------
    path : str or path-like
        The JSONL results file.

    Raises
    ------
    ResultsFileError
        If the results file or its lock file cannot be opened for writing.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self._fd = self._lock_fd = -1
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
            self._lock_fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as err:
            self.close()
            raise ResultsFileError(self.path, err.strerror or str(err)) from err
        self._offset = 0  # bytes of whole lines read so far
        self._lines = 0  # and their number
        self._records: dict[tuple, dict] = {}
        self._claimed: tuple | None = None

    def close(self) -> None:
        """Release this process's claim and locks and close the files."""
        for fd in (self._fd, self._lock_fd):
            if fd >= 0:
                os.close(fd)  # closing the lock file drops every lock held through it
        self._fd = self._lock_fd = -1
        self._claimed = None

    def __enter__(self) -> "ResultsFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _lock(self, offset: int, block: bool = True) -> bool:
        if fcntl is None:
            return True
        try:
            fcntl.lockf(self._lock_fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB), 1,
                        offset)
        except OSError as err:
            if block or err.errno not in (errno.EACCES, errno.EAGAIN):
                raise
            return False  # held by another process
        return True

    def _unlock(self, offset: int) -> None:
        if fcntl is not None:
            fcntl.lockf(self._lock_fd, fcntl.LOCK_UN, 1, offset)

    @contextlib.contextmanager
    def locked(self) -> Iterator["ResultsFile"]:
        """Hold the mutex: no other process reads, claims or appends meanwhile."""
        self._lock(0)
        try:
            yield self
        finally:
            self._unlock(0)

    def refresh(self) -> dict[tuple, dict]:
        """Read the lines appended since the last call; return every record by key (a key seen
        twice keeps the last).  Call while holding :meth:`locked`.

        A line not ended by a newline is left for later: it is either still being written (by
        a writer that does not lock) or was cut off, and is then closed by the next append and
        reported as malformed.
        """
        size = os.fstat(self._fd).st_size
        if size < self._offset:
            raise OSError(f"the results file {os.fspath(self.path)!r} shrank while this run "
                          f"was using it (truncated by another program?); run again.")
        data = os.pread(self._fd, size - self._offset, self._offset)
        end = data.rfind(b"\n") + 1
        for line in data[:end].split(b"\n")[:-1]:
            self._lines += 1
            if line.strip():
                rec = _parse(line, f"{self.path}:{self._lines}", None)
                if rec is not None:
                    self._records[record_key(rec)] = rec
        self._offset += end
        return self._records

    def claim(self, keys: list[tuple]) -> tuple | None:
        """Claim the first job of ``keys`` that no other process has claimed; ``None`` if all
        are.  The claim lasts until :meth:`release` (or the process ends).  Call while holding
        :meth:`locked`, after :meth:`refresh` showed the jobs are not done."""
        if self._claimed is not None:
            raise RuntimeError("release the claimed job before claiming another.")
        for key in keys:
            if self._lock(_claim_offset(key), block=False):
                self._claimed = key
                return key
        return None

    def release(self) -> None:
        """Give up the claimed job (done, or failed: another run may take it)."""
        if self._claimed is not None:
            self._unlock(_claim_offset(self._claimed))
            self._claimed = None

    def wait(self, key: tuple) -> None:
        """Block until the process running job ``key`` releases it (finished, failed or
        died).  Call without holding :meth:`locked` or a claim."""
        offset = _claim_offset(key)
        self._lock(offset)
        self._unlock(offset)

    def append(self, record: dict) -> None:
        """Append ``record`` as one line, in one write, and force it to disk.  Call while
        holding :meth:`locked`."""
        data = (json.dumps(record) + "\n").encode("utf-8")
        size = os.fstat(self._fd).st_size
        if size and os.pread(self._fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # close a line a killed writer left open
        view = memoryview(data)
        while view:  # a regular file takes it all at once unless the disk is full
            view = view[os.write(self._fd, view):]
        os.fsync(self._fd)
