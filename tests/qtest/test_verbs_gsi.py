#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The GSI QP (st QP1): CREATE_QP once per port (a second is RESOURCE_BUSY), deth_sqpn
refused (no set_deth_sqpn), the UD-like transitions (q_key, pkey_index, no RC options),
and its transport: datagrams to destination QPN 1 reach it with the well-known Q_Key
0x80010000 only, its own device QPN is not addressable, its sends carry source QPN 1,
receive CQEs carry the GRH area, the source QPN and the P_Key; RDMA opcodes fail; the
state property counts its datagrams; DESTROY_QP frees the slot."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, run_isolated, get, put  # noqa: E402
from vcx_verbs import Verbs, cqe_fields, dseg, raddr, av, P, GID0, cqe_tuple as f  # noqa: E402

t = Tap()
SEND, SEND_IMM, RDMA_WRITE = 0x0a, 0x0b, 0x08
GSI_QKEY = 0x80010000
QKEY = 0x11111111
RES_BUSY, BAD_PARAM = 0x06, 0x03


def check(r, status, syndrome, desc):
    t.eq((r.deliv, r.status, r.syndrome), (0, status, syndrome), desc)


def state(v, key):
    return v.d.state()[key]


def connect_qp1(v, qp1, qkey=GSI_QKEY):
    """mlx5_ib's special-QP transitions: q_key and pkey_index, path MTU 256, no options."""
    r = v.modify("RST2INIT_QP", qp1, [("q_key", qkey)],
                 ads=[("vhca_port_num", 1), ("pkey_index", 0)])
    check(r, 0, 0, "QP1 RST2INIT with q_key 0x%x, pkey_index 0, port 1" % qkey)
    r = v.modify("INIT2RTR_QP", qp1, [("mtu", 1), ("log_msg_max", 8)],
                 ads=[("vhca_port_num", 1)])
    check(r, 0, 0, "QP1 INIT2RTR, mtu 256, log_msg_max 8")
    r = v.modify("RTR2RTS_QP", qp1, [("next_send_psn", 0)])
    check(r, 0, 0, "QP1 RTR2RTS")


def create(v):
    pd = v.alloc_pd()
    cq = v.create_cq()
    q = v.create_qp("QP1", pd, cq, cq)
    t.ok(hasattr(q, "qpn") and q.qpn >= 8,
         "CREATE_QP st QP1: OK, an ordinary QP number (0x%x)" % getattr(q, "qpn", 0))
    t.eq(state(v, "qp1"), "0x%x" % q.qpn, "state property names it as the port's QP1")
    r = v.create_qp("QP1", pd, cq, cq)
    check(r, RES_BUSY, 0x0500001b, "second CREATE_QP st QP1: RESOURCE_BUSY")
    t.ok("QP1 of port 1 already exists" in v.qt.log(), "refusal logged as a guest error")

    def deth(c):
        put(c, P["VCX_QPC_DETH_SQPN"], 1)
    r = v.create_qp("UD", pd, cq, cq, raw=deth)
    check(r, BAD_PARAM, 0x0500000e, "UD QP with deth_sqpn 1 (no set_deth_sqpn cap): BAD_PARAM")
    r = v.modify("RST2INIT_QP", q, [("q_key", GSI_QKEY), ("rre", 1)],
                 ads=[("vhca_port_num", 1)], mask=P["VCX_QP_OPTPAR_RRE"])
    check(r, BAD_PARAM, 0x05020014, "QP1 RST2INIT with the RRE option bit: BAD_PARAM")
    r = v.modify("RST2INIT_QP", q, [("q_key", GSI_QKEY)],
                 ads=[("vhca_port_num", 1), ("pkey_index", 1)])
    check(r, BAD_PARAM, 0x05020019, "QP1 RST2INIT with pkey_index 1: BAD_PARAM")
    connect_qp1(v, q)
    r = v.query_qp(q)
    c = r.out[0x18:]
    t.eq((get(c, P["VCX_QPC_ST"]), get(c, P["VCX_QPC_STATE"]), get(c, P["VCX_QPC_Q_KEY"]),
          get(c, P["VCX_QPC_MTU"])), (8, 3, GSI_QKEY, 1),
         "QUERY_QP: st 8 (QP1), RTS, q_key 0x80010000, mtu 256")
    r = v.modify("RTS2RTS_QP", q, [("q_key", 5)], mask=P["VCX_QP_OPTPAR_Q_KEY"])
    check(r, 0, 0, "QP1 RTS2RTS with the Q_Key option: accepted (UD-like)")
    check(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], q.qpn)]), 0, 0, "DESTROY_QP QP1")
    t.eq(state(v, "qp1"), "0x0", "state property: no QP1")
    q2 = v.create_qp("QP1", pd, cq, cq)
    t.ok(hasattr(q2, "qpn"), "CREATE_QP st QP1 after the destroy: OK")
    check(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], q2.qpn)]), 0, 0, "DESTROY_QP")


def traffic(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x10000)
    key = v.create_mkey(pd, buf, 0x10000)
    cq = v.create_cq()
    gsi = v.create_qp("QP1", pd, cq, cq, log_sq=5, rq_stride=64)
    u = v.create_qp("UD", pd, cq, cq)
    w = v.create_qp("UD", pd, cq, cq)
    connect_qp1(v, gsi, qkey=0x1234)    # whatever the context says: GSI uses 0x80010000
    v.connect(u, qkey=QKEY)
    # a controlled Q_Key (bit 31) in a WQE means the QP's own: w owns the GSI Q_Key
    v.connect(w, qkey=GSI_QKEY)
    sent0, recv0 = int(state(v, "qp1_sent")), int(state(v, "qp1_received"))
    mad = bytes((i * 7 + 3) & 0xff for i in range(256))
    v.qt.memwrite(buf, mad)

    # UD -> QPN 1 with the GSI Q_Key: QP1's receive queue, GRH first.
    gsi.post_recv([(buf + 0x1000, 40 + 256, key)])
    w.post_send(SEND, av(1, GSI_QKEY) + dseg(buf, 256, key))
    got = {f(e, "qpn", "opcode"): e for e in cq.poll_all()}
    e = got.get((gsi.qpn, 2))
    t.ok(e is not None, "UD SEND to destination QPN 1: a receive CQE on QP1 (device QPN)")
    if e is not None:
        t.eq(f(e, "byte_cnt", "flags_rqpn", "imm"),
             (40 + 256, 1 << 28 | 2 << 24 | w.qpn, 0xffff),
             "QP1 receive: byte_cnt 40 + 256, GRH, IPv4, source QPN, P_Key 0xffff")
    g = v.qt.memread(buf + 0x1000, 40 + 256)
    t.eq((g[20], g[32:36], g[40:]), (0x45, bytes([10, 0, 0, 1]), mad),
         "QP1 receive buffer: IPv4 header (saddr from GID 0) then the 256 MAD bytes")
    t.ok((w.qpn, 0) in got, "the UD sender completes")

    # Other Q_Keys are dropped (u's controlled Q_Key is its own 0x11111111, then an
    # explicit one); QP1's own device number reaches nothing.
    gsi.post_recv([(buf + 0x2000, 40 + 256, key)])
    u.post_send(SEND, av(1, GSI_QKEY) + dseg(buf, 256, key))
    u.post_send(SEND, av(1, 0x00010000) + dseg(buf, 256, key))
    w.post_send(SEND, av(gsi.qpn, GSI_QKEY) + dseg(buf, 256, key))
    t.eq(sorted(f(e, "qpn", "opcode") for e in cq.poll_all()),
         sorted([(u.qpn, 0), (u.qpn, 0), (w.qpn, 0)]),
         "to QPN 1 with Q_Keys 0x11111111 and 0x10000, and to QP1's device QPN: "
         "dropped, senders complete")
    t.ok("GSI QP 0x%x Q_Key 0x80010000, message from QP 0x%x carries 0x10000" %
         (gsi.qpn, u.qpn) in v.qt.log(), "Q_Key mismatch logged as a guest error")
    t.eq(v.qt.memread(buf + 0x2000, 8), bytes(8), "nothing written to QP1's buffer")

    # QP1 -> UD QP: source QPN 1 on the wire.
    u.post_recv([(buf + 0x3000, 40 + 256, key)])
    idx = gsi.post_send(SEND, av(u.qpn, QKEY) + dseg(buf, 256, key))
    got = {f(e, "qpn", "opcode"): e for e in cq.poll_all()}
    e = got.get((u.qpn, 2))
    t.ok(e is not None, "QP1 SEND to the UD QP: received")
    if e is not None:
        t.eq(f(e, "flags_rqpn", "byte_cnt"), (1 << 28 | 2 << 24 | 1, 40 + 256),
             "UD receive of a QP1 datagram: source QPN 1")
    t.eq(v.qt.memread(buf + 0x3000 + 40, 256), mad, "payload bytes as sent")
    e = got.get((gsi.qpn, 0))
    t.ok(e is not None and f(e, "sop", "byte_cnt") == (SEND, 256) and
         cqe_fields(e)["wqe_counter"] == idx if e is not None else False,
         "QP1 requester CQE: device QPN, SEND, 256 bytes, its WQE index")

    # QP1 -> QPN 1 (itself, as ib_mad on one port) with the controlled Q_Key bit.
    gsi.post_send(SEND, av(1, GSI_QKEY) + dseg(buf + 16, 64, key))
    got = {f(e, "qpn", "opcode"): e for e in cq.poll_all()}
    e = got.get((gsi.qpn, 2))
    t.ok(e is not None and f(e, "flags_rqpn", "byte_cnt") == (1 << 28 | 2 << 24 | 1, 104)
         if e is not None else False, "QP1 to QPN 1 (loopback MAD): received, source QPN 1")
    t.eq(v.qt.memread(buf + 0x2000 + 40, 64), mad[16:80], "loopback MAD payload bytes")
    t.eq((int(state(v, "qp1_sent")) - sent0, int(state(v, "qp1_received")) - recv0), (2, 2),
         "state property: QP1 sent 2, received 2 datagrams")

    # Longer than the 256-byte path MTU, and an RDMA opcode: errors, QP1 to ERR.
    gsi.post_recv([(buf + 0x4000, 40 + 256, key)])
    gsi.post_send(SEND, av(u.qpn, QKEY) + dseg(buf, 257, key))
    t.eq([f(e, "qpn", "opcode", "syndrome") for e in cq.poll_all()],
         [(gsi.qpn, 0xd, 0x01), (gsi.qpn, 0xe, 0x05)],
         "QP1 SEND of 257 bytes (MTU 256): local length error, the receive WQE flushed")
    check(v.cmd("2RST_QP", fields=[(P["VCX_OBJ_NUMBER"], gsi.qpn)]), 0, 0, "QP1 2RST")
    gsi.sq_pi = gsi.rq_pi = 0
    v.qt.memwrite(gsi.dbr, bytes(8))
    connect_qp1(v, gsi)
    gsi.post_send(RDMA_WRITE, av(u.qpn, QKEY) + raddr(buf, key) + dseg(buf, 8, key))
    t.eq([f(e, "qpn", "opcode", "syndrome") for e in cq.poll_all()],
         [(gsi.qpn, 0xd, 0x02)], "QP1 RDMA_WRITE: local QP operation error")
    t.eq(v.qp_state(gsi), 6, "QP1 in ERR")


def main():
    v = Verbs()
    t.eq(GID0[12:], bytes([10, 0, 0, 1]), "(GID 0 is ::ffff:10.0.0.1)")
    for name, fn in [("create", create), ("traffic", traffic)]:
        run_isolated(t, name, lambda fn=fn: fn(v))
    t.ok(v.qt.alive(), "QEMU still running")
    v.close()
    t.done()


if __name__ == "__main__":
    main()
