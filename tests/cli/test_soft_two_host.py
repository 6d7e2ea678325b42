"""The soft provider's TCP wire. `mr-bench --provider soft --server` and
`--connect 127.0.0.1` run end to end as two processes of this machine, every byte verified by the
server, and both sides say the numbers are software's. Everything stays on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.hw import verbs_soft

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture(autouse=True)
def no_leaks():
    yield
    assert verbs_soft.live_objects() == {}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_soft_server_and_client_run_end_to_end_over_127_0_0_1(tmp_path):
    port = str(_free_port())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server_json = tmp_path / "server.json"
    server = subprocess.Popen(
        [sys.executable, "-m", "gdrdiag", "mr-bench", "--provider", "soft", "--server", "-p", port,
         "--accept-timeout", "30", "--json-out", str(server_json), "--quiet"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        res = runner.invoke(
            app,
            ["mr-bench", "--provider", "soft", "--connect", "127.0.0.1", "-p", port, "-n", "500",
             "--json-out", str(tmp_path / "client.json"), "--quiet"],
        )  # fmt: skip
        out, err = server.communicate(timeout=60)
    finally:
        server.kill()
    assert res.exit_code == 0, res.output
    assert server.returncode == 0, err
    client = json.loads((tmp_path / "client.json").read_text())["results"]
    served = json.loads(server_json.read_text())["results"]
    (c,), (s,) = client, served
    assert c["status"] == "OK" and c["verified"] and c["provider"] == "soft"
    assert c["params"]["topology"] == "two_machine" and c["params"]["memory"] == "pageable"
    assert s["status"] == "OK" and s["metrics"]["verified_runs"] == 3 and s["provider"] == "soft"
    for text in (res.output, out):
        assert "NOT a hardware number" in text and "TCP on 127.0.0.1" in text


def test_the_soft_wire_refuses_gpu_memory_and_bad_keys():
    """The wire applies the responder's checks: a wrong rkey is a REM_ACCESS_ERR, device memory is refused."""
    from gdrdiag.errors import UserInputError
    from gdrdiag.hw import verbs_soft_wire
    from gdrdiag.hw.verbs import WcStatus

    with verbs_soft.SoftDevice(wire=True) as dev, dev.alloc_pd() as pd:
        assert verbs_soft_wire.port_of(dev.gid) == dev._wire.port
        with pytest.raises(UserInputError, match="host memory only"):
            pd.reg_mr(4096, 4096, 1, gpu=True)
        link = verbs_soft_wire.WireLink(dev._wire.port)
        try:
            assert link.write(0x999, 0, 0, 0, 16, None) is WcStatus.RETRY_EXC_ERR  # no such QP
        finally:
            link.close()


def test_without_a_device_the_server_hint_is_one_two_machine_mode_accepts(monkeypatch):
    from gdrdiag.bench import mr
    from gdrdiag.errors import NotSupported

    def no_device(cfg, **kw):
        raise NotSupported("no RDMA devices: /sys/class/infiniband is empty")

    monkeypatch.setattr(mr, "serve", no_device)
    res = runner.invoke(app, ["mr-bench", "--server", "--provider", "pyverbs"])
    assert res.exit_code == 1 and "--connect 127.0.0.1" in res.output, res.output
    res = runner.invoke(app, ["mr-bench", "--server", "--provider", "pyverbs", "--bind", "10.0.0.1"])
    assert "--provider soft" not in res.output and "RDMA device on both" in res.output, res.output


def test_the_wire_writes_only_into_an_mr_still_registered():
    """A WRITE whose MR is deregistered while its payload crosses the wire lands nowhere."""
    import ctypes

    from gdrdiag.hw import verbs as v

    target = ctypes.create_string_buffer(64)
    addr = ctypes.addressof(target)
    with verbs_soft.SoftDevice(wire=True) as dev, dev.alloc_pd() as pd:
        mr = pd.reg_mr(addr, 64, v.ACCESS_LOCAL_WRITE | v.ACCESS_REMOTE_WRITE)
        assert dev._wire_store(mr, 8, bytearray(b"x" * 16), 16) and target.raw[8:24] == b"x" * 16
        assert not dev._wire_store(mr, 60, bytearray(16), 16)  # past the MR's end
        mr.close()
        assert not dev._wire_store(mr, 0, bytearray(b"y" * 16), 16)
    assert target.raw[:8] == b"\0" * 8 and b"y" not in target.raw
