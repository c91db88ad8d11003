#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Memory windows: KLM keys created free with umr_en (as mlx5_ib allocates them), bound by
UMR WQEs in the libmlx5 layout (UMR control, mkey segment, one inline KLM entry naming the
MR), type 1 (any QP of the PD, rebind and zero-length unbind) and type 2 (bound to the
binding QP, CHECK_FREE, invalidation by UMR with CHECK_QPN and by SEND_INV), RDMA WRITE /
READ through the window with payload checks, range and rights refused, the window never
a local key, DESTROY_MKEY of a bound window, the MR destroyed under a window, and bad binds
with their exact CQE syndromes (0x06 MW bind error, 0x02 malformed), QP to ERR, window
unchanged."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, put, run_isolated  # noqa: E402
from vcx_verbs import (P, Verbs, cqe_fields, dseg, inline, raddr,  # noqa: E402
                       cqe_tuple as f, rc_pair as pair, umr_ctrl, run_cases,
                       pd_buf_key_cq as setup, alloc_qc, dealloc_qc, query_qc,
                       set_counter)

t = Tap()
SEND, WRITE, READ, SEND_INV, UMR = 0x0a, 0x08, 0x10, 0x01, 0x25
M = {"LEN": 1 << 0, "START_ADDR": 1 << 6, "PD": 1 << 7, "KEY": 1 << 13, "QPN": 1 << 14,
     "LR": 1 << 17, "LW": 1 << 18, "RR": 1 << 19, "RW": 1 << 20, "A": 1 << 21,
     "FREE": 1 << 29}
BIND_MASK = (M["FREE"] | M["KEY"] | M["LEN"] | M["START_ADDR"] | M["LW"] | M["RR"] |
             M["RW"] | M["A"])
UNBIND_MASK = M["FREE"] | M["KEY"]
INLINE, CHECK_FREE, TOFF, CHECK_QPN = 0x80, 0x20, 0x10, 0x08
MW_BIND_ERR, QP_OP_ERR, REM_ACC, REM_INV = 0x06, 0x02, 0x13, 0x12


def create_mw(v, pd, type2, key=0x10, raw=False, free=True, xlt=4, xlt_actual=0):
    m = v.mkc(pd, 0, 0, "lr", mode=2, key=key, free=free, umr_en=True)
    put(m, P["VCX_MKC_TRANSLATIONS_OCTWORD_SIZE"], xlt)
    put(m, P["VCX_MKC_EN_RINVAL"], int(type2))
    r = v.cmd("CREATE_MKEY", in_len=0x110 + xlt_actual * 16,
              fields=[(P["VCX_CREATE_MKEY_IN_XLT_ACTUAL"], xlt_actual)],
              payload={0x10: m, 0x110: bytes(xlt_actual * 16)})
    if raw:
        return r
    assert r.status == 0, "CREATE_MKEY (window) 0x%x 0x%x" % (r.status, r.syndrome)
    return r.f(P["VCX_CREATE_MKEY_OUT_MKEY_INDEX"]) << 8 | key


def post_bind(v, qp, pd, mw, new_key, mr, addr, length, access, type2=False, qpn=None,
              klm_len=None, mask=None, flags=None, xlt=4, klm_pad=48):
    """A bind as libmlx5 builds it: the window's current key in imm, new key byte in the
    mkey segment, one KLM entry padded to 64 bytes."""
    seg = v.mkc(pd, addr, length, access, mode=2, key=new_key & 0xff)
    put(seg, P["VCX_MKC_QPN"], (qp.qpn if type2 else 0xffffff) if qpn is None else qpn)
    fl = INLINE | TOFF | (CHECK_FREE if type2 else 0) if flags is None else flags
    mk = BIND_MASK | (M["QPN"] if type2 else 0) if mask is None else mask
    klm = struct.pack(">IIQ", length if klm_len is None else klm_len, mr, addr) + bytes(klm_pad)
    return qp.post_send(UMR, umr_ctrl(fl, xlt, mk) + bytes(seg) + klm, imm=mw)


def post_unbind(v, qp, pd, mw, new_key, type2=False):
    """Type 1: a zero-length bind; type 2: LOCAL_INV as libmlx5 posts it."""
    seg = v.mkc(pd, 0, 0, "", mode=2, key=new_key & 0xff, free=True)
    fl = INLINE | TOFF | (CHECK_QPN if type2 else 0)
    mask = UNBIND_MASK | (M["QPN"] if type2 else 0)
    return qp.post_send(UMR, umr_ctrl(fl, 0, mask) + bytes(seg), imm=mw)


def nk(key, byte):
    return (key & ~0xff) | byte


def type1(v):
    pd, buf, key, cq = setup(v)
    mr = v.create_mkey(pd, buf + 0x4000, 0x2000, access="lr lw", key=0x31)
    mw = create_mw(v, pd, False, key=0x10)
    a, b = pair(v, pd, cq)
    a.post_send(WRITE, raddr(buf + 0x4800, mw) + inline(b"x"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, REM_ACC)],
         "type 1: an unbound window refuses remote access")
    a, b = pair(v, pd, cq)
    w1 = nk(mw, 0x11)
    idx = post_bind(v, a, pd, mw, w1, mr, buf + 0x4800, 0x400, "rr rw")
    t.eq([f(e, "opcode", "syndrome", "sop", "wqe_counter", "byte_cnt", "qpn")
          for e in cq.poll_all()], [(0, 0, UMR, idx, 0, a.qpn)],
         "type 1 bind (UMR, one inline KLM): requester CQE, opcode UMR, byte_cnt 0")
    src = bytes((i * 13 + 5) & 0xff for i in range(0x100))
    v.qt.memwrite(buf + 0x9000, src)
    a.post_send(WRITE, raddr(buf + 0x4900, w1) + dseg(buf + 0x9000, 0x100, key))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()], [(0, 0, WRITE)],
         "RDMA WRITE through the window's rkey completes")
    t.eq(v.qt.memread(buf + 0x4900, 0x100), src, "WRITE payload landed in the MR")
    v.qt.memwrite(buf + 0x4bf0, b"window-read-data")
    a.post_send(READ, raddr(buf + 0x4bf0, w1) + dseg(buf + 0xa000, 16, key))
    t.eq([f(e, "opcode", "syndrome", "sop", "byte_cnt") for e in cq.poll_all()],
         [(0, 0, READ, 16)], "RDMA READ through the window completes")
    t.eq(v.qt.memread(buf + 0xa000, 16), b"window-read-data", "READ payload")
    c, d = pair(v, pd, cq)
    c.post_send(WRITE, raddr(buf + 0x4800, w1) + inline(b"other qp"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0)],
         "type 1: another QP of the PD may use the window")
    t.eq(v.qt.memread(buf + 0x4800, 8), b"other qp", "payload from the other QP")
    v.qt.memwrite(buf + 0x4c00, b"OUTSIDE!")
    a.post_send(WRITE, raddr(buf + 0x4bfc, w1) + inline(b"12345678"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, REM_ACC)],
         "WRITE crossing the window's end (inside the MR): remote access error")
    t.eq(v.qt.memread(buf + 0x4bfc, 12), b"dataOUTSIDE!",
         "nothing written at the window's end")
    a, b = pair(v, pd, cq)
    a.post_send(WRITE, raddr(buf + 0x4800, mw) + inline(b"old"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, REM_ACC)],
         "the window's previous key byte no longer matches")
    a, b = pair(v, pd, cq)
    a.post_send(WRITE, raddr(buf + 0x100, key) + dseg(buf + 0x4800, 4, w1))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x04)],
         "a window used as a local key: local protection error")

    # rebind (type 1 needs no unbind) read-only, with a new key byte
    a, b = pair(v, pd, cq)
    w2 = nk(mw, 0x12)
    post_bind(v, a, pd, w1, w2, mr, buf + 0x4000, 0x2000, "rr")
    v.qt.memwrite(buf + 0x5ff8, b"tailbyte")
    a.post_send(READ, raddr(buf + 0x5ff8, w2) + dseg(buf + 0xa100, 8, key))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()],
         [(0, 0, UMR), (0, 0, READ)], "type 1 rebind over the whole MR: READ at its end")
    t.eq(v.qt.memread(buf + 0xa100, 8), b"tailbyte", "READ payload after rebind")
    a.post_send(WRITE, raddr(buf + 0x5000, w2) + inline(b"nope"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, REM_ACC)],
         "read-only window: WRITE refused")
    t.eq(v.qt.memread(buf + 0x5000, 4), bytes(4), "memory untouched")
    a, b = pair(v, pd, cq)
    post_unbind(v, a, pd, w2, 0x13)
    a.post_send(READ, raddr(buf + 0x5ff8, w2) + dseg(buf + 0xa100, 8, key))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()],
         [(0, 0, UMR), (0xd, REM_ACC, READ)], "zero-length bind unbinds: READ refused")

    # MW with remote write on an MR without local write: bind error; read-only works
    mr_ro = v.create_mkey(pd, buf + 0x6000, 0x1000, access="lr rr", key=0x32)
    a, b = pair(v, pd, cq)
    qc = alloc_qc(v)
    set_counter(v, a, qc)
    post_bind(v, a, pd, mw, nk(mw, 0x14), mr_ro, buf + 0x6000, 0x100, "rw")
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()],
         [(0xd, MW_BIND_ERR, UMR)], "remote-write window on an MR without lw: MW bind error")
    t.eq(v.qp_state(a), 6, "QP in ERR after the bind error")
    t.eq(query_qc(v, qc, "req_mw_binding", "req_cqe_error"), (1, 1),
         "the binding QP's Q counter: req_mw_binding 1, req_cqe_error 1")
    dealloc_qc(v, qc)
    a, b = pair(v, pd, cq)
    post_bind(v, a, pd, mw, nk(mw, 0x15), mr_ro, buf + 0x6000, 0x100, "rr")
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0)],
         "read-only window on that MR binds")

    # the MR destroyed under a bound window: access refused, no crash
    t.eq(v.cmd("DESTROY_MKEY", fields=[(P["VCX_DESTROY_MKEY_IN_MKEY_INDEX"],
                                         mr_ro >> 8)]).status, 0, "DESTROY_MKEY of the MR")
    a.post_send(READ, raddr(buf + 0x6000, nk(mw, 0x15)) + dseg(buf + 0xa200, 8, key))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, REM_ACC)],
         "window over a destroyed MR: remote access error")


def type2(v):
    pd, buf, key, cq = setup(v)
    mr = v.create_mkey(pd, buf + 0x4000, 0x2000, access="lr lw", key=0x41)
    mw = create_mw(v, pd, True, key=0x20)
    a, b = pair(v, pd, cq)
    w1 = nk(mw, 0x21)
    post_bind(v, a, pd, mw, w1, mr, buf + 0x4400, 0x200, "rr rw", type2=True)
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()], [(0, 0, UMR)],
         "type 2 bind (mask QPN = the QP, CHECK_FREE): completes")
    b.post_send(WRITE, raddr(buf + 0x4500, w1) + inline(b"to the bound QP"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0)],
         "WRITE arriving at the QP the window is bound to completes")
    t.eq(v.qt.memread(buf + 0x4500, 15), b"to the bound QP", "WRITE payload")
    c, d = pair(v, pd, cq)
    c.post_send(WRITE, raddr(buf + 0x4500, w1) + inline(b"XXXX"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, REM_ACC)],
         "WRITE arriving at another QP of the PD: remote access error")
    t.eq(v.qt.memread(buf + 0x4500, 4), b"to t", "memory untouched")
    c, d = pair(v, pd, cq)
    post_unbind(v, d, pd, w1, 0, type2=True)
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()],
         [(0xd, MW_BIND_ERR, UMR)], "LOCAL_INV (CHECK_QPN) from another QP: MW bind error")
    b.post_send(WRITE, raddr(buf + 0x4510, w1) + inline(b"still"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0)],
         "the window stays bound after the refused invalidation")
    post_unbind(v, a, pd, w1, 0, type2=True)
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()], [(0, 0, UMR)],
         "LOCAL_INV (mask FREE|KEY|QPN, CHECK_QPN) from the bound QP completes")
    b.post_send(WRITE, raddr(buf + 0x4510, w1) + inline(b"dead"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, REM_ACC)],
         "WRITE after local invalidation: remote access error")
    t.eq(v.qt.memread(buf + 0x4510, 5), b"still", "memory untouched")

    a, b = pair(v, pd, cq)
    w2 = nk(mw, 0x22)
    post_bind(v, a, pd, mw, w2, mr, buf + 0x4400, 0x200, "rr rw", type2=True)
    post_bind(v, a, pd, w2, nk(mw, 0x23), mr, buf + 0x4400, 0x200, "rr", type2=True)
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()],
         [(0, 0, UMR), (0xd, MW_BIND_ERR, UMR)],
         "type 2 bind of a bound window (CHECK_FREE): MW bind error")
    a, b = pair(v, pd, cq)
    b.post_send(WRITE, raddr(buf + 0x4400, w2) + inline(b"x"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, REM_ACC)],
         "the window stays bound to the QP in ERR: new QPs cannot use it")
    # it is still bound (to the old QP): LOCAL_INV from the new QP fails; SEND_INV too
    a, b = pair(v, pd, cq)
    a.post_recv([(buf + 0xb000, 64, key)])
    b.post_send(SEND_INV, inline(b"inv"), imm=w2)
    got = [f(e, "opcode", "syndrome") for e in cq.poll_all()]
    t.ok((0xd, REM_INV) in got,
         "SEND_INV of a window bound to another QP: requester remote invalid request", got)

    # bind then SEND_INV at the bound QP (the responder)
    mw2 = create_mw(v, pd, True, key=0x30)
    a, b = pair(v, pd, cq)
    w3 = nk(mw2, 0x31)
    post_bind(v, a, pd, mw2, w3, mr, buf + 0x4000, 0x100, "rw", type2=True)
    a.post_recv([(buf + 0xb000, 64, key)])
    b.post_send(SEND_INV, inline(b"inv"), imm=w3)
    got = [f(e, "opcode", "imm", "qpn") for e in cq.poll_all()]
    t.ok((4, w3, a.qpn) in got, "SEND_INV of the type 2 window: RESP_SEND_INV CQE", got)
    b.post_send(WRITE, raddr(buf + 0x4000, w3) + inline(b"no"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, REM_ACC)],
         "WRITE after remote invalidation: remote access error")
    a, b = pair(v, pd, cq)
    post_bind(v, a, pd, w3, nk(mw2, 0x32), mr, buf + 0x4000, 0x100, "rw", type2=True)
    b.post_send(WRITE, raddr(buf + 0x4000, nk(mw2, 0x32)) + inline(b"rebound"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0, ), (0, 0)],
         "after SEND_INV the window is free: type 2 bind and WRITE complete")
    t.eq(v.qt.memread(buf + 0x4000, 7), b"rebound", "payload through the rebound window")

    # type 1 window (en_rinval 0): SEND_INV refused
    mw1 = create_mw(v, pd, False, key=0x40)
    a, b = pair(v, pd, cq)
    post_bind(v, a, pd, mw1, nk(mw1, 0x41), mr, buf + 0x4000, 0x100, "rw")
    a.post_recv([(buf + 0xb000, 64, key)])
    b.post_send(SEND_INV, inline(b"inv"), imm=nk(mw1, 0x41))
    got = [f(e, "opcode", "syndrome", "qpn") for e in cq.poll_all()]
    t.ok((0xd, REM_INV, b.qpn) in got, "SEND_INV of a type 1 window: remote invalid request",
         got)

    # DESTROY_MKEY of a bound window
    mw3 = create_mw(v, pd, True, key=0x50)
    a, b = pair(v, pd, cq)
    post_bind(v, a, pd, mw3, nk(mw3, 0x51), mr, buf + 0x4000, 0x100, "rw", type2=True)
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0)], "bind before destroy")
    t.eq(v.cmd("DESTROY_MKEY", fields=[(P["VCX_DESTROY_MKEY_IN_MKEY_INDEX"],
                                         mw3 >> 8)]).status, 0,
         "DESTROY_MKEY of a bound window succeeds")
    b.post_send(WRITE, raddr(buf + 0x4000, nk(mw3, 0x51)) + inline(b"gone"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, REM_ACC)],
         "WRITE through a destroyed window: remote access error")


def bad(v):
    pd, buf, key, cq = setup(v)
    pd2 = v.alloc_pd()
    mr = v.create_mkey(pd, buf + 0x4000, 0x2000, access="lr lw", key=0x61)
    mr2 = v.create_mkey(pd2, buf + 0x4000, 0x2000, access="lr lw", key=0x62)
    mw = create_mw(v, pd, True, key=0x60)
    mwpd2 = create_mw(v, pd2, False, key=0x70)
    base = buf + 0x4000
    cases = [
        ("bind to an MR of another PD", MW_BIND_ERR,
         lambda a: post_bind(v, a, pd, mw, mw, mr2, base, 0x100, "rw")),
        ("window range beyond the MR", MW_BIND_ERR,
         lambda a: post_bind(v, a, pd, mw, mw, mr, base + 0x1f00, 0x200, "rw")),
        ("window starting before the MR", MW_BIND_ERR,
         lambda a: post_bind(v, a, pd, mw, mw, mr, base - 0x10, 0x100, "rw")),
        ("KLM byte_count other than the window's length", MW_BIND_ERR,
         lambda a: post_bind(v, a, pd, mw, mw, mr, base, 0x100, "rw", klm_len=0x80)),
        ("KLM naming a key that does not exist", MW_BIND_ERR,
         lambda a: post_bind(v, a, pd, mw, mw, mr ^ 0x400, base, 0x100, "rw")),
        ("KLM naming another window", MW_BIND_ERR,
         lambda a: post_bind(v, a, pd, mw, mw, mw, base, 0x100, "rw")),
        ("window of another PD", MW_BIND_ERR,
         lambda a: post_bind(v, a, pd, mwpd2, mwpd2, mr, base, 0x100, "rw")),
        ("type 2 bind naming another QP", MW_BIND_ERR,
         lambda a: post_bind(v, a, pd, mw, mw, mr, base, 0x100, "rw", type2=True,
                             qpn=a.qpn ^ 1)),
        ("bind with mask PD", QP_OP_ERR,
         lambda a: post_bind(v, a, pd, mw, mw, mr, base, 0x100, "rw",
                             mask=BIND_MASK | M["PD"])),
        ("bind with a KLM list by data segment (no INLINE)", QP_OP_ERR,
         lambda a: post_bind(v, a, pd, mw, mw, mr, base, 0x100, "rw", flags=TOFF)),
        ("bind with KLM octowords beyond the WQE", QP_OP_ERR,
         lambda a: post_bind(v, a, pd, mw, mw, mr, base, 0x100, "rw", klm_pad=0)),
        ("bind with more KLM octowords than the window holds", QP_OP_ERR,
         lambda a: post_bind(v, a, pd, mw, mw, mr, base, 0x100, "rw", xlt=8,
                             klm_pad=112)),
    ]
    for desc, synd, post in cases:
        a, b = pair(v, pd, cq)
        post(a)
        got = [f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()]
        t.eq(got[:1], [(0xd, synd, UMR)], "%s: error CQE syndrome 0x%02x" % (desc, synd))
        t.eq(v.qp_state(a), 6, "%s: QP in ERR" % desc)
    a, b = pair(v, pd, cq)
    b.post_send(WRITE, raddr(base, mw) + inline(b"x"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, REM_ACC)],
         "after the failed binds the window is still unbound")
    a, b = pair(v, pd, cq)
    post_bind(v, a, pd, mw, mw, mr, base, 0x100, "rw", type2=True)
    b.post_send(WRITE, raddr(base + 0x10, mw) + inline(b"finally"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0), (0, 0)],
         "a good bind of the same window then works")
    t.eq(v.qt.memread(base + 0x10, 7), b"finally", "payload")

    for desc, kw in (("not free", dict(free=False)), ("with initial KLMs", dict(xlt_actual=1)),
                     ("with no translation room", dict(xlt=0))):
        r = create_mw(v, pd, True, raw=True, **kw)
        t.eq(r.status, 3, "CREATE_MKEY KLM %s: BAD_PARAM" % desc)


def main():
    run_cases(t, (("type1", type1), ("type2", type2), ("bad", bad)))


if __name__ == "__main__":
    main()
