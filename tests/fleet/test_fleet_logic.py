"""fleet.py and fleet_metrics.py: robust statistics, grouping, causes, baselines, pairs, hostile records."""

import dataclasses
import json
import math

import pytest

from gdrdiag import fleet, node_record
from gdrdiag.cli.report_files import load_report
from gdrdiag.fleet import FleetOptions, analyse, parse_baseline, robust_stats, robust_z
from gdrdiag.fleet_metrics import node_facts, node_metrics, node_pairs, node_sku
from gdrdiag.model.fleet import RECORD_VERSION
from gdrdiag.model.results import BenchResult, SampleStats, Status
from gdrdiag.model.serde import SchemaError
from gdrdiag.node_record import (
    NodeFinding,
    NodePair,
    NodeRecordHead,
    load_records,
    parse_head,
    record_line,
)

from .conftest import REPORTS


def head(host, sku="A", exit_code=0, **kw):
    return NodeRecordHead(host=host, sku=sku, exit_code=exit_code, **kw)


# ---- statistics -------------------------------------------------------------------------------


def test_robust_z_matches_the_formula():
    st = robust_stats("m", [10.0, 11.0, 12.0, 13.0, 100.0], rel_floor=0.0)
    assert st.median == 12.0 and st.mad == 1.0
    assert robust_z(10.0, st) == pytest.approx(0.6745 * -2.0)
    assert robust_z(100.0, st) > 50  # the outlier does not move median or MAD


def test_mad_zero_uses_the_spread_floor():
    st = robust_stats("m", [100.0] * 9 + [90.0], rel_floor=0.01)
    assert st.mad == 0.0 and st.scale == pytest.approx(1.0)
    assert robust_z(100.0, st) == 0.0
    assert robust_z(90.0, st) == pytest.approx(-6.745)
    flat = robust_stats("m", [0.0, 0.0, 0.0], rel_floor=0.01)
    assert robust_z(0.0, flat) == 0.0 and math.isfinite(robust_z(-1.0, flat))


def test_levels_thresholds_and_ranking():
    heads = [head(f"n{i}", metrics={"copy_h2d_pinned_gbs": 50.0 + (i % 3) * 0.1}) for i in range(20)]
    heads.append(head("slowish", metrics={"copy_h2d_pinned_gbs": 48.2}))  # z -2.56: investigate
    heads.append(head("slow", metrics={"copy_h2d_pinned_gbs": 25.0}))
    old = FleetOptions(investigate_z=-2.0, drain_z=-3.0, min_drop=0.0)
    res = analyse(heads, old)
    assert [n.host for n in res.flagged] == ["slow", "slowish"]
    assert res.flagged[0].level == "drain" and res.flagged[1].level == "investigate"
    # the defaults: z <= -3.5 and a drop of at least 5 % of the median (48.2 is 3.6 % below)
    assert [n.host for n in analyse(heads).flagged] == ["slow"]
    strict = analyse(heads, FleetOptions(investigate_z=-1.0, drain_z=-1.5, min_drop=0.0))
    assert {n.host for n in strict.flagged if n.level == "drain"} == {"slow", "slowish"}


def test_missing_metric_the_group_has_is_drain_with_reason():
    heads = [head(f"n{i}", metrics={"rdma_host_gbps": 390.0}) for i in range(5)]
    heads.append(head("broken", missing={"rdma_host_gbps": "ERROR: no port"}))
    res = analyse(heads)
    (bad,) = res.flagged
    assert bad.host == "broken" and bad.level == "drain" and "no port" in bad.reasons[0]


def test_small_group_gets_no_z_but_baseline_applies():
    opts = FleetOptions(baseline=parse_baseline('[[sku]]\nmatch = "A*"\ncopy_h2d_pinned_gbs = 50\n'))
    heads = [
        head("a", sku="A1", metrics={"copy_h2d_pinned_gbs": 55.0}),
        head("b", sku="A1", metrics={"copy_h2d_pinned_gbs": 40.0}),
    ]
    res = analyse(heads, opts)
    assert res.groups[0].note.startswith("fewer than 3")
    assert [n.host for n in res.flagged] == ["b"]
    score = res.flagged[0].scores[0]
    assert score.z is None and score.problem == "below baseline" and score.minimum == 50.0


@pytest.mark.parametrize(
    "text,err",
    [
        ("not toml [", "not valid TOML"),
        ("x = 1", "[[sku]]"),
        ('[[sku]]\nmatch = "*"\nnope = 1', "unknown key"),
        ('[[sku]]\nmatch = "*"\nrdma_host_gbps = "fast"', "must be a number"),
        ("[[sku]]\nrdma_host_gbps = 1", "match"),
    ],
)
def test_bad_baselines_are_refused(text, err):
    with pytest.raises(ValueError, match=err.replace("[", r"\[")):
        parse_baseline(text)


def test_cause_prefers_machine_findings_and_ignores_the_majority():
    common = NodeFinding("GDR-HOST-DMABUF", "INFO", "everyone has this", origin="machine")
    heads = [
        head(
            f"n{i}", metrics={"rdma_host_gbps": 390.0}, findings=(common,), facts={"MaxReadReq nic x": "512"}
        )
        for i in range(6)
    ]
    symptom = NodeFinding("GDR-DEVICE-SLOW", "FAIL", "slow into GPU memory", origin="results")
    cause = NodeFinding("PCIE-MRRS-SMALL", "WARN", "NIC MaxReadReq 128", subject="x", origin="machine")
    heads.append(
        head(
            "bad",
            metrics={"rdma_host_gbps": 200.0},
            findings=(common, symptom, cause),
            facts={"MaxReadReq nic x": "128"},
        )
    )
    (bad,) = analyse(heads).flagged
    assert bad.cause.code == "PCIE-MRRS-SMALL"
    assert [(d.name, d.value, d.majority) for d in bad.differing] == [("MaxReadReq nic x", "128", "512")]


def test_config_drift_without_a_slow_number_is_investigate():
    warn = NodeFinding("ACS-REDIRECT", "FAIL", "ACS redirect", origin="machine")
    heads = [head(f"n{i}", metrics={"rdma_host_gbps": 390.0}) for i in range(6)]
    heads.append(head("drifted", metrics={"rdma_host_gbps": 390.0}, findings=(warn,)))
    (n,) = analyse(heads).flagged
    assert n.host == "drifted" and n.level == "investigate" and n.cause.code == "ACS-REDIRECT"


def test_pairwise_names_the_node_common_to_failing_pairs():
    heads = []
    hosts = [f"h{i}" for i in range(6)]
    for a in hosts:
        pairs = tuple(
            NodePair(peer=b, metric="pair_rdma_device_gbps", value=120.0 if "h3" in (a, b) else 390.0)
            for b in hosts
            if b != a
        )
        heads.append(head(a, pairs=pairs))
    res = analyse(heads)
    assert [s.host for s in res.pair_suspects] == ["h3"]
    assert res.pair_suspects[0].failing_pairs == res.pair_suspects[0].pairs == 10


# ---- the synthetic fleet end to end ------------------------------------------------------------


def test_synthetic_fleet_every_fault_found_with_its_cause_first(small_fleet, evaluate_mod):
    folder, manifest = small_fleet
    res = fleet.load_and_analyse(folder)
    assert not res.skipped and len(res.nodes) == 400 and len(res.groups) == 5
    data = json.loads(json.dumps(fleet_json(res)))
    score = evaluate_mod.evaluate(data, json.loads((folder / ".manifest.json").read_text()))
    assert score["injected"] == 20
    assert score["flagged_injected"] == 20 and score["cause_first"] == 20, score["misses"]
    assert score["false_positives"] == 0
    assert {manifest[n.host] for n in res.flagged} == {f for f in manifest.values() if f}


def fleet_json(res):
    from gdrdiag.model.serde import to_jsonable

    return to_jsonable(res)


# ---- adapter ----------------------------------------------------------------------------------


def test_adapter_reads_fixture_reports():
    bare = load_report(REPORTS / "baremetal_hgx.json")
    metrics, missing = node_metrics(bare)
    assert metrics["rdma_device_mr_gbps"] == 393.0 and metrics["copy_h2d_pinned_gbs"] == 55.3 and not missing
    facts = node_facts(bare)
    assert facts["RlxdOrd nic 0000:19:00.0"] == "+" and facts["ACSCtl bridge 0000:17:01.0"] == "none"
    assert facts["link gpu 0000:18:00.0"] == "32 GT/s x16" and facts["nvidia_peermem"] == "loaded"
    assert (
        node_sku(bare).key == "4x NVIDIA H100 80GB HBM3 | 4x ConnectX-7 | nvidia 550.90.07 open | bare metal"
    )
    h200 = load_report(REPORTS / "gpu_machine_h200.json")
    assert node_sku(h200).platform == "VM (Firecracker)"
    assert "rdma_device_mr_gbps" not in node_metrics(h200)[0]


def _ok(key, value, provider, peer=None, **params):
    from gdrdiag.model.params import MrParams, RunSettings

    s = SampleStats.of([value])
    return BenchResult(
        key=key,
        status=Status.OK,
        params=MrParams(**params),
        samples=(value,),
        stats=s,
        provider=provider,
        settings=RunSettings(peer=peer),
    )


def test_adapter_skips_soft_results_and_reads_pairs():
    bare = load_report(REPORTS / "baremetal_hgx.json")
    rep = dataclasses.replace(
        bare,
        results=(
            _ok("rdma_write_pinned_mr", 999.0, "soft", memory="pinned", reg_path="mr"),
            _ok(
                "rdma_write_device_mr",
                300.0,
                "pyverbs",
                memory="device",
                reg_path="mr",
                topology="two_machine",
                role="client",
                peer="node-7:18515",
            ),
        ),
    )
    metrics, _ = node_metrics(rep)
    assert "rdma_host_gbps" not in metrics
    (pair,) = node_pairs(rep)
    assert (pair.peer, pair.metric, pair.value) == ("node-7", "pair_rdma_device_gbps", 300.0)


# ---- records: format, torn and hostile records --------------------------------------------------


def test_record_round_trip_and_report_inside():
    rep = load_report(REPORTS / "vm_guest_kvm.json")
    line = record_line(rep, "gpu-vm-0", 1)
    assert "\n" not in line
    h = parse_head(line)
    assert h.host == "gpu-vm-0" and h.exit_code == 1 and h.record_version == RECORD_VERSION == 2
    assert {f.code for f in h.findings} >= {"RO-KERNEL-VF", "GDR-DEVICE-SLOW"}
    assert json.loads(line)["report"]["schema_version"] == rep.schema_version


def test_record_without_the_fast_layout_is_read_in_full():
    rep = load_report(REPORTS / "vm_guest_kvm.json")
    data = json.loads(record_line(rep, "n1", 0))
    reordered = {"report": data.pop("report"), **data}
    assert parse_head(json.dumps(reordered)).host == "n1"


HOSTILE = {
    "truncated": lambda good: good[: len(good) // 2],
    "torn_tail": lambda good: good[:-50] + "}",
    "not_json": lambda good: "hello",
    "wrong_kind": lambda good: good.replace('"record":"gdrdiag-node-record"', '"record":"other"', 1),
    "future_version": lambda good: good.replace('"record_version":2', '"record_version":9', 1),
    "metric_type": lambda good: good.replace('"metrics":{', '"metrics":{"x":"fast",', 1),
    "nan": lambda good: good.replace('"exit_code":0', '"exit_code":NaN', 1),
    "deep": lambda good: "{" + '"a":[' * 100000 + "]" * 100000 + "}",
    "array": lambda good: "[1,2]",
    "empty_host": lambda good: good.replace('"host":"good"', '"host":""', 1),
}


def test_hostile_records_are_skipped_with_reasons(tmp_path, monkeypatch):
    rep = load_report(REPORTS / "vm_guest_kvm.json")
    good = record_line(rep, "good", 0)
    (tmp_path / "good.json").write_text(good + "\n")
    for name, make in HOSTILE.items():
        (tmp_path / f"{name}.json").write_text(make(good))
    (tmp_path / "binary.json").write_bytes(bytes(range(256)) * 10)
    (tmp_path / ".good.json.abc.tmp").write_text("half a reco")  # a writer still at work: ignored
    (tmp_path / "notes.txt").write_text("not a record")  # other files in the folder: left alone
    (tmp_path / "huge.json").write_text(good + " " * 100)
    monkeypatch.setattr(node_record, "MAX_RECORD_BYTES", len(good) + 10)
    loaded = load_records(tmp_path)
    assert [r.host for r in loaded.records] == ["good"]
    reasons = {s.source: s.reason for s in loaded.skipped}
    assert set(reasons) == {f"{n}.json" for n in HOSTILE} | {"binary.json", "huge.json"}
    assert "larger than" in reasons["huge.json"]
    assert "torn record" in reasons["torn_tail.json"] or "truncated" in reasons["torn_tail.json"]
    assert "record_version" in reasons["future_version.json"]
    assert (tmp_path / "notes.txt").exists()


def test_jsonl_bad_lines_and_duplicates(tmp_path, monkeypatch):
    rep = load_report(REPORTS / "vm_guest_kvm.json")
    old = record_line(dataclasses.replace(rep, created_utc="2026-01-01T00:00:00Z"), "a", 0)
    new = record_line(dataclasses.replace(rep, created_utc="2026-02-01T00:00:00Z"), "a", 1)
    other = record_line(rep, "b", 0)
    path = tmp_path / "fleet.jsonl"
    path.write_text(
        "\n".join([old, "garbage", other[:100], new, "", "x" * (len(other) + 9000), other]) + "\n"
    )
    monkeypatch.setattr(node_record, "MAX_RECORD_BYTES", 4096 + len(other))
    loaded = load_records(path)
    assert sorted((r.host, r.exit_code) for r in loaded.records) == [("a", 1), ("b", 0)]
    reasons = {s.source: s.reason for s in loaded.skipped}
    assert sorted(reasons) == ["a", "fleet.jsonl:2", "fleet.jsonl:3", "fleet.jsonl:6"]
    assert "larger than" in reasons["fleet.jsonl:6"] and "duplicate" in reasons["a"]


def test_head_validation_is_strict():
    with pytest.raises(SchemaError):
        parse_head(
            '{"record":"gdrdiag-node-record","record_version":1,"host":"a","sku":"s","exit_code":true,'
            '"report_chars":2,"report":{}}'
        )


def test_fifo_and_folders_named_json_are_not_opened(tmp_path):
    import os

    os.mkfifo(tmp_path / "pipe.jsonl")
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "dir.json").mkdir()
    loaded = load_records(tmp_path)  # would block forever if a FIFO were opened
    assert sorted((s.source, s.reason) for s in loaded.skipped) == [
        ("dir.json", "not a regular file"),
        ("pipe.json", "not a regular file"),
        ("pipe.jsonl", "not a regular file"),
    ]


def test_record_with_a_hostile_host_name_is_skipped(tmp_path):
    rep = load_report(REPORTS / "vm_guest_kvm.json")
    good = record_line(rep, "good", 0)
    (tmp_path / "x.json").write_text(good.replace('"host":"good"', '"host":"a\\nb<script>"', 1))
    (tmp_path / "y.json").write_text(good.replace('"host":"good"', '"host":"../../etc"', 1))
    loaded = load_records(tmp_path)
    assert not loaded.records and all("plain host name" in s.reason for s in loaded.skipped)


# ---- the intended SKU, drift findings, cause ranking --------------------------------------


def _sku_parts(gpus="4x G", nics="4x N", driver="nvidia 1", platform="bare metal"):
    return {"gpus": gpus, "nics": nics, "driver": driver, "platform": platform}


def _node(host, parts=None, facts=None, findings=(), metrics=None):
    parts = parts or _sku_parts()
    base = {"gpus": "4", "rdma devices": "4", "nic functions": "4", "nvidia driver": "1", "kernel": "k1"}
    base.update({f"link gpu {i}": "32 GT/s x16" for i in range(4)})
    base.update({f"firmware mlx5_{i}": "28.1" for i in range(4)})
    base.update({f"mtu mlx5_{i} port 1": "4096" for i in range(4)})
    base.update(facts or {})
    base = {k: v for k, v in base.items() if v is not None}
    return head(
        host,
        sku=" | ".join(parts.values()),
        sku_parts=parts,
        facts=base,
        findings=findings,
        metrics=metrics or {"rdma_host_gbps": 390.0},
    )


def test_a_node_that_lost_a_device_is_judged_against_the_sku_it_should_be():
    heads = [_node(f"n{i}") for i in range(20)]
    heads.append(_node("lost-gpu", _sku_parts(gpus="3x G"), {"gpus": "3", "link gpu 3": None}))
    heads.append(_node("lost-nic", _sku_parts(nics="3x N"), {"rdma devices": "3", "nic functions": "3"}))
    heads.append(_node("no-driver", _sku_parts(nics="none"), {"rdma devices": "0"}))
    heads.append(_node("drv", _sku_parts(driver="nvidia 2"), {"nvidia driver": "2"}))
    heads.append(_node("fw", facts={"firmware mlx5_1": "28.0"}))
    heads.append(_node("mtu", facts={"mtu mlx5_0 port 1": "1024"}))
    heads.append(_node("gen", facts={"link gpu 2": "16 GT/s x16"}))
    heads.append(_node("x8", facts={"link gpu 1": "32 GT/s x8"}))
    heads.append(_node("kernel", facts={"kernel": "k2"}))
    bare = _sku_parts(gpus="none", nics="none")
    heads.append(_node("bare", bare, {"gpus": "0", "rdma devices": "0", "nic functions": "0"}))
    res = analyse(heads)
    assert len(res.groups) == 1 and res.groups[0].folded == 5
    got = {n.host: (n.level, n.cause.code if n.cause else None) for n in res.flagged}
    assert got == {
        "lost-gpu": ("drain", "FLEET-GPU-MISSING"),
        "lost-nic": ("drain", "FLEET-NIC-MISSING"),
        "no-driver": ("drain", "FLEET-RDMA-DRIVER-MISSING"),
        "drv": ("investigate", "FLEET-DRIVER-DRIFT"),
        "fw": ("investigate", "FLEET-FIRMWARE-DRIFT"),
        "mtu": ("investigate", "FLEET-MTU-DRIFT"),
        "gen": ("investigate", "FLEET-LINK-BELOW-SKU"),
        "x8": ("drain", "FLEET-LINK-BELOW-SKU"),
        "kernel": ("investigate", "FLEET-KERNEL-DRIFT"),
        "bare": ("drain", "FLEET-GPU-MISSING"),  # lost every GPU and NIC: still judged, not a SKU of one
    }
    lost = next(n for n in res.flagged if n.host == "lost-gpu")
    assert lost.own_sku.startswith("3x G") and "not seen: GPU 3" in lost.cause.title


def test_declared_facts_replace_the_majority():
    heads = [_node(f"n{i}") for i in range(10)]  # every node on firmware 28.1
    rules = parse_baseline('[[sku]]\nmatch = "*"\nnic_firmware = "28.2"\ngpus = 4\n')
    res = analyse(heads, FleetOptions(baseline=rules))
    assert len(res.flagged) == 10
    assert {n.cause.code for n in res.flagged} == {"FLEET-FIRMWARE-DRIFT"}
    assert "the SKU's is 28.2" in res.flagged[0].cause.title


def test_cause_ranking_keeps_severity_and_puts_a_measured_loss_first():
    idle = NodeFinding("PCIE-LINK-SPEED-IDLE", "INFO", "link 16 GT/s while idle", origin="machine")
    measured = NodeFinding(
        "CAUSE-LINK-DEGRADED",
        "FAIL",
        "link trained at Gen4",
        origin="results",
        explains=0.95,
        basis="measured",
    )
    symptom = NodeFinding("PERF-CE-H2D-LOW", "FAIL", "H2D at 48 %", origin="results")
    guess = NodeFinding(
        "CAUSE-NUMA-PLACEMENT", "WARN", "far NUMA?", origin="results", explains=0.3, basis="inferred"
    )
    register = NodeFinding("PCIE-MRRS-SMALL", "WARN", "MaxReadReq 128", origin="machine")
    assert fleet.leading_cause([idle, symptom, measured]) == measured  # not the INFO above the FAIL
    assert fleet.leading_cause([symptom, guess, register]) == register  # register evidence over a guess
    assert fleet.leading_cause([symptom]) == symptom
    # the same code and subject at another severity than the group's is the node's own
    common = NodeFinding("GDR-DEVICE-SLOW", "WARN", "slow", subject="device/mr", origin="results")
    worse = NodeFinding("GDR-DEVICE-SLOW", "FAIL", "slow", subject="device/mr", origin="results")
    heads = [head(f"n{i}", metrics={"rdma_device_mr_gbps": 85.0}, findings=(common,)) for i in range(10)]
    heads.append(head("vm", metrics={"rdma_device_mr_gbps": 30.0}, findings=(worse,)))
    (vm,) = analyse(heads).flagged
    assert vm.cause == worse and vm.why.startswith("GDR-DEVICE-SLOW")


def test_a_flag_without_a_cause_says_so_with_metric_and_z():
    heads = [head(f"n{i}", metrics={"rdma_host_gbps": 390.0 + i % 3}) for i in range(20)]
    heads.append(head("slow", metrics={"rdma_host_gbps": 200.0}))
    (slow,) = analyse(heads).flagged
    assert slow.cause is None and slow.why.startswith(
        "no cause found; rdma_host_gbps 0.51 of group median, z "
    )


def test_an_interrupted_reports_note_reaches_the_record_and_the_reasons():
    rep = load_report(REPORTS / "baremetal_hgx.json")
    rep = dataclasses.replace(
        rep,
        results=tuple(r for r in rep.results if not r.key.startswith("gather_")),
        notes=("interrupted (SIGINT) after 3 of 5 benches",),
    )
    partial = parse_head(record_line(rep, "partial", 1))
    assert partial.note == "interrupted (SIGINT) after 3 of 5 benches"
    full = parse_head(record_line(load_report(REPORTS / "baremetal_hgx.json"), "x", 0))
    heads = [dataclasses.replace(full, host=f"n{i}") for i in range(5)] + [partial]
    (n,) = analyse(heads).flagged
    assert n.host == "partial" and n.level == "investigate"
    assert "gather_best_gbs missing (not measured: incomplete record)" in n.reasons
    assert "record note: interrupted (SIGINT) after 3 of 5 benches" in n.reasons
