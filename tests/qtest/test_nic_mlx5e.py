#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""NIC objects as the stock mlx5e driver makes them (docs/stock-mlx5.md), with the port on
a QEMU socket netdev this test writes: an RQ without a PD (mlx5e's drop RQ: created, and
no WQE of it passes a key check) and a flow table of 2^16 entries with equal values in
one group (the lowest index matches; the next takes over when it goes); and PPCNT, the
port's counters mlx5e reads at every statistics update. The commands' refusals and the
other NIC objects are in test_nic.py."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import H, Tap, DEV_PATH, run_isolated, put  # noqa: E402
from vcx_verbs import P  # noqa: E402
from vcx_nic import N, Nic, MAC, PEER, BCAST, eth, run_nic_cases  # noqa: E402
from test_nic import (Setup, cqe, poll, check, synd, rx_frame, send, OK, BAD_PARAM,  # noqa: E402
                      BAD_RES_STATE)
import test_nic  # noqa: E402

t = Tap()
test_nic.t = t                          # the helpers imported above report here too


def case_rq_no_pd(v):
    """pd 0: an RQ without a PD, as mlx5e's drop RQ; no WQE of it can pass a key check."""
    pd = v.alloc_pd()
    cq = v.create_cq()
    w = N["VCX_RQC_WQ_AT"]
    rq = v.rq(pd, cq, raw=lambda c: (put(c, P["VCX_WQ_PD"], 0, w),
                                     put(c, P["VCX_WQ_END_PADDING_MODE"], 1, w)),
              log_sz=0, log_stride=4)
    t.ok(not hasattr(rq, "status"), "CREATE_RQ with pd 0 (no PD), end_padding_mode 1 "
         "(align), one 16-byte WQE; to RDY")
    if hasattr(rq, "status"):
        return
    buf = v.alloc(4096)
    key = v.create_mkey(pd, buf, 4096)
    v.catch_all(v.tir(v.td(), rqn=rq.rqn))
    v.wire_in(eth(MAC, PEER, 0x88b5, bytes(50)))
    t.eq(cq.poll(), None, "a frame while no WQE is posted: dropped, no CQE")
    rq.post([(buf, 64, key)])
    v.wire_in(eth(MAC, PEER, 0x88b5, bytes(50)))
    e = poll(v, cq)
    t.eq(e is not None and (cqe(e)["opcode"], cqe(e)["syndrome"]), (0xe, 0x04),
         "a WQE posted to the RQ without a PD: LOCAL_PROT_ERR (its key is of another PD)")
    check(v.ncmd("DESTROY_RQ", fields=[(P["VCX_OBJ_NUMBER"], rq.rqn)]), BAD_RES_STATE,
          synd("DESTROY_RQ", 0x68), "DESTROY_RQ while a TIR names it: BAD_RES_STATE")


def case_big_table(v):
    """A table of 2^16 entries (mlx5e's L2 table needs 2^15 + 2), entries far apart, and
    equal values in one group: the lowest index matches, the next takes over when it goes."""
    su = Setup(v)
    rq = v.rq(su.pd, su.rcq)
    for _ in range(8):
        rq.post([(su.rx_buf(v), 4096, su.key)])
    tir = v.tir(su.td, rqn=rq.rqn)
    ft = v.ft(0, 16)
    t.ok(isinstance(ft, int), "CREATE_FLOW_TABLE log_size 16")
    g = v.fg_id(ft, 0, 65535, {"ETHERTYPE": 0xffff})
    for index, tag in ((65535, 1), (100, 2), (40000, 3)):
        v.ok(v.fte(ft, index, g, 4, (2, tir), value={"ETHERTYPE": 0x88b5}, flow_tag=tag),
             "FTE %u, flow tag %u" % (index, tag))
    v.ok(v.root(ft), "root")
    dfte = lambda i: v.ncmd("DELETE_FLOW_TABLE_ENTRY", in_len=N["VCX_DELETE_FTE_IN_LEN"],  # noqa
                            fields=[(N["VCX_DELETE_FTE_IN_TABLE_ID"], ft),
                                    (N["VCX_DELETE_FTE_IN_FLOW_INDEX"], i)])
    f = eth(MAC, PEER, 0x88b5, bytes(50))
    got = []
    for step in (None, 100, 40000, "readd"):
        if step == "readd":
            v.ok(v.fte(ft, 100, g, 4, (2, tir), value={"ETHERTYPE": 0x88b5}, flow_tag=2),
                 "FTE 100 again")
        elif step is not None:
            check(dfte(step), OK, 0, "DELETE_FLOW_TABLE_ENTRY %u" % step)
        rx_frame(v, su, f)
        e = poll(v, su.rcq)
        got.append(e is not None and cqe(e)["flow_tag"])
    t.eq(got, [2, 3, 1, 2], "equal values: index 100 matches, then 40000, then 65535, then "
         "100 again")


# PPCNT groups as mlx5e reads them: IEEE 802.3, RFC 2863, RFC 2819, per priority, physical
PPCNT_GROUPS = {"802_3": 0x00, "2863": 0x01, "2819": 0x02, "prio": 0x10, "phys": 0x12}


def ppcnt(v, grp, prio=0, clr=0, write=False, port=1, pnat=0):
    """ACCESS_REG PPCNT: (command result, the counter set as 31 64-bit values)."""
    b = bytearray(256)
    for k, val in (("LOCAL_PORT", port), ("PNAT", pnat), ("GRP", grp), ("PRIO_TC", prio),
                   ("CLR", clr)):
        put(b, H["VCX_PPCNT_" + k], val)
    r = v.d.exec(H["VCX_CMD_OP_ACCESS_REG"], 0 if write else 1, in_len=16 + 256,
                 out_len=16 + 256, fields=[(H["VCX_ACCESS_REG_IN_REGISTER_ID"], 0x5008)],
                 payload={16: bytes(b)})
    return r, list(struct.unpack_from(">31Q", r.out, 16 + 8)) if len(r.out) >= 272 else []


def ib_port_counters(v, clr=0):
    """PPCNT's InfiniBand port counters group (0x20): (link_downed, port_rcv_errors)."""
    r = ppcnt(v, 0x20, clr=clr)[0]
    t.eq(r.status, 0, "PPCNT IB port counters group%s" % (" with clr" if clr else ""))
    return r.out[16 + 8 + 3], struct.unpack_from(">H", r.out, 16 + 8 + 4)[0]


def case_ppcnt(v):
    """PPCNT: the port's counters at the MAC, both ways, by group, with clr per group."""
    su = Setup(v)
    v.sock.drain()
    ib_before = ib_port_counters(v)
    before = {g: ppcnt(v, n)[1] for g, n in PPCNT_GROUPS.items() if g != "prio"}
    prio_before = {p: ppcnt(v, 0x10, p)[1] for p in (0, 3, 5)}
    # out: a unicast frame of 100 bytes, a 42-byte broadcast (padded), a tagged multicast
    # frame of priority 5
    send(v, su, eth(PEER, MAC, 0x88b5, bytes(86)))
    send(v, su, eth(BCAST, MAC, 0x0806, bytes(28)), inline=42)
    mc = bytes.fromhex("01005e000001")
    send(v, su, eth(mc, MAC, 0x8100, struct.pack(">HH", 5 << 13 | 7, 0x88b5) + bytes(982)))
    t.eq([len(v.sock.recv() or b"") for _ in range(3)], [100, 60, 1000], "three frames out")
    # in: a unicast frame (nothing steers it: counted at the MAC all the same), a tagged
    # multicast frame of priority 3, a runt, a frame over the largest (9216 + 18 + a second
    # tag's 4: 9238 bytes)
    v.wire_in(eth(MAC, PEER, 0x88b5, bytes(46)))
    v.wire_in(eth(mc, PEER, 0x8100, struct.pack(">HH", 3 << 13 | 9, 0x88b5) + bytes(1482)))
    v.wire_in(bytes(10))
    v.wire_in(eth(MAC, PEER, 0x88b5, bytes(9239 - 14)))
    d = {g: [a - b for a, b in zip(ppcnt(v, n)[1], before[g])]
         for g, n in PPCNT_GROUPS.items() if g != "prio"}
    tx_oct, rx_oct = 104 + 64 + 1004, 64 + 1504
    t.eq([d["802_3"][i] for i in (0, 1, 4, 5, 6, 7, 8, 9, 12)],
         [3, 2, tx_oct, rx_oct, 1, 1, 1, 0, 1],
         "802.3: frames and octets (FCS in, 64 at least) out and in, multicast, broadcast, "
         "too long")
    t.eq([d["2863"][i] for i in (0, 1, 2, 3, 5, 6, 9, 10, 11, 12)],
         [rx_oct, 1, 0, 2, tx_oct, 1, 1, 0, 1, 1],
         "2863: in octets, unicast, discards, errors (runt + too long); out octets, unicast; "
         "multicast and broadcast both ways")
    t.eq([d["2819"][i] for i in (0, 1, 2, 3, 4, 6, 7)],
         [0, rx_oct + 64 + 9243, 4, 0, 1, 1, 1],
         "2819: drops, octets and frames with the bad ones, broadcast, multicast, "
         "undersize, oversize")
    t.eq(d["2819"][11:21], [2, 0, 0, 0, 0, 1, 0, 0, 0, 1],
         "2819: size bins (64: the frame and the runt; 1024-1518; 8192-10239)")
    pd = {p: [a - b for a, b in zip(ppcnt(v, 0x10, p)[1], prio_before[p])] for p in (0, 3, 5)}
    t.eq([(pd[p][0], pd[p][4], pd[p][5], pd[p][9]) for p in (0, 3, 5)],
         [(64, 1, 104 + 64, 2), (1504, 1, 0, 0), (0, 0, 1004, 1)],
         "per priority (VLAN PCP, 0 untagged): rx octets and frames, tx octets and frames")
    def link_downs():
        r = ppcnt(v, 0x12)[0]
        return struct.unpack_from(">I", r.out, 16 + 8 + H["VCX_PPCNT_PHYS_LINK_DOWN_EVENTS"])[0]
    v.qt.clock_step(5 * 10**6)
    r, ph = ppcnt(v, 0x12)
    t.ok(r.status == 0 and ph[0] >= 5, "physical layer: ms since the last clear (%r)" % ph[0])
    n0 = link_downs()
    for up in (False, True, False, True):
        v.qt.qom_set(DEV_PATH, "link", up)
    t.eq(link_downs() - n0, 2, "physical layer: two link down events")
    ib = ib_port_counters(v, clr=1)
    t.eq((ib[0] - ib_before[0], ib[1] - ib_before[1]), (2, 2),
         "IB port counters: link_downed 2, port_rcv_errors 2 (the runt and the too long)")
    t.eq(ib_port_counters(v), (0, 0), "IB port counters after clr: 0")
    # clr: a query returns the values, then that group (only) starts again from 0
    r, c = ppcnt(v, 0x00, clr=1)
    t.ok(r.status == 0 and c[0] >= 3, "802.3 query with clr: the values before the clear")
    t.eq(ppcnt(v, 0x00)[1][0:2], [0, 0], "802.3 after clr: 0 frames each way")
    t.ok(ppcnt(v, 0x01)[1][0] >= rx_oct, "2863 kept its counts (clr is per group)")
    r, c = ppcnt(v, 0x10, 5, clr=1, write=True)
    t.eq((r.status, ppcnt(v, 0x10, 5)[1][9], ppcnt(v, 0x10, 0)[1][9] >= 2), (0, 0, True),
         "per priority: a write with clr clears priority 5, not priority 0")
    for desc, kw, n in (("group 0x3 (RFC 3635)", {"grp": 3}, 0x22),
                        ("per priority, prio_tc 8", {"grp": 0x10, "prio": 8}, 0x23),
                        ("local_port 2", {"grp": 0, "port": 2}, 0x20),
                        ("pnat 1", {"grp": 0, "pnat": 1}, 0x21),
                        ("a write without clr", {"grp": 0, "write": True}, 0x24)):
        r = ppcnt(v, **kw)[0]
        check(r, BAD_PARAM, synd("ACCESS_REG", n), "PPCNT %s: BAD_PARAM" % desc)


def main():
    run_nic_cases(t, [("RQ without a PD", case_rq_no_pd), ("a big table", case_big_table),
                       ("PPCNT", case_ppcnt)])
    t.done()


if __name__ == "__main__":
    main()
