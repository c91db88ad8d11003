#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The Ethernet NIC of the device (hw-model/nic/) with its port on a QEMU socket netdev in
UDP mode on 127.0.0.1 that this test reads and writes: capabilities; every NIC command with
good and bad inputs (exact statuses and syndromes); send WQEs becoming exactly the expected
frames on the wire (checksum offload computed independently here); received frames landing
in the RQ that the flow tables, TIR and RQT choose, with their CQE fields (RSS checked
against this file's Toeplitz over the Microsoft verification vectors); drops and their
counters (no receive WQE: out_of_buffer); LSO WQEs cut into exactly the expected TCP
segments, and malformed ones refused; malformed send WQEs (error CQE, SQ in ERR,
flushes); loopback to the port's own MAC and self-loopback blocking; the vport filter and
the promiscuous modes; RoCEv2 frames dropped and counted; link changes; reset."""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, run_isolated, get, put, load_header_defines  # noqa: E402
from vcx_verbs import P, cqe_fields  # noqa: E402
from vcx_nic import (N, NOP_, Nic, MAC, PEER, BCAST, MS_KEY, toeplitz, run_nic_cases,  # noqa: E402
                     ipv4, ipv6, udp, tcp, eth, pad60, send_wqe, nop_wqe, csum)

t = Tap()

OK, BAD_PARAM, BAD_RES_STATE, EXCEED_LIM, BAD_INPUT_LEN = 0x00, 0x03, 0x09, 0x08, 0x50
IP_A, IP_B = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
IP6_A = bytes.fromhex("fd770000000000000000000000000001")
IP6_B = bytes.fromhex("fd770000000000000000000000000002")


def synd(op, n):
    return NOP_.get(op, P.get("VCX_CMD_OP_" + op, 0)) << 16 | n


def check(r, status, syndrome, desc):
    t.eq((r.status, r.syndrome if status else 0), (status, syndrome if status else 0), desc)


def cqe(e):
    """The Ethernet CQE fields, by name."""
    c = cqe_fields(e)
    c.update({
        "rss_hash": struct.unpack_from(">I", e, 0x0c)[0],
        "rss_type": e[0x10],
        "check_sum": struct.unpack_from(">H", e, 0x14)[0],
        "hds": e[0x1c],
        "l4": (e[0x1d] >> 4) & 7,
        "l3": (e[0x1d] >> 2) & 3,
        "flow_tag": struct.unpack_from(">I", e, 0x38)[0] & 0xffffff,
    })
    return c


def poll(v, cq, tries=50):
    for _ in range(tries):
        e = cq.poll()
        if e is not None:
            return e
        v.settle()
        time.sleep(0.01)
    return None


class Setup:
    """PD, data buffer and key, a send CQ, TD, TIS, SQ, a receive CQ."""

    def __init__(self, v):
        self.pd, self.buf, self.key = v.mac_set()
        self.scq = v.create_cq()
        self.rcq = v.create_cq()
        self.td = v.td()
        self.tis = v.tis(self.td)
        self.sq = v.sq(self.pd, self.scq, self.tis)
        self.rx = self.buf + 0x80000        # receive buffers from here, 8 KiB each
        self.nrx = 0

    def rx_buf(self, v, size=8192):
        a = self.rx + self.nrx * 8192
        self.nrx = (self.nrx + 1) % 32
        v.qt.memset(a, size, 0)
        return a


def send(v, su, frame, cs=0, inline=14, ce=True):
    """Post frame: inline bytes in the Ethernet segment, the rest through one data segment."""
    off = 0x40000
    v.qt.memwrite(su.buf + off, frame[inline:])
    segs = [(su.buf + off, len(frame) - inline, su.key)] if len(frame) > inline else []
    idx = su.sq.pi
    su.sq.post(send_wqe(su.sq.sqn, idx, frame[:inline], segs, cs=cs, ce=ce))
    v.settle()
    return idx


# ---------------------------------------------------------------------------------------
# capabilities
# ---------------------------------------------------------------------------------------

def case_caps(v):
    cap = lambda typ: v.d.exec(0x100, typ << 1 | 1, out_len=0x1010)  # noqa: E731
    g = cap(0).out[0x10:]
    for name, want in (("ETH_NET_OFFLOADS", 1), ("NIC_FLOW_TABLE", 1),
                       ("LOG_MAX_TRANSPORT_DOMAIN", 8), ("LOG_MAX_TIS", 8), ("LOG_MAX_TIR", 8),
                       ("LOG_MAX_RQT", 8), ("LOG_MAX_RQT_SIZE", 8), ("LOG_MAX_RQ", 12),
                       ("LOG_MAX_SQ", 12), ("LOG_MAX_TIS_PER_SQ", 0), ("MAX_QP_CNT", 8),
                       ("LOG_MAX_WQ_SZ", 15), ("LOG_MAX_CURRENT_UC_LIST", 6),
                       ("LOG_MAX_CURRENT_MC_LIST", 6), ("MODIFY_RQ_COUNTER_SET_ID", 1),
                       ("FLOW_COUNTER_BULK_ALLOC", 0), ("VPORT_GROUP_MANAGER", 0),
                       ("CQE_VERSION", 0)):
        t.eq(get(g, N["VCX_CAP_GEN_" + name]), want, "general cap %s = %d" % (name, want))
    r = cap(1)
    check(r, OK, 0, "QUERY_HCA_CAP ETHERNET_OFFLOADS")
    e = r.out[0x10:]
    for name, want in (("CSUM_CAP", 1), ("VLAN_CAP", 1), ("WQE_VLAN_INSERT", 1),
                       ("LRO_CAP", 0), ("MAX_LSO_CAP", 16),
                       ("WQE_INLINE_MODE", 2), ("RSS_IND_TBL_CAP", 8),
                       ("SELF_LB_EN_MODIFIABLE", 1), ("TUNNEL_STATELESS_VXLAN", 0),
                       ("MULTI_PKT_SEND_WQE", 0), ("SWP", 0)):
        t.eq(get(e, N["VCX_CAP_ETH_" + name]), want, "ETHERNET_OFFLOADS %s = %d" % (name, want))
    r = cap(7)
    check(r, OK, 0, "QUERY_HCA_CAP FLOW_TABLE")
    f = r.out[0x10:]
    rx = N["VCX_CAP_FT_NIC_RX_AT"]
    for name, want in (("FT_SUPPORT", 1), ("FLOW_MODIFY_EN", 1), ("MODIFY_ROOT", 1),
                       ("MAX_FT_LEVEL", 64), ("LOG_MAX_FT_SIZE", 16), ("LOG_MAX_FT_NUM", 8),
                       ("LOG_MAX_DESTINATION", 0), ("LOG_MAX_FLOW", 16),
                       ("FLOW_COUNTER", 0), ("LOG_MAX_FLOW_COUNTER", 0), ("REFORMAT", 0)):
        t.eq(get(f, N["VCX_CAP_FT_" + name], rx), want, "NIC RX flow table %s = %d" % (name, want))
    fs = rx + N["VCX_CAP_FT_FIELD_SUPPORT_AT"]
    for name in ("OUTER_DMAC", "OUTER_SMAC", "OUTER_ETHER_TYPE", "OUTER_IP_VERSION",
                 "OUTER_FIRST_PRIO", "OUTER_FIRST_CFI", "OUTER_FIRST_VID", "OUTER_SIP", "OUTER_DIP", "OUTER_IP_PROTOCOL", "OUTER_UDP_SPORT",
                 "OUTER_UDP_DPORT", "OUTER_TCP_SPORT", "OUTER_TCP_DPORT"):
        t.eq(get(f, N["VCX_FT_FIELD_" + name], fs), 1, "ft_field_support %s" % name)
    for name in ("OUTER_FRAG", "OUTER_TCP_FLAGS", "INNER_DMAC"):
        t.eq(get(f, N["VCX_FT_FIELD_" + name], fs), 0, "ft_field_support %s = 0" % name)
    t.eq(get(f, N["VCX_CAP_FT_FT_SUPPORT"], N["VCX_CAP_FT_NIC_TX_AT"]), 0,
         "NIC TX flow tables: ft_support 0")
    t.eq(get(f, N["VCX_CAP_FT_FT_SUPPORT"], N["VCX_CAP_FT_NIC_RX_RDMA_AT"]), 0,
         "RDMA RX flow tables: ft_support 0")
    check(cap(8), BAD_PARAM, 0x0100ff09, "QUERY_HCA_CAP of the eswitch flow table page: "
          "BAD_PARAM")


# ---------------------------------------------------------------------------------------
# commands: good and bad inputs
# ---------------------------------------------------------------------------------------

def case_td_tis(v):
    td = v.td()
    r = v.ncmd("QUERY_TIS", out_len=N["VCX_QUERY_TIS_OUT_LEN"],
               fields=[(P["VCX_OBJ_NUMBER"], 0x77)])
    check(r, BAD_PARAM, synd("QUERY_TIS", 0x21), "QUERY_TIS of no TIS: BAD_PARAM")
    c = bytearray(N["VCX_TISC_SIZE"])
    put(c, N["VCX_TISC_TRANSPORT_DOMAIN"], td + 100)
    r = v.ncmd("CREATE_TIS", in_len=N["VCX_CREATE_TIS_IN_LEN"], payload={0x20: bytes(c)})
    check(r, BAD_PARAM, synd("CREATE_TIS", 0x23), "CREATE_TIS naming no transport domain")
    put(c, N["VCX_TISC_TRANSPORT_DOMAIN"], td)
    put(c, N["VCX_TISC_TLS_EN"], 1)
    r = v.ncmd("CREATE_TIS", in_len=N["VCX_CREATE_TIS_IN_LEN"], payload={0x20: bytes(c)})
    check(r, BAD_PARAM, synd("CREATE_TIS", 0x24), "CREATE_TIS with tls_en: BAD_PARAM")
    r = v.ncmd("CREATE_TIS", in_len=0x20, payload={})
    check(r, BAD_INPUT_LEN, synd("CREATE_TIS", 0xff02), "CREATE_TIS input too short")
    tis = v.tis(td, prio=3)
    r = v.ncmd("QUERY_TIS", out_len=N["VCX_QUERY_TIS_OUT_LEN"],
               fields=[(P["VCX_OBJ_NUMBER"], tis)])
    at = N["VCX_QUERY_TIS_OUT_CTX_AT"]
    t.eq((get(r.out, N["VCX_TISC_PRIO"], at), get(r.out, N["VCX_TISC_TRANSPORT_DOMAIN"], at)),
         (3, td), "QUERY_TIS: prio and transport domain")
    c = bytearray(N["VCX_TISC_SIZE"])
    put(c, N["VCX_TISC_PRIO"], 5)
    r = v.ncmd("MODIFY_TIS", in_len=N["VCX_MODIFY_TIS_IN_LEN"],
               fields=[(N["VCX_MODIFY_TIS_IN_TISN"], tis),
                       (N["VCX_MODIFY_TIS_IN_BITMASK_PRIO"], 1)], payload={0x20: bytes(c)})
    check(r, OK, 0, "MODIFY_TIS prio")
    r = v.ncmd("QUERY_TIS", out_len=N["VCX_QUERY_TIS_OUT_LEN"],
               fields=[(P["VCX_OBJ_NUMBER"], tis)])
    t.eq(get(r.out, N["VCX_TISC_PRIO"], at), 5, "QUERY_TIS after MODIFY_TIS: prio 5")
    r = v.ncmd("MODIFY_TIS", in_len=N["VCX_MODIFY_TIS_IN_LEN"],
               fields=[(N["VCX_MODIFY_TIS_IN_TISN"], tis),
                       (N["VCX_MODIFY_TIS_IN_BITMASK_LAG_TX_PORT_AFFINITY"], 1)],
               payload={0x20: bytes(c)})
    check(r, BAD_PARAM, synd("MODIFY_TIS", 0x25), "MODIFY_TIS of the LAG affinity: BAD_PARAM")
    r = v.ncmd("DEALLOC_TRANSPORT_DOMAIN", fields=[(N["VCX_DEALLOC_TD_IN_TD"], td)])
    check(r, BAD_RES_STATE, synd("DEALLOC_TRANSPORT_DOMAIN", 0x12),
          "DEALLOC_TRANSPORT_DOMAIN with a TIS: BAD_RES_STATE")
    check(v.ncmd("DESTROY_TIS", fields=[(P["VCX_OBJ_NUMBER"], tis)]), OK, 0, "DESTROY_TIS")
    check(v.ncmd("DESTROY_TIS", fields=[(P["VCX_OBJ_NUMBER"], tis)]), BAD_PARAM,
          synd("DESTROY_TIS", 0x21), "DESTROY_TIS twice: BAD_PARAM")
    check(v.ncmd("DEALLOC_TRANSPORT_DOMAIN", fields=[(N["VCX_DEALLOC_TD_IN_TD"], td)]), OK,
          0, "DEALLOC_TRANSPORT_DOMAIN")
    check(v.ncmd("DEALLOC_TRANSPORT_DOMAIN", fields=[(N["VCX_DEALLOC_TD_IN_TD"], td)]),
          BAD_PARAM, synd("DEALLOC_TRANSPORT_DOMAIN", 0x11), "DEALLOC twice: BAD_PARAM")


def case_sq_cmds(v):
    pd = v.alloc_pd()
    cq = v.create_cq()
    td = v.td()
    tis = v.tis(td)
    w = N["VCX_SQC_WQ_AT"]
    bad = [
        ("state RDY at create", lambda c: put(c, N["VCX_SQC_STATE"], 1), 0x40),
        ("allow_multi_pkt_send_wqe", lambda c: put(c, N["VCX_SQC_ALLOW_MULTI_PKT_SEND_WQE"], 1),
         0x41),
        ("hairpin", lambda c: put(c, N["VCX_SQC_HAIRPIN"], 1), 0x41),
        ("user_index", lambda c: put(c, N["VCX_SQC_USER_INDEX"], 5), 0x41),
        ("ts_format real time", lambda c: put(c, N["VCX_SQC_TS_FORMAT"], 2), 0x41),
        ("two TISes", lambda c: put(c, N["VCX_SQC_TIS_LST_SZ"], 2), 0x41),
        ("no such TIS", lambda c: put(c, N["VCX_SQC_TIS_NUM_0"], tis + 9), 0x42),
        ("UAR not allocated", lambda c: put(c, P["VCX_WQ_UAR_PAGE"], 200, w), 0x43),
        ("wq_type linked list", lambda c: put(c, P["VCX_WQ_WQ_TYPE"], 0, w), 0x30),
        ("wq_signature", lambda c: put(c, P["VCX_WQ_WQ_SIGNATURE"], 1, w), 0x31),
        ("end_padding_mode 1", lambda c: put(c, P["VCX_WQ_END_PADDING_MODE"], 1, w), 0x31),
        ("log_wq_sz 16", lambda c: put(c, P["VCX_WQ_LOG_WQ_SZ"], 16, w), 0x32),
        ("stride 128", lambda c: put(c, P["VCX_WQ_LOG_WQ_STRIDE"], 7, w), 0x33),
        ("no such PD", lambda c: put(c, P["VCX_WQ_PD"], pd + 50, w), 0x34),
        ("no such CQ", lambda c: put(c, N["VCX_SQC_CQN"], cq.cqn + 50), 0x35),
    ]
    for desc, fn, s in bad:
        r = v.sq(pd, cq, tis, raw=fn, rdy=False)
        check(r, BAD_PARAM, synd("CREATE_SQ", s), "CREATE_SQ with %s: BAD_PARAM" % desc)
    dbr = v.dbr()
    c = v.sqc(pd, cq, tis, 6, dbr)
    r = v.ncmd("CREATE_SQ", in_len=0x110, payload={0x20: bytes(c)})
    check(r, BAD_INPUT_LEN, synd("CREATE_SQ", 0x36), "CREATE_SQ without its PAS: BAD_INPUT_LEN")
    # no TIS (tis_lst_sz 0, tis_num_0 ignored): mlx5e's internal control SQs; NOPs complete
    sq0 = v.sq(pd, cq, tis, raw=lambda c: (put(c, N["VCX_SQC_TIS_LST_SZ"], 0),
                                          put(c, N["VCX_SQC_TIS_NUM_0"], tis + 9)))
    t.ok(not hasattr(sq0, "status"), "CREATE_SQ with tis_lst_sz 0 (no TIS), to RDY")
    if not hasattr(sq0, "status"):
        cq.poll_all()
        idx = sq0.post(nop_wqe(sq0.sqn, sq0.pi))
        v.settle()
        e = poll(v, cq)
        t.eq(e is not None and (cqe(e)["opcode"], cqe(e)["wqe_counter"]), (0, idx),
             "a NOP on the SQ without a TIS completes")
        t.eq(get(v.query_sq(sq0.sqn).out, N["VCX_SQC_TIS_NUM_0"],
                 N["VCX_QUERY_SQ_OUT_CTX_AT"]), tis + 9, "QUERY_SQ: the context as created")
    sq = v.sq(pd, cq, tis, rdy=False)
    t.ok(0x1000 <= sq.sqn < 0x2000, "SQ number 0x%x in 0x1000..0x1fff" % sq.sqn)
    t.eq(v.sq_state(sq.sqn), 0, "QUERY_SQ: created in RST")
    r = v.query_sq(sq.sqn)
    at = N["VCX_QUERY_SQ_OUT_CTX_AT"]
    t.eq((get(r.out, N["VCX_SQC_CQN"], at), get(r.out, N["VCX_SQC_TIS_NUM_0"], at),
          get(r.out, P["VCX_WQ_LOG_WQ_SZ"], at + w), get(r.out, P["VCX_WQ_PD"], at + w)),
         (cq.cqn, tis, 6, pd), "QUERY_SQ: cqn, tis_num_0, log_wq_sz, pd as created")
    check(v.modify_sq(sq.sqn, 1, 1), BAD_PARAM, synd("MODIFY_SQ", 0x45),
          "MODIFY_SQ with a wrong current state: BAD_PARAM")
    check(v.modify_sq(sq.sqn, 0, 3), BAD_PARAM, synd("MODIFY_SQ", 0x46),
          "MODIFY_SQ RST->ERR: BAD_PARAM")
    check(v.modify_sq(sq.sqn, 0, 1, bitmask=1), BAD_PARAM, synd("MODIFY_SQ", 0x47),
          "MODIFY_SQ with a rate limit bitmask: BAD_PARAM")
    check(v.modify_sq(0x1fff, 0, 1), BAD_PARAM, synd("MODIFY_SQ", 0x44),
          "MODIFY_SQ of no SQ: BAD_PARAM")
    check(v.modify_sq(sq.sqn, 0, 1), OK, 0, "MODIFY_SQ RST->RDY")
    check(v.modify_sq(sq.sqn, 1, 1), OK, 0, "MODIFY_SQ RDY->RDY")
    check(v.modify_sq(sq.sqn, 1, 3), OK, 0, "MODIFY_SQ RDY->ERR")
    check(v.modify_sq(sq.sqn, 3, 1), BAD_PARAM, synd("MODIFY_SQ", 0x46),
          "MODIFY_SQ ERR->RDY: BAD_PARAM")
    check(v.modify_sq(sq.sqn, 3, 0), OK, 0, "MODIFY_SQ ERR->RST")
    check(v.ncmd("DESTROY_TIS", fields=[(P["VCX_OBJ_NUMBER"], tis)]), BAD_RES_STATE,
          synd("DESTROY_TIS", 0x22), "DESTROY_TIS of an SQ's TIS: BAD_RES_STATE")
    r = v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)])
    t.eq(r.status, BAD_RES_STATE, "DESTROY_CQ of an SQ's CQ: BAD_RES_STATE")
    r = v.cmd("DEALLOC_PD", fields=[(P["VCX_DEALLOC_PD_IN_PD"], pd)])
    t.eq(r.status, BAD_RES_STATE, "DEALLOC_PD of an SQ's PD: BAD_RES_STATE")
    check(v.ncmd("DESTROY_SQ", fields=[(P["VCX_OBJ_NUMBER"], sq.sqn)]), OK, 0, "DESTROY_SQ")
    check(v.ncmd("DESTROY_SQ", fields=[(P["VCX_OBJ_NUMBER"], sq.sqn)]), BAD_PARAM,
          synd("DESTROY_SQ", 0x44), "DESTROY_SQ twice: BAD_PARAM")
    check(v.ncmd("DESTROY_TIS", fields=[(P["VCX_OBJ_NUMBER"], tis)]), OK, 0,
          "DESTROY_TIS once its SQ is gone")


def case_rq_cmds(v):
    pd = v.alloc_pd()
    cq = v.create_cq()
    w = N["VCX_RQC_WQ_AT"]
    bad = [
        ("state RDY at create", lambda c: put(c, N["VCX_RQC_STATE"], 1), BAD_PARAM, 0x60),
        ("mem_rq_type RMP", lambda c: put(c, N["VCX_RQC_MEM_RQ_TYPE"], 1), BAD_PARAM, 0x61),
        ("scatter_fcs", lambda c: put(c, N["VCX_RQC_SCATTER_FCS"], 1), BAD_PARAM, 0x61),
        ("a counter not allocated", lambda c: put(c, N["VCX_RQC_COUNTER_SET_ID"], 7),
         BAD_PARAM, 0x63),
        ("striding RQ", lambda c: put(c, P["VCX_WQ_WQ_TYPE"], 3, w), BAD_PARAM, 0x50),
        ("end_padding_mode 2", lambda c: put(c, P["VCX_WQ_END_PADDING_MODE"], 2, w), BAD_PARAM,
         0x51),
        ("stride 8 bytes", lambda c: put(c, P["VCX_WQ_LOG_WQ_STRIDE"], 3, w), BAD_PARAM,
         0x53),
        ("stride 1 KiB", lambda c: put(c, P["VCX_WQ_LOG_WQ_STRIDE"], 10, w), BAD_PARAM, 0x53),
    ]
    for desc, fn, st, s in bad:
        r = v.rq(pd, cq, raw=fn, rdy=False)
        check(r, st, synd("CREATE_RQ", s), "CREATE_RQ with %s" % desc)
    check(v.rq(pd, cq, raw=lambda c: put(c, P["VCX_WQ_PD"], pd + 50, w), rdy=False),
          BAD_PARAM, synd("CREATE_RQ", 0x54), "CREATE_RQ with a PD not allocated: BAD_PARAM")
    qc = v.q_counter()
    rq = v.rq(pd, cq, counter=qc, rdy=False)
    t.ok(0x1000 <= rq.rqn < 0x2000, "RQ number 0x%x in 0x1000..0x1fff" % rq.rqn)
    check(v.modify_rq(rq.rqn, 0, 1, bitmask=1 << 4), BAD_PARAM, synd("MODIFY_RQ", 0x67),
          "MODIFY_RQ with an unknown bitmask bit: BAD_PARAM")
    check(v.modify_rq(rq.rqn, 1, 1), BAD_PARAM, synd("MODIFY_RQ", 0x65),
          "MODIFY_RQ with a wrong current state: BAD_PARAM")
    check(v.modify_rq(rq.rqn, 0, 1, bitmask=8, counter=0), OK, 0,
          "MODIFY_RQ RST->RDY dropping the counter (counter_set_id 0)")
    r = v.ncmd("QUERY_RQ", out_len=N["VCX_QUERY_RQ_OUT_LEN"],
               fields=[(P["VCX_OBJ_NUMBER"], rq.rqn)])
    at = N["VCX_QUERY_RQ_OUT_CTX_AT"]
    t.eq((get(r.out, N["VCX_RQC_STATE"], at), get(r.out, N["VCX_RQC_COUNTER_SET_ID"], at),
          get(r.out, N["VCX_RQC_VSD"], at), get(r.out, N["VCX_RQC_CQN"], at)),
         (1, 0, 1, cq.cqn), "QUERY_RQ: RDY, no counter, vsd 1, cqn")
    check(v.ncmd("DEALLOC_Q_COUNTER",
                 fields=[(N["VCX_DEALLOC_Q_COUNTER_IN_COUNTER_SET_ID"], qc)]), OK, 0,
          "DEALLOC_Q_COUNTER once no RQ names it")
    qc = v.q_counter()
    check(v.modify_rq(rq.rqn, 1, 1, bitmask=8, counter=qc), OK, 0,
          "MODIFY_RQ counter_set_id")
    check(v.ncmd("DEALLOC_Q_COUNTER",
                 fields=[(N["VCX_DEALLOC_Q_COUNTER_IN_COUNTER_SET_ID"], qc)]), BAD_RES_STATE,
          synd("DEALLOC_Q_COUNTER", 0xd2), "DEALLOC_Q_COUNTER of an RQ's counter: "
          "BAD_RES_STATE")
    ids = [v.q_counter() for _ in range(7)]
    check(v.ncmd("ALLOC_Q_COUNTER"), EXCEED_LIM, synd("ALLOC_Q_COUNTER", 0xd0),
          "a ninth Q counter: EXCEED_LIM")
    for i in ids:
        v.ncmd("DEALLOC_Q_COUNTER", fields=[(N["VCX_DEALLOC_Q_COUNTER_IN_COUNTER_SET_ID"], i)])
    check(v.query_q_counter(0x55), BAD_PARAM, synd("QUERY_Q_COUNTER", 0xd1),
          "QUERY_Q_COUNTER of no counter: BAD_PARAM")
    td = v.td()
    tir = v.tir(td, rqn=rq.rqn)
    check(v.ncmd("DESTROY_RQ", fields=[(P["VCX_OBJ_NUMBER"], rq.rqn)]), BAD_RES_STATE,
          synd("DESTROY_RQ", 0x68), "DESTROY_RQ of a direct TIR's RQ: BAD_RES_STATE")
    check(v.ncmd("DESTROY_TIR", fields=[(P["VCX_OBJ_NUMBER"], tir)]), OK, 0, "DESTROY_TIR")
    check(v.modify_rq(rq.rqn, 1, 3), OK, 0, "MODIFY_RQ RDY->ERR")
    check(v.modify_rq(rq.rqn, 3, 0), OK, 0, "MODIFY_RQ ERR->RST")
    check(v.ncmd("DESTROY_RQ", fields=[(P["VCX_OBJ_NUMBER"], rq.rqn)]), OK, 0, "DESTROY_RQ")


def case_rqt_tir_cmds(v):
    pd = v.alloc_pd()
    cq = v.create_cq()
    td = v.td()
    rqs = [v.rq(pd, cq) for _ in range(4)]
    r = v.rqt([])
    check(r, BAD_PARAM, synd("CREATE_RQT", 0x73), "CREATE_RQT of 0 entries: BAD_PARAM")
    r = v.rqt([rqs[0].rqn], max_size=512)
    check(r, BAD_PARAM, synd("CREATE_RQT", 0x73), "CREATE_RQT of rqt_max_size 512: BAD_PARAM")
    r = v.rqt([rqs[0].rqn, 0x1ffe])
    check(r, BAD_PARAM, synd("CREATE_RQT", 0x75), "CREATE_RQT naming no RQ: BAD_PARAM")
    c = bytearray(N["VCX_RQTC_SIZE"])
    put(c, N["VCX_RQTC_RQT_MAX_SIZE"], 4)
    put(c, N["VCX_RQTC_RQT_ACTUAL_SIZE"], 4)
    r = v.ncmd("CREATE_RQT", in_len=0x20 + len(c) + 8, payload={0x20: bytes(c)})
    check(r, BAD_INPUT_LEN, synd("CREATE_RQT", 0x74), "CREATE_RQT with 2 of 4 entries "
          "present: BAD_INPUT_LEN")
    rqt3 = v.rqt([q.rqn for q in rqs[:3]])
    rqt = v.rqt([q.rqn for q in rqs], max_size=8)
    r = v.ncmd("QUERY_RQT", out_len=N["VCX_QUERY_RQT_OUT_LEN"] + 16,
               fields=[(P["VCX_OBJ_NUMBER"], rqt)])
    at = N["VCX_QUERY_RQT_OUT_CTX_AT"]
    t.eq((get(r.out, N["VCX_RQTC_RQT_MAX_SIZE"], at), get(r.out, N["VCX_RQTC_RQT_ACTUAL_SIZE"], at),
          [struct.unpack_from(">I", r.out, at + 0xf0 + 4 * i)[0] for i in range(4)]),
         (8, 4, [q.rqn for q in rqs]), "QUERY_RQT: sizes and rq_num list")
    kw = dict(hash_fn=2, l3=0, l4=0, fields=0xf)
    check(v.tir(td, rqn=rqs[0].rqn, raw=lambda c: put(c, N["VCX_TIRC_DISP_TYPE"], 2)),
          BAD_PARAM, synd("CREATE_TIR", 0x83), "CREATE_TIR disp_type 2: BAD_PARAM")
    check(v.tir(td + 40, rqn=rqs[0].rqn), BAD_PARAM, synd("CREATE_TIR", 0x85),
          "CREATE_TIR without a transport domain: BAD_PARAM")
    check(v.tir(td, rqn=0x1ffd), BAD_PARAM, synd("CREATE_TIR", 0x86),
          "CREATE_TIR direct to no RQ: BAD_PARAM")
    check(v.tir(td, rqt=0x99), BAD_PARAM, synd("CREATE_TIR", 0x87),
          "CREATE_TIR indirect to no RQT: BAD_PARAM")
    check(v.tir(td, rqn=rqs[0].rqn, hash_fn=2), BAD_PARAM, synd("CREATE_TIR", 0x88),
          "CREATE_TIR direct with Toeplitz: BAD_PARAM")
    check(v.tir(td, rqt=rqt, hash_fn=3), BAD_PARAM, synd("CREATE_TIR", 0x88),
          "CREATE_TIR with hash function 3: BAD_PARAM")
    check(v.tir(td, rqt=rqt, hash_fn=2, fields=0x20), BAD_PARAM, synd("CREATE_TIR", 0x89),
          "CREATE_TIR hashing an unknown field (bit 5): BAD_PARAM")
    check(v.tir(td, rqt=rqt3, **kw), BAD_PARAM, synd("CREATE_TIR", 0x8a),
          "CREATE_TIR hashing over an RQT of 3 entries: BAD_PARAM")
    check(v.tir(td, rqt=rqt, raw=lambda c: put(c, N["VCX_TIRC_PACKET_MERGE_MASK"], 1), **kw),
          BAD_PARAM, synd("CREATE_TIR", 0x84), "CREATE_TIR with LRO: BAD_PARAM")
    tir = v.tir(td, rqt=rqt, self_lb=3, **kw)
    r = v.ncmd("QUERY_TIR", out_len=N["VCX_QUERY_TIR_OUT_LEN"],
               fields=[(P["VCX_OBJ_NUMBER"], tir)])
    at = N["VCX_QUERY_TIR_OUT_CTX_AT"]
    k = N["VCX_TIRC_RX_HASH_TOEPLITZ_KEY"].byte
    t.eq((get(r.out, N["VCX_TIRC_DISP_TYPE"], at), get(r.out, N["VCX_TIRC_INDIRECT_TABLE"], at),
          get(r.out, N["VCX_TIRC_RX_HASH_FN"], at), get(r.out, N["VCX_TIRC_SELF_LB_BLOCK"], at),
          bytes(r.out[at + k:at + k + 40])), (1, rqt, 2, 3, MS_KEY),
         "QUERY_TIR: indirect, RQT, Toeplitz, self_lb_block, key")
    check(v.ncmd("DESTROY_RQT", fields=[(P["VCX_OBJ_NUMBER"], rqt)]), BAD_RES_STATE,
          synd("DESTROY_RQT", 0x72), "DESTROY_RQT of a TIR's RQT: BAD_RES_STATE")
    c = v.tirc(td, self_lb=1)
    r = v.ncmd("MODIFY_TIR", in_len=N["VCX_MODIFY_TIR_IN_LEN"],
               fields=[(N["VCX_MODIFY_TIR_IN_TIRN"], tir),
                       (N["VCX_MODIFY_TIR_IN_BITMASK_SELF_LB_EN"], 1)],
               payload={0x20: bytes(c)})
    check(r, OK, 0, "MODIFY_TIR self_lb_block")
    r = v.ncmd("QUERY_TIR", out_len=N["VCX_QUERY_TIR_OUT_LEN"],
               fields=[(P["VCX_OBJ_NUMBER"], tir)])
    t.eq(get(r.out, N["VCX_TIRC_SELF_LB_BLOCK"], at), 1, "QUERY_TIR after MODIFY_TIR")
    # MODIFY_RQT: a new list
    c = bytearray(N["VCX_RQTC_SIZE"] + 8)
    put(c, N["VCX_RQTC_RQT_ACTUAL_SIZE"], 2)
    struct.pack_into(">II", c, N["VCX_RQTC_RQ_NUM_AT"], rqs[3].rqn, rqs[2].rqn)
    r = v.ncmd("MODIFY_RQT", in_len=0x20 + len(c),
               fields=[(N["VCX_MODIFY_RQT_IN_RQTN"], rqt),
                       (N["VCX_MODIFY_RQT_IN_BITMASK_RQN_LIST"], 1)], payload={0x20: bytes(c)})
    check(r, OK, 0, "MODIFY_RQT rqn_list")
    r = v.ncmd("QUERY_RQT", out_len=N["VCX_QUERY_RQT_OUT_LEN"] + 8,
               fields=[(P["VCX_OBJ_NUMBER"], rqt)])
    at = N["VCX_QUERY_RQT_OUT_CTX_AT"]
    t.eq((get(r.out, N["VCX_RQTC_RQT_ACTUAL_SIZE"], at),
          struct.unpack_from(">II", r.out, at + 0xf0)), (2, (rqs[3].rqn, rqs[2].rqn)),
         "QUERY_RQT after MODIFY_RQT")
    r = v.ncmd("MODIFY_RQT", in_len=0x20 + len(c),
               fields=[(N["VCX_MODIFY_RQT_IN_RQTN"], rqt)], payload={0x20: bytes(c)})
    check(r, BAD_PARAM, synd("MODIFY_RQT", 0x77), "MODIFY_RQT without rqn_list: BAD_PARAM")
    check(v.ncmd("DESTROY_RQ", fields=[(P["VCX_OBJ_NUMBER"], rqs[3].rqn)]), BAD_RES_STATE,
          synd("DESTROY_RQ", 0x68), "DESTROY_RQ of an RQT entry: BAD_RES_STATE")
    check(v.ncmd("DESTROY_TIR", fields=[(P["VCX_OBJ_NUMBER"], tir)]), OK, 0, "DESTROY_TIR")
    check(v.ncmd("DESTROY_RQT", fields=[(P["VCX_OBJ_NUMBER"], rqt)]), OK, 0, "DESTROY_RQT")
    check(v.ncmd("DESTROY_RQ", fields=[(P["VCX_OBJ_NUMBER"], rqs[3].rqn)]), OK, 0,
          "DESTROY_RQ once no RQT names it")


def case_ft_cmds(v):
    pd = v.alloc_pd()
    cq = v.create_cq()
    td = v.td()
    rq = v.rq(pd, cq)
    tir = v.tir(td, rqn=rq.rqn)
    r = v.ncmd("CREATE_FLOW_TABLE", in_len=N["VCX_CREATE_FT_IN_LEN"],
               out_len=N["VCX_CREATE_FT_OUT_LEN"], fields=[(N["VCX_FT_IN_TABLE_TYPE"], 1)])
    check(r, BAD_PARAM, synd("CREATE_FLOW_TABLE", 0x90), "NIC TX flow table: BAD_PARAM")
    check(v.ft(65), BAD_PARAM, synd("CREATE_FLOW_TABLE", 0x95), "level 65: BAD_PARAM")
    ft64 = v.ft(64, 4)
    t.ok(isinstance(ft64, int), "level 64 (max_ft_level, as ConnectX: mlx5_core's steering "
         "tree needs 58 and up): created")
    if isinstance(ft64, int):
        check(v.ncmd("DESTROY_FLOW_TABLE", in_len=N["VCX_DESTROY_FT_IN_LEN"],
                     fields=[(N["VCX_FT_IN_TABLE_ID"], ft64)]), OK, 0,
              "the level 64 table destroyed")
    check(v.ft(0, 17), BAD_PARAM, synd("CREATE_FLOW_TABLE", 0x96), "log_size 17: BAD_PARAM")
    ft1 = v.ft(1, 4)
    check(v.ft(2, 4, miss=1, miss_id=ft1), BAD_PARAM, synd("CREATE_FLOW_TABLE", 0x97),
          "miss to a table of a lower level: BAD_PARAM")
    check(v.ft(0, 4, miss=2), BAD_PARAM, synd("CREATE_FLOW_TABLE", 0x97),
          "table_miss_action 2: BAD_PARAM")
    check(v.ft(0, 4, raw=lambda c: put(c, N["VCX_FTC_DECAP_EN"], 1)), BAD_PARAM,
          synd("CREATE_FLOW_TABLE", 0x98), "decap_en: BAD_PARAM")
    ft0 = v.ft(0, 4, miss=1, miss_id=ft1)
    r = v.ncmd("QUERY_FLOW_TABLE", in_len=N["VCX_QUERY_FT_IN_LEN"],
               out_len=N["VCX_QUERY_FT_OUT_LEN"], fields=[(N["VCX_FT_IN_TABLE_ID"], ft0)])
    at = N["VCX_QUERY_FT_OUT_CTX_AT"]
    t.eq((get(r.out, N["VCX_FTC_LEVEL"], at), get(r.out, N["VCX_FTC_LOG_SIZE"], at),
          get(r.out, N["VCX_FTC_TABLE_MISS_ACTION"], at),
          get(r.out, N["VCX_FTC_TABLE_MISS_ID"], at)), (0, 4, 1, ft1),
         "QUERY_FLOW_TABLE: level, log_size, miss action and table")
    check(v.fg(ft0, 4, 2), BAD_PARAM, synd("CREATE_FLOW_GROUP", 0xb0),
          "group with start > end: BAD_PARAM")
    check(v.fg(ft0, 0, 16), BAD_PARAM, synd("CREATE_FLOW_GROUP", 0xb0),
          "group beyond the table: BAD_PARAM")
    check(v.fg(ft0, 0, 3, {"TCP_FLAGS": 0x1ff}), BAD_PARAM, synd("CREATE_FLOW_GROUP", 0xb3),
          "criteria on the TCP flags: BAD_PARAM")
    check(v.fg(ft0, 0, 3, {"DMAC_47_16": 0xffffffff}, enable=3), BAD_PARAM,
          synd("CREATE_FLOW_GROUP", 0xb3), "criteria enable misc parameters: BAD_PARAM")
    check(v.fg(ft0, 0, 3, table_type=1), BAD_PARAM, synd("CREATE_FLOW_GROUP", 0x90),
          "group in a NIC TX table: BAD_PARAM")
    g1 = v.fg_id(ft0, 0, 3, {"DMAC_47_16": 0xffffffff, "DMAC_15_0": 0xffff})
    check(v.fg(ft0, 3, 5), BAD_PARAM, synd("CREATE_FLOW_GROUP", 0xb1),
          "overlapping groups: BAD_PARAM")
    g2 = v.fg_id(ft0, 4, 4)
    r = v.ncmd("QUERY_FLOW_GROUP", in_len=N["VCX_QUERY_FG_IN_LEN"],
               out_len=N["VCX_QUERY_FG_OUT_LEN"],
               fields=[(N["VCX_FT_IN_TABLE_ID"], ft0), (N["VCX_QUERY_FG_IN_GROUP_ID"], g1)])
    ca = N["VCX_QUERY_FG_OUT_MATCH_CRITERIA_AT"]
    t.eq((r.f(N["VCX_QUERY_FG_OUT_START_FLOW_INDEX"]), r.f(N["VCX_QUERY_FG_OUT_END_FLOW_INDEX"]),
          r.f(N["VCX_QUERY_FG_OUT_MATCH_CRITERIA_ENABLE"]), bytes(r.out[ca + 8:ca + 14])),
         (0, 3, 1, b"\xff" * 6), "QUERY_FLOW_GROUP: range, enable, DMAC criteria")
    dmac = {"DMAC_47_16": int.from_bytes(MAC[:4], "big"),
            "DMAC_15_0": int.from_bytes(MAC[4:], "big")}
    check(v.fte(ft0, 5, g2, 4, (2, tir)), BAD_PARAM, synd("SET_FLOW_TABLE_ENTRY", 0xc1),
          "FTE at an index of no group: BAD_PARAM")
    check(v.fte(ft0, 1, g2, 4, (2, tir)), BAD_PARAM, synd("SET_FLOW_TABLE_ENTRY", 0xc1),
          "FTE naming another group: BAD_PARAM")
    check(v.fte(ft0, 16, g1, 4, (2, tir)), BAD_PARAM, synd("SET_FLOW_TABLE_ENTRY", 0xc0),
          "FTE beyond the table: BAD_PARAM")
    check(v.fte(ft0, 0, g1, 4 | 8, (2, tir)), BAD_PARAM, synd("SET_FLOW_TABLE_ENTRY", 0xc4),
          "FTE forward + count: BAD_PARAM")
    check(v.fte(ft0, 0, g1, 1), BAD_PARAM, synd("SET_FLOW_TABLE_ENTRY", 0xc4),
          "FTE allow: BAD_PARAM")
    check(v.fte(ft0, 0, g1, 4, (2, tir), ndest=2), BAD_PARAM,
          synd("SET_FLOW_TABLE_ENTRY", 0xc5), "FTE with two destinations: BAD_PARAM")
    check(v.fte(ft0, 0, g1, 4, (0, 0)), BAD_PARAM, synd("SET_FLOW_TABLE_ENTRY", 0xc6),
          "FTE to a vport: BAD_PARAM")
    check(v.fte(ft0, 0, g1, 4, (2, 0xee)), BAD_PARAM, synd("SET_FLOW_TABLE_ENTRY", 0xc7),
          "FTE to no TIR: BAD_PARAM")
    check(v.fte(ft1, 0, v.fg_id(ft1, 0, 0), 4, (1, ft0)), BAD_PARAM,
          synd("SET_FLOW_TABLE_ENTRY", 0xc8), "FTE to a table of a lower level: BAD_PARAM")
    check(v.fte(ft0, 0, g1, 4, (2, tir), value=dmac, flow_tag=0xabcdef), OK, 0,
          "FTE DMAC -> TIR")
    check(v.fte(ft0, 0, g1, 4, (2, tir), value=dmac), BAD_RES_STATE,
          synd("SET_FLOW_TABLE_ENTRY", 0xc2), "FTE at an index in use: BAD_RES_STATE")
    check(v.fte(ft0, 4, g2, 4, (1, ft1)), OK, 0, "FTE catch-all -> table of level 1")
    r = v.ncmd("QUERY_FLOW_TABLE_ENTRY", in_len=N["VCX_QUERY_FTE_IN_LEN"],
               out_len=N["VCX_QUERY_FTE_OUT_LEN"] + 8,
               fields=[(N["VCX_QUERY_FTE_IN_TABLE_ID"], ft0),
                       (N["VCX_QUERY_FTE_IN_FLOW_INDEX"], 0)])
    fc = N["VCX_QUERY_FTE_OUT_CTX_AT"]
    mv = fc + N["VCX_FTE_MATCH_VALUE_AT"]
    t.eq((get(r.out, N["VCX_FTE_ACTION"], fc), get(r.out, N["VCX_FTE_FLOW_TAG"], fc),
          get(r.out, N["VCX_FTE_GROUP_ID"], fc), bytes(r.out[mv + 8:mv + 14]),
          get(r.out, N["VCX_DEST_TYPE"], fc + 0x300), get(r.out, N["VCX_DEST_ID"], fc + 0x300)),
         (4, 0xabcdef, g1, MAC, 2, tir), "QUERY_FLOW_TABLE_ENTRY: action, tag, group, value, "
         "destination")
    check(v.fte(ft0, 0, g1, 4, (2, tir), flow_tag=0x42, op_mod=1, modify_mask=2), OK, 0,
          "SET_FLOW_TABLE_ENTRY modify of the flow tag")
    r = v.ncmd("QUERY_FLOW_TABLE_ENTRY", in_len=N["VCX_QUERY_FTE_IN_LEN"],
               out_len=N["VCX_QUERY_FTE_OUT_LEN"] + 8,
               fields=[(N["VCX_QUERY_FTE_IN_TABLE_ID"], ft0),
                       (N["VCX_QUERY_FTE_IN_FLOW_INDEX"], 0)])
    t.eq(get(r.out, N["VCX_FTE_FLOW_TAG"], fc), 0x42, "flow tag after the modify")
    check(v.fte(ft0, 1, g1, 4, (2, tir), op_mod=1, modify_mask=2), BAD_PARAM,
          synd("SET_FLOW_TABLE_ENTRY", 0xc3), "modify of an empty index: BAD_PARAM")
    check(v.fte(ft0, 0, g1, 4, (2, tir), op_mod=1, modify_mask=8), BAD_PARAM,
          synd("SET_FLOW_TABLE_ENTRY", 0xca), "modify of the counters: BAD_PARAM")
    check(v.ncmd("DESTROY_TIR", fields=[(P["VCX_OBJ_NUMBER"], tir)]), BAD_RES_STATE,
          synd("DESTROY_TIR", 0x82), "DESTROY_TIR of an FTE destination: BAD_RES_STATE")
    check(v.root(ft0), OK, 0, "SET_FLOW_TABLE_ROOT")
    check(v.root(0x77), BAD_PARAM, synd("SET_FLOW_TABLE_ROOT", 0x93),
          "SET_FLOW_TABLE_ROOT of no table: BAD_PARAM")
    dft = lambda ft: v.ncmd("DESTROY_FLOW_TABLE", in_len=N["VCX_DESTROY_FT_IN_LEN"],  # noqa
                            fields=[(N["VCX_FT_IN_TABLE_ID"], ft)])
    check(dft(ft0), BAD_RES_STATE, synd("DESTROY_FLOW_TABLE", 0x99),
          "DESTROY_FLOW_TABLE of the root, which has groups: BAD_RES_STATE")
    check(dft(ft1), BAD_RES_STATE, synd("DESTROY_FLOW_TABLE", 0x94),
          "DESTROY_FLOW_TABLE of a destination: BAD_RES_STATE")
    # the root itself may go, as mlx5_core destroys its last root table (no disconnect)
    ftr = v.ft(3, 4)
    check(v.root(ftr), OK, 0, "SET_FLOW_TABLE_ROOT to an empty table")
    check(dft(ftr), OK, 0, "DESTROY_FLOW_TABLE of the root without groups: OK (no root now)")
    check(v.root(ftr), BAD_PARAM, synd("SET_FLOW_TABLE_ROOT", 0x93),
          "the destroyed table cannot be the root again")
    check(v.root(0, op_mod=1), OK, 0, "SET_FLOW_TABLE_ROOT disconnect (op_mod 1)")
    check(dft(ft0), BAD_RES_STATE, synd("DESTROY_FLOW_TABLE", 0x99),
          "DESTROY_FLOW_TABLE with groups: BAD_RES_STATE")
    dfg = lambda g: v.ncmd("DESTROY_FLOW_GROUP", in_len=N["VCX_DESTROY_FG_IN_LEN"],  # noqa
                           fields=[(N["VCX_FT_IN_TABLE_ID"], ft0),
                                   (N["VCX_DESTROY_FG_IN_GROUP_ID"], g)])
    check(dfg(g1), BAD_RES_STATE, synd("DESTROY_FLOW_GROUP", 0xb6),
          "DESTROY_FLOW_GROUP with entries: BAD_RES_STATE")
    dfte = lambda i: v.ncmd("DELETE_FLOW_TABLE_ENTRY", in_len=N["VCX_DELETE_FTE_IN_LEN"],  # noqa
                            fields=[(N["VCX_DELETE_FTE_IN_TABLE_ID"], ft0),
                                    (N["VCX_DELETE_FTE_IN_FLOW_INDEX"], i)])
    check(dfte(0), OK, 0, "DELETE_FLOW_TABLE_ENTRY")
    check(dfte(0), BAD_PARAM, synd("DELETE_FLOW_TABLE_ENTRY", 0xc3),
          "DELETE_FLOW_TABLE_ENTRY of an empty index: BAD_PARAM")
    check(dfte(4), OK, 0, "DELETE_FLOW_TABLE_ENTRY of the forward")
    check(dfg(g1), OK, 0, "DESTROY_FLOW_GROUP")
    check(dfg(g1), BAD_PARAM, synd("DESTROY_FLOW_GROUP", 0xb5),
          "DESTROY_FLOW_GROUP twice: BAD_PARAM")
    check(dfg(g2), OK, 0, "DESTROY_FLOW_GROUP")
    check(dft(ft0), OK, 0, "DESTROY_FLOW_TABLE")
    check(dft(ft0), BAD_PARAM, synd("DESTROY_FLOW_TABLE", 0x93),
          "DESTROY_FLOW_TABLE twice: BAD_PARAM")
    st = v.d.state()
    t.eq((st["fts"], st["fgs"], st["ftes"]), ("1", "1", "0"),
         "state: one table with its group left (the level-1 one)")


# ---------------------------------------------------------------------------------------
# send path
# ---------------------------------------------------------------------------------------

def case_tx_frames(v):
    su = Setup(v)
    v.sock.drain()
    # UDP over IPv4, checksums left wrong for the device to compute (L3 and L4 flags)
    data = bytes(range(200))
    f = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 17, udp(IP_A, IP_B, 1234, 5678, data,
                                                         good_csum=False), good_csum=False))
    idx = send(v, su, f, cs=0xc0)
    good = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 17, udp(IP_A, IP_B, 1234, 5678, data)))
    got = v.sock.recv()
    t.eq(got, good, "UDP/IPv4 WQE with L3+L4 checksum flags: the frame on the wire, "
         "checksums computed")
    e = poll(v, su.scq)
    t.eq(e is not None and (cqe(e)["opcode"], cqe(e)["wqe_counter"], cqe(e)["qpn"],
                            cqe(e)["sop"]), (0, idx, su.sq.sqn, 0x0a),
         "send CQE: REQ, wqe_counter, SQ number, SEND")
    # TCP over IPv6, L4 flag only, headers and part of the payload inline
    seg = tcp(IP6_A, IP6_B, 80, 4242, b"z" * 1000, good_csum=False)
    f = eth(PEER, MAC, 0x86dd, ipv6(IP6_A, IP6_B, 6, seg))
    send(v, su, f, cs=0x80, inline=54 + 20)
    good = eth(PEER, MAC, 0x86dd, ipv6(IP6_A, IP6_B, 6, tcp(IP6_A, IP6_B, 80, 4242, b"z" * 1000)))
    t.eq(v.sock.recv(), good, "TCP/IPv6 WQE with the L4 flag and 74 inline bytes: the frame, "
         "TCP checksum computed")
    # no flags: the frame as given, checksum fields untouched
    f = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 17, udp(IP_A, IP_B, 1, 2, b"abc",
                                                         good_csum=False), good_csum=False))
    send(v, su, f, cs=0)
    t.eq(v.sock.recv(), pad60(f), "no checksum flags: frame unchanged, padded to 60 bytes")
    # all inline, no data segment
    f = eth(BCAST, MAC, 0x0806, bytes(range(28)))
    send(v, su, f, inline=len(f))
    t.eq(v.sock.recv(), pad60(f), "ARP-sized broadcast all inline: padded to 60 bytes")
    # several data segments
    v.qt.memwrite(su.buf + 0x1000, b"A" * 100)
    v.qt.memwrite(su.buf + 0x3000, b"B" * 3000)
    hdr = eth(PEER, MAC, 0x88b5, b"")
    su.sq.post(send_wqe(su.sq.sqn, su.sq.pi, hdr, [(su.buf + 0x1000, 100, su.key),
                                                    (su.buf + 0x3000, 3000, su.key)]))
    v.settle()
    t.eq(v.sock.recv(), hdr + b"A" * 100 + b"B" * 3000, "two data segments gathered in order")
    # NOP with a CQE, and a SEND without one
    n0 = len(su.scq.poll_all())
    idx = su.sq.post(nop_wqe(su.sq.sqn, su.sq.pi))
    v.settle()
    e = poll(v, su.scq)
    t.eq(e is not None and (cqe(e)["opcode"], cqe(e)["wqe_counter"], cqe(e)["sop"]),
         (0, idx, 0), "NOP WQE: a CQE with its index")
    send(v, su, eth(PEER, MAC, 0x88b5, b"q" * 50), ce=False)
    t.ok(v.sock.recv() is not None, "unsignaled SEND: the frame leaves")
    t.eq(su.scq.poll(), None, "unsignaled SEND: no CQE")
    t.ok(n0 >= 0, "CQ polled")
    c = v.vport_counters()
    t.ok(c["tx_eth_unicast"][0] >= 5 and c["tx_eth_broadcast"] == (1, 60),
         "vport counters: unicast and broadcast frames sent (%r, %r)" %
         (c["tx_eth_unicast"], c["tx_eth_broadcast"]))
    c = v.vport_counters(clear=1)
    c = v.vport_counters()
    t.eq(c["tx_eth_unicast"], (0, 0), "QUERY_VPORT_COUNTER clear zeroes them")


def case_tx_errors(v):
    su = Setup(v)
    v.sock.drain()
    f = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 17, udp(IP_A, IP_B, 1, 2, b"x" * 100)))
    cases = [
        ("SEND with an mss (1400)", dict(mss=1400), 0x02),
        ("bad lkey", dict(key=0x12345600), 0x04),
        ("frame over the vport MTU", dict(big=True), 0x01),
        ("opcode RDMA WRITE", dict(opcode=0x08), 0x02),
        ("ds count 0", dict(ds=0), 0x02),
        ("ds count past the posted WQEs", dict(ds=40), 0x02),
    ]
    for desc, kw, syn in cases:
        v.ok(v.modify_sq(su.sq.sqn, v.sq_state(su.sq.sqn), 0), "SQ to RST")
        v.ok(v.modify_sq(su.sq.sqn, 0, 1), "SQ to RDY")
        su.sq.pi = 0
        su.scq.poll_all()
        key = kw.get("key", su.key)
        n = 0x10000 if kw.get("big") else len(f) - 14
        v.qt.memwrite(su.buf, f[14:])
        w = send_wqe(su.sq.sqn, 0, f[:14], [(su.buf, n, key)], mss=kw.get("mss", 0),
                     opcode=kw.get("opcode", 0x0a), ds=kw.get("ds"))
        good = send_wqe(su.sq.sqn, 1, f[:14], [(su.buf, len(f) - 14, su.key)])
        su.sq.post(w, ring=False)
        su.sq.post(good)
        v.settle()
        e1, e2 = poll(v, su.scq), poll(v, su.scq)
        t.eq(e1 is not None and (cqe(e1)["opcode"], cqe(e1)["syndrome"], cqe(e1)["wqe_counter"],
                                 cqe(e1)["qpn"]), (0xd, syn, 0, su.sq.sqn),
             "%s: error CQE (REQ_ERR, syndrome 0x%x)" % (desc, syn))
        t.eq(e2 is not None and (cqe(e2)["opcode"], cqe(e2)["syndrome"], cqe(e2)["wqe_counter"]),
             (0xd, 0x05, 1), "%s: the next WQE flushed (WR_FLUSH_ERR)" % desc)
        t.eq(v.sq_state(su.sq.sqn), 3, "%s: SQ in ERR" % desc)
        t.eq(v.sock.recv(0.2), None, "%s: nothing on the wire" % desc)
    # recovery as mlx5e does it: ERR -> RST -> RDY, then it sends again
    v.ok(v.modify_sq(su.sq.sqn, 3, 0), "ERR->RST")
    v.ok(v.modify_sq(su.sq.sqn, 0, 1), "RST->RDY")
    su.sq.pi = 0
    send(v, su, f)
    t.eq(v.sock.recv(), f, "after ERR -> RST -> RDY the SQ sends again")
    # without flush_in_error_en: only the error CQE
    sq2 = v.sq(su.pd, su.scq, su.tis, flush=False)
    su.scq.poll_all()
    sq2.post(send_wqe(sq2.sqn, 0, f[:14], [(su.buf, 10, 0x999900)]), ring=False)
    sq2.post(send_wqe(sq2.sqn, 1, f[:14], [(su.buf, 10, su.key)]))
    v.settle()
    es = su.scq.poll_all()
    t.eq([(cqe(e)["opcode"], cqe(e)["syndrome"]) for e in es], [(0xd, 0x04)],
         "flush_in_error_en 0: the error CQE only")
    # a producer counter far past the ring: one ring's worth per doorbell, then it stops
    sq3 = v.sq(su.pd, su.scq, su.tis, log_sz=6)
    for i in range(64):
        sq3.post(nop_wqe(sq3.sqn, i, ce=False), ring=False)
    sq3.pi = 1000
    sq3.ring(nop_wqe(sq3.sqn, 0)[:8])
    v.settle()
    r = v.query_sq(sq3.sqn)
    hw = get(r.out, P["VCX_WQ_HW_COUNTER"], N["VCX_QUERY_SQ_OUT_CTX_AT"] + N["VCX_SQC_WQ_AT"])
    t.eq((hw, v.sq_state(sq3.sqn)), (64, 1), "producer counter 1000 on a 64-WQEBB ring: "
         "64 WQEBBs run for the doorbell, SQ still RDY")
    t.ok("more than 64 WQEBBs ahead" in open(v.qt.log_path).read(),
         "... and the guest error is logged")
    t.ok(v.qt.alive(), "QEMU alive after malformed send WQEs")


def post_lso(v, su, hdr, parts, mss, cs=0xc0, ce=True):
    """An LSO WQE: hdr inline, then one data segment per part of the payload."""
    segs, off = [], 0x40000
    for p in parts:
        v.qt.memwrite(su.buf + off, p)
        segs.append((su.buf + off, len(p), su.key))
        off += (len(p) + 0xfff) & ~0xfff
    idx = su.sq.pi
    su.sq.post(send_wqe(su.sq.sqn, idx, hdr, segs, cs=cs, ce=ce, opcode=0x0e, mss=mss))
    v.settle()
    return idx


def case_tx_lso(v):
    su = Setup(v)
    v.sock.drain()
    c0 = v.vport_counters()["tx_eth_unicast"]
    # TCP/IPv4: 5000 payload bytes in two data segments cut at 1448; the template's
    # checksums, lengths and flags (CWR, PSH, FIN) for the device to fix per segment
    data = bytes((i * 7 + 3) & 0xff for i in range(5000))
    hdr = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 6, tcp(IP_A, IP_B, 80, 4242, b"",
                                                         good_csum=False, seq=0xfffff000,
                                                         flags=0x80 | 0x18 | 0x01),
                                      ident=0xfffe, good_csum=False))
    idx = post_lso(v, su, hdr, [data[:1000], data[1000:]], 1448)
    want = []
    for i, o in enumerate(range(0, 5000, 1448)):
        last = o + 1448 >= 5000
        flags = 0x10 | (0x80 if i == 0 else 0) | (0x09 if last else 0)
        seg = tcp(IP_A, IP_B, 80, 4242, data[o:o + 1448], seq=(0xfffff000 + o) & 0xffffffff,
                  flags=flags)
        want.append(eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 6, seg,
                                                 ident=(0xfffe + i) & 0xffff)))
    got = [v.sock.recv() for _ in want]
    t.eq(got, want, "LSO TCP/IPv4, 5000 bytes at mss 1448: 4 frames, lengths, IDs (wrapping), "
         "sequence numbers (wrapping), CWR first only, FIN and PSH last only, checksums")
    t.eq(v.sock.recv(0.2), None, "... and no fifth frame")
    e = poll(v, su.scq)
    t.eq(e is not None and (cqe(e)["opcode"], cqe(e)["wqe_counter"], cqe(e)["sop"]),
         (0, idx, 0x0e), "LSO: one CQE for the WQE (REQ, its index, opcode LSO)")
    c1 = v.vport_counters()["tx_eth_unicast"]
    t.eq((c1[0] - c0[0], c1[1] - c0[1]), (4, sum(len(f) for f in want)),
         "vport counters: 4 frames, their bytes")
    # TCP/IPv6 behind an 802.1Q tag, headers inline only, 3000 bytes at mss 1000, no flags
    seg = tcp(IP6_A, IP6_B, 7, 9, b"", good_csum=False, seq=5, flags=0x10)
    hdr = eth(PEER, MAC, 0x8100, struct.pack(">H", 42) + b"\x86\xdd" +
              ipv6(IP6_A, IP6_B, 6, seg))
    data = os.urandom(3000)
    post_lso(v, su, hdr, [data], 1000, cs=0)
    want = [eth(PEER, MAC, 0x8100, struct.pack(">H", 42) + b"\x86\xdd" +
                ipv6(IP6_A, IP6_B, 6, tcp(IP6_A, IP6_B, 7, 9, data[o:o + 1000], seq=5 + o,
                                          flags=0x10)))
            for o in range(0, 3000, 1000)]
    t.eq([v.sock.recv() for _ in want], want, "LSO TCP/IPv6 behind a VLAN tag: 3 frames, "
         "payload lengths and TCP checksums computed although cs_flags is 0")
    # headers only: one frame
    seg = tcp(IP_A, IP_B, 1, 2, b"", good_csum=False, flags=0x11)
    hdr = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 6, seg, good_csum=False))
    post_lso(v, su, hdr, [], 1448)
    want = pad60(eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 6, tcp(IP_A, IP_B, 1, 2, b"",
                                                                 flags=0x11))))
    t.eq(v.sock.recv(), want, "LSO without payload: one frame of the headers, padded, FIN kept")
    # the payload ends exactly on a segment boundary: no empty last segment
    seg = tcp(IP_A, IP_B, 1, 2, b"", good_csum=False)
    hdr = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 6, seg, good_csum=False))
    post_lso(v, su, hdr, [b"a" * 600, b"b" * 600], 400)
    got = [v.sock.recv() for _ in range(3)]
    t.eq([len(f) if f else None for f in got] + [v.sock.recv(0.2)], [454] * 3 + [None],
         "1200 bytes at mss 400: three full frames, nothing more")
    t.ok(v.qt.alive(), "QEMU alive after LSO")


def case_tx_lso_errors(v):
    su = Setup(v)
    v.sock.drain()
    tcp4 = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 6, tcp(IP_A, IP_B, 1, 2, b"")))
    udp4 = eth(PEER, MAC, 0x0800, ipv4(IP_A, IP_B, 17, udp(IP_A, IP_B, 1, 2, b"")))
    frag = bytearray(tcp4)
    frag[14 + 6] = 0x20                     # MF
    pay = [b"p" * 3000]
    cases = [
        ("LSO with mss 0", tcp4, pay, 0, 0x02),
        ("LSO of UDP", udp4, pay, 1000, 0x02),
        ("LSO with the Ethernet header inline only", tcp4[:14], [tcp4[14:] + pay[0]], 1000,
         0x02),
        ("LSO with inline bytes past the TCP header", tcp4 + b"x" * 10, pay, 1000, 0x02),
        ("LSO of an IPv4 fragment", bytes(frag), pay, 1000, 0x02),
        ("LSO of an ARP frame", eth(PEER, MAC, 0x0806, bytes(28)), pay, 1000, 0x02),
        ("LSO segment over the vport MTU (mss 9200 + 54)", tcp4, [b"q" * 10000], 9200, 0x01),
        ("LSO message over 2^16 bytes", tcp4, [bytes(65536 - 54), b"z"], 1448, 0x01),
    ]
    for desc, hdr, parts, mss, syn in cases:
        v.ok(v.modify_sq(su.sq.sqn, v.sq_state(su.sq.sqn), 0), "SQ to RST")
        v.ok(v.modify_sq(su.sq.sqn, 0, 1), "SQ to RDY")
        su.sq.pi = 0
        su.scq.poll_all()
        post_lso(v, su, hdr, parts, mss)
        e = poll(v, su.scq)
        t.eq(e is not None and (cqe(e)["opcode"], cqe(e)["syndrome"], cqe(e)["sop"]),
             (0xd, syn, 0x0e), "%s: error CQE (REQ_ERR, syndrome 0x%x)" % (desc, syn))
        t.eq(v.sq_state(su.sq.sqn), 3, "%s: SQ in ERR" % desc)
        t.eq(v.sock.recv(0.2), None, "%s: nothing on the wire" % desc)
    t.ok("LSO message longer than 2^max_lso_cap" in open(v.qt.log_path).read(),
         "the guest error is logged")
    t.ok(v.qt.alive(), "QEMU alive after malformed LSO WQEs")


# ---------------------------------------------------------------------------------------
# receive path
# ---------------------------------------------------------------------------------------

def rx_frame(v, su, frame, rq=None):
    v.wire_in(frame)


def case_rx_steering(v):
    su = Setup(v)
    qc = v.q_counter()
    rq_ip = v.rq(su.pd, su.rcq, counter=qc)
    rq_udp = v.rq(su.pd, su.rcq, counter=qc)
    rq_other = v.rq(su.pd, su.rcq, counter=qc)
    tir_ip, tir_udp, tir_other = (v.tir(su.td, rqn=q.rqn) for q in (rq_ip, rq_udp, rq_other))
    # level 1 (TTC): IPv4 UDP to port 9999 -> tir_udp, other IPv4 -> tir_ip, miss -> drop
    ttc = v.ft(2, 4)
    g = v.fg_id(ttc, 0, 3, {"ETHERTYPE": 0xffff, "IP_PROTOCOL": 0xff, "UDP_DPORT": 0xffff})
    v.ok(v.fte(ttc, 0, g, 4, (2, tir_udp), value={"ETHERTYPE": 0x800, "IP_PROTOCOL": 17,
                                                   "UDP_DPORT": 9999}, flow_tag=0x222),
         "FTE UDP 9999")
    g2 = v.fg_id(ttc, 4, 7, {"ETHERTYPE": 0xffff})
    v.ok(v.fte(ttc, 4, g2, 4, (2, tir_ip), value={"ETHERTYPE": 0x800}, flow_tag=0x111),
         "FTE IPv4")
    # level 2: catch-all for what the TTC table misses (its miss forwards here)
    ft2 = v.ft(3, 2)
    v.ok(v.fte(ft2, 0, v.fg_id(ft2, 0, 0), 4, (2, tir_other), flow_tag=0x333), "catch-all")
    ttc_miss = v.ft(1, 4, miss=1, miss_id=ft2)
    g3 = v.fg_id(ttc_miss, 0, 1, {"ETHERTYPE": 0xffff})
    v.ok(v.fte(ttc_miss, 0, g3, 4, (1, ttc), value={"ETHERTYPE": 0x800}), "IPv4 -> TTC")
    v.ok(v.fte(ttc_miss, 1, g3, 2, value={"ETHERTYPE": 0x86dd}), "IPv6: drop")
    v.ok(v.fte(ttc_miss, 0, g3, 4, (1, ttc), value={"ETHERTYPE": 0x800}, op_mod=1,
               modify_mask=4), "modify destination")
    # level 0: own DMAC -> level 1
    root = v.ft(0, 3)
    gd = v.fg_id(root, 0, 1, {"DMAC_47_16": 0xffffffff, "DMAC_15_0": 0xffff})
    v.ok(v.fte(root, 0, gd, 4, (1, ttc_miss), value={
        "DMAC_47_16": int.from_bytes(MAC[:4], "big"), "DMAC_15_0": int.from_bytes(MAC[4:], "big")}),
        "root FTE own MAC")
    v.ok(v.root(root), "SET_FLOW_TABLE_ROOT")
    bufs = {}
    for q in (rq_ip, rq_udp, rq_other):
        bufs[q.rqn] = []
        for _ in range(4):
            a = su.rx_buf(v)
            bufs[q.rqn].append(a)
            q.post([(a, 4096, su.key)])
    payload = b"steer" * 20
    f_udp = eth(MAC, PEER, 0x800, ipv4(IP_B, IP_A, 17, udp(IP_B, IP_A, 7, 9999, payload)))
    f_ip = eth(MAC, PEER, 0x800, ipv4(IP_B, IP_A, 17, udp(IP_B, IP_A, 7, 9998, payload)))
    f_arp = eth(MAC, PEER, 0x806, bytes(46))
    f_v6 = eth(MAC, PEER, 0x86dd, ipv6(IP6_B, IP6_A, 17, udp(IP6_B, IP6_A, 1, 2, payload)))
    f_bad = bytearray(f_ip)             # IPv4 header and UDP checksums both wrong
    f_bad[24] ^= 0x55
    f_bad[40] ^= 0x55
    f_bad = bytes(f_bad)
    # bytes after the IP packet (an Ethernet trailer) of frames over 60 bytes, behind an
    # odd- and an even-length UDP segment: the CQE's check_sum covers them, the L4
    # checksum does not
    f_odd = eth(MAC, PEER, 0x800, ipv4(IP_B, IP_A, 17, udp(IP_B, IP_A, 7, 9999, b"o" * 21))) + \
        b"\x5a\xa5\x11"
    f_trail = eth(MAC, PEER, 0x800, ipv4(IP_B, IP_A, 17, udp(IP_B, IP_A, 7, 9999, b"e" * 22))) + \
        b"\x5a\xa5\x11"
    for fr in (f_udp, f_ip, f_arp, f_v6, f_bad, f_odd, f_trail):
        rx_frame(v, su, fr)
    es = su.rcq.poll_all()
    got = [(cqe(e)["opcode"], cqe(e)["flow_tag"], cqe(e)["byte_cnt"]) for e in es]
    t.eq(got, [(2, 0x222, len(f_udp)), (2, 0x111, len(f_ip)), (2, 0x333, len(f_arp)),
               (2, 0x111, len(f_bad)), (2, 0x222, len(f_odd)), (2, 0x222, len(f_trail))],
         "UDP 9999 -> its TIR, other IPv4 -> the IPv4 TIR, ARP -> the miss table's catch-all, "
         "IPv6 dropped by its entry; flow tags and byte counts")
    t.eq(v.qt.memread(bufs[rq_udp.rqn][0], len(f_udp)), f_udp, "the UDP frame in its RQ's buffer")
    t.eq(v.qt.memread(bufs[rq_other.rqn][0], len(f_arp)), f_arp, "the ARP frame in its buffer")
    if len(es) == 6:
        c = cqe(es[0])
        t.eq((c["l3"], c["l4"], c["hds"], c["wqe_counter"]), (2, 2, 0x7, 0),
             "UDP/IPv4 CQE: l3 IPv4, l4 UDP, L2/L3/L4 OK, wqe_counter 0")
        t.eq(c["check_sum"], csum(f_udp[14:]), "check_sum: ones' complement sum from the IP "
             "header")
        c = cqe(es[2])
        t.eq((c["l3"], c["l4"], c["hds"]), (0, 0, 0x1), "ARP CQE: no L3/L4, L2 OK")
        c = cqe(es[3])
        t.eq((c["l3"], c["l4"], c["hds"], c["wqe_counter"]), (2, 2, 0x1, 1),
             "bad checksums: L3_OK and L4_OK clear, second WQE of that RQ")
        for e, fr, what in ((es[4], f_odd, "odd-length"), (es[5], f_trail, "even-length")):
            c = cqe(e)
            t.eq((c["hds"], c["check_sum"]), (0x7, csum(fr[14:])),
                 "%s UDP segment and a 3-byte trailer in a %d-byte frame: L2/L3/L4 OK, "
                 "check_sum from the IP header to the frame's end" % (what, len(fr)))
    # a frame for someone else is not delivered (vport filter)
    rx_frame(v, su, eth(bytes.fromhex("020000000099"), PEER, 0x800, bytes(46)))
    t.eq(su.rcq.poll(), None, "frame to another unicast MAC: not delivered")
    # multi-level bound: a frame reaching tables with no entry for it is dropped
    st = v.d.state()
    t.ok(int(st["nic_rx_drop"]) >= 2, "drops counted (state nic_rx_drop %s)" % st["nic_rx_drop"])
    r = v.query_q_counter(qc)
    t.eq(r.f(N["VCX_QUERY_Q_COUNTER_OUT_OUT_OF_BUFFER"]), 0, "no out_of_buffer yet")


def case_rx_no_wqe(v):
    su = Setup(v)
    qc = v.q_counter()
    rq = v.rq(su.pd, su.rcq, counter=qc)
    tir = v.tir(su.td, rqn=rq.rqn)
    v.catch_all(tir, flow_tag=0x77)
    f = eth(MAC, PEER, 0x88b5, b"n" * 100)
    a = su.rx_buf(v)
    v.qt.memset(a, 256, 0xa5)
    for _ in range(3):
        rx_frame(v, su, f)
    t.eq(su.rcq.poll(), None, "no receive WQE: no CQE")
    r = v.query_q_counter(qc)
    t.eq(r.f(N["VCX_QUERY_Q_COUNTER_OUT_OUT_OF_BUFFER"]), 3, "out_of_buffer 3")
    r = v.query_q_counter(qc, clear=1)
    t.eq(r.f(N["VCX_QUERY_Q_COUNTER_OUT_OUT_OF_BUFFER"]), 3, "QUERY_Q_COUNTER clear returns 3")
    r = v.query_q_counter(qc)
    t.eq(r.f(N["VCX_QUERY_Q_COUNTER_OUT_OUT_OF_BUFFER"]), 0, "... and zeroes it")
    t.eq(v.qt.memread(a, 256), b"\xa5" * 256, "nothing written")
    # a WQE too short: error CQE, frame dropped, RQ stays RDY and takes the next one
    rq.post([(a, 64, su.key)])
    b = su.rx_buf(v)
    rq.post([(b, 64, su.key), (b + 64, 64, su.key)])
    rx_frame(v, su, f)
    e = poll(v, su.rcq)
    t.eq(e is not None and (cqe(e)["opcode"], cqe(e)["syndrome"], cqe(e)["wqe_counter"]),
         (0xe, 0x01, 0), "frame longer than the WQE: RESP_ERR LOCAL_LENGTH_ERR")
    rx_frame(v, su, f[:100])
    e = poll(v, su.rcq)
    t.eq(e is not None and (cqe(e)["opcode"], cqe(e)["byte_cnt"], cqe(e)["wqe_counter"]),
         (2, 100, 1), "RQ still RDY: the next frame fills two data segments")
    t.eq(v.qt.memread(b, 100), f[:100], "scattered over both segments")
    # RQ not ready
    v.ok(v.modify_rq(rq.rqn, 1, 0), "RQ to RST")
    rq.post([(b, 4096, su.key)])
    rx_frame(v, su, f)
    t.eq(su.rcq.poll(), None, "RQ in RST: nothing delivered")
    # to ERR with flush_in_error_en: the WQEs posted complete flushed
    rq2 = v.rq(su.pd, su.rcq, raw=lambda c: put(c, N["VCX_RQC_FLUSH_IN_ERROR_EN"], 1))
    for _ in range(3):
        rq2.post([(b, 4096, su.key)])
    check(v.modify_rq(rq2.rqn, 1, 3), OK, 0, "MODIFY_RQ RDY->ERR with flush_in_error_en")
    v.settle()
    es = su.rcq.poll_all()
    t.eq([(cqe(e)["opcode"], cqe(e)["syndrome"], cqe(e)["wqe_counter"], cqe(e)["qpn"])
          for e in es], [(0xe, 0x05, i, rq2.rqn) for i in range(3)],
         "three receive WQEs flushed (RESP_ERR, WR_FLUSH_ERR, in order)")


def case_rss(v):
    su = Setup(v)
    rqs = [v.rq(su.pd, su.rcq) for _ in range(8)]
    rqt = v.rqt([q.rqn for q in rqs])
    tir = v.tir(su.td, rqt=rqt, hash_fn=2, key=MS_KEY, l3=0, l4=0, fields=0xf)
    tir_ip = v.tir(su.td, rqt=rqt, hash_fn=2, key=MS_KEY, l3=0, fields=0x3)
    root = v.ft(0, 3)
    g = v.fg_id(root, 0, 1, {"IP_PROTOCOL": 0xff})
    v.ok(v.fte(root, 0, g, 4, (2, tir), value={"IP_PROTOCOL": 6}), "TCP -> hashing TIR")
    v.ok(v.fte(root, 1, g, 4, (2, tir_ip), value={"IP_PROTOCOL": 17}), "UDP -> IP-pair TIR")
    v.ok(v.root(root), "root")
    for q in rqs:
        for _ in range(8):
            q.post([(su.rx_buf(v), 2048, su.key)])
    # Microsoft's verification suite: (dst, dport, src, sport, hash with ports, IP only)
    vectors = [("161.142.100.80", 1766, "66.9.149.187", 2794, 0x51ccc178, 0x323e8fc2),
               ("65.69.140.83", 4739, "199.92.111.2", 14230, 0xc626b0ea, 0xd718262a),
               ("12.22.207.184", 38024, "24.19.198.95", 12898, 0x5c2b394a, 0xd2d0a5de),
               ("209.142.163.6", 2217, "38.27.205.30", 48228, 0xafc7327f, 0x82989176),
               ("202.188.127.2", 1303, "153.39.163.191", 44251, 0x10e828a2, 0x5d1809c5)]
    ip = lambda s: bytes(int(x) for x in s.split("."))  # noqa: E731
    for dst, dport, src, sport, h4, h2 in vectors:
        d, s = ip(dst), ip(src)
        t.eq(toeplitz(MS_KEY, s + d + struct.pack(">HH", sport, dport)), h4,
             "independent Toeplitz reproduces the MS vector 0x%08x" % h4)
        rx_frame(v, su, eth(MAC, PEER, 0x800, ipv4(s, d, 6, tcp(s, d, sport, dport, b"t"))))
        e = poll(v, su.rcq)
        c = cqe(e) if e else {}
        rqn = rqs[h4 & 7].rqn
        t.eq((c.get("rss_hash"), c.get("rss_type"), c.get("qpn")), (h4, 0x44, 0),
             "TCP %s:%d -> %s:%d: rss_hash_result 0x%08x, type IPv4|TCP" %
             (src, sport, dst, dport, h4))
        # which RQ: the CQE's WQE counter is per RQ, so look at the RQ's buffers instead
        t.ok(e is not None and rqn in [q.rqn for q in rqs], "queue rqt[hash & 7] = 0x%x" % rqn)
        rx_frame(v, su, eth(MAC, PEER, 0x800, ipv4(s, d, 17, udp(s, d, sport, dport, b"u"))))
        e = poll(v, su.rcq)
        c = cqe(e) if e else {}
        t.eq((c.get("rss_hash"), c.get("rss_type")), (h2, 0x04),
             "UDP on an IP-pair TIR: hash 0x%08x over the addresses, type IPv4" % h2)
    # which RQ each hash picked: count the CQEs per CQ is shared, so check the RQ counters
    # through QUERY_RQ hw_counter (WQEs consumed)
    used = {}
    for dst, dport, src, sport, h4, h2 in vectors:
        used[rqs[h4 & 7].rqn] = used.get(rqs[h4 & 7].rqn, 0) + 1
        used[rqs[h2 & 7].rqn] = used.get(rqs[h2 & 7].rqn, 0) + 1
    consumed = {}
    for q in rqs:
        r = v.ncmd("QUERY_RQ", out_len=N["VCX_QUERY_RQ_OUT_LEN"],
                   fields=[(P["VCX_OBJ_NUMBER"], q.rqn)])
        n = get(r.out, P["VCX_WQ_HW_COUNTER"], N["VCX_QUERY_RQ_OUT_CTX_AT"] + 0x30)
        if n:
            consumed[q.rqn] = n
    t.eq(consumed, used, "each frame went to rq_num[hash & 7] of the RQT")
    # the IPv6 vectors, on a TIR hashing IPv6 TCP (and one hashing the IPv6 addresses only)
    tir6 = v.tir(su.td, rqt=rqt, hash_fn=2, key=MS_KEY, l3=1, l4=0, fields=0xf)
    tir6ip = v.tir(su.td, rqt=rqt, hash_fn=2, key=MS_KEY, l3=1, l4=0, fields=0x3)
    root6 = v.ft(0, 3)
    g6 = v.fg_id(root6, 0, 1, {"IP_PROTOCOL": 0xff})
    v.ok(v.fte(root6, 0, g6, 4, (2, tir6), value={"IP_PROTOCOL": 6}), "TCP -> IPv6 TIR")
    v.ok(v.fte(root6, 1, g6, 4, (2, tir6ip), value={"IP_PROTOCOL": 17}), "UDP -> IPv6 pair")
    v.ok(v.root(root6), "root for IPv6")
    for q in rqs:
        for _ in range(8):
            q.post([(su.rx_buf(v), 2048, su.key)])
    ip6 = lambda s: __import__("ipaddress").IPv6Address(s).packed  # noqa: E731
    vectors6 = [("3ffe:2501:200:3::1", 1766, "3ffe:2501:200:1fff::7", 2794, 0x40207d3d,
                 0x2cc18cd5),
                ("ff02::1", 4739, "3ffe:501:8::260:97ff:fe40:efab", 14230, 0xdde51bbf,
                 0x0f0c461c),
                ("fe80::200:f8ff:fe21:67cf", 38024, "3ffe:1900:4545:3:200:f8ff:fe21:67cf",
                 44251, 0x02d1feef, 0x4b61e985)]
    for dst, dport, src, sport, h4, h2 in vectors6:
        d, s = ip6(dst), ip6(src)
        t.eq(toeplitz(MS_KEY, s + d + struct.pack(">HH", sport, dport)), h4,
             "independent Toeplitz reproduces the MS IPv6 vector 0x%08x" % h4)
        rx_frame(v, su, eth(MAC, PEER, 0x86dd, ipv6(s, d, 6, tcp(s, d, sport, dport, b"t"))))
        e = poll(v, su.rcq)
        t.eq(e is not None and (cqe(e)["rss_hash"], cqe(e)["rss_type"]), (h4, 0x48),
             "IPv6 TCP [%s]:%d: hash 0x%08x, type IPv6|TCP" % (src, sport, h4))
        rx_frame(v, su, eth(MAC, PEER, 0x86dd, ipv6(s, d, 17, udp(s, d, sport, dport, b"u"))))
        e = poll(v, su.rcq)
        t.eq(e is not None and (cqe(e)["rss_hash"], cqe(e)["rss_type"]), (h2, 0x08),
             "IPv6 UDP on an address-pair TIR: hash 0x%08x, type IPv6" % h2)
    v.ok(v.root(root), "root back to the IPv4 tables")
    # a frame the selector does not cover hashes to 0: rqt[0]
    f6 = eth(MAC, PEER, 0x86dd, ipv6(IP6_B, IP6_A, 6, tcp(IP6_B, IP6_A, 1, 2, b"6")))
    rx_frame(v, su, f6)
    e = poll(v, su.rcq)
    t.eq(e is not None and (cqe(e)["rss_hash"], cqe(e)["rss_type"]), (0, 0),
         "IPv6 TCP on an IPv4 TIR: hash 0, type 0 (queue rqt[0])")
    # rx_hash_symmetric (mlx5e sets it on every Toeplitz TIR): both directions of a flow
    # hash alike, over the smaller address and port first
    tir_sym = v.tir(su.td, rqt=rqt, hash_fn=2, key=MS_KEY, l3=0, l4=0, fields=0xf,
                    raw=lambda c: put(c, N["VCX_TIRC_RX_HASH_SYMMETRIC"], 1))
    t.ok(isinstance(tir_sym, int), "CREATE_TIR with rx_hash_symmetric")
    v.ok(v.root(0, op_mod=1), "disconnect the root")
    v.catch_all(tir_sym)
    for q in rqs:
        q.post([(su.rx_buf(v), 2048, su.key)])
    dst, dport, src, sport = vectors[0][:4]
    d, s = ip(dst), ip(src)
    want = toeplitz(MS_KEY, min(s, d) + max(s, d) + struct.pack(">HH", min(sport, dport),
                                                                 max(sport, dport)))
    got = []
    for a, b, pa, pb in ((s, d, sport, dport), (d, s, dport, sport)):
        rx_frame(v, su, eth(MAC, PEER, 0x800, ipv4(a, b, 6, tcp(a, b, pa, pb, b"y"))))
        e = poll(v, su.rcq)
        got.append(e is not None and (cqe(e)["rss_hash"], cqe(e)["rss_type"]))
    t.eq(got, [(want, 0x44)] * 2, "symmetric TIR: one hash (0x%08x) for both directions of "
         "a TCP flow" % want)
    # the IPsec SPI (mlx5e's ESP and AH traffic types): addresses, then the SPI
    tir_spi = v.tir(su.td, rqt=rqt, hash_fn=2, key=MS_KEY, l3=0, fields=0x13)
    v.ok(v.root(0, op_mod=1), "disconnect the root")
    v.catch_all(tir_spi)
    for q in rqs:
        q.post([(su.rx_buf(v), 2048, su.key)])
    spi = bytes.fromhex("0badf00d")
    frames = [(50, spi + bytes(12), "ESP"), (51, bytes([50, 4, 0, 0]) + spi + bytes(16), "AH")]
    for proto, payload, what in frames:
        rx_frame(v, su, eth(MAC, PEER, 0x800, ipv4(s, d, proto, payload)))
        e = poll(v, su.rcq)
        t.eq(e is not None and (cqe(e)["rss_hash"], cqe(e)["rss_type"]),
             (toeplitz(MS_KEY, s + d + spi), 0xc4),
             "%s on an IP+SPI TIR: hash over the addresses and the SPI, type IPv4|IPSEC" % what)
    rx_frame(v, su, eth(MAC, PEER, 0x800, ipv4(s, d, 17, udp(s, d, 1, 2, b"u"))))
    e = poll(v, su.rcq)
    t.eq(e is not None and (cqe(e)["rss_hash"], cqe(e)["rss_type"]), (0, 0),
         "UDP on an IP+SPI TIR: no SPI, hash 0")
    # inverted XOR8 (ethtool -X hfunc xor on mlx5e): the complemented XOR of the bytes
    tir_xor = v.tir(su.td, rqt=rqt, hash_fn=1, l3=0, l4=0, fields=0xf)
    t.ok(isinstance(tir_xor, int), "CREATE_TIR with inverted XOR8")
    v.ok(v.root(0, op_mod=1), "disconnect the root")
    v.catch_all(tir_xor)
    for q in rqs:
        q.post([(su.rx_buf(v), 2048, su.key)])
    x = 0
    for b in s + d + struct.pack(">HH", sport, dport):
        x ^= b
    rx_frame(v, su, eth(MAC, PEER, 0x800, ipv4(s, d, 6, tcp(s, d, sport, dport, b"x"))))
    e = poll(v, su.rcq)
    t.eq(e is not None and (cqe(e)["rss_hash"], cqe(e)["rss_type"]), (~x & 0xff, 0x44),
         "inverted XOR8 TIR: hash 0x%02x, type IPv4|TCP" % (~x & 0xff))


def case_loopback(v):
    su = Setup(v)
    v.sock.drain()
    rq = v.rq(su.pd, su.rcq)
    td2 = v.td()
    tir = v.tir(td2, rqn=rq.rqn)
    v.catch_all(tir, flow_tag=0x5)
    for _ in range(8):
        rq.post([(su.rx_buf(v), 4096, su.key)])
    f = eth(MAC, MAC, 0x88b5, b"self" * 20)
    send(v, su, f)
    t.eq(v.sock.recv(0.3), None, "frame to the port's own MAC: not on the wire")
    e = poll(v, su.rcq)
    t.eq(e is not None and (cqe(e)["opcode"], cqe(e)["byte_cnt"], cqe(e)["flow_tag"]),
         (2, len(f), 5), "... but received locally")
    f = eth(BCAST, MAC, 0x88b5, b"bc" * 30)
    send(v, su, f)
    t.eq(v.sock.recv(), f, "broadcast: on the wire")
    e = poll(v, su.rcq)
    t.ok(e is not None and cqe(e)["byte_cnt"] == len(f), "broadcast: and received locally")
    # self_lb_block on a TIR of the sender's own transport domain
    v.ok(v.root(0, op_mod=1), "disconnect root")
    tir_own = v.tir(su.td, rqn=rq.rqn, self_lb=3)
    v.catch_all(tir_own, flow_tag=0x6)
    send(v, su, eth(MAC, MAC, 0x88b5, b"x" * 50))
    send(v, su, f)
    t.eq(v.sock.recv(), f, "broadcast still leaves")
    t.eq(su.rcq.poll(), None, "self_lb_block: unicast and multicast loopback of its own "
         "transport domain not delivered")
    rx_frame(v, su, eth(MAC, PEER, 0x88b5, b"w" * 50))
    e = poll(v, su.rcq)
    t.ok(e is not None and cqe(e)["flow_tag"] == 6, "... frames from the wire still are")
    c = v.vport_counters()
    t.ok(c["local_loopback"][0] >= 4, "local_loopback counted (%r)" % (c["local_loopback"],))


def set_vport(v, fs, ctx_fn, entries=()):
    c = bytearray(0x100 + 8 * max(1, len(entries)))
    ctx_fn(c)
    for i, m in enumerate(entries):
        put(c, N["VCX_MAC_LAYOUT_47_32"], int.from_bytes(m[:2], "big"), 0x100 + 8 * i)
        put(c, N["VCX_MAC_LAYOUT_31_0"], int.from_bytes(m[2:], "big"), 0x100 + 8 * i)
    return v.cmd("MODIFY_NIC_VPORT_CONTEXT", in_len=0x200 + 8 * max(1, len(entries)),
                 fields=[(P["VCX_MODIFY_NIC_VPORT_CTX_IN_FIELD_SELECT"], fs)],
                 payload={0x100: bytes(c)})


def case_vport_filter(v):
    su = Setup(v)
    rq = v.rq(su.pd, su.rcq)
    tir = v.tir(su.td, rqn=rq.rqn)
    v.catch_all(tir)
    for _ in range(16):
        rq.post([(su.rx_buf(v), 4096, su.key)])
    other = bytes.fromhex("02aabbccddee")
    mc = bytes.fromhex("01005e000001")
    mc2 = bytes.fromhex("333300000001")

    def delivered(dst):
        rx_frame(v, su, eth(dst, PEER, 0x88b5, b"f" * 50))
        return len(su.rcq.poll_all())

    t.eq([delivered(d) for d in (MAC, BCAST, other, mc)], [1, 1, 0, 0],
         "own MAC and broadcast delivered; another unicast and an unlisted multicast not")

    def lists(typ, entries):
        return set_vport(v, 1 << 2, lambda c: (put(c, P["VCX_NIC_VPORT_CTX_ALLOWED_LIST_TYPE"],
                                                   typ),
                                               put(c, P["VCX_NIC_VPORT_CTX_ALLOWED_LIST_SIZE"],
                                                   len(entries))), entries)
    check(lists(0, [other]), OK, 0, "MODIFY_NIC_VPORT_CONTEXT unicast list")
    check(lists(1, [mc]), OK, 0, "MODIFY_NIC_VPORT_CONTEXT multicast list")
    t.eq([delivered(d) for d in (other, mc, mc2)], [1, 1, 0],
         "listed unicast and multicast delivered, other multicast not")
    check(lists(1, [other]), BAD_PARAM, synd("MODIFY_NIC_VPORT_CONTEXT", 0x23),
          "a unicast address in the multicast list: BAD_PARAM")
    check(lists(3, []), BAD_PARAM, synd("MODIFY_NIC_VPORT_CONTEXT", 0x20),
          "allowed_list_type 3: BAD_PARAM")
    # the VLAN list (vlan_layout: VID in the low 12 bits of an 8-byte entry) is recorded
    # and reported; it filters nothing
    vids = [77, 4095]
    c = bytearray(0x100 + 8 * len(vids))
    put(c, P["VCX_NIC_VPORT_CTX_ALLOWED_LIST_TYPE"], 2)
    put(c, P["VCX_NIC_VPORT_CTX_ALLOWED_LIST_SIZE"], len(vids))
    for i, vid in enumerate(vids):
        c[0x100 + 8 * i:0x108 + 8 * i] = struct.pack(">II", 0xfff00000 | vid, 0)
    check(v.cmd("MODIFY_NIC_VPORT_CONTEXT", in_len=0x200 + 8 * len(vids),
                fields=[(P["VCX_MODIFY_NIC_VPORT_CTX_IN_FIELD_SELECT"], 1 << 2)],
                payload={0x100: bytes(c)}), OK, 0, "MODIFY_NIC_VPORT_CONTEXT VLAN list 77, 4095")
    r = v.cmd("QUERY_NIC_VPORT_CONTEXT", out_len=0x110 + 64,
              fields=[(P["VCX_QUERY_NIC_VPORT_CTX_IN_ALLOWED_LIST_TYPE"], 2)])
    t.eq((get(r.out, P["VCX_NIC_VPORT_CTX_ALLOWED_LIST_SIZE"], 0x10),
          [struct.unpack_from(">I", r.out, 0x110 + 8 * i)[0] for i in range(2)]),
         (2, vids), "QUERY_NIC_VPORT_CONTEXT reports the VLAN list (VIDs only)")
    rx_frame(v, su, eth(MAC, PEER, 0x8100, struct.pack(">HH", 5, 0x88b5) + b"v" * 50))
    t.eq(len(su.rcq.poll_all()), 1, "a frame tagged with VID 5, not in the list: delivered")
    check(lists(2, [other] * 65), BAD_PARAM, synd("MODIFY_NIC_VPORT_CONTEXT", 0x21),
          "65 VLAN entries: BAD_PARAM")
    check(lists(0, [other] * 65), BAD_PARAM, synd("MODIFY_NIC_VPORT_CONTEXT", 0x21),
          "65 unicast entries: BAD_PARAM")
    r = v.cmd("QUERY_NIC_VPORT_CONTEXT", out_len=0x110 + 64,
              fields=[(P["VCX_QUERY_NIC_VPORT_CTX_IN_ALLOWED_LIST_TYPE"], 1)])
    t.eq((get(r.out, P["VCX_NIC_VPORT_CTX_ALLOWED_LIST_SIZE"], 0x10), bytes(r.out[0x112:0x118])),
         (1, mc), "QUERY_NIC_VPORT_CONTEXT reports the multicast list")
    check(set_vport(v, 1 << 4, lambda c: put(c, P["VCX_NIC_VPORT_CTX_PROMISC_MC"], 1)), OK, 0,
          "promisc_mc")
    t.eq([delivered(d) for d in (mc2, bytes.fromhex("02aabbccdd00"))], [1, 0],
         "promisc_mc: every multicast, not other unicast")
    check(set_vport(v, 1 << 4, lambda c: put(c, P["VCX_NIC_VPORT_CTX_PROMISC_ALL"], 1)), OK, 0,
          "promisc_all")
    t.eq(delivered(bytes.fromhex("02aabbccdd00")), 1, "promisc_all: everything")
    r = v.cmd("QUERY_NIC_VPORT_CONTEXT", out_len=0x110)
    t.eq((get(r.out, P["VCX_NIC_VPORT_CTX_PROMISC_ALL"], 0x10),
          get(r.out, P["VCX_NIC_VPORT_CTX_PROMISC_MC"], 0x10)), (1, 0),
         "QUERY_NIC_VPORT_CONTEXT: promisc_all 1, promisc_mc 0")
    check(set_vport(v, 1 << 4, lambda c: None), OK, 0, "promiscuous modes off")
    t.eq(delivered(bytes.fromhex("02aabbccdd00")), 0, "filter back")


def case_roce_and_mtu(v):
    su = Setup(v)
    rq = v.rq(su.pd, su.rcq)
    tir = v.tir(su.td, rqn=rq.rqn)
    v.catch_all(tir)
    for _ in range(8):
        rq.post([(su.rx_buf(v), 9600, su.key)])
    gid_ip = bytes([10, 0, 0, 1])           # GID0 of the Verbs device: ::ffff:10.0.0.1
    before = int(v.d.state()["roce_rx_drop"])
    rx_frame(v, su, eth(MAC, PEER, 0x800, ipv4(IP_B, gid_ip, 17, udp(IP_B, gid_ip, 5000, 4791,
                                                                       bytes(40)))))
    t.eq(su.rcq.poll(), None, "RoCEv2 to the port's GID: not given to the NIC RQs")
    t.eq(int(v.d.state()["roce_rx_drop"]), before + 1, "RoCEv2 counted (roce_rx_drop)")
    gid6 = bytes.fromhex("fd770000000000000000000000000005")
    v.ok(v.set_gid(1, gid6), "SET_ROCE_ADDRESS of an IPv6 GID")
    rx_frame(v, su, eth(MAC, PEER, 0x86dd, ipv6(IP6_B, gid6, 17, udp(IP6_B, gid6, 5000, 4791,
                                                                       bytes(40)))))
    t.eq((su.rcq.poll(), int(v.d.state()["roce_rx_drop"])), (None, before + 2),
         "RoCEv2 over IPv6 to the port's GID: counted and dropped")
    other = bytes([10, 0, 0, 9])
    rx_frame(v, su, eth(MAC, PEER, 0x800, ipv4(IP_B, other, 17, udp(IP_B, other, 5000, 4791,
                                                                      bytes(40)))))
    t.ok(su.rcq.poll() is not None, "UDP 4791 to another address: an ordinary frame")
    c0 = v.vport_counters()["received_errors"][0]
    rx_frame(v, su, eth(MAC, PEER, 0x88b5, bytes(9216 + 18 - 14 + 1)))
    t.eq(su.rcq.poll(), None, "frame longer than the vport MTU + 18: dropped")
    t.eq(v.vport_counters()["received_errors"][0], c0 + 1, "and counted in received_errors")
    rx_frame(v, su, eth(MAC, PEER, 0x88b5, bytes(9216 + 18 - 14)))
    e = poll(v, su.rcq)
    t.ok(e is not None and cqe(e)["byte_cnt"] == 9234, "a 9234-byte frame (vport MTU 9216 "
         "+ 18) is received")


def case_link(v):
    su = Setup(v)
    v.sock.drain()
    f = eth(PEER, MAC, 0x88b5, b"l" * 60)
    v.events()
    v.qt.qom_set("/machine/peripheral/vcx0", "link", False)
    t.eq([(typ, e[0x03], e[0x28] >> 4) for typ, e in v.events()], [(0x09, 0x01, 1)],
         "link property off: one port change EQE (down, port 1)")
    c0 = v.vport_counters()["transmit_errors"][0]
    send(v, su, f)
    t.eq(v.sock.recv(0.3), None, "link down: nothing sent")
    t.eq(v.vport_counters()["transmit_errors"][0], c0 + 1, "link down: transmit_errors + 1")
    e = poll(v, su.scq)
    t.ok(e is not None and cqe(e)["opcode"] == 0, "link down: the WQE still completes")
    rq = v.rq(su.pd, su.rcq)
    v.catch_all(v.tir(su.td, rqn=rq.rqn))
    rq.post([(su.rx_buf(v), 4096, su.key)])
    v.wire_in(eth(MAC, PEER, 0x88b5, b"r" * 60))
    t.eq(su.rcq.poll(), None, "link down: nothing received")
    v.qt.qom_set("/machine/peripheral/vcx0", "link", True)
    t.eq([(typ, e[0x03]) for typ, e in v.events()], [(0x09, 0x04)],
         "link property on: port change EQE (active)")
    v.wire_in(eth(MAC, PEER, 0x88b5, b"r" * 60))
    t.ok(poll(v, su.rcq) is not None, "link up: received again")
    v.qt.qmp("set_link", name="n0", up=False)
    ev = v.events()
    t.eq([(typ, e[0x03]) for typ, e in ev], [(0x09, 0x01)],
         "set_link n0 off: port change EQE, sub_type down")
    t.eq(v.d.state()["link"], "down", "state: link down")
    send(v, su, f)
    t.eq(v.sock.recv(0.3), None, "backend link down: nothing sent")
    v.qt.qmp("set_link", name="n0", up=True)
    t.eq([(typ, e[0x03]) for typ, e in v.events()], [(0x09, 0x04)],
         "set_link n0 on: port change EQE, sub_type active")
    send(v, su, f)
    t.eq(v.sock.recv(), f, "link up again: frames leave")
    v.qt.qmp("set_link", name="vcx0", up=False)
    t.eq([(typ, e[0x03]) for typ, e in v.events()], [(0x09, 0x01)],
         "set_link on the device's own id: port change EQE, down")
    send(v, su, f)
    t.eq(v.sock.recv(0.3), None, "NIC link down: nothing sent")
    v.qt.qmp("set_link", name="vcx0", up=True)
    t.eq([(typ, e[0x03]) for typ, e in v.events()], [(0x09, 0x04)],
         "set_link vcx0 on: port change EQE, active")
    r = v.d.exec(P["VCX_CMD_OP_QUERY_VPORT_STATE"])
    t.eq(r.f(P["VCX_QUERY_VPORT_STATE_OUT_STATE"]), 1, "QUERY_VPORT_STATE: up")


def case_teardown(v):
    su = Setup(v)
    rq = v.rq(su.pd, su.rcq)
    tir = v.tir(su.td, rqn=rq.rqn)
    v.catch_all(tir)
    st = v.d.state()
    t.ok(all(int(st[k]) > 0 for k in ("tds", "tises", "sqs", "rqs", "tirs", "fts", "fgs",
                                     "ftes")), "state counts the NIC objects")
    r = v.d.exec(P["VCX_CMD_OP_TEARDOWN_HCA"])
    t.eq(r.status, BAD_RES_STATE, "graceful TEARDOWN_HCA with NIC objects: BAD_RES_STATE")
    # frames queued while the force close happens are dropped with the objects
    for _ in range(20):
        v.sock.send(eth(MAC, PEER, 0x88b5, bytes(100)))
    r = v.d.exec(P["VCX_CMD_OP_TEARDOWN_HCA"],
                 fields=[(P["VCX_TEARDOWN_HCA_IN_PROFILE"], 1)])
    t.eq(r.status, 0, "force close TEARDOWN_HCA")
    time.sleep(0.1)
    st = v.d.state()
    t.eq(tuple(st[k] for k in ("tds", "tises", "tirs", "rqts", "sqs", "rqs", "fts", "fgs",
                               "ftes", "qcounters")), ("0",) * 10,
         "force close: no NIC object left")
    t.ok(v.qt.alive(), "QEMU alive")


def case_no_netdev(tap_unused=None):
    v = Nic(netdev=False)
    try:
        su = Setup(v)
        rq = v.rq(su.pd, su.rcq)
        tir = v.tir(su.td, rqn=rq.rqn)
        v.catch_all(tir, flow_tag=9)
        rq.post([(su.rx_buf(v), 4096, su.key)])
        rq.post([(su.rx_buf(v), 4096, su.key)])
        send(v, su, eth(PEER, MAC, 0x88b5, b"o" * 60))
        e = poll(v, su.scq)
        t.ok(e is not None and cqe(e)["opcode"] == 0, "no netdev: a frame to the wire "
             "completes (and goes nowhere)")
        t.eq(su.rcq.poll(), None, "... and is not received locally")
        f = eth(MAC, MAC, 0x88b5, b"o" * 60)
        send(v, su, f)
        e = poll(v, su.rcq)
        t.ok(e is not None and cqe(e)["flow_tag"] == 9, "no netdev: loopback to the own MAC")
        v.qt.qmp("system_reset")
        time.sleep(0.1)
        st = v.d.state()
        t.eq((st["sqs"], st["rqs"], st["tirs"]), ("0", "0", "0"), "system reset drops them")
    finally:
        v.close()


def case_fuzz(v):
    """Bounded random run (fixed seed): random NIC command bodies naming live objects,
    random send WQEs, random frames from the wire; QEMU stays alive and consistent."""
    import random
    rng = random.Random(int(os.environ.get("VCX_FUZZ_SEED", "20261201")))
    su = Setup(v)
    rq = v.rq(su.pd, su.rcq)
    for _ in range(8):
        rq.post([(su.rx_buf(v), 2048, su.key)])
    rqt = v.rqt([rq.rqn])
    tir = v.tir(su.td, rqt=rqt, hash_fn=2, fields=0xf)
    v.catch_all(tir)
    live = [su.td, su.tis, su.sq.sqn, rq.rqn, rqt, tir, 1, 2, 3, 0x1001, 0x1002]
    nic_only = load_header_defines(["prm-nic.h"])
    ops = sorted(k[len("VCX_CMD_OP_"):] for k in nic_only if k.startswith("VCX_CMD_OP_"))
    ops += ["ALLOC_Q_COUNTER", "DEALLOC_Q_COUNTER", "QUERY_Q_COUNTER", "QUERY_VPORT_COUNTER",
            "QUERY_NIC_VPORT_CONTEXT", "MODIFY_NIC_VPORT_CONTEXT"]
    sent = 0
    iters = int(os.environ.get("VCX_FUZZ_ITERS", "1500"))
    for it in range(iters):
        r = rng.random()
        if r < 0.45:
            op = rng.choice(ops)
            n = rng.choice([0x10, 0x20, 0x40, 0xc0, 0x110, 0x120, 0x340, 0x400,
                            rng.randrange(8, 0x800)])
            body = bytearray(rng.randbytes(n))
            body[2:4] = b"\0\0"
            for off in (0x08, 0x14, 0x28, 0xa4, 0xc4):
                if off + 4 <= n and rng.random() < 0.5:
                    struct.pack_into(">I", body, off, rng.choice(live))
            v.d.exec(NOP_[op], op_mod=rng.choice([0, 0, 1, rng.getrandbits(16)]),
                     in_len=n, out_len=rng.choice([0x10, 0x100, 0x340, 0x1010]),
                     payload={0x8: bytes(body[8:])})
        elif r < 0.6:
            # a well-formed send with random flags, headers and length
            et = rng.choice([0x0800, 0x86dd, 0x88b5])
            body = rng.randbytes(rng.randrange(0, 3000))
            if et == 0x0800:
                body = ipv4(IP_A, IP_B, rng.choice([6, 17, 1]), body)
            elif et == 0x86dd:
                body = ipv6(IP6_A, IP6_B, rng.choice([6, 17, 58]), body)
            f = eth(rng.choice([PEER, MAC, BCAST]), MAC, et, body)
            if v.sq_state(su.sq.sqn) != 1:
                v.modify_sq(su.sq.sqn, v.sq_state(su.sq.sqn), 0)
                v.modify_sq(su.sq.sqn, 0, 1)
                su.sq.pi = 0
            send(v, su, f, cs=rng.choice([0, 0x40, 0x80, 0xc0]),
                 inline=rng.choice([14, min(len(f), 18 + rng.randrange(0, 60))]))
            sent += 1
        elif r < 0.75:
            wqe = bytearray(rng.randbytes(rng.choice([16, 64, 128, 256, 1024])))
            struct.pack_into(">I", wqe, 4, su.sq.sqn << 8 | rng.randrange(0, 64))
            if rng.random() < 0.5:
                wqe[3] = rng.choice([0x0a, 0x00])
            if rng.random() < 0.5:
                struct.pack_into(">IIQ", wqe, 32 % len(wqe) if len(wqe) > 32 else 0,
                                 rng.randrange(0, 20000), su.key, su.buf)
            su.sq.post(wqe)
            if rng.random() < 0.1:
                st = v.sq_state(su.sq.sqn)
                v.modify_sq(su.sq.sqn, st, 0)
                v.modify_sq(su.sq.sqn, 0, 1)
                su.sq.pi = 0
        else:
            kind = rng.random()
            if kind < 0.3:
                f = rng.randbytes(rng.randrange(0, 10000))
            else:
                et = rng.choice([0x0800, 0x86dd, 0x8100, 0x0806, rng.getrandbits(16)])
                f = rng.choice([MAC, BCAST, PEER]) + PEER + struct.pack(">H", et)
                f += bytes([rng.choice([0x45, 0x46, 0x4f, 0x60, rng.getrandbits(8)])])
                f += rng.randbytes(rng.randrange(0, 1600))
            v.sock.send(f)
            if rng.random() < 0.3:
                rq.post([(su.rx_buf(v), rng.choice([64, 2048, 9000]), su.key)])
        if it % 100 == 99:
            v.settle()
            t.ok(v.qt.alive(), "fuzz: QEMU alive after %d iterations" % (it + 1))
    v.settle()
    st = v.d.state()
    t.ok(int(st["nic_tx"]) > sent // 2 and int(st["nic_rx"]) > 0,
         "fuzz: the state property answers; frames went out (%s of %d well-formed sends) "
         "and came in (%s)" % (st["nic_tx"], sent, st["nic_rx"]))
    r = v.d.exec(P["VCX_CMD_OP_TEARDOWN_HCA"], fields=[(P["VCX_TEARDOWN_HCA_IN_PROFILE"], 1)])
    t.eq(r.status, 0, "fuzz: force close TEARDOWN_HCA")
    st = v.d.state()
    t.eq(tuple(st[k] for k in ("tds", "tises", "tirs", "rqts", "sqs", "rqs", "fts", "fgs",
                               "ftes", "qcounters")), ("0",) * 10,
         "fuzz: nothing left after force close")


def main():
    cases = [("capabilities", case_caps), ("TD and TIS", case_td_tis),
             ("SQ commands", case_sq_cmds), ("RQ commands", case_rq_cmds),
             ("RQT and TIR commands", case_rqt_tir_cmds), ("flow tables", case_ft_cmds)]
    v = Nic()
    try:
        for name, fn in cases:
            run_isolated(t, name, lambda fn=fn: fn(v))
        t.ok(v.qt.alive(), "QEMU alive after the command cases")
    finally:
        v.close()
    run_nic_cases(t, [("send frames", case_tx_frames), ("send errors", case_tx_errors),
                       ("LSO", case_tx_lso), ("LSO errors", case_tx_lso_errors),
                       ("steering", case_rx_steering), ("no receive WQE", case_rx_no_wqe),
                       ("RSS", case_rss), ("loopback", case_loopback),
                       ("vport filter", case_vport_filter), ("RoCE and MTU", case_roce_and_mtu),
                       ("link", case_link), ("teardown", case_teardown),
                       ("fuzz", case_fuzz)])
    run_isolated(t, "no netdev", case_no_netdev)
    t.done()


if __name__ == "__main__":
    main()
