"""Run every inspector over one source into a ``MachineInfo``; write bundles.

``inspect_source`` is the single pass (nvitop's ``as_snapshot`` idea, nvitop/api/device.py in
https://github.com/XuehaiPan/nvitop): PCI scan,
kernel, CUDA, NVML, GPUs, NICs, virtualization, topology, GPU peers - then everything downstream works
on the frozen result. The same function serves a live machine and a bundle, which is what
makes ``inspect --bundle`` give the live answer.

``collect_bundle`` runs that pass over a *recording* live source and saves exactly what was
read, plus the CUDA/NVML/verbs facts, as a ``.tar.gz`` (see ``gdrdiag.hw.bundle``).
"""

from __future__ import annotations

import platform
from typing import Union

from gdrdiag import __version__
from gdrdiag.errors import UserInputError
from gdrdiag.hw.bundle import BundleSource, LiveSource, write_bundle
from gdrdiag.inspect import gpu as gpu_mod
from gdrdiag.inspect import kernel as kernel_mod
from gdrdiag.inspect import nic as nic_mod
from gdrdiag.inspect import pci as pci_mod
from gdrdiag.inspect import peer as peer_mod
from gdrdiag.inspect import topology as topo_mod
from gdrdiag.inspect import virt as virt_mod
from gdrdiag.model.machine import MachineInfo

Source = Union[LiveSource, BundleSource]

# The most GPUs and RDMA devices a bundle may list. inspect builds a topology pair per GPU x RDMA
# device and a peer pair per two GPUs, so a few kilobytes naming thousands of devices would build
# millions; a real node has at most a few dozen GPUs, and RDMA devices up to its NICs' functions
# (SR-IOV VFs included), which the 256 inspect reads per machine already bounded.
MAX_GPUS = 64
MAX_RDMA_DEVICES = 256


def check_device_counts(gpus: int, rdma_devices: int, where: str) -> None:
    """UserInputError (one line, exit 2) when ``where`` lists more devices than a node has."""
    for count, limit, what in ((gpus, MAX_GPUS, "GPUs"), (rdma_devices, MAX_RDMA_DEVICES, "RDMA devices")):
        if count > limit:
            raise UserInputError(
                f"{where} lists {count} {what}, more than the {limit} a node can have: refused"
            )


def inspect_source(source: Source) -> MachineInfo:
    """All machine facts from ``source``; only a missing /sys/bus/pci raises (SysfsError)."""
    tree = source.tree
    pci, unknown = pci_mod.scan(tree)
    verbs = source.verbs()
    if not isinstance(verbs, dict):
        verbs = {}
    kernel = kernel_mod.inspect_kernel(tree, verbs)
    host = kernel_mod.inspect_host(tree)
    cuda_facts = source.cuda()
    cuda_devs, driver_version, cuda_unknown = gpu_mod.cuda_devices(cuda_facts)
    visible, visible_unknown = gpu_mod.visible_devices(cuda_facts)
    cuda_unknown = {**cuda_unknown, **visible_unknown}
    gpu_bdfs = [f.bdf for f in pci if virt_mod.is_gpu(f)]
    if isinstance(source, BundleSource):
        check_device_counts(len(gpu_bdfs), len(nic_mod.rdma_device_names(tree, verbs)), source.name)
    nvml = source.nvml(gpu_bdfs)
    if not isinstance(nvml, dict):
        nvml = {}
    gpus = gpu_mod.inspect_gpus(pci, cuda_devs, cuda_unknown, nvml)
    nics = nic_mod.inspect_nics(tree, pci, verbs)
    virt = virt_mod.inspect_virt(tree, pci, kernel, {g.bdf: g.nvml_virtualization_mode for g in gpus})
    topology = topo_mod.inspect_topology(pci, gpus, nics, virt)
    peers, peer_unknown = peer_mod.inspect_peers(cuda_facts, cuda_devs, gpus, pci, virt, nvml)
    euid = source.euid()
    unknown = dict(unknown)
    unknown.update(cuda_unknown)
    unknown.update(peer_unknown)
    if verbs.get("status") != "ok":
        unknown["verbs"] = str(verbs.get("reason") or "verbs facts unavailable")[:300]
    if nvml.get("status") != "ok":
        unknown["nvml"] = str(nvml.get("reason") or "NVML facts unavailable")[:300]
    privileged = None if euid is None else euid == 0
    if not privileged and any(
        f.config_bytes and f.config_bytes <= 64 and (f.config_size or 0) > 64 for f in pci
    ):
        unknown["registers"] = pci_mod.NEEDS_ROOT
    return MachineInfo(
        host=host,
        cuda_driver_version=driver_version,
        cuda_devices=cuda_devs,
        cuda_visible_devices=visible,
        source=source.name,
        privileged=privileged,
        pci=pci,
        gpus=gpus,
        nics=nics,
        virt=virt,
        kernel=kernel,
        topology=topology,
        peers=peers,
        unknown=unknown,
    )


def collect_bundle(out_path: str, *, replace: bool = True) -> tuple[MachineInfo, dict]:
    """Inspect this machine while recording every input, then save them at ``out_path``.

    ``replace=False``: fail (UserInputError) if something appeared at ``out_path`` meanwhile.
    """
    source = LiveSource(record=True)
    machine = inspect_source(source)
    summary = write_bundle(
        out_path,
        source,
        extra_meta={
            "tool_version": __version__,
            "python": platform.python_version(),
            "source": "gdrdiag collect",
        },
        replace=replace,
    )
    return machine, summary
