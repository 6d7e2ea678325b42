"""mr-bench keeps perftest's meaning for every perftest letter it takes (perftest_parameters.c).

perftest's getopt string is ``w:y:p:d:i:m:s:n:t:u:S:x:c:q:I:o:M:r:Q:A:l:D:f:B:T:L:E:J:j:K:k:X:W:
aFegzRvhbNVCHUOZP``: ``-m`` is the MTU there, so the memory kind is ``--memory``/``-G`` here (``G`` is one
of the two letters perftest's getopt string does not take).
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gdrdiag.bench import mr, mr_setup, mr_twohost
from gdrdiag.cli import app
from gdrdiag.errors import NotSupported, UserInputError
from gdrdiag.hw import verbs_soft
from gdrdiag.hw.memory import MemoryKind
from gdrdiag.model.vocabulary import RelaxedOrdering

runner = CliRunner()
SOFT = ["mr-bench", "--provider", "soft", "--memory", "pageable", "-n", "200", "--repeats", "1", "--quiet"]


@pytest.fixture(autouse=True)
def no_leaks():
    yield
    assert verbs_soft.live_objects() == {}


@pytest.fixture
def captured(monkeypatch):
    """mr-bench's config as the CLI built it: the seam is ``bench.mr.run`` (nothing is opened)."""
    seen = {}

    def fake_run(cfg, *, mode="bw", progress=None, tick=None):
        seen["cfg"], seen["mode"] = cfg, mode
        return []

    monkeypatch.setattr(mr, "run", fake_run)
    return seen


def test_a_perftest_command_line_means_what_it_means_in_perftest(captured):
    line = "-d X -x 3 -s 4096 -n 100 -q 2 -t 64 -l 4 -m 1024 -i 2 -Q 8 -F".split()
    res = runner.invoke(app, ["mr-bench", "--provider", "pyverbs", *line])
    # Nothing ran (the seam returned no result), so mr-bench says so and exits 1; the config is the point.
    assert res.exit_code == 1, res.output
    cfg = captured["cfg"]
    assert (cfg.device, cfg.gid_index, cfg.sizes, cfg.iterations) == ("X", 3, (4096,), 100)
    assert (cfg.qps, cfg.tx_depth, cfg.post_list, cfg.mtu, cfg.port, cfg.cq_mod) == (2, 64, 4, 1024, 2, 8)
    assert cfg.kinds == (MemoryKind.DEVICE, MemoryKind.PINNED)  # -m did not touch the memory kinds


def test_perftest_duration_and_all_sizes(captured):
    res = runner.invoke(app, ["mr-bench", "--provider", "pyverbs", "-a", "-D", "2", "--post-list", "2"])
    assert res.exit_code == 1, res.output
    cfg = captured["cfg"]
    assert cfg.sizes == mr.SWEEP_SIZES and cfg.sizes[0] == 2 and cfg.sizes[-1] == 1 << 23
    assert (cfg.duration, cfg.iterations, cfg.post_list) == (2.0, None, 2)


def test_memory_kind_has_a_long_name_and_a_letter_perftest_does_not_take(captured):
    res = runner.invoke(app, ["mr-bench", "--provider", "pyverbs", "-G", "pageable,managed"])
    assert res.exit_code == 1, res.output
    assert captured["cfg"].kinds == (MemoryKind.PAGEABLE, MemoryKind.MANAGED)


@pytest.mark.parametrize(
    "args,needle",
    [
        (["-m", "1500"], "-m 1500: the MTU must be one of 256, 512, 1024, 2048, 4096"),
        (["-Q", "0"], "-Q 0"),
        (["-Q", "1000"], "-Q 1000"),
        (["-t", "16", "-Q", "17"], "-Q 17: signal one WR in 1..16"),
        (
            ["--no-relaxed-ordering", "--access", "local_write,remote_write,relaxed_ordering"],
            "--no-relaxed-ordering contradicts relaxed_ordering in --access",
        ),
        (["--ro-ab", "--relaxed-ordering"], "--ro-ab runs RO off and on itself; drop --relaxed-ordering"),
        (["--ro-ab", "--no-relaxed-ordering"], "drop --no-relaxed-ordering"),
        (["--ro-ab", "--access", "local_write,relaxed_ordering"], "drop relaxed_ordering from --access"),
        (["--matrix", "--relaxed-ordering"], "--matrix runs RO off and on itself"),
        (["-d", "mlx5_0"], "--provider soft opens no RDMA device; drop -d"),
        (["--peer-dev", "mlx5_1"], "drop --peer-dev"),
    ],
)
def test_contradictions_and_bad_values_are_one_line_and_exit_2(args, needle):
    res = runner.invoke(app, [*SOFT, *args])
    assert res.exit_code == 2, res.output
    assert needle in res.stderr
    assert "Traceback" not in res.output
    assert len(res.stderr.strip().splitlines()) == 1 and res.stdout == ""


def test_an_mtu_above_the_ports_is_refused_before_anything_runs():
    cfg = mr.MrBenchConfig(
        provider="soft", kinds=(MemoryKind.PAGEABLE,), mtu=2048, soft_options={"mtu": 1024}, iterations=100
    )
    with pytest.raises(UserInputError, match="-m 2048: above the active MTU of soft0 port"):
        mr.run(cfg)
    assert verbs_soft.live_objects() == {}


def test_the_mtu_reaches_the_qp_as_its_path_mtu(monkeypatch):
    """-m lowers the peer's advertised MTU, which every provider turns into IBV_QP_PATH_MTU (min of both)."""
    seen = []
    real = verbs_soft.SoftQP.to_rtr

    def to_rtr(self, remote):
        seen.append(remote.mtu)
        return real(self, remote)

    monkeypatch.setattr(verbs_soft.SoftQP, "to_rtr", to_rtr)
    base = dict(provider="soft", kinds=(MemoryKind.PAGEABLE,), sizes=(8192,), iterations=100, repeats=1)
    (with_mtu,) = mr.run(mr.MrBenchConfig(mtu=1024, **base))
    assert seen and set(seen) == {1024}
    assert "path MTU 1024 bytes (-m)" in with_mtu.method  # recorded with the result
    seen.clear()
    (without,) = mr.run(mr.MrBenchConfig(**base))
    assert set(seen) == {4096} and "path MTU" not in without.method  # the port's own


def test_path_mtu_info_never_raises_the_peers_mtu():
    remote = mr_setup.v.QpInfo(5, 1, 1, "fe80:0000:0000:0000:0000:0000:0000:0001", 2048)
    assert mr_setup.path_mtu_info(remote, None) is remote
    assert mr_setup.path_mtu_info(remote, 4096) is remote
    assert mr_setup.path_mtu_info(remote, 512).mtu == 512


def test_the_server_opens_its_rdma_device_before_it_listens(monkeypatch):
    """A host without the device fails at once, not after a client came (or --accept-timeout passed)."""
    listened = []

    class RecordingListener:
        def __init__(self, *a, **kw):
            listened.append(a)

    def no_device(*a, **kw):
        raise NotSupported("no RDMA devices: test")

    from gdrdiag.bench import exchange

    monkeypatch.setattr(exchange, "Listener", RecordingListener)
    monkeypatch.setattr(mr_twohost.verbs_providers, "open_device", no_device)
    cfg = mr.MrBenchConfig(provider="pyverbs", kinds=(MemoryKind.PAGEABLE,))
    with pytest.raises(NotSupported, match="no RDMA devices"):
        mr.serve(cfg, port=0, accept_timeout_s=60.0)
    assert listened == []


def test_the_server_refuses_an_ab_run():
    cfg = mr.MrBenchConfig(provider="soft", kinds=(MemoryKind.PAGEABLE,), ro=RelaxedOrdering.AB)
    with pytest.raises(UserInputError, match="one RO setting"):
        mr.serve(cfg, port=0, accept_timeout_s=1.0)


def test_help_documents_the_perftest_letters():
    res = runner.invoke(app, ["mr-bench", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    for text in ("--mtu", "-m", "--memory", "-G", "--cpu-freq", "-F", "--quiet"):
        assert text in res.output
