"""Reading untrusted trees (bundles) without leaving them, blocking, or running out of memory.

A bundle is attacker-controlled input: a symlink (or a chain of them, each harmless on its
own) may point at the analyst's own files, at ``/dev/zero`` or at a FIFO, and a tar archive
may carry link members, device nodes, huge extended headers or a truncated tail. Everything
here *resolves* paths (``os.path.realpath``) instead of judging them lexically, opens only
regular files (checked on the open descriptor, with ``O_NONBLOCK`` so a FIFO cannot block
the open), and caps every read.

``member_filter`` is the standard library's ``tarfile.data_filter`` (PEP 706) where this
Python has it (3.11.4+, 3.10.12+); on older patch releases ``_data_filter_compat`` enforces
the same rules, so every supported Python refuses the same members.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tarfile
import threading
from typing import Any, Callable, Iterator

from gdrdiag.errors import UserInputError

READ_CHUNK = 1 << 20


class UnsafeFile(Exception):
    """A path in an untrusted tree leaves it, is not a regular file, or is too large."""


def inside(root: str, path: str) -> bool:
    """True when ``path``, with every symlink resolved, is ``root`` or below it.

    ``root`` must already be a realpath.
    """
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def read_confined(path: str, root: str, limit: int) -> bytes:
    """Bytes of the regular file ``path``, which must resolve inside ``root``; at most ``limit``.

    Raises ``FileNotFoundError`` when it does not exist, :class:`UnsafeFile` when it leaves the
    root, is not a regular file (FIFO, device, socket, folder) or is larger than ``limit``, and
    ``OSError`` for other read failures.
    """
    real = os.path.realpath(path)
    if not (real == root or real.startswith(root.rstrip(os.sep) + os.sep)):
        raise UnsafeFile("leaves the bundle (a symlink points outside it)")
    return read_regular(real, limit, follow=False)


def read_regular(path: str, limit: int, *, follow: bool = True) -> bytes:
    """Bytes of the regular file ``path``, at most ``limit``, checked before a byte is read.

    Opened without blocking and checked on its descriptor: a FIFO would block ``open`` and ``read``
    forever and ``/dev/zero`` has no end; a regular file is read to ``limit`` + 1 bytes at most, so
    one that grows meanwhile is refused too. ``follow=False`` refuses a symlink as the last component
    (O_NOFOLLOW). Raises :class:`UnsafeFile` (not a regular file, too large) or ``OSError``.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile("not a regular file (a device, FIFO, socket or folder)")
        if st.st_size > limit:
            raise UnsafeFile(f"larger than {limit} bytes")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(READ_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise UnsafeFile(f"larger than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def check_tree(root: str, max_entries: int, max_depth: int = 64) -> None:
    """Walk an unpacked tree: every symlink must resolve inside ``root``; no devices, FIFOs, sockets.

    Raises :class:`UnsafeFile` naming the first offending entry (relative to ``root``). Links are
    not followed while walking, the walk is a loop over a stack (no recursion, whatever the depth),
    and it stops after ``max_entries`` entries or below ``max_depth`` folders, so a hostile tree
    cannot make it loop, recurse or run long.
    """
    seen = 0
    stack = [(root, "", 0)]
    while stack:
        folder, rel_folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            raise UnsafeFile(f"{rel_folder[:120] or '.'}: {exc.strerror}") from None
        for entry in entries:
            seen += 1
            if seen > max_entries:
                raise UnsafeFile(f"more than {max_entries} entries")
            rel = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                raise UnsafeFile(f"{rel[:120]}: {exc.strerror}") from None
            if stat.S_ISLNK(st.st_mode):
                if not inside(root, entry.path):
                    raise UnsafeFile(
                        f"symlink {rel[:120]} -> {os.readlink(entry.path)[:120]} leaves the bundle"
                    )
            elif stat.S_ISDIR(st.st_mode):
                if depth + 1 > max_depth:
                    raise UnsafeFile(f"{rel[:80]}... nests more than {max_depth} folders deep")
                stack.append((entry.path, rel, depth + 1))
            elif not stat.S_ISREG(st.st_mode):
                raise UnsafeFile(f"{rel[:120]} is a device, FIFO or socket")


@contextlib.contextmanager
def terminate_unwinds() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise ``SystemExit(128 + signal)``: ``finally`` blocks run.

    Used around bundle extraction and every write through a temporary file, so they are removed:
    the default action of either signal (SIGHUP: the terminal closed) kills the process on the spot
    and left a 137 MB extraction folder behind. Only the main thread may set signal handlers;
    elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signals = [signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    previous = {s: signal.signal(s, _raise) for s in signals}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def publish(tmp: str, out_path: str, replace: bool) -> None:
    """Give the finished temporary file its name: atomically replacing, or only where none exists."""
    if replace:
        os.replace(tmp, out_path)
        return
    try:
        os.link(tmp, out_path)
    except FileExistsError:
        raise UserInputError(
            f"--output {out_path} exists (another run wrote it meanwhile); use -f/--force to replace it"
        ) from None
    except OSError:  # a file system without hard links: check, then rename (not atomic there)
        if os.path.lexists(out_path):
            raise UserInputError(f"--output {out_path} exists; use -f/--force to replace it") from None
        os.replace(tmp, out_path)
        return
    os.unlink(tmp)


class FilterRefused(Exception):
    """A tar member the data filter refuses (the compat filter's own error type)."""


def _data_filter_compat(member: tarfile.TarInfo, dest_path: str) -> tarfile.TarInfo:
    """The rules of ``tarfile.data_filter`` (PEP 706) for Pythons that lack it.

    Refuses absolute names, names that resolve outside ``dest_path``, device and FIFO members,
    absolute link targets, and links whose target (resolved against what is already extracted)
    leaves ``dest_path``. Returns the member unchanged otherwise (gdrdiag writes the bytes itself,
    with its own modes).
    """
    dest = os.path.realpath(dest_path)
    name = member.name
    if name.startswith(("/", os.sep)):
        name = name.lstrip("/" + os.sep)
    if os.path.isabs(name):
        raise FilterRefused(f"member {member.name[:80]!r} has an absolute path")
    target = os.path.realpath(os.path.join(dest, name))
    if os.path.commonpath([target, dest]) != dest:
        raise FilterRefused(f"member {member.name[:80]!r} would be extracted outside the bundle")
    if member.ischr() or member.isblk() or member.isfifo():
        raise FilterRefused(f"member {member.name[:80]!r} is a special file")
    if member.islnk() or member.issym():
        if os.path.isabs(member.linkname):
            raise FilterRefused(f"link {member.name[:80]!r} has an absolute target")
        if member.issym():
            where = os.path.join(dest, os.path.dirname(name), member.linkname)
        else:
            where = os.path.join(dest, member.linkname)
        if os.path.commonpath([os.path.realpath(where), dest]) != dest:
            raise FilterRefused(f"link {member.name[:80]!r} -> {member.linkname[:80]!r} leaves the bundle")
    return member


def member_filter() -> Callable[[tarfile.TarInfo, str], tarfile.TarInfo]:
    """``tarfile.data_filter`` when this Python has it, else the compatible fallback."""
    return getattr(tarfile, "data_filter", _data_filter_compat)


def filter_errors() -> tuple[type[BaseException], ...]:
    """The exception types a member filter raises to refuse a member."""
    std = getattr(tarfile, "FilterError", None)
    return (FilterRefused,) + ((std,) if std is not None else ())
