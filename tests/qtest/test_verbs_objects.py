#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""RDMA object commands: ALLOC/DEALLOC_PD, CREATE/QUERY/DESTROY_MKEY,
CREATE/QUERY/MODIFY/DESTROY_CQ, CREATE_QP and its transitions, QUERY_QP, DESTROY_QP,
CREATE/QUERY/DESTROY_SRQ, ARM_RQ, CREATE/MODIFY/QUERY/DESTROY_RMP, DEALLOC_UAR of a page
a CQ, QP or EQ still uses: good paths with the
values read back, at least three refused inputs per command with the exact status and
syndrome, and the capabilities that announce them."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import EQ_BASE, Tap, get, put, run_isolated  # noqa: E402
from vcx_verbs import OP, P, Verbs, Cq, Qp, Srq  # noqa: E402

t = Tap()
BAD_PARAM, BAD_RES_STATE, BAD_QP_STATE, BAD_INPUT_LEN = 0x03, 0x09, 0x10, 0x50


def check(r, status, syndrome, desc):
    t.eq((r.deliv, r.status, r.syndrome), (0, status, syndrome), desc)


def synd(op, n):
    return OP[op] << 16 | n


def caps(v):
    r = v.d.exec(OP["QUERY_HCA_CAP"], op_mod=1, out_len=0x1010)
    c = r.out[0x10:]
    got = {n: get(c, P["VCX_CAP_GEN_" + n]) for n in (
        "LOG_MAX_PD", "LOG_MAX_MKEY", "LOG_MAX_CQ", "LOG_MAX_CQ_SZ", "LOG_MAX_QP",
        "LOG_MAX_QP_SZ", "LOG_MAX_SRQ", "LOG_MAX_SRQ_SZ", "LOG_MAX_RMP", "LOG_MAX_MSG",
        "LOG_MAX_MRW_SZ", "MAX_WQE_SZ_SQ", "MAX_WQE_SZ_RQ", "RC", "UC", "UD", "XRC", "ATOMIC",
        "CQE_VERSION", "CQ_RESIZE", "LOG_MAX_XRCD")}
    t.eq(got, {"LOG_MAX_PD": 16, "LOG_MAX_MKEY": 16, "LOG_MAX_CQ": 12, "LOG_MAX_CQ_SZ": 22,
               "LOG_MAX_QP": 12, "LOG_MAX_QP_SZ": 15, "LOG_MAX_SRQ": 12,
               "LOG_MAX_SRQ_SZ": 15, "LOG_MAX_RMP": 12, "LOG_MAX_MSG": 30,
               "LOG_MAX_MRW_SZ": 64, "MAX_WQE_SZ_SQ": 1024, "MAX_WQE_SZ_RQ": 512, "RC": 1,
               "UC": 1, "UD": 1, "XRC": 1, "ATOMIC": 1, "CQE_VERSION": 0, "CQ_RESIZE": 1,
               "LOG_MAX_XRCD": 16},
         "QUERY_HCA_CAP cur: object limits, transport bits (XRC 1, 2^16 XRC domains), "
         "atomic 1, cqe_version 0, cq_resize 1")


def pd_tests(v):
    p1, p2 = v.alloc_pd(), v.alloc_pd()
    t.eq((p1, p2), (2, 3), "ALLOC_PD hands out the lowest free numbers, 2 then 3")
    check(v.cmd("ALLOC_PD", op_mod=1), BAD_PARAM, synd("ALLOC_PD", 0xff09),
          "ALLOC_PD op_mod 1: BAD_PARAM")
    check(v.cmd("DEALLOC_PD", fields=[(P["VCX_DEALLOC_PD_IN_PD"], 77)]), BAD_RES_STATE,
          synd("DEALLOC_PD", 2), "DEALLOC_PD of an unallocated PD: BAD_RES_STATE")
    check(v.cmd("DEALLOC_PD", in_len=8), BAD_INPUT_LEN, synd("DEALLOC_PD", 0xff02),
          "DEALLOC_PD with an 8-byte input: BAD_INPUT_LEN")
    key = v.create_mkey(p2, 0x14000000, 4096)
    check(v.cmd("DEALLOC_PD", fields=[(P["VCX_DEALLOC_PD_IN_PD"], p2)]), BAD_RES_STATE,
          synd("DEALLOC_PD", 3), "DEALLOC_PD of a PD an MKEY uses: BAD_RES_STATE")
    v.cmd("DESTROY_MKEY", fields=[(P["VCX_DESTROY_MKEY_IN_MKEY_INDEX"], key >> 8)])
    check(v.cmd("DEALLOC_PD", fields=[(P["VCX_DEALLOC_PD_IN_PD"], p2)]), 0, 0,
          "DEALLOC_PD 2: OK")
    check(v.cmd("DEALLOC_PD", fields=[(P["VCX_DEALLOC_PD_IN_PD"], p2)]), BAD_RES_STATE,
          synd("DEALLOC_PD", 2), "DEALLOC_PD 2 twice: BAD_RES_STATE")
    return p1


def mkey_tests(v, pd):
    buf = v.alloc(0x3000)
    key = v.create_mkey(pd, buf + 0x100, 0x2000, access="lr lw rr", key=0xa7)
    t.eq(key & 0xff, 0xa7, "CREATE_MKEY: key byte is mkey_7_0")
    r = v.cmd("QUERY_MKEY", out_len=0x130,
              fields=[(P["VCX_QUERY_MKEY_IN_MKEY_INDEX"], key >> 8)])
    m = r.out[0x10:0x50]
    t.eq((r.status, get(m, P["VCX_MKC_ACCESS_MODE_1_0"]), get(m, P["VCX_MKC_LR"]),
          get(m, P["VCX_MKC_LW"]), get(m, P["VCX_MKC_RR"]), get(m, P["VCX_MKC_RW"]),
          get(m, P["VCX_MKC_A"]), get(m, P["VCX_MKC_PD"]), get(m, P["VCX_MKC_MKEY_7_0"]),
          get(m, P["VCX_MKC_START_ADDR"]), get(m, P["VCX_MKC_LEN"]),
          get(m, P["VCX_MKC_LOG_PAGE_SIZE"]), get(m, P["VCX_MKC_QPN"]),
          struct.unpack_from(">QQQ", r.out, 0x110)),
         (0, 1, 1, 1, 1, 0, 0, pd, 0xa7, buf + 0x100, 0x2000, 12, 0xffffff,
          (buf, buf + 0x1000, buf + 0x2000)),
         "QUERY_MKEY: access mode MTT, rights, pd, key, start, len, page size, MTTs")
    bad = [
        (dict(mode=2), BAD_PARAM, 15, "access_mode KLM that is not a free umr_en window"),
        (dict(mode=3), BAD_PARAM, 3, "access_mode KSM"),
        (dict(log_page=11), BAD_PARAM, 8, "log_page_size 11"),
        (dict(xlt=1), BAD_PARAM, 9, "translations_octword_size too small for 3 pages"),
        (dict(pages=[buf + 0x800, buf + 0x1000, buf + 0x2000]), BAD_PARAM, 11,
         "MTT entry not page aligned"),
        (dict(free=True), BAD_PARAM, 7, "free without umr_en"),
    ]
    for kw, st, n, what in bad:
        r = v.create_mkey(pd, buf + 0x100, 0x2000, raw_status=True, **kw)
        check(r, st, synd("CREATE_MKEY", n), "CREATE_MKEY %s: status 0x%x" % (what, st))
    check(v.create_mkey(77, buf, 0x1000, raw_status=True), BAD_PARAM, synd("CREATE_MKEY", 4),
          "CREATE_MKEY with an unallocated PD: BAD_PARAM")
    r = v.create_mkey(pd, buf, 0x3000, raw_status=True, xlt_actual=4, xlt=4)
    check(r, BAD_INPUT_LEN, synd("CREATE_MKEY", 10),
          "CREATE_MKEY announcing 4 octwords with 2 present: BAD_INPUT_LEN")
    check(v.cmd("QUERY_MKEY", out_len=0x130, fields=[(P["VCX_QUERY_MKEY_IN_MKEY_INDEX"], 999)]),
          BAD_RES_STATE, synd("QUERY_MKEY", 13), "QUERY_MKEY of a free index: BAD_RES_STATE")
    check(v.cmd("QUERY_MKEY", out_len=0x100), 0x51, synd("QUERY_MKEY", 0xff03),
          "QUERY_MKEY with a short output: BAD_OUTPUT_LEN")
    check(v.cmd("QUERY_MKEY", op_mod=3, out_len=0x130), BAD_PARAM, synd("QUERY_MKEY", 0xff09),
          "QUERY_MKEY op_mod 3: BAD_PARAM")
    check(v.cmd("DESTROY_MKEY", fields=[(P["VCX_DESTROY_MKEY_IN_MKEY_INDEX"], key >> 8)]),
          0, 0, "DESTROY_MKEY: OK")
    check(v.cmd("DESTROY_MKEY", fields=[(P["VCX_DESTROY_MKEY_IN_MKEY_INDEX"], key >> 8)]),
          BAD_RES_STATE, synd("DESTROY_MKEY", 13), "DESTROY_MKEY twice: BAD_RES_STATE")
    check(v.cmd("DESTROY_MKEY", in_len=8), BAD_INPUT_LEN, synd("DESTROY_MKEY", 0xff02),
          "DESTROY_MKEY with an 8-byte input: BAD_INPUT_LEN")
    check(v.cmd("DESTROY_MKEY", op_mod=1), BAD_PARAM, synd("DESTROY_MKEY", 0xff09),
          "DESTROY_MKEY op_mod 1: BAD_PARAM")
    r = v.create_mkey(pd, 0, 0, mode=0, access="lr lw", length64=True)
    t.ok(r & 0xff == 0x5a, "CREATE_MKEY PA mode with length64 (the kernel's DMA key): OK")


def cq_tests(v):
    def cqc(**kv):
        def f(c):
            for k, val in kv.items():
                put(c, P["VCX_CQC_" + k.upper()], val)
        return f
    cq = v.create_cq(log_size=5, cqe_sz=1)
    t.ok(isinstance(cq, Cq), "CREATE_CQ log_size 5, 128-byte CQEs: OK")
    r = v.cmd("QUERY_CQ", out_len=0x118, fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)])
    c = r.out[0x10:0x50]
    t.eq((r.status, get(c, P["VCX_CQC_LOG_CQ_SIZE"]), get(c, P["VCX_CQC_CQE_SZ"]),
          get(c, P["VCX_CQC_UAR_PAGE"]), get(c, P["VCX_CQC_C_EQN"]),
          get(c, P["VCX_CQC_DBR_ADDR"]), get(c, P["VCX_CQC_ST"]),
          get(c, P["VCX_CQC_PRODUCER_COUNTER"]), struct.unpack_from(">Q", r.out, 0x110)[0]),
         (0, 5, 1, v.uar, v.comp_eqn, cq.dbr, 0xa, 0, cq.base),
         "QUERY_CQ: size, cqe_sz, uar, c_eqn, dbr_addr, st fired, producer 0, PAS[0]")
    check(v.create_cq(log_size=23), BAD_PARAM, synd("CREATE_CQ", 2),
          "CREATE_CQ log_cq_size 23 > 22: BAD_PARAM")
    check(v.create_cq(cqe_sz=2), BAD_PARAM, synd("CREATE_CQ", 3), "CREATE_CQ cqe_sz 2: BAD_PARAM")
    check(v.create_cq(eqn=9), BAD_PARAM, synd("CREATE_CQ", 6),
          "CREATE_CQ with c_eqn 9 (no such EQ): BAD_PARAM")
    check(v.create_cq(raw=cqc(uar_page=v.uar + 1)), BAD_PARAM, synd("CREATE_CQ", 5),
          "CREATE_CQ on an unallocated UAR: BAD_PARAM")
    check(v.create_cq(raw=cqc(dbr_addr=0x13000004)), BAD_PARAM, synd("CREATE_CQ", 8),
          "CREATE_CQ with a misaligned doorbell record: BAD_PARAM")
    check(v.create_cq(log_size=8, npas=1), BAD_INPUT_LEN, synd("CREATE_CQ", 9),
          "CREATE_CQ of 16 KiB with one PAS entry: BAD_INPUT_LEN")
    check(v.create_cq(raw=cqc(cqe_comp_en=1)), BAD_PARAM, synd("CREATE_CQ", 4),
          "CREATE_CQ with CQE compression: BAD_PARAM")
    sel = P["VCX_MODIFY_CQ_IN_FIELD_SELECT"]
    cqc_b = bytearray(64)
    put(cqc_b, P["VCX_CQC_CQ_PERIOD"], 16)
    put(cqc_b, P["VCX_CQC_CQ_MAX_COUNT"], 8)
    r = v.cmd("MODIFY_CQ", in_len=0x110, fields=[(P["VCX_MODIFY_CQ_IN_CQN"], cq.cqn),
                                                 (sel, 3)], payload={0x10: cqc_b})
    q = v.cmd("QUERY_CQ", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)])
    t.eq((r.status, get(q.out, P["VCX_CQC_CQ_PERIOD"], 0x10),
          get(q.out, P["VCX_CQC_CQ_MAX_COUNT"], 0x10)), (0, 16, 8),
         "MODIFY_CQ period and count: recorded")
    check(v.cmd("MODIFY_CQ", op_mod=1, in_len=0x110,
                fields=[(P["VCX_MODIFY_CQ_IN_CQN"], cq.cqn),
                        (P["VCX_MODIFY_CQ_IN_FIELD_SELECT"], 8)]),
          BAD_PARAM, synd("MODIFY_CQ", 15),
          "MODIFY_CQ resize with resize_field_select bit 3: BAD_PARAM (more in "
          "test_verbs_cq_resize)")
    check(v.cmd("MODIFY_CQ", in_len=0x110, fields=[(P["VCX_MODIFY_CQ_IN_CQN"], cq.cqn),
                                                   (sel, 1 << 3)]),
          BAD_PARAM, synd("MODIFY_CQ", 15), "MODIFY_CQ field_select bit 3: BAD_PARAM")
    check(v.cmd("MODIFY_CQ", in_len=0x110, fields=[(P["VCX_MODIFY_CQ_IN_CQN"], 999)]),
          BAD_RES_STATE, synd("MODIFY_CQ", 12), "MODIFY_CQ of a missing CQ: BAD_RES_STATE")
    check(v.cmd("QUERY_CQ", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], 999)]),
          BAD_RES_STATE, synd("QUERY_CQ", 12), "QUERY_CQ of a missing CQ: BAD_RES_STATE")
    check(v.cmd("QUERY_CQ", out_len=0x100), 0x51, synd("QUERY_CQ", 0xff03),
          "QUERY_CQ with a short output: BAD_OUTPUT_LEN")
    check(v.cmd("QUERY_CQ", op_mod=1, out_len=0x110), BAD_PARAM, synd("QUERY_CQ", 0xff09),
          "QUERY_CQ op_mod 1: BAD_PARAM")
    check(v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], 999)]), BAD_RES_STATE,
          synd("DESTROY_CQ", 12), "DESTROY_CQ of a missing CQ: BAD_RES_STATE")
    check(v.cmd("DESTROY_CQ", in_len=8), BAD_INPUT_LEN, synd("DESTROY_CQ", 0xff02),
          "DESTROY_CQ with an 8-byte input: BAD_INPUT_LEN")
    check(v.cmd("DESTROY_CQ", op_mod=2), BAD_PARAM, synd("DESTROY_CQ", 0xff09),
          "DESTROY_CQ op_mod 2: BAD_PARAM")
    check(v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)]), 0, 0, "DESTROY_CQ: OK")


def qp_tests(v, pd):
    cq = v.create_cq()

    def qpc(**kv):
        def f(c):
            for k, val in kv.items():
                put(c, P["VCX_QPC_" + k.upper()], val)
        return f
    bad = [
        (dict(raw=qpc(st=5)), BAD_PARAM, 3, "st DCI"),
        (dict(raw=qpc(pd=77)), BAD_PARAM, 4, "unallocated PD"),
        (dict(raw=qpc(cqn_snd=999)), BAD_PARAM, 6, "missing cqn_snd"),
        (dict(raw=qpc(rq_type=2)), BAD_PARAM, 8, "rq_type CRQ"),
        (dict(raw=qpc(rq_type=1, srqn_rmpn_xrqn=999)), BAD_PARAM, 9, "missing SRQ"),
        (dict(raw=qpc(log_rq_stride=6)), BAD_PARAM, 10, "RQ stride 1024"),
        (dict(raw=qpc(dbr_addr=0x13000fff)), BAD_PARAM, 13, "misaligned doorbell record"),
        (dict(raw=qpc(wq_signature=1)), BAD_PARAM, 14, "wq_signature"),
    ]
    for kw, st, n, what in bad:
        check(v.create_qp("RC", pd, cq, cq, **kw), st, synd("CREATE_QP", n),
              "CREATE_QP %s: status 0x%x" % (what, st))
    qp = v.create_qp("RC", pd, cq, cq, log_sq=5, log_rq=3, rq_stride=32)
    t.ok(isinstance(qp, Qp), "CREATE_QP RC: OK")
    r = v.query_qp(qp)
    c = r.out[0x18:]
    t.eq((r.status, get(c, P["VCX_QPC_STATE"]), get(c, P["VCX_QPC_ST"]),
          get(c, P["VCX_QPC_LOG_SQ_SIZE"]), get(c, P["VCX_QPC_LOG_RQ_SIZE"]),
          get(c, P["VCX_QPC_LOG_RQ_STRIDE"]), get(c, P["VCX_QPC_CQN_SND"]),
          get(c, P["VCX_QPC_DBR_ADDR"]), get(r.out, P["VCX_QPC_PD"], 0x18)),
         (0, 0, 0, 5, 3, 1, cq.cqn, qp.dbr, pd), "QUERY_QP after create: RST and the context")
    check(v.modify("INIT2RTR_QP", qp), BAD_QP_STATE, synd("INIT2RTR_QP", 19),
          "INIT2RTR from RST: BAD_QP_STATE")
    check(v.modify("RTR2RTS_QP", qp), BAD_QP_STATE, synd("RTR2RTS_QP", 19),
          "RTR2RTS from RST: BAD_QP_STATE")
    check(v.modify("RST2INIT_QP", qp, ads=[("vhca_port_num", 2)]), BAD_PARAM,
          synd("RST2INIT_QP", 24), "RST2INIT to port 2: BAD_PARAM")
    check(v.modify("RST2INIT_QP", qp, ads=[("vhca_port_num", 1)], mask=1 << 5), BAD_PARAM,
          synd("RST2INIT_QP", 20), "RST2INIT with opt_param_mask Q_KEY on RC: BAD_PARAM")
    check(v.modify("RST2INIT_QP", qp, [("rre", 1), ("rwe", 1)], ads=[("vhca_port_num", 1)]),
          0, 0, "RST2INIT: OK")
    check(v.modify("INIT2INIT_QP", qp, [("rae", 1)], mask=1 << 2), 0, 0,
          "INIT2INIT with RAE in opt_param_mask: OK")
    check(v.modify("INIT2RTR_QP", qp, [("mtu", 6), ("remote_qpn", qp.qpn)]), BAD_PARAM,
          synd("INIT2RTR_QP", 21), "INIT2RTR with mtu 6: BAD_PARAM")
    check(v.modify("INIT2RTR_QP", qp, [("mtu", 3), ("log_rra_max", 5)]), BAD_PARAM,
          synd("INIT2RTR_QP", 23), "INIT2RTR with log_rra_max 5 > 4: BAD_PARAM")
    check(v.modify("INIT2RTR_QP", qp, [("mtu", 3), ("remote_qpn", qp.qpn),
                                       ("next_rcv_psn", 0x1234), ("min_rnr_nak", 12)]),
          0, 0, "INIT2RTR: OK")
    check(v.modify("RTR2RTS_QP", qp, [("next_send_psn", 0x777), ("retry_count", 6),
                                      ("rnr_retry", 5)], mask=1 << 7), 0, 0,
          "RTR2RTS with PRIMARY_ADDR_PATH optional: OK")
    check(v.modify("RTS2RTS_QP", qp, [("min_rnr_nak", 20)], mask=1 << 6), 0, 0,
          "RTS2RTS with RNR_TIMEOUT: OK")
    check(v.modify("RTS2RTS_QP", qp, mask=1 << 18), BAD_PARAM, synd("RTS2RTS_QP", 20),
          "RTS2RTS with SRQN in opt_param_mask: BAD_PARAM")
    r = v.query_qp(qp)
    c = r.out[0x18:]
    t.eq((get(c, P["VCX_QPC_STATE"]), get(c, P["VCX_QPC_RRE"]), get(c, P["VCX_QPC_RWE"]),
          get(c, P["VCX_QPC_RAE"]), get(c, P["VCX_QPC_MTU"]), get(c, P["VCX_QPC_NEXT_RCV_PSN"]),
          get(c, P["VCX_QPC_NEXT_SEND_PSN"]), get(c, P["VCX_QPC_RETRY_COUNT"]),
          get(c, P["VCX_QPC_RNR_RETRY"]), get(c, P["VCX_QPC_MIN_RNR_NAK"])),
         (3, 1, 1, 1, 3, 0x1234, 0x777, 6, 5, 20),
         "QUERY_QP in RTS: access bits, mtu, PSNs, retry counts, min_rnr_nak")
    check(v.cmd("2ERR_QP", fields=[(P["VCX_OBJ_NUMBER"], qp.qpn)]), 0, 0, "2ERR: OK")
    t.eq(v.qp_state(qp), 6, "QP in ERR")
    check(v.modify("RTS2RTS_QP", qp), BAD_QP_STATE, synd("RTS2RTS_QP", 19),
          "RTS2RTS from ERR: BAD_QP_STATE")
    check(v.cmd("2RST_QP", fields=[(P["VCX_OBJ_NUMBER"], qp.qpn)]), 0, 0, "2RST: OK")
    t.eq(v.qp_state(qp), 0, "QP back in RST")
    check(v.cmd("2ERR_QP", fields=[(P["VCX_OBJ_NUMBER"], 5)]), BAD_RES_STATE,
          synd("2ERR_QP", 18), "2ERR of QP 5: BAD_RES_STATE")
    check(v.cmd("2RST_QP", fields=[(P["VCX_OBJ_NUMBER"], 999)]), BAD_RES_STATE,
          synd("2RST_QP", 18), "2RST of a missing QP: BAD_RES_STATE")
    check(v.cmd("QUERY_QP", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], 999)]),
          BAD_RES_STATE, synd("QUERY_QP", 18), "QUERY_QP of a missing QP: BAD_RES_STATE")
    check(v.cmd("QUERY_QP", out_len=0x10), 0x51, synd("QUERY_QP", 0xff03),
          "QUERY_QP with a short output: BAD_OUTPUT_LEN")
    check(v.cmd("RST2INIT_QP", in_len=0x20), BAD_INPUT_LEN, synd("RST2INIT_QP", 0xff02),
          "RST2INIT with a 0x20-byte input: BAD_INPUT_LEN")
    check(v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)]), BAD_RES_STATE,
          synd("DESTROY_CQ", 13), "DESTROY_CQ of a CQ a QP uses: BAD_RES_STATE")
    check(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], qp.qpn)]), 0, 0, "DESTROY_QP: OK")
    check(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], qp.qpn)]), BAD_RES_STATE,
          synd("DESTROY_QP", 18), "DESTROY_QP twice: BAD_RES_STATE")
    check(v.cmd("DESTROY_QP", op_mod=1), BAD_PARAM, synd("DESTROY_QP", 0xff09),
          "DESTROY_QP op_mod 1: BAD_PARAM")


def srq_tests(v, pd):
    def srqc(**kv):
        def f(c):
            for k, val in kv.items():
                put(c, P["VCX_SRQC_" + k.upper()], val)
        return f
    check(v.create_srq(pd, log_size=3, raw=srqc(pd=77)), BAD_PARAM, synd("CREATE_SRQ", 5),
          "CREATE_SRQ with an unallocated PD: BAD_PARAM")
    check(v.create_srq(pd, stride=16), BAD_PARAM, synd("CREATE_SRQ", 3),
          "CREATE_SRQ with 16-byte WQEs (no room for a data segment): BAD_PARAM")
    check(v.create_srq(pd, log_size=3, lwm=9), BAD_PARAM, synd("CREATE_SRQ", 13),
          "CREATE_SRQ with lwm 9 > 8 WQEs: BAD_PARAM")
    check(v.create_srq(pd, raw=srqc(wq_signature=1)), BAD_PARAM, synd("CREATE_SRQ", 4),
          "CREATE_SRQ with wq_signature: BAD_PARAM")
    srq = v.create_srq(pd, log_size=4, stride=64, lwm=3)
    t.ok(isinstance(srq, Srq), "CREATE_SRQ: OK")
    r = v.cmd("QUERY_SRQ", out_len=0x118, fields=[(P["VCX_OBJ_NUMBER"], srq.srqn)])
    c = r.out[0x10:0x50]
    t.eq((r.status, get(c, P["VCX_SRQC_STATE"]), get(c, P["VCX_SRQC_LOG_SRQ_SIZE"]),
          get(c, P["VCX_SRQC_LOG_RQ_STRIDE"]), get(c, P["VCX_SRQC_PD"]),
          get(c, P["VCX_SRQC_LWM"]), get(c, P["VCX_SRQC_DBR_ADDR"]),
          struct.unpack_from(">Q", r.out, 0x110)[0]),
         (0, 0, 4, 2, pd, 3, srq.dbr, srq.base), "QUERY_SRQ: state, size, stride, pd, lwm, dbr")
    check(v.cmd("ARM_RQ", op_mod=1, fields=[(P["VCX_ARM_RQ_IN_SRQ_NUMBER"], srq.srqn),
                                            (P["VCX_ARM_RQ_IN_LWM"], 17)]),
          BAD_PARAM, synd("ARM_RQ", 13), "ARM_RQ lwm 17 > 16: BAD_PARAM")
    check(v.cmd("ARM_RQ", op_mod=0, fields=[(P["VCX_ARM_RQ_IN_SRQ_NUMBER"], srq.srqn)]),
          BAD_PARAM, synd("ARM_RQ", 0xff09), "ARM_RQ op_mod 0 (Ethernet RQ): BAD_PARAM")
    check(v.cmd("ARM_RQ", op_mod=1, fields=[(P["VCX_ARM_RQ_IN_SRQ_NUMBER"], 999)]),
          BAD_RES_STATE, synd("ARM_RQ", 11), "ARM_RQ of a missing SRQ: BAD_RES_STATE")
    check(v.cmd("ARM_RQ", op_mod=1, fields=[(P["VCX_ARM_RQ_IN_SRQ_NUMBER"], srq.srqn),
                                            (P["VCX_ARM_RQ_IN_LWM"], 5)]), 0, 0, "ARM_RQ 5: OK")
    r = v.cmd("QUERY_SRQ", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], srq.srqn)])
    t.eq(get(r.out, P["VCX_SRQC_LWM"], 0x10), 5, "QUERY_SRQ shows lwm 5")
    cq = v.create_cq()
    qp = v.create_qp("RC", pd, cq, cq, srq=srq)
    check(v.cmd("DESTROY_SRQ", fields=[(P["VCX_OBJ_NUMBER"], srq.srqn)]), BAD_RES_STATE,
          synd("DESTROY_SRQ", 12), "DESTROY_SRQ with a QP attached: BAD_RES_STATE")
    v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], qp.qpn)])
    check(v.cmd("QUERY_RMP", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], srq.srqn)]),
          BAD_RES_STATE, synd("QUERY_RMP", 11), "QUERY_RMP of an SRQ number: BAD_RES_STATE")
    check(v.cmd("DESTROY_SRQ", fields=[(P["VCX_OBJ_NUMBER"], srq.srqn)]), 0, 0,
          "DESTROY_SRQ: OK")
    check(v.cmd("DESTROY_SRQ", fields=[(P["VCX_OBJ_NUMBER"], srq.srqn)]), BAD_RES_STATE,
          synd("DESTROY_SRQ", 11), "DESTROY_SRQ twice: BAD_RES_STATE")
    check(v.cmd("QUERY_SRQ", out_len=0x100), 0x51, synd("QUERY_SRQ", 0xff03),
          "QUERY_SRQ with a short output: BAD_OUTPUT_LEN")
    check(v.cmd("QUERY_SRQ", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], 999)]),
          BAD_RES_STATE, synd("QUERY_SRQ", 11), "QUERY_SRQ of a missing SRQ: BAD_RES_STATE")

    # RMP
    def rmpc(**kv):
        def f(c):
            for k, val in kv.items():
                if k == "state":
                    put(c, P["VCX_RMPC_STATE"], val)
                else:
                    put(c, P["VCX_WQ_" + k.upper()], val, 0x30)
        return f
    check(v.create_srq(pd, rmp=True, raw=rmpc(state=0)), BAD_PARAM, synd("CREATE_RMP", 14),
          "CREATE_RMP in state RST: BAD_PARAM")
    check(v.create_srq(pd, rmp=True, raw=rmpc(wq_type=1)), BAD_PARAM, synd("CREATE_RMP", 15),
          "CREATE_RMP with a cyclic WQ: BAD_PARAM")
    check(v.create_srq(pd, rmp=True, raw=rmpc(log_wq_sz=16)), BAD_PARAM,
          synd("CREATE_RMP", 2), "CREATE_RMP log_wq_sz 16: BAD_PARAM")
    check(v.create_srq(pd, rmp=True, raw=rmpc(pd=99)), BAD_PARAM, synd("CREATE_RMP", 5),
          "CREATE_RMP with an unallocated PD: BAD_PARAM")
    rmp = v.create_srq(pd, rmp=True, log_size=3, stride=128, lwm=2)
    t.ok(isinstance(rmp, Srq), "CREATE_RMP: OK")
    r = v.cmd("QUERY_RMP", out_len=0x118, fields=[(P["VCX_OBJ_NUMBER"], rmp.srqn)])
    w = 0x20 + 0x30
    t.eq((r.status, get(r.out, P["VCX_RMPC_STATE"], 0x20), get(r.out, P["VCX_WQ_LWM"], w),
          get(r.out, P["VCX_WQ_PD"], w), get(r.out, P["VCX_WQ_LOG_WQ_STRIDE"], w),
          get(r.out, P["VCX_WQ_LOG_WQ_SZ"], w), get(r.out, P["VCX_WQ_DBR_ADDR"], w),
          struct.unpack_from(">Q", r.out, 0x110)[0]),
         (0, 1, 2, pd, 7, 3, rmp.dbr, rmp.base), "QUERY_RMP: RDY, lwm, pd, stride, size, dbr")

    def modify_rmp(cur=1, new=1, bitmask=1, lwm=4, n=None):
        c = bytearray(0xf0)
        put(c, P["VCX_RMPC_STATE"], new)
        put(c, P["VCX_WQ_LWM"], lwm, 0x30)
        return v.cmd("MODIFY_RMP", in_len=0x110,
                     fields=[(P["VCX_MODIFY_RMP_IN_RMP_STATE"], cur),
                             (P["VCX_MODIFY_RMP_IN_RMPN"], rmp.srqn if n is None else n),
                             (P["VCX_MODIFY_RMP_IN_BITMASK"], bitmask)], payload={0x20: c})
    check(modify_rmp(cur=0), BAD_RES_STATE, synd("MODIFY_RMP", 14),
          "MODIFY_RMP from state RST: BAD_RES_STATE")
    check(modify_rmp(bitmask=2), BAD_PARAM, synd("MODIFY_RMP", 16),
          "MODIFY_RMP bitmask bit 1: BAD_PARAM")
    check(modify_rmp(n=999), BAD_RES_STATE, synd("MODIFY_RMP", 11),
          "MODIFY_RMP of a missing RMP: BAD_RES_STATE")
    check(modify_rmp(lwm=4), 0, 0, "MODIFY_RMP lwm 4: OK")
    r = v.cmd("QUERY_RMP", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], rmp.srqn)])
    t.eq(get(r.out, P["VCX_WQ_LWM"], w), 4, "QUERY_RMP shows lwm 4")
    check(v.cmd("QUERY_RMP", out_len=0x100), 0x51, synd("QUERY_RMP", 0xff03),
          "QUERY_RMP with a short output: BAD_OUTPUT_LEN")
    check(v.cmd("DESTROY_SRQ", fields=[(P["VCX_OBJ_NUMBER"], rmp.srqn)]), BAD_RES_STATE,
          synd("DESTROY_SRQ", 11), "DESTROY_SRQ of an RMP number: BAD_RES_STATE")
    check(v.cmd("DESTROY_RMP", fields=[(P["VCX_OBJ_NUMBER"], rmp.srqn)]), 0, 0,
          "DESTROY_RMP: OK")
    check(v.cmd("DESTROY_RMP", fields=[(P["VCX_OBJ_NUMBER"], rmp.srqn)]), BAD_RES_STATE,
          synd("DESTROY_RMP", 11), "DESTROY_RMP twice: BAD_RES_STATE")
    check(v.cmd("DESTROY_RMP", in_len=8), BAD_INPUT_LEN, synd("DESTROY_RMP", 0xff02),
          "DESTROY_RMP with an 8-byte input: BAD_INPUT_LEN")


def uar_refs(v, pd):
    """DEALLOC_UAR of a page a live CQ, QP or EQ was created on: BAD_RES_STATE."""
    uar = v.d.alloc_uar()
    cq = v.create_cq(raw=lambda c: put(c, P["VCX_CQC_UAR_PAGE"], uar))
    other = v.create_cq()
    qp = v.create_qp("RC", pd, other, other,
                     raw=lambda c: put(c, P["VCX_QPC_UAR_PAGE"], uar))
    dealloc = [(P["VCX_DEALLOC_UAR_IN_UAR"], uar)]
    check(v.cmd("DEALLOC_UAR", fields=dealloc), BAD_RES_STATE, synd("DEALLOC_UAR", 5),
          "DEALLOC_UAR of a page a CQ uses: BAD_RES_STATE")
    check(v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)]), 0, 0, "DESTROY_CQ")
    check(v.cmd("DEALLOC_UAR", fields=dealloc), BAD_RES_STATE, synd("DEALLOC_UAR", 6),
          "DEALLOC_UAR of a page a QP uses: BAD_RES_STATE")
    r = v.modify("RST2INIT_QP", qp, [("rre", 1)], ads=[("vhca_port_num", 1)])
    t.eq(r.status, 0, "the QP's UAR page is still allocated: RST2INIT OK")
    check(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], qp.qpn)]), 0, 0, "DESTROY_QP")
    r = v.d.create_eq(uar, 0, log_size=6, intr=3, base=EQ_BASE + 0x20000)
    t.eq(r.status, 0, "CREATE_EQ on the page")
    eqn = r.f(P["VCX_CREATE_EQ_OUT_EQN"])
    check(v.cmd("DEALLOC_UAR", fields=dealloc), BAD_RES_STATE, synd("DEALLOC_UAR", 4),
          "DEALLOC_UAR of a page an EQ uses: BAD_RES_STATE")
    check(v.cmd("DESTROY_EQ", fields=[(P["VCX_DESTROY_EQ_IN_EQN"], eqn)]), 0, 0, "DESTROY_EQ")
    check(v.cmd("DEALLOC_UAR", fields=dealloc), 0, 0, "DEALLOC_UAR once no object uses it: OK")
    check(v.cmd("DEALLOC_UAR", fields=dealloc), BAD_RES_STATE, synd("DEALLOC_UAR", 3),
          "DEALLOC_UAR twice: BAD_RES_STATE (not allocated)")
    t.ok("UAR %u still used by a CQ" % uar in v.qt.log(), "refusal logged as a guest error")
    check(v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], other.cqn)]), 0, 0,
          "DESTROY_CQ of the QP's CQ")


def lifecycle(v):
    r = v.d.exec(OP["TEARDOWN_HCA"])
    t.eq((r.status, r.syndrome >> 16), (BAD_RES_STATE, OP["TEARDOWN_HCA"]),
         "graceful TEARDOWN_HCA with RDMA objects alive: BAD_RES_STATE")
    t.ok("graceful teardown with" in v.qt.log() and "RDMA objects alive" in v.qt.log(),
         "the guest error log names the RDMA objects")
    r = v.d.exec(OP["TEARDOWN_HCA"], fields=[(P["VCX_TEARDOWN_HCA_IN_PROFILE"], 1)])
    t.eq(r.status, 0, "force-close TEARDOWN_HCA: OK")
    r = v.d.exec(OP["INIT_HCA"])
    r = v.cmd("QUERY_CQ", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], 1)])
    t.eq(r.status, BAD_RES_STATE, "after force close and INIT_HCA no CQ survives")
    t.ok(v.qt.alive(), "QEMU alive")


def main():
    v = Verbs()
    try:
        run_isolated(t, "caps", lambda: caps(v))
        pd = v.alloc_pd()
        run_isolated(t, "pd", lambda: pd_tests(v))
        run_isolated(t, "mkey", lambda: mkey_tests(v, pd))
        run_isolated(t, "cq", lambda: cq_tests(v))
        run_isolated(t, "qp", lambda: qp_tests(v, pd))
        run_isolated(t, "srq", lambda: srq_tests(v, pd))
        run_isolated(t, "uar_refs", lambda: uar_refs(v, pd))
        run_isolated(t, "lifecycle", lambda: lifecycle(v))
    finally:
        v.close()
    t.done()


if __name__ == "__main__":
    main()
