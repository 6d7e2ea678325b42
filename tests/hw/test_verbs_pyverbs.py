"""The pyverbs provider on a real RDMA device (skipped with the reason where there is none).

The provider contract itself (keys, access errors, state machine, flushes ...) runs against
pyverbs from tests/unit/test_verbs_contract.py; these add device facts and the mr-bench
pipeline end to end on host memory (no GPU needed).
"""

from __future__ import annotations

import json

import pytest

from gdrdiag.bench import mr
from gdrdiag.hw import verbs as v
from gdrdiag.hw import verbs_facts, verbs_providers
from gdrdiag.hw.memory import MemoryKind
from gdrdiag.model.results import Status
from gdrdiag.model.vocabulary import RelaxedOrdering

pytestmark = pytest.mark.rdma


def test_device_list_and_facts_are_plain_json():
    names = verbs_providers.list_device_names()
    assert names and all(isinstance(n, str) for n in names)
    facts = verbs_facts.device_facts(names[0])
    json.dumps(facts)
    assert facts["name"] == names[0] and facts["phys_port_cnt"] >= 1
    assert len(facts["ports"]) == facts["phys_port_cnt"]
    assert {"state", "active_mtu", "link_layer", "gids"} <= set(facts["ports"][0])


def test_dmabuf_probe_answers_or_says_why_not():
    from gdrdiag.errors import NotSupported

    name = verbs_providers.list_device_names()[0]
    try:
        assert verbs_facts.dmabuf_probe(name).startswith("supported")
    except NotSupported as exc:
        assert "dma-buf" in exc.reason or "DmaBufMR" in exc.reason


def test_unknown_device_name_is_a_usage_error():
    from gdrdiag.errors import UserInputError

    with pytest.raises(UserInputError, match="not found"):
        verbs_providers.open_device("pyverbs", "no_such_dev0")


def test_loopback_ro_ab_on_host_memory_is_verified():
    cfg = mr.MrBenchConfig(
        provider="pyverbs",
        kinds=(MemoryKind.PAGEABLE,),
        sizes=(65536,),
        qps=2,
        iterations=2000,
        repeats=2,
        ro=RelaxedOrdering.AB,
    )
    res = mr.run(cfg)
    assert [r.params.relaxed_ordering for r in res] == [False, True]
    for r in res:
        assert r.status is Status.OK and r.verified and r.provider == "pyverbs" and r.value > 0, r.reason


def test_write_without_remote_write_is_a_remote_access_error_on_hardware():
    (r,) = mr.run(
        mr.MrBenchConfig(
            provider="pyverbs",
            kinds=(MemoryKind.PAGEABLE,),
            access=v.ACCESS_LOCAL_WRITE,
            iterations=100,
            repeats=1,
        )
    )
    assert r.status is Status.ERROR and "IBV_WC_REM_ACCESS_ERR" in r.reason


def test_latency_blocks_and_registration_cost():
    cfg = mr.MrBenchConfig(
        provider="pyverbs",
        kinds=(MemoryKind.PAGEABLE,),
        sizes=(4096,),
        iterations=200,
        repeats=1,
        blocks=1000,
        reg_sizes=(4096, 1 << 20),
        reg_iterations=3,
    )
    for mode in ("latency", "blocks", "reg"):
        res = mr.run(cfg, mode=mode)
        assert res and all(r.status is Status.OK for r in res), [(r.key, r.reason) for r in res]


def test_dmabuf_registration_of_device_memory_or_a_reason():
    from tests.conftest import gpu_absent_reason

    if gpu_absent_reason():
        pytest.skip(gpu_absent_reason())
    cfg = mr.MrBenchConfig(
        provider="pyverbs",
        kinds=(MemoryKind.DEVICE,),
        reg_paths=("mr", "dmabuf"),
        sizes=(1 << 20,),
        qps=2,
        iterations=500,
        repeats=1,
    )
    for r in mr.run(cfg):
        assert r.status in (Status.OK, Status.WAIVED), r.reason
        if r.status is Status.OK:
            assert r.verified and r.params.landing == "gpu"
