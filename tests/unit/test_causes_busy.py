"""CAUSE-GPU-BUSY: a loss on a GPU that another process held, named by its ordinal and address."""

from __future__ import annotations

import dataclasses

from gdrdiag.cli.reporting import results_report
from gdrdiag.diagnose import diagnose
from gdrdiag.importers import import_text
from gdrdiag.model.machine import GpuProcess
from tests.real.corpus import ROOT, machine_of

# A real 4 x H100 all_reduce run while a second process ran matrix products on GPU 3 (tests/real/)
RUN = ROOT / "h100x4-1128a" / "runs" / "fault-nccl-busy-gpu-all_reduce-info" / "output.txt"


def _findings(busy: dict[int, dict]):
    machine = machine_of(ROOT / "h100x4-1128a" / "bundle.tar.gz")
    gpus = tuple(dataclasses.replace(g, **busy.get(g.cuda_ordinal, {})) for g in machine.gpus)
    machine = dataclasses.replace(machine, gpus=gpus)
    report = results_report("import", import_text(RUN.read_text(), RUN.name), machine=machine)
    return diagnose(report).findings


def _loud(findings):
    return [f for f in findings if f.severity.value in ("WARN", "FAIL")]


def test_the_busy_gpu_is_named_first_and_no_other():
    findings = _findings(
        {3: {"other_processes": (GpuProcess(pid=4242, name="python3"),), "utilization_pct": 100}}
    )
    loud = _loud(findings)
    assert loud[0].code == "CAUSE-GPU-BUSY"
    assert "GPU 3 (0000:00:09.0)" in loud[0].title and "pid 4242 (python3)" in loud[0].title
    assert [f for f in findings if f.code == "CAUSE-GPU-BUSY" and "GPU 3" not in f.title] == []


def test_utilisation_alone_names_the_gpu_too():
    loud = _loud(_findings({3: {"utilization_pct": 97}}))
    assert loud[0].code == "CAUSE-GPU-BUSY" and "97% SM utilisation" in loud[0].title


def test_an_idle_node_names_no_busy_gpu():
    findings = _findings({})
    assert [f.code for f in findings if f.code == "CAUSE-GPU-BUSY"] == []
    assert _loud(findings)[0].code == "PERF-PATH-SLOW"
