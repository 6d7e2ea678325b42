"""What a bench asks of this machine before anything runs: the NUMA node, the GPU, the RDMA device.

The CLI turns options into a bench's config; the questions about the machine those options raise
are asked here, in the bench layer, so that no command module reaches into ``hw/`` for them:

- :func:`check_numa`: ``--numa N`` names a node this machine has (each config's ``check_numa``
  asks it; gather-bench asks it before its config exists, as its first check);
- :func:`gpu_missing`: whether CUDA opens a GPU (mr-bench plans its steps and its soft default
  kinds by it);
- :func:`probe_capabilities`: which cases of a bench can run here (``--list``'s "here" column).
"""

from __future__ import annotations

from typing import Optional

from gdrdiag.bench.cases import Capabilities
from gdrdiag.errors import GdrdiagError, NotSupported
from gdrdiag.model.words import NumaRequest


def check_numa(request: NumaRequest) -> None:
    """Refuse ``--numa N`` for a node this machine does not have (UserInputError: one line, exit 2).

    Asked before the progress line and before anything is measured, so a mistyped node is one line
    at once; ``auto`` and ``none`` always pass.
    """
    from gdrdiag.hw import placement

    placement.check_request(request)


def gpu_missing(ordinal: int) -> Optional[str]:
    """Why CUDA device ``ordinal`` cannot be opened here (no driver, no such GPU); None when it opens."""
    from gdrdiag.hw import cuda

    try:
        cuda.get_device(ordinal)
    except NotSupported as exc:
        return exc.reason
    return None


def probe_capabilities(rdma_provider: Optional[str] = None) -> Capabilities:
    """Whether a GPU, a pair of GPUs and (for mr-bench, by ``rdma_provider``) an RDMA device are here.

    Each missing one carries its reason, which ``--list`` shows beside the cases it WAIVES. The soft
    provider needs no RDMA device, so none is looked for with it.
    """
    from gdrdiag.hw import cuda

    no_gpu = None
    pair_missing = None
    try:
        cuda.init()
        count = cuda.device_count()
        if count < 1:
            no_gpu = "no CUDA device"
        elif count < 2:
            pair_missing = f"needs two or more GPUs; the CUDA driver sees {count}"
    except GdrdiagError as exc:
        no_gpu = getattr(exc, "reason", None) or str(exc)
    rdma_missing = None
    if rdma_provider is not None and rdma_provider != "soft":
        from gdrdiag.hw import verbs_providers

        try:
            verbs_providers.list_device_names()
        except GdrdiagError as exc:
            rdma_missing = getattr(exc, "reason", None) or str(exc)
    return Capabilities(gpu_missing=no_gpu, rdma_missing=rdma_missing, gpu_pair_missing=pair_missing)
