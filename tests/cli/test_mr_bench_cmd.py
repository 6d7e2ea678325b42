import json

import pytest
from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.hw import verbs_soft

runner = CliRunner()
SOFT = ["mr-bench", "--provider", "soft", "--memory", "pageable", "-n", "200", "--repeats", "1"]


@pytest.fixture(autouse=True)
def no_leaks():
    yield
    assert verbs_soft.live_objects() == {}


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--access", "local_write,remote_wrte"], "unknown access flag 'remote_wrte'"),
        (["-s", "0"], "must be greater than 0"),
        (["-s", "lots"], "cannot parse"),
        (["-s", "1M", "--mr-size", "64K"], "larger than the MR"),
        (["-q", "200"], "allows at most 256 QPs"),
        (["-t", "100000"], "WRs per QP"),
        (["--post-list", "256"], "--post-list 256"),
        (["--memory", "hbm"], "unknown memory kind"),
        (["--reg", "peermem"], "registration path"),
        (["-n", "10", "-D", "1"], "either -n or -D"),
        (["-a", "-s", "4K"], "drop -s"),
        (["--matrix", "--latency"], "separate modes"),
        (["--ro-ab", "--relaxed-ordering"], "drop --relaxed-ordering"),
        (["--connect", "10.0.0.9"], "runs two-machine mode on this machine only"),
        (["--server", "--bind", "0.0.0.0"], "--bind 0.0.0.0 is not a loopback address"),
        (["--json-out", "/nonexistent/dir/x.json"], "does not exist"),
        (["--inline", "64"], "need the native provider"),
        (["--time-calls"], "need the native provider"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, needle):
    res = runner.invoke(app, [*SOFT, *args])
    assert res.exit_code == 2, res.output
    assert needle in res.output
    assert "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_unknown_provider_is_exit_2():
    res = runner.invoke(app, ["mr-bench", "--provider", "mlx"])
    assert res.exit_code == 2 and "unknown provider" in res.output


def test_no_rdma_device_says_so_and_exits_1():
    from tests.conftest import rdma_absent_reason

    if rdma_absent_reason() is None:
        pytest.skip("this machine has an RDMA device")
    res = runner.invoke(app, ["mr-bench", "--relaxed-ordering"])
    assert res.exit_code == 1, res.output
    assert "no RDMA devices" in res.output and "--provider soft" in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def test_soft_run_prints_the_table_and_says_it_is_not_hardware():
    res = runner.invoke(app, [*SOFT, "--relaxed-ordering", "-q", "2", "-s", "16K"])
    assert res.exit_code == 0, res.output
    assert "SOFT PROVIDER" in res.output and "NOT hardware numbers" in res.output
    assert "pageable" in res.output and "16 KiB" in res.output
    row = next(line for line in res.output.splitlines() if line.startswith("pageable"))
    assert row.split()[-1] == "ok"  # the payload column (the provider column is left out at 100)


def test_json_output_records_provider_and_verification(tmp_path):
    out = tmp_path / "mr.json"
    res = runner.invoke(app, ["--json", *SOFT, "--ro-ab", "--json-out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data == json.loads(out.read_text())
    rs = data["results"]
    assert [r["params"]["access"] & 1 << 20 for r in rs] == [0, 1 << 20]  # IBV_ACCESS_RELAXED_ORDERING
    assert all(r["provider"] == "soft" and r["verified"] is True and r["status"] == "OK" for r in rs)
    assert data["findings"] == []  # soft results are never judged


def test_write_to_mr_without_remote_write_is_a_remote_access_error():
    res = runner.invoke(app, [*SOFT, "--access", "local_write", "--wide"])
    assert res.exit_code == 1, res.output
    assert "IBV_WC_REM_ACCESS_ERR" in res.output and "without remote_write" in res.output
    assert "Traceback" not in res.output


def test_matrix_on_the_soft_provider_without_gpu():
    from tests.conftest import gpu_absent_reason

    if gpu_absent_reason() is None:
        pytest.skip("a GPU is present")
    res = runner.invoke(
        app,
        [
            "mr-bench",
            "--provider",
            "soft",
            "--matrix",
            "-s",
            "64K",
            "-q",
            "2",
            "-n",
            "100",
            "--repeats",
            "1",
            "--wide",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "memory kind x registration path x relaxed ordering" in res.output
    assert "no verdict: soft provider" in res.output
    assert "WAIVED (1)" in res.output and "(1) device memory needs a GPU context" in res.output
    assert "the dma-buf path exports device memory" in res.output


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["--latency", "-n", "100"], "p99.9"),
        (["--blocks", "200", "-s", "4K"], "coalesced"),
        (["--reg-cost", "--reg-sizes", "4K,64K"], "registration cost"),
    ],
)
def test_modes(extra, needle):
    res = runner.invoke(
        app, ["mr-bench", "--provider", "soft", "--memory", "pageable", "--repeats", "1", *extra]
    )
    assert res.exit_code == 0, res.output
    assert needle in res.output


def test_native_provider_without_a_device_says_so_and_exits_1():
    from tests.conftest import native_rdma_absent_reason

    reason = native_rdma_absent_reason()
    if reason is None:
        pytest.skip("this machine has an RDMA device the native provider sees")
    res = runner.invoke(app, ["mr-bench", "--provider", "native", "--memory", "pageable"])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1
    if reason.startswith("no RDMA devices"):
        assert "no RDMA devices" in res.output and "--provider soft" in res.output
    else:  # the C library was not built: its reason
        assert "native provider unavailable" in res.output


def test_loop_cost_states_the_bound():
    res = runner.invoke(app, ["mr-bench", "--loop-cost", "-D", "0.05", "--repeats", "1", "--wide"])
    assert res.exit_code == 0, res.output
    assert (
        "loop cost" in res.output
        and "min msg 400G" in res.output
        and "KiB with one WR per post" in res.output
    )


def test_ctrl_c_exits_130_and_releases(monkeypatch):
    real_poll = verbs_soft.SoftCQ.poll
    calls = {"n": 0}

    def poll(self, max_entries=16):
        calls["n"] += 1
        if calls["n"] == 20:
            raise KeyboardInterrupt
        return real_poll(self, max_entries)

    monkeypatch.setattr(verbs_soft.SoftCQ, "poll", poll)
    res = runner.invoke(app, ["mr-bench", "--provider", "soft", "--memory", "pageable", "-n", "100000"])
    assert res.exit_code == 130
    assert "interrupted" in res.output
    # no_leaks: every soft QP, MR, CQ, PD and device was released on the way out.


def test_the_client_retries_a_refused_connection_for_timeout_seconds(monkeypatch):
    """A server still starting refuses connections (seen in the QEMU lab): --connect keeps trying."""
    from gdrdiag.bench import mr

    seen = {}

    def fake_client(cfg, host, **kw):
        seen.update(kw, host=host)
        return []

    monkeypatch.setattr(mr, "run_client", fake_client)
    runner.invoke(
        app,
        [
            "mr-bench",
            "--provider",
            "pyverbs",
            "--connect",
            "10.0.2.15",
            "--timeout",
            "7",
            "--memory",
            "pageable",
        ],
    )
    assert seen["host"] == "10.0.2.15" and seen["retry_s"] == 7.0


@pytest.mark.parametrize(
    "content,needle",
    [
        (b"short\n", "5 bytes; a secret needs at least 16"),
        (b"x" * 5000, "longer than 4096 bytes"),
    ],
)
def test_a_secret_file_that_cannot_be_a_secret_is_one_line_exit_2(tmp_path, content, needle):
    path = tmp_path / "secret"
    path.write_bytes(content)
    path.chmod(0o600)
    res = runner.invoke(app, ["mr-bench", "--connect", "127.0.0.1", "--secret-file", str(path)])
    assert res.exit_code == 2 and needle in res.output and len(res.output.strip().splitlines()) == 1, (
        res.output
    )


def test_a_secret_without_two_machines_is_refused(tmp_path):
    path = tmp_path / "secret"
    path.write_bytes(b"0123456789abcdef0123\n")
    path.chmod(0o600)
    res = runner.invoke(app, ["mr-bench", "--provider", "soft", "--secret-file", str(path)])
    assert res.exit_code == 2 and "--secret-file is for two machines" in res.output


def test_the_secret_file_is_read_less_its_trailing_newline(tmp_path):
    from gdrdiag.cli.mr_peer import read_secret_file

    path = tmp_path / "secret"
    path.write_bytes(b"0123456789abcdef\n")

    path.chmod(0o600)
    assert read_secret_file(path) == b"0123456789abcdef"


def test_two_machine_options_reach_the_bench(tmp_path, monkeypatch):
    """--server/--connect hand their port, bind address, timeouts and secret to the bench as given."""
    from gdrdiag.bench import mr

    path = tmp_path / "secret"
    path.write_bytes(b"0123456789abcdef0123\n")

    path.chmod(0o600)
    seen = {}
    monkeypatch.setattr(mr, "serve", lambda cfg, **kw: seen.setdefault("serve", kw) and [])
    monkeypatch.setattr(
        mr, "run_client", lambda cfg, host, **kw: seen.setdefault("client", (host, kw)) and []
    )
    common = ["--secret-file", str(path), "-p", "19999", "--provider", "native"]
    runner.invoke(app, ["mr-bench", "--server", "--bind", "127.0.0.2", "--accept-timeout", "7", *common])
    runner.invoke(app, ["mr-bench", "--connect", "10.0.0.9", *common])
    serve = seen["serve"]
    assert (serve["port"], serve["bind"], serve["accept_timeout_s"], serve["secret"]) == (
        19999,
        "127.0.0.2",
        7.0,
        b"0123456789abcdef0123",
    )
    host, client = seen["client"]
    assert (host, client["port"], client["secret"]) == ("10.0.0.9", 19999, b"0123456789abcdef0123")


# -- two-machine options a user can get wrong -------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["--server", "--accept-timeout", "nan"],
        ["--server", "--accept-timeout", "inf"],
        ["--server", "--accept-timeout", "-1"],
        ["--server", "--accept-timeout", "0"],
        ["--connect", "127.0.0.1", "--timeout", "nan"],
        ["--connect", "127.0.0.1", "--timeout", "inf"],
        ["--timeout", "-1", "--provider", "soft", "--memory", "pageable"],
    ],
)
def test_a_timeout_that_is_not_a_number_of_seconds_is_one_line_exit_2(args):
    res = runner.invoke(app, ["mr-bench", "--provider", "native", *args])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1 and "timeout" in res.output, res.output


@pytest.mark.parametrize(
    ("content", "mode", "needle"),
    [
        (b"0123456789abcdef0123\n", 0o644, "others may read it (mode 0644); chmod 600"),
        (b"0123456789abcdef0123\n", 0o640, "mode 0640"),
        (b" " * 20 + b"\n", 0o600, "only blanks"),
        (b"\t \t \t \t \t \t \t \t \t \n", 0o600, "only blanks"),
    ],
)
def test_a_secret_file_others_can_read_or_all_blank_is_refused(tmp_path, content, mode, needle):
    path = tmp_path / "secret"
    path.write_bytes(content)
    path.chmod(mode)
    res = runner.invoke(app, ["mr-bench", "--connect", "127.0.0.1", "--secret-file", str(path)])
    assert res.exit_code == 2 and needle in res.output and len(res.output.strip().splitlines()) == 1, (
        res.output
    )


@pytest.mark.parametrize(("bind", "warned"), [("0.0.0.0", True), ("10.1.2.3", True), ("127.0.0.1", False)])
def test_a_server_on_a_reachable_address_without_a_secret_is_warned(monkeypatch, bind, warned):
    from gdrdiag.bench import mr

    monkeypatch.setattr(mr, "serve", lambda cfg, **kw: [])
    res = runner.invoke(app, ["mr-bench", "--server", "--bind", bind, "--provider", "native"])
    assert ("warning: --bind" in res.output and "--secret-file" in res.output) is warned, res.output


def test_every_case_waived_says_so_after_the_output_and_exits_0(monkeypatch, tmp_path):
    """The shared tail's afterword: one stderr line after the table or the JSON, the file written."""
    from gdrdiag.errors import NotSupported
    from gdrdiag.hw import cuda

    def no_gpu(ordinal=0):
        raise NotSupported("no GPU (test)")

    monkeypatch.setattr(cuda, "get_device", no_gpu)
    monkeypatch.setattr(cuda, "GpuContext", no_gpu)  # the bench's own GPU context: none here either
    args = ["mr-bench", "--provider", "soft", "--memory", "device", "-n", "20", "--repeats", "1"]
    out = tmp_path / "mr.json"
    for lead in ([], ["--json"]):
        res = runner.invoke(app, [*lead, *args, *(["--json-out", str(out)] if lead else [])])
        assert res.exit_code == 0, res.output
        last = res.stderr.strip().splitlines()[-1]
        assert last.startswith("gdrdiag: nothing could be measured here (every case WAIVED")
    assert json.loads(out.read_text()) == json.loads(res.stdout)
