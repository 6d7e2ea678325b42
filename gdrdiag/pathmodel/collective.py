"""NCCL's ring kernels on one node: the share of a GPU's NVLink a ring collective can fill.

Pure. nccl-tests' busbw counts the bytes each GPU sends one way (nccl-tests doc/PERFORMANCE.md), so
a collective whose every step pushed a chunk over NVLink would reach the link's SM rate
(:data:`gdrdiag.pathmodel.peer.SM_NVLINK_EFFICIENCY`). NCCL's ring kernels do not quite: each
channel's thread block runs a chunk's steps one after another (NVIDIA/nccl src/device/all_gather.h,
reduce_scatter.h, all_reduce.h, ``runRing``). AllGather and ReduceScatter push the chunk to the next
GPU in n-1 steps (``send``, then ``recvCopySend`` / ``recvReduceSend``), AllReduce in 2(n-1); the
last step (``recv`` / ``recvReduceCopy``) only copies the chunk out of NCCL's receive buffer into the
user's buffer, and the link waits meanwhile. So the link is busy ``steps / (steps + c)`` of the time,
``c`` being the copy-out step's time over a link step's.

``RING_COPY_OUT_STEP`` (c) is measured, not derived: fitted on 2-rank all_gather on three 2 x H200
pairs (0.70-0.72 of the link), it predicts 2-rank reduce_scatter (0.70-0.71 measured), 4-rank
all_gather and reduce_scatter (0.88 on 4 x H100 and on 4 x H200), 2-rank all_reduce (0.85-0.86) and
4-rank all_reduce (0.94-0.95) within 0.03 (docs/benchmarks.md, "NCCL's ring copy-out step").
Registering the buffers (nccl-tests ``-R 1``) lets the peer write into the user's buffer, and 2-rank
all_gather rises from 0.73 to 0.87 of the link: the lost time is the copy. On 8 x H100 (NV18 through
NVSwitch) it predicts 0.945 x 371 = 351 GB/s for all_gather and 361 for all_reduce; NCCL's maintainer
calls ~360 GB/s busbw for both "exactly what we'd expect on H100"
(https://github.com/NVIDIA/nccl-tests/issues/326).

Only NVLink paths carry the step: over a PCIe peer path or through host memory a link step takes
several times longer than a copy in the GPU's own memory, and the copy-out costs a few per cent.
Broadcast and Reduce pipeline one step per GPU along a chain, and sendrecv and alltoall use NCCL's
point-to-point channels (send and receive at once): none of them has the step.
"""

from __future__ import annotations

from typing import Optional

# The copy-out step's time over one link step's, on NVLink at NCCL's default channel count (above).
RING_COPY_OUT_STEP = 0.41

# Link steps per chunk for n ranks, per collective whose ring kernel ends in a copy-out step.
_RING_LINK_STEPS = {
    "all_gather": lambda n: n - 1,
    "reduce_scatter": lambda n: n - 1,
    "all_reduce": lambda n: 2 * (n - 1),
}


def ring_link_share(collective: Optional[str], ranks: Optional[int]) -> Optional[tuple[float, str]]:
    """(share of the link a ring collective fills, why in words), or None where it has no copy-out step."""
    steps_of = _RING_LINK_STEPS.get(collective or "")
    if steps_of is None or ranks is None or ranks < 2:
        return None
    steps = steps_of(ranks)
    share = steps / (steps + RING_COPY_OUT_STEP)
    return (
        share,
        f"NCCL's ring {collective} on {ranks} ranks: {steps} link step(s) per chunk, then a copy out of "
        f"its receive buffer at {RING_COPY_OUT_STEP} of a step: x {share:.3f}",
    )
