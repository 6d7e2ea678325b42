"""A bundle's cost is linear in its size (depth and members bounded, each
folder resolved once), a deep bundle is refused with one error instead of a RecursionError, no
extraction folder is left behind (SIGHUP included), and concurrent collects to one name do not
all succeed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from gdrdiag.hw import bundle
from gdrdiag.hw.bundle import BundleError, open_bundle

from .test_bundle_hostile import BASE, tar_bytes


def _deep(depth: int, files: int) -> bytes:
    """BASE plus ``files`` files at the bottom of a chain of ``depth`` folders below fs/."""
    chain = "gdrdiag-bundle/fs/" + "/".join(f"d{i}" for i in range(depth))
    dirs = [("/".join(chain.split("/")[: 2 + k]), "dir", None) for k in range(1, depth + 1)]
    leaves = [(f"{chain}/f{i}", "file", b"x") for i in range(files)]
    return tar_bytes(BASE + dirs + leaves)


def _cpu_to_open(path) -> float:
    start = time.process_time()
    try:
        with open_bundle(str(path)):
            pass
    except BundleError:
        pass
    return time.process_time() - start


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    t = tmp_path / "t"
    t.mkdir()
    monkeypatch.setenv("TMPDIR", str(t))
    monkeypatch.setattr("tempfile.tempdir", str(t))
    return t


def test_a_bundle_nested_past_the_limit_is_refused_and_leaves_no_folder(tmp_path, private_tmp):
    p = tmp_path / "deep.tar.gz"
    p.write_bytes(_deep(1200, 1))
    with pytest.raises(BundleError, match=f"levels deep \\(limit {bundle.MAX_DEPTH}\\)"):
        with open_bundle(str(p)):
            pass
    assert os.listdir(private_tmp) == []


def test_a_folder_bundle_1100_levels_deep_is_refused_without_recursion(tmp_path):
    top = tmp_path / "b"
    (top / "fs").mkdir(parents=True)
    chain = [os.path.join(str(top), "fs", *(["d"] * k)) for k in range(1, 1101)]
    for folder in chain:  # os.makedirs and shutil.rmtree recurse once per level
        os.mkdir(folder)
    try:
        with pytest.raises(BundleError, match="nests more than"):
            with open_bundle(str(top)):
                pass
    finally:
        for folder in reversed(chain):
            os.rmdir(folder)


def test_ten_times_deeper_costs_at_most_about_ten_times_more(tmp_path, private_tmp):
    """Was ~cubic: each member resolved its whole path (realpath, O(depth) lookups of O(depth))."""
    shallow, deep = tmp_path / "s.tar.gz", tmp_path / "d.tar.gz"
    shallow.write_bytes(_deep(60, 300))
    deep.write_bytes(_deep(600, 300))
    base = max(_cpu_to_open(shallow), 0.02)
    assert _cpu_to_open(deep) < 12 * base


def test_ten_times_the_members_costs_at_most_about_ten_times_more(tmp_path, private_tmp):
    few, many = tmp_path / "few.tar.gz", tmp_path / "many.tar.gz"
    few.write_bytes(_deep(30, 400))
    many.write_bytes(_deep(30, 4000))
    base = max(_cpu_to_open(few), 0.02)
    assert _cpu_to_open(many) < 15 * base


def test_each_folder_is_resolved_once(tmp_path, private_tmp, monkeypatch):
    calls = []
    real = bundle.safefs.inside
    monkeypatch.setattr(bundle.safefs, "inside", lambda root, path: calls.append(path) or real(root, path))
    p = tmp_path / "b.tar.gz"
    p.write_bytes(_deep(20, 500))
    with open_bundle(str(p)):
        pass
    # folders (fs, facts, d0..d19, ...) twice each (before and after creating), not once per member
    assert len(calls) < 80, len(calls)


def test_sighup_during_use_removes_the_extraction_folder(tmp_path):
    p = tmp_path / "g.tar.gz"
    p.write_bytes(tar_bytes(BASE))
    t = tmp_path / "t"
    t.mkdir()
    code = textwrap.dedent(
        f"""
        import time
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
    assert len(os.listdir(t)) == 1
    proc.send_signal(signal.SIGHUP)
    assert proc.wait(timeout=30) == 128 + signal.SIGHUP
    assert os.listdir(t) == []


def test_concurrent_writes_to_one_name_let_one_win_and_fail_the_others(tmp_path):
    """6 concurrent `collect -o same` all exited 0; without --force the later ones now fail clearly."""
    out = tmp_path / "node.tar.gz"
    tmps = []
    for i in range(6):
        t = tmp_path / f".tmp{i}"
        t.write_bytes(f"bundle {i}".encode())
        tmps.append(t)
    results = [None] * 6
    gate = threading.Barrier(6)

    def publish(i):
        gate.wait()
        try:
            bundle.safefs.publish(str(tmps[i]), str(out), replace=False)
            results[i] = "ok"
        except bundle.UserInputError as exc:
            results[i] = str(exc)

    threads = [threading.Thread(target=publish, args=(i,)) for i in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results.count("ok") == 1, results
    assert all("another run wrote it meanwhile" in r for r in results if r != "ok")
    winner = results.index("ok")
    assert out.read_bytes() == f"bundle {winner}".encode() and not tmps[winner].exists()


def test_with_force_the_last_write_replaces_atomically(tmp_path):
    out = tmp_path / "node.tar.gz"
    out.write_bytes(b"old")
    t = tmp_path / ".tmp"
    t.write_bytes(b"new")
    bundle.safefs.publish(str(t), str(out), replace=True)
    assert out.read_bytes() == b"new"
