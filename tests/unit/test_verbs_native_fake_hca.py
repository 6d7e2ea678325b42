"""The native provider end to end against a stand-in libibverbs.so.1 (tests/support/fake_ibverbs.c).

This machine has no RDMA device, so a small fake libibverbs (an in-process "HCA" that enforces
the RC rules and moves bytes with memcpy) is compiled here and put first on LD_LIBRARY_PATH of
child processes. The real build/native/libgdr_verbs.so and gdrdiag run unchanged on top of it:
the provider contract (the same tests as pyverbs and soft), mr-bench's modes with
``--provider native``, device and GID choice, and Ctrl-C. Every number printed in these runs is
a memcpy inside one process: none is a measurement, and none is kept.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gdrdiag.hw import verbs_native_lib

ROOT = Path(__file__).resolve().parents[2]
CC = shutil.which(os.environ.get("CC", "cc"))
CLEAN = "fake-verbs live: ctx=0 pd=0 mr=0 cq=0 qp=0"


@pytest.fixture(scope="module")
def fake_lib(tmp_path_factory):
    if CC is None or not Path("/usr/include/infiniband/verbs.h").exists():
        pytest.skip("needs a C compiler and libibverbs-dev")
    loaded, why = verbs_native_lib.availability()
    if loaded is None:
        pytest.skip(why)
    d = tmp_path_factory.mktemp("fakeverbs")
    subprocess.run(
        [
            CC,
            "-O1",
            "-shared",
            "-fPIC",
            "-o",
            str(d / "libibverbs.so.1"),
            str(ROOT / "tests/support/fake_ibverbs.c"),
        ],
        check=True,
    )
    return d


def _env(fake: Path, **extra: str) -> dict:
    return {
        **os.environ,
        "LD_LIBRARY_PATH": f"{fake}:{os.environ.get('LD_LIBRARY_PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "FAKE_VERBS_REPORT": "1",
        **extra,
    }


def _run(fake: Path, args: list[str], timeout: int = 240, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=_env(fake, **extra),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_native_provider_passes_the_provider_contract(fake_lib):
    res = _run(
        fake_lib,
        ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/unit/test_verbs_contract.py", "-k", "native"],
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert " passed" in res.stdout and "skipped" not in res.stdout, res.stdout[-1000:]


@pytest.mark.parametrize(
    "mode",
    [
        ["-s", "4K", "-n", "4000"],
        ["-s", "64", "-q", "4", "-l", "16", "-n", "16000", "--time-calls", "--inline", "64"],
        ["--latency", "-s", "64", "-n", "500"],
        ["--blocks", "1000", "-s", "4K"],
        ["--write-with-imm", "-s", "1K", "-q", "2", "-n", "4000"],
        ["--ro-ab", "-s", "64K", "-n", "500"],
    ],
    ids=["bw", "qps-postlist-timed-inline", "latency", "blocks", "write-with-imm", "ro-ab"],
)
def test_mr_bench_modes_run_in_c_and_verify_every_byte(fake_lib, tmp_path, mode):
    out = tmp_path / "r.json"
    res = _run(
        fake_lib,
        [
            "-m",
            "gdrdiag",
            "mr-bench",
            "--memory",
            "pageable",
            "--repeats",
            "2",
            "--json-out",
            str(out),
            *mode,
        ],
    )
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert CLEAN in res.stderr
    results = [r for r in json.loads(out.read_text())["results"] if r["key"].startswith("rdma_write")]
    assert results and all(r["status"] == "OK" and r["provider"] == "native" for r in results), results
    assert all(r["verified"] for r in results if "lat" not in r["key"])
    # --provider auto chose native here and the method says so, with the reason.
    assert all("provider: native provider (C loop" in r["method"] for r in results if r["unit"] == "Gb/s")
    if "--time-calls" in mode:
        m = results[0]["metrics"]
        assert m["post_ns_per_wr"] > 0 and m["poll_ns_per_wr"] >= 0 and "loop_ns_per_wr" in m
    if "--latency" in mode:
        assert results[0]["metrics"]["lat_p50_us"] > 0


def test_device_and_gid_choice_follow_the_pyverbs_rules(fake_lib):
    probe = (
        "import json\n"
        "from gdrdiag.errors import NotSupported, UserInputError\n"
        "from gdrdiag.hw import verbs as v, verbs_providers\n"
        "out = {'auto': verbs_providers.provider_choice('auto')}\n"
        "with verbs_providers.open_device('native') as d:\n"
        "    out['first'] = [d.name, d.gid_index, d.port_info().gid, d.port_info().link_layer]\n"
        "for kw in ({'name': 'fake9'}, {'gid_index': 9}, {'port': 2}, {'name': 'fake0', 'port': 2}):\n"
        "    try:\n"
        "        verbs_providers.open_device('native', **kw).close()\n"
        "    except (NotSupported, UserInputError) as exc:\n"
        "        out[str(kw)] = [type(exc).__name__, str(exc)]\n"
        "print(json.dumps(out))\n"
    )
    out = json.loads(_run(fake_lib, ["-c", probe]).stdout.strip().splitlines()[-1])
    assert out["auto"][0] == "native" and "fake0, fake1" in out["auto"][1]
    # Ethernet port: the RoCE v2 GID holding an IPv4-mapped address (index 3), not index 0.
    assert out["first"] == ["fake0", 3, "0000:0000:0000:0000:0000:ffff:0a00:0001", "Ethernet"]
    assert out["{'name': 'fake9'}"][0] == "UserInputError" and "not found" in out["{'name': 'fake9'}"][1]
    assert out["{'gid_index': 9}"] == ["UserInputError", "GID index 9 out of range (port table has 4)"]
    # As the pyverbs provider: no device named -> "none has that port ACTIVE"; one named -> bad input.
    assert out["{'port': 2}"] == ["NotSupported", "no RDMA device has port 2 ACTIVE (2 device(s))"]
    assert out["{'name': 'fake0', 'port': 2}"] == ["UserInputError", "fake0 has no port 2 (ports 1..1)"]

    down = (
        "from gdrdiag.errors import NotSupported\n"
        "from gdrdiag.hw import verbs as v, verbs_providers\n"
        "with verbs_providers.open_device('native') as d:\n"
        "    print(d.name)\n"
        "try:\n"
        "    verbs_providers.open_device('native', 'fake0')\n"
        "except NotSupported as exc:\n"
        "    print(exc)\n"
    )
    lines = _run(fake_lib, ["-c", down], FAKE_VERBS_DOWN="fake0").stdout.strip().splitlines()
    assert lines[0] == "fake1"  # the first device whose port is ACTIVE
    assert "port 1 of fake0 is not ACTIVE" in lines[1]


def test_ctrl_c_mid_run_exits_130_with_everything_released(fake_lib):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gdrdiag",
            "mr-bench",
            "--memory",
            "pageable",
            "-s",
            "4K",
            "-D",
            "60",
            "--repeats",
            "1",
        ],
        cwd=ROOT,
        env=_env(fake_lib),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(4.0)  # imports, device, MRs, QPs, warm-up: the measured C loop is running by now
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert CLEAN in err
