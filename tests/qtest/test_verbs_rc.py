#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""RC data path over loopback: SEND/SEND_IMM into an SRQ shared by two QPs (multi-SGE
scatter, wqe_counter = SRQ index, srqn), RDMA WRITE (inline and gathered), WRITE_IMM,
READ, ATOMIC_FA/CS, rkey violations (remote access error, QP to ERR, flush CQEs), RNR
with rnr_retry and the RNR timer, RNR retry exhaustion, malformed WQEs (bad DS count,
opcode, lkey), responder length error, CQ arming and completion events, the responder's
Q counter (requests by kind, RNR as out_of_buffer; counter_set_id changed in RTS, an
unallocated one refused), the requester's retransmission fields (RNR NAKs and local ACK
timeouts within their retry counts), its enhanced error fields (capability enhanced_error_q_counters:
error CQEs of each side by syndrome, the remote access, invalid request and operational
NAKs, flushes one per WQE, transport and RNR retries exceeded, the local length, QP
operation and protection errors of each side, cq_overflow; clear). CQEs are checked byte
by byte; payloads at their destination."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, H, get, run_isolated  # noqa: E402
from vcx_verbs import (Verbs, cqe_fields, dseg, inline, raddr, atomic,  # noqa: E402
                       OP, P, QP_STATE, cqe_tuple as f, run_cases,
                       alloc_qc, dealloc_qc, query_qc, set_counter)


t = Tap()
SEND, SEND_IMM, WRITE, WRITE_IMM, READ, CS, FA = 0x0a, 0x0b, 0x08, 0x09, 0x10, 0x11, 0x12


def pair(v, pd, cq, srq=None, **kw):
    a = v.create_qp("RC", pd, cq, cq)
    b = v.create_qp("RC", pd, cq, cq, srq=srq)
    v.connect(a, b.qpn, **kw)
    v.connect(b, a.qpn, **kw)
    return a, b


def srq_send(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x10000)
    key = v.create_mkey(pd, buf, 0x10000)
    scq, rcq = v.create_cq(), v.create_cq()
    srq = v.create_srq(pd, log_size=3, stride=64)
    a = v.create_qp("RC", pd, scq, scq)
    b = v.create_qp("RC", pd, rcq, rcq, srq=srq)
    c = v.create_qp("RC", pd, scq, scq)
    d = v.create_qp("RC", pd, rcq, rcq, srq=srq)
    for x, y in ((a, b), (b, a), (c, d), (d, c)):
        v.connect(x, y.qpn)
    msg1 = bytes(range(20))
    msg2 = b"second message through the SRQ"
    v.qt.memwrite(buf, msg1)
    v.qt.memwrite(buf + 0x100, msg2)
    i0 = srq.post([(buf + 0x1000, 8, key), (buf + 0x2000, 64, key)])
    i1 = srq.post([(buf + 0x3000, 64, key)])
    t.eq((i0, i1), (0, 1), "SRQ WQEs posted at indices 0 and 1 (linked list)")
    a.post_send(SEND, dseg(buf, 20, key))
    c.post_send(SEND_IMM, dseg(buf + 0x100, len(msg2), key), imm=0xdeadbeef, ce=False)
    r = rcq.poll_all()
    t.eq(len(r), 2, "two responder CQEs")
    t.eq(f(r[0], "opcode", "owner", "byte_cnt", "srqn", "qpn", "wqe_counter", "syndrome"),
         (2, 0, 20, srq.srqn, b.qpn, 0, 0),
         "SEND CQE: RESP_SEND, owner 0, byte_cnt 20, srqn, qpn of b, SRQ WQE 0")
    t.eq(f(r[1], "opcode", "byte_cnt", "imm", "srqn", "qpn", "wqe_counter"),
         (3, len(msg2), 0xdeadbeef, srq.srqn, d.qpn, 1),
         "SEND_IMM CQE: RESP_SEND_IMM, byte_cnt, immediate, srqn, qpn of d, SRQ WQE 1")
    t.eq(r[0][0x18:0x1c], struct.pack(">I", a.qpn), "flags_rqpn carries the source QPN")
    t.eq((v.qt.memread(buf + 0x1000, 8), v.qt.memread(buf + 0x2000, 12)),
         (msg1[:8], msg1[8:]), "payload scattered over two SGEs: 8 + 12 bytes")
    t.eq(v.qt.memread(buf + 0x3000, len(msg2)), msg2, "second payload in SRQ WQE 1's buffer")
    s = scq.poll_all()
    t.eq(len(s), 1, "one requester CQE: the unsignaled SEND_IMM made none")
    t.eq(f(s[0], "opcode", "sop", "qpn", "wqe_counter", "owner"), (0, SEND, a.qpn, 0, 0),
         "requester CQE: REQ, WQE opcode SEND, qpn, wqe_counter 0, owner 0")
    r = v.cmd("QUERY_SRQ", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], srq.srqn)])
    t.eq(r.status, 0, "QUERY_SRQ still OK after consumption")
    r = v.query_qp(a)
    t.eq((struct.unpack_from(">I", r.out, 0x18 + 0x78)[0] & 0xffffff,
          struct.unpack_from(">H", r.out, 0x18 + 0xb4)[0]),
         (0x101, 1), "QUERY_QP: next_send_psn advanced by one packet, hw SQ counter 1")
    return pd, buf, key


def rdma(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x10000)
    key = v.create_mkey(pd, buf, 0x10000)
    cq = v.create_cq()
    a, b = pair(v, pd, cq)
    v.qt.memwrite(buf + 0x4000, b"A" * 16)
    a.post_send(WRITE, raddr(buf + 0x5000, key) + inline(b"inline write!"))
    t.eq(v.qt.memread(buf + 0x5000, 13), b"inline write!", "RDMA WRITE with inline data lands")
    a.post_send(WRITE, raddr(buf + 0x5100, key) + dseg(buf + 0x4000, 16, key))
    t.eq(v.qt.memread(buf + 0x5100, 16), b"A" * 16, "RDMA WRITE gathered from an lkey lands")
    v.qt.memwrite(buf + 0x6000, b"remote bytes to read")
    a.post_send(READ, raddr(buf + 0x6000, key) + dseg(buf + 0x7000, 20, key))
    t.eq(v.qt.memread(buf + 0x7000, 20), b"remote bytes to read", "RDMA READ result")
    v.qt.memwrite(buf + 0x8000, struct.pack("<Q", 100))
    a.post_send(FA, raddr(buf + 0x8000, key) + atomic(5) + dseg(buf + 0x8100, 8, key))
    a.post_send(CS, raddr(buf + 0x8000, key) + atomic(7, 105) + dseg(buf + 0x8108, 8, key))
    a.post_send(CS, raddr(buf + 0x8000, key) + atomic(9, 1) + dseg(buf + 0x8110, 8, key))
    t.eq(struct.unpack("<QQQQ", v.qt.memread(buf + 0x8100, 24) + v.qt.memread(buf + 0x8000, 8)),
         (100, 105, 7, 7), "FA +5 returns 100; CS(105->7) returns 105; failing CS returns 7")
    b.post_recv([(buf + 0x9000, 64, key)])
    a.post_send(WRITE_IMM, raddr(buf + 0x9100, key) + inline(b"wimm"), imm=0x01020304)
    s = cq.poll_all()
    t.eq([f(e, "opcode", "sop", "wqe_counter") for e in s if cqe_fields(e)["qpn"] == a.qpn],
         [(0, WRITE, 0), (0, WRITE, 1), (0, READ, 2), (0, FA, 3), (0, CS, 4), (0, CS, 5),
          (0, WRITE_IMM, 6)],
         "requester CQEs: opcodes and wqe_counters in WQEBB units")
    rd = [cqe_fields(e) for e in s if cqe_fields(e)["sop"] in (READ, FA)]
    t.eq([x["byte_cnt"] for x in rd], [20, 8], "byte_cnt: 20 for the READ, 8 for the atomic")
    resp = [e for e in s if cqe_fields(e)["qpn"] == b.qpn]
    t.eq([f(e, "opcode", "imm", "byte_cnt", "wqe_counter") for e in resp],
         [(1, 0x01020304, 4, 0)], "WRITE_IMM responder CQE: RESP_WR_IMM, imm, byte_cnt 4")
    t.eq(v.qt.memread(buf + 0x9100, 4), b"wimm", "WRITE_IMM payload at the remote address")
    # rkey violation
    ro = v.create_mkey(pd, buf + 0xa000, 0x1000, access="lr lw rr", key=0x33)
    a.post_send(WRITE, raddr(buf + 0xa000, ro) + inline(b"nope"))
    a.post_send(SEND, inline(b"x"))
    a.post_send(SEND, inline(b"y"), ce=False)
    s = cq.poll_all()
    t.eq([f(e, "opcode", "syndrome", "sop", "wqe_counter", "qpn") for e in s
          if cqe_fields(e)["qpn"] == a.qpn],
         [(0xd, 0x13, WRITE, 7, a.qpn), (0xd, 0x05, SEND, 8, a.qpn),
          (0xd, 0x05, SEND, 9, a.qpn)],
         "write to a key without rw: REQ_ERR remote access (0x13), then flush CQEs (0x05) "
         "for the next WQEs, signaled or not")
    t.eq(v.qt.memread(buf + 0xa000, 4), bytes(4), "nothing written through the read-only key")
    t.eq((v.qp_state(a), v.qp_state(b)), (6, 6), "requester and responder QPs in ERR")
    a.post_send(SEND, inline(b"z"))
    t.eq([f(e, "opcode", "syndrome", "wqe_counter") for e in cq.poll_all()],
         [(0xd, 0x05, 10)], "a WQE posted to a QP in ERR is flushed")
    # bad rkey (no such key) on a fresh pair
    a, b = pair(v, pd, cq)
    a.post_send(READ, raddr(buf, 0x77700) + dseg(buf + 0x7000, 8, key))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()], [(0xd, 0x13, READ)],
         "READ with an rkey that does not exist: remote access error")


def rnr(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x4000)
    key = v.create_mkey(pd, buf, 0x4000)
    cq = v.create_cq()
    a, b = pair(v, pd, cq, rnr_retry=3, min_rnr=1)
    v.qt.memwrite(buf, b"after the RNR")
    a.post_send(SEND, dseg(buf, 13, key))
    t.eq(cq.poll_all(), [], "SEND without a receive WQE: no CQE (RNR NAK, SQ stalled)")
    v.qt.clock_step(15000)
    t.eq(cq.poll_all(), [], "RNR retry after 10 us: still no receive WQE, no CQE")
    r = v.query_qp(a)
    t.eq(get(r.out, P["VCX_QPC_CUR_RNR_RETRY"], 0x18), 1,
         "QUERY_QP cur_rnr_retry counts down: 1 left after two RNR NAKs")
    b.post_recv([(buf + 0x1000, 64, key)])
    v.qt.clock_step(15000)
    got = [f(e, "opcode", "qpn", "byte_cnt") for e in cq.poll_all()]
    t.eq(sorted(got), sorted([(2, b.qpn, 13), (0, a.qpn, 13)]),
         "after a receive is posted the retry succeeds: responder and requester CQEs")
    t.eq(v.qt.memread(buf + 0x1000, 13), b"after the RNR", "payload delivered")
    a2, b2 = pair(v, pd, cq, rnr_retry=1, min_rnr=1)
    a2.post_send(SEND, dseg(buf, 4, key))
    v.qt.clock_step(15000)
    t.eq([f(e, "opcode", "syndrome", "qpn") for e in cq.poll_all()], [(0xd, 0x16, a2.qpn)],
         "rnr_retry 1 exhausted: REQ_ERR RNR retry exceeded (0x16)")
    t.eq(v.qp_state(a2), 6, "QP in ERR after RNR retry exhaustion")
    a3, b3 = pair(v, pd, cq, rnr_retry=7, min_rnr=1)
    a3.post_send(SEND, dseg(buf, 4, key))
    for _ in range(20):
        v.qt.clock_step(15000)
    t.eq(cq.poll_all(), [], "rnr_retry 7: 20 RNR rounds and still waiting, never dropped")
    b3.post_recv([(buf + 0x2000, 16, key)])
    v.qt.clock_step(15000)
    t.eq(sorted(f(e, "opcode", "qpn") for e in cq.poll_all()), sorted([(2, b3.qpn), (0, a3.qpn)]),
         "rnr_retry 7: completes once a receive is posted")


def q_counters(v):
    """The responder counts loopback requests into the Q counter its counter_set_id names,
    which RTS2RTS may change (opt_param COUNTER_SET_ID) and which must be allocated."""
    def qc(cid, *names):
        return query_qc(v, cid, *names)

    rq = ("rx_write_requests", "rx_read_requests", "rx_atomic_requests", "out_of_buffer")
    pd = v.alloc_pd()
    buf = v.alloc(0x10000)
    key = v.create_mkey(pd, buf, 0x10000)
    cq = v.create_cq()
    q1, q2 = alloc_qc(v), alloc_qc(v)
    free = max(q1, q2) + 1
    a, b = pair(v, pd, cq)
    r = set_counter(v, b, free)
    t.eq((r.status, r.syndrome & 0xffff), (0x3, 0x1c),
         "RTS2RTS naming a Q counter that is not allocated: BAD_PARAM (0x1c)")
    t.ok("counter_set_id %u is not allocated" % free in v.qt.log(), "refusal logged")
    t.eq(v.qp_state(b), QP_STATE["RTS"], "the refused RTS2RTS left the QP in RTS")
    t.eq(set_counter(v, b, q1).status, 0, "RTS2RTS counter_set_id -> Q counter %u" % q1)
    t.eq(get(v.query_qp(b).out, P["VCX_QPC_COUNTER_SET_ID"], 0x18), q1,
         "QUERY_QP returns the new counter_set_id")
    for i in range(3):
        v.qt.memwrite(buf + 0x100 * i, bytes([0x41 + i]) * 32)
        a.post_send(WRITE, raddr(buf + 0x1000 + 0x100 * i, key) + dseg(buf + 0x100 * i, 32, key))
    v.qt.memwrite(buf + 0x2000, b"read me back")
    a.post_send(READ, raddr(buf + 0x2000, key) + dseg(buf + 0x3000, 12, key))
    a.post_send(READ, raddr(buf + 0x2000, key) + dseg(buf + 0x3100, 12, key))
    v.qt.memwrite(buf + 0x4000, struct.pack("<Q", 1))
    a.post_send(FA, raddr(buf + 0x4000, key) + atomic(1) + dseg(buf + 0x4100, 8, key))
    t.eq(len([e for e in cq.poll_all() if cqe_fields(e)["syndrome"] == 0]), 6,
         "3 WRITEs, 2 READs, 1 FETCH_ADD completed")
    t.eq([v.qt.memread(buf + 0x1000 + 0x100 * i, 32) for i in range(3)],
         [bytes([0x41 + i]) * 32 for i in range(3)], "WRITE payloads landed")
    t.eq(qc(q1, *rq), (3, 2, 1, 0), "responder's Q counter: 3 WRITE, 2 READ, 1 atomic requests")
    t.eq(qc(q2, *rq), (0, 0, 0, 0), "the other Q counter counted nothing")
    t.eq(set_counter(v, b, 0).status, 0, "RTS2RTS counter_set_id 0: no Q counter")
    a.post_send(WRITE, raddr(buf + 0x1000, key) + dseg(buf, 8, key))
    cq.poll_all()
    t.eq(qc(q1, *rq), (3, 2, 1, 0), "after counter_set_id 0 nothing more is counted")
    # RNR: out_of_buffer of the responder's counter, set at RST2INIT
    c = v.create_qp("RC", pd, cq, cq)
    d = v.create_qp("RC", pd, cq, cq)
    r = v.modify("RST2INIT_QP", d, [("counter_set_id", free), ("rwe", 1)],
                 ads=[("vhca_port_num", 1)])
    t.eq((r.status, r.syndrome & 0xffff, v.qp_state(d)), (0x3, 0x1c, QP_STATE["RST"]),
         "RST2INIT naming a Q counter that is not allocated: BAD_PARAM (0x1c), QP in RST")
    t.eq(v.modify("RST2INIT_QP", d, [("counter_set_id", q2), ("rwe", 1)],
                  ads=[("vhca_port_num", 1)]).status, 0, "RST2INIT with Q counter %u" % q2)
    f2 = [("mtu", 3), ("log_msg_max", 30), ("remote_qpn", c.qpn), ("next_rcv_psn", 0x100),
          ("log_rra_max", 2), ("min_rnr_nak", 1)]
    t.eq(v.modify("INIT2RTR_QP", d, f2, ads=[("vhca_port_num", 1), ("hop_limit", 64)]).status,
         0, "INIT2RTR keeps the counter")
    t.eq(v.modify("RTR2RTS_QP", d, [("next_send_psn", 0x100)], ads=[("ack_timeout", 14)]).status,
         0, "RTR2RTS")
    v.connect(c, d.qpn, rnr_retry=0)
    c.post_send(SEND, dseg(buf, 4, key))
    v.advance(100000, 15000)
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x16)],
         "SEND with no receive WQE and rnr_retry 0: RNR retry exceeded")
    t.eq(qc(q2, *rq), (0, 0, 0, 1), "one RNR NAK: out_of_buffer 1 in the responder's counter")


# the enhanced error group of query_q_counter_out (capability enhanced_error_q_counters):
# mlx5_ib's extended error fields in its order, then the rest of the group
EE = ("resp_local_length_error", "resp_cqe_error", "req_cqe_error",
      "req_remote_invalid_request", "req_remote_access_errors", "resp_remote_access_errors",
      "resp_cqe_flush_error", "req_cqe_flush_error", "req_transport_retries_exceeded",
      "req_rnr_retries_exceeded",
      "req_local_length_error", "resp_local_qp_error", "local_operation_error",
      "resp_local_protection", "req_local_protection", "req_mw_binding", "req_bad_response",
      "resp_remote_invalid_request", "req_remote_operation_errors", "cq_overflow")


def ee(**nonzero):
    """The enhanced error fields expected: 0 but those named."""
    assert set(nonzero) <= set(EE)
    return tuple(nonzero.get(n, 0) for n in EE)


def error_counters(v):
    """The enhanced error fields of the Q counters: each error CQE counted once in the Q
    counter of the QP that wrote it (req_ side: its SQ, resp_ side: its receive queue),
    flushes one per WQE, the NAKs by kind on the side that sent or received them."""
    caps = [v.d.exec(H["VCX_CMD_OP_QUERY_HCA_CAP"], mode, out_len=0x1010) for mode in (0, 1)]
    t.eq([(r.status, get(r.out[0x10:], H["VCX_CAP_GEN_ENHANCED_ERROR_Q_COUNTERS"]))
          for r in caps], [(0, 1), (0, 1)],
         "QUERY_HCA_CAP GENERAL MAX and CUR: enhanced_error_q_counters 1")
    pd = v.alloc_pd()
    buf = v.alloc(0x10000)
    key = v.create_mkey(pd, buf, 0x10000)
    ro = v.create_mkey(pd, buf + 0xa000, 0x1000, access="lr lw rr", key=0x34)
    cq = v.create_cq()

    # remote access error: a WRITE through a key without rw, two SENDs behind it
    qa, qb = alloc_qc(v), alloc_qc(v)
    a, b = pair(v, pd, cq)
    t.eq((set_counter(v, a, qa).status, set_counter(v, b, qb).status), (0, 0),
         "requester in Q counter %u, responder in %u" % (qa, qb))
    for i in range(3):
        b.post_recv([(buf + 0x1000 + 0x100 * i, 64, key)])
    a.post_send(WRITE, raddr(buf + 0xa000, ro) + inline(b"nope"))
    a.post_send(SEND, inline(b"x"))
    a.post_send(SEND, inline(b"y"), ce=False)
    v.settle()
    got = sorted(f(e, "qpn", "opcode", "syndrome", "wqe_counter") for e in cq.poll_all())
    t.eq(got, sorted([(a.qpn, 0xd, 0x13, 0), (a.qpn, 0xd, 0x05, 1), (a.qpn, 0xd, 0x05, 2),
                      (b.qpn, 0xe, 0x05, 0), (b.qpn, 0xe, 0x05, 1), (b.qpn, 0xe, 0x05, 2)]),
         "remote access error (0x13), 2 SQ flushes at the requester; 3 RQ flushes at the "
         "responder")
    t.eq(query_qc(v, qa, *EE), ee(req_cqe_error=3, req_remote_access_errors=1,
                                  req_cqe_flush_error=2),
         "requester's counter: req_cqe_error 3 (the error and 2 flushes), "
         "req_remote_access_errors 1, req_cqe_flush_error 2")
    t.eq(query_qc(v, qb, *EE), ee(resp_remote_access_errors=1, resp_cqe_error=3,
                                  resp_cqe_flush_error=3),
         "responder's counter: resp_remote_access_errors 1 (its NAK), resp_cqe_error 3, "
         "resp_cqe_flush_error 3")
    # WQEs posted in ERR: a send flushed at its doorbell, a receive by the ERR watch
    a.post_send(SEND, inline(b"z"))
    b.post_recv([(buf + 0x1400, 64, key)])
    v.advance(20000000, 1000000)       # the ERR watch looks at least every 10 ms
    v.settle()
    t.eq(sorted(f(e, "qpn", "opcode", "syndrome") for e in cq.poll_all()),
         sorted([(a.qpn, 0xd, 0x05), (b.qpn, 0xe, 0x05)]),
         "a send and a receive posted in ERR: one flush CQE each")
    t.eq((query_qc(v, qa, "req_cqe_error", "req_cqe_flush_error"),
          query_qc(v, qb, "resp_cqe_error", "resp_cqe_flush_error")), ((4, 3), (4, 4)),
         "each counted once more on its side")
    t.eq(query_qc(v, qb, *EE, clear=1), ee(resp_remote_access_errors=1, resp_cqe_error=4,
                                           resp_cqe_flush_error=4),
         "QUERY_Q_COUNTER clear=1 returns the values ...")
    t.eq(query_qc(v, qb, *EE), ee(), "... and zeroes every enhanced error field")
    t.eq(query_qc(v, qa, *EE)[2], 4, "the other counter is not cleared")
    dealloc_qc(v, qa)
    dealloc_qc(v, qb)

    # responder length error: a receive WQE shorter than the SEND
    qa, qb = alloc_qc(v), alloc_qc(v)
    a, b = pair(v, pd, cq)
    set_counter(v, a, qa)
    set_counter(v, b, qb)
    b.post_recv([(buf + 0x2000, 8, key)])
    b.post_recv([(buf + 0x2100, 8, key)])
    a.post_send(SEND, dseg(buf, 32, key))
    v.settle()
    got = sorted(f(e, "qpn", "opcode", "syndrome", "wqe_counter") for e in cq.poll_all())
    t.eq(got, sorted([(a.qpn, 0xd, 0x12, 0), (b.qpn, 0xe, 0x01, 0), (b.qpn, 0xe, 0x05, 1)]),
         "32 bytes into an 8-byte receive: local length error (0x01) and a flush at the "
         "responder, remote invalid request (0x12) at the requester")
    t.eq(query_qc(v, qb, *EE), ee(resp_local_length_error=1, resp_cqe_error=2,
                                  resp_cqe_flush_error=1, resp_remote_invalid_request=1),
         "responder's counter: resp_local_length_error 1, resp_cqe_error 2, "
         "resp_cqe_flush_error 1, resp_remote_invalid_request 1 (its NAK)")
    t.eq(query_qc(v, qa, *EE), ee(req_cqe_error=1, req_remote_invalid_request=1),
         "requester's counter: req_cqe_error 1, req_remote_invalid_request 1 (the NAK)")
    dealloc_qc(v, qa)
    dealloc_qc(v, qb)

    # the requester's local errors, each ending its WQE on a pair of its own
    for post, synd, field, what in (
            (lambda a: a.post_send(SEND, dseg(buf, 4, key), ds=0), 0x02,
             "local_operation_error", "a send WQE with DS count 0"),
            (lambda a: a.post_send(SEND, dseg(buf, 4, key ^ 0x100)), 0x04,
             "req_local_protection", "a SEND through an lkey that does not exist"),
            (lambda a: a.post_send(FA, raddr(buf + 0x4000, key) + atomic(1) +
                                   dseg(buf + 0x4100, 4, key)), 0x01,
             "req_local_length_error", "a fetch-and-add into a 4-byte result buffer")):
        qa = alloc_qc(v)
        a, b = pair(v, pd, cq)
        set_counter(v, a, qa)
        post(a)
        v.settle()
        t.eq([f(e, "qpn", "opcode", "syndrome") for e in cq.poll_all()],
             [(a.qpn, 0xd, synd)], "%s: requester error CQE 0x%02x" % (what, synd))
        t.eq(query_qc(v, qa, *EE), ee(req_cqe_error=1, **{field: 1}),
             "requester's counter: req_cqe_error 1, %s 1" % field)
        dealloc_qc(v, qa)

    # the responder's: a receive WQE through a key that does not exist (the requester gets
    # a NAK remote operational error), a SEND invalidating a key it may not (no umr_en)
    for recv_key, post, synds, req_ee, resp_ee, what in (
            (key ^ 0x100, lambda a: a.post_send(SEND, dseg(buf, 16, key)), (0x14, 0x04),
             {"req_remote_operation_errors": 1}, {"resp_local_protection": 1},
             "receive WQE through an unknown key: local protection error (0x04) at the "
             "responder, remote operational error (0x14) at the requester"),
            (key, lambda a: a.post_send(0x01, inline(b"inv"), imm=key), (0x12, 0x02),
             {"req_remote_invalid_request": 1},
             {"resp_local_qp_error": 1, "resp_remote_invalid_request": 1},
             "SEND_INV of a key not invalidatable: local QP operation error (0x02) at the "
             "responder, remote invalid request (0x12) at the requester")):
        qa, qb = alloc_qc(v), alloc_qc(v)
        a, b = pair(v, pd, cq)
        set_counter(v, a, qa)
        set_counter(v, b, qb)
        b.post_recv([(buf + 0x2000, 64, recv_key)])
        post(a)
        v.settle()
        t.eq(sorted(f(e, "qpn", "opcode", "syndrome") for e in cq.poll_all()),
             sorted([(a.qpn, 0xd, synds[0]), (b.qpn, 0xe, synds[1])]), what)
        t.eq((query_qc(v, qa, *EE), query_qc(v, qb, *EE)),
             (ee(req_cqe_error=1, **req_ee), ee(resp_cqe_error=1, **resp_ee)),
             "requester's counter: req_cqe_error 1, %s; responder's: resp_cqe_error 1, %s"
             % (", ".join("%s 1" % n for n in req_ee), ", ".join("%s 1" % n for n in resp_ee)))
        dealloc_qc(v, qa)
        dealloc_qc(v, qb)

    # RNR retry exhaustion
    qa = alloc_qc(v)
    a, b = pair(v, pd, cq, rnr_retry=1, min_rnr=1)
    set_counter(v, a, qa)
    a.post_send(SEND, dseg(buf, 4, key))
    v.advance(60000, 15000)
    t.eq([f(e, "qpn", "opcode", "syndrome") for e in cq.poll_all()], [(a.qpn, 0xd, 0x16)],
         "rnr_retry 1 spent: RNR retry exceeded (0x16)")
    t.eq(query_qc(v, qa, *EE), ee(req_cqe_error=1, req_rnr_retries_exceeded=1),
         "requester's counter: req_rnr_retries_exceeded 1, req_cqe_error 1")
    dealloc_qc(v, qa)

    # transport retry exhaustion: the peer never reaches RTR
    qa, qd = alloc_qc(v), alloc_qc(v)
    a = v.create_qp("RC", pd, cq, cq)
    d = v.create_qp("RC", pd, cq, cq)
    t.eq(v.modify("RST2INIT_QP", d, [("counter_set_id", qd), ("rwe", 1)],
                  ads=[("vhca_port_num", 1)]).status, 0, "the peer stays in INIT")
    v.connect(a, d.qpn, retry=1)
    set_counter(v, a, qa)
    a.post_send(SEND, inline(b"anyone?"))
    v.advance(3 * (4096 << 14), 4096 << 14)
    t.eq([f(e, "qpn", "opcode", "syndrome") for e in cq.poll_all()], [(a.qpn, 0xd, 0x15)],
         "retry_count 1 spent on a peer in INIT: transport retry exceeded (0x15)")
    t.eq(query_qc(v, qa, *EE), ee(req_cqe_error=1, req_transport_retries_exceeded=1),
         "requester's counter: req_transport_retries_exceeded 1, req_cqe_error 1")
    t.eq(query_qc(v, qd, *EE), ee(), "the peer in INIT counted nothing")
    dealloc_qc(v, qa)
    dealloc_qc(v, qd)


def malformed(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x4000)
    key = v.create_mkey(pd, buf, 0x4000)
    cq = v.create_cq()
    a, b = pair(v, pd, cq)
    a.post_send(SEND, dseg(buf, 4, key), ds=0, ring=False)
    a.post_send(SEND, dseg(buf, 4, key), ring=False)
    a.post_send(SEND, dseg(buf, 4, key))
    t.eq([f(e, "opcode", "syndrome", "sop", "wqe_counter") for e in cq.poll_all()],
         [(0xd, 0x02, SEND, 0), (0xd, 0x05, SEND, 1), (0xd, 0x05, SEND, 2)],
         "DS count 0: local QP operation error (0x02), the rest flushed (0x05)")
    t.eq(v.qp_state(a), 6, "QP with a malformed WQE is in ERR")
    a, b = pair(v, pd, cq)
    a.post_send(0x25, dseg(buf, 4, key))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()], [(0xd, 0x02, 0x25)],
         "UMR WQE without its UMR control and mkey segments: local QP operation error")
    a, b = pair(v, pd, cq)
    a.post_send(SEND, dseg(buf, 4, key ^ 0x100))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x04)],
         "SEND with an lkey that does not exist: local protection error (0x04)")
    a, b = pair(v, pd, cq)
    a.post_send(SEND, dseg(buf + 0x3ff0, 0x20, key))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x04)],
         "SEND gathering past the end of the key: local protection error")
    a, b = pair(v, pd, cq)
    b.post_recv([(buf + 0x1000, 4, key)])
    b.post_recv([(buf + 0x1100, 64, key)])
    a.post_send(SEND, dseg(buf, 16, key))
    got = sorted(f(e, "qpn", "opcode", "syndrome", "wqe_counter") for e in cq.poll_all())
    t.eq(got, sorted([(a.qpn, 0xd, 0x12, 0), (b.qpn, 0xe, 0x01, 0), (b.qpn, 0xe, 0x05, 1)]),
         "16 bytes into a 4-byte receive: responder local length error (0x01) and its other "
         "receive flushed; requester remote invalid request (0x12)")
    a, b = pair(v, pd, cq)
    a.post_send(SEND, dseg(buf, 4, key), raw=bytes(16 + 16), ring=False)
    t.ok(v.qt.alive(), "QEMU alive after malformed WQEs")


def arming(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x4000)
    key = v.create_mkey(pd, buf, 0x4000)
    scq, rcq = v.create_cq(), v.create_cq()
    a = v.create_qp("RC", pd, scq, scq)
    b = v.create_qp("RC", pd, rcq, rcq)
    v.connect(a, b.qpn)
    v.connect(b, a.qpn)
    v.events(comp=True)
    for _ in range(3):
        b.post_recv([(buf + 0x1000, 64, key)])
    a.post_send(SEND, dseg(buf, 4, key), ce=False)
    t.eq(v.events(comp=True), [], "unarmed CQ: no completion EQE")
    rcq.poll_all()
    rcq.arm()
    a.post_send(SEND, dseg(buf, 4, key), ce=False)
    ev = v.events(comp=True)
    t.eq([(ty, struct.unpack_from(">I", e, 0x38)[0] & 0xffffff) for ty, e in ev],
         [(0, rcq.cqn)], "armed CQ: one completion EQE (type 0) with the CQN")
    a.post_send(SEND, dseg(buf, 4, key), ce=False)
    t.eq(v.events(comp=True), [], "fired CQ: no second EQE until re-armed")
    rcq.poll_all()
    rcq.arm(solicited=True)
    for _ in range(3):
        b.post_recv([(buf + 0x1000, 64, key)])
    a.post_send(SEND, dseg(buf, 4, key), ce=False)
    t.eq(v.events(comp=True), [], "solicited-only arm: unsolicited CQE raises no EQE")
    a.post_send(SEND, dseg(buf, 4, key), ce=False, se=True)
    t.eq(len(v.events(comp=True)), 1, "solicited-only arm: solicited CQE raises one EQE")
    e = rcq.poll_all()
    t.eq([cqe_fields(x)["se"] for x in e], [0, 1], "op_own SE bit follows the solicited flag")
    rcq.arm()
    t.eq(len(v.events(comp=True)), 0, "arm with nothing past ci: no EQE")
    a.post_send(SEND, dseg(buf, 4, key), ce=False)
    t.eq(len(v.events(comp=True)), 1, "armed: the next CQE raises one EQE")
    rcq.arm()
    t.eq(len(v.events(comp=True)), 1, "re-arm with an unconsumed CQE past ci: the EQE at once")


def small_cq_pair(v):
    """A connected RC pair whose SQs (8 WQEBBs) complete into one 2-entry CQ; events
    drained. Returns the sending QP and the CQ."""
    pd = v.alloc_pd()
    cq = v.create_cq(log_size=1)
    a = v.create_qp("RC", pd, cq, cq, log_sq=3)
    b = v.create_qp("RC", pd, cq, cq, log_sq=3)
    v.connect(a, b.qpn)
    v.connect(b, a.qpn)
    v.events()
    return a, cq


def overrun(v):
    a, cq = small_cq_pair(v)
    qa = alloc_qc(v)
    set_counter(v, a, qa)
    for _ in range(3):
        a.post_send(0x00, b"")       # NOP, signaled
    ev = v.events()
    t.eq([(ty, struct.unpack_from(">I", e, 0x20)[0] & 0xffffff, e[0x2b]) for ty, e in ev],
         [(0x04, cq.cqn, 1)], "third CQE into a 2-entry CQ: CQ error event (0x04), overrun")
    a.post_send(0x00, b"")
    t.eq(query_qc(v, qa, "cq_overflow"), (1,),
         "cq_overflow 1 in the QP's Q counter: the overrun, not the CQE lost after it")
    dealloc_qc(v, qa)
    r = v.cmd("QUERY_CQ", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)])
    t.eq(r.out[0x10] >> 4, 9, "QUERY_CQ status: overflow (9)")
    t.eq([cqe_fields(cq.entry(i))["wqe_counter"] for i in range(2)], [0, 1],
         "the two CQEs in the ring are intact")


def cq_wrap(v):
    """The device reads set_ci only when its cached copy says the CQ is full: a CQ that
    software keeps polling wraps many times without an overrun, and one it stops polling
    still overruns at the first CQE past its size."""
    a, cq = small_cq_pair(v)
    got = []
    for _ in range(5):
        for _ in range(2):
            a.post_send(0x00, b"")       # NOP, signaled
        got += [cqe_fields(e)["wqe_counter"] for e in cq.poll_all()]
    t.eq(got, list(range(10)), "10 CQEs through a 2-entry CQ polled every 2: all, in order")
    t.eq(v.events(), [], "no CQ error event while software keeps up")
    for _ in range(3):
        a.post_send(0x00, b"")
    ev = v.events()
    t.eq([(ty, struct.unpack_from(">I", e, 0x20)[0] & 0xffffff, e[0x2b]) for ty, e in ev],
         [(0x04, cq.cqn, 1)], "then 3 CQEs unpolled: overrun at the third")


def self_loop(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x4000)
    key = v.create_mkey(pd, buf, 0x4000)
    cq = v.create_cq()
    a = v.create_qp("RC", pd, cq, cq)
    v.connect(a, a.qpn)
    v.qt.memwrite(buf, b"to myself")
    a.post_recv([(buf + 0x1000, 64, key)])
    a.post_send(SEND, dseg(buf, 9, key))
    t.eq(sorted(f(e, "opcode", "qpn", "byte_cnt") for e in cq.poll_all()),
         sorted([(0, a.qpn, 9), (2, a.qpn, 9)]), "RC QP connected to itself: send and receive")
    a.post_send(WRITE, raddr(buf, 0x12345) + inline(b"x"), ring=False)
    a.post_send(SEND, inline(b"y"), ring=False)
    a.post_send(SEND, inline(b"z"))
    t.eq([f(e, "opcode", "syndrome", "wqe_counter") for e in cq.poll_all()],
         [(0xd, 0x13, 1), (0xd, 0x05, 2), (0xd, 0x05, 3)],
         "self-connected QP, bad rkey: one error CQE, then one flush CQE per WQE")


def no_rq(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x1000)
    key = v.create_mkey(pd, buf, 0x1000)
    cq = v.create_cq()
    a = v.create_qp("RC", pd, cq, cq)
    b = v.create_qp("RC", pd, cq, None, zero_rq=True)
    v.connect(a, b.qpn)
    v.connect(b, a.qpn)
    a.post_send(WRITE, raddr(buf + 0x100, key) + inline(b"ok"))
    a.post_send(SEND, inline(b"no"))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()],
         [(0, 0, WRITE), (0xd, 0x12, SEND)],
         "QP without a receive queue: RDMA WRITE works, SEND gets remote invalid request")
    t.eq(v.qp_state(b), 3, "the receive-less responder stays in RTS")


def retry_and_inval(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x4000)
    key = v.create_mkey(pd, buf, 0x4000)
    cq = v.create_cq()
    a = v.create_qp("RC", pd, cq, cq)
    v.connect(a, 0xfff)
    a.post_send(SEND, inline(b"nobody"))
    t.eq(cq.poll_all(), [], "no response: the requester waits for its ACK timeout")
    v.advance(7 * (4096 << 14) - 1000, 4096 << 14)
    t.eq(cq.poll_all(), [], "still retrying before retry_count (7) ACK timeouts of 67 ms")
    v.advance(2 * (4096 << 14), 4096 << 14)
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x15)],
         "RC SEND to a QPN that does not exist: transport retry exceeded (0x15)")
    a, b = pair(v, pd, cq)
    v.cmd("2RST_QP", fields=[(P["VCX_OBJ_NUMBER"], b.qpn)])
    a.post_send(SEND, inline(b"reset"))
    v.advance(9 * (4096 << 14), 4096 << 14)
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x15)],
         "RC SEND to a QP in RST: transport retry exceeded (0x15)")
    # The peer reaches RTR only after the first send: a retransmission delivers it.
    a = v.create_qp("RC", pd, cq, cq)
    b = v.create_qp("RC", pd, cq, cq)
    v.connect(a, b.qpn)
    b.post_recv([(buf + 0x1800, 64, key)])
    a.post_send(SEND, inline(b"late peer"))
    t.eq(cq.poll_all(), [], "peer not ready yet: nothing completes")
    v.connect(b, a.qpn)
    v.qt.clock_step(2 * (4096 << 14))
    got = sorted(f(e, "opcode", "byte_cnt", "syndrome") for e in cq.poll_all())
    t.eq(got, [(0, 9, 0), (2, 9, 0)],
         "after the peer reaches RTR, the retransmission is delivered and completes")
    t.eq(v.qt.memread(buf + 0x1800, 9), b"late peer", "payload of the retransmitted SEND")
    a, b = pair(v, pd, cq)
    target = v.create_mkey(pd, buf + 0x2000, 0x1000, key=0x77, umr_en=True)
    b.post_recv([(buf + 0x1000, 64, key)])
    a.post_send(0x01, inline(b"inv"), imm=target)
    got = {cqe_fields(e)["qpn"]: e for e in cq.poll_all()}
    t.eq(f(got[b.qpn], "opcode", "imm", "byte_cnt"), (4, target, 3),
         "SEND_INV: RESP_SEND_INV CQE carrying the invalidated key")
    t.eq(f(got[a.qpn], "opcode", "sop"), (0, 0x01), "SEND_INV requester CQE")
    a.post_send(WRITE, raddr(buf + 0x2000, target) + inline(b"x"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "the invalidated key refuses remote access afterwards")


def receive_past_key(v):
    """A receive entry may reach past its key; only the bytes written must lie inside it
    (ConnectX and rxe behave so; perftest --use-srq relies on it)."""
    pd = v.alloc_pd()
    buf = v.alloc(0x4000)
    src_key = v.create_mkey(pd, buf, 0x1000)
    dst_key = v.create_mkey(pd, buf + 0x2000, 0x100)   # a 256-byte key
    cq = v.create_cq()
    a, b = pair(v, pd, cq)
    msg = bytes(range(200))
    v.qt.memwrite(buf, msg)
    b.post_recv([(buf + 0x2000, 2048, dst_key)])        # entry reaches 1792 bytes past
    a.post_send(SEND, dseg(buf, len(msg), src_key))
    r = cq.poll_all()
    resp = [e for e in r if cqe_fields(e)["opcode"] == 2]
    t.eq([f(e, "byte_cnt", "syndrome") for e in resp], [(200, 0)],
         "200-byte message into a 2048-byte entry over a 256-byte key: delivered")
    t.eq(v.qt.memread(buf + 0x2000, 200), msg, "payload inside the key")
    b.post_recv([(buf + 0x2000, 2048, dst_key)])
    big = bytes((i * 7) & 0xff for i in range(300))
    v.qt.memwrite(buf + 0x400, big)
    v.qt.memwrite(buf + 0x2100, b"\xee" * 64)              # just past the key
    a.post_send(SEND, dseg(buf + 0x400, len(big), src_key))
    r = cq.poll_all()
    syn = sorted(cqe_fields(e)["syndrome"] for e in r)
    t.eq(syn, [0x04, 0x14],
         "300 bytes past a 256-byte key: local protection error at the responder, remote "
         "operation error at the requester")
    t.eq(v.qt.memread(buf + 0x2100, 64), b"\xee" * 64, "nothing written past the key")


def requester_q_counters(v):
    """The requester's retransmission fields between QPs of the port, as the PRM counts
    them: rnr_nak_retry_err for each RNR NAK within rnr_retry and local_ack_timeout_err
    for each local ACK timeout within retry_count; the one that exhausts the count goes to
    req_rnr_retries_exceeded or req_transport_retries_exceeded instead."""
    fields = ("rnr_nak_retry_err", "local_ack_timeout_err", "req_rnr_retries_exceeded",
              "req_transport_retries_exceeded")
    pd = v.alloc_pd()
    buf = v.alloc(0x1000)
    key = v.create_mkey(pd, buf, 0x1000)
    cq = v.create_cq()
    qc = alloc_qc(v)
    a = v.create_qp("RC", pd, cq, cq)
    b = v.create_qp("RC", pd, cq, cq)
    v.connect(a, b.qpn, rnr_retry=2)
    v.connect(b, a.qpn)
    t.eq(set_counter(v, a, qc).status, 0, "the requester's Q counter")
    a.post_send(SEND, dseg(buf, 4, key))
    v.advance(100000000, 5000)              # 100 ms: RNR timer 0.01 ms (min_rnr 1)
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x16)],
         "no receive WQE, rnr_retry 2: RNR retry exceeded")
    t.eq(query_qc(v, qc, *fields), (2, 0, 1, 0),
         "two RNR NAKs retried (rnr_nak_retry_err 2), the third: req_rnr_retries_exceeded 1")
    c = v.create_qp("RC", pd, cq, cq)
    v.connect(c, 0xfffff0, retry=2)         # no such QP: nothing answers
    t.eq(set_counter(v, c, qc).status, 0, "a second requester on the same Q counter")
    c.post_send(SEND, dseg(buf, 4, key))
    for _ in range(4):                      # ACK timeout 14: 67 ms each
        v.advance(70000000, 70000000)
        v.settle()
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x15)],
         "no responder, retry_count 2: transport retry exceeded")
    t.eq(query_qc(v, qc, *fields), (2, 2, 1, 1),
         "two local ACK timeouts retried (local_ack_timeout_err 2), the third: "
         "req_transport_retries_exceeded 1")


def internal_timer(v):
    """The internal timer (init segment 0x1000 high, 0x1004 low), read high-low-high as
    drivers do so that a carry between the two reads is seen."""
    for _ in range(3):
        hi = v.d.iseg_read(H["VCX_ISEG_INTERNAL_TIMER_H"])
        lo = v.d.iseg_read(H["VCX_ISEG_INTERNAL_TIMER_L"])
        if v.d.iseg_read(H["VCX_ISEG_INTERNAL_TIMER_H"]) == hi:
            return hi << 32 | lo
    raise AssertionError("internal timer: the high word moved at every read")


def timestamps(v):
    """Every CQE but an error CQE carries the internal timer (device_frequency_khz
    1,000,000: nanoseconds of the virtual clock) when the device wrote it."""
    pd = v.alloc_pd()
    buf = v.alloc(0x4000)
    key = v.create_mkey(pd, buf, 0x4000)
    cq = v.create_cq()
    a, b = pair(v, pd, cq)
    b.post_recv([(buf + 0x1000, 64, key)])
    b.post_recv([(buf + 0x2000, 64, key)])
    t0 = internal_timer(v)
    v.qt.clock_step(5000)
    a.post_send(SEND, dseg(buf, 16, key))
    first = [cqe_fields(e)["timestamp"] for e in cq.poll_all()]
    v.qt.clock_step(7000)
    a.post_send(SEND, dseg(buf, 16, key))
    second = [cqe_fields(e)["timestamp"] for e in cq.poll_all()]
    v.qt.clock_step(1000)
    t1 = internal_timer(v)
    t.eq((len(first), len(second)), (2, 2), "each SEND: a requester and a responder CQE")
    t.ok(first and second and t0 + 5000 <= min(first) and max(second) + 1000 <= t1,
         "CQE timestamps %s, %s within the timer's reads %d .. %d" % (first, second, t0, t1))
    t.ok(first and second and max(first) + 7000 <= min(second),
         "the second SEND's CQEs are 7 us of virtual time later: %s then %s" % (first, second))
    # an error CQE keeps its syndrome where the timestamp would be
    a.post_send(SEND, dseg(buf, 16, key ^ 0x100))
    err = [cqe_fields(e) for e in cq.poll_all()]
    t.eq([(c["opcode"], c["syndrome"]) for c in err][:1], [(0xd, 0x04)],
         "error CQE (bad lkey): REQ_ERR, syndrome local protection error where a "
         "timestamp would be")


def main():
    run_cases(t, (("srq_send", srq_send), ("rdma", rdma), ("rnr", rnr), ("timestamps", timestamps),
                  ("q_counters", q_counters), ("requester_q_counters", requester_q_counters),
                  ("error_counters", error_counters),
                  ("malformed", malformed), ("arming", arming), ("overrun", overrun),
                  ("cq_wrap", cq_wrap), ("self_loop", self_loop), ("no_rq", no_rq),
                  ("retry_and_inval", retry_and_inval),
                  ("receive_past_key", receive_past_key)))


if __name__ == "__main__":
    main()
