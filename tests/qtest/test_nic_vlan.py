#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""VLAN offloads of the device's NIC (hw-model/nic/), with its port on a QEMU socket netdev
this test reads and writes: C-VLAN stripping by an RQ with vsd 0 (the frame in the buffer
without its tag, the CQE's cvlan present bit and vlan_info, its byte count), MODIFY_RQ
turning stripping on and off, S-VLAN tags left in place; the CQE's check_sum from the IP
header (a tag left in the frame and the padding of a short frame not summed); steering on
the first tag (cvlan_tag, svlan_tag, first_prio, first_cfi, first_vid); VLAN insertion by
the send WQE (C- and S-VLAN, with checksum offload, through the loopback into a stripping
RQ), and the insertions the device refuses (unknown insert bits, insertion on LSO, a frame
over the MTU once tagged). Frames and CQE fields are compared with values built here."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, run_isolated, get  # noqa: E402
from vcx_verbs import P  # noqa: E402
from vcx_nic import (N, Nic, MAC, PEER, ipv4, udp, tcp, eth, pad60, run_nic_cases,  # noqa: E402
                     send_wqe, csum)
from test_nic import Setup, cqe, poll, send, IP_A, IP_B  # noqa: E402
import test_nic  # noqa: E402

t = Tap()
test_nic.t = t                          # the helpers imported above report here too

INSERT_VLAN, INSERT_SVLAN = 0x8000, 0x0001
TCI = 5 << 13 | 1 << 12 | 10            # PCP 5, CFI/DEI 1, VID 10


def tag(frame, tci, tpid=0x8100):
    """frame with a VLAN tag after the MACs."""
    return frame[:12] + struct.pack(">HH", tpid, tci) + frame[12:]


def vlan_bits(e):
    """The CQE's cvlan present bit (byte 0x1d, bit 0) and vlan_info."""
    return e[0x1d] & 1, struct.unpack_from(">H", e, 0x1e)[0]


def rx_setup(v, su, vsd):
    """An RQ (vsd as given) behind a catch-all root table, with 16 receive buffers."""
    rq = v.rq(su.pd, su.rcq, vsd=vsd)
    tir = v.tir(su.td, rqn=rq.rqn)
    v.catch_all(tir)
    bufs = []
    for _ in range(16):
        a = su.rx_buf(v)
        bufs.append(a)
        rq.post([(a, 4096, su.key)])
    return rq, bufs


def rx_one(v, su, frame):
    v.wire_in(frame)
    return poll(v, su.rcq)


def rx_kept(v, su, frame, buf, what):
    """frame (one tag) arrives with its tag: in the buffer whole, no cvlan bit, check_sum
    from the IP header behind the tag. The CQE's fields, or None."""
    e = rx_one(v, su, frame)
    t.ok(e is not None, "%s: delivered" % what)
    if e is None:
        return None
    c = cqe(e)
    t.eq((c["byte_cnt"], vlan_bits(e), v.qt.memread(buf, len(frame))),
         (len(frame), (0, 0), frame), "%s: not stripped, no cvlan bit" % what)
    t.eq(c["check_sum"], csum(frame[18:]), "%s: check_sum from the IP header, the tag not "
         "summed" % what)
    return c


def case_strip(v):
    su = Setup(v)
    rq, bufs = rx_setup(v, su, vsd=0)
    at = N["VCX_QUERY_RQ_OUT_CTX_AT"]
    r = v.ncmd("QUERY_RQ", out_len=N["VCX_QUERY_RQ_OUT_LEN"],
               fields=[(P["VCX_OBJ_NUMBER"], rq.rqn)])
    t.eq(get(r.out, N["VCX_RQC_VSD"], at), 0, "CREATE_RQ with vsd 0 accepted; QUERY_RQ: vsd 0")
    data = b"vlan" * 30
    plain = eth(MAC, PEER, 0x800, ipv4(IP_B, IP_A, 17, udp(IP_B, IP_A, 7, 9, data)))
    tagged = tag(plain, TCI)
    e = rx_one(v, su, tagged)
    t.ok(e is not None, "C-tagged frame delivered")
    if e is not None:
        c = cqe(e)
        t.eq(v.qt.memread(bufs[0], len(plain) + 4), plain + bytes(4),
             "stripping RQ: the frame in the buffer without its tag")
        t.eq((c["byte_cnt"], vlan_bits(e)), (len(plain), (1, TCI)),
             "CQE: byte count without the tag, cvlan present, vlan_info = the tag's TCI")
        t.eq((c["l3"], c["l4"], c["hds"], c["check_sum"]), (2, 2, 7, csum(plain[14:])),
             "CQE: IPv4/UDP, L2/L3/L4 OK, check_sum over the IP packet")
    e = rx_one(v, su, plain)
    t.eq(e is not None and (cqe(e)["byte_cnt"], vlan_bits(e)), (len(plain), (0, 0)),
         "untagged frame: delivered as it came, no cvlan bit")
    stag = tag(plain, TCI, 0x88a8)
    c = rx_kept(v, su, stag, bufs[2], "S-VLAN tag")
    if c:
        t.eq((c["l3"], c["l4"], c["hds"]), (2, 2, 7),
             "S-tagged: the IPv4/UDP headers behind the tag parsed")
    # MODIFY_RQ vsd 1 (bitmask bit 1) in RDY: the tag stays in the frame
    v.ok(v.modify_rq(rq.rqn, 1, 1, bitmask=N["VCX_MODIFY_RQ_BITMASK_VSD"], vsd=1),
         "MODIFY_RQ RDY->RDY vsd 1")
    r = v.ncmd("QUERY_RQ", out_len=N["VCX_QUERY_RQ_OUT_LEN"],
               fields=[(P["VCX_OBJ_NUMBER"], rq.rqn)])
    t.eq(get(r.out, N["VCX_RQC_VSD"], at), 1, "QUERY_RQ: vsd 1")
    rx_kept(v, su, tagged, bufs[3], "C-VLAN tag to an RQ with vsd 1")
    # a MODIFY_RQ without the vsd bit leaves it; with it, stripping is back on
    v.ok(v.modify_rq(rq.rqn, 1, 1, vsd=0), "MODIFY_RQ RDY->RDY, vsd 0 but no bitmask")
    e = rx_one(v, su, tagged)
    t.eq(e is not None and vlan_bits(e), (0, 0), "vsd unchanged without its bitmask bit")
    v.ok(v.modify_rq(rq.rqn, 1, 1, bitmask=N["VCX_MODIFY_RQ_BITMASK_VSD"], vsd=0),
         "MODIFY_RQ RDY->RDY vsd 0")
    tcp6 = tag(eth(MAC, PEER, 0x800, ipv4(IP_B, IP_A, 6, tcp(IP_B, IP_A, 80, 81, b"t" * 333))),
               0x0fff)
    e = rx_one(v, su, tcp6)
    t.eq(e is not None and (cqe(e)["byte_cnt"], vlan_bits(e), cqe(e)["l4"], cqe(e)["hds"]),
         (len(tcp6) - 4, (1, 0x0fff), 1, 7), "stripping on again: TCP behind VID 4095 "
         "stripped, L4 TCP, checksums OK")


def case_check_sum(v):
    """check_sum of a short frame: the pad after the IP packet is not summed (ConnectX)."""
    su = Setup(v)
    rx_setup(v, su, vsd=1)
    short = eth(MAC, PEER, 0x800, ipv4(IP_B, IP_A, 17, udp(IP_B, IP_A, 7, 9, b"abcd")))
    framed = pad60(short)[:56] + b"\x11\x22\x33\x44"     # a 60-byte frame, pad not zero
    e = rx_one(v, su, framed)
    t.eq(e is not None and (cqe(e)["byte_cnt"], cqe(e)["hds"], cqe(e)["check_sum"]),
         (60, 7, csum(short[14:])), "60-byte frame: check_sum over the IP packet only, "
         "not its padding")
    longer = framed + b"\x55"
    e = rx_one(v, su, longer)
    t.eq(e is not None and (cqe(e)["byte_cnt"], cqe(e)["check_sum"]),
         (61, csum(longer[14:])), "61-byte frame: check_sum to the frame's end")
    arp = tag(eth(MAC, PEER, 0x806, bytes(range(28))), 7)
    e = rx_one(v, su, arp)
    t.eq(e is not None and (cqe(e)["l3"], cqe(e)["check_sum"]), (0, csum(arp[18:])),
         "tagged ARP: no L3, check_sum after the L2 header and its tag")


def case_steer(v):
    su = Setup(v)
    rqs = [v.rq(su.pd, su.rcq) for _ in range(4)]
    tirs = [v.tir(su.td, rqn=q.rqn) for q in rqs]
    for q in rqs:
        for _ in range(4):
            q.post([(su.rx_buf(v), 4096, su.key)])
    ft = v.ft(0, 4)
    # as mlx5e's VLAN table: a C-tag with a given VID, any S-tag, untagged
    g_vid = v.fg_id(ft, 0, 3, {"CVLAN_TAG": 1, "FIRST_VID": 0xfff})
    g_s = v.fg_id(ft, 4, 5, {"SVLAN_TAG": 1})
    g_prio = v.fg_id(ft, 6, 7, {"CVLAN_TAG": 1, "FIRST_PRIO": 7, "FIRST_CFI": 1})
    g_none = v.fg_id(ft, 8, 9, {"CVLAN_TAG": 1, "SVLAN_TAG": 1})
    v.ok(v.fte(ft, 0, g_vid, 4, (2, tirs[0]), value={"CVLAN_TAG": 1, "FIRST_VID": 10},
               flow_tag=0x10), "FTE C-tag VID 10")
    v.ok(v.fte(ft, 4, g_s, 4, (2, tirs[1]), value={"SVLAN_TAG": 1}, flow_tag=0x20),
         "FTE any S-tag")
    v.ok(v.fte(ft, 6, g_prio, 4, (2, tirs[2]), value={"CVLAN_TAG": 1, "FIRST_PRIO": 3,
                                                       "FIRST_CFI": 0}, flow_tag=0x30),
         "FTE C-tag PCP 3, CFI 0")
    v.ok(v.fte(ft, 8, g_none, 4, (2, tirs[3]), value={}, flow_tag=0x40), "FTE untagged")
    v.ok(v.root(ft), "SET_FLOW_TABLE_ROOT")
    plain = eth(MAC, PEER, 0x800, ipv4(IP_B, IP_A, 17, udp(IP_B, IP_A, 7, 9, b"s" * 40)))
    frames = [(tag(plain, 0xa00a), 0x10, "C-tag VID 10 (PCP 5)"),
              (tag(plain, 10, 0x88a8), 0x20, "S-tag VID 10"),
              (tag(plain, 3 << 13 | 99), 0x30, "C-tag VID 99 PCP 3"),
              (plain, 0x40, "untagged")]
    for f, ftag, what in frames:
        e = rx_one(v, su, f)
        t.eq(e is not None and cqe(e)["flow_tag"], ftag, "%s: steered by its tag (flow tag "
             "0x%x)" % (what, ftag))
    before = int(v.d.state()["nic_rx_drop"])
    v.wire_in(tag(plain, 3 << 13 | 1 << 12 | 99))
    t.eq((su.rcq.poll(), int(v.d.state()["nic_rx_drop"]) - before), (None, 1),
         "C-tag VID 99 PCP 3 with CFI 1: no entry matches, dropped")


def case_insert(v):
    su = Setup(v)
    v.sock.drain()
    data = bytes(range(150))
    bad = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 17, udp(IP_A, IP_B, 1, 2, data,
                                                           good_csum=False), good_csum=False))
    good = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 17, udp(IP_A, IP_B, 1, 2, data)))
    v.qt.memwrite(su.buf, bad)
    su.sq.post(send_wqe(su.sq.sqn, su.sq.pi, b"", [(su.buf, len(bad), su.key)], cs=0xc0,
                        insert=(INSERT_VLAN, TCI)))
    v.settle()
    t.eq(v.sock.recv(), tag(good, TCI), "insert C-VLAN with L3+L4 checksum flags: the tag "
         "after the MACs, checksums computed behind it")
    e = poll(v, su.scq)
    t.eq(e is not None and (cqe(e)["opcode"], cqe(e)["sop"]), (0, 0x0a), "send CQE")
    v.qt.memwrite(su.buf, good)
    su.sq.post(send_wqe(su.sq.sqn, su.sq.pi, b"", [(su.buf, len(good), su.key)],
                        insert=(INSERT_VLAN | INSERT_SVLAN, 0x0123)))
    v.settle()
    t.eq(v.sock.recv(), tag(good, 0x0123, 0x88a8), "insert type with the S-VLAN bit: TPID "
         "0x88a8")
    small = eth(PEER, MAC, 0x88b5, b"tiny")
    v.qt.memwrite(su.buf, small)
    su.sq.post(send_wqe(su.sq.sqn, su.sq.pi, b"", [(su.buf, len(small), su.key)],
                        insert=(INSERT_VLAN, 5)))
    v.settle()
    t.eq(v.sock.recv(), pad60(tag(small, 5)), "short frame: tagged, then padded to 60 bytes")
    # loopback to the port's own MAC into a stripping RQ: the inserted tag in the CQE
    rq = v.rq(su.pd, su.rcq, vsd=0)
    v.catch_all(v.tir(v.td(), rqn=rq.rqn))
    buf = su.rx_buf(v)
    rq.post([(buf, 4096, su.key)])
    own = eth(MAC, MAC, 0x0800, good[14:])
    v.qt.memwrite(su.buf, own)
    su.sq.post(send_wqe(su.sq.sqn, su.sq.pi, b"", [(su.buf, len(own), su.key)],
                        insert=(INSERT_VLAN, TCI)))
    v.settle()
    e = poll(v, su.rcq)
    t.eq(e is not None and (cqe(e)["byte_cnt"], vlan_bits(e), v.qt.memread(buf, len(own))),
         (len(own), (1, TCI), own), "looped back into a stripping RQ: the frame as sent, "
         "the inserted tag in the CQE")


def case_insert_errors(v):
    su = Setup(v)
    v.sock.drain()
    f = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 17, udp(IP_A, IP_B, 1, 2, b"x" * 100)))
    mtu_frame = eth(PEER, MAC, 0x88b5, bytes(9216 + 4))    # vport MTU 9216 + 18: fits untagged
    hdr = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 6, tcp(IP_A, IP_B, 1, 2, b"")))[:54]
    cases = [
        ("unknown insert type bits (0x8002)", f, dict(insert=(0x8002, 1)), 0x02),
        ("insertion on an LSO WQE", f, dict(insert=(INSERT_VLAN, 1), opcode=0x0e, mss=100),
         0x02),
        ("insertion past the vport MTU", mtu_frame, dict(insert=(INSERT_VLAN, 1)), 0x01),
    ]
    for desc, frame, kw, syn in cases:
        v.ok(v.modify_sq(su.sq.sqn, v.sq_state(su.sq.sqn), 0), "SQ to RST")
        v.ok(v.modify_sq(su.sq.sqn, 0, 1), "SQ to RDY")
        su.sq.pi = 0
        su.scq.poll_all()
        v.qt.memwrite(su.buf, frame)
        su.sq.post(send_wqe(su.sq.sqn, 0, b"", [(su.buf, len(frame), su.key)], **kw))
        v.settle()
        e = poll(v, su.scq)
        t.eq(e is not None and (cqe(e)["opcode"], cqe(e)["syndrome"]), (0xd, syn),
             "%s: error CQE (REQ_ERR, syndrome 0x%x)" % (desc, syn))
        t.eq((v.sq_state(su.sq.sqn), v.sock.recv(0.2)), (3, None),
             "%s: SQ in ERR, nothing on the wire" % desc)
    v.ok(v.modify_sq(su.sq.sqn, 3, 0), "SQ to RST")
    v.ok(v.modify_sq(su.sq.sqn, 0, 1), "SQ to RDY")
    su.sq.pi = 0
    v.qt.memwrite(su.buf, mtu_frame)
    su.sq.post(send_wqe(su.sq.sqn, 0, b"", [(su.buf, len(mtu_frame), su.key)]))
    v.settle()
    t.eq(v.sock.recv(), mtu_frame, "the same frame untagged: sent (MTU + 18 bytes)")
    send(v, su, hdr + b"p" * 10, inline=len(hdr))
    t.ok(v.sock.recv() is not None, "inline headers still work after the insert cases")
    log = open(v.qt.log_path).read()
    t.ok("unknown VLAN insert type bits" in log and "VLAN insertion on an LSO WQE" in log,
         "the refusals are logged as guest errors")


def main():
    run_nic_cases(t, [("VLAN stripping", case_strip), ("check_sum", case_check_sum),
                       ("VLAN steering", case_steer), ("VLAN insertion", case_insert),
                       ("VLAN insertion errors", case_insert_errors)])
    t.done()


if __name__ == "__main__":
    main()
