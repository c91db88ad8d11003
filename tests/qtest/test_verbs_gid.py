#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""RoCE address (GID) table: QUERY_ROCE_ADDRESS / SET_ROCE_ADDRESS (exact entry bytes,
index, port, version and L3 type checks, deletion by a zero GID, the state property's
gids count), and its use by the transport engine: a UD receive's GRH area carries the
sender's source GID from its address vector's sgid_index (IPv6 GRH and IPv4 header), an
AV naming an empty entry fails with a local QP operation error, and an RC path's
src_addr_index must name a valid entry when the path is applied (BAD_PARAM). The table
survives TEARDOWN_HCA and is emptied by a reset."""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, run_isolated, put, H  # noqa: E402
from vcx_verbs import Verbs, cqe_fields, dseg, av, P, GID0, cqe_tuple as f  # noqa: E402

t = Tap()
SEND = 0x0a
QKEY = 0x11111111
GID_LL = bytes.fromhex("fe800000000000005054 00fffe123456".replace(" ", ""))
GID_V6_A = bytes.fromhex("20010db8000000000000000000000003")
GID_V6_B = bytes.fromhex("20010db800000000000000000000000b")
GID_V4 = bytes(10) + b"\xff\xff" + bytes([192, 168, 1, 7])


def check(r, status, syndrome, desc):
    t.eq((r.deliv, r.status, r.syndrome), (0, status, syndrome), desc)


def entry(gid, version=2, l3=1, mac=b"\x52\x54\x00\x12\x34\x56", vlan=None):
    e = bytearray(32)
    e[0:16] = gid
    if vlan is not None:
        put(e, H["VCX_GID_VLAN_VALID"], 1)
        put(e, H["VCX_GID_VLAN_ID"], vlan)
    e[0x12:0x18] = mac
    put(e, H["VCX_GID_L3_TYPE"], l3)
    put(e, H["VCX_GID_VERSION"], version)
    return bytes(e)


def set_raw(v, index, e, port=1, op_mod=0, in_len=0x30):
    return v.cmd("SET_ROCE_ADDRESS", in_len=in_len, op_mod=op_mod,
                 fields=[(H["VCX_ROCE_ADDRESS_IN_INDEX"], index),
                         (H["VCX_ROCE_ADDRESS_IN_VHCA_PORT_NUM"], port)],
                 payload={0x10: e})


def table(v):
    r = v.query_gid(0)
    t.eq((r.status, r.out[0x10:0x20]), (0, GID0), "QUERY_ROCE_ADDRESS 0: the helper's GID0")
    r = v.query_gid(5)
    t.eq((r.status, r.out[0x10:0x30]), (0, bytes(32)), "QUERY_ROCE_ADDRESS 5: empty, all zeros")
    t.eq(v.d.state()["gids"], "1", "state property: gids=1")
    e = entry(GID_LL, vlan=100)
    check(set_raw(v, 5, e), 0, 0, "SET_ROCE_ADDRESS 5: link-local GID, v2, IPv6, VLAN 100")
    t.eq(e[0x10:0x20], bytes.fromhex("10645254001234560000010200000000"),
         "(entry layout: vlan_valid, vlan_id 100, MAC, l3_type 1, version 2)")
    r = v.query_gid(5)
    t.eq((r.status, r.out[0x10:0x30]), (0, e), "QUERY_ROCE_ADDRESS 5 returns the 32 bytes set")
    t.eq(v.d.state()["gids"], "2", "state property: gids=2")
    check(set_raw(v, 256, e), 3, 0x07610001, "SET_ROCE_ADDRESS index 256 (table 256): BAD_PARAM")
    check(set_raw(v, 0xffff, e), 3, 0x07610001, "SET_ROCE_ADDRESS index 0xffff: BAD_PARAM")
    r = v.query_gid(256)
    check(r, 3, 0x07600001, "QUERY_ROCE_ADDRESS index 256: BAD_PARAM")
    check(set_raw(v, 6, e, port=2), 3, 0x07610002, "SET_ROCE_ADDRESS vhca_port_num 2: BAD_PARAM")
    check(v.query_gid(6, port=3), 3, 0x07600002, "QUERY_ROCE_ADDRESS vhca_port_num 3: BAD_PARAM")
    check(set_raw(v, 6, entry(GID_V6_A, version=0)), 3, 0x07610003,
          "SET_ROCE_ADDRESS roce_version 0 (RoCEv1): BAD_PARAM, only v2")
    check(set_raw(v, 6, entry(GID_V6_A, version=1)), 3, 0x07610003,
          "SET_ROCE_ADDRESS roce_version 1: BAD_PARAM")
    check(set_raw(v, 6, entry(GID_V6_A, l3=2)), 3, 0x07610004,
          "SET_ROCE_ADDRESS roce_l3_type 2: BAD_PARAM")
    check(set_raw(v, 5, entry(GID_V6_A, version=0)), 3, 0x07610003,
          "SET_ROCE_ADDRESS v1 over entry 5: BAD_PARAM")
    t.eq(v.query_gid(5).out[0x10:0x30], e, "refused SETs left entry 5 as it was")
    t.eq(v.query_gid(6).out[0x10:0x30], bytes(32), "refused SETs left entry 6 empty")
    check(set_raw(v, 6, entry(GID_V6_A), op_mod=1), 3, 0x0761ff09,
          "SET_ROCE_ADDRESS op_mod 1: BAD_PARAM")
    check(set_raw(v, 6, entry(GID_V6_A)[:16], in_len=0x20), 0x50, 0x0761ff02,
          "SET_ROCE_ADDRESS 32-byte input: BAD_INPUT_LEN")
    r = v.cmd("QUERY_ROCE_ADDRESS", out_len=0x20,
              fields=[(H["VCX_ROCE_ADDRESS_IN_INDEX"], 5)])
    check(r, 0x51, 0x0760ff03, "QUERY_ROCE_ADDRESS 32-byte output: BAD_OUTPUT_LEN")
    # mlx5_ib's del_gid: zero GID and MAC, but roce_version 2 and l3_type still set
    check(set_raw(v, 5, entry(bytes(16), version=2, l3=1, mac=bytes(6))), 0, 0,
          "SET_ROCE_ADDRESS 5 with a zero GID (v2, IPv6): deletes")
    t.eq(v.query_gid(5).out[0x10:0x30], bytes(32), "deleted entry 5 reads all zeros")
    check(set_raw(v, 5, bytes(32)), 0, 0, "deleting an empty entry: OK")
    t.eq(v.d.state()["gids"], "1", "state property: gids=1 after the delete")
    check(set_raw(v, 255, entry(GID_V4, l3=0)), 0, 0, "SET_ROCE_ADDRESS 255 (last): OK")
    t.eq(v.query_gid(255).out[0x10:0x20], GID_V4, "entry 255 holds the IPv4-mapped GID")
    check(set_raw(v, 255, bytes(32)), 0, 0, "delete entry 255")


def ud_grh(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x8000)
    key = v.create_mkey(pd, buf, 0x8000)
    cq = v.create_cq()
    a = v.create_qp("UD", pd, cq, cq)
    b = v.create_qp("UD", pd, cq, cq)
    v.connect(a)
    v.connect(b)
    msg = b"from the table"
    v.qt.memwrite(buf, msg)
    check(set_raw(v, 3, entry(GID_V6_A)), 0, 0, "GID 3: 2001:db8::3")
    check(set_raw(v, 4, entry(GID_V4, l3=0)), 0, 0, "GID 4: ::ffff:192.168.1.7")
    # IPv6: GRH with source GID 3 and destination 2001:db8::b
    b.post_recv([(buf + 0x1000, 40 + 64, key)])
    a.post_send(SEND, av(b.qpn, QKEY, rgid=GID_V6_B, hop_limit=17, sgid_index=3) +
                dseg(buf, len(msg), key))
    got = {cqe_fields(e)["qpn"]: e for e in cq.poll_all()}
    t.eq(f(got[b.qpn], "opcode", "byte_cnt", "flags_rqpn"),
         (2, 40 + len(msg), 1 << 28 | 1 << 24 | a.qpn),
         "UD receive: RESP_SEND, byte_cnt + 40, GRH present, L3 IPv6, source QPN")
    g = v.qt.memread(buf + 0x1000, 40)
    t.eq((g[0:4], struct.unpack(">H", g[4:6])[0], g[6], g[7], g[8:24], g[24:40]),
         (b"\x60\x00\x00\x00", 20 + 8 + len(msg) + 4, 17, 17, GID_V6_A, GID_V6_B),
         "GRH: version 6, payload length, UDP, hop limit 17, SGID = table entry 3, DGID")
    # IPv4: the header's source address from GID 4
    b.post_recv([(buf + 0x2000, 40 + 64, key)])
    a.post_send(SEND, av(b.qpn, QKEY, sgid_index=4) + dseg(buf, len(msg), key))
    got = {cqe_fields(e)["qpn"]: e for e in cq.poll_all()}
    g = v.qt.memread(buf + 0x2000, 40)
    t.eq((g[:20], g[20], g[32:36], g[36:40]),
         (bytes(20), 0x45, bytes([192, 168, 1, 7]), bytes([10, 0, 0, 1])),
         "IPv4 header: saddr 192.168.1.7 from GID 4, daddr 10.0.0.1 (was the daddr before)")
    # mlx5 CQE: l4_l3_hdr_type (byte 0x1d) bit 0 = VLAN present, vlan_info at 0x1e
    e = got.get(b.qpn, bytes(64))
    t.eq((e[0x1d] & 1, struct.unpack_from(">H", e, 0x1e)[0]), (0, 0),
         "UD receive from a GID without a VLAN: no VLAN in the CQE")
    # a GID entry on VLAN 77: the receiver's CQE reports the tag a frame would carry
    # (PCP = the AV's SL, RoCE AVs keep it in byte 0x0c bits 3:1)
    check(set_raw(v, 5, entry(GID_V4, l3=0, vlan=77)), 0, 0, "GID 5: ::ffff:192.168.1.7, VLAN 77")
    b.post_recv([(buf + 0x2800, 40 + 64, key)])
    a5 = bytearray(av(b.qpn, QKEY, sgid_index=5))
    a5[0x0c] |= 2 << 1
    a.post_send(SEND, bytes(a5) + dseg(buf, len(msg), key))
    got = {cqe_fields(e)["qpn"]: e for e in cq.poll_all()}
    e = got.get(b.qpn, bytes(64))
    t.eq((e[0x1d] & 1, struct.unpack_from(">H", e, 0x1e)[0], v.qt.memread(buf + 0x2800 + 40,
                                                                          len(msg))),
         (1, 2 << 13 | 77, msg),
         "UD receive from GID 5: VLAN present, vlan_info PCP 2 (the AV's SL) and VID 77")
    check(set_raw(v, 5, bytes(32)), 0, 0, "delete GID 5")
    # an AV naming a deleted entry
    check(set_raw(v, 3, bytes(32)), 0, 0, "delete GID 3")
    b.post_recv([(buf + 0x3000, 40 + 64, key)])
    a.post_send(SEND, av(b.qpn, QKEY, rgid=GID_V6_B, sgid_index=3) + dseg(buf, 4, key))
    t.eq([f(e, "opcode", "syndrome", "sop", "qpn") for e in cq.poll_all()],
         [(0xd, 0x02, SEND, a.qpn)],
         "UD SEND whose AV sgid_index names a deleted GID: local QP operation error")
    t.eq(v.qp_state(a), 6, "the sender QP is in ERR")
    t.eq(v.qt.memread(buf + 0x3000, 4), bytes(4), "nothing delivered")
    t.ok("sgid_index names no RoCE address" in v.qt.log(), "AV error logged as a guest error")
    c = v.create_qp("UD", pd, cq, cq)
    v.connect(c)
    b.post_recv([(buf + 0x4000, 40 + 64, key)])
    c.post_send(SEND, av(b.qpn, QKEY, sgid_index=200) + dseg(buf, 4, key))
    t.eq([f(e, "opcode", "syndrome", "qpn") for e in cq.poll_all()], [(0xd, 0x02, c.qpn)],
         "UD SEND with sgid_index 200 (never set): local QP operation error")


def rc_path(v):
    pd = v.alloc_pd()
    cq = v.create_cq()
    a = v.create_qp("RC", pd, cq, cq)
    r = v.modify("RST2INIT_QP", a, [("rre", 1), ("rwe", 1), ("rae", 1)],
                 ads=[("vhca_port_num", 1)])
    t.eq(r.status, 0, "RC RST2INIT (no address path yet): OK")
    rtr = [("mtu", 3), ("log_msg_max", 30), ("remote_qpn", a.qpn), ("next_rcv_psn", 0),
           ("log_rra_max", 2), ("min_rnr_nak", 1)]
    r = v.modify("INIT2RTR_QP", a, rtr, ads=[("vhca_port_num", 1), ("src_addr_index", 7)])
    check(r, 3, 0x0503001a, "INIT2RTR with src_addr_index 7 (empty entry): BAD_PARAM")
    t.eq(v.qp_state(a), 1, "refused INIT2RTR: QP still INIT")
    check(set_raw(v, 7, entry(GID_V6_A)), 0, 0, "GID 7 set")
    r = v.modify("INIT2RTR_QP", a, rtr, ads=[("vhca_port_num", 1), ("src_addr_index", 7)])
    check(r, 0, 0, "INIT2RTR with src_addr_index 7 (now valid): OK")
    r = v.modify("RTR2RTS_QP", a, [("next_send_psn", 0), ("retry_count", 7), ("rnr_retry", 7)],
                 ads=[("src_addr_index", 44), ("ack_timeout", 14)],
                 mask=P["VCX_QP_OPTPAR_PRIMARY_ADDR_PATH"])
    check(r, 3, 0x0504001a, "RTR2RTS with a new path naming entry 44 (empty): BAD_PARAM")
    t.eq(v.qp_state(a), 2, "refused RTR2RTS: QP still RTR")
    r = v.modify("RTR2RTS_QP", a, [("next_send_psn", 0), ("retry_count", 7), ("rnr_retry", 7)],
                 ads=[("ack_timeout", 14)])
    check(r, 0, 0, "RTR2RTS without a new path (ack_timeout only): OK")
    u = v.create_qp("UD", pd, cq, cq)
    r = v.modify("RST2INIT_QP", u, [("q_key", 1)], ads=[("vhca_port_num", 1)])
    r2 = v.modify("INIT2RTR_QP", u, [("mtu", 3)], ads=[("src_addr_index", 99)])
    t.eq((r.status, r2.status), (0, 0), "UD QP: no address path, src_addr_index not checked")


def lifetime(v):
    """Force-close TEARDOWN_HCA keeps the table; a system reset empties it."""
    n = v.d.state()["gids"]
    r = v.d.exec(H["VCX_CMD_OP_TEARDOWN_HCA"], fields=[(H["VCX_TEARDOWN_HCA_IN_PROFILE"], 1)])
    t.eq(r.status, 0, "force-close TEARDOWN_HCA")
    t.eq(v.d.state()["gids"], n, "the RoCE address table survives TEARDOWN_HCA (gids=%s)" % n)
    check(v.d.exec(H["VCX_CMD_OP_QUERY_ROCE_ADDRESS"], out_len=0x30), 4, 0x0760ff05,
          "QUERY_ROCE_ADDRESS while not initialized: BAD_SYS_STATE")
    check(v.d.exec(H["VCX_CMD_OP_INIT_HCA"]), 0, 0, "INIT_HCA again")
    t.eq(v.query_gid(7).out[0x10:0x20], GID_V6_A, "entry 7 still there after re-INIT")
    v.qt.qmp("system_reset")
    for _ in range(50):
        if v.d.state()["hca"] == "disabled":
            break
        time.sleep(0.05)
    t.eq((v.d.state()["hca"], v.d.state()["gids"]), ("disabled", "0"),
         "system reset: HCA disabled, RoCE address table empty (gids=0)")


def main():
    v = Verbs()
    for name, fn in [("table", table), ("ud_grh", ud_grh), ("rc_path", rc_path),
                     ("lifetime", lifetime)]:
        run_isolated(t, name, lambda fn=fn: fn(v))
    t.ok(v.qt.alive(), "QEMU still running")
    v.close()
    t.done()


if __name__ == "__main__":
    main()
