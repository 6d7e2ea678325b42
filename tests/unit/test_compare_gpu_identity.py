"""compare matches GPUs by the GPU itself (UUID, else PCI address), not by CUDA's ordinal.

A is a real 4 x H200 Report (tests/fixtures/reports/node). B is the same node as a process with
``CUDA_VISIBLE_DEVICES=2,3`` sees it: GPUs 2 and 3 answer to ordinals 0 and 1, 0 and 1 are hidden.
B's rows are A's rows of GPUs 2 and 3, renumbered as CUDA would; every one must pair with A's row of
the same GPU at ratio 1, none with GPU 0's or 1's.
"""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

from gdrdiag.compare import compare, gpu_renumbering
from gdrdiag.model.params import CopyParams
from gdrdiag.model.report import Report

NODE = Path(__file__).resolve().parents[1] / "fixtures" / "reports" / "node"


def node() -> Report:
    return Report.from_json(gzip.decompress((NODE / "h200x4-quick-b.json.gz").read_bytes()).decode())


def seen_through(report: Report, visible: tuple[int, ...]) -> Report:
    """The Report a process limited to ``visible`` GPUs would write (CUDA renumbers them from 0)."""
    new = {old: i for i, old in enumerate(visible)}
    gpus = tuple(dataclasses.replace(g, cuda_ordinal=new.get(g.cuda_ordinal)) for g in report.machine.gpus)
    rows = [
        dataclasses.replace(r, params=dataclasses.replace(r.params, gpu=new[r.params.gpu or 0]))
        for r in report.results
        if isinstance(r.params, CopyParams) and (r.params.gpu or 0) in new
    ]
    return dataclasses.replace(
        report, machine=dataclasses.replace(report.machine, gpus=gpus), results=tuple(rows)
    )


def test_the_renumbering_follows_the_gpus_uuids():
    a = node()
    b = seen_through(a, (2, 3))
    assert gpu_renumbering(a, b) == {0: 2, 1: 3}
    assert gpu_renumbering(a, a) == {}  # the same numbering: nothing to do


def test_each_of_bs_rows_pairs_with_the_same_gpus_row_in_a():
    a = node()
    b = seen_through(a, (2, 3))
    paired = [c for c in compare(a, b).cases if c.a_value is not None and c.b_value is not None]
    copies = [r for r in b.results if isinstance(r.params, CopyParams) and r.status.value == "OK"]
    assert len(paired) == len(copies) > 0
    assert all(abs((c.ratio or 0) - 1.0) < 1e-9 for c in paired)


def test_another_machine_is_matched_by_ordinal():
    a = node()
    other = dataclasses.replace(
        a.machine,
        gpus=tuple(
            dataclasses.replace(g, bdf=f"0000:9{i}:00.0", uuid=None) for i, g in enumerate(a.machine.gpus)
        ),
    )
    assert gpu_renumbering(a, dataclasses.replace(a, machine=other)) == {}
