"""Catalogue entries of the UCX cause rules (:mod:`gdrdiag.diagnose.causes_ucx`).

Written in our own words; see :mod:`gdrdiag.diagnose.catalogue`.
"""

from __future__ import annotations

from gdrdiag.diagnose.catalogue_entry import E

UCX_FAQ = "https://openucx.readthedocs.io/en/master/faq.html"
UCX_GPU = UCX_FAQ + "#how-to-run-ucx-with-gpu-support"
UCX_PROTO = UCX_FAQ + "#how-can-i-tell-which-protocols-and-transports-are-being-used-for-communication"

ENTRIES = (
    E(
        "CAUSE-UCX-NO-CUDA-IPC",
        "causes",
        "FAIL when it leads its loss and explains half or more of a loss of half or more; WARN for a "
        "fair share; else INFO",
        "a GPU-to-GPU transfer through UCX (ucx_perftest with cuda memory on both sides) is below its "
        "GPUs' peer path and UCX's protocol tables (UCX_PROTO_INFO=y) show GPU memory pipelined through "
        "host buffers ('frag host': cuda_copy, then shared memory, CMA or TCP) and no cuda_ipc",
        "Between GPUs of one host UCX moves GPU memory with CUDA IPC: the receiver maps the sender's "
        "buffer and the copy engine copies over NVLink or PCIe peer-to-peer. Without the cuda_ipc "
        "transport (UCX_TLS leaves it out, the build lacks it, the processes do not share an IPC "
        "namespace or cannot see both GPUs) UCX copies every fragment into host memory and out again "
        "with the CPU in between: a few GB/s instead of hundreds.",
        "Leave cuda_ipc in UCX_TLS (unset UCX_TLS, or name cuda_ipc beside cuda_copy); check that this "
        "UCX has it (`ucx_info -d` lists a cuda_ipc transport); in containers run both processes in one IPC "
        "namespace (docker --ipc=host) with both GPUs visible to each.",
        UCX_GPU,
        UCX_PROTO,
    ),
    E(
        "MEASURE-UCX-PROTO",
        "measure",
        "WARN",
        "a GPU-to-GPU transfer through UCX is below its GPUs' peer path and the output has no UCX "
        "protocol table to say which transport carried it",
        "ucx_perftest's table says how fast, not how: CUDA IPC, a pipeline through host memory, TCP "
        "and another process on a GPU all look the same in it. UCX_PROTO_INFO=y prints the protocol and "
        "transport chosen for every message size.",
        "Run the same ucx_perftest again with UCX_PROTO_INFO=y on both sides and import that output.",
        UCX_PROTO,
    ),
)
