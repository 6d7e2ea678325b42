"""The accuracy bar on a generated fleet: several SKUs, 3 % noise, every fault kind, bad records.

The fleet is made by scripts/fleet/make_synthetic.py from the fixture Reports through gdrdiag's own
record writer (build_head) and read back through the real reader (load_records on a JSONL file):
five SKUs sharing GPU and NIC models (8 GPUs + 8 NICs, 4 + 4, a KVM guest with VFs, A100, H200),
12 % of the records written as the previous build wrote them (record version 1, no inventory
or NIC-port facts), a port at half rate among the faults.
"""

import json

import pytest

from gdrdiag.fleet import analyse
from gdrdiag.model.serde import to_jsonable
from gdrdiag.node_record import load_records


@pytest.mark.parametrize("seed", [11, 12])
def test_precision_recall_cause_and_healthy_flag_rate_at_3_percent_noise(
    synthetic, evaluate_mod, tmp_path, seed
):
    lines, manifest = synthetic.generate(
        1200, 0.05, seed=seed, noise=0.03, record_fault_rate=0.01, old_rate=0.12
    )
    path = tmp_path / "fleet.jsonl"
    path.write_text("".join(line + "\n" for _, line in lines))
    loaded = load_records(path)
    res = analyse(loaded.records, skipped=loaded.skipped)
    # corrupt records are skipped by line number; map them back to hosts for the score
    by_line = {f"fleet.jsonl:{i}": host for i, (host, _) in enumerate(lines, 1)}
    data = json.loads(json.dumps(to_jsonable(res)))
    for s in data["skipped"]:
        s["source"] = by_line.get(s["source"], s["source"]) + ".json"
    score = evaluate_mod.evaluate(data, {"expected_cause": synthetic.EXPECTED_CAUSE, "nodes": manifest})
    kinds = score["per_kind"]
    assert set(kinds) == set(synthetic.FAULTS) | set(synthetic.RECORD_FAULTS)  # every kind injected
    assert score["injected"] >= 55
    assert score["precision"] >= 0.95, score["false_positive_hosts"]
    assert score["recall"] >= 0.95, score["misses"]
    assert score["cause_leading"] >= 0.9, score["misses"]
    assert score["healthy_flag_rate"] <= 0.005, score["false_positive_hosts"]
    assert kinds["corrupt"]["cause"] == kinds["corrupt"]["n"]  # every corrupt record skipped
    assert kinds["partial"]["cause"] == kinds["partial"]["n"]  # partial: flagged, "not measured"
    assert len(res.groups) == 5  # a node that lost a device or drifted is not a SKU of its own
    # a mixed fleet says so: how many nodes each record version / build wrote
    assert res.mixed and {v.record_version for v in res.versions} == {1, 2}
    old = sum(v.nodes for v in res.versions if v.record_version == 1)
    assert old >= 0.10 * len(res.nodes)
    # the nearest SKU, never a larger one: a 4-GPU node that lost a GPU is judged as a 4-GPU node
    for v in res.nodes:
        if manifest.get(v.host) == "lost_gpu":
            assert v.sku.startswith(v.host.split("-")[0] == "hgx8" and "8x" or "4x"), (v.host, v.sku)
