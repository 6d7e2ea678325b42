"""A node against its SKU's intended machine: the ``FLEET-*`` findings, each naming its devices.

Pure; used by :mod:`gdrdiag.fleet`. A fact the node's record does not carry is *unknown*: it
is never read as zero and never a difference (an older record version, a fact that could not be
read). Device findings name the device both ways an operator looks it up: its PCI address and
its CUDA ordinal (GPUs) or RDMA device name (NICs), where the records carry them.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass
from typing import Optional

from gdrdiag.fleet_sku import counted
from gdrdiag.model.fleet import NodeFinding, NodeRecordHead

DEVICE_FACTS = ("firmware ", "mtu ", "link gpu ", "link nic ", "port rate ", "port state ")
# Per-device facts judged only where a baseline declares them (gpu_link_cap): the link as capable.
DECLARED_DEVICE_FACTS = ("link cap gpu ",)
INVENTORY_LOST = frozenset({"FLEET-GPU-MISSING", "FLEET-NIC-MISSING", "FLEET-RDMA-DRIVER-MISSING"})
_LINK = re.compile(r"^([0-9.]+) GT/s x(\d+)$")


@dataclass(frozen=True)
class Intent:
    """What a SKU group's node should be: fact -> (intended value, share), group size, device facts.

    Every node of the group is compared with one Intent, so what a comparison looks up is indexed
    here once per group (``device_set``, ``nic_names``, ``intended_under``): where each node names
    its own devices (VMs, renamed NICs) and a baseline declares per-device facts, a group intends
    a fact per device of every node, and a scan of them per node made ``fleet`` quadratic.
    """

    n: int
    intended: dict[str, tuple[str, float]]
    device_facts: tuple[str, ...]

    @functools.cached_property
    def device_set(self) -> frozenset[str]:
        """``device_facts`` for membership tests."""
        return frozenset(self.device_facts)

    @functools.cached_property
    def nic_names(self) -> dict[str, str]:
        """{RDMA device name: PCI address} from the intended ``name nic`` facts (the first one wins)."""
        out: dict[str, str] = {}
        for key, (value, _) in self.intended.items():
            if key.startswith("name nic "):
                out.setdefault(value, key[9:])
        return out

    def intended_under(self, prefix: str) -> tuple[str, ...]:
        """The intended fact names after ``prefix`` (``link gpu `` -> addresses), sorted; kept per prefix."""
        cache = self.__dict__.setdefault("_under", {})
        if prefix not in cache:
            cache[prefix] = tuple(sorted(n[len(prefix) :] for n in self.intended if n.startswith(prefix)))
        return cache[prefix]


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def own_counts(r: NodeRecordHead) -> dict[str, str]:
    """The inventory counts a record says, from its facts or else its own SKU key (never a guess of 0).

    A record written before the inventory facts existed still carries its SKU key, which counts
    its GPUs and RDMA devices; where neither says, the count is absent (unknown).
    """
    out = {}
    for fact, part in (("gpus", "gpus"), ("rdma devices", "nics")):
        if fact in r.facts:
            continue
        text = r.sku_parts.get(part)
        if text is not None and text != "unknown":
            out[fact] = str(sum(counted(text).values()))
    return out


def fleet_finding(code: str, severity: str, title: str, subject: str = "") -> NodeFinding:
    """A finding fleet makes (a ``machine`` finding: the node differs from its SKU)."""
    return NodeFinding(
        code=code, severity=severity, title=title[:300], subject=subject[:120], origin="machine"
    )


def gpu_label(bdf: str, facts: dict[str, str], intent: Intent) -> str:
    """``GPU 3 (0000:9f:00.0)``, or the address alone where no record gives the ordinal."""
    ordinal = facts.get(f"ordinal gpu {bdf}") or intent.intended.get(f"ordinal gpu {bdf}", ("",))[0]
    return f"GPU {ordinal} ({bdf})" if ordinal else f"GPU {bdf}"


def nic_label(name: str, facts: dict[str, str], intent: Intent) -> str:
    """``mlx5_1 (0000:1b:00.0)``, or the name alone where no record gives the address."""
    for key, value in facts.items():
        if key.startswith("name nic ") and value == name:
            return f"{name} ({key[9:]})"
    bdf = intent.nic_names.get(name)
    return f"{name} ({bdf})" if bdf is not None else name


def nic_bdf_label(bdf: str, facts: dict[str, str], intent: Intent) -> str:
    """``mlx5_1 (0000:1b:00.0)`` from the address, or ``NIC 0000:1b:00.0``."""
    name = facts.get(f"name nic {bdf}") or intent.intended.get(f"name nic {bdf}", ("",))[0]
    return f"{name} ({bdf})" if name else f"NIC {bdf}"


def sku_drift(r: NodeRecordHead, g: Intent) -> list[NodeFinding]:
    """FLEET-* findings: every way this node's machine differs from its SKU's intended one."""
    if g.n < 2 and not any(share == 1.0 for _, share in g.intended.values()):
        return []
    facts = {**r.facts, **own_counts(r)}
    out = _lost_devices(facts, g)
    for fact, code, what in (
        ("nvidia driver", "FLEET-DRIVER-DRIFT", "NVIDIA driver"),
        ("kernel", "FLEET-KERNEL-DRIFT", "kernel"),
        ("iommu mode", "FLEET-IOMMU-DRIFT", "IOMMU mode"),
    ):
        mine, wanted = facts.get(fact), g.intended.get(fact)
        if mine is not None and wanted is not None and mine != wanted[0]:
            out.append(fleet_finding(code, "WARN", f"{what} {mine}, the SKU's is {wanted[0]}"))
    for name in _own_device_facts(facts, g):
        value, intended = facts[name], g.intended[name][0]
        if value != intended:  # a device fact the node lacks is unknown, not a difference
            found = _device_drift(name, value, intended, facts, g)
            if found is not None:
                out.append(found)
    return out


def _own_device_facts(facts: dict[str, str], g: Intent) -> list[str]:
    """The SKU's device facts this node has, in the SKU's (sorted) order; the cost of the node's facts."""
    if len(facts) >= len(g.device_facts):
        return [name for name in g.device_facts if name in facts]
    return sorted(name for name in facts if name in g.device_set)


# Devices named per lost-device finding: eight in its title, its subject cut at 120 characters.
_LOST_NAMED = 16


def _lost_devices(facts: dict[str, str], g: Intent) -> list[NodeFinding]:
    """FLEET-GPU-MISSING, FLEET-NIC-MISSING, FLEET-RDMA-DRIVER-MISSING from the inventory counts."""
    out = []

    def want(name: str) -> Optional[int]:
        got = g.intended.get(name)
        return _int(got[0]) if got else None

    def lost(prefix: str) -> list[str]:
        gone = (d for d in g.intended_under(prefix) if prefix + d not in facts)
        return list(itertools.islice(gone, _LOST_NAMED))

    gpus, want_gpus = _int(facts.get("gpus")), want("gpus")
    if gpus is not None and want_gpus is not None and gpus < want_gpus:
        gone = [gpu_label(b, facts, g) for b in lost("link gpu ")]
        seen = f" (not seen: {', '.join(gone[:8])})" if gone else ""
        out.append(
            fleet_finding(
                "FLEET-GPU-MISSING",
                "FAIL",
                f"{gpus} of {want_gpus} GPUs{seen}",
                ", ".join(lost("link gpu "))[:120],
            )
        )
    rdma, want_rdma = _int(facts.get("rdma devices")), want("rdma devices")
    if rdma is not None and want_rdma is not None and rdma < want_rdma:
        funcs, want_funcs = _int(facts.get("nic functions")), want("nic functions")
        gone_bdfs = lost("link nic ")
        if funcs is not None and want_funcs is not None and funcs >= want_funcs:
            title = (
                f"{rdma} of {want_rdma} RDMA devices though all {funcs} NIC PCI functions are "
                "present: the RDMA driver (mlx5_core / mlx5_ib) is not bound or not loaded"
            )
            out.append(fleet_finding("FLEET-RDMA-DRIVER-MISSING", "FAIL", title))
        else:
            gone = [nic_bdf_label(b, facts, g) for b in gone_bdfs]
            seen = f" (not seen: {', '.join(gone[:8])})" if gone else ""
            unknown = "" if funcs is not None else "; this record does not count NIC PCI functions"
            title = f"{rdma} of {want_rdma} RDMA NICs{seen}{unknown}"
            out.append(fleet_finding("FLEET-NIC-MISSING", "FAIL", title, ", ".join(gone_bdfs)[:120]))
    return out


def _port_where(rest: str, facts: dict[str, str], g: Intent) -> str:
    """``mlx5_1 port 1`` -> ``mlx5_1 (0000:1b:00.0) port 1``."""
    name, _, port = rest.partition(" port ")
    return f"{nic_label(name, facts, g)} port {port}" if port else rest


def _device_drift(
    name: str, mine: str, wanted: str, facts: dict[str, str], g: Intent
) -> Optional[NodeFinding]:
    """One per-device fact (firmware, MTU, port, link) that differs from the SKU's, as a finding."""
    if name.startswith("firmware "):
        nic = name[9:]
        return fleet_finding(
            "FLEET-FIRMWARE-DRIFT",
            "WARN",
            f"{nic_label(nic, facts, g)} firmware {mine}, the SKU's is {wanted}",
            nic,
        )
    if name.startswith("mtu "):
        where = _port_where(name[4:], facts, g)
        return fleet_finding(
            "FLEET-MTU-DRIFT", "WARN", f"{where} active MTU {mine}, the SKU's is {wanted}", name[4:]
        )
    if name.startswith("port rate "):
        rest = name[10:]
        try:
            rate, want_rate = float(mine), float(wanted)
        except ValueError:
            return None
        if rate >= want_rate:
            return None
        severity = "FAIL" if rate <= want_rate / 2 else "WARN"
        where = _port_where(rest, facts, g)
        return fleet_finding(
            "FLEET-PORT-RATE", severity, f"{where} at {mine} Gb/s, the SKU's ports run at {wanted} Gb/s", rest
        )
    if name.startswith("port state "):
        rest = name[11:]
        where = _port_where(rest, facts, g)
        return fleet_finding(
            "FLEET-PORT-STATE", "FAIL", f"{where} is {mine}, the SKU's ports are {wanted}", rest
        )
    return _link_drift(name, mine, wanted, facts, g)


def _link_drift(name: str, mine: str, wanted: str, facts: dict[str, str], g: Intent) -> Optional[NodeFinding]:
    a, b = _LINK.match(mine), _LINK.match(wanted)
    if not a or not b:
        return None
    speed, width = float(a.group(1)), int(a.group(2))
    w_speed, w_width = float(b.group(1)), int(b.group(2))
    if width >= w_width and speed >= w_speed:
        return None
    as_capable = name.startswith("link cap ")
    role, _, bdf = name[9 if as_capable else 5 :].partition(" ")
    label = gpu_label(bdf, facts, g) if role == "gpu" else nic_bdf_label(bdf, facts, g)
    capable = None if as_capable else facts.get(f"link cap {role} {bdf}")
    cap = f" (capable of {capable})" if capable and capable != mine else ""
    return fleet_finding(
        "FLEET-LINK-BELOW-SKU",
        "FAIL" if width < w_width else "WARN",
        f"{label} link {'capable of ' if as_capable else ''}{mine}{cap}, the SKU's is {wanted}",
        bdf,
    )
