"""``SysfsTree``: every read of /sys, /proc (and /etc/os-release) goes through here.

A tree is rooted at ``/`` on a live machine, or at the ``fs/`` folder of an unpacked bundle
(or a hand-built fixture), so the same inspect code reads a live machine and a captured one
(an injectable root, as psutil's ``PROCFS_PATH``, and directory-tree fixtures, as pciutils'
dump back end replays saved config space: https://github.com/giampaolo/psutil,
https://github.com/pciutils/pciutils lib/dump.c).

Two kinds of read (after psutil's ``cat(fallback=...)`` in psutil/_common.py):

- *loud* reads (``read_text``, ``read_bytes``) raise :class:`SysfsError` - for facts the
  command cannot do without;
- *soft* reads (``try_text``, ``try_int``) return a :class:`Soft` whose ``value`` is None and
  whose ``reason`` says why - for optional facts, which then become "unknown + reason".

Implementation notes
--------------------
- A tree can *record* what it read (``record=True``): file contents exactly as read, listed
  folders, symlinks, file sizes and failed reads. ``collect`` writes that record as a bundle,
  so a bundle holds exactly the inputs inspect used, and replaying it gives the same result.
- A non-live tree is *confined*: a path (after resolving symlinks) that leaves the root is
  refused, so a hostile bundle cannot make inspect read the host's files.
- sysfs ``config`` reads return 64 bytes without CAP_SYS_ADMIN while the file's size is 256
  or 4096 (Linux drivers/pci/pci-sysfs.c); ``file_size`` keeps the real size so "unreadable"
  is not mistaken for "absent".
"""

from __future__ import annotations

import os
from typing import NamedTuple, Optional

from gdrdiag.errors import GdrdiagError
from gdrdiag.hw import safefs
from gdrdiag.hw.safefs import UnsafeFile

# A sysfs attribute is one page; /proc/cpuinfo on a big host is a few hundred KiB.
DEFAULT_READ_LIMIT = 4 * 1024 * 1024
#: Bytes asked of the kernel per read(2). Linux refuses a /proc/sys read whose count is at least
#: KMALLOC_MAX_SIZE (4 MiB on x86-64) with ENOMEM (fs/proc/proc_sysctl.c, proc_sys_call_handler),
#: so one read of the whole limit failed for osrelease/hostname in the QEMU lab's 6.1 guest.
READ_CHUNK = 64 * 1024


class SysfsError(GdrdiagError):
    """A required file under /sys or /proc could not be read."""


class Soft(NamedTuple):
    """Result of a soft read: ``value`` or None, and the ``reason`` when None."""

    value: object
    reason: Optional[str] = None


class SysfsTree:
    """Read-only view of a Linux /sys + /proc tree rooted at ``root``.

    Paths are given as on the live machine (``/sys/bus/pci/devices``). ``sizes`` and
    ``failures`` (from a bundle's meta.json) replay what the live machine reported for file
    sizes and for reads that failed there.
    """

    def __init__(
        self,
        root: str = "/",
        *,
        record: bool = False,
        sizes: Optional[dict[str, int]] = None,
        failures: Optional[dict[str, str]] = None,
        read_limit: int = DEFAULT_READ_LIMIT,
    ):
        self.root = os.path.realpath(root)
        self.live = self.root == "/"
        self.read_limit = read_limit
        self._sizes = dict(sizes or {})
        self._failures = dict(failures or {})
        self.recording = record
        # What was read, for collect (see module notes).
        self.files: dict[str, bytes] = {}
        self.listed: set[str] = set()
        self.links: set[str] = set()
        self.present: set[str] = set()  # paths whose mere existence was asked about
        self.sizes: dict[str, int] = {}
        self.failures: dict[str, str] = {}

    # ---- path handling -----------------------------------------------------------------

    def host_path(self, path: str) -> str:
        """The on-disk path of ``path``; refuses paths that leave a non-live root."""
        if not path.startswith("/") or "\0" in path:
            raise SysfsError(f"bad path {path!r}: paths are absolute, as on the live machine")
        if self.live:
            return path
        joined = os.path.normpath(os.path.join(self.root, path.lstrip("/")))
        real = os.path.realpath(joined)
        if not (real == self.root or real.startswith(self.root + os.sep)):
            raise SysfsError(f"{path}: leaves the captured tree (refused)")
        return joined

    def _read_host(self, path: str, limit: int) -> bytes:
        """At most ``limit + 1`` bytes of ``path``.

        A captured tree is untrusted: its files are read only when they resolve inside the root
        and are regular files (never a FIFO or a device, which could block or never end), see
        :func:`gdrdiag.hw.safefs.read_confined`.
        """
        if self.live:
            # In chunks: Linux refuses one read of 4 MiB or more from a /proc/sys file with ENOMEM
            # (proc_sys_call_handler), which a single fh.read(limit + 1) would ask for.
            with open(path, "rb", buffering=0) as fh:
                chunks: list[bytes] = []
                total = 0
                while total <= limit:
                    chunk = fh.read(min(READ_CHUNK, limit + 1 - total))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    total += len(chunk)
                return b"".join(chunks)
        return safefs.read_confined(self.host_path(path), self.root, limit)

    def _fail(self, path: str, reason: str) -> str:
        if self.recording:
            self.failures[path] = reason
        return reason

    # ---- loud reads ----------------------------------------------------------------------

    def read_bytes(self, path: str, limit: Optional[int] = None) -> bytes:
        """Bytes of a file (at most ``limit``); raises ``SysfsError`` with the reason."""
        if path in self._failures:
            raise SysfsError(f"cannot read {path}: {self._failures[path]}")
        limit = self.read_limit if limit is None else limit
        try:
            data = self._read_host(path, limit)
        except UnsafeFile as exc:
            raise SysfsError(f"{path}: {exc} (refused)") from None
        except FileNotFoundError:
            raise SysfsError(
                f"{path}: {'not present' if self.live else 'not in the captured tree'}"
            ) from None
        except OSError as exc:
            reason = self._fail(path, exc.strerror or str(exc))
            raise SysfsError(f"cannot read {path}: {reason}") from None
        if len(data) > limit:
            raise SysfsError(f"{path}: larger than {limit} bytes")
        if self.recording:
            self.files[path] = data
        return data

    def read_text(self, path: str) -> str:
        """A text attribute with the trailing newline removed; raises ``SysfsError``."""
        return self.read_bytes(path).decode("utf-8", errors="replace").rstrip("\n")

    # ---- soft reads ------------------------------------------------------------------------

    def try_text(self, path: str) -> Soft:
        """``Soft(text)`` or ``Soft(None, reason)``."""
        try:
            return Soft(self.read_text(path))
        except SysfsError as exc:
            return Soft(None, str(exc))

    def try_int(self, path: str, base: int = 0) -> Soft:
        """An integer attribute (``0x10de``, ``-1``, ``16``); unparsable -> unknown with reason."""
        text = self.try_text(path)
        if text.value is None:
            return text
        s = str(text.value).strip()
        try:
            value = int(s[:64], base) if len(s) <= 64 else None
        except ValueError:
            value = None
        if value is None:
            return Soft(None, f"{path}: not an integer: {s[:40]!r}")
        if not -(2**63) <= value < 2**64:
            # A Report keeps 64-bit integers (serde refuses larger ones): a value no register or
            # counter can hold is unknown, not a fact, so the Report inspect writes reads back.
            return Soft(None, f"{path}: {s[:40]!r} is out of the 64-bit range")
        return Soft(value)

    # ---- structure ---------------------------------------------------------------------------

    def exists(self, path: str) -> bool:
        """True when ``path`` exists (a dangling symlink counts: its name is a fact)."""
        try:
            found = os.path.lexists(self.host_path(path))
        except SysfsError:
            return False
        if found and self.recording:
            # An existence test is a fact too (e.g. /sys/module/mlx5_core without a version
            # file): a bundle must answer it the same way, so remember the path.
            self.present.add(path)
        return found

    def is_dir(self, path: str) -> bool:
        """True for a folder (following symlinks inside the tree)."""
        try:
            return os.path.isdir(self.host_path(path))
        except SysfsError:
            return False

    def listdir(self, path: str) -> list[str]:
        """Sorted entries of a folder; [] when it is missing or unreadable."""
        try:
            names = sorted(os.listdir(self.host_path(path)))
        except (OSError, SysfsError):
            return []
        if self.recording:
            self.listed.add(path)
        return names

    def readlink(self, path: str) -> Optional[str]:
        """Target of a symlink as stored (relative, as sysfs writes it), or None."""
        try:
            target = os.readlink(self.host_path(path))
        except (OSError, SysfsError):
            return None
        if self.recording:
            self.links.add(path)
        return target

    def link_name(self, path: str) -> Optional[str]:
        """Last component of a symlink's target (``driver`` -> ``mlx5_core``), or None."""
        target = self.readlink(path)
        return os.path.basename(target.rstrip("/")) if target else None

    def realpath(self, path: str) -> Optional[str]:
        """Where ``path`` really lives, as a live-machine path (``/sys/devices/...``)."""
        try:
            host = self.host_path(path)
        except SysfsError:
            return None
        if not os.path.lexists(host):
            return None
        real = os.path.realpath(host)
        if self.recording:
            self.links.add(path)
        if self.live:
            return real
        rel = os.path.relpath(real, self.root)
        return "/" if rel == "." else "/" + rel

    def file_size(self, path: str) -> Optional[int]:
        """Size the file reports (``config`` is 4096 even when only 64 bytes are readable)."""
        if path in self._sizes:
            return self._sizes[path]
        try:
            size = os.stat(self.host_path(path)).st_size
        except (OSError, SysfsError):
            return None
        if self.recording:
            self.sizes[path] = size
        return size
