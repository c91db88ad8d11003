#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""XRC over loopback. Commands: ALLOC/DEALLOC_XRCD, CREATE/DESTROY/QUERY/ARM_XRC_SRQ and
the ISSI 0 CREATE_SRQ with an xrcd and a CQ, with good and bad inputs (missing objects,
objects in use, unsupported fields, sizes beyond the caps, another family's numbers), and
XRC initiator / target QPs. Data path: SEND and SEND_IMM into an XRC SRQ (payload bytes,
the CQE on the SRQ's CQ with the target QPN and the SRQ number), RDMA WRITE, READ and
atomics checked against the XRC SRQ's PD (not the target QP's), a send naming an SRQ of
another domain (Invalid Request NAK 0x12, both QPs in ERR, nothing written or consumed,
events 0x10 and 0x13), RNR on an empty XRC SRQ, a WQE without its XRC segment, the limit
event after ARM_XRC_SRQ, and an XRC SRQ or target QP destroyed while traffic is queued
or moving; force-close teardown drops every XRC object."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, H, get, put, run_isolated  # noqa: E402
from vcx_verbs import (Verbs, Srq, P, OP, dseg, inline, raddr, atomic,  # noqa: E402
                       cqe_fields, cqe_tuple as f, xrc, alloc_xrcd, create_xrc_srq, xrc_ini,
                       xrc_tgt)

t = Tap()
NOP, SEND, SEND_IMM, WRITE, WRITE_IMM, READ, CS, FA = (0x00, 0x0a, 0x0b, 0x08, 0x09, 0x10,
                                                       0x11, 0x12)
REQ, RESP_WR_IMM, RESP_SEND, RESP_SEND_IMM, REQ_ERR, RESP_ERR = 0, 1, 2, 3, 0xd, 0xe
LOCAL_QP_OP, FLUSH, REM_INV_REQ, REM_ACCESS, RETRY_EXC = 0x02, 0x05, 0x12, 0x13, 0x15
BAD_PARAM, BAD_RES_STATE = 0x03, 0x09
ACK_T = 4096 << 14              # local ACK timeout of connect() (ack_timeout 14), ns
ERR, RTS = 6, 3
MiB = 1 << 20


def synd(op, n):
    return OP[op] << 16 | n


# CREATE_SRQ / CREATE_XRC_SRQ checks (hw-model/vcx-srq.c and vcx-xrc.c)
S_STRIDE, S_UNSUP, S_PD, S_DBR, S_LWM, S_XRCD, S_CQN = 3, 4, 5, 7, 13, 17, 18
X_NONE, X_IN_USE = 2, 3             # ALLOC/DEALLOC_XRCD
XS_NONE, XS_IN_USE = 5, 6           # DESTROY/QUERY/ARM_XRC_SRQ
Q_RQ_TYPE, Q_XRCD, Q_CQN = 0x40, 0x41, 0x42     # CREATE_QP of st XRC


def check(r, status, syndrome, what):
    got = (getattr(r, "status", 0), getattr(r, "syndrome", 0) if getattr(r, "status", 0)
           else 0)
    t.eq(got, (status, syndrome), what)


def ok(r, what):
    assert r.status == 0, "%s: status 0x%x syndrome 0x%x" % (what, r.status, r.syndrome)
    return r


def ev(v):
    return [(ty, e[0x34], struct.unpack_from(">I", e, 0x38)[0] & 0xffffff)
            for ty, e in v.events()]


def dealloc_xrcd(v, x):
    return v.cmd("DEALLOC_XRCD", fields=[(P["VCX_DEALLOC_XRCD_IN_XRCD"], x)])


def xrc_srq_cmd(v, op, srqn, lwm=None, op_mod=0, out_len=16):
    fl = [(P["VCX_XRC_SRQ_IN_SRQN"], srqn)]
    if lwm is not None:
        fl.append((P["VCX_ARM_XRC_SRQ_IN_LWM"], lwm))
    return v.cmd(op, fields=fl, op_mod=op_mod, out_len=out_len)


def query_xrc_srq(v, srqn):
    return xrc_srq_cmd(v, "QUERY_XRC_SRQ", srqn, out_len=0x118)


def xpair(v, pd_i, cq_i, pd_t, xrcd, **kw):
    """An XRC initiator and a target of xrcd, connected, both in RTS."""
    ini = xrc_ini(v, pd_i, cq_i)
    tgt = xrc_tgt(v, pd_t, xrcd)
    v.connect(ini, tgt.qpn, **kw)
    v.connect(tgt, ini.qpn, **kw)
    return ini, tgt


def wqe_cnt(v, srq):
    return get(query_xrc_srq(v, srq.srqn).out, P["VCX_XRC_SRQC_WQE_CNT"], 0x10)


class World:
    """Two PDs (the XRC SRQ's, pd_s, and the target QP's, pd_t), the initiator's PD, a
    buffer with a key in each, two domains, the initiator's CQ and the SRQs' CQ."""

    def __init__(self, v):
        self.pd_i, self.pd_s, self.pd_t = v.alloc_pd(), v.alloc_pd(), v.alloc_pd()
        self.buf = v.alloc(0x40000)
        self.key_i = v.create_mkey(self.pd_i, self.buf, 0x10000, key=0x11)
        self.key_s = v.create_mkey(self.pd_s, self.buf + 0x10000, 0x10000, key=0x22)
        self.key_t = v.create_mkey(self.pd_t, self.buf + 0x20000, 0x10000, key=0x33)
        self.x1, self.x2 = alloc_xrcd(v), alloc_xrcd(v)
        self.cq_i, self.cq_s = v.create_cq(), v.create_cq()
        self.src = self.buf                 # initiator memory (key_i)
        self.s_mem = self.buf + 0x10000     # memory of the SRQ's PD (key_s)
        self.t_mem = self.buf + 0x20000     # memory of the target QP's PD (key_t)

    def srq(self, v, xrcd=None, **kw):
        s = create_xrc_srq(v, self.pd_s, self.x1 if xrcd is None else xrcd, self.cq_s.cqn,
                           **kw)
        assert isinstance(s, Srq), "CREATE_XRC_SRQ: 0x%x 0x%x" % (s.status, s.syndrome)
        return s

    def pair(self, v, xrcd=None, **kw):
        return xpair(v, self.pd_i, self.cq_i, self.pd_t, self.x1 if xrcd is None else xrcd,
                     **kw)


# ---------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------

def cmds_xrcd(v):
    before = int(v.d.state()["xrcds"])
    a, b = alloc_xrcd(v), alloc_xrcd(v)
    t.eq(b, a + 1, "ALLOC_XRCD hands out consecutive numbers")
    t.ok(a >= 1, "XRCD numbers start at 1")
    t.eq(int(v.d.state()["xrcds"]), before + 2, "state: xrcds counts the domains")
    check(v.cmd("ALLOC_XRCD", op_mod=1), BAD_PARAM, synd("ALLOC_XRCD", 0xff09),
          "ALLOC_XRCD op_mod 1: BAD_PARAM")
    check(dealloc_xrcd(v, 0xfff0), BAD_RES_STATE, synd("DEALLOC_XRCD", X_NONE),
          "DEALLOC_XRCD of a domain never allocated: BAD_RES_STATE")
    check(dealloc_xrcd(v, a), 0, 0, "DEALLOC_XRCD: OK")
    check(dealloc_xrcd(v, a), BAD_RES_STATE, synd("DEALLOC_XRCD", X_NONE),
          "DEALLOC_XRCD twice: BAD_RES_STATE")
    c = alloc_xrcd(v)
    t.ok(c != a, "a freed XRCD number is not handed out again at once (round robin)")
    check(dealloc_xrcd(v, b), 0, 0, "DEALLOC_XRCD b")
    check(dealloc_xrcd(v, c), 0, 0, "DEALLOC_XRCD c")
    t.eq(int(v.d.state()["xrcds"]), before, "state: xrcds back to its count")


def cmds_xrc_srq(v):
    w = World(v)
    r = create_xrc_srq(v, w.pd_s, w.x1, w.cq_s.cqn, log_size=4, stride=128, lwm=5,
                       user_index=0x123456,
                       raw=lambda c, p: put(c, P["VCX_XRC_SRQC_DBR_ADDR"],
                                            get(c, P["VCX_XRC_SRQC_DBR_ADDR"]) | 3))
    t.ok(isinstance(r, Srq), "CREATE_XRC_SRQ: OK (reserved dbr bits 1:0 set are ignored)")
    srq = r
    q = query_xrc_srq(v, srq.srqn)
    c = q.out[0x10:0x50]
    t.eq((q.status, get(c, P["VCX_XRC_SRQC_STATE"]), get(c, P["VCX_XRC_SRQC_LOG_SIZE"]),
          get(c, P["VCX_XRC_SRQC_LOG_RQ_STRIDE"]), get(c, P["VCX_XRC_SRQC_XRCD"]),
          get(c, P["VCX_XRC_SRQC_CQN"]), get(c, P["VCX_XRC_SRQC_PD"]),
          get(c, P["VCX_XRC_SRQC_LWM"]), get(c, P["VCX_XRC_SRQC_WQE_CNT"]),
          get(c, P["VCX_XRC_SRQC_USER_INDEX"]), get(c, P["VCX_XRC_SRQC_DBR_ADDR"]),
          struct.unpack_from(">Q", q.out, 0x110)[0]),
         (0, 0, 4, 3, w.x1, w.cq_s.cqn, w.pd_s, 5, 0, 0x123456, srq.dbr, srq.base),
         "QUERY_XRC_SRQ: state good, sizes, xrcd, cqn, pd, lwm, wqe_cnt 0, user_index, "
         "dbr_addr (reserved bits clear), first PAS entry")
    srq.post([(w.s_mem, 16, w.key_s)])
    srq.post([(w.s_mem, 16, w.key_s)])
    t.eq(wqe_cnt(v, srq), 2, "QUERY_XRC_SRQ wqe_cnt: 2 posted, none consumed")
    # objects it holds
    check(dealloc_xrcd(v, w.x1), BAD_RES_STATE, synd("DEALLOC_XRCD", X_IN_USE),
          "DEALLOC_XRCD while an XRC SRQ names it: BAD_RES_STATE")
    check(v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], w.cq_s.cqn)]), BAD_RES_STATE,
          synd("DESTROY_CQ", 13), "DESTROY_CQ of an XRC SRQ's CQ: BAD_RES_STATE")
    check(v.cmd("DEALLOC_PD", fields=[(P["VCX_DEALLOC_PD_IN_PD"], w.pd_s)]), BAD_RES_STATE,
          synd("DEALLOC_PD", 3), "DEALLOC_PD of an XRC SRQ's PD: BAD_RES_STATE")
    # ARM_XRC_SRQ
    check(xrc_srq_cmd(v, "ARM_XRC_SRQ", srq.srqn, lwm=3, op_mod=1), 0, 0,
          "ARM_XRC_SRQ op_mod 1 lwm 3: OK")
    t.eq(get(query_xrc_srq(v, srq.srqn).out, P["VCX_XRC_SRQC_LWM"], 0x10), 3,
         "QUERY_XRC_SRQ shows lwm 3")
    check(xrc_srq_cmd(v, "ARM_XRC_SRQ", srq.srqn, lwm=3, op_mod=0), BAD_PARAM,
          synd("ARM_XRC_SRQ", 0xff09), "ARM_XRC_SRQ op_mod 0: BAD_PARAM")
    check(xrc_srq_cmd(v, "ARM_XRC_SRQ", srq.srqn, lwm=17, op_mod=1), BAD_PARAM,
          synd("ARM_XRC_SRQ", S_LWM), "ARM_XRC_SRQ lwm 17 > 16 WQEs: BAD_PARAM")
    check(xrc_srq_cmd(v, "ARM_XRC_SRQ", 0xabc, lwm=1, op_mod=1), BAD_RES_STATE,
          synd("ARM_XRC_SRQ", XS_NONE), "ARM_XRC_SRQ of a missing SRQ: BAD_RES_STATE")
    # bad creates
    x9 = 0xfff0
    bad = [
        (dict(xrcd=x9), BAD_PARAM, S_XRCD, "xrcd not allocated"),
        (dict(xrcd=0), BAD_PARAM, S_XRCD, "xrcd 0"),
        (dict(cqn=0xfff), BAD_PARAM, S_CQN, "cqn that does not exist"),
        (dict(cqn=0), BAD_PARAM, S_CQN, "cqn 0"),
        (dict(pd=0xfff0), BAD_PARAM, S_PD, "pd not allocated"),
        (dict(stride=1024), BAD_PARAM, S_STRIDE, "WQE stride 1024 > max_wqe_sz_rq 512"),
        (dict(stride=16), BAD_PARAM, S_STRIDE, "WQE stride 16: no room for a data segment"),
        (dict(lwm=9), BAD_PARAM, S_LWM, "lwm 9 > 8 WQEs"),
    ]
    for kw, st, n, what in bad:
        args = dict(pd=w.pd_s, xrcd=w.x1, cqn=w.cq_s.cqn)
        args.update(kw)
        pd, xrcd, cqn = args.pop("pd"), args.pop("xrcd"), args.pop("cqn")
        check(create_xrc_srq(v, pd, xrcd, cqn, **args), st,
              synd("CREATE_XRC_SRQ", n), "CREATE_XRC_SRQ %s: status 0x%x" % (what, st))
    for fld in ("WQ_SIGNATURE", "CONT_SRQ", "RLKY", "BASIC_CYCLIC", "DBR_UMEM_VALID",
                "UIDX_EQ_SRQN"):
        check(create_xrc_srq(v, w.pd_s, w.x1, w.cq_s.cqn,
                             raw=lambda c, p, fld=fld: put(c, P["VCX_XRC_SRQC_" + fld], 1)),
              BAD_PARAM, synd("CREATE_XRC_SRQ", S_UNSUP),
              "CREATE_XRC_SRQ with %s: BAD_PARAM" % fld.lower())

    def umem(c, p):
        b = bytearray(0x110)        # the input up to the PAS, with xrc_srq_umem_valid set
        put(b, P["VCX_CREATE_XRC_SRQ_IN_UMEM_VALID"], 1)
        p[0x50] = bytes(b[0x50:0x110])
    check(create_xrc_srq(v, w.pd_s, w.x1, w.cq_s.cqn, raw=umem), BAD_PARAM,
          synd("CREATE_XRC_SRQ", S_UNSUP), "CREATE_XRC_SRQ with xrc_srq_umem_valid: BAD_PARAM")
    check(create_xrc_srq(v, w.pd_s, w.x1, w.cq_s.cqn,
                         raw=lambda c, p: put(c, P["VCX_XRC_SRQC_DBR_ADDR"],
                                              get(c, P["VCX_XRC_SRQC_DBR_ADDR"]) | 4)),
          BAD_PARAM, synd("CREATE_XRC_SRQ", S_DBR), "CREATE_XRC_SRQ dbr_addr not 8-byte "
          "aligned: BAD_PARAM")
    check(create_xrc_srq(v, w.pd_s, w.x1, w.cq_s.cqn, log_size=8, stride=512, npas=1),
          0x50, synd("CREATE_XRC_SRQ", 8), "CREATE_XRC_SRQ with too few PAS entries: "
          "BAD_INPUT_LEN")
    # log_xrc_srq_size is 4 bits wide: its largest value is log_max_srq_sz (15) itself
    big = create_xrc_srq(v, w.pd_s, w.x1, w.cq_s.cqn, log_size=15, stride=32)
    t.ok(isinstance(big, Srq), "CREATE_XRC_SRQ at the limits (2^15 WQEs of 32 bytes): OK")
    check(xrc_srq_cmd(v, "DESTROY_XRC_SRQ", big.srqn), 0, 0, "DESTROY_XRC_SRQ of it")
    # families keep their numbers apart
    basic = v.create_srq(w.pd_s)
    for op, n, num, what in (("DESTROY_XRC_SRQ", XS_NONE, basic.srqn, "a basic SRQ"),
                             ("QUERY_XRC_SRQ", XS_NONE, basic.srqn, "a basic SRQ"),
                             ("ARM_XRC_SRQ", XS_NONE, basic.srqn, "a basic SRQ"),
                             ("DESTROY_XRC_SRQ", XS_NONE, 0xabc, "a missing SRQ"),
                             ("QUERY_XRC_SRQ", XS_NONE, 0xabc, "a missing SRQ")):
        r = xrc_srq_cmd(v, op, num, lwm=0 if op == "ARM_XRC_SRQ" else None,
                        op_mod=1 if op == "ARM_XRC_SRQ" else 0,
                        out_len=0x110 if op == "QUERY_XRC_SRQ" else 16)
        check(r, BAD_RES_STATE, synd(op, n), "%s of %s: BAD_RES_STATE" % (op, what))
    for op, n in (("DESTROY_SRQ", 11), ("QUERY_SRQ", 11), ("DESTROY_RMP", 11),
                  ("QUERY_RMP", 11)):
        r = v.cmd(op, fields=[(P["VCX_OBJ_NUMBER"], srq.srqn)],
                  out_len=0x110 if op.startswith("QUERY") else 16)
        check(r, BAD_RES_STATE, synd(op, n), "%s of an XRC SRQ: BAD_RES_STATE" % op)
    check(v.cmd("ARM_RQ", op_mod=1, fields=[(P["VCX_ARM_RQ_IN_SRQ_NUMBER"], srq.srqn),
                                            (P["VCX_ARM_RQ_IN_LWM"], 1)]),
          BAD_RES_STATE, synd("ARM_RQ", 11), "ARM_RQ of an XRC SRQ: BAD_RES_STATE")
    ok(v.cmd("DESTROY_SRQ", fields=[(P["VCX_OBJ_NUMBER"], basic.srqn)]), "DESTROY_SRQ")
    # in use by a QP (a target naming it as its rq_type 1 SRQ, as mlx5_ib names its s0)
    tgt = xrc_tgt(v, w.pd_t, w.x1, srq=srq)
    t.ok(not hasattr(tgt, "status"), "XRC target with rq_type 1 naming an SRQ: created")
    check(xrc_srq_cmd(v, "DESTROY_XRC_SRQ", srq.srqn), BAD_RES_STATE,
          synd("DESTROY_XRC_SRQ", XS_IN_USE), "DESTROY_XRC_SRQ while a QP uses it: "
          "BAD_RES_STATE")
    ok(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], tgt.qpn)]), "DESTROY_QP")
    check(xrc_srq_cmd(v, "DESTROY_XRC_SRQ", srq.srqn), 0, 0, "DESTROY_XRC_SRQ: OK")
    check(xrc_srq_cmd(v, "DESTROY_XRC_SRQ", srq.srqn), BAD_RES_STATE,
          synd("DESTROY_XRC_SRQ", XS_NONE), "DESTROY_XRC_SRQ twice: BAD_RES_STATE")
    check(v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], w.cq_s.cqn)]), 0, 0,
          "DESTROY_CQ once the XRC SRQ is gone: OK")
    check(dealloc_xrcd(v, w.x1), 0, 0, "DEALLOC_XRCD once nothing names it: OK")


def cmds_xrc_qp(v):
    w = World(v)
    r = xrc_ini(v, w.pd_i, w.cq_i, raw=lambda c: put(c, P["VCX_QPC_RQ_TYPE"], 0))
    check(r, BAD_PARAM, synd("CREATE_QP", Q_RQ_TYPE),
          "XRC initiator with a regular RQ: BAD_PARAM")
    srq = w.srq(v)
    r = xrc_ini(v, w.pd_i, w.cq_i, raw=lambda c: (put(c, P["VCX_QPC_RQ_TYPE"], 1),
                                                 put(c, P["VCX_QPC_SRQN_RMPN_XRQN"],
                                                     srq.srqn)))
    check(r, BAD_PARAM, synd("CREATE_QP", Q_RQ_TYPE), "XRC initiator with an SRQ: BAD_PARAM")
    check(xrc_ini(v, w.pd_i, w.cq_i, xrcd=0xfff0), BAD_PARAM, synd("CREATE_QP", Q_XRCD),
          "XRC initiator naming a missing xrcd: BAD_PARAM")
    check(xrc_ini(v, w.pd_i, None), BAD_PARAM, synd("CREATE_QP", 6),
          "XRC initiator without cqn_snd: BAD_PARAM")
    check(xrc_ini(v, w.pd_i, w.cq_i, raw=lambda c: put(c, P["VCX_QPC_CQN_RCV"], 0xfff)),
          BAD_PARAM, synd("CREATE_QP", Q_CQN), "XRC initiator with a missing cqn_rcv: "
          "BAD_PARAM")
    check(xrc_tgt(v, w.pd_t, 0), BAD_PARAM, synd("CREATE_QP", Q_XRCD),
          "XRC target with xrcd 0: BAD_PARAM")
    check(xrc_tgt(v, w.pd_t, 0xfff0), BAD_PARAM, synd("CREATE_QP", Q_XRCD),
          "XRC target with a missing xrcd: BAD_PARAM")
    check(xrc_tgt(v, 0xfff0, w.x1), BAD_PARAM, synd("CREATE_QP", 4),
          "XRC target with a missing pd: BAD_PARAM")
    check(xrc_tgt(v, w.pd_t, w.x1, raw=lambda c: put(c, P["VCX_QPC_CQN_RCV"], 0xfff)),
          BAD_PARAM, synd("CREATE_QP", Q_CQN), "XRC target with a missing cqn_rcv: BAD_PARAM")
    check(xrc_tgt(v, w.pd_t, w.x1, raw=lambda c: put(c, P["VCX_QPC_RQ_TYPE"], 0)),
          BAD_PARAM, synd("CREATE_QP", Q_RQ_TYPE), "XRC target with a regular RQ: BAD_PARAM")
    check(xrc_tgt(v, w.pd_t, w.x1, raw=lambda c: (put(c, P["VCX_QPC_RQ_TYPE"], 1),
                                                 put(c, P["VCX_QPC_SRQN_RMPN_XRQN"],
                                                     0xabc))),
          BAD_PARAM, synd("CREATE_QP", 9), "XRC target naming a missing SRQ: BAD_PARAM")
    cq_r = v.create_cq()
    ini = xrc_ini(v, w.pd_i, w.cq_i, xrcd=w.x2,
                  raw=lambda c: put(c, P["VCX_QPC_CQN_RCV"], cq_r.cqn))
    tgt = xrc_tgt(v, w.pd_t, w.x1, rcq=w.cq_s,
                  raw=lambda c: put(c, P["VCX_QPC_UAR_PAGE"], 0))
    t.ok(not hasattr(ini, "status") and not hasattr(tgt, "status"),
         "XRC initiator (xrcd named) and target (uar_page 0, cqn_rcv set): created")
    q = v.query_qp(tgt)
    t.eq((get(q.out, P["VCX_QPC_ST"], 0x18), get(q.out, P["VCX_QPC_NO_SQ"], 0x18),
          get(q.out, P["VCX_QPC_XRCD"], 0x18)), (3, 1, w.x1),
         "QUERY_QP of the target: st XRC, no_sq, xrcd")
    check(dealloc_xrcd(v, w.x1), BAD_RES_STATE, synd("DEALLOC_XRCD", X_IN_USE),
          "DEALLOC_XRCD while a target QP names it: BAD_RES_STATE")
    check(dealloc_xrcd(v, w.x2), BAD_RES_STATE, synd("DEALLOC_XRCD", X_IN_USE),
          "DEALLOC_XRCD while an initiator names it: BAD_RES_STATE")
    check(v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], w.cq_s.cqn)]), BAD_RES_STATE,
          synd("DESTROY_CQ", 13), "DESTROY_CQ of a CQ a target names: BAD_RES_STATE")
    check(v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], cq_r.cqn)]), BAD_RES_STATE,
          synd("DESTROY_CQ", 13), "DESTROY_CQ of an initiator's cqn_rcv: BAD_RES_STATE")
    v.connect(ini, tgt.qpn)
    v.connect(tgt, ini.qpn)
    t.eq((v.qp_state(ini), v.qp_state(tgt)), (RTS, RTS),
         "RST -> INIT -> RTR -> RTS with RC attributes for both")
    check(v.modify("RTS2RTS_QP", tgt, mask=P["VCX_QP_OPTPAR_RRE"]), 0, 0,
          "RTS2RTS of the target with rre in opt_param_mask (an RC attribute): OK")
    for q in (ini, tgt):
        ok(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], q.qpn)]), "DESTROY_QP")
    check(dealloc_xrcd(v, w.x2), 0, 0, "DEALLOC_XRCD after its initiator is gone: OK")


# ---------------------------------------------------------------------------------------
# Data path
# ---------------------------------------------------------------------------------------

def send(v):
    w = World(v)
    srq = w.srq(v)
    ini, tgt = w.pair(v)
    ini2, tgt2 = w.pair(v)
    msg1, msg2 = bytes(range(1, 41)), b"second initiator, same XRC SRQ"
    v.qt.memwrite(w.src, msg1)
    v.qt.memwrite(w.src + 0x100, msg2)
    srq.post([(w.s_mem + 0x1000, 16, w.key_s), (w.s_mem + 0x2000, 64, w.key_s)])
    srq.post([(w.s_mem + 0x3000, 64, w.key_s)])
    ini.post_send(SEND, xrc(srq.srqn) + dseg(w.src, len(msg1), w.key_i))
    ini2.post_send(SEND_IMM, xrc(srq.srqn) + dseg(w.src + 0x100, len(msg2), w.key_i),
                   imm=0x5eed1234)
    r = w.cq_s.poll_all()
    t.eq([f(e, "opcode", "qpn", "srqn", "byte_cnt", "wqe_counter", "flags_rqpn", "imm",
            "syndrome") for e in r],
         [(RESP_SEND, tgt.qpn, srq.srqn, len(msg1), 0, ini.qpn, 0, 0),
          (RESP_SEND_IMM, tgt2.qpn, srq.srqn, len(msg2), 1, ini2.qpn, 0x5eed1234, 0)],
         "receive CQEs on the XRC SRQ's CQ: opcode, qpn = target QP, srqn = XRC SRQ, "
         "byte_cnt, SRQ WQE index, source QPN, immediate")
    t.eq((v.qt.memread(w.s_mem + 0x1000, 16), v.qt.memread(w.s_mem + 0x2000, 24),
          v.qt.memread(w.s_mem + 0x3000, len(msg2))),
         (msg1[:16], msg1[16:], msg2), "payloads scattered into the XRC SRQ's WQEs")
    s = w.cq_i.poll_all()
    t.eq(sorted(f(e, "opcode", "sop", "qpn", "byte_cnt") for e in s),
         sorted([(REQ, SEND, ini.qpn, len(msg1)), (REQ, SEND_IMM, ini2.qpn, len(msg2))]),
         "requester CQEs on the initiators' CQ")
    t.eq(wqe_cnt(v, srq), 0, "both SRQ WQEs consumed")
    # inline data and a zero-length send
    srq.post([(w.s_mem + 0x4000, 64, w.key_s)])
    srq.post([(w.s_mem + 0x5000, 64, w.key_s)])
    ini.post_send(SEND, xrc(srq.srqn) + inline(b"inline via XRC"))
    ini.post_send(SEND, xrc(srq.srqn))
    t.eq([f(e, "opcode", "qpn", "srqn", "byte_cnt", "wqe_counter") for e in w.cq_s.poll_all()],
         [(RESP_SEND, tgt.qpn, srq.srqn, 14, 2), (RESP_SEND, tgt.qpn, srq.srqn, 0, 3)],
         "inline SEND and zero-length SEND: CQEs with byte_cnt 14 and 0")
    t.eq(v.qt.memread(w.s_mem + 0x4000, 14), b"inline via XRC", "inline payload delivered")
    t.eq(len(w.cq_i.poll_all()), 2, "their requester CQEs")
    # NOP carries no XRC segment
    ini.post_send(NOP)
    t.eq([f(e, "opcode", "sop", "qpn") for e in w.cq_i.poll_all()], [(REQ, NOP, ini.qpn)],
         "NOP without an XRC segment: completes")


def rdma(v):
    w = World(v)
    srq = w.srq(v)
    ini, tgt = w.pair(v)
    v.qt.memwrite(w.src, b"written via XRC!")
    ini.post_send(WRITE, xrc(srq.srqn) + raddr(w.s_mem + 0x100, w.key_s) +
                  dseg(w.src, 16, w.key_i))
    t.eq(v.qt.memread(w.s_mem + 0x100, 16), b"written via XRC!",
         "RDMA WRITE with an rkey of the XRC SRQ's PD: lands")
    v.qt.memwrite(w.s_mem + 0x200, b"read back through XRC")
    ini.post_send(READ, xrc(srq.srqn) + raddr(w.s_mem + 0x200, w.key_s) +
                  dseg(w.src + 0x200, 21, w.key_i))
    t.eq(v.qt.memread(w.src + 0x200, 21), b"read back through XRC",
         "RDMA READ from an rkey of the XRC SRQ's PD")
    v.qt.memwrite(w.s_mem + 0x300, struct.pack("<Q", 1000))
    ini.post_send(FA, xrc(srq.srqn) + raddr(w.s_mem + 0x300, w.key_s) + atomic(24) +
                  dseg(w.src + 0x300, 8, w.key_i))
    ini.post_send(CS, xrc(srq.srqn) + raddr(w.s_mem + 0x300, w.key_s) + atomic(7, 1024) +
                  dseg(w.src + 0x308, 8, w.key_i))
    t.eq(struct.unpack("<QQQ", v.qt.memread(w.src + 0x300, 16) +
                       v.qt.memread(w.s_mem + 0x300, 8)), (1000, 1024, 7),
         "ATOMIC FA (+24, returns 1000) then CS (1024 -> 7, returns 1024) via XRC")
    srq.post([(w.s_mem + 0x1000, 64, w.key_s)])
    ini.post_send(WRITE_IMM, xrc(srq.srqn) + raddr(w.s_mem + 0x400, w.key_s) +
                  inline(b"wimm"), imm=0x0a0b0c0d)
    t.eq([f(e, "opcode", "qpn", "srqn", "imm", "byte_cnt", "wqe_counter")
          for e in w.cq_s.poll_all()],
         [(RESP_WR_IMM, tgt.qpn, srq.srqn, 0x0a0b0c0d, 4, 0)],
         "WRITE_IMM: consumes an XRC SRQ WQE, CQE on the SRQ's CQ with srqn and imm")
    t.eq(v.qt.memread(w.s_mem + 0x400, 4), b"wimm", "WRITE_IMM payload")
    t.eq([f(e, "opcode", "sop") for e in w.cq_i.poll_all()],
         [(REQ, WRITE), (REQ, READ), (REQ, FA), (REQ, CS), (REQ, WRITE_IMM)],
         "requester CQEs in order")
    # the target QP's own PD does not count: keys of pd_t are refused
    v.qt.memwrite(w.t_mem, b"target PD memory")
    cases = [
        (WRITE, raddr(w.t_mem, w.key_t) + dseg(w.src, 16, w.key_i), "WRITE"),
        (READ, raddr(w.t_mem, w.key_t) + dseg(w.src + 0x800, 16, w.key_i), "READ"),
        (FA, raddr(w.t_mem + 0x100, w.key_t) + atomic(1) + dseg(w.src + 0x900, 8, w.key_i),
         "ATOMIC FA"),
    ]
    v.qt.memwrite(w.src + 0x800, bytes(16))
    for op, segs, name in cases:
        ini, tgt = w.pair(v)
        v.events()
        ini.post_send(op, xrc(srq.srqn) + segs)
        t.eq([f(e, "opcode", "syndrome", "sop", "qpn") for e in w.cq_i.poll_all()],
             [(REQ_ERR, REM_ACCESS, op, ini.qpn)],
             "%s with an rkey of the target QP's PD (not the SRQ's): remote access error"
             % name)
        t.eq((v.qp_state(ini), v.qp_state(tgt)), (ERR, ERR), "%s: both QPs in ERR" % name)
    t.eq((v.qt.memread(w.t_mem, 16), v.qt.memread(w.src + 0x800, 16),
          v.qt.memread(w.t_mem + 0x100, 8)), (b"target PD memory", bytes(16), bytes(8)),
         "nothing written at the target nor read back")
    t.eq(w.cq_s.poll_all(), [], "no CQE on the SRQ's CQ")


def domain(v):
    w = World(v)
    srq1 = w.srq(v)
    srq2 = w.srq(v, xrcd=w.x2)
    basic = v.create_srq(w.pd_s)
    for name, num in (("another XRC domain", srq2.srqn), ("a basic SRQ", basic.srqn),
                      ("no SRQ", 0xabc)):
        ini, tgt = w.pair(v)
        v.events()
        v.qt.memwrite(w.s_mem + 0x8000, bytes(64))
        srq2.post([(w.s_mem + 0x8000, 64, w.key_s)])
        before = wqe_cnt(v, srq2)
        v.qt.memwrite(w.src, b"must not arrive")
        ini.post_send(SEND, xrc(num) + dseg(w.src, 15, w.key_i))
        ini.post_send(SEND, xrc(srq1.srqn) + dseg(w.src, 15, w.key_i), ce=False)
        t.eq([f(e, "opcode", "syndrome", "sop", "qpn", "wqe_counter")
              for e in w.cq_i.poll_all()],
             [(REQ_ERR, REM_INV_REQ, SEND, ini.qpn, 0), (REQ_ERR, FLUSH, SEND, ini.qpn, 1)],
             "SEND naming %s: requester CQE remote invalid request (0x12), the next WQE "
             "flushed" % name)
        t.eq((v.qp_state(ini), v.qp_state(tgt)), (ERR, ERR),
             "%s: initiator and target in ERR" % name)
        t.eq(ev(v), [(0x10, 0, tgt.qpn), (0x13, 0, tgt.qpn)],
             "%s: the target reports an invalid request (0x10) and last WQE reached (0x13)"
             % name)
        t.eq((v.qt.memread(w.s_mem + 0x8000, 64), wqe_cnt(v, srq2), w.cq_s.poll_all()),
             (bytes(64), before, []),
             "%s: nothing written, no SRQ WQE consumed, no receive CQE" % name)
    # the WQEs of srq2 are intact: a target of domain 2 consumes them from index 0
    ini, tgt = w.pair(v, xrcd=w.x2)
    ini.post_send(SEND, xrc(srq2.srqn) + inline(b"domain 2"))
    t.eq([f(e, "opcode", "qpn", "srqn", "wqe_counter", "byte_cnt")
          for e in w.cq_s.poll_all()], [(RESP_SEND, tgt.qpn, srq2.srqn, 0, 8)],
         "a target of the SRQ's own domain receives into its first WQE")
    t.eq(v.qt.memread(w.s_mem + 0x8000, 8), b"domain 2", "its payload")
    # an ISSI 0 SRQ with an xrcd serves the domain too; an XRC SRQ in error does not
    s0 = create_xrc_srq(v, w.pd_s, w.x1, w.cq_s.cqn, issi0=True)
    s0.post([(w.s_mem + 0x9000, 64, w.key_s)])
    ini, tgt = w.pair(v)
    ini.post_send(SEND, xrc(s0.srqn) + inline(b"via CREATE_SRQ"))
    t.eq([f(e, "opcode", "qpn", "srqn", "byte_cnt") for e in w.cq_s.poll_all()],
         [(RESP_SEND, tgt.qpn, s0.srqn, 14)],
         "CREATE_SRQ with an xrcd (ISSI 0 form): an XRC SRQ of that domain")
    bad = create_xrc_srq(v, w.pd_s, w.x1, w.cq_s.cqn)
    bad.dbr = 0x3f000000
    r = xrc_srq_cmd(v, "DESTROY_XRC_SRQ", bad.srqn)
    r = create_xrc_srq(v, w.pd_s, w.x1, w.cq_s.cqn,
                       raw=lambda c, p: put(c, P["VCX_XRC_SRQC_DBR_ADDR"], 0x3f000000))
    ini, tgt = w.pair(v)
    v.events()
    ini.post_send(SEND, xrc(r.srqn) + inline(b"x"))
    t.eq(ev(v)[:1], [(0x12, 1, r.srqn)],
         "XRC SRQ with an unreadable doorbell record: SRQ catastrophic error (0x12)")
    t.eq(get(query_xrc_srq(v, r.srqn).out, P["VCX_XRC_SRQC_STATE"], 0x10), 1,
         "QUERY_XRC_SRQ state: error (1)")
    ini, tgt = w.pair(v)
    v.events()
    ini.post_send(SEND, xrc(r.srqn) + inline(b"y"))
    t.eq([f(e, "opcode", "syndrome") for e in w.cq_i.poll_all()][-1:],
         [(REQ_ERR, REM_INV_REQ)], "a SEND naming the XRC SRQ in error: invalid request")


def limit_and_rnr(v):
    w = World(v)
    srq = w.srq(v)
    ini, tgt = w.pair(v, rnr_retry=7, min_rnr=1)
    for i in range(4):
        srq.post([(w.s_mem + 0x1000 * i, 64, w.key_s)])
    v.events()
    ok(xrc_srq_cmd(v, "ARM_XRC_SRQ", srq.srqn, lwm=3, op_mod=1), "ARM_XRC_SRQ")
    ini.post_send(SEND, xrc(srq.srqn) + inline(b"1"), ce=False)
    t.eq(ev(v), [], "4 -> 3 posted WQEs (not below the limit 3): no event")
    ini.post_send(SEND, xrc(srq.srqn) + inline(b"2"), ce=False)
    t.eq(ev(v), [(0x14, 1, srq.srqn)],
         "3 -> 2 WQEs: SRQ_RQ_LIMIT (0x14), type SRQ (1), the XRC SRQ number")
    t.eq(get(query_xrc_srq(v, srq.srqn).out, P["VCX_XRC_SRQC_LWM"], 0x10), 0,
         "limit disarmed after the event")
    ini.post_send(SEND, xrc(srq.srqn) + inline(b"3"), ce=False)
    ini.post_send(SEND, xrc(srq.srqn) + inline(b"4"), ce=False)
    t.eq(ev(v), [], "no event while disarmed")
    t.eq([f(e, "wqe_counter", "srqn") for e in w.cq_s.poll_all()],
         [(i, srq.srqn) for i in range(4)], "four receives in SRQ order")
    # RNR on the empty XRC SRQ
    v.qt.memwrite(w.src, b"after RNR")
    ini.post_send(SEND, xrc(srq.srqn) + dseg(w.src, 9, w.key_i))
    t.eq((w.cq_i.poll_all(), w.cq_s.poll_all()), ([], []),
         "SEND into an empty XRC SRQ: RNR NAK, no CQE")
    v.qt.clock_step(15000)
    t.eq(w.cq_i.poll_all(), [], "still no WQE after an RNR period: still waiting")
    srq.post([(w.s_mem + 0x8000, 64, w.key_s)])
    v.qt.clock_step(15000)
    t.eq([f(e, "opcode", "qpn", "byte_cnt") for e in w.cq_s.poll_all()],
         [(RESP_SEND, tgt.qpn, 9)], "after a WQE is posted the retry is received")
    t.eq([f(e, "opcode", "sop") for e in w.cq_i.poll_all()], [(REQ, SEND)],
         "and the requester completes")
    t.eq(v.qt.memread(w.s_mem + 0x8000, 9), b"after RNR", "its payload")
    # last WQE reached when the target goes to ERR
    v.events()
    ok(v.cmd("2ERR_QP", fields=[(P["VCX_OBJ_NUMBER"], tgt.qpn)]), "2ERR_QP")
    t.eq(ev(v), [(0x13, 0, tgt.qpn)], "target to ERR: last WQE reached (0x13), type QP")
    t.eq(w.cq_s.poll_all(), [], "no flush CQEs: the SRQ's WQEs stay with the SRQ")


def malformed(v):
    w = World(v)
    srq = w.srq(v)
    srq.post([(w.s_mem, 64, w.key_s)])
    ini, tgt = w.pair(v)
    ini.post_send(SEND, b"", ds=1)
    t.eq([f(e, "opcode", "syndrome", "sop", "qpn") for e in w.cq_i.poll_all()],
         [(REQ_ERR, LOCAL_QP_OP, SEND, ini.qpn)],
         "SEND whose DS count ends before the XRC segment: local QP operation error")
    ini, tgt = w.pair(v)
    ini.post_send(WRITE, xrc(srq.srqn), ds=2)
    t.eq([f(e, "opcode", "syndrome", "sop") for e in w.cq_i.poll_all()],
         [(REQ_ERR, LOCAL_QP_OP, WRITE)],
         "WRITE with the XRC segment but no remote address segment: local QP op error")
    t.eq(wqe_cnt(v, srq), 1, "nothing consumed at the target")
    # a message from an RC QP cannot reach an XRC target (transport mismatch): lost
    rc = v.create_qp("RC", w.pd_i, w.cq_i, w.cq_i)
    ini, tgt = w.pair(v)
    v.connect(rc, tgt.qpn, retry=1)
    rc.post_send(SEND, inline(b"rc"))
    v.advance(3 * ACK_T, ACK_T)
    t.eq([f(e, "opcode", "syndrome", "qpn") for e in w.cq_i.poll_all()],
         [(REQ_ERR, RETRY_EXC, rc.qpn)],
         "RC SEND to an XRC target QP: never answered, transport retry exceeded")
    t.eq((wqe_cnt(v, srq), v.qp_state(tgt)), (1, RTS), "the target is untouched")


def destroy_queued(v):
    w = World(v)
    # XRC SRQ destroyed while a SEND waits (RNR) for a WQE of it
    srq = w.srq(v)
    ini, tgt = w.pair(v, rnr_retry=7, min_rnr=1)
    ini.post_send(SEND, xrc(srq.srqn) + inline(b"queued"))
    t.eq(w.cq_i.poll_all(), [], "SEND into an empty XRC SRQ waits (RNR)")
    check(xrc_srq_cmd(v, "DESTROY_XRC_SRQ", srq.srqn), 0, 0,
          "DESTROY_XRC_SRQ while a SEND is queued for it: OK (a target does not hold it)")
    v.events()
    v.qt.clock_step(15000)
    t.eq([f(e, "opcode", "syndrome", "qpn") for e in w.cq_i.poll_all()],
         [(REQ_ERR, REM_INV_REQ, ini.qpn)],
         "the retry names an SRQ that is gone: invalid request (0x12)")
    t.eq(v.qp_state(tgt), ERR, "the target in ERR")
    # target QP destroyed while a SEND waits for it
    srq = w.srq(v)
    ini, tgt = w.pair(v, rnr_retry=7, min_rnr=1, retry=1)
    ini.post_send(SEND, xrc(srq.srqn) + inline(b"queued"))
    ok(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], tgt.qpn)]), "DESTROY_QP target")
    v.qt.clock_step(15000)
    v.advance(3 * ACK_T, ACK_T)
    t.eq([f(e, "opcode", "syndrome", "qpn") for e in w.cq_i.poll_all()],
         [(REQ_ERR, RETRY_EXC, ini.qpn)],
         "target destroyed under a queued SEND: no answer, transport retry exceeded")
    t.eq(wqe_cnt(v, srq), 0, "and the SRQ untouched")
    # XRC SRQ destroyed while a large SEND moves into it (several executor runs)
    big = 64 * MiB
    src = v.alloc(big, align=MiB)
    dst = v.alloc(big, align=MiB)
    v.qt.memset(src, big, 0xa5)
    v.qt.memset(dst, big, 0)
    lk = v.create_mkey(w.pd_i, src, big, key=0x44)
    rk = v.create_mkey(w.pd_s, dst, big, key=0x55)
    srq = w.srq(v)
    srq.post([(dst, big, rk)])
    ini, tgt = w.pair(v, retry=1)
    ini.post_send(SEND, xrc(srq.srqn) + dseg(src, big, lk))
    check(xrc_srq_cmd(v, "DESTROY_XRC_SRQ", srq.srqn), 0, 0,
          "DESTROY_XRC_SRQ while a 64 MiB SEND moves into it: OK")
    v.settle()
    partial = (v.qt.memread(dst, 64) == b"\xa5" * 64 and
               v.qt.memread(dst + big - 64, 64) == bytes(64))
    t.ok(partial and "XRC SRQ destroyed" in v.qt.log(),
         "the message stopped midway when its SRQ went (traced)")
    t.eq(w.cq_s.poll_all(), [], "no receive CQE for the destroyed SRQ's WQE")
    v.advance(3 * ACK_T, ACK_T)
    t.eq([f(e, "opcode", "syndrome", "qpn") for e in w.cq_i.poll_all()],
         [(REQ_ERR, REM_INV_REQ, ini.qpn)],
         "the requester's retry names the SRQ that is gone: invalid request (0x12), once")
    # target destroyed while the large SEND moves
    srq = w.srq(v)
    srq.post([(dst, big, rk)])
    ini, tgt = w.pair(v, retry=1)
    ini.post_send(SEND, xrc(srq.srqn) + dseg(src, big, lk))
    ok(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], tgt.qpn)]), "DESTROY_QP")
    v.settle()
    v.advance(3 * ACK_T, ACK_T)
    t.eq([f(e, "opcode", "syndrome", "qpn") for e in w.cq_i.poll_all()],
         [(REQ_ERR, RETRY_EXC, ini.qpn)],
         "target destroyed mid-SEND: transport retry exceeded, once")
    t.eq(w.cq_s.poll_all(), [], "no receive CQE")
    ok(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], ini.qpn)]), "DESTROY_QP ini")
    # initiator destroyed mid-SEND: the target keeps the WQE it took; the next message
    # reuses it if it names the same XRC SRQ, else it completes flushed on its SRQ's CQ
    for same in (True, False):
        srq_a, srq_b = w.srq(v), w.srq(v)
        srq_a.post([(dst, big, rk)])
        srq_b.post([(w.s_mem + 0x100, 64, w.key_s)])
        ini, tgt = w.pair(v)
        ini.post_send(SEND, xrc(srq_a.srqn) + dseg(src, big, lk))
        ok(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], ini.qpn)]), "DESTROY_QP ini")
        v.settle()
        t.eq(w.cq_s.poll_all(), [], "initiator destroyed mid-SEND: no receive CQE yet")
        ini2 = xrc_ini(v, w.pd_i, w.cq_i)
        v.connect(ini2, tgt.qpn)
        ini2.post_send(SEND, xrc((srq_a if same else srq_b).srqn) + inline(b"next"))
        got = [f(e, "opcode", "syndrome", "srqn", "wqe_counter", "byte_cnt")
               for e in w.cq_s.poll_all()]
        if same:
            t.eq(got, [(RESP_SEND, 0, srq_a.srqn, 0, 4)],
                 "the next message names the same XRC SRQ: it completes in the WQE the "
                 "lost one took")
        else:
            t.eq(got, [(RESP_ERR, FLUSH, srq_a.srqn, 0, 0), (RESP_SEND, 0, srq_b.srqn, 0, 4)],
                 "the next message names another XRC SRQ: the WQE the lost one took is "
                 "flushed on its SRQ's CQ, the message lands in the other SRQ")
        t.eq([f(e, "opcode", "qpn") for e in w.cq_i.poll_all()], [(REQ, ini2.qpn)],
             "the second initiator completes")


def teardown(v):
    w = World(v)
    w.srq(v)
    w.pair(v)
    create_xrc_srq(v, w.pd_s, w.x2, w.cq_s.cqn, issi0=True)
    s = v.d.state()
    t.ok(int(s["xrcds"]) >= 2 and int(s["srqs"]) >= 2, "XRCDs and XRC SRQs alive")
    check(v.d.exec(H["VCX_CMD_OP_TEARDOWN_HCA"],
                   fields=[(H["VCX_TEARDOWN_HCA_IN_PROFILE"], 0)]),
          BAD_RES_STATE, H["VCX_CMD_OP_TEARDOWN_HCA"] << 16 | 12,
          "graceful TEARDOWN_HCA with XRC objects alive: BAD_RES_STATE")
    ok(v.d.exec(H["VCX_CMD_OP_TEARDOWN_HCA"], fields=[(H["VCX_TEARDOWN_HCA_IN_PROFILE"], 1)]),
       "TEARDOWN_HCA force close")
    s = v.d.state()
    t.eq((s["xrcds"], s["srqs"], s["qps"], s["cqs"], s["pds"]), ("0",) * 5,
         "force close drops every XRCD and XRC SRQ with the other objects")


def issi0(v):
    """ISSI 0: CREATE_SRQ with an xrcd and a CQ is the XRC SRQ."""
    w = World(v)
    check(create_xrc_srq(v, w.pd_s, 0xfff0, w.cq_s.cqn, issi0=True), BAD_PARAM,
          synd("CREATE_SRQ", S_XRCD), "CREATE_SRQ with a missing xrcd: BAD_PARAM")
    check(create_xrc_srq(v, w.pd_s, w.x1, 0xfff, issi0=True), BAD_PARAM,
          synd("CREATE_SRQ", S_CQN), "CREATE_SRQ with an xrcd and a missing cqn: BAD_PARAM")
    check(create_xrc_srq(v, w.pd_s, w.x1, 0, issi0=True), BAD_PARAM,
          synd("CREATE_SRQ", S_CQN), "CREATE_SRQ with an xrcd and cqn 0: BAD_PARAM")
    plain = create_xrc_srq(v, w.pd_s, 0, 0xfff, issi0=True)
    t.ok(isinstance(plain, Srq), "CREATE_SRQ with xrcd 0: a basic SRQ, cqn not looked at")
    srq = create_xrc_srq(v, w.pd_s, w.x1, w.cq_s.cqn, issi0=True)
    t.ok(isinstance(srq, Srq), "CREATE_SRQ with xrcd and cqn: OK")
    q = v.cmd("QUERY_SRQ", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], srq.srqn)])
    t.eq((get(q.out, P["VCX_SRQC_XRCD"], 0x10), get(q.out, P["VCX_SRQC_CQN"], 0x10)),
         (w.x1, w.cq_s.cqn), "QUERY_SRQ shows xrcd and cqn")
    check(query_xrc_srq(v, srq.srqn), BAD_RES_STATE, synd("QUERY_XRC_SRQ", XS_NONE),
          "QUERY_XRC_SRQ of it: BAD_RES_STATE (an SRQ, not of the XRC SRQ family)")
    check(dealloc_xrcd(v, w.x1), BAD_RES_STATE, synd("DEALLOC_XRCD", X_IN_USE),
          "DEALLOC_XRCD while the SRQ names it: BAD_RES_STATE")
    check(v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], w.cq_s.cqn)]), BAD_RES_STATE,
          synd("DESTROY_CQ", 13), "DESTROY_CQ of its CQ: BAD_RES_STATE")
    srq.post([(w.s_mem, 64, w.key_s)])
    ini, tgt = w.pair(v)
    v.qt.memwrite(w.src, b"ISSI 0 XRC")
    ini.post_send(SEND, xrc(srq.srqn) + dseg(w.src, 10, w.key_i))
    t.eq([f(e, "opcode", "qpn", "srqn", "byte_cnt") for e in w.cq_s.poll_all()],
         [(RESP_SEND, tgt.qpn, srq.srqn, 10)], "XRC SEND into it: CQE on its CQ with srqn")
    t.eq(v.qt.memread(w.s_mem, 10), b"ISSI 0 XRC", "payload")
    ini2, tgt2 = w.pair(v)
    ini2.post_send(SEND, xrc(plain.srqn) + inline(b"no"))
    t.eq([f(e, "opcode", "syndrome") for e in w.cq_i.poll_all()][-1:],
         [(REQ_ERR, REM_INV_REQ)], "XRC SEND naming the basic (xrcd 0) SRQ: invalid request")
    for q in (ini, tgt, ini2, tgt2):
        ok(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], q.qpn)]), "DESTROY_QP")
    check(v.cmd("DESTROY_SRQ", fields=[(P["VCX_OBJ_NUMBER"], srq.srqn)]), 0, 0,
          "DESTROY_SRQ: OK")
    check(dealloc_xrcd(v, w.x1), 0, 0, "then DEALLOC_XRCD: OK")
    check(v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], w.cq_s.cqn)]), 0, 0,
          "and DESTROY_CQ: OK")


def main():
    v = Verbs(trace="vcx_xfer_lost")
    try:
        for name, fn in (("ALLOC/DEALLOC_XRCD", cmds_xrcd), ("XRC SRQ commands", cmds_xrc_srq),
                         ("XRC QPs", cmds_xrc_qp), ("SEND", send), ("RDMA", rdma),
                         ("XRC domain violation", domain), ("limit and RNR", limit_and_rnr),
                         ("malformed", malformed), ("destroy while queued", destroy_queued),
                         ("teardown", teardown)):
            run_isolated(t, name, lambda fn=fn: fn(v))
        t.ok(v.qt.alive(), "QEMU alive")
    finally:
        v.close()
    v = Verbs(issi=0)
    try:
        run_isolated(t, "ISSI 0 CREATE_SRQ", lambda: issi0(v))
        t.ok(v.qt.alive(), "QEMU alive (ISSI 0)")
    finally:
        v.close()
    t.done()


if __name__ == "__main__":
    main()
