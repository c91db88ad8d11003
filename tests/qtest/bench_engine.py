#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The device engine alone, no guest (docs/performance.md, "Device engine"): QEMU with
-accel qtest and the vcx device, WQEs written straight into guest memory, one doorbell per
batch, and the executor's own host time taken from its vcx_xport_run trace (the sum over
the batch's runs), so the qtest protocol's cost stays out of the figure. Workloads:
  - RDMA WRITE, PA key to PA key, 64 B to 1 MiB;
  - SEND into an SRQ (one scatter entry per receive), 64 B to 64 KiB.
Host memcpy of the same block sizes into the same kind of 64 MiB window is measured in
the same run (host_memcpy.py), so the engine is reported against the host it runs on.
Prints one line per measurement,
  BENCH,<test>,<what>,<value>,<unit>
and a table. Usage: bench_engine.py [--quick]   (VCX_QEMU names the binary)
"""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import BAR0  # noqa: E402
from vcx_verbs import P, Verbs, dseg, raddr, xport_runs, bswap64  # noqa: E402
from host_memcpy import memcpy_gbps  # noqa: E402

SEND, WRITE = 0x0a, 0x08
KiB, MiB = 1 << 10, 1 << 20
QUICK = "--quick" in sys.argv
LOG_SQ = 12 if QUICK else 15             # WQEs per batch: 4096 or 32768
BYTES_PER_BATCH = (64 if QUICK else 512) * MiB


def ring(v, qp, n):
    qp.sq_pi += n
    v.qt.memwrite(qp.dbr + 4, struct.pack(">I", qp.sq_pi & 0xffff))
    v.qt.writeq(BAR0 + qp.uar * 4096 + 0x800,
                bswap64((qp.sq_pi & 0xffff) << 40 | qp.qpn << 8))


def batch_ns(v, log0):
    """Sum of host ns of the executor runs traced since log offset log0."""
    runs = xport_runs(v.qt.log()[log0:])
    return sum(r[3] for r in runs), len(runs)


def fill_sq(qp, n, make):
    sq = bytearray(64 * n)
    for i in range(n):
        w = make(i)
        sq[64 * i:64 * i + len(w)] = w
    return sq


def ctrl(qp, i, op, ds):
    # control segment of WQE i of the batch, no CQE (run_batch signals the last one)
    return struct.pack(">IIBBBBI", ((qp.sq_pi + i) & 0xffff) << 8 | op, qp.qpn << 8 | ds,
                       0, 0, 0, 0, 0)


def run_batch(v, qp, wqes, n):
    """Write n WQEs at SQ index 0 (signal only the last), ring once, wait for the end:
    (WQEs, executor host ns, runs, wall seconds)."""
    assert qp.sq_pi % (1 << LOG_SQ) == 0
    wqes[64 * (n - 1) + 11] = P["VCX_WQE_CE_CQE"]     # fm_ce_se of the last control segment
    v.qt.memwrite(qp.sq_addr(0), bytes(wqes))
    log0 = len(v.qt.log())
    t0 = time.monotonic()
    ring(v, qp, n)
    v.settle(timeout=600)
    wall = time.monotonic() - t0
    ns, runs = batch_ns(v, log0)
    return n, ns, runs, wall


def bench_write(v, pa, a, size, src, dst):
    n = max(1, min(1 << LOG_SQ, BYTES_PER_BATCH // size))
    slots = max(1, (64 * MiB) // size)
    wqes = fill_sq(a, n, lambda i: ctrl(a, i, WRITE, 3) +
                   raddr(dst + (i % slots) * size, pa) + dseg(src, size, pa))
    return run_batch(v, a, wqes, n)


def bench_send_srq(v, pa, a, srq, size, src, dst):
    n = min(srq_size(srq), 1 << LOG_SQ, max(1, BYTES_PER_BATCH // size))
    slots = max(1, (64 * MiB) // size)
    for i in range(n):
        srq.post([(dst + (i % slots) * size, size, pa)], ring=False)
    v.qt.memwrite(srq.dbr, struct.pack(">I", srq.counter & 0xffff))
    wqes = fill_sq(a, n, lambda i: ctrl(a, i, SEND, 2) + dseg(src, size, pa))
    return run_batch(v, a, wqes, n)


def srq_size(srq):
    return 1 << srq.log_size


def fresh():
    """A new device for each workload: SQ counters start at 0, the trace log is short."""
    v = Verbs(mem="1G", trace="vcx_xport_run")
    pd = v.alloc_pd()
    pa = v.create_mkey(pd, 0, 0, mode=0, length64=True)
    cq = v.create_cq(log_size=15, big=True)
    return v, pd, pa, cq


def main():
    rows = []
    sizes_w = [64, 4 * KiB, 64 * KiB, MiB] if QUICK else [64, 512, 4 * KiB, 64 * KiB, MiB]
    sizes_s = [64, 4 * KiB, 64 * KiB]
    for kind, sizes in (("write", sizes_w), ("send_srq", sizes_s)):
        for size in sizes:
            v, pd, pa, cq = fresh()
            try:
                src = v.alloc(max(size, 4 * KiB))
                dst = v.alloc(64 * MiB + size, align=MiB)
                v.qt.memwrite(src, bytes((i * 13) & 0xff for i in range(min(size, 4096))))
                v.qt.memset(dst, 64 * MiB + size, 0)
                if kind == "write":
                    a = v.create_qp("RC", pd, cq, cq, log_sq=LOG_SQ)
                    b = v.create_qp("RC", pd, cq, cq)
                    v.connect(a, b.qpn)
                    v.connect(b, a.qpn)
                    n, ns, runs, wall = bench_write(v, pa, a, size, src, dst)
                else:
                    srq = v.create_srq(pd, log_size=12, stride=32)
                    a = v.create_qp("RC", pd, cq, cq, log_sq=LOG_SQ)
                    b = v.create_qp("RC", pd, cq, cq, srq=srq)
                    v.connect(a, b.qpn)
                    v.connect(b, a.qpn)
                    n, ns, runs, wall = bench_send_srq(v, pa, a, srq, size, src, dst)
                got = v.qt.memread(dst + (n - 1) % max(1, (64 * MiB) // size) * size,
                                   min(size, 4096))
                want = bytes((i * 13) & 0xff for i in range(min(size, 4096)))
                if got != want:
                    sys.exit(f"FAIL: {kind} {size}: payload of the last WQE differs")
                if not ns or not runs:
                    sys.exit(f"FAIL: {kind} {size}: no vcx_xport_run trace")
            finally:
                v.close()
            gbps = n * size / ns
            mps = n / ns * 1e3
            cp = memcpy_gbps(size, QUICK)
            rows.append((kind, size, n, runs, gbps, mps, cp, wall))
            name = f"engine_{kind}_{size}"
            print(f"BENCH,{name},vcx,{gbps:.3f},GB/s")
            print(f"BENCH,{name},vcx,{mps:.3f},Mmsg/s")
            print(f"BENCH,{name},memcpy,{cp:.3f},GB/s")
            sys.stdout.flush()
    print()
    print(f"{'workload':<10} {'size':>8} {'WQEs':>6} {'runs':>6} {'GB/s':>8} "
          f"{'Mmsg/s':>8} {'memcpy GB/s':>12} {'vs memcpy':>10} {'wall s':>7}")
    for kind, size, n, runs, gbps, mps, cp, wall in rows:
        print(f"{kind:<10} {size:>8} {n:>6} {runs:>6} {gbps:>8.2f} {mps:>8.3f} "
              f"{cp:>12.2f} {gbps / cp:>10.2f} {wall:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
