"""gather-bench --sweep working-set: the cases it runs and the rule that reads them (no GPU needed)."""

import dataclasses

from gdrdiag.bench import gather_layout as g
from gdrdiag.diagnose import diagnose
from tests.unit import diagnosis_scenarios as sc

MiB, GiB = 1 << 20, 1 << 30


def test_sweep_is_listed_and_parsed():
    assert "working-set" in g.SWEEPS
    assert g.parse_sweeps("working-set") == ("ladder", "working-set")


def test_tables_double_from_16_mib_to_a_quarter_of_host_memory():
    cases = g.sweep_cases("working-set", g.Layout(), ["warp"], 132, host_bytes=16 * GiB)
    sizes = [c.layout.slots * c.layout.stride for c in cases]
    assert sizes[0] <= 16 * MiB and sizes[0] > 16 * MiB - c_stride()
    assert all(b > a for a, b in zip(sizes, sizes[1:], strict=False))
    assert max(sizes) <= 4 * GiB and max(sizes) > 2 * GiB
    assert len(cases) == 9  # 16 MiB .. 4 GiB
    # Only the table grows: same records, random pattern, same record size.
    assert {(c.layout.records, c.layout.pattern, c.layout.record_bytes) for c in cases} == {
        (g.Layout().records, "random", g.Layout().record_bytes)
    }
    assert all(c.sweep == "working-set" for c in cases)
    for c in cases:
        c.layout.validate()


def c_stride() -> int:
    return g.Layout().stride


def test_limit_is_capped_and_quick_takes_every_fourth():
    big = g.working_set_sizes(656, 2 << 40)
    assert big[-1] <= g.WORKING_SET_MAX_BYTES and big[0] == g.WORKING_SET_MIN_BYTES
    assert g.working_set_sizes(656, 16 * GiB, quick=True) == [16 * MiB, 256 * MiB, 4 * GiB]
    assert g.working_set_sizes(656, 32 * MiB) == []  # a quarter of 32 MiB holds no 16 MiB table
    assert g.working_set_sizes(656, None)[-1] == 4 * GiB  # unknown host memory: 4 GiB


def test_rule_names_the_decline_and_stays_quiet_when_flat():
    lead = diagnose(sc.sm_read_decline()).findings[0]
    assert lead.code == "CAUSE-WORKING-SET" and lead.next_step.startswith(
        "gdrdiag gather-bench --sweep working-set"
    )
    flat = sc.sm_read_decline()
    flat = dataclasses.replace(
        flat,
        results=tuple(
            dataclasses.replace(r, samples=(25.0,), stats=dataclasses.replace(r.stats, median=25.0))
            for r in flat.results
        ),
    )
    assert "CAUSE-WORKING-SET" not in {f.code for f in diagnose(flat).findings}


def test_imported_nvbandwidth_sm_reads_at_growing_buffers_name_the_decline():
    """The public nvbandwidth pattern: host_to_device_memcpy_sm falling as -b grows."""
    import json

    from gdrdiag.importers import import_text

    results = []
    for mib, gbs in ((64, 25.0), (512, 22.0), (2048, 19.0), (8192, 16.5)):
        doc = {
            "nvbandwidth": {
                "bufferSize": mib,
                "testcases": [
                    {
                        "name": "host_to_device_memcpy_sm",
                        "status": "Passed",
                        "bandwidth_description": "memcpy SM CPU(row) -> GPU(column) bandwidth (GB/s)",
                        "bandwidth_matrix": [[str(gbs)]],
                        "sum": gbs,
                    }
                ],
            }
        }
        results += import_text(json.dumps(doc), f"nvb-{mib}.json")
    lead = diagnose(sc.report(sc.machine("baremetal_hgx"), results)).findings[0]
    assert lead.code == "CAUSE-WORKING-SET"
    assert lead.next_step == "gdrdiag gather-bench --sweep working-set"


def test_a_full_report_leaves_the_working_set_sweep_to_an_explicit_run():
    from gdrdiag.bench.profiles import report_sweeps

    assert "working-set" not in report_sweeps("full") and "sm" in report_sweeps("full")
    assert report_sweeps("standard") == ("ladder",)
