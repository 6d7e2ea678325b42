"""hw/verbs.py without a device: flag names, statuses, QP info, and "no RDMA devices" via libibverbs."""

from __future__ import annotations

import errno
import sys

import pytest

from gdrdiag.errors import HardwareError, NotSupported, UserInputError
from gdrdiag.hw import verbs as v
from gdrdiag.hw import verbs_facts, verbs_providers, verbs_pyverbs


def test_access_names_round_trip_and_unknown_bits():
    from gdrdiag.model.words import parse_access  # users' words are parsed in model/, not here

    mask = int(parse_access("local_write,remote_write,relaxed_ordering"))
    assert v.access_names(mask) == ["local_write", "remote_write", "relaxed_ordering"]
    assert v.access_names(1 << 25) == [hex(1 << 25)]
    assert v.ACCESS_RELAXED_ORDERING & v.ACCESS_OPTIONAL_RANGE


def test_status_names():
    assert v.status_name(10) == "IBV_WC_REM_ACCESS_ERR"
    assert v.status_name(999) == "IBV_WC_STATUS_999"


def test_completion_error_explains_the_status():
    c = v.Completion(wr_id=1, status=v.WcStatus.RETRY_EXC_ERR, opcode=1, byte_len=0, qp_num=5)
    msg = str(v.CompletionError(c))
    assert "IBV_WC_RETRY_EXC_ERR" in msg and "QP 5" in msg and "did not answer" in msg


def test_qp_info_json_round_trip_and_validation():
    q = v.QpInfo(qp_num=0x123, psn=77, lid=3, gid="fe80:0000:0000:0000:0000:0000:0000:0001", mtu=4096)
    assert v.QpInfo.from_json(q.to_json()) == q
    for bad in ({}, {**q.to_json(), "mtu": 1000}, {**q.to_json(), "qp_num": 0}, {**q.to_json(), "psn": "x"}):
        with pytest.raises(ValueError):
            v.QpInfo.from_json(bad)


def test_resolve_provider():
    assert verbs_providers.resolve_provider("auto") == "pyverbs"
    assert verbs_providers.resolve_provider("SOFT") == "soft"
    with pytest.raises(UserInputError, match="unknown provider"):
        verbs_providers.resolve_provider("mlx5")


def test_pyverbs_provider_reports_no_rdma_devices_through_libibverbs():
    """On a machine without RDMA (this CI), the real libibverbs says so, as NotSupported."""
    pytest.importorskip("pyverbs.device", reason="pyverbs not installed")
    try:
        names = verbs_providers.list_device_names()
    except NotSupported as exc:
        assert exc.reason.startswith("no RDMA devices: ")
        assert len(exc.reason) > len("no RDMA devices: ") + 10  # says why
        with pytest.raises(NotSupported, match="no RDMA devices"):
            verbs_providers.open_device("auto")
        with pytest.raises(NotSupported, match="no RDMA devices"):
            verbs_facts.device_facts("mlx5_0")
        with pytest.raises(NotSupported, match="no RDMA devices"):
            verbs_facts.dmabuf_probe("mlx5_0")
        return
    pytest.skip(f"this machine has RDMA devices: {names}")


def test_missing_pyverbs_is_no_rdma_devices(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyverbs", None)
    monkeypatch.setitem(sys.modules, "pyverbs.device", None)
    with pytest.raises(NotSupported, match="no RDMA devices: pyverbs"):
        verbs_providers.list_device_names()


def test_pyverbs_enums_resolve_in_either_layout():
    pytest.importorskip("pyverbs.enums", reason="pyverbs not installed")
    assert verbs_pyverbs.ibv_enum("ibv_access_flags", "IBV_ACCESS_RELAXED_ORDERING", 0) == 1 << 20
    assert (
        verbs_pyverbs.ibv_enum("ibv_wr_opcode", "IBV_WR_RDMA_WRITE_WITH_IMM", -1) == v.WR_RDMA_WRITE_WITH_IMM
    )
    assert verbs_pyverbs.ibv_enum("ibv_wc_status", "IBV_WC_REM_ACCESS_ERR", -1) == v.WcStatus.REM_ACCESS_ERR
    assert verbs_pyverbs.ibv_enum("no_such_enum", "NO_SUCH_MEMBER", 42) == 42


class _FakeErr(Exception):
    def __init__(self, code):
        super().__init__(f"errno {code}")
        self.error_code = code


def test_verbs_errors_map_to_the_tree():
    assert isinstance(
        verbs_pyverbs.verbs_error(_FakeErr(errno.EOPNOTSUPP), "ibv_reg_dmabuf_mr"), NotSupported
    )
    e = verbs_pyverbs.verbs_error(_FakeErr(errno.EPERM), "ibv_reg_mr")
    assert isinstance(e, HardwareError) and "RLIMIT_MEMLOCK" in str(e)
    e = verbs_pyverbs.verbs_error(_FakeErr(errno.EACCES), "ibv_open_device")
    assert isinstance(e, HardwareError) and "/dev/infiniband" in str(e)
    e = verbs_pyverbs.verbs_error(_FakeErr(errno.EFAULT), "ibv_reg_mr", gpu=True)
    assert "peermem" in str(e)
