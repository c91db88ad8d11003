#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Host memcpy, the yardstick of the benchmarks (docs/performance.md): one SIZE-byte block
copied into consecutive slots of a 64 MiB window, 1 GiB in all (256 MiB quick). A slice
copy is one memmove; its per-call cost weighs on small blocks, so those figures are a
floor. With warm, one untimed pass over the window first faults its pages in.
Used by bench_engine.py and, as `host_memcpy.py SIZE [--quick] [--warm]` printing MB/s,
by `./vcx bench`.
"""
import os
import sys
import time

MiB = 1 << 20


def memcpy_gbps(size, quick=False, warm=False):
    window = 64 * MiB
    slots = max(1, window // size)
    src = bytearray(os.urandom(size))
    dst = bytearray(window + size)
    view_s, view_d = memoryview(src), memoryview(dst)
    reps = max(slots, (256 if quick else 1024) * MiB // size)
    if warm:
        for i in range(slots):
            view_d[i * size:(i + 1) * size] = view_s
    t0 = time.perf_counter()
    for i in range(reps):
        off = (i % slots) * size
        view_d[off:off + size] = view_s
    dt = time.perf_counter() - t0
    assert view_d[:size] == src
    return size * reps / dt / 1e9


if __name__ == "__main__":
    print(f"{memcpy_gbps(int(sys.argv[1]), '--quick' in sys.argv, '--warm' in sys.argv) * 1e3:.0f}")
