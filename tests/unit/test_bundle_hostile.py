"""Hostile bundles: link chains, links to devices and FIFOs, header bombs, truncated or
corrupt archives, FIFOs given as the bundle, SIGTERM during extraction.

Each test was written against the old reader and failed there: the link checks were lexical,
meta.json/facts were opened with plain ``open()``, folder bundles were not checked at all,
extended headers were read whole, and archives were accepted without their end.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import textwrap
import time
import tracemalloc

import pytest

from gdrdiag.hw.bundle import BundleError, open_bundle, safe_extract
from gdrdiag.hw.sysfs import SysfsError, SysfsTree

META = json.dumps({"format": "gdrdiag-bundle", "format_version": 1}).encode()
SECRET = json.dumps({"format": "gdrdiag-bundle", "format_version": 1, "failures": {"/x": "HOST-SECRET"}})
BASE = [
    ("gdrdiag-bundle", "dir", None),
    ("gdrdiag-bundle/meta.json", "file", META),
    ("gdrdiag-bundle/fs/sys/x", "file", b"1\n"),
] + [(f"gdrdiag-bundle/facts/{k}.json", "file", b"{}") for k in ("cuda", "nvml", "verbs")]


def tar_bytes(members, compress=True, fmt=tarfile.PAX_FORMAT) -> bytes:
    """A tar (gzip by default) of (name, kind, data) members, in the order given."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if compress else "w", format=fmt) as tf:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                tf.addfile(info)
            elif kind == "sym":
                info.type, info.linkname = tarfile.SYMTYPE, data
                tf.addfile(info)
            else:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _replace(members, name, kind, data):
    return [m for m in members if m[0] != name] + [(name, kind, data)]


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """Extraction happens below tmp_path/t, so ``..`` from the bundle lands in a known place."""
    t = tmp_path / "t"
    t.mkdir()
    monkeypatch.setenv("TMPDIR", str(t))
    monkeypatch.setattr("tempfile.tempdir", str(t))
    return t


# ---- link chains: each link stays inside, together they leave --------------------------------------


@pytest.mark.parametrize("link_first", [False, True], ids=["up-link-first", "chain-link-first"])
def test_relative_link_chain_to_a_host_file_is_refused(private_tmp, tmp_path, link_first):
    # Extracted as <t>/gdrdiag-bundle-XXXX/x/{meta.json,...}; x/d1/d2/up -> ../.. is x itself, so
    # meta.json -> d1/d2/up/../../secret.json is <t>/gdrdiag-bundle-XXXX/../secret.json = <t>/secret.json
    # while lexically it is x/d1/secret.json (inside). The old check joined and normalised: accepted.
    (private_tmp / "secret.json").write_text(SECRET)
    up = ("gdrdiag-bundle/d1/d2/up", "sym", "../..")
    chain = ("gdrdiag-bundle/meta.json", "sym", "d1/d2/up/../../secret.json")
    members = [m for m in BASE if not m[0].endswith("meta.json")] + [("gdrdiag-bundle/d1/d2", "dir", None)]
    members += [chain, up] if link_first else [up, chain]
    p = tmp_path / "chain.tar.gz"
    p.write_bytes(tar_bytes(members))
    with pytest.raises(BundleError, match="leaves the bundle") as err:
        with open_bundle(str(p)) as src:
            pytest.fail(f"opened: {src.meta}")
    assert "HOST-SECRET" not in str(err.value) and "\n" not in str(err.value)
    assert os.listdir(private_tmp) == ["secret.json"]  # the extraction folder is gone


def test_folder_bundle_with_a_link_outside_is_refused(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(SECRET)
    root = tmp_path / "b"
    (root / "fs/sys").mkdir(parents=True)
    (root / "facts").mkdir()
    for k in ("cuda", "nvml", "verbs"):
        (root / f"facts/{k}.json").write_text("{}")
    (root / "d").mkdir()
    os.symlink("..", root / "d/up")  # inside (the bundle root)
    os.symlink("d/up/../secret.json", root / "meta.json")  # with the link resolved: outside
    with pytest.raises(BundleError, match="leaves the bundle"):
        with open_bundle(str(root)):
            pass


@pytest.mark.parametrize("where", ["facts/cuda.json", "meta.json", "fs/sys/x"])
def test_folder_bundle_link_to_dev_zero_is_refused_with_bounded_memory(tmp_path, where):
    root = tmp_path / "b"
    (root / "fs/sys").mkdir(parents=True)
    (root / "facts").mkdir()
    (root / "meta.json").write_bytes(META)
    for k in ("cuda", "nvml", "verbs"):
        (root / f"facts/{k}.json").write_text("{}")
    (root / "fs/sys/x").write_text("1")
    (root / where).unlink()
    os.symlink("/dev/zero", root / where)
    tracemalloc.start()
    try:
        with pytest.raises(BundleError, match="leaves the bundle"):
            with open_bundle(str(root)):
                pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


def test_fifo_inside_a_folder_bundle_is_refused_without_blocking(tmp_path):
    root = tmp_path / "b"
    (root / "fs/proc").mkdir(parents=True)
    (root / "facts").mkdir()
    (root / "meta.json").write_bytes(META)
    for k in ("cuda", "nvml", "verbs"):
        (root / f"facts/{k}.json").write_text("{}")
    os.mkfifo(root / "fs/proc/cpuinfo")
    with pytest.raises(BundleError, match="device, FIFO or socket"):
        with open_bundle(str(root)):
            pass


def test_captured_tree_reads_only_regular_files(tmp_path):
    # The tree alone (a hand-built fixture, no open_bundle check): a FIFO must not block a read,
    # and a link out of the tree is refused even when every step is a relative link.
    (tmp_path / "proc").mkdir()
    os.mkfifo(tmp_path / "proc/cpuinfo")
    (tmp_path / "a/b").mkdir(parents=True)
    os.symlink("../..", tmp_path / "a/b/up")
    os.symlink("a/b/up/" + "../" * 30 + "etc/hostname", tmp_path / "proc/hostname")
    tree = SysfsTree(str(tmp_path))
    start = time.monotonic()
    with pytest.raises(SysfsError, match="not a regular file"):
        tree.read_bytes("/proc/cpuinfo")
    with pytest.raises(SysfsError, match="leaves"):
        tree.read_bytes("/proc/hostname")
    assert time.monotonic() - start < 2


# ---- archive structure ------------------------------------------------------------------------------


def _pax_bomb(value_bytes: int) -> bytes:
    info = tarfile.TarInfo("gdrdiag-bundle/meta.json")
    info.size = len(META)
    info.pax_headers = {"comment": "A" * value_bytes}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tf:
        tf.addfile(info, io.BytesIO(META))
    return buf.getvalue()


def test_extended_header_bomb_is_refused_before_it_is_read(tmp_path):
    p = tmp_path / "bomb.tar.gz"
    p.write_bytes(_pax_bomb(48 * 2**20))  # ~50 KB on disk, 48 MiB header
    assert p.stat().st_size < 1_000_000
    tracemalloc.start()
    try:
        with pytest.raises(BundleError, match="extended tar header"):
            safe_extract(str(p), str(tmp_path / "o"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


def test_chained_extended_headers_are_refused(tmp_path):
    # 3000 pax headers in a row: tarfile follows them by recursion (RecursionError, a traceback).
    blocks = []
    for _ in range(3000):
        rec = b"16 comment=abcd\n"
        hdr = tarfile.TarInfo("././@PaxHeader")
        hdr.type, hdr.size = tarfile.XHDTYPE, len(rec)
        blocks.append(hdr.tobuf(tarfile.USTAR_FORMAT) + rec + b"\0" * (512 - len(rec)))
    body = tarfile.TarInfo("gdrdiag-bundle/meta.json")
    body.size = len(META)
    data = (
        b"".join(blocks) + body.tobuf(tarfile.USTAR_FORMAT) + META + b"\0" * (512 - len(META)) + b"\0" * 1024
    )
    p = tmp_path / "chain.tar.gz"
    p.write_bytes(gzip.compress(data))
    with pytest.raises(BundleError, match="chains more than"):
        safe_extract(str(p), str(tmp_path / "o"))


def test_archive_cut_at_a_member_boundary_is_refused(tmp_path):
    plain = tar_bytes(BASE, compress=False)
    # Find the end of the last member's data: everything up to the end-of-archive blocks.
    with tarfile.open(fileobj=io.BytesIO(plain)) as tf:
        last = tf.getmembers()[-1]
        end = last.offset_data + -(-last.size // 512) * 512
    p = tmp_path / "cut.tar.gz"
    p.write_bytes(gzip.compress(plain[:end]))  # a whole gzip stream of a cut tar
    with pytest.raises(BundleError, match="truncated"):
        with open_bundle(str(p)):
            pass
    p.write_bytes(gzip.compress(plain[:end] + b"garbage!" * 64 + b"\0" * 1024))
    with pytest.raises(BundleError, match="truncated|corrupt"):
        with open_bundle(str(p)):
            pass


def test_bad_gzip_checksum_and_cut_gzip_are_refused(tmp_path):
    good = bytearray(tar_bytes(BASE))
    p = tmp_path / "g.tar.gz"
    p.write_bytes(bytes(good))
    with open_bundle(str(p)) as src:  # the untouched bundle opens
        assert src.tree.read_text("/sys/x") == "1"
    good[-8] ^= 0xFF  # CRC32 in the gzip trailer
    p.write_bytes(bytes(good))
    with pytest.raises(BundleError, match="corrupt or truncated"):
        with open_bundle(str(p)):
            pass
    p.write_bytes(bytes(good[:-6]))  # trailer cut off
    with pytest.raises(BundleError, match="corrupt or truncated"):
        with open_bundle(str(p)):
            pass


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_fifo_or_device_as_the_bundle_does_not_hang(tmp_path, kind):
    path = "/dev/zero" if kind == "dev-zero" else str(tmp_path / "fifo")
    if kind == "fifo":
        os.mkfifo(path)
    code = f"from gdrdiag.hw.bundle import open_bundle\nwith open_bundle({path!r}): pass\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "not a regular file or folder" in proc.stderr


def test_sigterm_during_use_removes_the_extraction_folder(tmp_path):
    p = tmp_path / "g.tar.gz"
    p.write_bytes(tar_bytes(BASE))
    t = tmp_path / "t"
    t.mkdir()
    code = textwrap.dedent(
        f"""
        import sys, time
        from gdrdiag.hw.bundle import open_bundle
        with open_bundle({str(p)!r}):
            print("open", flush=True)
            time.sleep(60)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(t)}
    )
    assert proc.stdout.readline().strip() == "open"
    assert len(os.listdir(t)) == 1  # the extraction folder exists while the bundle is open
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert os.listdir(t) == []


def test_hostile_bundles_through_the_cli_one_line_exit_2_bounded_memory(tmp_path):
    """The CLI view: every hostile bundle ends in one line on stderr, exit 2, under 512 MiB."""
    bundles = {
        "chain": tar_bytes(
            [m for m in BASE if not m[0].endswith("meta.json")]
            + [
                ("gdrdiag-bundle/d1/d2", "dir", None),
                ("gdrdiag-bundle/meta.json", "sym", "d1/d2/up/../../../../../../../etc/hostname"),
                ("gdrdiag-bundle/d1/d2/up", "sym", "../.."),
            ]
        ),
        "bomb": _pax_bomb(200 * 2**20),
        "cut": tar_bytes(BASE)[:-40],
        "random": os.urandom(4096),
    }
    script = textwrap.dedent(
        """
        import resource, subprocess, sys
        procs = [subprocess.run([sys.executable, "-m", "gdrdiag", "inspect", "--bundle", p],
                                capture_output=True, text=True, timeout=120) for p in sys.argv[1:]]
        for p in procs:
            print(p.returncode, len(p.stderr.strip().splitlines()), "Traceback" in p.stderr, sep=",")
        print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        """
    )
    paths = []
    for name, blob in bundles.items():
        p = tmp_path / f"{name}.tar.gz"
        p.write_bytes(blob)
        paths.append(str(p))
    out = subprocess.run([sys.executable, "-c", script, *paths], capture_output=True, text=True, timeout=600)
    lines = out.stdout.split()
    assert lines[:-1] == ["2,1,False"] * len(paths), out.stdout + out.stderr
    assert int(lines[-1]) * 1024 < 512 * 2**20


@pytest.mark.parametrize(
    "kind, name, link, refused",
    [
        ("file", "fs/a", None, False),
        ("file", "/abs", None, False),  # both strip the slash (gdrdiag refuses it earlier, by name)
        ("file", "fs/../../out", None, True),
        ("sym", "fs/l", "/etc", True),
        ("sym", "fs/l", "../x", False),
        ("sym", "fs/l", "../../x", True),
        ("fifo", "fs/p", None, True),
    ],
)
def test_compat_filter_refuses_what_the_standard_filter_refuses(tmp_path, kind, name, link, refused):
    """On Pythons without ``tarfile.data_filter`` the fallback applies the same rules."""
    from gdrdiag.hw import safefs

    info = tarfile.TarInfo(name)
    info.type = {"file": tarfile.REGTYPE, "sym": tarfile.SYMTYPE, "fifo": tarfile.FIFOTYPE}[kind]
    info.linkname = link or ""
    filters = [safefs._data_filter_compat] + (
        [tarfile.data_filter] if hasattr(tarfile, "data_filter") else []
    )
    for flt in filters:
        try:
            flt(info, str(tmp_path))
            outcome = False
        except safefs.filter_errors():
            outcome = True
        assert outcome is refused, flt
