#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Traffic between QPs of the port, no netdev (the test_roce.py helpers):
  - a multicast SEND's local copies, once per member and not to others, whole and with
    loopback-frames=on, and the group's one frame in the vport's ib multicast counters;
  - loopback-frames=on: QPs of the port talk through RoCEv2 frames looped inside the
    device (RC SEND, WRITE, READ, atomic, UD), counted as frames; a frame to another host
    without a netdev is lost; with drop, dup and reorder faults an RC stream completes
    exactly once, intact; corrupted frames fail their ICRC check;
  - the vport's ib counters count the same frames for eight exchanges (RC SEND_IMM,
    WRITE, READ, FETCH_ADD, UD, UC, XRC, an RNR NAK and its retry) whether the device
    moves the messages whole or as frames, their lengths computed here from the headers."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import run_isolated  # noqa: E402
from vcx_verbs import (GID0, cqe_fields, pd_buf_key_cq, dseg, raddr, atomic,  # noqa: E402
                       xrc, alloc_xrcd, create_xrc_srq, xrc_ini, xrc_tgt)
from vcx_nic import Nic, MAC  # noqa: E402
from test_roce import (t, Wire, pattern, wire_av, ud_qp, mcg, mcast_av,  # noqa: E402
                       SEND, SEND_IMM, WRITE, READ, FA, MTU256, ATTACH, MGID6, MMAC6,
                       DEV6)


def case_mcast_loopback(frames=False):
    """Without a netdev (one VM): the SEND reaches the port's members only, once each
    (frames: the group's frame looped inside the device)."""
    v = Nic(netdev=False, props="loopback-frames=on" if frames else "")
    try:
        pd = v.alloc_pd()
        buf = v.alloc(0x10000)
        key = v.create_mkey(pd, buf, 0x10000)
        scq, rcq, ocq = v.create_cq(), v.create_cq(), v.create_cq()
        a = ud_qp(v, pd, scq, scq, 0x5555)
        b = ud_qp(v, pd, rcq, rcq, 0x5555)
        c = ud_qp(v, pd, ocq, ocq, 0x5555)
        t.eq(mcg(v, ATTACH, b.qpn, MGID6).status, 0, "loopback: ATTACH b to ff0e::1234:5678")
        b.post_recv([(buf + 0x1000, 1024, key)])
        c.post_recv([(buf + 0x2000, 1024, key)])
        msg = pattern(123, 5)
        v.qt.memwrite(buf, msg)
        r = v.set_gid(1, DEV6, l3=1)
        assert r.status == 0
        av = bytearray(mcast_av(0x5555, MGID6, MMAC6))
        struct.pack_into(">I", av, 0x1c, 1 << 30 | 1 << 20)    # GRH, sgid_index 1 (IPv6)
        c0 = v.vport_counters()
        a.post_send(SEND_IMM, bytes(av) + dseg(buf, 123, key), imm=0xabcd0123)
        v.settle()
        c1 = v.vport_counters()
        # Ethernet 14, IPv6 40, UDP 8, BTH 12, DETH 8, ImmDt 4, 124, ICRC 4
        t.eq([tuple(y - x for x, y in zip(c0[n], c1[n]))
              for n in ("tx_ib_multicast", "rx_ib_multicast", "tx_ib_unicast",
                        "rx_ib_unicast")], [(1, 214), (1, 214), (0, 0), (0, 0)],
             "loopback: the group's one frame in the vport's ib multicast counters, sent "
             "and received, 214 bytes")
        e = scq.poll()
        t.ok(e is not None and cqe_fields(e)["opcode"] == 0, "loopback: send CQE")
        e = rcq.poll()
        grh = v.qt.memread(buf + 0x1000, 40 + 123)
        t.eq((e is not None and cqe_fields(e)["opcode"], e is not None and
              cqe_fields(e)["imm"], grh[8:24], grh[24:40], grh[40:]),
             (3, 0xabcd0123, DEV6, MGID6, msg),
             "loopback: member b gets RESP_SEND_IMM, the GRH from the IPv6 GID to the "
             "group, payload bytes")
        t.eq(ocq.poll(), None, "loopback: the unattached QP gets nothing")
    finally:
        v.close()


def lb_connect(v, qp, peer, psn, rpsn):
    """RC qp to the port's own QP peer: the path's GID and MAC are the port's."""
    v.modify_raw("RST2INIT_QP", qp, [("rre", 1), ("rwe", 1), ("rae", 1)],
                 ads=[("vhca_port_num", 1)])
    v.modify_raw("INIT2RTR_QP", qp, [("mtu", MTU256), ("log_msg_max", 30),
                                     ("remote_qpn", peer.qpn), ("next_rcv_psn", rpsn),
                                     ("log_rra_max", 2), ("min_rnr_nak", 1)],
                 ads=[("vhca_port_num", 1), ("hop_limit", 64)], rgid=GID0, rmac=MAC)
    v.modify_raw("RTR2RTS_QP", qp, [("next_send_psn", psn), ("retry_count", 7),
                                    ("rnr_retry", 7), ("log_sra_max", 2)],
                 ads=[("ack_timeout", 14)])


def lb_stream(v, a, b, cq, buf, key, n):
    """n SENDs of 256 bytes from a to b, at most 8 outstanding, an ACK timeout of virtual
    time whenever none completes; True per message received once, in order, intact."""
    got, sent = [], 0
    for _ in range(4 * n):
        if len(got) == n and sent == n:
            break
        while sent < n and sent - len(got) < 8:
            i = sent % 8
            b.post_recv([(buf + 0x8000 + i * 0x100, 0x100, key)])
            v.qt.memwrite(buf + 0xa000 + i * 0x100, pattern(0x100, sent))
            a.post_send(SEND, dseg(buf + 0xa000 + i * 0x100, 0x100, key))
            sent += 1
        v.settle()
        before = len(got)
        for e in cq.poll_all():
            if cqe_fields(e)["qpn"] == b.qpn:
                i = len(got)
                got.append(v.qt.memread(buf + 0x8000 + (i % 8) * 0x100, 0x100) ==
                           pattern(0x100, i))
        if len(got) == before:
            v.advance(4096 << 14, 4096 << 14)           # one ACK timeout (14)
    return got


def lb_pair(v):
    """A PD, a 64 KiB buffer with its key, a CQ and two RC QPs of the port connected to
    each other (PSNs 0x100 and 0x500)."""
    pd, buf, key, cq = pd_buf_key_cq(v)
    a = v.create_qp("RC", pd, cq, cq)
    b = v.create_qp("RC", pd, cq, cq)
    lb_connect(v, a, b, 0x100, 0x500)
    lb_connect(v, b, a, 0x500, 0x100)
    return pd, buf, key, cq, a, b


def uc_connect(v, qp, peer, psn, rpsn):
    """UC qp to the port's own QP peer, as lb_connect without RC's fields."""
    v.modify_raw("RST2INIT_QP", qp, [("rwe", 1)], ads=[("vhca_port_num", 1)])
    v.modify_raw("INIT2RTR_QP", qp, [("mtu", MTU256), ("log_msg_max", 30),
                                     ("remote_qpn", peer.qpn), ("next_rcv_psn", rpsn)],
                 ads=[("vhca_port_num", 1), ("hop_limit", 64)], rgid=GID0, rmac=MAC)
    v.modify_raw("RTR2RTS_QP", qp, [("next_send_psn", psn)])


def case_loop_counters(frames):
    """The vport's ib counters count a looped message's frames whether the device loops
    frames or moves the message whole (loopback-frames off): every frame once sent and
    once received, the lengths its headers give."""
    v = Wire(netdev=False, props="loopback-frames=on" if frames else "")
    mode = "frames" if frames else "whole messages"
    try:
        pd, buf, key, cq, a, b = lb_pair(v)
        u1, u2 = v.create_qp("UD", pd, cq, cq), v.create_qp("UD", pd, cq, cq)
        v.connect(u1, qkey=0x77)
        v.connect(u2, qkey=0x77)
        uc1, uc2 = v.create_qp("UC", pd, cq, cq), v.create_qp("UC", pd, cq, cq)
        uc_connect(v, uc1, uc2, 0x300, 0x700)
        uc_connect(v, uc2, uc1, 0x700, 0x300)
        xrcd, scq = alloc_xrcd(v), v.create_cq()
        srq = create_xrc_srq(v, pd, xrcd, scq.cqn)
        ini, tgt = xrc_ini(v, pd, cq), xrc_tgt(v, pd, xrcd)
        lb_connect(v, ini, tgt, 0x900, 0xb00)
        lb_connect(v, tgt, ini, 0xb00, 0x900)
        v.qt.memwrite(buf, pattern(0x1000, 7))
        v.qt.memwrite(buf + 0x5000, struct.pack("<Q", 40))
        # Every frame: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4 = 58, then its
        # extension headers and the payload padded to 4 bytes. MTU 256.
        ack = 58 + 4                                            # AETH
        steps = [
            ("SEND_IMM 600 B", lambda: (b.post_recv([(buf + 0x1000, 1024, key)]),
                                        a.post_send(SEND_IMM, dseg(buf, 600, key), imm=1)),
             [58 + 256, 58 + 256, 58 + 4 + 88, ack]),
            ("WRITE 700 B", lambda: a.post_send(WRITE, raddr(buf + 0x3000, key) +
                                                dseg(buf, 700, key)),
             [58 + 16 + 256, 58 + 256, 58 + 188, ack]),
            ("READ 700 B", lambda: a.post_send(READ, raddr(buf + 0x3000, key) +
                                               dseg(buf + 0x4000, 700, key)),
             [58 + 16, 58 + 4 + 256, 58 + 256, 58 + 4 + 188]),
            ("FETCH_ADD", lambda: a.post_send(FA, raddr(buf + 0x5000, key) + atomic(2) +
                                              dseg(buf + 0x5008, 8, key)),
             [58 + 28, 58 + 4 + 8]),
            ("UD SEND 201 B", lambda: (u2.post_recv([(buf + 0x6000, 1024, key)]),
                                       u1.post_send(SEND, wire_av(0x77, u2.qpn, gid=GID0,
                                                                  rmac=MAC) +
                                                    dseg(buf, 201, key))),
             [58 + 8 + 204]),
            ("UC SEND 300 B", lambda: (uc2.post_recv([(buf + 0x8000, 1024, key)]),
                                       uc1.post_send(SEND, dseg(buf, 300, key))),
             [58 + 256, 58 + 44]),                              # no ACK
            ("XRC SEND 100 B", lambda: (srq.post([(buf + 0x9000, 1024, key)]),
                                        ini.post_send(SEND, xrc(srq.srqn) +
                                                      dseg(buf, 100, key))),
             [58 + 4 + 100, ack]),                              # XRCETH; ACK without
            ("SEND without a receive WQE (RNR NAK), then one", lambda: (
                a.post_send(SEND, dseg(buf, 100, key)), v.settle(),
                b.post_recv([(buf + 0x7000, 1024, key)]),
                v.advance(1 << 30, 1 << 30)),
             [58 + 100, ack, 58 + 100, ack]),
        ]
        for name, post, frames_len in steps:
            c0 = v.vport_counters()
            post()
            v.settle()
            c1 = v.vport_counters()
            cqes = cq.poll_all()
            want = (len(frames_len), sum(frames_len))
            t.eq([tuple(y - x for x, y in zip(c0[n], c1[n]))
                  for n in ("tx_ib_unicast", "rx_ib_unicast", "tx_ib_multicast")],
                 [want, want, (0, 0)],
                 "%s, %s: %d frames of %d bytes sent and received (%d CQEs)" %
                 (mode, name, want[0], want[1], len(cqes)))
        t.eq([v.qt.memread(buf + a, n) for a, n in ((0x8000, 300), (0x9000, 100),
                                                     (0x7000, 100))],
             [pattern(0x1000, 7)[:n] for n in (300, 100, 100)],
             "%s: the UC and XRC SENDs and the SEND after the RNR NAK arrived" % mode)
    finally:
        v.close()


def case_loopback_frames():
    """loopback-frames=on, no netdev: QPs of the port through the packet engine."""
    v = Wire(netdev=False, props="loopback-frames=on")
    try:
        pd, buf, key, cq, a, b = lb_pair(v)
        st0 = v.d.state()
        msg = pattern(600, 9)
        v.qt.memwrite(buf, msg)
        b.post_recv([(buf + 0x1000, 1024, key)])
        a.post_send(SEND_IMM, dseg(buf, 600, key), imm=0x1234)
        v.settle()
        es = {cqe_fields(e)["qpn"]: cqe_fields(e) for e in cq.poll_all()}
        st = v.d.state()
        t.eq((es.get(a.qpn, {}).get("opcode"), es.get(b.qpn, {}).get("opcode"),
              es.get(b.qpn, {}).get("byte_cnt"), v.qt.memread(buf + 0x1000, 600)),
             (0, 3, 600, msg), "SEND_IMM of 600 bytes: requester and responder CQEs, bytes")
        delta = [int(st[k]) - int(st0[k]) for k in ("roce_tx_pkts", "roce_rx_pkts",
                                                     "acks_sent", "roce_icrc_err")]
        t.eq(delta, [4, 4, 1, 0],
             "3 request frames at MTU 256 and 1 ACK, each looped and received once")
        # WRITE, then READ it back, then an atomic
        v.qt.memwrite(buf + 0x2000, pattern(700, 3))
        a.post_send(WRITE, raddr(buf + 0x3000, key) + dseg(buf + 0x2000, 700, key))
        a.post_send(READ, raddr(buf + 0x3000, key) + dseg(buf + 0x4000, 700, key))
        v.qt.memwrite(buf + 0x5000, struct.pack("<Q", 40))
        a.post_send(FA, raddr(buf + 0x5000, key) + atomic(2) + dseg(buf + 0x5008, 8, key))
        v.settle()
        ops = [cqe_fields(e)["opcode"] for e in cq.poll_all()]
        t.eq((ops, v.qt.memread(buf + 0x4000, 700), v.qt.memread(buf + 0x3000, 700),
              struct.unpack("<QQ", v.qt.memread(buf + 0x5000, 16))),
             ([0, 0, 0], pattern(700, 3), pattern(700, 3), (42, 40)),
             "WRITE, READ back, FETCH_ADD: three requester CQEs, bytes and values")
        # UD to the port's own QP through a frame
        u1, u2 = v.create_qp("UD", pd, cq, cq), v.create_qp("UD", pd, cq, cq)
        v.connect(u1, qkey=0x77)
        v.connect(u2, qkey=0x77)
        u2.post_recv([(buf + 0x6000, 1024, key)])
        v.qt.memwrite(buf + 0x7000, pattern(200, 4))
        t0 = v.counter("roce_tx_pkts")
        u1.post_send(SEND, wire_av(0x77, u2.qpn, gid=GID0, rmac=MAC) +
                     dseg(buf + 0x7000, 200, key))
        v.settle()
        es = {cqe_fields(e)["qpn"]: cqe_fields(e) for e in cq.poll_all()}
        t.eq((es.get(u2.qpn, {}).get("byte_cnt"), v.qt.memread(buf + 0x6000 + 40, 200),
              v.qt.memread(buf + 0x6000 + 32, 8), v.counter("roce_tx_pkts") - t0),
             (240, pattern(200, 4), GID0[12:] * 2, 1),
             "UD SEND to a QP of the port: one frame, the GRH area's IPv4 header from and "
             "to the port's address, the payload")
        # another host, and no netdev: the frame is lost, UD completes as sent
        t0 = v.counter("roce_rx_pkts")
        u1.post_send(SEND, wire_av(0x77, u2.qpn) + dseg(buf + 0x7000, 200, key))
        v.settle()
        es = [cqe_fields(e) for e in cq.poll_all()]
        t.eq(([e["qpn"] for e in es], v.counter("roce_rx_pkts") - t0), ([u1.qpn], 0),
             "UD SEND to another host without a netdev: sent, never received")
        # the wire faults apply to looped frames too
        r = v.qt.qom_set("/machine/peripheral/vcx0", "wire-fault",
                         "drop=0.05,dup=0.05,reorder=0.05,seed=11")
        t.ok("error" not in r, "wire-fault set")
        r0 = v.counter("retransmits")
        got = lb_stream(v, a, b, cq, buf, key, 200)
        v.qt.qom_set("/machine/peripheral/vcx0", "wire-fault", "")
        t.eq((len(got), all(got), v.qp_state(a)), (200, True, 3),
             "drop, dup, reorder 5%: 200 SENDs received once each, in order, intact; "
             "the requester still RTS")
        t.ok(v.counter("retransmits") > r0 and v.counter("duplicate_request") > 0,
             "retransmissions and duplicates counted (%d, %d)" %
             (v.counter("retransmits") - r0, v.counter("duplicate_request")))
        # Without a fault a looped frame carries no ICRC (nothing can alter it); with
        # corrupt set, in either direction, each frame has one and the check catches
        # every flipped byte.
        for d in ("tx", "rx"):
            r = v.qt.qom_set("/machine/peripheral/vcx0", "wire-fault",
                             "corrupt=0.05,dir=%s,seed=5" % d)
            t.ok("error" not in r, "wire-fault corrupt %s set" % d)
            e0, c0 = v.counter("roce_icrc_err"), v.counter("fault_corrupt")
            got = lb_stream(v, a, b, cq, buf, key, 200)
            v.qt.qom_set("/machine/peripheral/vcx0", "wire-fault", "")
            e, c = v.counter("roce_icrc_err") - e0, v.counter("fault_corrupt") - c0
            # (a flip of BTH resv8a, which the ICRC masks, is the one that passes)
            t.eq((len(got), all(got), v.qp_state(a), 0 < e <= c), (200, True, 3, True),
                 "corrupt 5%% %s: 200 SENDs intact, %d of %d corrupted frames failed "
                 "their ICRC check" % (d, e, c))
    finally:
        v.close()


def main():
    for name, fn in (("multicast loopback", case_mcast_loopback),
                     ("multicast loopback, frames", lambda: case_mcast_loopback(True)),
                     ("loopback frames", case_loopback_frames),
                     ("looped messages in the vport counters, whole",
                      lambda: case_loop_counters(False)),
                     ("looped messages in the vport counters, frames",
                      lambda: case_loop_counters(True))):
        run_isolated(t, name, fn)
    t.done()


if __name__ == "__main__":
    main()
