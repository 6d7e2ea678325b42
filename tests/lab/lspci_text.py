"""Parse ``lspci -D -nn -vvv`` and ``lspci -D -xxxx`` text into plain dicts (for the lab's tests).

Only what the PCIe plan compares with gdrdiag's own decoding is parsed; every value is kept as
lspci prints it turned into Python values (ints, bools, floats), so a test compares like with
like. Field names follow pciutils' ls-caps.c output (https://github.com/pciutils/pciutils);
"+"/"-" become True/False.
"""

from __future__ import annotations

import re
from typing import Any

HEADER_RE = re.compile(
    r"^(?P<bdf>[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) .*?\[(?P<cls>[0-9a-f]{4})\]: .*"
    r"\[(?P<ven>[0-9a-f]{4}):(?P<dev>[0-9a-f]{4})\](?: \(rev (?P<rev>[0-9a-f]{2})\))?"
)
CAP_RE = re.compile(r"^\tCapabilities: \[(?P<off>[0-9a-f]+)(?: v(?P<ver>\d+))?\] (?P<rest>.*)$")
FLAG_RE = re.compile(r"([A-Za-z0-9]+)([+-])(?=\s|,|$)")
SIZE_RE = re.compile(r"\[size=(\d+)([KMGT]?)\]")
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
PORT_TYPES = {
    "Endpoint": "endpoint",
    "Legacy Endpoint": "legacy_endpoint",
    "Root Port": "root_port",
    "Upstream Port": "switch_upstream",
    "Downstream Port": "switch_downstream",
    "PCI-Express to PCI/PCI-X Bridge": "pcie_to_pci_bridge",
    "PCI/PCI-X to PCI-Express Bridge": "pci_to_pcie_bridge",
    "Root Complex Integrated Endpoint": "rc_integrated_endpoint",
    "Root Complex Event Collector": "rc_event_collector",
}


def _flags(text: str) -> dict[str, bool]:
    return {name: sign == "+" for name, sign in FLAG_RE.findall(text)}


def _speed(text: str) -> float | None:
    m = re.search(r"Speed ([0-9.]+)GT/s", text)
    return float(m.group(1)) if m else None


def _width(text: str) -> int | None:
    """Link width; ``x0`` (a reserved encoding, QEMU's x3130 downstream ports report it in
    LnkCap) is no width at all, which gdrdiag records as unknown (None), never 0."""
    m = re.search(r"Width x(\d+)", text)
    return int(m.group(1)) or None if m else None


def _bytes_after(text: str, word: str) -> int | None:
    m = re.search(rf"{word} (\d+) bytes", text)
    return int(m.group(1)) if m else None


def split_functions(text: str) -> dict[str, list[str]]:
    """BDF -> the lines of its block (header first)."""
    blocks: dict[str, list[str]] = {}
    cur: list[str] | None = None
    for line in text.splitlines():
        m = HEADER_RE.match(line)
        if m:
            cur = blocks.setdefault(m.group("bdf"), [])
        if cur is not None and line.strip():
            cur.append(line)
    return blocks


def _cap_sections(lines: list[str]) -> list[tuple[int, bool, int, str, list[str]]]:
    """(offset, extended, version, title, body lines) per capability."""
    out = []
    for line in lines:
        m = CAP_RE.match(line)
        if m:
            off = int(m.group("off"), 16)
            out.append((off, off >= 0x100, int(m.group("ver") or 0), m.group("rest"), []))
        elif out and line.startswith("\t\t"):
            out[-1][4].append(line[2:].rstrip())  # registers start here, continuations with a tab
        elif out and not line.startswith("\t\t"):
            out.append((-1, False, 0, "", []))  # a non-capability line ends the last body
    return [c for c in out if c[0] >= 0]


def _field(body: list[str], prefix: str) -> str:
    """The text of one register (its first line starting with ``prefix`` plus continuations)."""
    for i, line in enumerate(body):
        if line.startswith(prefix):
            text = line[len(prefix) :]
            for cont in body[i + 1 :]:
                if not cont.startswith("\t"):
                    break
                text += " " + cont.strip()
            return text
    return ""


def parse_function(lines: list[str]) -> dict[str, Any]:
    """The facts of one function's ``lspci -vvv -nn`` block."""
    m = HEADER_RE.match(lines[0])
    assert m, lines[0]
    f: dict[str, Any] = {
        "bdf": m.group("bdf"),
        "vendor_id": int(m.group("ven"), 16),
        "device_id": int(m.group("dev"), 16),
        "class": int(m.group("cls"), 16),
        "revision": int(m.group("rev"), 16) if m.group("rev") else None,
    }
    bars: dict[int, dict[str, Any]] = {}
    for line in lines[1:]:
        if line.startswith("\tSubsystem:"):
            sm = re.search(r"\[([0-9a-f]{4}):([0-9a-f]{4})\]\s*$", line)
            if sm:
                f["subsystem"] = (int(sm.group(1), 16), int(sm.group(2), 16))
        elif line.startswith("\tKernel driver in use:"):
            f["driver"] = line.split(":", 1)[1].strip()
        elif line.startswith("\tIOMMU group:"):
            f["iommu_group"] = int(line.split(":", 1)[1])
        elif line.startswith("\tNUMA node:"):
            f["numa_node"] = int(line.split(":", 1)[1])
        else:
            rm = re.match(r"^\tRegion (\d): (Memory at|I/O ports at) (\S+)(.*)$", line)
            if rm and "[virtual]" not in line:
                sz = SIZE_RE.search(line)
                bars[int(rm.group(1))] = {
                    "is_io": rm.group(2).startswith("I/O"),
                    "is_64bit": "64-bit" in rm.group(4),
                    "prefetchable": "non-prefetchable" not in rm.group(4) and "prefetchable" in rm.group(4),
                    "size": int(sz.group(1)) * UNITS[sz.group(2)] if sz else None,
                }
    f["bars"] = bars
    caps = _cap_sections(lines)
    f["caps"] = sorted((off, ext) for off, ext, _v, _t, _b in caps)
    for off, ext, _ver, title, body in caps:
        if not ext and title.startswith("Express"):
            f["pcie"] = _express(off, title, body)
        elif ext and title.startswith("Single Root I/O Virtualization"):
            f["sriov"] = _sriov(off, body)
        elif ext and title.startswith("Access Control Services"):
            f["acs"] = {
                "offset": off,
                "cap_flags": {k for k, v in _flags(_field(body, "ACSCap:")).items() if v},
                "ctl_flags": {k for k, v in _flags(_field(body, "ACSCtl:")).items() if v},
            }
        elif ext and title.startswith("Address Translation Service"):
            ctl = _field(body, "ATSCtl:")
            stu = re.search(r"Smallest Translation Unit: ([0-9a-f]+)", ctl)
            iqd = re.search(r"Invalidate Queue Depth: ([0-9a-f]+)", _field(body, "ATSCap:"))
            f["ats"] = {
                "offset": off,
                "enabled": _flags(ctl).get("Enable"),
                "stu": int(stu.group(1), 16) if stu else None,
                "invalidate_queue_depth": int(iqd.group(1), 16) if iqd else None,
            }
        elif ext and title.startswith("Advanced Error Reporting"):
            f["aer"] = {
                "offset": off,
                "uncorrectable_any": any(_flags(_field(body, "UESta:")).values()),
                "correctable_any": any(_flags(_field(body, "CESta:")).values()),
            }
    return f


def _express(off: int, title: str, body: list[str]) -> dict[str, Any]:
    vm = re.match(r"Express \(v(\d+)\) (.*?)(?:, MSI.*|, IntMsgNum.*| \(Slot.*)?$", title)
    port = (vm.group(2) if vm else "").strip()
    devcap, devctl, devsta = _field(body, "DevCap:"), _field(body, "DevCtl:"), _field(body, "DevSta:")
    lnkcap, lnksta, lnkctl = _field(body, "LnkCap:"), _field(body, "LnkSta:"), _field(body, "LnkCtl:")
    devcap2, devctl2 = _field(body, "DevCap2:"), _field(body, "DevCtl2:")
    lnkcap2, lnkctl2 = _field(body, "LnkCap2:"), _field(body, "LnkCtl2:")
    fc, fctl, fsta = _flags(devcap), _flags(devctl), _flags(devsta)
    p: dict[str, Any] = {
        "offset": off,
        "version": int(vm.group(1)) if vm else None,
        "port_type": PORT_TYPES.get(port, port),
        "max_payload_supported": _bytes_after(devcap, "MaxPayload"),
        "ext_tag_supported": fc.get("ExtTag"),
        "flr": fc.get("FLReset"),
        "relaxed_ordering": fctl.get("RlxdOrd"),
        "ext_tag": fctl.get("ExtTag"),
        "no_snoop": fctl.get("NoSnoop"),
        "max_payload": _bytes_after(devctl, "MaxPayload"),
        "max_read_request": _bytes_after(devctl, "MaxReadReq"),
        "corr_err": fsta.get("CorrErr"),
        "nonfatal_err": fsta.get("NonFatalErr"),
        "fatal_err": fsta.get("FatalErr"),
        "unsupp_req": fsta.get("UnsupReq"),
        "link_max_speed": _speed(lnkcap),
        "link_max_width": _width(lnkcap),
        "link_speed": _speed(lnksta),
        "link_width": _width(lnksta),
    }
    rcb = re.search(r"RCB (\d+) bytes", lnkctl)
    p["rcb_bytes"] = int(rcb.group(1)) if rcb else None
    if devcap2:
        c2, ctl2 = _flags(devcap2), _flags(devctl2)
        atom = re.search(r"AtomicOpsCap: (.*?)(?:$|\s[A-Z][a-zA-Z]+:)", devcap2)
        atom_flags = _flags(atom.group(1)) if atom else {}
        p.update(
            tag10_completer=c2.get("10BitTagComp"),
            tag10_requester=c2.get("10BitTagReq"),
            atomic32_completer=atom_flags.get("32bit"),
            atomic64_completer=atom_flags.get("64bit"),
            atomic128_completer=atom_flags.get("128bitCAS"),
            ido_request_enabled=ctl2.get("IDOReq"),
            ido_completion_enabled=ctl2.get("IDOCompl"),
            tag10_requester_enabled=ctl2.get("10BitTagReq"),
        )
        req = re.search(r"AtomicOpsCtl: ReqEn([+-])", devctl2)
        p["atomic_requester_enabled"] = (req.group(1) == "+") if req else None
    if lnkcap2:
        sp = re.search(r"Supported Link Speeds: ([0-9.]+)(?:-([0-9.]+))?GT/s", lnkcap2)
        p["supported_max_gts"] = float(sp.group(2) or sp.group(1)) if sp else None
    if lnkctl2:
        t = re.search(r"Target Link Speed: ([0-9.]+)GT/s", lnkctl2)
        p["target_speed_gts"] = float(t.group(1)) if t else None
    return p


def _sriov(off: int, body: list[str]) -> dict[str, Any]:
    ctl = _flags(_field(body, "IOVCtl:"))
    text = " ".join(line.strip() for line in body)

    def num(pattern: str, base: int = 10) -> int | None:
        m = re.search(pattern, text)
        return int(m.group(1), base) if m else None

    return {
        "offset": off,
        "vf_enable": ctl.get("Enable"),
        "ari_hierarchy": ctl.get("ARIHierarchy"),
        "initial_vfs": num(r"Initial VFs: (\d+)"),
        "total_vfs": num(r"Total VFs: (\d+)"),
        "num_vfs": num(r"Number of VFs: (\d+)"),
        "first_vf_offset": num(r"VF offset: (\d+)"),
        "vf_stride": num(r"stride: (\d+)"),
        "vf_device_id": num(r"Device ID: ([0-9a-f]+)", 16),
    }


def parse_vvv(text: str) -> dict[str, dict[str, Any]]:
    """BDF -> facts for every function in an ``lspci -D -nn -vvv`` listing."""
    return {bdf: parse_function(lines) for bdf, lines in split_functions(text).items()}


def parse_xxxx(text: str) -> dict[str, bytes]:
    """BDF -> config-space bytes from ``lspci -D -xxxx`` (as many as lspci could read)."""
    out: dict[str, bytearray] = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ", line)
        if m:
            cur = out.setdefault(m.group(1), bytearray())
            continue
        hm = re.match(r"^([0-9a-f]{2,3}): ((?:[0-9a-f]{2} ?)+)$", line)
        if hm and cur is not None:
            cur.extend(bytes.fromhex(hm.group(2).replace(" ", "")))
    return {k: bytes(v) for k, v in out.items()}
