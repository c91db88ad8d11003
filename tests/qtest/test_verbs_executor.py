#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The transport executor: a bottom half that drains the run queue under a budget (64
WQEs, 256 KiB a run) and resumes large messages in later runs; the SQ doorbell's own
slice (16 WQEs, 64 KiB) inside its MMIO write: four small SENDs rung at once complete
there, and so does a 64 KiB WRITE with the 16-byte SEND after it (a ULP's data and answer:
a turn that spent its bytes may start one more WQE with a 4 KiB allowance); of the big
batch the slice moves the first 64 KiB WRITE and 4 KiB of the second, and the executor
takes the rest.

One doorbell for 32,768 RDMA WRITEs (PA key to PA key, 64 KiB each and 1 MiB every
1024th, 2 GiB in all over one repeated source region into a 256 MiB window): the qtest
writeq returns at once, a following qtest command and a QMP command are answered while
the work is still going on, payload bytes of WQEs sampled across the range while it runs
match their source, and at the end every WQE has completed exactly once and in order
(32,768 CQEs, the CQ's producer counter at 32,768), the last writer of every window slot
left its bytes; the trace shows no run over its budget and every 1 MiB WRITE spanning at
least four runs. The RNR NAK timer: value 0 is 655.36 ms (IBTA table 45), and 1, 14, 31.
Objects destroyed or reset while a 64 MiB message is between two runs: the rkey
(WRITE: remote operational error, memory written only up to where it stopped), the lkey
of a SEND (the responder's consumed receive WQE is flushed once), the responder's rkey
of a READ, the responder QP (RC retries, then transport retry exceeded, once), the
requester to ERR (its WQE flushed once; the responder takes a new message), the requester
reset and reconnected (the responder reuses the receive WQE the lost message consumed),
the responder to ERR (its receive WQEs flushed once, in order), the requester destroyed,
a second sender cutting in (out of sequence), a force-close TEARDOWN_HCA and an FLR from
the CPU: QEMU survives, every status sane."""
import os
import random
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, H, BAR0, get  # noqa: E402
from vcx_verbs import P, Verbs, dseg, inline, raddr, run_isolated, xport_runs  # noqa: E402
from vcx_verbs import bswap64, pd_buf_key_cq  # noqa: E402
from vcx_verbs import cqe_tuple as f  # noqa: E402
import re  # noqa: E402

t = Tap()
SEND, WRITE, READ = 0x0a, 0x08, 0x10
REQ_ERR, RESP_ERR, FLUSH = 0xd, 0xe, 0x05
RUN_WQES, RUN_BYTES = 64, 256 << 10
SLICE_WQES, SLICE_BYTES = 16, 64 << 10     # the SQ doorbell's own slice
TAIL_BYTES = 4 << 10            # what a turn that spent its bytes may still start a WQE with
KiB, MiB = 1 << 10, 1 << 20
ACK_T = 4096 << 14              # local ACK timeout of connect() (ack_timeout 14), ns


def diag(msg):
    print("# " + msg, flush=True)


def pa_key(v, pd):
    return v.create_mkey(pd, 0, 0, mode=0, length64=True)


def pair(v, pd, cq, log_sq=4, **kw):
    a = v.create_qp("RC", pd, cq, cq, log_sq=log_sq)
    b = v.create_qp("RC", pd, cq, cq)
    v.connect(a, b.qpn, **kw)
    v.connect(b, a.qpn, **kw)
    return a, b


def query_cq(v, cq):
    r = v.cmd("QUERY_CQ", out_len=0x120, fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)])
    return get(r.out[0x10:0x50], P["VCX_CQC_PRODUCER_COUNTER"])


def ring_doorbell(qp):
    """The SQ doorbell alone (doorbell record already written), timed."""
    t0 = time.monotonic()
    qp.dev.qt.writeq(BAR0 + qp.uar * 4096 + 0x800, bswap64((qp.sq_pi & 0xffff) << 40 |
                                                           qp.qpn << 8))
    return time.monotonic() - t0


# -------------------------------------------------------------------------------------
# one doorbell, 32,768 large WRITEs
# -------------------------------------------------------------------------------------

N = 32768
SLOTS = 256                     # destination window: 256 slots of 1 MiB


def wqe_len(i):
    return MiB if i % 1024 == 1023 else 64 * KiB


def wqe_src(i):
    return (i % 61) * 4 * KiB   # offset into the repeated source region


def case_big_doorbell(v):
    pd = v.alloc_pd()
    pa = pa_key(v, pd)
    cq = v.create_cq(log_size=15, big=True)
    a, b = pair(v, pd, cq, log_sq=15)
    src = v.alloc(61 * 4 * KiB + MiB)
    dst = v.alloc(SLOTS * MiB, align=MiB)
    rnd = random.Random(7)
    pattern = bytes(rnd.getrandbits(8) for _ in range(61 * 4 * KiB + MiB))
    for off in range(0, len(pattern), MiB):
        v.qt.memwrite(src + off, pattern[off:off + MiB])
    v.qt.memset(dst, SLOTS * MiB, 0)        # touch the window first: host page faults
    sq = bytearray(64 * N)
    total = 0
    for i in range(N):
        w = struct.pack(">IIBBBBI", (i & 0xffff) << 8 | WRITE, a.qpn << 8 | 3, 0, 0, 0,
                        P["VCX_WQE_CE_CQE"], 0)
        w += raddr(dst + (i % SLOTS) * MiB, pa) + dseg(src + wqe_src(i), wqe_len(i), pa)
        sq[64 * i:64 * i + len(w)] = w
        total += wqe_len(i)
    v.qt.memwrite(a.sq_addr(0), sq)
    a.sq_pi = N
    v.qt.memwrite(a.dbr + 4, struct.pack(">I", N & 0xffff))
    v.settle()
    log0 = len(v.qt.log())
    runs0 = v.runs()

    def done(k):                # CQE k written?
        return cq.entry(k)[0x3f] >> 4 != 0xf

    def progress():             # CQEs written so far (they are written in order)
        lo, hi = 0, N
        while lo < hi:
            mid = (lo + hi) // 2
            if done(mid):
                lo = mid + 1
            else:
                hi = mid
        return lo

    start = time.monotonic()
    dt_db = ring_doorbell(a)
    t1 = time.monotonic()
    last_done = done(N - 1)
    dt_cmd = time.monotonic() - t1
    t2 = time.monotonic()
    st = v.d.state()
    dt_qmp = time.monotonic() - t2
    t.ok(dt_db < 0.05, "one SQ doorbell for %d WRITEs (%d MiB) returns in %.0f us" %
         (N, total >> 20, dt_db * 1e6))
    t.ok(not last_done, "the next qtest command (a CQE read) is answered in %.0f us, "
         "before the work is done" % (dt_cmd * 1e6))
    t.ok(int(st["xport_queued"]) >= 1 and int(st["xport_runs"]) > runs0,
         "QMP (qom-get state) answered in %.1f ms while the executor works (xport_queued "
         "%s, %d runs so far)" % (dt_qmp * 1e3, st["xport_queued"],
                                  int(st["xport_runs"]) - runs0))
    samples, bad = [], []
    while True:
        k = progress()
        if k == N:
            break
        if k:
            m = k - 1           # the last WQE completed: check it before it is overwritten
            at, n = dst + (m % SLOTS) * MiB, wqe_len(m)
            got = v.qt.memread(at, 256) + v.qt.memread(at + n - 256, 256)
            want = pattern[wqe_src(m):wqe_src(m) + 256] + \
                pattern[wqe_src(m) + n - 256:wqe_src(m) + n]
            if progress() < m + SLOTS:      # slot not rewritten meanwhile: a valid sample
                samples.append(m)
                if got != want:
                    bad.append(m)
        if time.monotonic() - start > 120:
            break
        time.sleep(0.01)
    elapsed = time.monotonic() - start
    t.eq(progress(), N, "all %d WQEs completed, after %.2f s (%.2f GB/s)" %
         (N, elapsed, total / elapsed / 1e9))
    t.ok(len(samples) >= 5 and not bad and max(samples) - min(samples) > N // 4,
         "payload of WQEs sampled while the executor ran matches their source "
         "(%d samples from WQE %d to %d)" % (len(samples), min(samples or [0]),
                                             max(samples or [0])), bad[:10])
    ring = v.qt.memread(cq.base, 64 * N)
    cqes = [f(ring[64 * i:64 * i + 64], "opcode", "sop", "wqe_counter", "byte_cnt", "qpn")
            for i in range(N)]
    want = [(0, WRITE, i, wqe_len(i), a.qpn) for i in range(N)]
    t.ok(cqes == want, "every WQE completed exactly once, in order: REQ CQEs with "
         "wqe_counter 0..%d and its byte count" % (N - 1),
         next(((i, c, w) for i, (c, w) in enumerate(zip(cqes, want)) if c != w), None))
    t.eq(query_cq(v, cq), N, "the CQ's producer counter is %d: no CQE more" % N)
    bad = []
    for m in range(N - SLOTS, N):
        at, n = dst + (m % SLOTS) * MiB, wqe_len(m)
        step = n if m % 32 == 0 else 4 * KiB    # every 32nd slot in full
        for off in ((0, n - step) if step < n else (0,)):
            if v.qt.memread(at + off, step) != pattern[wqe_src(m) + off:
                                                       wqe_src(m) + off + step]:
                bad.append(m)
    t.eq(bad, [], "each window slot holds its last writer's bytes (WQEs %d..%d)" %
         (N - SLOTS, N - 1))
    log = v.qt.log()[log0:]
    sl = doorbell_slices(log)
    t.eq(sl[:1], [(a.qpn, 2, 64 * KiB + TAIL_BYTES, 1)], "the doorbell's own slice moved "
         "the first 64 KiB WRITE inside the MMIO write (its budget: %d WQEs, %d KiB), then "
         "%d KiB of the second (the tail allowance) and left the rest to the executor" %
         (SLICE_WQES, SLICE_BYTES >> 10, TAIL_BYTES >> 10))
    runs = [r for r in xport_runs(log) if r[1] or r[2]]
    ns = sorted(r[3] for r in runs)
    t.ok(runs and max(r[1] for r in runs) <= RUN_WQES and
         max(r[2] for r in runs) <= RUN_BYTES + TAIL_BYTES and
         len(runs) >= total // (RUN_BYTES + TAIL_BYTES),
         "no run started more than %d WQEs or moved more than %d KiB and the %d KiB tail "
         "allowance: %d runs" % (RUN_WQES, RUN_BYTES >> 10, TAIL_BYTES >> 10, len(runs)))
    diag("run host time: median %d us, 90%% %d us, 99%% %d us, max %d us (outliers: "
         "host page faults and scheduling)" % (ns[len(ns) // 2] // 1000,
                                               ns[len(ns) * 9 // 10] // 1000,
                                               ns[len(ns) * 99 // 100] // 1000,
                                               ns[-1] // 1000))
    big = {int(m.group(1)) for m in re.finditer(
        r"vcx_xfer_open .* message (\d+): %d bytes to move" % MiB, log)}
    pauses = {}
    for m in re.finditer(r"vcx_xfer_pause QP 0x[0-9a-f]+ message (\d+):", log):
        pauses[int(m.group(1))] = pauses.get(int(m.group(1)), 0) + 1
    t.ok(len(big) == N // 1024 and all(pauses.get(s, 0) >= 3 for s in big),
         "each of the %d 1 MiB WRITEs was moved over at least 4 runs (paused %s times)" %
         (len(big), sorted({pauses.get(s, 0) for s in big})))


# -------------------------------------------------------------------------------------
# the SQ doorbell's slice: small work completes inside the doorbell's MMIO write
# -------------------------------------------------------------------------------------

def doorbell_slices(log):
    """The vcx_xport_doorbell_slice trace lines as (qpn, WQEs, bytes, more)."""
    return [(int(m.group(1), 16), int(m.group(2)), int(m.group(3)), int(m.group(4)))
            for m in re.finditer(r"vcx_xport_doorbell_slice QP 0x([0-9a-f]+): (\d+) WQEs, "
                                 r"(\d+) bytes inside its SQ doorbell write, more (\d)", log)]


def case_doorbell_slice(v):
    pd, buf, key, cq = pd_buf_key_cq(v)
    a, b = pair(v, pd, cq)
    for i in range(4):
        b.post_recv([(buf + 0x100 * i, 0x100, key)])
    v.settle()
    log0 = len(v.qt.log())
    msgs = [bytes([0x40 + i]) * (100 + i) for i in range(4)]
    for i, m in enumerate(msgs):
        v.qt.memwrite(buf + 0x1000 + 0x100 * i, m)
        a.post_send(SEND, dseg(buf + 0x1000 + 0x100 * i, len(m), key), ring=i == 3)
    sl = doorbell_slices(v.qt.log()[log0:])
    t.eq(sl, [(a.qpn, 4, sum(map(len, msgs)), 0)], "one doorbell for 4 SENDs: all four "
         "executed inside the doorbell's MMIO write, nothing left for the executor")
    got = sorted(f(e, "qpn", "opcode", "byte_cnt") for e in cq.poll_all())
    want = sorted([(a.qpn, 0, len(m)) for m in msgs] + [(b.qpn, 2, len(m)) for m in msgs])
    t.eq(got, want, "4 requester and 4 responder CQEs")
    t.ok(all(v.qt.memread(buf + 0x100 * i, len(m)) == m for i, m in enumerate(msgs)),
         "the payloads landed in the receive buffers")

    # A ULP's data and answer in one doorbell (NVMe over RDMA's target: the read data by
    # RDMA WRITE, then the response capsule by SEND): the WRITE spends the slice's bytes
    # to the byte, and the SEND still runs inside the doorbell write.
    data = v.alloc(64 * KiB)
    sink = v.alloc(64 * KiB)
    dkey = v.create_mkey(pd, data, 64 * KiB)
    skey = v.create_mkey(pd, sink, 64 * KiB)
    payload = bytes(random.Random(7).getrandbits(8) for _ in range(64 * KiB))
    v.qt.memwrite(data, payload)
    answer = b"nvme-completion!"
    v.qt.memwrite(buf + 0x1800, answer)
    b.post_recv([(buf + 0x400, 0x100, key)])
    v.settle()
    log0 = len(v.qt.log())
    a.post_send(WRITE, raddr(sink, skey) + dseg(data, 64 * KiB, dkey), ring=False)
    a.post_send(SEND, dseg(buf + 0x1800, len(answer), key))
    sl = doorbell_slices(v.qt.log()[log0:])
    t.eq(sl, [(a.qpn, 2, 64 * KiB + len(answer), 0)], "one doorbell for a 64 KiB WRITE and "
         "a 16-byte SEND: both inside the doorbell's MMIO write (the SEND started on the "
         "tail allowance), nothing left for the executor")
    got = sorted(f(e, "qpn", "opcode", "byte_cnt") for e in cq.poll_all())
    t.eq(got, sorted([(a.qpn, 0, 64 * KiB), (a.qpn, 0, len(answer)), (b.qpn, 2, len(answer))]),
         "the WRITE's and the SEND's requester CQEs and the SEND's responder CQE")
    t.ok(v.qt.memread(sink, 64 * KiB) == payload and
         v.qt.memread(buf + 0x400, len(answer)) == answer,
         "the WRITE's 64 KiB and the SEND's bytes landed")


# -------------------------------------------------------------------------------------
# the RNR NAK timer (IBTA 9.7.5.2.8, table 45)
# -------------------------------------------------------------------------------------

def case_rnr_timer(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x1000)
    key = v.create_mkey(pd, buf, 0x1000)
    for value, ns in ((0, 655_360_000), (1, 10_000), (14, 1_280_000), (31, 491_520_000)):
        cq = v.create_cq()
        a, b = pair(v, pd, cq, min_rnr=value, rnr_retry=1)
        a.post_send(SEND, inline(b"rnr"))
        b.post_recv([(buf, 64, key)])
        v.qt.clock_step(ns - 1000)
        early = cq.poll_all()
        v.qt.clock_step(1000)
        got = sorted(f(e, "qpn", "opcode") for e in cq.poll_all())
        t.ok(early == [] and got == sorted([(a.qpn, 0), (b.qpn, 2)]),
             "min_rnr_nak %d: the retry after the RNR NAK comes after %.2f ms, not before"
             % (value, ns / 1e6), (early, got))


# -------------------------------------------------------------------------------------
# objects destroyed or reset between two runs of a message
# -------------------------------------------------------------------------------------

BIG = 64 * MiB


class Mid:
    """Shared regions: src (0xa5) and dst (zeroed before each case), keys over them."""

    def __init__(self, v):
        self.pd = v.alloc_pd()
        self.pa = pa_key(v, self.pd)
        self.src = v.alloc(BIG, align=MiB)
        self.dst = v.alloc(BIG, align=MiB)
        v.qt.memset(self.src, BIG, 0xa5)

    def fresh(self, v):
        v.qt.memset(self.dst, BIG, 0)
        return v.create_cq(log_size=6)

    def partial(self, v):
        """dst written at its start, not at its end: the message stopped midway."""
        return (v.qt.memread(self.dst, 64) == b"\xa5" * 64 and
                v.qt.memread(self.dst + BIG - 64, 64) == bytes(64))


def cmd_ok(r, what):
    assert r.status == 0, "%s: status 0x%x syndrome 0x%x" % (what, r.status, r.syndrome)


def cqes(cq):
    return [f(e, "qpn", "opcode", "syndrome", "wqe_counter") for e in cq.poll_all()]


def mid_destroy_rkey(v, m):
    cq = m.fresh(v)
    a, b = pair(v, m.pd, cq)
    rkey = v.create_mkey(m.pd, m.dst, BIG, key=0x31)
    a.post_send(WRITE, raddr(m.dst, rkey) + dseg(m.src, BIG, m.pa))
    cmd_ok(v.cmd("DESTROY_MKEY", fields=[(P["VCX_DESTROY_MKEY_IN_MKEY_INDEX"],
                                          rkey >> 8)]), "DESTROY_MKEY")
    v.settle()
    t.eq(cqes(cq), [(a.qpn, REQ_ERR, 0x14, 0)], "rkey destroyed mid-WRITE: one REQ_ERR, "
         "remote operational error (0x14)")
    t.ok(m.partial(v), "the WRITE stopped where the key went: start written, end not")
    t.eq((v.qp_state(a), v.qp_state(b)), (6, 6), "requester and responder in ERR")


def mid_destroy_lkey(v, m):
    cq = m.fresh(v)
    a, b = pair(v, m.pd, cq)
    lkey = v.create_mkey(m.pd, m.src, BIG, key=0x32)
    b.post_recv([(m.dst, BIG, m.pa)])
    b.post_recv([(m.dst, 64, m.pa)])
    a.post_send(SEND, dseg(m.src, BIG, lkey))
    cmd_ok(v.cmd("DESTROY_MKEY", fields=[(P["VCX_DESTROY_MKEY_IN_MKEY_INDEX"],
                                          lkey >> 8)]), "DESTROY_MKEY")
    v.settle()
    t.eq(sorted(cqes(cq)), sorted([(a.qpn, REQ_ERR, 0x14, 0), (b.qpn, RESP_ERR, FLUSH, 0),
                                   (b.qpn, RESP_ERR, FLUSH, 1)]),
         "lkey destroyed mid-SEND: REQ_ERR 0x14; the responder fails and flushes the "
         "receive WQE the message used and the next one, once each")
    t.ok(m.partial(v), "the SEND stopped where the key went")


def mid_destroy_read_rkey(v, m):
    cq = m.fresh(v)
    a, b = pair(v, m.pd, cq)
    rkey = v.create_mkey(m.pd, m.src, BIG, key=0x33)
    a.post_send(READ, raddr(m.src, rkey) + dseg(m.dst, BIG, m.pa))
    cmd_ok(v.cmd("DESTROY_MKEY", fields=[(P["VCX_DESTROY_MKEY_IN_MKEY_INDEX"],
                                          rkey >> 8)]), "DESTROY_MKEY")
    v.settle()
    t.eq(cqes(cq), [(a.qpn, REQ_ERR, 0x14, 0)], "responder's rkey destroyed mid-READ: "
         "REQ_ERR remote operational error (0x14), once")
    t.ok(m.partial(v), "the READ stopped where the key went")
    t.eq((v.qp_state(a), v.qp_state(b)), (6, 3), "requester in ERR, responder still RTS")


def mid_destroy_responder(v, m):
    cq = m.fresh(v)
    a, b = pair(v, m.pd, cq, retry=1)
    a.post_send(WRITE, raddr(m.dst, m.pa) + dseg(m.src, BIG, m.pa))
    cmd_ok(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], b.qpn)]), "DESTROY_QP")
    v.settle()
    t.eq(cqes(cq), [], "responder destroyed mid-WRITE: the requester gets no answer yet")
    t.ok(m.partial(v) and "responder QP destroyed or reset" in v.qt.log(),
         "the message was lost midway (traced)")
    v.advance(3 * ACK_T, ACK_T)
    t.eq(cqes(cq), [(a.qpn, REQ_ERR, 0x15, 0)], "after its retry (retry_count 1) the "
         "requester fails once: transport retry exceeded (0x15)")


def mid_requester_err(v, m):
    cq = m.fresh(v)
    a, b = pair(v, m.pd, cq)
    a.post_send(WRITE, raddr(m.dst, m.pa) + dseg(m.src, BIG, m.pa))
    cmd_ok(v.modify("2ERR_QP", a), "2ERR_QP")
    v.settle()
    t.eq(cqes(cq), [(a.qpn, REQ_ERR, FLUSH, 0)], "requester to ERR mid-WRITE: its WQE is "
         "flushed, once")
    t.ok(m.partial(v), "the WRITE stopped midway")
    c = v.create_qp("RC", m.pd, cq, cq)
    v.connect(c, b.qpn)
    c.post_send(WRITE, raddr(m.dst, m.pa) + inline(b"next"))
    t.eq(cqes(cq), [(c.qpn, 0, 0, 0)], "the responder, still RTS, takes the next message "
         "(the one it waited for will never finish)")
    t.eq(v.qt.memread(m.dst, 4), b"next", "and its payload")


def mid_requester_reset(v, m):
    cq = m.fresh(v)
    a, b = pair(v, m.pd, cq)
    b.post_recv([(m.dst, BIG, m.pa)])
    b.post_recv([(m.dst + BIG - 4096, 64, m.pa)])
    a.post_send(SEND, dseg(m.src, BIG, m.pa))
    cmd_ok(v.modify("2RST_QP", a), "2RST_QP")
    v.settle()
    t.eq(cqes(cq), [], "requester reset mid-SEND: no CQE on either side")
    t.ok(m.partial(v), "the SEND stopped midway")
    a.sq_pi = 0                 # as a driver does at RESET: SQ and its counter start over
    v.qt.memwrite(a.dbr + 4, bytes(4))
    v.connect(a, b.qpn)
    a.post_send(SEND, inline(b"again"))
    t.eq(sorted(f(e, "qpn", "opcode", "wqe_counter", "byte_cnt") for e in cq.poll_all()),
         sorted([(a.qpn, 0, 0, 5), (b.qpn, 2, 0, 5)]),
         "reconnected, its next SEND completes in the receive WQE the lost one consumed "
         "(wqe_counter 0), in order")
    t.eq(v.qt.memread(m.dst, 5), b"again", "payload in that WQE's buffer")


def mid_responder_err(v, m):
    cq = m.fresh(v)
    a, b = pair(v, m.pd, cq, retry=1)
    b.post_recv([(m.dst, BIG, m.pa)])
    b.post_recv([(m.dst + BIG - 4096, 64, m.pa)])
    a.post_send(SEND, dseg(m.src, BIG, m.pa))
    cmd_ok(v.modify("2ERR_QP", b), "2ERR_QP")
    v.settle()
    t.eq(cqes(cq), [(b.qpn, RESP_ERR, FLUSH, 0), (b.qpn, RESP_ERR, FLUSH, 1)],
         "responder to ERR mid-SEND: the receive WQE in use and the next are flushed "
         "once, in order")
    v.advance(3 * ACK_T, ACK_T)
    t.eq(cqes(cq), [(a.qpn, REQ_ERR, 0x15, 0)], "the requester fails once after its "
         "retry: transport retry exceeded (0x15)")


def mid_destroy_requester(v, m):
    cq = m.fresh(v)
    a, b = pair(v, m.pd, cq)
    a.post_send(WRITE, raddr(m.dst, m.pa) + dseg(m.src, BIG, m.pa))
    cmd_ok(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], a.qpn)]), "DESTROY_QP")
    v.settle()
    t.eq(cqes(cq), [], "requester destroyed mid-WRITE: no CQE")
    t.ok(m.partial(v), "the WRITE stopped midway")
    c = v.create_qp("RC", m.pd, cq, cq)
    v.connect(c, b.qpn)
    c.post_send(WRITE, raddr(m.dst, m.pa) + inline(b"more"))
    t.eq(cqes(cq), [(c.qpn, 0, 0, 0)], "the responder takes the next message")


def mid_second_sender(v, m):
    cq = m.fresh(v)
    a, b = pair(v, m.pd, cq)
    c = v.create_qp("RC", m.pd, cq, cq)
    v.connect(c, b.qpn)             # also at B's expected PSN
    b.post_recv([(m.dst, BIG, m.pa)])
    a.post_send(SEND, dseg(m.src, BIG, m.pa))
    c.post_send(WRITE, raddr(m.dst + BIG - 64, m.pa) + inline(b"cut in"))
    v.settle()
    t.eq(sorted(cqes(cq)), sorted([(c.qpn, REQ_ERR, 0x15, 0), (a.qpn, 0, 0, 0),
                                   (b.qpn, 2, 0, 0)]),
         "a second sender while a 64 MiB SEND is arriving is out of sequence (0x15); the "
         "SEND completes on both sides")
    t.eq(v.qt.memread(m.dst + BIG - 64, 64), b"\xa5" * 64, "the SEND's bytes, not the "
         "intruder's, at the end of the buffer")
    t.ok("while one from QP 0x%x is arriving" % a.qpn in v.qt.log(),
         "logged as a guest error")


def mid_teardown(v, m):
    cq = m.fresh(v)
    a, b = pair(v, m.pd, cq)
    a.post_send(WRITE, raddr(m.dst, m.pa) + dseg(m.src, BIG, m.pa))
    cmd_ok(v.cmd("TEARDOWN_HCA", fields=[(H["VCX_TEARDOWN_HCA_IN_PROFILE"], 1)]),
           "TEARDOWN_HCA force close")
    v.settle()
    s = v.d.state()
    t.eq((s["hca"], s["qps"], s["cqs"], s["mkeys"], s["pds"]),
         ("enabled", "0", "0", "0", "0"), "force-close TEARDOWN_HCA mid-WRITE: every object "
         "gone, the executor idle")
    t.ok(m.partial(v), "the WRITE stopped midway")


def mid_flr(v):
    m = Mid(v)
    cq = m.fresh(v)
    a, b = pair(v, m.pd, cq)
    a.post_send(WRITE, raddr(m.dst, m.pa) + dseg(m.src, BIG, m.pa))
    cap = 0x60
    ctl = v.d.cfg_read(cap + 8)
    v.d.cfg_write(cap + 8, ctl | 0x8000)       # DEVCTL initiate FLR (CPU config cycle)
    v.qt.clock_step(50_000_000)
    s = v.d.state()
    t.eq((s["hca"], s["qps"], s["xport_queued"]), ("disabled", "0", "0"),
         "FLR from the CPU mid-WRITE: the device is reset, nothing queued")
    t.ok(m.partial(v), "the WRITE stopped midway")


def main():
    v = Verbs(mem="1G", trace="vcx_xport_run",
              extra=("--trace", "vcx_xfer_open", "--trace", "vcx_xfer_pause",
                     "--trace", "vcx_xfer_lost", "--trace", "vcx_xport_doorbell_slice"))
    try:
        run_isolated(t, "doorbell slice", lambda: case_doorbell_slice(v))
        run_isolated(t, "32768 WRITEs", lambda: case_big_doorbell(v))
        run_isolated(t, "RNR timer", lambda: case_rnr_timer(v))
        m = Mid(v)
        for name, fn in (("rkey", mid_destroy_rkey), ("lkey", mid_destroy_lkey),
                         ("READ rkey", mid_destroy_read_rkey),
                         ("responder destroyed", mid_destroy_responder),
                         ("requester to ERR", mid_requester_err),
                         ("requester reset", mid_requester_reset),
                         ("responder to ERR", mid_responder_err),
                         ("requester destroyed", mid_destroy_requester),
                         ("second sender", mid_second_sender),
                         ("teardown", mid_teardown)):
            run_isolated(t, name, lambda fn=fn: fn(v, m))
        t.ok(v.qt.alive(), "QEMU alive")
    finally:
        v.close()
    v = Verbs()
    try:
        run_isolated(t, "FLR", lambda: mid_flr(v))
        t.ok(v.qt.alive(), "QEMU alive after the FLR")
    finally:
        v.close()
    t.done()


if __name__ == "__main__":
    main()
