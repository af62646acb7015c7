"""A throwaway PostgreSQL server for tests and benchmarks of the database storage.

It runs the server binaries of the machine (``initdb``, ``pg_ctl``: on the ``PATH`` or in
Debian's ``/usr/lib/postgresql/<version>/bin``) on a fresh data directory, listening on a free
port of 127.0.0.1, with trust authentication for the local user ``mfbo``.  PostgreSQL refuses
to run as root; as root the server runs as the ``postgres`` system user (Debian's package makes
it).  :func:`unavailable` says why no server can be started here, or returns None.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid

__all__ = ["PostgresServer", "server_binaries", "unavailable"]


def server_binaries() -> str | None:
    """The directory of ``initdb`` and ``pg_ctl`` (the newest version installed), or None."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return os.path.dirname(found)
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                  key=lambda d: [int(x) for x in d.split("/")[-2].split(".") if x.isdigit()])
    dirs = [d for d in dirs if os.path.exists(os.path.join(d, "initdb"))]
    return dirs[-1] if dirs else None


def _run_as() -> str | None:
    """The user the server runs as: None (this one), or ``postgres`` when this is root."""
    return "postgres" if os.geteuid() == 0 else None


def unavailable() -> str | None:
    """Why a server cannot be started here (a sentence), or None when it can."""
    if importlib.util.find_spec("sqlalchemy") is None or importlib.util.find_spec("psycopg") is None:
        return 'SQLAlchemy and psycopg are not installed (pip install "mfbo[rdb]")'
    if server_binaries() is None:
        return ("PostgreSQL's server binaries (initdb, pg_ctl) are not installed (Debian: apt-get "
                "install postgresql)")
    if _run_as() is not None:
        try:
            pwd.getpwnam(_run_as())
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """A PostgreSQL server on a fresh data directory (removed by :meth:`close`).

    ``durable=False`` turns off ``fsync`` and synchronous commits (tests: faster, and nothing
    to keep); ``durable=True`` keeps PostgreSQL's defaults (for overhead measurements)."""

    def __init__(self, durable: bool = False, max_connections: int = 100):
        reason = unavailable()
        if reason:
            raise RuntimeError(f"cannot start PostgreSQL: {reason}.")
        self.bin = server_binaries()
        self.user = _run_as()
        self.root = tempfile.mkdtemp(prefix="mfbo-pg-")
        self.data = os.path.join(self.root, "data")
        self.port = _free_port()
        self.log = os.path.join(self.root, "server.log")
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._run("initdb", "-D", self.data, "-U", "mfbo", "-A", "trust", "-E", "UTF8",
                  "--no-sync")
        options = [f"-p {self.port}", f"-k {self.root}", "-c listen_addresses=127.0.0.1",
                   f"-c max_connections={int(max_connections)}"]
        if not durable:
            options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        self.options = " ".join(options)
        self.start()

    def _run(self, tool: str, *args: str) -> None:
        cmd = [os.path.join(self.bin, tool), *args]
        out = subprocess.run(cmd, user=self.user, capture_output=True, text=True, cwd=self.root)
        if out.returncode:
            raise RuntimeError(f"{tool} failed ({out.returncode}): {out.stderr or out.stdout}")

    def start(self) -> None:
        self._run("pg_ctl", "-D", self.data, "-o", self.options, "-l", self.log, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: open connections are cut, as in a restart)."""
        self._run("pg_ctl", "-D", self.data, "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self._run("pg_ctl", "-D", self.data, "-o", self.options, "-l", self.log, "-m", "fast",
                  "-w", "restart")

    def url(self, database: str = "postgres", user: str = "mfbo",
            password: str | None = None) -> str:
        """The URL of ``database`` for ``user`` (default: the superuser ``mfbo``)."""
        login = user if password is None else f"{user}:{password}"
        return f"postgresql+psycopg://{login}@127.0.0.1:{self.port}/{database}"

    def new_role(self, password: str | None = None) -> str:
        """A new login role without privileges (its name).  With ``password`` the server asks
        it for that password (SCRAM); every other role is still trusted."""
        import sqlalchemy
        name = "role_" + uuid.uuid4().hex[:12]
        engine = sqlalchemy.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(sqlalchemy.text(f"CREATE ROLE {name} LOGIN" + (
                "" if password is None else f" PASSWORD '{password}'")))
        engine.dispose()
        if password is not None:
            # the first matching line of pg_hba.conf decides: this role's goes before trust
            hba = os.path.join(self.data, "pg_hba.conf")
            with open(hba, "r+") as fh:
                lines = fh.read()
                fh.seek(0)
                fh.write(f"host all {name} 127.0.0.1/32 scram-sha-256\n" + lines)
            self._run("pg_ctl", "-D", self.data, "reload")
        return name

    def new_database(self) -> str:
        """The URL of a new, empty database of this server."""
        import sqlalchemy
        name = "db_" + uuid.uuid4().hex[:12]
        engine = sqlalchemy.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(sqlalchemy.text(f"CREATE DATABASE {name}"))
        engine.dispose()
        return self.url(name)

    def close(self) -> None:
        try:
            self.stop("immediate")
        except RuntimeError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
