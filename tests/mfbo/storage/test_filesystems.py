"""The file system type of a path from the mount table, and the warning for a SQLite file on a
network file system."""

import pytest

from mfbo import SQLiteStorage
from mfbo.storage import filesystems


MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:35 / /mnt/shared rw,relatime shared:20 - nfs4 server:/export rw,vers=4.2
41 40 0:36 / /mnt/shared/local\\040disk rw shared:21 - xfs /dev/sdb1 rw
42 22 0:37 / /scratch rw - lustre 10.0.0.1@tcp:/fs rw
"""


def test_filesystem_type_from_the_mount_table():
    assert filesystems.filesystem_type("/home/me", MOUNTINFO) == "ext4"
    assert filesystems.filesystem_type("/mnt/shared/run", MOUNTINFO) == "nfs4"
    assert filesystems.filesystem_type("/mnt/shared/local disk/x", MOUNTINFO) == "xfs"
    assert filesystems.filesystem_type("/mnt/sharedness", MOUNTINFO) == "ext4"
    assert filesystems.filesystem_type("/scratch", MOUNTINFO) == "lustre"


def test_a_sqlite_file_on_a_network_file_system_warns(tmp_path, monkeypatch):
    monkeypatch.setattr("mfbo.storage.sqlite.network_filesystem", lambda path: "nfs4")
    with pytest.warns(UserWarning, match="network file system \\(nfs4\\).*postgresql://"):
        storage = SQLiteStorage(str(tmp_path / "n.db"))
    assert storage.studies() == []  # a warning, not an error
    monkeypatch.undo()
    assert filesystems.network_filesystem(str(tmp_path / "n.db")) is None  # a local disk
