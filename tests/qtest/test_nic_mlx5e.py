#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""NIC objects as the stock mlx5e driver makes them (docs/stock-mlx5.md), with the port on
a QEMU socket netdev this test writes: an RQ without a PD (mlx5e's drop RQ: created, and
no WQE of it passes a key check) and a flow table of 2^16 entries with equal values in
one group (the lowest index matches; the next takes over when it goes). The commands'
refusals and the other NIC objects are in test_nic.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, run_isolated, put  # noqa: E402
from vcx_verbs import P  # noqa: E402
from vcx_nic import N, Nic, MAC, PEER, eth  # noqa: E402
from test_nic import Setup, cqe, poll, check, synd, rx_frame, OK, BAD_RES_STATE  # noqa: E402
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


def main():
    for name, fn in [("RQ without a PD", case_rq_no_pd), ("a big table", case_big_table)]:
        v = Nic()
        try:
            run_isolated(t, name, lambda fn=fn: fn(v))
            t.ok(v.qt.alive(), "QEMU alive after %s" % name)
        finally:
            v.close()
    t.done()


if __name__ == "__main__":
    main()
