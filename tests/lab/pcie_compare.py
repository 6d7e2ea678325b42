"""Compare gdrdiag's view of a captured machine with the guest's own lspci and sysfs listings.

``register_checks`` pairs every register field gdrdiag decodes with the value lspci printed
for the same function (fields lspci does not print for that function are not compared);
``sysfs_checks`` pairs inspect's SR-IOV, IOMMU-group, topology and VM facts with the shell's
sysfs listing taken in the same boot; ``byte_checks`` compares the config-space bytes in the
bundle with ``lspci -xxxx``. Each check is (function, field, gdrdiag's value, the guest's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from tests.lab.lspci_text import parse_vvv, parse_xxxx

PCIE_FIELDS = (
    "version",
    "max_payload_supported",
    "ext_tag_supported",
    "flr",
    "relaxed_ordering",
    "ext_tag",
    "no_snoop",
    "max_payload",
    "max_read_request",
    "corr_err",
    "nonfatal_err",
    "fatal_err",
    "unsupp_req",
    "rcb_bytes",
    "tag10_completer",
    "tag10_requester",
    "tag10_requester_enabled",
    "atomic32_completer",
    "atomic64_completer",
    "atomic128_completer",
    "atomic_requester_enabled",
    "ido_request_enabled",
    "ido_completion_enabled",
    "target_speed_gts",
)
SRIOV_FIELDS = (
    "vf_enable",
    "ari_hierarchy",
    "initial_vfs",
    "total_vfs",
    "num_vfs",
    "first_vf_offset",
    "vf_stride",
    "vf_device_id",
)


class Check(NamedTuple):
    """One compared field."""

    bdf: str
    field: str
    ours: Any
    theirs: Any

    @property
    def ok(self) -> bool:
        """True when both sides agree."""
        return self.ours == self.theirs


def _add(out: list[Check], bdf: str, field: str, ours: Any, theirs: Any) -> None:
    if theirs is not None:  # lspci did not print it for this function: nothing to compare
        out.append(Check(bdf, field, ours, theirs))


def register_checks(machine: Any, lspci_vvv: str) -> list[Check]:
    """Every decoded register field of every function against ``lspci -D -nn -vvv``."""
    out: list[Check] = []
    theirs_all = parse_vvv(lspci_vvv)
    ours_all = {f.bdf: f for f in machine.pci}
    out.append(Check("*", "functions", sorted(ours_all), sorted(theirs_all)))
    for bdf, t in sorted(theirs_all.items()):
        f = ours_all.get(bdf)
        if f is None:
            continue
        _add(out, bdf, "vendor_id", f.vendor_id, t["vendor_id"])
        _add(out, bdf, "device_id", f.device_id, t["device_id"])
        _add(out, bdf, "class", (f.class_code or 0) >> 8, t["class"])
        _add(out, bdf, "revision", f.revision, t["revision"])
        if "subsystem" in t:
            _add(out, bdf, "subsystem", (f.subsystem_vendor_id, f.subsystem_device_id), t["subsystem"])
        _add(out, bdf, "driver", f.driver, t.get("driver"))
        _add(out, bdf, "iommu_group", f.iommu_group, t.get("iommu_group"))
        _add(out, bdf, "caps", sorted((c.offset, c.extended) for c in f.caps), t["caps"])
        ours_bars = {b.index: b for b in f.bars if b.index < 6}
        for i, tb in sorted(t["bars"].items()):
            b = ours_bars.get(i)
            for key in ("size", "is_io", "is_64bit", "prefetchable"):
                _add(out, bdf, f"bar{i}.{key}", getattr(b, key, None), tb[key])
        tp = t.get("pcie")
        if tp:
            p = f.pcie
            _add(out, bdf, "pcie.offset", p.offset if p else None, tp["offset"])
            _add(out, bdf, "pcie.port_type", p.port_type.value if p else None, tp["port_type"])
            for key in PCIE_FIELDS:
                _add(out, bdf, f"pcie.{key}", getattr(p, key, None), tp.get(key))
            if tp.get("supported_max_gts") is not None:
                sup = p.supported_speeds_gts if p else ()
                _add(out, bdf, "pcie.supported_max_gts", max(sup) if sup else None, tp["supported_max_gts"])
            link = f.link if f.link and f.link.source == "registers" else None
            _add(out, bdf, "link.speed_gts", getattr(link, "speed_gts", None), tp["link_speed"])
            _add(out, bdf, "link.width", getattr(link, "width", None), tp["link_width"])
            _add(out, bdf, "link.max_speed_gts", getattr(link, "max_speed_gts", None), tp["link_max_speed"])
            _add(out, bdf, "link.max_width", getattr(link, "max_width", None), tp["link_max_width"])
        ts = t.get("sriov")
        if ts:
            _add(out, bdf, "sriov.offset", f.sriov.offset if f.sriov else None, ts["offset"])
            for key in SRIOV_FIELDS:
                _add(out, bdf, f"sriov.{key}", getattr(f.sriov, key, None), ts[key])
        ta = t.get("acs")
        if ta:
            _add(out, bdf, "acs.offset", f.acs.offset if f.acs else None, ta["offset"])
            _add(out, bdf, "acs.cap_flags", set(f.acs.cap_flags) if f.acs else None, ta["cap_flags"])
            _add(out, bdf, "acs.ctl_flags", set(f.acs.ctl_flags) if f.acs else None, ta["ctl_flags"])
        tt = t.get("ats")
        if tt:
            for key in ("offset", "enabled", "stu", "invalidate_queue_depth"):
                _add(out, bdf, f"ats.{key}", getattr(f.ats, key, None), tt[key])
        te = t.get("aer")
        if te:
            a = f.aer
            _add(out, bdf, "aer.offset", a.offset if a else None, te["offset"])
            _add(
                out, bdf, "aer.uncorrectable_any", bool(a and a.uncorrectable_status), te["uncorrectable_any"]
            )
            _add(out, bdf, "aer.correctable_any", bool(a and a.correctable_status), te["correctable_any"])
    return out


def byte_checks(bundle_root: Path, lspci_xxxx: str) -> list[Check]:
    """The bundle's config-space bytes against ``lspci -xxxx`` (one check per function)."""
    out = []
    for bdf, theirs in sorted(parse_xxxx(lspci_xxxx).items()):
        path = bundle_root / "fs/sys/bus/pci/devices" / bdf / "config"
        ours = path.read_bytes() if path.is_file() else b""
        n = min(len(ours), len(theirs))
        diff = [hex(i) for i in range(n) if ours[i] != theirs[i]]
        out.append(Check(bdf, f"config[0:{n:#x}] differing offsets", diff, []))
        out.append(Check(bdf, "config bytes read", len(ours), len(theirs)))
    return out


def parse_sysfs_facts(text: str) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], dict]:
    """(per function, per IOMMU group, other) from the guest's ``sysfs-facts.txt``."""
    funcs: dict[str, dict[str, Any]] = {}
    groups: dict[str, dict[str, Any]] = {}
    other: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(" ", 2)
        if len(parts) < 3:
            parts += [""] * (3 - len(parts))
        who, key, value = parts
        if who == "group":
            g, _, rest = f"{key} {value}".partition(" ")
            kind, _, val = rest.partition(" ")
            grp = groups.setdefault(g, {"devices": []})
            if kind == "device":
                grp["devices"].append(val)
            else:
                grp[kind] = val
        elif who.count(":") == 2:
            d = funcs.setdefault(who, {"virtfns": []})
            if key == "virtfn":
                d["virtfns"].append(value)
            else:
                d[key] = value
        else:
            other[f"{who} {key}"] = value
    return funcs, groups, other


def sysfs_checks(machine: Any, sysfs_facts: str) -> list[Check]:
    """inspect's SR-IOV, IOMMU-group, topology, VM and NIC facts against the guest's sysfs."""
    funcs, groups, other = parse_sysfs_facts(sysfs_facts)
    out: list[Check] = []
    ours_all = {f.bdf: f for f in machine.pci}
    for bdf, s in sorted(funcs.items()):
        f = ours_all.get(bdf)
        out.append(Check(bdf, "present", f is not None, True))
        if f is None:
            continue
        path = s["path"]
        out.append(Check(bdf, "sysfs_path", f.sysfs_path.removeprefix("/sys/devices/"), path))
        bdfs = [p for p in path.split("/") if p.count(":") == 2]
        out.append(Check(bdf, "parent_bdf", f.parent_bdf, bdfs[-2] if len(bdfs) > 1 else None))
        out.append(Check(bdf, "driver", f.driver, s.get("driver")))
        group = s.get("iommu_group")
        out.append(Check(bdf, "iommu_group", f.iommu_group, int(group) if group else None))
        if group:
            out.append(Check(bdf, "iommu_group_type", f.iommu_group_type, groups[group].get("type")))
            out.append(Check(bdf, "iommu_group_size", f.iommu_group_size, len(groups[group]["devices"])))
        out.append(Check(bdf, "is_vf", bool(f.is_vf), "physfn" in s))
        out.append(Check(bdf, "physfn", f.physfn, s.get("physfn")))
        out.append(Check(bdf, "virtfns", sorted(f.virtfns), sorted(s["virtfns"])))
        for key in ("sriov_totalvfs", "sriov_numvfs"):
            if key in s:
                out.append(Check(bdf, key, getattr(f, key), int(s[key])))
    v = machine.virt
    out.append(Check("virt", "is_vm", v.is_vm, True))
    out.append(Check("virt", "iommu_groups", v.iommu_groups, len(groups)))
    types = {g.get("type") for g in groups.values()}
    expected_mode = {"DMA": "translated", "DMA-FQ": "translated", "identity": "passthrough"}
    out.append(
        Check(
            "virt", "iommu_mode", v.iommu_mode, expected_mode.get(types.pop()) if len(types) == 1 else "mixed"
        )
    )
    parent = other.get("rxe0 parent")
    if parent:
        nic = next((n for n in machine.nics if n.name == "rxe0"), None)
        e1000e = [b for b, s in funcs.items() if s.get("driver") == "e1000e"]
        out.append(Check("rxe0", "netdevs", nic.netdevs if nic else None, (parent,)))
        out.append(Check("rxe0", "bdf", nic.bdf if nic else None, e1000e[0] if e1000e else None))
    return out
