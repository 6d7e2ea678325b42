#!/usr/bin/env python3
"""Turn a lab plan's results into a committed test fixture machine (tests/fixtures/machines/).

Usage: scripts/lab/fixtures.py PLAN [RESULTS_DIR]      (PLAN: pcie -> lab_qemu_pcie, verbs -> lab_qemu_rxe)

Unpacks the bundle ``gdrdiag collect`` wrote in the guest, keeps the guest's own views next to
it under ``guest/`` (lspci -vvv/-tv/-xxxx text, the shell's sysfs listing) so tests can compare
gdrdiag's decoding with them, and records in ``meta.json`` that the capture came from a real
Linux kernel in a QEMU guest (which QEMU, which machine) rather than from a generator.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NAMES = {"pcie": "lab_qemu_pcie", "verbs": "lab_qemu_rxe"}
GUEST_FILES = ("lspci-vvv.txt", "lspci-tv.txt", "lspci-xxxx.txt", "sysfs-facts.txt", "rxe0-parent.txt")
MACHINES = {
    "pcie": "q35 + intel-iommu (DMA mode), 2 root ports, x3130 switch (upstream + 2 downstream), "
    "SR-IOV NVMe (PF + 2 VFs enabled in the guest) and an e1000e NIC behind the switch, "
    "Soft-RoCE rxe0 on the e1000e",
    "verbs": "pc (i440FX), one virtio-net NIC with Soft-RoCE rxe0 on it, no vIOMMU",
}


def main(argv: list[str]) -> int:
    """Write the fixture; print where."""
    if not argv or argv[0] not in NAMES:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    plan = argv[0]
    res = Path(argv[1]) if len(argv) > 1 else REPO / "out" / "lab" / plan
    bundle = res / f"bundle-{plan}.tar.gz"
    if not bundle.is_file():
        print(f"fixtures.py: {bundle} not found (run scripts/lab/run.sh {plan} first)", file=sys.stderr)
        return 1
    dest = REPO / "tests" / "fixtures" / "machines" / NAMES[plan]
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    with tarfile.open(bundle) as tar:
        tar.extractall(dest, **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))
    tops = [p for p in dest.iterdir() if p.is_dir()]
    if len(tops) == 1 and (tops[0] / "fs").is_dir():  # the bundle's single top folder
        for p in tops[0].iterdir():
            p.rename(dest / p.name)
        tops[0].rmdir()
    (dest / "guest").mkdir()
    for name in GUEST_FILES:
        if (res / name).is_file():
            shutil.copy(res / name, dest / "guest" / name)
    meta_path = dest / "meta.json"
    meta = json.loads(meta_path.read_text())
    qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True).stdout
    meta["fixture"] = NAMES[plan]
    meta["capture"] = {
        "how": "captured from a real Linux kernel in a QEMU guest by scripts/lab/run.sh "
        f"{plan} (gdrdiag collect as root inside the guest); not generated",
        "qemu": qemu.splitlines()[0] if qemu else "unknown",
        "machine": MACHINES[plan],
        "guest_views": "guest/: the guest's own lspci -D -nn -vvv, lspci -tv, lspci -D -xxxx and a "
        "shell listing of its sysfs, taken in the same boot",
    }
    meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
