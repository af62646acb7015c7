"""Whether a file lives on a network file system, read from the kernel's mount table."""

from __future__ import annotations

import os

__all__ = ["NETWORK_FILESYSTEMS", "filesystem_type", "network_filesystem"]

#: file-system types whose locking SQLite cannot rely on, or that other computers share
NETWORK_FILESYSTEMS = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "glusterfs", "fuse.glusterfs",
    "ceph", "fuse.ceph", "beegfs", "fuse.sshfs", "9p", "afs", "ocfs2", "gfs2", "pvfs2",
    "fuse.s3fs", "fuse.gcsfuse", "davfs", "fuse.davfs2", "fuse.rclone", "fuse.juicefs"})


def _unescape(field: str) -> str:
    # mount points in mountinfo escape space, tab, newline and backslash as octal
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and len(field[i + 1:i + 4]) == 3 and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def filesystem_type(path: str, mountinfo: str) -> str | None:
    """The type of the file system holding ``path`` (an absolute, resolved path), from the
    text of ``/proc/self/mountinfo``: that of the longest mount point containing it (the last
    one mounted, where several are mounted at the same point)."""
    best, best_len = None, -1
    for line in mountinfo.splitlines():
        fields = line.split()
        if "-" not in fields or len(fields) < 5:
            continue
        mount_point = _unescape(fields[4])
        fstype = fields[fields.index("-") + 1]
        inside = path == mount_point or path.startswith(mount_point.rstrip("/") + "/")
        if inside and len(mount_point) >= best_len:
            best, best_len = fstype, len(mount_point)
    return best


def network_filesystem(path: str) -> str | None:
    """The type of the network file system holding ``path`` (a file, which need not exist
    yet), or None when it is local or the mount table cannot be read."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            mountinfo = fh.read()
    except OSError:
        return None
    where = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    fstype = filesystem_type(where, mountinfo)
    return fstype if fstype in NETWORK_FILESYSTEMS else None
