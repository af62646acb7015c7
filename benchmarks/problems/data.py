"""Locate, download and load the public data files used by the benchmarks.

In the manner of ``sklearn.datasets.fetch_*``: a file is looked up, in this order, in

1. the ``data_home`` argument,
2. the directory named by the environment variable ``MFBO_DATA_DIR``,
3. the user cache directory ``$XDG_CACHE_HOME/mfbo`` (default ``~/.cache/mfbo``).

The first copy found is used only if its SHA-256 matches the registry (:func:`verify_file`):
a truncated, edited or wrong file raises :class:`ChecksumError` instead of loading as a smaller or
different table.  Each file is hashed once per process; later look-ups reuse the result while
the file's size and modification time are unchanged.  A file found nowhere is downloaded from
its public URL into the cache directory and kept only if its SHA-256 matches; a damaged copy in
the cache is downloaded afresh once.  A file without a public URL has to be put in place by
hand.  :func:`read_table` also checks the shape of the table read.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

__all__ = ["ENV_VAR", "REGISTRY", "ChecksumError", "RemoteFile", "cache_dir", "fetch_file",
           "get_data_home", "load_cal_housing", "load_cpu_act", "load_magic04", "load_pendigits",
           "read_table", "search_dirs",
           "verify_file"]

ENV_VAR = "MFBO_DATA_DIR"
_CHUNK = 1 << 20


class RemoteFile(NamedTuple):
    """A registered data file.

    Attributes
    ----------
    sha256 : str
        The SHA-256 of the registered copy, hexadecimal.
    url : str or None
        Its public URL; ``None``: it cannot be downloaded.
    shape : tuple of int or None, default=None
        ``(rows, columns)`` of the table ``pandas.read_csv`` reads from it (header row not
        counted); ``None``: not a table, or not checked.
    header : bool, default=True
        Whether the table's first row is a header (``False``: every row is data).
    """

    sha256: str
    url: str | None
    shape: tuple[int, int] | None = None
    header: bool = True


REGISTRY: dict[str, RemoteFile] = {
    # HPOlib lda_on_grid (values from Snoek et al. 2012)
    "lda_on_grid.csv": RemoteFile(
        "a115469686fa46c94d2cc78bad0ad2150e74b91385f1078f20fd73c7cd9e5f7b", None, (288, 5)),
    # HPOlib svm_on_grid
    "svm_on_grid.csv": RemoteFile(
        "428b9c097469df3732921bc87b5b4c7273d92d31fe444665c2263a380ef132c1", None, (1400, 5)),
    # UCI Letter Recognition; the registered copy has a header row added
    "letter-recognition.data": RemoteFile(
        "9b63b12c9425f919cf32a4de0ffbbef25960ddeced6a0c15fc8cf2dbb530b403",
        "https://archive.ics.uci.edu/ml/machine-learning-databases/letter-recognition/"
        "letter-recognition.data", (20000, 17)),
    # Delve / OpenML cpu_act; the registered copy has the header row "1..22"
    "cpu_act.csv": RemoteFile(
        "72a215c6fcad26f907605b1cb1f154836d19ac019d95da1375d9251d0467f501",
        "https://www.openml.org/data/get_csv/3641/dataset_2183_cpu_act.arff", (8192, 22)),
    # California housing (Pace & Barry 1997), StatLib's cal_housing.data; no header row.  Its
    # public copy is inside an archive (cal_housing.tgz), so it is put in place by hand
    "cal_housing.data": RemoteFile(
        "d3d8a1a722ae78f91134862727d27a70b1415e7d512a89140406248687f4b902", None, (20640, 9),
        header=False),
    # UCI MAGIC Gamma Telescope (Bock et al. 2004): 10 real features, then the class g/h
    "magic04.data": RemoteFile(
        "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a",
        "https://archive.ics.uci.edu/ml/machine-learning-databases/magic/magic04.data",
        (19020, 11), header=False),
    # UCI Pen-Based Recognition of Handwritten Digits (Alimoglu & Alpaydin 1996), its
    # predefined training and test parts: 16 integer features, then the digit
    "pendigits.tra": RemoteFile(
        "13a29b9cc1b40503c51030840092d32e0e99efcbd5331146f832a2e815bb4c35",
        "https://archive.ics.uci.edu/ml/machine-learning-databases/pendigits/pendigits.tra",
        (7494, 17), header=False),
    "pendigits.tes": RemoteFile(
        "70124fa8a06bc820d38591f297271c364b215174410d9711ffafcfc857ff945f",
        "https://archive.ics.uci.edu/ml/machine-learning-databases/pendigits/pendigits.tes",
        (3498, 17), header=False),
}


class ChecksumError(OSError):
    """A data file's SHA-256 differs from the registered one."""


def cache_dir() -> Path:
    """The user cache directory, ``$XDG_CACHE_HOME/mfbo`` or ``~/.cache/mfbo``.

    Returns
    -------
    pathlib.Path
        The directory (not created).
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "mfbo"


def search_dirs(data_home: str | os.PathLike | None = None) -> list[Path]:
    """The directories searched for a data file, in order.

    Parameters
    ----------
    data_home : str, path-like or None, default=None
        Explicit directory, searched first.

    Returns
    -------
    list of pathlib.Path
        ``data_home`` (if given), ``$MFBO_DATA_DIR`` (if set) and the user cache directory.
    """
    dirs = [Path(data_home).expanduser()] if data_home is not None else []
    env = os.environ.get(ENV_VAR, "")
    if env:
        dirs.append(Path(env).expanduser())
    dirs.append(cache_dir())
    return dirs


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """The data directory of highest precedence.

    Parameters
    ----------
    data_home : str, path-like or None, default=None
        Explicit directory; returned as is when given.

    Returns
    -------
    pathlib.Path
        ``data_home``, else ``$MFBO_DATA_DIR``, else the user cache directory (not created:
        the first two may be read-only shared directories).
    """
    return search_dirs(data_home)[0]


def _entry(name: str) -> RemoteFile:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"Unknown data file {name!r}; known files: "
                         f"{', '.join(sorted(REGISTRY))}.") from None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _where_to_put(name: str, data_home: str | os.PathLike | None) -> str:
    dirs = ", ".join(str(d) for d in search_dirs(data_home))
    return (f"Put a copy of {name!r} (sha256 {_entry(name).sha256}) in one of: {dirs} "
            f"(e.g. set the environment variable {ENV_VAR} to the directory holding it, or "
            f"copy it into the cache directory {cache_dir()}).")


# Files whose hash matched, keyed by what a change to the file would change, so each file is
# hashed once per process however often it is loaded.
_VERIFIED: set[tuple] = set()


def _identity(path: Path, expected: str) -> tuple:
    st = os.stat(path)
    # ctime as well as mtime: resetting the mtime (os.utime, touch -d) still changes the ctime
    return (os.fspath(path.resolve()), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
            st.st_ctime_ns, expected)


def verify_file(path: str | os.PathLike, name: str) -> Path:
    """Check that a file's SHA-256 matches the registered one for ``name``.

    The file is hashed at most once per process while its size and modification time stay
    the same; a changed file is hashed again.

    Parameters
    ----------
    path : str or path-like
        The file to check.
    name : str
        Its name in :data:`REGISTRY`.

    Returns
    -------
    pathlib.Path
        ``path``, when it matches.

    Raises
    ------
    ChecksumError
        If the hashes differ; the message names the file and both hashes.
    ValueError
        If ``name`` is not in :data:`REGISTRY`.
    """
    path = Path(path)
    expected = _entry(name).sha256
    before = _identity(path, expected)
    if before in _VERIFIED:
        return path
    actual = _sha256(path)
    if actual != expected:
        raise ChecksumError(
            f"Data file {path} is damaged or not the registered {name!r}: its SHA-256 is "
            f"{actual}, expected {expected}. Replace it with an intact copy (a truncated, "
            f"edited or different file would load as the wrong data).")
    if _identity(path, expected) == before:  # not rewritten while it was being hashed
        _VERIFIED.add(before)
    return path


def _download(name: str, url: str, target: Path, timeout: float) -> None:
    """Stream ``url`` into a temporary file beside ``target``, verify it, then rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            for chunk in iter(lambda: resp.read(_CHUNK), b""):
                digest.update(chunk)
                out.write(chunk)
        expected = _entry(name).sha256
        if digest.hexdigest() != expected:
            raise ChecksumError(f"The download of {url} has SHA-256 {digest.hexdigest()}, but "
                                f"{name!r} should have {expected}; the download was discarded.")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _fetch(name: str, url: str, target: Path, timeout: float,
           data_home: str | os.PathLike | None) -> Path:
    try:
        _download(name, url, target, timeout)
    except ChecksumError as err:
        raise ChecksumError(f"{err} The registered copy may differ from the raw source "
                            f"(e.g. by an added header row). "
                            + _where_to_put(name, data_home)) from err
    except (urllib.error.URLError, TimeoutError, OSError) as err:
        raise FileNotFoundError(f"Data file {name!r} not found locally and downloading "
                                f"{url} failed ({err}). "
                                + _where_to_put(name, data_home)) from err
    return verify_file(target, name)


def _in_cache(path: Path) -> bool:
    try:
        return path.parent.resolve() == cache_dir().resolve()
    except OSError:
        return False


def fetch_file(name: str, data_home: str | os.PathLike | None = None, *,
               download: bool = True, timeout: float = 60.0) -> Path:
    """Path of a registered data file, verified, downloading it into the cache if needed.

    The first copy found (see :func:`search_dirs`) must match the registered SHA-256; a
    damaged copy is an error, not a reason to look further, so it cannot go unnoticed.  The
    exception is a damaged copy in the user cache directory of a file with a public URL: it
    is downloaded afresh once and the new copy verified.

    Parameters
    ----------
    name : str
        File name, a key of :data:`REGISTRY`.
    data_home : str, path-like or None, default=None
        Directory searched before ``$MFBO_DATA_DIR`` and the user cache directory.
    download : bool, default=True
        Whether to try the public URL when no local copy exists, or the cached copy is
        damaged.
    timeout : float, default=60.0
        Network timeout in seconds.

    Returns
    -------
    pathlib.Path
        The local file, its SHA-256 checked.

    Raises
    ------
    FileNotFoundError
        If no local copy exists and it cannot be downloaded (no public URL, offline, or
        ``download=False``); the message says where to put the file.
    ChecksumError
        If the copy found, or the downloaded file, has a SHA-256 other than the registry's
        (nothing downloaded is kept then); the message names the file, both hashes and what
        to do.
    """
    entry = _entry(name)
    for directory in search_dirs(data_home):
        candidate = directory / name
        if not candidate.is_file():
            continue
        try:
            return verify_file(candidate, name)
        except ChecksumError as err:
            if not (_in_cache(candidate) and entry.url is not None):
                raise
            if not download:
                raise ChecksumError(f"{err} It is a cached download: delete it, or call again "
                                    f"with download=True to download it afresh.") from None
            try:
                return _fetch(name, entry.url, candidate, timeout, data_home)
            except (ChecksumError, FileNotFoundError) as again:
                raise ChecksumError(f"{err} It is a cached download, and downloading it "
                                    f"afresh failed: {again}") from again
    if entry.url is None or not download:
        why = "it has no public download URL" if entry.url is None else "download=False"
        raise FileNotFoundError(f"Data file {name!r} not found and {why}. "
                                + _where_to_put(name, data_home))
    return _fetch(name, entry.url, cache_dir() / name, timeout, data_home)


def read_table(name: str, data_home: str | os.PathLike | None = None) -> pd.DataFrame:
    """A registered CSV file as a table, its SHA-256 and its registered shape checked.

    Parameters
    ----------
    name : str
        File name, a key of :data:`REGISTRY`.
    data_home : str, path-like or None, default=None
        See :func:`fetch_file`.

    Returns
    -------
    pandas.DataFrame
        The table read by ``pandas.read_csv`` (first row: the header, unless the registry says
        the file has none; then the columns are numbered from 0).

    Raises
    ------
    FileNotFoundError, ChecksumError
        See :func:`fetch_file`.
    ValueError
        If the table's shape differs from the registered one.
    """
    path = fetch_file(name, data_home)
    frame = pd.read_csv(path, header=0 if _entry(name).header else None)
    shape = _entry(name).shape
    # the hash already pins the bytes; this guards against a registry whose hash and shape
    # were updated inconsistently, and says in rows and columns what went wrong
    if shape is not None and frame.shape != tuple(shape):
        raise ValueError(f"Data file {path} reads as a table of {frame.shape[0]} rows x "
                         f"{frame.shape[1]} columns; {name!r} should have {shape[0]} x "
                         f"{shape[1]}.")
    return frame


def load_cpu_act(data_home: str | os.PathLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The Delve "Computer Activity" (cpu_act) regression data.

    Parameters
    ----------
    data_home : str, path-like or None, default=None
        See :func:`fetch_file`.

    Returns
    -------
    X : ndarray of shape (8192, 21)
        The features.
    y : ndarray of shape (8192,)
        The target, the percentage of time the CPUs run in user mode.

    Raises
    ------
    FileNotFoundError, ChecksumError, ValueError
        See :func:`read_table`: a missing file, a damaged one, a table of the wrong shape.
    """
    return _features_and_target("cpu_act.csv", data_home)


def load_cal_housing(data_home: str | os.PathLike | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The California housing regression data (20,640 census block groups of 1990).

    Parameters
    ----------
    data_home : str, path-like or None, default=None
        See :func:`fetch_file`.

    Returns
    -------
    X : ndarray of shape (20640, 8)
        longitude, latitude, housingMedianAge, totalRooms, totalBedrooms, population,
        households, medianIncome (the raw StatLib columns, not scikit-learn's ratios).
    y : ndarray of shape (20640,)
        medianHouseValue, in dollars.

    Raises
    ------
    FileNotFoundError, ChecksumError, ValueError
        See :func:`read_table`: a missing file, a damaged one, a table of the wrong shape.
    """
    return _features_and_target("cal_housing.data", data_home)


def load_magic04(data_home: str | os.PathLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The UCI MAGIC Gamma Telescope classification data (19,020 simulated events).

    Parameters
    ----------
    data_home : str, path-like or None, default=None
        See :func:`fetch_file`.

    Returns
    -------
    X : ndarray of shape (19020, 10)
        The ten real-valued image features (fLength ... fDist).
    y : ndarray of shape (19020,)
        The class as a string, ``"g"`` (gamma, signal) or ``"h"`` (hadron, background).

    Raises
    ------
    FileNotFoundError, ChecksumError, ValueError
        See :func:`read_table`: a missing file, a damaged one, a table of the wrong shape.
    """
    frame = read_table("magic04.data", data_home)
    return frame.iloc[:, :-1].to_numpy(dtype=np.float64), frame.iloc[:, -1].to_numpy(dtype=str)


def load_pendigits(data_home: str | os.PathLike | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The UCI Pen-Based Recognition of Handwritten Digits data in its predefined split.

    Parameters
    ----------
    data_home : str, path-like or None, default=None
        See :func:`fetch_file`.

    Returns
    -------
    X_train : ndarray of shape (7494, 16)
        Training features: eight resampled pen positions (x, y), integers in 0..100.
    y_train : ndarray of shape (7494,)
        Training labels, the digits 0..9 (int64).
    X_test : ndarray of shape (3498, 16)
    y_test : ndarray of shape (3498,)
        The test part, written by other writers than the training part.

    Raises
    ------
    FileNotFoundError, ChecksumError, ValueError
        See :func:`read_table`: a missing file, a damaged one, a table of the wrong shape.
    """
    X_train, y_train = _features_and_target("pendigits.tra", data_home)
    X_test, y_test = _features_and_target("pendigits.tes", data_home)
    return X_train, y_train.astype(np.int64), X_test, y_test.astype(np.int64)


def _features_and_target(name: str, data_home) -> tuple[np.ndarray, np.ndarray]:
    """A numeric table's columns as features, its last column as the target."""
    values = read_table(name, data_home).to_numpy(dtype=np.float64)
    return values[:, :-1], values[:, -1]
