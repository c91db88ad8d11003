#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Work requests posted to a QP in ERR complete with WR_FLUSH_ERR, as ib_drain_sq and
ib_drain_rq need: a receive posted after 2ERR_QP (doorbell record only, the RQ has no
doorbell) is flushed by the device's ERR watch within its first interval, in order, for
RC, UC and UD; an armed CQ raises its completion event for the flush CQE; a send posted
in ERR is flushed when its doorbell rings; after a long time in ERR (the watch at its
longest interval) a receive is still flushed; the flushes count against the executor's
budget (at most 64 WQEs a run), so 6000 receives take many runs, all flushed once and in
order; a QP on an SRQ reports last-WQE-reached and its
SRQ keeps its WQEs for the other QPs; 2RST and DESTROY_QP end the watch.
Faults that put QPs in ERR: the port down carries nothing (RC fails with transport retry
exceeded after its retries, UD completes undelivered, traffic resumes with the link), and
the qp-error property fails a QP as a WQ catastrophic error (event 0x05, flush). Dead
firmware (a fatal health syndrome) executes no WQE and writes no CQE or EQE."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, DEV_PATH  # noqa: E402
from vcx_verbs import P, dseg, av, inline, rc_pair, run_cases, xport_runs  # noqa: E402
from vcx_verbs import cqe_tuple as f  # noqa: E402

t = Tap()
SEND = 0x0a
REQ_ERR, RESP_ERR, FLUSH = 0xd, 0xe, 0x05
FIRST_RUN_NS = 30_000           # the watch's first look comes 20 us after 2ERR_QP
LONGEST_NS = 10_000_000         # its longest interval


def setup(v, log_cq=6):
    pd = v.alloc_pd()
    buf = v.alloc(0x4000)
    key = v.create_mkey(pd, buf, 0x4000)
    cq = v.create_cq(log_size=log_cq)
    return pd, buf, key, cq


def to_err(v, qp):
    r = v.modify("2ERR_QP", qp)
    assert r.status == 0, "2ERR_QP status 0x%x" % r.status


def flushes(cq):
    return [f(e, "opcode", "syndrome", "qpn", "wqe_counter") for e in cq.poll_all()]


def case_rq_after_err(v, st):
    pd, buf, key, cq = setup(v)
    qp = v.create_qp(st, pd, cq, cq)
    v.connect(qp, qp.qpn)
    to_err(v, qp)
    t.eq(cq.poll_all(), [], "%s: nothing posted, nothing flushed at 2ERR_QP" % st)
    qp.post_recv([(buf, 64, key)])
    t.eq(cq.poll_all(), [], "%s: a receive posted in ERR is not completed at once "
         "(no RQ doorbell)" % st)
    v.qt.clock_step(FIRST_RUN_NS)
    t.eq(flushes(cq), [(RESP_ERR, FLUSH, qp.qpn, 0)],
         "%s: the receive is flushed within the watch's first run (RESP_ERR 0x05, "
         "wqe_counter 0)" % st)
    for i in range(3):
        qp.post_recv([(buf + 64 * i, 64, key)])
    v.qt.clock_step(FIRST_RUN_NS)
    t.eq(flushes(cq), [(RESP_ERR, FLUSH, qp.qpn, i) for i in (1, 2, 3)],
         "%s: three more receives flushed in posting order" % st)
    t.eq(v.qp_state(qp), 6, "%s: QP still in ERR" % st)


def case_rc(v):
    case_rq_after_err(v, "RC")


def case_uc(v):
    case_rq_after_err(v, "UC")


def case_ud(v):
    case_rq_after_err(v, "UD")


def case_event_and_send(v):
    pd, buf, key, cq = setup(v)
    a, b = rc_pair(v, pd, cq)
    to_err(v, a)
    v.events(comp=True)
    cq.arm()
    a.post_recv([(buf, 64, key)])
    v.qt.clock_step(FIRST_RUN_NS)
    t.eq(flushes(cq), [(RESP_ERR, FLUSH, a.qpn, 0)], "drain_rq shape: flush CQE for the "
         "receive posted after 2ERR_QP")
    t.eq([ty for ty, _ in v.events(comp=True)], [0x00],
         "the armed CQ raised one completion event for the flush CQE")
    cq.arm()
    a.post_send(SEND, inline(b"drain"))
    t.eq(flushes(cq), [(REQ_ERR, FLUSH, a.qpn, 0)], "drain_sq shape: a signaled send "
         "posted in ERR is flushed when its doorbell rings")
    t.eq([ty for ty, _ in v.events(comp=True)], [0x00], "and raises the completion event")
    t.eq([f(e, "opcode") for e in cq.poll_all()], [], "the peer in RTS got nothing")


def case_long_in_err(v):
    pd, buf, key, cq = setup(v)
    qp = v.create_qp("RC", pd, cq, cq)
    v.connect(qp, qp.qpn)
    to_err(v, qp)
    v.qt.clock_step(2_000_000_000)     # two seconds with nothing posted: longest interval
    qp.post_recv([(buf, 64, key)])
    v.qt.clock_step(LONGEST_NS + FIRST_RUN_NS)
    t.eq(flushes(cq), [(RESP_ERR, FLUSH, qp.qpn, 0)],
         "after 2 s in ERR a receive is flushed within the longest interval (10 ms)")
    qp.post_recv([(buf, 64, key)])
    v.qt.clock_step(LONGEST_NS + FIRST_RUN_NS)
    t.eq(flushes(cq), [(RESP_ERR, FLUSH, qp.qpn, 1)], "and again for the next receive")


def case_budget(v):
    pd, buf, key, cq = setup(v, log_cq=14)
    qp = v.create_qp("UD", pd, cq, cq, log_rq=13, rq_stride=16)
    v.connect(qp)
    to_err(v, qp)
    v.settle()
    log0 = len(v.qt.log())
    total = 6000
    v.qt.memwrite(qp.dbr, total.to_bytes(4, "big"))   # 6000 receives posted at once
    v.qt.clock_step(FIRST_RUN_NS)
    v.settle()
    ring = v.qt.memread(cq.base, 64 * (total + 1))
    got = [f(ring[64 * i:64 * i + 64], "opcode", "syndrome", "wqe_counter")
           for i in range(total)]
    t.eq(got, [(RESP_ERR, FLUSH, i) for i in range(total)],
         "the watch flushes all 6000 receives, each once, in posting order")
    t.eq(ring[64 * total + 0x3f] >> 4, 0xf, "and nothing more")
    runs = [r for r in xport_runs(v.qt.log()[log0:]) if r[1]]
    t.ok(runs and max(r[1] for r in runs) <= 64 and sum(r[1] for r in runs) == total and
         len(runs) >= total // 64,
         "no executor run flushes more than its budget of 64 WQEs: %d runs" % len(runs),
         [r[1] for r in runs])
    t.ok(v.qt.alive(), "QEMU alive")


def case_srq(v):
    pd, buf, key, cq = setup(v)
    srq = v.create_srq(pd, log_size=3, rmp=True)
    a = v.create_qp("UD", pd, cq, cq, srq=srq)
    b = v.create_qp("UD", pd, cq, cq, srq=srq)
    s = v.create_qp("UD", pd, cq, cq)
    for qp in (a, b, s):
        v.connect(qp)
    v.events()
    to_err(v, a)
    t.eq([(ty, e[0x3b] | e[0x3a] << 8 | e[0x39] << 16) for ty, e in v.events()],
         [(0x13, a.qpn)], "SRQ-attached QP in ERR: last WQE reached (0x13) for it")
    srq.post([(buf, 128, key)])
    v.qt.clock_step(LONGEST_NS)
    t.eq(cq.poll_all(), [], "WQEs posted to the SRQ are not flushed by a QP in ERR")
    v.qt.memwrite(buf + 0x1000, b"to b")
    s.post_send(SEND, av(b.qpn, 0x11111111) + dseg(buf + 0x1000, 4, key))
    got = sorted(f(e, "opcode", "qpn") for e in cq.poll_all())
    t.eq(got, sorted([(0, s.qpn), (2, b.qpn)]), "the SRQ's WQE still serves QP b")
    t.eq(v.qt.memread(buf + 40, 4), b"to b", "payload after b's GRH area")


def case_reset_and_destroy(v):
    pd, buf, key, cq = setup(v)
    qp = v.create_qp("RC", pd, cq, cq)
    v.connect(qp, qp.qpn)
    to_err(v, qp)
    r = v.modify("2RST_QP", qp)
    t.eq(r.status, 0, "2RST_QP")
    qp.post_recv([(buf, 64, key)])
    v.qt.clock_step(LONGEST_NS)
    t.eq(cq.poll_all(), [], "a QP back in RESET is no longer watched: nothing flushed")
    qp2 = v.create_qp("RC", pd, cq, cq)
    v.connect(qp2, qp2.qpn)
    to_err(v, qp2)
    r = v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], qp2.qpn)])
    t.eq(r.status, 0, "DESTROY_QP of a watched QP")
    v.qt.clock_step(LONGEST_NS)
    t.ok(v.qt.alive(), "the watch's timer after the destroy: QEMU alive")


def case_port_down(v):
    pd, buf, key, cq = setup(v)
    a, b = rc_pair(v, pd, cq)
    u, w = v.create_qp("UD", pd, cq, cq), v.create_qp("UD", pd, cq, cq)
    v.connect(u)
    v.connect(w)
    b.post_recv([(buf, 64, key)])
    w.post_recv([(buf + 0x100, 40 + 64, key)])
    v.qt.qom_set(DEV_PATH, "link", False)
    v.events()
    u.post_send(SEND, av(w.qpn, 0x11111111) + inline(b"lost"))
    t.eq([f(e, "opcode", "qpn") for e in cq.poll_all()], [(0, u.qpn)],
         "port down: a UD send completes at the sender")
    a.post_send(SEND, inline(b"lost too"))
    t.eq(cq.poll_all(), [], "port down: the RC send waits for an ACK")
    v.advance(8 * 67_200_000, 67_200_000)  # retry_count 7 retries of 4.096 us << 14
    t.eq([f(e, "opcode", "syndrome", "qpn") for e in cq.poll_all()],
         [(REQ_ERR, 0x15, a.qpn)], "port down: RC fails with transport retry exceeded (0x15)")
    t.eq(v.qt.memread(buf, 8) + v.qt.memread(buf + 0x100 + 40, 4), bytes(12),
         "port down: nothing delivered to either receiver")
    v.qt.qom_set(DEV_PATH, "link", True)
    u.post_send(SEND, av(w.qpn, 0x11111111) + inline(b"back"))
    t.eq(sorted(f(e, "opcode", "qpn") for e in cq.poll_all()), sorted([(0, u.qpn), (2, w.qpn)]),
         "link up again: the UD send is delivered")
    t.eq(v.qt.memread(buf + 0x100 + 40, 4), b"back", "payload after the GRH area")


def case_qp_error(v):
    pd, buf, key, cq = setup(v)
    a, b = rc_pair(v, pd, cq)
    a.post_recv([(buf, 64, key)])
    v.events()
    r = v.qt.qom_set(DEV_PATH, "qp-error", a.qpn)
    t.ok("error" not in r, "qom-set qp-error of an existing QP")
    t.eq([(ty, e[0x34], e[0x3b] | e[0x3a] << 8 | e[0x39] << 16) for ty, e in v.events()],
         [(0x05, 0, a.qpn)], "WQ catastrophic error event (0x05) for the QP")
    t.eq((v.qp_state(a), flushes(cq)), (6, [(RESP_ERR, FLUSH, a.qpn, 0)]),
         "the QP is in ERR and its posted receive is flushed")
    t.ok("fault injected" in v.qt.log(), "guest-error log names the injected fault")
    r = v.qt.qom_set(DEV_PATH, "qp-error", 0xfffff)
    t.ok("error" in r, "qp-error of a QP that does not exist is refused")
    t.eq(v.qp_state(b), 3, "the peer QP is untouched")


def case_dead(v):
    """Last: the device stays dead."""
    pd, buf, key, cq = setup(v)
    a, b = rc_pair(v, pd, cq)
    e = v.create_qp("RC", pd, cq, cq)
    v.connect(e, e.qpn)
    to_err(v, e)
    b.post_recv([(buf, 64, key)])
    cq.arm()
    v.events(comp=True)
    v.qt.qom_set(DEV_PATH, "health-syndrome", 8)
    v.qt.memwrite(buf + 0x1000, b"never")
    a.post_send(SEND, dseg(buf + 0x1000, 5, key))
    e.post_recv([(buf + 0x100, 64, key)])
    v.qt.clock_step(LONGEST_NS * 3)
    t.eq((cq.poll_all(), v.qt.memread(buf, 5)), ([], bytes(5)),
         "dead firmware: the doorbell executes nothing, no CQE, no data moved")
    t.eq(v.events(comp=True), [], "dead firmware: no completion event")


run_cases(t, [("RC", case_rc), ("UC", case_uc), ("UD", case_ud),
              ("event and send", case_event_and_send), ("long in ERR", case_long_in_err),
              ("budget", case_budget), ("SRQ", case_srq),
              ("reset and destroy", case_reset_and_destroy), ("port down", case_port_down),
              ("qp-error", case_qp_error), ("dead firmware", case_dead)],
          trace="vcx_xport_run")
