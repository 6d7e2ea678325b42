"""Fleet through an upgrade and a mixed fleet: record and tool versions, unknown facts, the
intended SKU (inventory, nearest by facts), NIC ports, line-ending variants."""

import json

from typer.testing import CliRunner

from gdrdiag.cli import app
from gdrdiag.cli.report_files import load_report
from gdrdiag.fleet import analyse, parse_inventory
from gdrdiag.fleet_metrics import node_facts
from gdrdiag.fleet_sku import fold_distance
from gdrdiag.model.fleet import FleetOptions, NodeFinding, NodeRecordHead
from gdrdiag.node_record import git_revision, load_records, record_line, tool_version

from .conftest import REPORTS

runner = CliRunner()
SHA = "0123456789abcdef0123456789abcdef01234567"


def _parts(gpus="4x G", nics="4x N", driver="nvidia 1", platform="bare metal"):
    return {"gpus": gpus, "nics": nics, "driver": driver, "platform": platform}


def _node(host, parts=None, facts=None, version=2, tool="0.2.0+gabc", findings=(), metric=390.0):
    parts = parts or _parts()
    gpus = sum(int(p.split("x ")[0]) for p in parts["gpus"].split(", ")) if parts["gpus"] != "none" else 0
    nics = sum(int(p.split("x ")[0]) for p in parts["nics"].split(", ")) if parts["nics"] != "none" else 0
    base = {"gpus": str(gpus), "rdma devices": str(nics), "nic functions": str(nics), "kernel": "k1"}
    base.update({f"link gpu 0000:0{i}:00.0": "32 GT/s x16" for i in range(gpus)})
    if version >= 2:
        base.update({f"ordinal gpu 0000:0{i}:00.0": str(i) for i in range(gpus)})
        base.update({f"name nic 0000:1{i}:00.0": f"mlx5_{i}" for i in range(nics)})
        base.update({f"port rate mlx5_{i} port 1": "400" for i in range(nics)})
        base.update({f"port state mlx5_{i} port 1": "ACTIVE" for i in range(nics)})
    else:  # the previous build: no inventory counts, no version-2 facts
        for k in ("gpus", "rdma devices", "nic functions"):
            del base[k]
    base.update(facts or {})
    return NodeRecordHead(
        host=host,
        sku=" | ".join(parts.values()),
        exit_code=0,
        record_version=version,
        tool_version=tool,
        sku_parts=parts,
        facts={k: v for k, v in base.items() if v is not None},
        findings=findings,
        metrics={"rdma_host_gbps": metric},
    )


# ---- what wrote a record ------------------------------------------------------------------------


def test_tool_version_carries_the_git_revision_read_without_git(tmp_path):
    assert git_revision(tmp_path) is None  # no checkout: the release alone
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text(SHA + "\n")
    assert git_revision(tmp_path) == SHA[:12]
    (git / "refs" / "heads" / "main").unlink()  # packed
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{SHA} refs/heads/main\n")
    assert git_revision(tmp_path) == SHA[:12]
    (git / "HEAD").write_text(SHA[::-1] + "\n")  # detached
    assert git_revision(tmp_path) == SHA[::-1][:12]
    (git / "HEAD").write_text("ref: ../../etc/passwd\n")
    assert git_revision(tmp_path) is None
    (git / "HEAD").write_text("garbage")
    assert git_revision(tmp_path) is None
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {git}\n")  # a worktree / submodule pointer
    (git / "HEAD").write_text(SHA + "\n")
    assert git_revision(wt) == SHA[:12]
    assert tool_version().startswith("0.")


def test_an_older_record_is_unknown_where_it_lacks_facts_never_zero():
    heads = [_node(f"new{i}") for i in range(18)] + [
        _node(f"old{i}", version=1, tool="0.1.0") for i in range(4)
    ]
    res = analyse(heads)
    assert not res.flagged, [(n.host, n.why) for n in res.flagged]  # not "0 of 4 GPUs"
    assert res.mixed and [(v.record_version, v.tool_version, v.nodes) for v in res.versions] == [
        (2, "0.2.0+gabc", 18),
        (1, "0.1.0", 4),
    ]
    # an older record that did lose a GPU says so: its SKU key still counts them
    heads.append(_node("old-lost", _parts(gpus="3x G"), {"link gpu 0000:03:00.0": None}, 1, "0.1.0"))
    lost = next(n for n in analyse(heads).flagged if n.host == "old-lost")
    assert lost.cause.code == "FLEET-GPU-MISSING" and "3 of 4" in lost.cause.title
    assert "GPU 3 (0000:03:00.0)" in lost.cause.title  # address and ordinal
    assert not any(d.value is None and d.name.startswith("port ") for d in lost.differing)


def test_a_finding_only_another_build_makes_is_not_the_node_s_own():
    extra = (NodeFinding("OLD-RULE", "WARN", "worded by the old build"),)
    heads = [_node(f"new{i}") for i in range(20)]
    heads += [_node(f"old{i}", version=1, tool="0.1.0", findings=extra) for i in range(4)]
    assert not analyse(heads).flagged


# ---- the intended SKU ---------------------------------------------------------------------------


def test_the_nearest_sku_never_a_larger_one_it_cannot_be():
    eight = _parts(gpus="8x G", nics="8x N")
    heads = [_node(f"e{i}", eight) for i in range(40)] + [_node(f"f{i}") for i in range(20)]
    heads.append(_node("four-lost-gpu", _parts(gpus="3x G")))
    heads.append(_node("eight-lost-gpu", _parts(gpus="7x G", nics="8x N")))
    heads.append(_node("four-no-rdma", _parts(nics="none")))
    res = analyse(heads)
    sku = {n.host: n.sku for n in res.nodes}
    assert sku["four-lost-gpu"].startswith("4x G") and sku["four-no-rdma"].startswith("4x G")
    assert sku["eight-lost-gpu"].startswith("8x G")
    assert len(res.groups) == 2
    # a node with more GPUs than a SKU cannot be it; neither part whole: nothing anchors it
    assert fold_distance(_parts(gpus="5x G"), _parts()) is None
    assert fold_distance(_parts(gpus="3x G", nics="3x N"), _parts()) is None
    assert fold_distance(_parts(gpus="3x G"), _parts()) == (1, 1)


def test_inventory_names_the_sku_per_host_and_glob(tmp_path):
    rules = parse_inventory("# host or glob, SKU name\nrack1-* hgx-4\nrack1-07 hgx-8  # exact wins\n")
    heads = [_node(f"rack1-{i:02d}") for i in range(7)] + [_node("rack1-07", _parts(gpus="8x G"))]
    heads += [_node("stray")]  # not in the inventory: joins the SKU whose nodes share its key
    res = analyse(heads, FleetOptions(inventory=rules))
    by = {n.host: (n.sku, n.sku_from) for n in res.nodes}
    assert by["rack1-00"] == ("hgx-4", "inventory") and by["rack1-07"] == ("hgx-8", "inventory")
    assert by["stray"] == ("hgx-4", "facts")
    for bad in ("lonely-token\n", "", "a b\x01c\n"):
        try:
            parse_inventory(bad)
        except ValueError as exc:
            assert "\n" not in str(exc)
        else:
            raise AssertionError(bad)


def test_inventory_on_the_command_line(tmp_path):
    folder = tmp_path / "recs"
    folder.mkdir()
    rep = load_report(REPORTS / "vm_guest_kvm.json")
    for i in range(4):
        (folder / f"vm{i}.json").write_text(record_line(rep, f"vm{i}", 0) + "\n")
    inv = tmp_path / "inv.txt"
    inv.write_text("vm* guest-h100\n")
    res = runner.invoke(app, ["--json", "fleet", str(folder), "--inventory", str(inv)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["groups"][0]["sku"] == "guest-h100"
    inv.write_text("just-one-word\n")
    res = runner.invoke(app, ["fleet", str(folder), "--inventory", str(inv)])
    assert res.exit_code == 2 and "line 1" in res.output and "Traceback" not in res.output


# ---- NIC ports ----------------------------------------------------------------------------------


def test_ports_in_the_record_and_a_half_rate_or_down_port_is_a_finding():
    facts = node_facts(load_report(REPORTS / "baremetal_hgx.json"))
    assert facts["port rate mlx5_1 port 1"] == "400" and facts["port state mlx5_1 port 1"] == "ACTIVE"
    assert facts["name nic 0000:1b:00.0"] == "mlx5_1" and facts["ordinal gpu 0000:18:00.0"] == "0"
    assert facts["link cap nic 0000:19:00.0"] == "32 GT/s x16"
    heads = [_node(f"n{i}") for i in range(20)]
    heads.append(_node("half", facts={"port rate mlx5_1 port 1": "200"}))
    heads.append(_node("down", facts={"port state mlx5_2 port 1": "DOWN"}))
    got = {n.host: n.cause for n in analyse(heads).flagged}
    assert set(got) == {"half", "down"}
    assert got["half"].code == "FLEET-PORT-RATE" and got["half"].severity == "FAIL"
    assert "mlx5_1 (0000:11:00.0) port 1" in got["half"].title
    assert got["down"].code == "FLEET-PORT-STATE" and "mlx5_2 (0000:12:00.0)" in got["down"].title


# ---- line endings -------------------------------------------------------------------------------


def test_crlf_cr_and_bom_records_are_read(tmp_path):
    rep = load_report(REPORTS / "vm_guest_kvm.json")
    lines = [record_line(rep, f"vm{i}", 0) for i in range(3)]
    (tmp_path / "crlf.jsonl").write_bytes("".join(x + "\r\n" for x in lines).encode())
    (tmp_path / "cr.jsonl").write_bytes("\r".join(lines).encode())
    (tmp_path / "one.json").write_bytes(b"\xef\xbb\xbf" + lines[0].replace("vm0", "vm9").encode() + b"\r\n")
    for name, hosts in (("crlf.jsonl", 3), ("cr.jsonl", 3), ("one.json", 1)):
        got = load_records(tmp_path / name)
        assert len(got.records) == hosts and not got.skipped, (name, got.skipped)
    torn = tmp_path / "torn.json"
    torn.write_bytes(lines[0][:-40].encode() + b"\r\n")
    assert load_records(torn).skipped
