"""Every "slow" threshold of the cause model, one per quantity, with the yardstick it divides by.

Thresholds only: where a yardstick depends on the machine, it is the path model's expectation for
that row (:mod:`gdrdiag.pathmodel`: *this* link, MaxPayload, MaxReadReq and size), read from the
row's Judgement, never a formula of its own here: a host with MaxPayload 128 moves fewer payload
bytes per wire byte than one with 256, and is healthy at a lower number. docs/diagnosis.md lists
these values and why.
"""

from __future__ import annotations

# RDMA WRITE into GPU memory / the same run's RDMA WRITE into host memory (same size, nearest
# size otherwise). Below SLOW the GPU path is slow; below FAIL more than half the bandwidth is lost.
GPU_VS_HOST_SLOW = 0.70
GPU_VS_HOST_FAIL = 0.50

# RDMA WRITE with IBV_ACCESS_RELAXED_ORDERING / without, same buffers and QPs. At or above
# RO_GAIN relaxed ordering matters on the path; at or above RO_GAIN_FAIL missing it halves bandwidth.
RO_GAIN = 1.10
RO_GAIN_FAIL = 2.0

# The copies judged against the model are large ones: per-call costs vanish at 64 MiB and above.
LARGE_COPY_BYTES = 64 << 20

# Copy-engine H2D / what the PCIe model says this link delivers with this MPS/MRRS (large copy).
# Healthy hosts measure 94-97% of the model; below this fraction something else costs bandwidth.
CE_OF_MODEL_HEALTHY = 0.90

# Working-set sweep: bandwidth at the largest table / at the smallest. Below this the path loses
# bandwidth as the working set grows (translation reach, NUMA), not to the link.
WORKING_SET_KEEPS = 0.85

# Sizes of a device row and its host reference that differ by more than this factor are still
# matched (nearest size), but the mismatch is stated in the evidence.
SIZE_MATCH_EXACT = 1.0
