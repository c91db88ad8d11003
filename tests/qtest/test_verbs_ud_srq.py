#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""UD and SRQ semantics over loopback: UD SEND with the 40-byte GRH/IPv4 area, source
QPN and L3 type in the CQE, Q_Key mismatch dropped (the sender still completes),
controlled Q_Key, UD message above the MTU; SRQ limit event (0x14) raised once and
re-armed by ARM_RQ (ISSI 0) and by MODIFY_RMP (ISSI 1), last-WQE-reached (0x13) when an
SRQ-attached QP enters ERR, SRQ catastrophic error (0x12) on an unreadable doorbell
record, and a bad lkey in an SRQ WQE."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, run_isolated, get  # noqa: E402
from vcx_verbs import Verbs, cqe_fields, dseg, av, P, cqe_tuple as f, pd_buf_key_cq  # noqa: E402

t = Tap()
SEND, SEND_IMM = 0x0a, 0x0b
QKEY = 0x11111111


def ev(v):
    return [(ty, e[0x34], struct.unpack_from(">I", e, 0x38)[0] & 0xffffff)
            for ty, e in v.events()]


def ud(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x8000)
    key = v.create_mkey(pd, buf, 0x8000)
    cq = v.create_cq()
    a = v.create_qp("UD", pd, cq, cq, log_sq=4)
    b = v.create_qp("UD", pd, cq, cq)
    v.connect(a)
    v.connect(b)
    msg = b"datagram payload"
    v.qt.memwrite(buf, msg)
    b.post_recv([(buf + 0x1000, 40 + 64, key)])
    a.post_send(SEND_IMM, av(b.qpn, QKEY, hop_limit=33) + dseg(buf, len(msg), key),
                imm=0xcafe0001)
    got = {cqe_fields(e)["qpn"]: e for e in cq.poll_all()}
    r = got.get(b.qpn)
    t.ok(r is not None, "UD receive completed")
    t.eq(f(r, "opcode", "byte_cnt", "imm", "flags_rqpn", "wqe_counter", "srqn"),
         (3, 40 + len(msg), 0xcafe0001, 1 << 28 | 2 << 24 | a.qpn, 0, 0),
         "UD CQE: RESP_SEND_IMM, byte_cnt includes the 40-byte GRH, imm, "
         "flags_rqpn = GRH present | L3 IPv4 | source QPN")
    g = v.qt.memread(buf + 0x1000, 40)
    t.eq((g[:20], g[20], g[29], g[28], g[36:40], struct.unpack(">H", g[22:24])[0]),
         (bytes(20), 0x45, 17, 33, bytes([10, 0, 0, 1]), 20 + 8 + 12 + 8 + len(msg) + 4),
         "GRH area: 20 zero bytes, then an IPv4 header (UDP, TTL 33, daddr, total length)")
    t.eq(v.qt.memread(buf + 0x1000 + 40, len(msg)), msg, "payload after the GRH area")
    t.eq(f(got[a.qpn], "opcode", "sop"), (0, SEND_IMM), "UD requester CQE")
    b.post_recv([(buf + 0x2000, 40 + 64, key)])
    a.post_send(SEND, av(b.qpn, 0x22222222) + dseg(buf, 4, key))
    t.eq([f(e, "opcode", "qpn") for e in cq.poll_all()], [(0, a.qpn)],
         "Q_Key mismatch: dropped at the responder, the sender completes")
    t.ok("Q_Key 0x11111111, message from QP" in v.qt.log(), "Q_Key violation logged")
    a.post_send(SEND, av(b.qpn, 0x80000000) + dseg(buf, 4, key))
    t.eq(sorted(f(e, "opcode", "qpn", "byte_cnt") for e in cq.poll_all()),
         sorted([(0, a.qpn, 4), (2, b.qpn, 44)]),
         "controlled Q_Key (MSB set): the sender QP's Q_Key is used and matches")
    a.post_send(SEND, av(b.qpn, QKEY) + dseg(buf, 2000, key))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x01)],
         "UD message of 2000 bytes over a 1024-byte MTU: local length error")
    a2 = v.create_qp("UD", pd, cq, cq)
    v.connect(a2)
    a2.post_send(0x08, av(b.qpn, QKEY) + dseg(buf, 4, key))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()], [(0xd, 0x02, 0x08)],
         "RDMA WRITE on a UD QP: local QP operation error")


def srq_limit(v, rmp):
    pd = v.alloc_pd()
    buf = v.alloc(0x8000)
    key = v.create_mkey(pd, buf, 0x8000)
    cq = v.create_cq()
    srq = v.create_srq(pd, log_size=3, stride=64, rmp=rmp)
    a = v.create_qp("RC", pd, cq, cq)
    b = v.create_qp("RC", pd, cq, cq, srq=srq)
    v.connect(a, b.qpn)
    v.connect(b, a.qpn)
    name = "MODIFY_RMP" if rmp else "ARM_RQ"

    def arm(lwm):
        if rmp:
            c = bytearray(0xf0)
            put_rmpc(c, lwm)
            return v.cmd("MODIFY_RMP", in_len=0x110,
                         fields=[(P["VCX_MODIFY_RMP_IN_RMP_STATE"], 1),
                                 (P["VCX_MODIFY_RMP_IN_RMPN"], srq.srqn),
                                 (P["VCX_MODIFY_RMP_IN_BITMASK"], 1)], payload={0x20: c})
        return v.cmd("ARM_RQ", op_mod=1, fields=[(P["VCX_ARM_RQ_IN_SRQ_NUMBER"], srq.srqn),
                                                 (P["VCX_ARM_RQ_IN_LWM"], lwm)])

    def lwm():
        if rmp:
            r = v.cmd("QUERY_RMP", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], srq.srqn)])
            return get(r.out, P["VCX_WQ_LWM"], 0x50)
        r = v.cmd("QUERY_SRQ", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], srq.srqn)])
        return get(r.out, P["VCX_SRQC_LWM"], 0x10)

    for i in range(4):
        srq.post([(buf + 0x1000 + i * 0x100, 64, key)])
    v.events()
    t.eq(arm(3).status, 0, "%s lwm 3: OK" % name)
    a.post_send(SEND, dseg(buf, 8, key), ce=False)
    t.eq(ev(v), [], "4 -> 3 posted WQEs (not below 3): no limit event")
    a.post_send(SEND, dseg(buf, 8, key), ce=False)
    t.eq(ev(v), [(0x14, 1, srq.srqn)], "3 -> 2 WQEs: SRQ_RQ_LIMIT (0x14) with the SRQ number")
    t.eq(lwm(), 0, "limit disarmed after the event (lwm reads 0)")
    a.post_send(SEND, dseg(buf, 8, key), ce=False)
    t.eq(ev(v), [], "2 -> 1 WQEs while disarmed: no second event")
    t.eq(arm(2).status, 0, "%s lwm 2: re-armed" % name)
    t.eq(ev(v), [], "re-arming with 1 WQE left raises nothing by itself")
    a.post_send(SEND, dseg(buf, 8, key), ce=False)
    t.eq(ev(v), [(0x14, 1, srq.srqn)], "1 -> 0 WQEs after re-arm: the limit event again")
    idx = [cqe_fields(e)["wqe_counter"] for e in cq.poll_all() if cqe_fields(e)["qpn"] == b.qpn]
    t.eq(idx, [0, 1, 2, 3], "SRQ WQEs consumed in linked-list order 0, 1, 2, 3")
    t.eq(v.cmd("2ERR_QP", fields=[(P["VCX_OBJ_NUMBER"], b.qpn)]).status, 0, "2ERR of b")
    t.eq(ev(v), [(0x13, 0, b.qpn)], "SRQ-attached QP to ERR: last WQE reached (0x13), QP type")
    t.eq(cq.poll_all(), [], "no flush CQEs for SRQ WQEs (they belong to the SRQ)")


def srq_limit_cached(v):
    """The device caches the SRQ's doorbell-record counter and reads it again only when the
    WQEs it announced are used up or an armed limit could be crossed: WQEs software posts
    in between must count, so the event comes neither early nor late."""
    pd, buf, key, cq = pd_buf_key_cq(v)
    srq = v.create_srq(pd, log_size=4, stride=64)
    a = v.create_qp("RC", pd, cq, cq)
    b = v.create_qp("RC", pd, cq, cq, srq=srq)
    v.connect(a, b.qpn)
    v.connect(b, a.qpn)
    for i in range(8):
        srq.post([(buf + 0x1000 + i * 0x100, 64, key)])
    for _ in range(2):
        a.post_send(SEND, dseg(buf, 8, key), ce=False)
    for i in range(8, 14):      # the record now says 14; the device last read 8
        srq.post([(buf + 0x1000 + i * 0x100, 64, key)])
    v.events()
    r = v.cmd("ARM_RQ", op_mod=1, fields=[(P["VCX_ARM_RQ_IN_SRQ_NUMBER"], srq.srqn),
                                          (P["VCX_ARM_RQ_IN_LWM"], 5)])
    t.eq(r.status, 0, "ARM_RQ lwm 5 with 12 WQEs posted and not consumed")
    for _ in range(7):
        a.post_send(SEND, dseg(buf, 8, key), ce=False)
    t.eq(ev(v), [], "12 -> 5 WQEs: no limit event (6 of them posted after the last read)")
    a.post_send(SEND, dseg(buf, 8, key), ce=False)
    t.eq(ev(v), [(0x14, 1, srq.srqn)], "5 -> 4 WQEs: SRQ_RQ_LIMIT")
    got = [f(e, "qpn", "opcode", "byte_cnt") for e in cq.poll_all()]
    t.eq(got, [(b.qpn, 2, 8)] * 10, "all 10 SENDs received through the SRQ")


def put_rmpc(c, lwm):
    from vcx_qtest import put
    put(c, P["VCX_RMPC_STATE"], 1)
    put(c, P["VCX_WQ_LWM"], lwm, 0x30)


def srq_errors(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x4000)
    key = v.create_mkey(pd, buf, 0x4000)
    cq = v.create_cq()
    srq = v.create_srq(pd, log_size=2, stride=64)
    a = v.create_qp("RC", pd, cq, cq)
    b = v.create_qp("RC", pd, cq, cq, srq=srq)
    v.connect(a, b.qpn)
    v.connect(b, a.qpn)
    srq.post([(buf + 0x1000, 64, key ^ 0x200)])
    v.events()
    a.post_send(SEND, dseg(buf, 8, key))
    got = sorted(f(e, "qpn", "opcode", "syndrome", "srqn") for e in cq.poll_all())
    t.eq(got, sorted([(a.qpn, 0xd, 0x14, 0), (b.qpn, 0xe, 0x04, srq.srqn)]),
         "bad lkey in an SRQ WQE: responder local protection error (with srqn), "
         "requester remote operational error (0x14)")
    t.eq(ev(v), [(0x13, 0, b.qpn)], "and the responder's last WQE reached event")
    # catastrophic: doorbell record in unmapped space
    srq2 = v.create_srq(pd, log_size=2, stride=64)
    srq2.dbr = 0x3f000000
    r = v.cmd("DESTROY_SRQ", fields=[(P["VCX_OBJ_NUMBER"], srq2.srqn)])
    c = bytearray(64)
    from vcx_qtest import put
    put(c, P["VCX_SRQC_LOG_SRQ_SIZE"], 2)
    put(c, P["VCX_SRQC_LOG_RQ_STRIDE"], 2)
    put(c, P["VCX_SRQC_PD"], pd)
    put(c, P["VCX_SRQC_DBR_ADDR"], 0x3f000000)
    r = v.cmd("CREATE_SRQ", in_len=0x118, payload={0x10: c, 0x110: struct.pack(">Q", srq2.base)})
    n = r.f(P["VCX_OBJ_NUMBER"])
    t.eq(r.status, 0, "CREATE_SRQ with its doorbell record outside guest RAM: accepted")

    class S:
        srqn = n
    c2 = v.create_qp("RC", pd, cq, cq)
    d2 = v.create_qp("RC", pd, cq, cq, srq=S)
    v.connect(c2, d2.qpn)
    v.connect(d2, c2.qpn)
    c2.post_send(SEND, dseg(buf, 8, key))
    t.eq(ev(v), [(0x12, 1, n), (0x13, 0, d2.qpn)],
         "unreadable SRQ doorbell record: SRQ catastrophic error (0x12), then last WQE "
         "reached for the QP")
    t.eq([f(e, "qpn", "opcode", "syndrome") for e in cq.poll_all()], [(c2.qpn, 0xd, 0x14)],
         "the sender gets a remote operational error")
    r = v.cmd("QUERY_SRQ", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], n)])
    t.eq(r.out[0x10] >> 4, 1, "QUERY_SRQ state: error (1)")
    t.ok(v.qt.alive(), "QEMU alive")


def main():
    v = Verbs()
    try:
        run_isolated(t, "ud", lambda: ud(v))
        run_isolated(t, "srq_limit", lambda: srq_limit(v, False))
        run_isolated(t, "rmp_limit", lambda: srq_limit(v, True))
        run_isolated(t, "srq_limit_cached", lambda: srq_limit_cached(v))
        run_isolated(t, "srq_errors", lambda: srq_errors(v))
    finally:
        v.close()
    t.done()


if __name__ == "__main__":
    main()
