// Stream gate used by gdrdiag's timing (bench/timing.py), after nvbandwidth's method:
// the gate kernel spins on a flag in mapped pinned host memory so that all timed work can be
// queued behind it; the host then releases the flag and launch/enqueue overhead is excluded
// from the GPU-timed interval. A cycle timeout guarantees the stream never hangs.
extern "C" __global__ void spin_gate(const volatile int *flag, long long timeout_cycles)
{
    const long long start = clock64();
    while (*flag == 0) {
        if (clock64() - start > timeout_cycles) {
            break;
        }
    }
}
