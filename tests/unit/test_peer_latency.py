"""peer-bench latency cases without a GPU: registry, result shape, table, path model, WAIVED."""

from __future__ import annotations

import dataclasses
import json

from typer.testing import CliRunner

from gdrdiag.bench.peer import ALL_KEYS, PeerBenchOptions, planned_case_count
from gdrdiag.bench.peer_latency import LATENCY_KEYS, latency_result
from gdrdiag.bench.registry import peer_registry
from gdrdiag.bench.timing import Timed
from gdrdiag.cli import app
from gdrdiag.model.params import PeerParams
from gdrdiag.model.report import Report
from gdrdiag.model.results import Status
from gdrdiag.pathmodel.rows import path_of
from gdrdiag.render.peer_table import render_peer_results


def _row(on: bool, seconds=(4e-6, 5e-6, 6e-6), mismatch=None):
    p = PeerParams(
        src_gpu=0, dst_gpu=1, mover="ce", op="latency", peer_access=on, bidirectional=False, size_bytes=4
    )
    p = dataclasses.replace(p, path="NV18")
    return latency_result(
        f"peer_lat_ce_{'on' if on else 'off'}", p, Timed(seconds, "events"), mismatch, "latency", 10
    )


def test_latency_keys_are_registered_and_selectable():
    keys = [c.key for c in peer_registry().cases]
    assert set(LATENCY_KEYS) <= set(keys) and set(LATENCY_KEYS) <= set(ALL_KEYS)
    opts = PeerBenchOptions(keys=LATENCY_KEYS, sizes=(4096, 65536))
    assert planned_case_count(opts, 2) == 2 * len(LATENCY_KEYS)  # one row per key and ordered pair
    res = CliRunner().invoke(app, ["peer-bench", "--list"], env={"COLUMNS": "140"})
    assert res.exit_code == 0 and "peer_lat_ce_off" in res.output and "peer_lat_ce_on" in res.output


def test_result_is_the_median_in_microseconds_and_verified():
    r = _row(True)
    assert r.unit == "us" and r.status is Status.OK and r.verified
    assert abs(r.value - 5.0) < 1e-9 and r.samples == (4.0, 5.0, 6.0)
    bad = _row(False, mismatch=2)
    assert bad.status is Status.ERROR and "offset 2" in bad.reason


def test_the_path_model_does_not_judge_a_latency():
    path, why = path_of(_row(True))
    assert path is None and "latency" in why


def test_table_shows_latencies_apart_from_bandwidths():
    text = render_peer_results([_row(False, (20e-6,) * 3), _row(True)], width=None)
    assert "Peer latency" in text and "GPU<->GPU transfers" not in text
    assert "0->1" in text and "20.0" in text


def test_round_trips_in_a_report():
    rep = Report(results=(_row(True),))
    back = Report.from_json(rep.to_json())
    assert back.results[0].unit == "us" and back.results[0].params.op == "latency"


def test_one_gpu_or_none_waives_the_latency_cases_with_the_reason():
    res = CliRunner().invoke(app, ["--json", "peer-bench", "peer_lat_*", "--quiet"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["results"]
    assert {r["key"] for r in rows} == set(LATENCY_KEYS)
    assert all(r["status"] == "WAIVED" and r["reason"] for r in rows)
