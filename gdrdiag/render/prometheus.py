"""node_exporter textfile-collector output, in the official ``prometheus_client`` text format.

Formatting only: the values come from a node record head or a ``FleetResult``. Files are written
with ``prometheus_client.write_to_textfile``, which writes a temporary file and renames it, so
node_exporter never reads a half-written file. ``prometheus_client`` is the optional extra
``prometheus`` (``pip install 'gdrdiag[prometheus]'``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from gdrdiag.errors import UserInputError

if TYPE_CHECKING:  # pragma: no cover
    from gdrdiag.model.fleet import FleetResult, NodeRecordHead

SEVERITIES = ("FAIL", "WARN", "INFO")


def _client():
    try:
        import prometheus_client
    except ModuleNotFoundError:
        raise UserInputError(
            "--prometheus needs the prometheus_client package: pip install 'gdrdiag[prometheus]'"
        ) from None
    return prometheus_client


def node_registry(head: "NodeRecordHead"):
    """A registry with one node's metrics, finding counts by severity and exit code."""
    pc = _client()
    reg = pc.CollectorRegistry()
    labels = ["host", "sku"]
    value = pc.Gauge(
        "gdrdiag_node_metric",
        "gdrdiag headline metric (higher is better; unit in the name)",
        labels + ["metric"],
        registry=reg,
    )
    for name, v in sorted(head.metrics.items()):
        value.labels(head.host, head.sku, name).set(v)
    missing = pc.Gauge(
        "gdrdiag_node_metric_missing",
        "1 when a metric's cases ran but produced no number",
        labels + ["metric"],
        registry=reg,
    )
    for name in sorted(head.missing):
        missing.labels(head.host, head.sku, name).set(1)
    findings = pc.Gauge("gdrdiag_node_findings", "findings by severity", labels + ["severity"], registry=reg)
    counts = Counter(f.severity for f in head.findings)
    for sev in SEVERITIES:
        findings.labels(head.host, head.sku, sev).set(counts.get(sev, 0))
    pc.Gauge(
        "gdrdiag_node_exit_code", "exit code of gdrdiag report (0 ok, 1 FAIL finding)", labels, registry=reg
    ).labels(head.host, head.sku).set(head.exit_code)
    return reg


def fleet_registry(result: "FleetResult"):
    """A registry with the fleet view: per node level, worst z and metric ratios; counts per level."""
    pc = _client()
    reg = pc.CollectorRegistry()
    level = pc.Gauge(
        "gdrdiag_fleet_node_level", "0 ok, 1 investigate, 2 drain", ["host", "sku"], registry=reg
    )
    z = pc.Gauge(
        "gdrdiag_fleet_node_metric_z",
        "robust z of a node's metric within its SKU group",
        ["host", "metric"],
        registry=reg,
    )
    ratio = pc.Gauge(
        "gdrdiag_fleet_node_metric_ratio",
        "node metric / its SKU group's median",
        ["host", "metric"],
        registry=reg,
    )
    codes = {"ok": 0, "investigate": 1, "drain": 2}
    for node in result.nodes:
        level.labels(node.host, node.sku).set(codes[node.level])
        for s in node.scores:
            if s.z is not None:
                z.labels(node.host, s.metric).set(s.z)
            if s.ratio is not None:
                ratio.labels(node.host, s.metric).set(s.ratio)
    nodes = pc.Gauge("gdrdiag_fleet_nodes", "nodes per level", ["level"], registry=reg)
    per_level = Counter(n.level for n in result.nodes)
    for name in codes:
        nodes.labels(name).set(per_level.get(name, 0))
    pc.Gauge(
        "gdrdiag_fleet_records_skipped", "records skipped (truncated, wrong schema, too large)", registry=reg
    ).set(len(result.skipped))
    return reg


def write_prom(path: Path, registry) -> None:
    """Write a registry to ``path`` atomically (prometheus_client writes a temp file and renames it)."""
    pc = _client()
    if not path.parent.is_dir():
        raise UserInputError(f"--prometheus {path}: folder {path.parent} does not exist")
    pc.write_to_textfile(str(path), registry)


def write_node_prom(path: Path, head: "NodeRecordHead") -> None:
    """One node's metrics to a .prom file."""
    write_prom(path, node_registry(head))


def write_fleet_prom(path: Path, result: "FleetResult") -> None:
    """The fleet view to a .prom file."""
    write_prom(path, fleet_registry(result))
