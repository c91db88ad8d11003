#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""CQ resize (MODIFY_CQ op_mod 1), as ConnectX firmware does it and as mlx5_ib /
libmlx5 consume it: the cq_resize capability; a RESIZE_CQ CQE (opcode 5) written into the
OLD ring at the producer position; later CQEs in the new ring at producer & (new size - 1)
with the owner bit of the new size; the CQEs software had not polled left byte for byte in
the old ring; growing, shrinking, 128-byte CQEs and wrap-around in the new ring with no CQE
lost or duplicated; QUERY_CQ after a resize; refused inputs (size out of range, a new size
below the outstanding CQEs, an old ring that is full, bad PAS, unknown field-select bits,
umem, another CQE size, a CQ in error, a ring the device cannot write) with the exact
status and syndrome, leaving the CQ as it was."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, get, put, run_isolated  # noqa: E402
from vcx_verbs import OP, P, Verbs, cqe_fields, dseg, cqe_tuple as f, run_cases  # noqa: E402

t = Tap()
BAD_PARAM, BAD_RES_STATE, BAD_SIZE, BAD_INPUT_LEN = 0x03, 0x09, 0x40, 0x50
NOP, SEND_IMM = 0x00, 0x0b
RESIZE = 5
SEL_ALL = 0x7       # log_cq_size | page_offset | log_page_size (what mlx5_ib sends)


def synd(n):
    return OP["MODIFY_CQ"] << 16 | n


def check(r, status, syndrome, desc):
    t.eq((r.deliv, r.status, r.syndrome), (0, status, syndrome), desc)


def off_bytes(offset, log_page=0):
    """page_offset counts 64ths of the page size: 64 bytes with 4 KiB pages."""
    return offset * ((4096 << log_page) // 64)


def new_ring(v, log_size, cqe_sz=0, offset=0, log_page=0):
    """A fresh ring of 2^log_size CQEs (opcode INVALID, owner 0), page_offset units in."""
    size = (64 << cqe_sz) << log_size
    psz = 4096 << log_page
    base = -(-v.next_cq // psz) * psz
    v.next_cq = base + max(size + off_bytes(offset, log_page), psz) + 0x1000
    ring = bytearray(size)
    for i in range(1 << log_size):
        ring[i * (64 << cqe_sz) + (64 << cqe_sz) - 1] = 0xf0
    v.qt.memwrite(base + off_bytes(offset, log_page), ring)
    return base


def resize(v, cq, log_size, base=None, sel=SEL_ALL, cqe_sz=None, log_page=0, offset=0,
           pas=None, raw=None, in_extra=0):
    """MODIFY_CQ op_mod 1 as mlx5_ib builds it; returns (reply, ring base)."""
    cqe_sz = cq.cqe_sz if cqe_sz is None else cqe_sz
    if base is None:
        base = new_ring(v, log_size, cqe_sz, offset, log_page)
    cqc = bytearray(64)
    put(cqc, P["VCX_CQC_LOG_CQ_SIZE"], log_size)
    put(cqc, P["VCX_CQC_LOG_PAGE_SIZE"], log_page)
    put(cqc, P["VCX_CQC_PAGE_OFFSET"], offset)
    put(cqc, P["VCX_CQC_CQE_SZ"], cqe_sz)
    if pas is None:
        psz = 4096 << log_page
        size = off_bytes(offset, log_page) + ((64 << cqe_sz) << log_size)
        pas = [base + i * psz for i in range(max(1, -(-size // psz)))]
    body = b"".join(struct.pack(">Q", a) for a in pas)
    payload = {0x10: bytes(cqc), 0x110: body}
    fields = [(P["VCX_MODIFY_CQ_IN_CQN"], cq.cqn), (P["VCX_MODIFY_CQ_IN_FIELD_SELECT"], sel)]
    if raw:
        fields += raw
    r = v.cmd("MODIFY_CQ", op_mod=1, in_len=0x110 + len(body) + in_extra, fields=fields,
              payload=payload)
    return r, base


def switch(cq, base, log_size, offset=0, log_page=0):
    """What software does on the resize CQE: read on in the new ring, same counter."""
    cq.base, cq.log_size = base + off_bytes(offset, log_page), log_size


def query(v, cq):
    r = v.cmd("QUERY_CQ", out_len=0x120, fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)])
    assert r.status == 0, "QUERY_CQ 0x%x" % r.status
    c = r.out[0x10:0x50]
    return {n: get(c, P["VCX_CQC_" + n]) for n in (
        "LOG_CQ_SIZE", "LOG_PAGE_SIZE", "PAGE_OFFSET", "PRODUCER_COUNTER",
        "CONSUMER_COUNTER", "STATUS", "CQE_SZ")}, struct.unpack_from(">QQ", r.out, 0x110)


def setup(v, log_size=2, cqe_sz=0):
    """A CQ shared by an RC pair a -> b; b has receive buffers in buf."""
    pd = v.alloc_pd()
    buf = v.alloc(0x10000)
    key = v.create_mkey(pd, buf, 0x10000)
    cq = v.create_cq(log_size=log_size, cqe_sz=cqe_sz)
    a = v.create_qp("RC", pd, cq, cq)
    b = v.create_qp("RC", pd, cq, cq)
    v.connect(a, b.qpn)
    v.connect(b, a.qpn)
    return cq, a, b, buf, key


def caps(v):
    r = v.d.exec(OP["QUERY_HCA_CAP"], op_mod=1, out_len=0x1010)
    c = r.out[0x10:]
    t.eq((get(c, P["VCX_CAP_GEN_CQ_RESIZE"]), get(c, P["VCX_CAP_GEN_CQ_MODERATION"])),
         (1, 1), "QUERY_HCA_CAP cur: cq_resize 1, cq_moderation 1 (test_verbs_cq_moderation)")


def grow(v):
    cq, a, b, buf, key = setup(v, log_size=2)
    msg = b"resize keeps this payload"
    b.post_recv([(buf + 0x100, 64, key)])
    v.qt.memwrite(buf, msg)
    a.post_send(SEND_IMM, dseg(buf, len(msg), key), imm=0xc0ffee01)
    a.post_send(NOP)
    old = cq.base
    before = [cq.entry(i) for i in range(3)]
    t.eq([f(e, "opcode", "owner") for e in before], [(3, 0), (0, 0), (0, 0)],
         "three CQEs in the 4-entry ring before the resize: RESP_SEND_IMM, REQ, REQ")
    r, base = resize(v, cq, 3)
    check(r, 0, 0, "MODIFY_CQ resize 4 -> 8 entries with 3 CQEs outstanding: OK")
    e3 = v.qt.memread(old + 3 * 64, 64)
    t.eq((e3[0x3f], e3[:0x3f]), (RESIZE << 4, bytes(0x3f)),
         "RESIZE_CQ CQE in the old ring at the producer position 3: op_own 0x50 "
         "(opcode 5, owner 0), every other byte 0")
    t.eq([v.qt.memread(old + i * 64, 64) for i in range(3)], before,
         "the three unpolled CQEs are left byte for byte in the old ring")
    q, pas = query(v, cq)
    t.eq((q["LOG_CQ_SIZE"], q["PRODUCER_COUNTER"], q["CONSUMER_COUNTER"], pas[0]),
         (3, 4, 0, base), "QUERY_CQ: log_cq_size 3, producer 4 (the resize CQE counted), "
         "consumer 0, PAS = the new ring")
    t.eq(v.qt.memread(base + 3 * 64 + 0x3f, 1), b"\xf0",
         "new ring untouched by the resize itself")
    # The consumer reads the old ring up to the resize CQE, then the new ring.
    got = [cq.poll() for _ in range(4)]
    t.eq([f(e, "opcode") for e in got], [(3,), (0,), (0,), (RESIZE,)],
         "polling the old ring: RESP_SEND_IMM, REQ, REQ, then the RESIZE_CQ CQE")
    t.eq(f(got[0], "imm", "byte_cnt", "qpn"), (0xc0ffee01, len(msg), b.qpn),
         "responder CQE read after the resize still carries imm, byte_cnt and QPN")
    t.eq(v.qt.memread(buf + 0x100, len(msg)), msg, "the SEND payload landed")
    switch(cq, base, 3)
    got = []
    for n in (6, 6):
        for _ in range(n):
            a.post_send(NOP)
        got += cq.poll_all()
    t.eq([f(e, "opcode", "wqe_counter") for e in got], [(0, i) for i in range(2, 14)],
         "twelve more CQEs after the resize: all in the new ring, wqe_counter 2..13 in "
         "order, none lost or duplicated")
    t.eq([e[0x3f] & 1 for e in got], [0] * 4 + [1] * 8,
         "owner bits follow the new size: counters 4..7 owner 0, 8..15 owner 1 (second pass)")
    t.eq([v.qt.memread(old + i * 64, 64) for i in range(4)], before + [e3],
         "the old ring is never written after the resize CQE")


def shrink_and_128(v):
    cq, a, b, buf, key = setup(v, log_size=4)
    for _ in range(3):
        a.post_send(NOP)
    t.eq(len(cq.poll_all()), 3, "three CQEs polled (set_ci 3)")
    a.post_send(NOP)
    old = cq.base
    r, base = resize(v, cq, 1, offset=2)
    check(r, 0, 0, "shrink 16 -> 2 entries with 1 CQE outstanding, page_offset 2: OK")
    t.eq(v.qt.memread(old + 4 * 64 + 0x3f, 1), bytes([RESIZE << 4]),
         "resize CQE at old entry 4")
    got = [cq.poll() for _ in range(2)]
    t.eq([f(e, "opcode", "wqe_counter") for e in got], [(0, 3), (RESIZE, 0)],
         "old ring: the outstanding REQ (wqe_counter 3), then RESIZE_CQ")
    switch(cq, base, 1, offset=2)
    a.post_send(NOP)
    e = cq.poll()
    t.eq((f(e, "opcode", "wqe_counter", "owner"), v.qt.memread(base + 2 * 64 + 64 + 0x3f, 1)),
         ((0, 4, 0), bytes([0x00])),
         "next CQE (counter 5) in new entry 5 & 1 = 1, 128 bytes past page_offset 2, owner "
         "(5 >> 1) & 1 = 0")
    q, pas = query(v, cq)
    t.eq((q["LOG_CQ_SIZE"], q["PAGE_OFFSET"], q["PRODUCER_COUNTER"]), (1, 2, 6),
         "QUERY_CQ: log_cq_size 1, page_offset 2, producer 6")
    # 16 KiB pages: page_offset 16 is 16 x 256 bytes = 4 KiB in (as mlx5_ib quantizes a
    # user ring's offset)
    r, base = resize(v, cq, 2, log_page=2, offset=16)
    check(r, 0, 0, "resize to 4 entries on a 16 KiB page, page_offset 16: OK")
    t.eq(len(cq.poll_all()), 1, "the resize CQE in the old ring")
    switch(cq, base, 2, offset=16, log_page=2)
    a.post_send(NOP)
    e = cq.poll()
    t.eq((f(e, "opcode", "wqe_counter") if e else None,
          v.qt.memread(base + 4096 + 3 * 64 + 0x3f, 1)), ((0, 5), bytes([0x01])),
         "next CQE (counter 7) in entry 3 of the ring that starts 4 KiB into the page, "
         "owner (7 >> 2) & 1 = 1")
    # 128-byte CQEs: the resize CQE sits in the second half, the first half zeroed
    cq, a, b, buf, key = setup(v, log_size=1, cqe_sz=1)
    a.post_send(NOP)
    old = cq.base
    v.qt.memwrite(old + 128, b"\xaa" * 64)
    r, base = resize(v, cq, 2)
    check(r, 0, 0, "128-byte CQEs: resize 2 -> 4 entries OK")
    t.eq((v.qt.memread(old + 128, 64), v.qt.memread(old + 128 + 64, 64)),
         (bytes(64), bytes(63) + bytes([RESIZE << 4])),
         "128-byte resize CQE at entry 1: first half zeroed (was 0xaa), second half all 0 "
         "but op_own 0x50 (counter 1 of a 2-entry ring: owner 0)")
    t.eq(f(cq.poll(), "opcode", "wqe_counter"), (0, 0), "the outstanding 128-byte CQE")
    t.eq(f(cq.poll(), "opcode"), (RESIZE,), "then the resize CQE")
    switch(cq, base, 2)
    a.post_send(NOP)
    e = cq.poll()
    t.eq((f(e, "opcode", "wqe_counter", "owner"), v.qt.memread(base + 2 * 128, 64)),
         ((0, 1, 0), bytes(64)),
         "next 128-byte CQE in new entry 2 (counter 2), its first half zeroed")


def bad_input(v):
    cq, a, b, buf, key = setup(v, log_size=2)
    a.post_send(NOP)
    a.post_send(NOP)
    old = cq.base

    def unchanged(desc):
        q, pas = query(v, cq)
        t.eq((q["LOG_CQ_SIZE"], q["PRODUCER_COUNTER"], pas[0],
              v.qt.memread(old + 2 * 64 + 0x3f, 1)), (2, 2, old, b"\xf0"),
             desc + ": CQ unchanged (log size 2, producer 2, old ring, no resize CQE)")

    check(resize(v, cq, 23, base=0x14000000, pas=[0x14000000])[0], BAD_PARAM, synd(2), "log_cq_size 23 > log_max_cq_sz 22: BAD_PARAM")
    unchanged("after log_cq_size 23")
    check(resize(v, cq, 1)[0], BAD_SIZE, synd(16),
          "2 entries with 2 CQEs outstanding (no room for the resize CQE): BAD_SIZE 0x40")
    check(resize(v, cq, 0)[0], BAD_SIZE, synd(16), "1 entry with 2 outstanding: BAD_SIZE")
    unchanged("after the too-small sizes")
    check(resize(v, cq, 3, pas=[0x14000800])[0], BAD_PARAM, synd(10),
          "PAS entry not page aligned: BAD_PARAM")
    check(resize(v, cq, 7, pas=[0x14000000])[0], BAD_INPUT_LEN, synd(9),
          "128 entries (8 KiB) with one PAS entry: BAD_INPUT_LEN")
    check(resize(v, cq, 3, log_page=19)[0], BAD_PARAM, synd(7),
          "log_page_size 19: BAD_PARAM")
    check(resize(v, cq, 3, sel=SEL_ALL | 8)[0], BAD_PARAM, synd(15),
          "resize_field_select bit 3: BAD_PARAM")
    check(resize(v, cq, 3, raw=[(P["VCX_MODIFY_CQ_IN_UMEM_VALID"], 1)])[0], BAD_PARAM,
          synd(1), "cq_umem_valid: BAD_PARAM")
    check(resize(v, cq, 3, cqe_sz=1)[0], BAD_PARAM, synd(3),
          "cqe_sz 128 B for a 64 B CQ: BAD_PARAM")
    r = v.cmd("MODIFY_CQ", op_mod=1, in_len=0x118,
              fields=[(P["VCX_MODIFY_CQ_IN_CQN"], 999),
                      (P["VCX_MODIFY_CQ_IN_FIELD_SELECT"], SEL_ALL)])
    check(r, BAD_RES_STATE, synd(12), "resize of a CQ that does not exist: BAD_RES_STATE")
    unchanged("after the refused inputs")
    t.eq([f(e, "opcode", "wqe_counter") for e in cq.poll_all()], [(0, 0), (0, 1)],
         "the two CQEs still poll from the old ring")
    # old ring full: 4 outstanding in a 4-entry ring
    for _ in range(4):
        a.post_send(NOP)
    check(resize(v, cq, 5)[0], BAD_RES_STATE, synd(17),
          "old ring full (4 of 4 outstanding): BAD_RES_STATE, no room for the resize CQE")
    # a CQ in error (overrun) cannot be resized
    v.events()
    a.post_send(NOP)
    t.eq([ty for ty, _ in v.events()], [0x04], "fifth CQE into the full ring: CQ error event")
    check(resize(v, cq, 5)[0], BAD_RES_STATE, synd(14), "resize of a CQ in error: BAD_RES_STATE")
    # an old ring the device cannot write: the resize CQE write fails
    cqc = bytearray(64)
    put(cqc, P["VCX_CQC_LOG_CQ_SIZE"], 1)
    put(cqc, P["VCX_CQC_UAR_PAGE"], v.uar)
    put(cqc, P["VCX_CQC_C_EQN"], v.comp_eqn)
    put(cqc, P["VCX_CQC_DBR_ADDR"], v.dbr())
    r = v.cmd("CREATE_CQ", in_len=0x118,
              payload={0x10: bytes(cqc), 0x110: struct.pack(">Q", 0x7000000000)})
    check(r, 0, 0, "CREATE_CQ with a ring at an address no memory backs: OK (not checked)")
    cqn = r.f(P["VCX_CREATE_CQ_OUT_CQN"])

    class Bare:
        pass
    bare = Bare()
    bare.cqn, bare.cqe_sz = cqn, 0
    v.events()
    check(resize(v, bare, 2)[0], BAD_RES_STATE, synd(18),
          "resize CQE not writable into the old ring: BAD_RES_STATE")
    t.eq([(ty, struct.unpack_from(">I", e, 0x20)[0] & 0xffffff, e[0x2b]) for ty, e in v.events()],
         [(0x04, cqn, 2)], "... and a CQ error event, syndrome 2 (access violation)")
    log = v.qt.log()
    t.ok("(0x40), syndrome 0x04030010: resize of CQ" in log and
         "2 CQEs outstanding plus the resize CQE do not fit" in log,
         "too-small resize logged as a guest error with status 0x40 and its syndrome")
    t.ok("vcx_err_cmd_status" in log and "0x04030010" in log,
         "refusals traced (vcx_err_cmd_status, syndrome 0x04030010)")
    t.ok("vcx_cq_resize" in log and "log_size 2 -> 3" in log,
         "successful resizes traced (vcx_cq_resize)")


def main():
    run_cases(t, (("caps", caps), ("grow", grow), ("shrink_and_128", shrink_and_128),
                  ("bad_input", bad_input)),
              trace="vcx_cq_resize", extra=("--trace", "vcx_err_cmd_status"))


if __name__ == "__main__":
    main()
