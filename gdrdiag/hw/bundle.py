"""Where machine facts come from: the live machine, or a bundle written by ``gdrdiag collect``.

A *source* is a :class:`~gdrdiag.hw.sysfs.SysfsTree` plus the facts that are not files
(CUDA, NVML, verbs) as plain JSON-able dicts. ``LiveSource`` asks the hardware adapters;
``BundleSource`` replays the JSON saved next to the captured tree. inspect consumes the same
dicts from both, so ``inspect --bundle`` gives the live machine's result.

Bundle layout (a ``.tar.gz``, or the same tree unpacked, as the test fixtures are)::

    gdrdiag-bundle/meta.json           format, version, euid, file sizes, failed reads
    gdrdiag-bundle/facts/cuda.json     CUDA driver version + CudaDeviceFacts per GPU + peer facts per GPU pair
                                       + CUDA_VISIBLE_DEVICES as this process had it
    gdrdiag-bundle/facts/nvml.json     NVML facts per GPU, NVLinks included (or the reason it was unavailable)
    gdrdiag-bundle/facts/verbs.json    RDMA devices via pyverbs (or the reason there are none)
    gdrdiag-bundle/fs/sys/...          exactly the sysfs/procfs files inspect read, with symlinks

A bundle is untrusted input. Extraction refuses absolute names, ``..``, hard links, devices,
FIFOs, symlinks that leave the bundle, and anything over the size and count limits; a
truncated or corrupt archive is a one-line ``BundleError`` (exit 2), never a traceback.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import io
import json
import os
import re
import shutil
import stat
import tarfile
import tempfile
import time
import zlib
from typing import Any, Iterator, Optional

from gdrdiag.errors import NotSupported, UserInputError, reraise_interrupt
from gdrdiag.hw import pax, safefs
from gdrdiag.hw.sysfs import SysfsTree

FORMAT = "gdrdiag-bundle"
FORMAT_VERSION = 1
TOP = "gdrdiag-bundle"

MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
MAX_MEMBERS = 50_000
MAX_MEMBER_BYTES = 8 * 1024 * 1024
MAX_TOTAL_BYTES = 256 * 1024 * 1024
MAX_JSON_BYTES = 16 * 1024 * 1024
# Folders a member may nest below the bundle's top (collect's deepest sysfs paths are ~25): bounds
# the cost of checking each member, and keeps every tree walk and removal shallow.
MAX_DEPTH = 64
MAX_LINK_TARGET = 1024  # characters of a symlink member's target
FACT_FILES = ("cuda", "nvml", "verbs")


class BundleError(UserInputError):
    """A bundle is missing, corrupt, truncated, too large or unsafe (exit 2)."""


# ============================================================================================
# Sources
# ============================================================================================


class LiveSource:
    """The live machine. With ``record=True`` the tree remembers what it read, for ``collect``."""

    def __init__(self, record: bool = False):
        self.name = "live"
        self.tree = SysfsTree("/", record=record)
        self._facts: dict[str, dict] = {}

    def euid(self) -> Optional[int]:
        """Effective uid of this process (0 = root: full config space, Linux pci-sysfs.c)."""
        return os.geteuid() if hasattr(os, "geteuid") else None

    def cuda(self) -> dict:
        """CUDA facts: ``{"status", "reason", "driver_version", "devices": [...], "visible_devices"}``."""
        if "cuda" not in self._facts:
            from gdrdiag.hw.cuda import visible_devices

            self._facts["cuda"] = {**_live_cuda(), "visible_devices": visible_devices()}
        return self._facts["cuda"]

    def nvml(self, gpu_bdfs: list[str]) -> dict:
        """NVML facts for these GPUs (see :func:`gdrdiag.hw.nvml.gpu_facts`)."""
        if "nvml" not in self._facts:
            if not gpu_bdfs:
                self._facts["nvml"] = {
                    "status": "unavailable",
                    "reason": "no NVIDIA GPU on the PCI bus",
                    "gpus": {},
                }
            else:
                from gdrdiag.hw import nvml

                self._facts["nvml"] = nvml.gpu_facts(gpu_bdfs)
        return self._facts["nvml"]

    def verbs(self) -> dict:
        """RDMA facts: ``{"status", "reason", "devices": {name: {...}}, "dmabuf_probe", ...}``."""
        if "verbs" not in self._facts:
            self._facts["verbs"] = _live_verbs()
        return self._facts["verbs"]

    def facts(self) -> dict[str, dict]:
        """Every non-file fact gathered so far (what collect saves)."""
        return dict(self._facts)


class BundleSource:
    """A bundle unpacked at ``root`` (the folder holding meta.json, facts/ and fs/)."""

    def __init__(self, root: str, name: str):
        self.root = root
        self.name = f"bundle:{name}"
        self.meta = _load_meta(root)
        self.tree = SysfsTree(
            os.path.join(root, "fs"), sizes=self.meta["sizes"], failures=self.meta["failures"]
        )
        self._facts = {k: _load_fact(root, k) for k in FACT_FILES}

    def euid(self) -> Optional[int]:
        """The uid ``collect`` ran as on the captured machine."""
        return self.meta.get("euid")

    def cuda(self) -> dict:
        """Saved CUDA facts."""
        return self._facts["cuda"]

    def nvml(self, gpu_bdfs: list[str]) -> dict:
        """Saved NVML facts (``gpu_bdfs`` is ignored: the bundle answers for what it saw)."""
        return self._facts["nvml"]

    def verbs(self) -> dict:
        """Saved verbs facts."""
        return self._facts["verbs"]


def _unavailable(reason: str, **extra: Any) -> dict:
    return {"status": "unavailable", "reason": reason, **extra}


def _live_cuda() -> dict:
    """Ask hw.cuda (the lead's adapter); every failure becomes status + reason."""
    try:
        from gdrdiag.hw import cuda
        from gdrdiag.model.serde import to_jsonable

        cuda.init()
        version = cuda.driver_version()
        devices = [to_jsonable(d) for d in cuda.all_device_facts()]
        out = {"status": "ok", "reason": None, "driver_version": int(version), "devices": devices}
        try:
            from gdrdiag.hw.peer import peer_facts

            out["peers"] = peer_facts()  # every ordered GPU pair (absent in older bundles)
        except Exception as exc:
            reraise_interrupt(exc)
            out["peers_reason"] = f"CUDA peer query failed: {type(exc).__name__}: {exc}"[:300]
        return out
    except NotSupported as exc:
        return _unavailable(exc.reason, devices=[])
    except Exception as exc:  # a broken driver must not stop inspect: record why
        reraise_interrupt(exc)
        return _unavailable(f"CUDA query failed: {type(exc).__name__}: {exc}"[:300], devices=[])


def _plain(value: Any) -> Any:
    """JSON-able copy of whatever hw.verbs returned (enums and objects become text)."""
    return json.loads(json.dumps(value, default=str))


def rdma_core_version() -> Optional[str]:
    """rdma-core version from libibverbs' file name (``libibverbs.so.1.14.44.0`` -> ``44.0``)."""
    pattern = re.compile(r"libibverbs\.so\.1\.\d+\.(\d+\.\d+)$")
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib64"):
        for path in sorted(glob.glob(os.path.join(d, "libibverbs.so.1.*"))):
            m = pattern.search(os.path.basename(path))
            if m:
                return m.group(1)
    return None


def _live_verbs() -> dict:
    """Ask hw.verbs (another engineer's adapter, imported lazily: it may be absent)."""
    out: dict = {
        "status": "ok",
        "reason": None,
        "devices": {},
        "dmabuf_probe": {},
        "device_errors": {},
        "rdma_core_version": rdma_core_version(),
    }
    try:
        from gdrdiag.hw import verbs_facts, verbs_providers
    except Exception as exc:  # ImportError, or pyverbs failing inside it
        reraise_interrupt(exc)
        out.update(
            status="unavailable", reason=f"verbs adapter unavailable: {type(exc).__name__}: {exc}"[:300]
        )
        return out
    try:
        names = list(verbs_providers.list_device_names())
    except NotSupported as exc:
        out.update(status="none", reason=exc.reason)
        return out
    except Exception as exc:
        reraise_interrupt(exc)
        out.update(
            status="unavailable", reason=f"listing RDMA devices failed: {type(exc).__name__}: {exc}"[:300]
        )
        return out
    if not names:
        out.update(status="none", reason="no RDMA devices")
    for name in names:
        try:
            out["devices"][str(name)] = _plain(verbs_facts.device_facts(name))
        except Exception as exc:
            reraise_interrupt(exc)
            out["device_errors"][str(name)] = f"{type(exc).__name__}: {exc}"[:300]
        try:
            out["dmabuf_probe"][str(name)] = str(verbs_facts.dmabuf_probe(name))
        except NotSupported as exc:
            out["dmabuf_probe"][str(name)] = f"unsupported: {exc.reason}"
        except Exception as exc:
            reraise_interrupt(exc)
            out["dmabuf_probe"][str(name)] = f"probe failed: {type(exc).__name__}: {exc}"[:300]
    return out


# ============================================================================================
# Writing
# ============================================================================================


def _fs_entries(tree: SysfsTree) -> dict[str, tuple]:
    """Turn a recording tree's record into tar entries: path -> ("dir",) | ("file", b) | ("link", t)."""
    entries: dict[str, tuple] = {}

    def add_dirs(real: str) -> None:
        parts = real.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            entries.setdefault("/" + "/".join(parts[:i]), ("dir",))

    def resolve(path: str) -> str:
        """Add the entries that lead to ``path``; return where it really is."""
        parts = [p for p in path.strip("/").split("/") if p]
        cur = "/"
        for p in parts:
            nxt = os.path.join(cur, p)
            if os.path.islink(nxt):
                target = os.readlink(nxt)
                if os.path.isabs(target):
                    target = os.path.relpath(target, cur)
                entries[nxt] = ("link", target)
                real = os.path.realpath(nxt)
                if os.path.isdir(real):
                    add_dirs(real)
                cur = real
            else:
                cur = nxt
        return cur

    for path in sorted(tree.listed):
        real = resolve(path)
        add_dirs(real)
        try:
            children = os.listdir(real)
        except OSError:
            continue
        for child in children:
            full = os.path.join(real, child)
            if os.path.islink(full):
                target = os.readlink(full)
                if os.path.isabs(target):
                    target = os.path.relpath(target, real)
                entries[full] = ("link", target)
            elif os.path.isdir(full):
                entries.setdefault(full, ("dir",))
    for path in sorted(tree.links):
        parent = resolve(os.path.dirname(path))
        full = os.path.join(parent, os.path.basename(path))
        add_dirs(parent)
        resolve(full)
    for path in sorted(tree.present):
        real = resolve(path)
        if os.path.isdir(real):
            add_dirs(real)
        elif real not in entries:
            # Existence only: an empty placeholder; real reads below overwrite it with content.
            add_dirs(os.path.dirname(real))
            entries.setdefault(real, ("file", b""))
    for path, data in sorted(tree.files.items()):
        parent = resolve(os.path.dirname(path))
        add_dirs(parent)
        entries[os.path.join(parent, os.path.basename(path))] = ("file", data)
    return entries


def _tar_add(tf: tarfile.TarFile, name: str, kind: tuple) -> None:
    info = tarfile.TarInfo(name)
    info.mtime = 0
    if kind[0] == "dir":
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tf.addfile(info)
    elif kind[0] == "link":
        info.type, info.linkname, info.mode = tarfile.SYMTYPE, kind[1], 0o777
        tf.addfile(info)
    else:
        info.size, info.mode = len(kind[1]), 0o644
        tf.addfile(info, io.BytesIO(kind[1]))


def write_bundle(
    out_path: str, source: LiveSource, extra_meta: Optional[dict] = None, *, replace: bool = True
) -> dict:
    """Write what ``source`` read (its recording tree and facts) as a ``.tar.gz`` at ``out_path``.

    Returns a summary dict (files, bytes). Written to a temporary file first, then renamed, so a
    failed collect never leaves a half bundle behind. With ``replace=False`` the bundle is published
    only if nothing is at ``out_path`` by then (a hard link, which fails when the name exists): of
    several runs writing the same name at once, one wins and the others fail with a clear error.
    """
    tree = source.tree
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "euid": source.euid(),
        "sizes": dict(sorted(tree.sizes.items())),
        "failures": dict(sorted(tree.failures.items())),
        **(extra_meta or {}),
    }
    entries = _fs_entries(tree)
    directory = os.path.dirname(os.path.abspath(out_path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=".gdrdiag-bundle-", suffix=".tmp", dir=directory)
    nfiles = 0
    try:
        with (
            safefs.terminate_unwinds(),
            os.fdopen(fd, "wb") as raw,
            tarfile.open(fileobj=raw, mode="w:gz", format=tarfile.PAX_FORMAT) as tf,
        ):
            _tar_add(tf, TOP, ("dir",))
            _tar_add(tf, f"{TOP}/meta.json", ("file", json.dumps(meta, indent=1, sort_keys=True).encode()))
            _tar_add(tf, f"{TOP}/facts", ("dir",))
            facts = source.facts()
            for key in FACT_FILES:
                data = facts.get(key) or _unavailable("not gathered")
                _tar_add(
                    tf,
                    f"{TOP}/facts/{key}.json",
                    ("file", json.dumps(data, indent=1, sort_keys=True).encode()),
                )
            _tar_add(tf, f"{TOP}/fs", ("dir",))
            order = {"dir": 0, "link": 1, "file": 2}
            for path, kind in sorted(entries.items(), key=lambda kv: (order[kv[1][0]], kv[0])):
                _tar_add(tf, f"{TOP}/fs{path}", kind)
                nfiles += kind[0] == "file"
        safefs.publish(tmp, out_path, replace)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return {"path": out_path, "files": nfiles, "bytes": os.path.getsize(out_path)}


# ============================================================================================
# Reading (untrusted input)
# ============================================================================================


MAX_HEADER_BYTES = 64 * 1024  # one pax / GNU long-name header (collect writes a few hundred bytes)
MAX_HEADER_CHAIN = 8  # extended headers in a row before one member
MAX_TAR_BYTES = MAX_TOTAL_BYTES + 64 * 1024 * 1024  # decompressed archive: data + headers
_EXTENDED = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
             tarfile.GNUTYPE_LONGLINK)  # fmt: skip


class _BoundedTarInfo(tarfile.TarInfo):
    """A TarInfo that refuses oversized or endlessly chained extended headers before reading them.

    ``tarfile`` reads a pax or GNU long-name header whole, and follows a chain of them by
    recursion, before any caller sees a member: a 1 MB archive could claim gigabytes there.
    """

    def _proc_member(self, tf):  # noqa: ANN001 - tarfile's private hook
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise BundleError("bundle holds a sparse member: refused (collect never writes one)")
        if self.type not in _EXTENDED:
            return super()._proc_member(tf)
        if self.size > MAX_HEADER_BYTES:
            raise BundleError(
                f"bundle has a {self.size}-byte extended tar header (limit {MAX_HEADER_BYTES}): refused"
            )
        pax.check_header(self, tf, BundleError)  # well-formed records before tarfile parses them
        depth = getattr(tf, "_gdrdiag_chain", 0)
        if depth >= MAX_HEADER_CHAIN:
            raise BundleError(f"bundle chains more than {MAX_HEADER_CHAIN} extended tar headers: refused")
        tf._gdrdiag_chain = depth + 1
        try:
            return super()._proc_member(tf)
        finally:
            tf._gdrdiag_chain = depth


def _member_name(name: str) -> str:
    """Validate one member name; return it relative to the bundle's top folder."""
    if "\0" in name or "\\" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise BundleError(f"unsafe member name {name[:80]!r} (absolute or odd characters): refused")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BundleError(f"unsafe member name {name[:80]!r} (contains ..): refused")
    if not parts or parts[0] != TOP:
        raise BundleError(f"member {name[:80]!r} is outside {TOP}/: not a gdrdiag bundle")
    if len(parts) - 1 > MAX_DEPTH:
        raise BundleError(
            f"member {name[:80]!r}... nests {len(parts) - 1} levels deep (limit {MAX_DEPTH}): refused"
        )
    return "/".join(parts[1:])


def _open_regular(path: str) -> int:
    """An O_RDONLY descriptor of ``path`` after checking it is a regular file (no FIFO can block)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise BundleError(f"cannot open bundle {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise BundleError(f"bundle {path} is not a regular file or folder (a device, FIFO or socket)")
    if st.st_size > MAX_ARCHIVE_BYTES:
        raise BundleError(f"bundle {path} is {st.st_size} bytes, over the {MAX_ARCHIVE_BYTES} byte limit")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise BundleError(f"cannot open bundle {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped between stat and open
        os.close(fd)
        raise BundleError(f"bundle {path} is not a regular file")
    return fd


def _plain_tar(archive: str, work: str) -> str:
    """The archive as an uncompressed tar file: gzip is decompressed (bounded) and its CRC checked.

    Reading the gzip stream to its end is what verifies the CRC and length trailer; tarfile stops
    at the end-of-archive blocks and would accept a bad checksum or a cut-off trailer.
    """
    fd = _open_regular(archive)
    with os.fdopen(fd, "rb") as raw:
        magic = raw.read(6)
        raw.seek(0)
        if magic[:3] == b"BZh" or magic[:6] == b"\xfd7zXZ\x00":
            raise BundleError(f"bundle {os.path.basename(archive)} is not gzip or tar: use collect's .tar.gz")
        if magic[:2] != b"\x1f\x8b":
            out = os.path.join(work, "archive.tar")
            _copy_bounded(raw, out, MAX_ARCHIVE_BYTES)
            return out
        out = os.path.join(work, "archive.tar")
        with gzip.GzipFile(fileobj=raw, mode="rb") as gz:
            _copy_bounded(gz, out, MAX_TAR_BYTES)
        return out


def _copy_bounded(src: Any, out: str, limit: int) -> None:
    total = 0
    with open(out, "xb") as dst:
        while True:
            chunk = src.read(1 << 20)
            if not chunk:
                return
            total += len(chunk)
            if total > limit:
                raise BundleError(f"bundle unpacks to more than {limit} bytes: refused")
            dst.write(chunk)


def _end_of_archive(path: str, offset: int) -> bool:
    """True when an end-of-archive block (512 NUL bytes) sits at ``offset``: the archive is whole."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        return fh.read(tarfile.BLOCKSIZE) == b"\0" * tarfile.BLOCKSIZE


def safe_extract(archive: str, dest: str) -> str:
    """Extract a bundle archive into ``dest`` under the safety rules; return the bundle root.

    ``dest`` must be an empty private folder. The archive is decompressed into ``dest`` first
    (gzip CRC checked), then each member is checked by name, kind and size, passed through the
    data filter (:func:`gdrdiag.hw.safefs.member_filter`), and written by gdrdiag itself with
    ``O_EXCL|O_NOFOLLOW``. Afterwards every symlink is resolved once more against the whole
    tree, which catches link chains whose members were harmless one at a time.
    """
    work = os.path.realpath(dest)
    root = os.path.join(work, "x")
    os.makedirs(root)
    try:
        tar_path = _plain_tar(archive, work)
        count = _extract_members(tar_path, root)
    except BundleError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, OSError, ValueError, UnicodeError, RecursionError) as exc:
        raise BundleError(
            f"bundle {os.path.basename(archive)} is corrupt or truncated: "
            f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]}"
        ) from None
    if count == 0:
        raise BundleError(f"bundle {os.path.basename(archive)} is empty")
    with contextlib.suppress(OSError):
        os.unlink(tar_path)
    _check_tree(root)
    return root


def _extract_members(tar_path: str, root: str) -> int:
    """Write every member of the plain tar at ``tar_path`` below ``root``; return the member count.

    The cost is linear in the archive: each member's name is checked once (depth bounded by
    :data:`MAX_DEPTH`), each folder is resolved (realpath) once, when it is first needed, and the
    data filter runs on the links, the only members whose target it judges.
    """
    flt, refused = safefs.member_filter(), safefs.filter_errors()
    total = count = 0
    ready: set[str] = set()  # folders (relative to root) created and resolved inside it
    with tarfile.open(tar_path, mode="r:", tarinfo=_BoundedTarInfo) as tf:
        for m in tf:
            count += 1
            if count > MAX_MEMBERS:
                raise BundleError(f"bundle has more than {MAX_MEMBERS} members: refused")
            rel = _member_name(m.name)
            if not rel:
                if not m.isdir():
                    raise BundleError(f"member {m.name[:80]!r} must be a folder: refused")
                continue
            if m.islnk() or not (m.isdir() or m.issym() or m.isreg()):
                kind = "hard link" if m.islnk() else "device or FIFO"
                raise BundleError(f"member {m.name[:80]!r} is a {kind}: refused")
            if m.sparse is not None:
                raise BundleError(f"member {m.name[:80]!r} is sparse: refused")
            target = os.path.join(root, rel)
            if m.isdir():
                _ready_folder(root, rel, ready, m.name)
                continue
            _ready_folder(root, os.path.dirname(rel), ready, m.name)
            if m.issym():
                _check_link(m, rel, root, flt, refused)
                if os.path.lexists(target):
                    raise BundleError(f"member {m.name[:80]!r} appears twice: refused")
                os.symlink(m.linkname, target)
            else:
                total += m.size
                _write_member(tf, m, target, total)
        end = tf.offset
    if count and not _end_of_archive(tar_path, end):
        raise BundleError("bundle is truncated or has trailing garbage (no end-of-archive block)")
    return count


def _ready_folder(root: str, rel: str, ready: set, name: str) -> None:
    """Create folder ``rel`` below ``root`` once, resolving it inside ``root`` before and after."""
    if rel in ready:
        return
    full = os.path.join(root, rel) if rel else root
    if not safefs.inside(root, full):
        raise BundleError(f"member {name[:80]!r} would be written outside the bundle: refused")
    os.makedirs(full, exist_ok=True)
    if not safefs.inside(root, full):
        raise BundleError(f"member {name[:80]!r} leaves the bundle: refused")
    ready.add(rel)


def _check_link(m: tarfile.TarInfo, rel: str, root: str, flt: Any, refused: tuple) -> None:
    """A symlink member's target: bounded in length, and judged by the data filter."""
    if len(m.linkname) > MAX_LINK_TARGET or "\0" in m.linkname:
        raise BundleError(f"link {m.name[:80]!r} has a target over {MAX_LINK_TARGET} characters: refused")
    try:
        flt(m.replace(name=rel, deep=False) if hasattr(m, "replace") else _renamed(m, rel), root)
    except refused as exc:
        detail = " ".join(str(exc).split())[:160]
        raise BundleError(f"member {m.name[:80]!r} leaves the bundle ({detail}): refused") from None


def _renamed(m: tarfile.TarInfo, name: str) -> tarfile.TarInfo:
    """A copy of ``m`` named ``name`` (TarInfo.replace is new in 3.11.4, with the data filter)."""
    import copy

    c = copy.copy(m)
    c.name = name
    return c


def _write_member(tf: tarfile.TarFile, m: tarfile.TarInfo, target: str, total: int) -> None:
    """Write one regular member after its size checks; refuses a short (truncated) member."""
    if m.size > MAX_MEMBER_BYTES:
        raise BundleError(f"member {m.name[:80]!r} is {m.size} bytes, over the limit: refused")
    if total > MAX_TOTAL_BYTES:
        raise BundleError(f"bundle unpacks to more than {MAX_TOTAL_BYTES} bytes: refused")
    fh = tf.extractfile(m)
    data = fh.read(m.size + 1) if fh else b""
    if len(data) != m.size:
        raise BundleError(f"bundle is truncated: member {m.name[:80]!r} is short")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        out = os.open(target, flags, 0o644)
    except FileExistsError:
        raise BundleError(f"member {m.name[:80]!r} appears twice: refused") from None
    with os.fdopen(out, "wb") as w:
        w.write(data)


def _check_tree(root: str) -> None:
    """Every link in the unpacked tree must resolve inside it; no devices, FIFOs or sockets."""
    try:
        safefs.check_tree(root, max_entries=2 * MAX_MEMBERS, max_depth=MAX_DEPTH + 2)
    except safefs.UnsafeFile as exc:
        raise BundleError(f"bundle: {exc}: refused") from None


def _load_json(root: str, rel: str) -> Any:
    """A JSON file of the bundle, read only when it resolves inside ``root`` and is a regular file."""
    try:
        data = safefs.read_confined(os.path.join(root, rel), root, MAX_JSON_BYTES)
        return json.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise BundleError(f"{rel} is missing: not a complete gdrdiag bundle") from None
    except safefs.UnsafeFile as exc:
        raise BundleError(f"{rel}: {exc}: refused") from None
    except (OSError, UnicodeError, ValueError, RecursionError) as exc:
        raise BundleError(f"{rel} is corrupt: {type(exc).__name__}: {str(exc)[:120]}") from None


def _str_dict(value: Any, what: str, val_type: type) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, val_type) and not isinstance(v, bool) for k, v in value.items()
    ):
        raise BundleError(f"meta.json: {what} must map strings to {val_type.__name__}")
    return value


def _load_meta(root: str) -> dict:
    meta = _load_json(root, "meta.json")
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise BundleError("meta.json does not describe a gdrdiag bundle")
    if meta.get("format_version") != FORMAT_VERSION:
        raise BundleError(
            f"bundle format version {str(meta.get('format_version'))[:20]!r} is not {FORMAT_VERSION}"
        )
    euid = meta.get("euid")
    if euid is not None and (not isinstance(euid, int) or isinstance(euid, bool) or not 0 <= euid < 2**32):
        raise BundleError("meta.json: euid must be an integer uid")
    meta["sizes"] = _str_dict(meta.get("sizes"), "sizes", int)
    meta["failures"] = _str_dict(meta.get("failures"), "failures", str)
    return meta


def _load_fact(root: str, key: str) -> dict:
    data = _load_json(root, f"facts/{key}.json")
    if not isinstance(data, dict):
        raise BundleError(f"facts/{key}.json must hold a JSON object")
    return data


@contextlib.contextmanager
def open_bundle(path: str) -> Iterator[BundleSource]:
    """Open a bundle (``.tar.gz`` or an unpacked folder) as a source; cleans up on exit.

    A folder is checked like an archive (every symlink resolved, no special files) before any
    file in it is read; an archive is unpacked into a private temporary folder that is removed
    on every exit, SIGTERM included.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise BundleError(f"bundle {path} does not exist") from None
    except OSError as exc:
        raise BundleError(f"cannot open bundle {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        top = os.path.join(path, TOP)
        root = os.path.realpath(top if os.path.isdir(top) and not os.path.islink(top) else path)
        if not os.path.isdir(os.path.join(root, "fs")):
            raise BundleError(f"{path}: no fs/ folder: not an unpacked gdrdiag bundle")
        _check_tree(root)
        yield BundleSource(root, os.path.basename(os.path.normpath(path)))
        return
    with safefs.terminate_unwinds():
        tmp = tempfile.mkdtemp(prefix="gdrdiag-bundle-")
        try:
            root = safe_extract(path, tmp)
            if not os.path.isdir(os.path.join(root, "fs")):
                raise BundleError(f"bundle {os.path.basename(path)} has no fs/ folder")
            yield BundleSource(root, os.path.basename(path))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
