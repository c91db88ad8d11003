#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""UMR WQEs (opcode 0x25): fast registration of a free key created with umr_en (MTT list
through a data segment and inline), RDMA WRITE/READ through the new rkey over
non-contiguous pages with payload checks, access rights of the registration enforced,
local invalidation (UMR setting free) and remote invalidation (SEND_INV) followed by a
remote access error, re-registration after invalidation, and malformed or forbidden UMRs
with their exact CQE syndromes (QP to ERR, key left as it was). A REG_UMR QP (the driver's
own UMR QP, st 0xc) changes the PD and access rights of a key in use in place (rereg).
Indirect MRs (KLM keys registered with several entries, as mlx5_ib's SG_GAPS MRs): data
through them across entries, as remote and local keys, invalidation, and the lists
refused."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, put, run_isolated  # noqa: E402
from vcx_verbs import (P, Verbs, cqe_fields, dseg, inline, raddr,  # noqa: E402
                       cqe_tuple as f, rc_pair as pair, umr_ctrl, run_cases,
                       pd_buf_key_cq as setup)

t = Tap()
SEND, WRITE, READ, SEND_INV, UMR = 0x0a, 0x08, 0x10, 0x01, 0x25
# mkey_mask bits (PRM UMR control segment), as prm-wqe.h restates them
M = {"LEN": 1 << 0, "PAGE_SIZE": 1 << 1, "START_ADDR": 1 << 6, "PD": 1 << 7,
     "EN_RINVAL": 1 << 8, "KEY": 1 << 13, "QPN": 1 << 14, "LR": 1 << 17, "LW": 1 << 18,
     "RR": 1 << 19, "RW": 1 << 20, "A": 1 << 21, "FREE": 1 << 29}
FRWR_MASK = (M["LEN"] | M["PAGE_SIZE"] | M["START_ADDR"] | M["KEY"] | M["EN_RINVAL"] |
             M["LR"] | M["LW"] | M["RR"] | M["RW"] | M["A"] | M["FREE"])
INLINE = 0x80
IOVA = 0x7f0000000100


def mtt_bytes(pages):
    b = b"".join(struct.pack(">Q", p) for p in pages)
    return b + bytes((-len(b)) % 16)


def post_reg(v, qp, pd, key, iova, length, pages, access="lr lw rr rw", mtt_at=None,
             lkey=None, mask=FRWR_MASK, flags=0, xlt_oct=None, ds=None):
    """REG_MR as mlx5 builds it: the list at mtt_at (data segment) or inline."""
    lst = mtt_bytes(pages)
    n = len(lst) // 16 if xlt_oct is None else xlt_oct
    seg = v.mkc(pd, iova, length, access, key=key & 0xff, xlt=n)
    if mtt_at is None:
        tail = lst
        flags |= INLINE
    else:
        v.qt.memwrite(mtt_at, lst)
        tail = dseg(mtt_at, len(lst), lkey)
    return qp.post_send(UMR, umr_ctrl(flags, n, mask) + bytes(seg) + tail, imm=key, ds=ds)


def post_inv(v, qp, key):
    seg = bytearray(64)
    seg[0] = 0x40                   # free
    return qp.post_send(UMR, umr_ctrl(INLINE, 0, M["FREE"]) + bytes(seg), imm=key)


def reg_write_read(v):
    pd, buf, key, cq = setup(v)
    fr = v.create_mkey(pd, 0, 0, access="", free=True, umr_en=True, xlt=4, key=0x10)
    a, b = pair(v, pd, cq)
    pages = [buf + 0x3000, buf + 0x1000, buf + 0x5000]
    rkey = (fr & ~0xff) | 0x11
    a.post_send(WRITE, raddr(IOVA, fr) + inline(b"x"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "a free key refuses remote access before registration")
    a, b = pair(v, pd, cq)
    idx = post_reg(v, a, pd, rkey, IOVA, 0x2e00, pages, mtt_at=buf + 0x8000, lkey=key)
    t.eq([f(e, "opcode", "syndrome", "sop", "wqe_counter", "byte_cnt", "qpn")
          for e in cq.poll_all()], [(0, 0, UMR, idx, 0, a.qpn)],
         "REG_MR UMR (MTT list by data segment): requester CQE, opcode UMR, byte_cnt 0")
    src = bytes((i * 7 + 3) & 0xff for i in range(0x400))
    v.qt.memwrite(buf + 0x9000, src)
    a.post_send(WRITE, raddr(IOVA + 0xe00, rkey) + dseg(buf + 0x9000, 0x400, key))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()], [(0, 0, WRITE)],
         "RDMA WRITE through the new rkey completes")
    t.eq(v.qt.memread(buf + 0x3f00, 0x100) + v.qt.memread(buf + 0x1000, 0x300), src,
         "WRITE payload landed in MTT page 0 (tail) and page 1 (head)")
    pat = bytes((0xa5 ^ i) & 0xff for i in range(0x100))
    v.qt.memwrite(buf + 0x1f80, pat[:0x80])
    v.qt.memwrite(buf + 0x5000, pat[0x80:])
    a.post_send(READ, raddr(IOVA + 0x1e80, rkey) + dseg(buf + 0xa000, 0x100, key))
    t.eq([f(e, "opcode", "syndrome", "sop", "byte_cnt") for e in cq.poll_all()],
         [(0, 0, READ, 0x100)], "RDMA READ through the new rkey completes")
    t.eq(v.qt.memread(buf + 0xa000, 0x100), pat, "READ payload gathered from pages 1 and 2")
    a.post_send(WRITE, raddr(IOVA + 0x2e00 - 4, rkey) + inline(b"12345678"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "WRITE past the registered length: remote access error")

    # local invalidation, then the rkey is dead; register again with a new key byte
    a, b = pair(v, pd, cq)
    a.post_send(WRITE, raddr(IOVA, fr) + inline(b"old"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "the previous key byte (0x10) no longer matches after registration")
    a, b = pair(v, pd, cq)
    idx = post_inv(v, a, rkey)
    t.eq([f(e, "opcode", "syndrome", "sop", "wqe_counter") for e in cq.poll_all()],
         [(0, 0, UMR, idx)], "LOCAL_INV UMR (mask FREE, free = 1): requester CQE")
    a.post_send(WRITE, raddr(IOVA, rkey) + inline(b"dead"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "WRITE through an invalidated rkey: remote access error (0x13)")
    a, b = pair(v, pd, cq)
    rkey2 = (fr & ~0xff) | 0x12
    post_reg(v, a, pd, rkey2, 0x10000, 0x1000, [buf + 0x6000])
    a.post_send(WRITE, raddr(0x10010, rkey2) + inline(b"again"))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()],
         [(0, 0, UMR), (0, 0, WRITE)], "re-registration (inline MTT) after LOCAL_INV works")
    t.eq(v.qt.memread(buf + 0x6010, 5), b"again", "payload through the re-registered key")

    # remote invalidation of the FRWR key by SEND_INV
    b.post_recv([(buf + 0xb000, 64, key)])
    a.post_send(SEND_INV, inline(b"inv"), imm=rkey2)
    got = [f(e, "opcode", "imm", "qpn") for e in cq.poll_all()]
    t.ok((4, rkey2, b.qpn) in got, "SEND_INV of the FRWR rkey: RESP_SEND_INV CQE", got)
    a.post_send(WRITE, raddr(0x10010, rkey2) + inline(b"no"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "WRITE after remote invalidation: remote access error")


def access(v):
    pd, buf, key, cq = setup(v)
    fr = v.create_mkey(pd, 0, 0, access="", free=True, umr_en=True, xlt=2, key=0x20)
    a, b = pair(v, pd, cq)
    post_reg(v, a, pd, fr, IOVA, 0x1000, [buf + 0x2000], access="lr rr")
    v.qt.memwrite(buf + 0x2200, b"readable")
    a.post_send(READ, raddr(IOVA + 0x100, fr) + dseg(buf + 0xc000, 8, key))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()],
         [(0, 0, UMR), (0, 0, READ)], "read-only registration: READ allowed")
    t.eq(v.qt.memread(buf + 0xc000, 8), b"readable", "READ payload")
    a.post_send(WRITE, raddr(IOVA + 0x100, fr) + inline(b"nope"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "read-only registration: WRITE refused with remote access error")
    t.eq(v.qt.memread(buf + 0x2200, 8), b"readable", "memory untouched")


def bad(v):
    pd, buf, key, cq = setup(v)
    pd2 = v.alloc_pd()
    fr = v.create_mkey(pd, 0, 0, access="", free=True, umr_en=True, xlt=2, key=0x30)
    cases = [
        ("REG on a key without umr_en", 0x04,
         lambda a: post_reg(v, a, pd, key, IOVA, 0x1000, [buf])),
        ("REG on a key of another PD", 0x04,
         lambda a: post_reg(v, a, pd, v.create_mkey(pd2, 0, 0, access="", free=True,
                                                    umr_en=True, xlt=2, key=1),
                            IOVA, 0x1000, [buf])),
        # created for 2 octowords: room for 4 (UMR loads in 64-byte units), not 5
        ("REG loading more translations than the key was created for", 0x04,
         lambda a: post_reg(v, a, pd, fr, IOVA, 0x1000, [buf] * 10)),
        ("REG whose length needs more pages than were loaded", 0x04,
         lambda a: post_reg(v, a, pd, fr, IOVA, 0x3000, [buf, buf + 0x1000])),
        ("REG with an MTT list behind an lkey that does not exist", 0x04,
         lambda a: post_reg(v, a, pd, fr, IOVA, 0x1000, [buf], mtt_at=buf + 0x8000,
                            lkey=key ^ 0x300)),
        ("REG with an unaligned MTT entry", 0x04,
         lambda a: post_reg(v, a, pd, fr, IOVA, 0x1000, [buf + 0x80])),
        ("REG with log_page_size 40", 0x04,
         lambda a: a.post_send(UMR, umr_ctrl(INLINE, 1, FRWR_MASK) +
                               bytes(v.mkc(pd, IOVA, 0x1000, log_page=40, key=0x30)) +
                               mtt_bytes([buf]), imm=fr)),
        ("UMR with a mkey_mask bit that cannot be modified (BSF enable)", 0x02,
         lambda a: post_reg(v, a, pd, fr, IOVA, 0x1000, [buf], mask=FRWR_MASK | 1 << 12)),
        ("UMR with an unknown flag", 0x02,
         lambda a: post_reg(v, a, pd, fr, IOVA, 0x1000, [buf], flags=0x01)),
        ("UMR shorter than its three segments", 0x02,
         lambda a: a.post_send(UMR, umr_ctrl(INLINE, 0, M["FREE"]), imm=fr)),
        ("UMR with inline translations beyond the WQE", 0x02,
         lambda a: post_reg(v, a, pd, fr, IOVA, 0x1000, [buf], xlt_oct=2)),
    ]
    for desc, synd, post in cases:
        a, b = pair(v, pd, cq)
        post(a)
        got = [f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()]
        t.eq(got[:1], [(0xd, synd, UMR)], "%s: error CQE syndrome 0x%02x" % (desc, synd))
        t.eq(v.qp_state(a), 6, "%s: QP in ERR" % desc)
    a, b = pair(v, pd, cq)
    a.post_send(WRITE, raddr(IOVA, fr) + inline(b"x"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "after the failed UMRs the key is still free")
    a, b = pair(v, pd, cq)
    post_reg(v, a, pd, fr, IOVA, 0x1000, [buf + 0x4000])
    post_reg(v, a, pd, fr, IOVA, 0x1000, [buf + 0x5000])
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()],
         [(0, 0, UMR), (0xd, 0x04, UMR)],
         "REG of a key that is already registered: local protection error")


def create_klm(v, pd, key, xlt):
    """A KLM key as mlx5_ib allocates an SG_GAPS MR: free, umr_en, xlt KLM entries."""
    m = v.mkc(pd, 0, 0, "lr lw", mode=2, key=key, free=True, umr_en=True)
    put(m, P["VCX_MKC_TRANSLATIONS_OCTWORD_SIZE"], xlt)
    r = v.cmd("CREATE_MKEY", in_len=0x110, payload={0x10: m})
    assert r.status == 0, "CREATE_MKEY (KLM) 0x%x 0x%x" % (r.status, r.syndrome)
    return r.f(P["VCX_CREATE_MKEY_OUT_MKEY_INDEX"]) << 8 | key


def post_klm_reg(v, qp, pd, key, iova, length, entries, access="lr lw rr rw", at=None,
                 lkey=None, pad_to=4):
    """REG_MR of an SG_GAPS MR as mlx5_ib posts it: FRWR mask (PAGE_SIZE included), the
    free-state check 0x20, KLM entries (byte_count, key, address) padded to 64 bytes,
    inline or behind a data segment."""
    lst = b"".join(struct.pack(">IIQ", n, k, a) for n, k, a in entries)
    lst += bytes((-len(lst)) % (16 * pad_to))
    seg = v.mkc(pd, iova, length, access, mode=2, key=key & 0xff)
    if at is None:
        return qp.post_send(UMR, umr_ctrl(0x20 | INLINE, len(lst) // 16, FRWR_MASK) +
                            bytes(seg) + lst, imm=key)
    v.qt.memwrite(at, lst)
    return qp.post_send(UMR, umr_ctrl(0x20, len(lst) // 16, FRWR_MASK) + bytes(seg) +
                        dseg(at, len(lst), lkey), imm=key)


def indirect(v):
    """Indirect MRs (KLM keys fast-registered with several entries, mlx5_ib's SG_GAPS
    MRs): RDMA WRITE, READ and a local SEND through them, across entries; their limits,
    local and remote invalidation, and the registrations refused."""
    pd, buf, key, cq = setup(v)
    pd2 = v.alloc_pd()
    other = v.create_mkey(pd2, buf, 0x10000)
    ik = create_klm(v, pd, 0x40, 8)
    rkey = (ik & ~0xff) | 0x41
    a, b = pair(v, pd, cq)
    a.post_send(WRITE, raddr(IOVA, ik) + inline(b"x"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "a free KLM key refuses remote access before registration")
    a, b = pair(v, pd, cq)
    ents = [(100, key, buf + 0x100), (200, key, buf + 0x800), (60, key, buf + 0x3000)]
    idx = post_klm_reg(v, a, pd, rkey, IOVA, 360, ents)
    t.eq([f(e, "opcode", "syndrome", "sop", "wqe_counter") for e in cq.poll_all()],
         [(0, 0, UMR, idx)], "REG_MR of a KLM key, 3 entries inline: requester CQE")
    src = bytes((i * 13 + 5) & 0xff for i in range(360))
    v.qt.memwrite(buf + 0x9000, src)
    a.post_send(WRITE, raddr(IOVA, rkey) + dseg(buf + 0x9000, 360, key))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0)],
         "RDMA WRITE of 360 bytes through the indirect rkey")
    t.eq([v.qt.memread(buf + 0x100, 100), v.qt.memread(buf + 0x800, 200),
          v.qt.memread(buf + 0x3000, 60)], [src[:100], src[100:300], src[300:]],
         "the WRITE split over the three entries' ranges")
    a.post_send(READ, raddr(IOVA + 50, rkey) + dseg(buf + 0xa000, 290, key))
    t.eq([f(e, "opcode", "syndrome", "byte_cnt") for e in cq.poll_all()], [(0, 0, 290)],
         "RDMA READ of 290 bytes across all three entries")
    t.eq(v.qt.memread(buf + 0xa000, 290), src[50:340], "READ payload in order")
    b.post_recv([(buf + 0xb000, 256, key)])
    a.post_send(SEND, dseg(IOVA + 90, 20, rkey))
    got = [f(e, "opcode", "syndrome", "byte_cnt") for e in cq.poll_all()]
    t.eq((sorted(got), v.qt.memread(buf + 0xb000, 20)),
         (sorted([(0, 0, 20), (2, 0, 20)]), src[90:110]),
         "a SEND gathered through it as a local key, across entries 0 and 1")
    a.post_send(WRITE, raddr(IOVA + 350, rkey) + inline(b"0123456789ab"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "WRITE past its length: remote access error")

    a, b = pair(v, pd, cq)
    post_inv(v, a, rkey)
    a.post_send(WRITE, raddr(IOVA, rkey) + inline(b"dead"))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()],
         [(0, 0, UMR), (0xd, 0x13, WRITE)], "LOCAL_INV, then the rkey is refused")
    a, b = pair(v, pd, cq)
    rkey2 = (ik & ~0xff) | 0x42
    lst_at = buf + 0xc000
    post_klm_reg(v, a, pd, rkey2, 0x5000, 5000, [(4000, key, buf + 0x4000),
                                                  (1000, key, buf + 0x200)],
                 at=lst_at, lkey=key)
    a.post_send(WRITE, raddr(0x5000 + 3998, rkey2) + inline(b"wxyz"))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()],
         [(0, 0, UMR), (0, 0, WRITE)],
         "registered again after LOCAL_INV, the list by data segment; a WRITE across")
    t.eq((v.qt.memread(buf + 0x4000 + 3998, 2), v.qt.memread(buf + 0x200, 2)),
         (b"wx", b"yz"), "its bytes at the end of entry 0 and the start of entry 1")
    b.post_recv([(buf + 0xd000, 64, key)])
    a.post_send(SEND_INV, inline(b"inv"), imm=rkey2)
    got = [f(e, "opcode", "imm") for e in cq.poll_all()]
    t.ok((4, rkey2) in got, "SEND_INV of the indirect rkey: RESP_SEND_INV CQE", got)
    a.post_send(WRITE, raddr(0x5000, rkey2) + inline(b"no"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "WRITE after remote invalidation: remote access error")

    cases = [
        ("entries covering less than the length", [(100, key, buf)], 200),
        ("an entry beyond its key", [(0x200, key, buf + 0xff00)], 0x200),
        ("an entry through a key of another PD", [(100, other, buf)], 100),
        ("an entry of 0 bytes", [(0, key, buf), (100, key, buf)], 100),
        ("an entry through another KLM key", [(100, ik, 0)], 100),
        ("more entries than the key was created for", [(8, key, buf)] * 12, 96),
    ]
    for desc, ents, length in cases:
        a, b = pair(v, pd, cq)
        post_klm_reg(v, a, pd, (ik & ~0xff) | 0x43, IOVA, length, ents)
        t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()][:1],
             [(0xd, 0x04, UMR)], "REG_MR of a KLM key with %s: local protection error" %
             desc)
    a, b = pair(v, pd, cq)
    post_klm_reg(v, a, pd, (ik & ~0xff) | 0x44, IOVA, 100, [(100, key, buf)])
    post_klm_reg(v, a, pd, (ik & ~0xff) | 0x45, IOVA, 100, [(100, key, buf)])
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()],
         [(0, 0, UMR), (0xd, 0x04, UMR)],
         "REG_MR of a KLM key in use (check 0x20: it must be free): local protection error")


CHECK_NOT_FREE = 0x40
REREG_MASK = M["PD"] | M["LR"] | M["LW"] | M["RR"] | M["RW"] | M["A"]


def reg_umr_up(v, pd, cq):
    q = v.create_qp("REG_UMR", pd, cq, None, zero_rq=True)
    for op, f, ads in (("RST2INIT_QP", [], [("vhca_port_num", 1)]),
                       ("INIT2RTR_QP", [("mtu", 1), ("log_msg_max", 12)], []),
                       ("RTR2RTS_QP", [], [])):
        r = v.modify(op, q, f, ads)
        assert r.status == 0, "%s of REG_UMR QP: 0x%x 0x%x" % (op, r.status, r.syndrome)
    return q


def post_rereg(v, q, key, pd, access, flags=CHECK_NOT_FREE, mask=REREG_MASK):
    seg = v.mkc(pd, 0, 0, access, key=key & 0xff)
    return q.post_send(UMR, umr_ctrl(INLINE | flags, 0, mask) + bytes(seg), imm=key)


def reg_umr_qp(v):
    pd, buf, key, cq = setup(v)
    pd2, pd_umr = v.alloc_pd(), v.alloc_pd()
    mr = v.create_mkey(pd, buf + 0x4000, 0x1000, access="lr lw rr rw", umr_en=True,
                       key=0x44)
    r = v.create_qp("REG_UMR", pd_umr, cq, cq)
    t.eq(r.status, 3, "CREATE_QP REG_UMR with a receive queue: BAD_PARAM")
    q = reg_umr_up(v, pd_umr, cq)
    t.eq(v.qp_state(q), 3, "REG_UMR QP reaches RTS with port, MTU and message size only")

    idx = post_rereg(v, q, mr, pd2, "lr lw rr")
    t.eq([f(e, "opcode", "syndrome", "sop", "wqe_counter", "qpn") for e in cq.poll_all()],
         [(0, 0, UMR, idx, q.qpn)], "REG_UMR QP: UMR moving a key of another PD to pd2")
    a, b = pair(v, pd, cq)
    a.post_send(WRITE, raddr(buf + 0x4000, mr) + inline(b"old pd"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "the key no longer serves QPs of its old PD")
    c, d = pair(v, pd2, cq)
    v.qt.memwrite(buf + 0x4100, b"same key")
    key2 = v.create_mkey(pd2, buf + 0xc000, 0x1000)
    c.post_send(READ, raddr(buf + 0x4100, mr) + dseg(buf + 0xc000, 8, key2))
    t.eq([f(e, "opcode", "syndrome", "sop") for e in cq.poll_all()], [(0, 0, READ)],
         "same rkey, new PD: READ allowed (rr kept)")
    t.eq(v.qt.memread(buf + 0xc000, 8), b"same key", "READ payload through the moved key")
    c.post_send(WRITE, raddr(buf + 0x4100, mr) + inline(b"nope"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x13)],
         "remote write right removed: remote access error")
    t.eq(v.qt.memread(buf + 0x4100, 8), b"same key", "memory untouched")

    # the key holds a reference on the PD it is in, wherever a UMR moved it
    pd3 = v.alloc_pd()
    post_rereg(v, q, mr, pd3, "lr")
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0)], "UMR to pd3")
    t.eq(v.cmd("DEALLOC_PD", fields=[(P["VCX_DEALLOC_PD_IN_PD"], pd3)]).status, 9,
         "DEALLOC_PD of pd3 refused (BAD_RES_STATE) while the moved key is in it")
    post_rereg(v, q, mr, pd, "lr lw rr rw")
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0)],
         "UMR moves the key back with remote write")
    t.eq(v.cmd("DEALLOC_PD", fields=[(P["VCX_DEALLOC_PD_IN_PD"], pd3)]).status, 0,
         "pd3 holds nothing any more: DEALLOC_PD succeeds")
    a, b = pair(v, pd, cq)
    a.post_send(WRITE, raddr(buf + 0x4200, mr) + inline(b"back home"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0)],
         "WRITE through the unchanged rkey in its first PD")
    t.eq(v.qt.memread(buf + 0x4200, 9), b"back home", "WRITE payload")

    post_rereg(v, q, mr, 0xabcde, "lr")
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x04)],
         "UMR moving a key to a PD that does not exist: local protection error")
    q = reg_umr_up(v, pd_umr, cq)
    q.post_send(SEND, inline(b"x"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x02)],
         "SEND on a REG_UMR QP: local QP operation error")
    a, b = pair(v, pd, cq)
    post_rereg(v, a, mr, pd2, "lr")
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x04)],
         "an RC QP cannot move a key to another PD")
    a, b = pair(v, pd, cq)
    a.post_send(WRITE, raddr(buf + 0x4300, mr) + inline(b"kept"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0)],
         "after the refused UMRs the key is as it was")


def umr_qp_no_pd(v):
    """mlx5_ib's UMR QP: REG_UMR with pd 0 (none). It enables a free cached key (CHECK_FREE,
    0x20: the key must be free) with the translation list read through its own PD's key,
    and CHECK_NOT_FREE (0x40) refuses a free key."""
    pd, buf, key, cq = setup(v)
    pd_x = v.alloc_pd()                 # mlx5_ib's umrc.pd, whose key reads the lists
    xkey = v.create_mkey(pd_x, buf, 0x10000)
    q = reg_umr_up(v, 0, cq)
    t.eq(v.qp_state(q), 3, "CREATE_QP REG_UMR with pd 0: created, reaches RTS")
    # mlx5_ib's smallest cached key: 4 MTTs (2 octowords); it loads 64 bytes (8 MTTs, the
    # first one used, the rest zero padding)
    fr = v.create_mkey(pd, 0, 0, access="", free=True, umr_en=True, xlt=2, key=0x21)
    rkey = (fr & ~0xff) | 0x22
    pages = [buf + 0x6000] + [0] * 7
    post_reg(v, q, pd, rkey, IOVA, 0x1000, pages, mtt_at=buf + 0x8000, lkey=xkey,
             mask=FRWR_MASK | M["PD"], flags=0x40)
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x04)],
         "CHECK_NOT_FREE (0x40) on a free key: local protection error")
    q = reg_umr_up(v, 0, cq)
    idx = post_reg(v, q, pd, rkey, IOVA, 0x1000, pages, mtt_at=buf + 0x8000,
                   lkey=xkey, mask=FRWR_MASK | M["PD"], flags=0x20)
    t.eq([f(e, "opcode", "syndrome", "sop", "wqe_counter") for e in cq.poll_all()],
         [(0, 0, UMR, idx)], "CHECK_FREE (0x20) on the free key, 64 bytes of list into its "
         "2 octowords, through a key of another PD: registered")
    a, b = pair(v, pd, cq)
    a.post_send(WRITE, raddr(IOVA + 0x10, rkey) + inline(b"via the UMR QP"))
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0)],
         "RDMA WRITE through the key it registered")
    t.eq(v.qt.memread(buf + 0x6000 + (IOVA + 0x10) % 4096, 14), b"via the UMR QP",
         "WRITE payload in the key's page")


def main():
    run_cases(t, (("reg_write_read", reg_write_read), ("access", access),
                  ("indirect", indirect),
                  ("umr_qp_no_pd", umr_qp_no_pd),
                  ("bad", bad), ("reg_umr_qp", reg_umr_qp)))


if __name__ == "__main__":
    main()
