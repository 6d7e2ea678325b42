"""The real-run corpus: raw outputs of the standard tools on real machines, each beside its bundle.

Layout (written by scripts/real/gpu_real_runs.sh on the GPU machine, one folder per machine and call)::

    tests/real/<machine>/bundle.tar.gz        gdrdiag collect, same machine, same call
    tests/real/<machine>/device.txt           nvidia-smi, nvidia-smi topo -m, nvcc --version
    tests/real/<machine>/expected.toml        the verdict each run must get (see README.md)
    tests/real/<machine>/runs/<run>/output.txt   stdout+stderr as the tool printed it
    tests/real/<machine>/runs/<run>/command.txt, env.txt, started, rc, wall_s

A run imports the way a user imports it: ``output.txt`` (or the ``-J`` file ``result.json`` where the
run wrote one) with ``--bundle bundle.tar.gz``, then ``diagnose``.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import tomllib

from gdrdiag.cli.reporting import results_report
from gdrdiag.diagnose import diagnose
from gdrdiag.hw.bundle import open_bundle
from gdrdiag.importers import import_text
from gdrdiag.inspect.collect import inspect_source
from gdrdiag.model.findings import Finding
from gdrdiag.model.machine import MachineInfo
from gdrdiag.model.report import Report

ROOT = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Expectation:
    """What one run must be judged: healthy (no WARN/FAIL) or the cause that must lead."""

    verdict: str  # "healthy", "fault", or "slow" (a real slow row with no cause in the evidence)
    lead: Optional[str] = None  # the finding code that must come first (fault, slow)
    why: str = ""  # the injected fault, or what makes this run what it is


@dataclass(frozen=True)
class RealRun:
    """One tool output of the corpus."""

    machine: str
    name: str
    folder: Path
    expect: Optional[Expectation]

    @property
    def output(self) -> Path:
        """The file a user would import: the -J JSON where the run wrote one, else the printed output."""
        json_file = self.folder / "result.json"
        return json_file if json_file.exists() else self.folder / "output.txt"

    @property
    def bundle(self) -> Path:
        """The bundle collected with this run (a busy-GPU run's, during it), else the machine's."""
        own = self.folder / "bundle.tar.gz"
        return own if own.exists() else ROOT / self.machine / "bundle.tar.gz"

    @property
    def command(self) -> str:
        """The environment and command line of the run, as the script ran it."""
        env = (self.folder / "env.txt").read_text().split()
        return " ".join(env + [(self.folder / "command.txt").read_text().strip()])


@functools.lru_cache(maxsize=None)
def machine_of(bundle: Path) -> MachineInfo:
    """The machine facts of one bundle, read once."""
    with open_bundle(str(bundle)) as source:
        return inspect_source(source)


def _expectations(machine_dir: Path) -> dict[str, Expectation]:
    path = machine_dir / "expected.toml"
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    return {name: Expectation(**fields) for name, fields in data.items()}


def runs() -> list[RealRun]:
    """Every run of every machine folder, in a stable order."""
    out = []
    for machine_dir in sorted(p for p in ROOT.iterdir() if (p / "bundle.tar.gz").exists()):
        expected = _expectations(machine_dir)
        for folder in sorted((machine_dir / "runs").iterdir()):
            out.append(RealRun(machine_dir.name, folder.name, folder, expected.get(folder.name)))
    return out


def judged(run: RealRun) -> Report:
    """The run imported with its machine's bundle, as ``gdrdiag import --bundle``, with its findings."""
    results = import_text(run.output.read_text(), run.output.name)
    report = results_report("import", results, machine=machine_of(run.bundle))
    findings: list[Finding] = list(diagnose(report).findings)
    return dataclasses.replace(report, findings=tuple(findings))
