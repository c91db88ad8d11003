#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""8-byte RC atomics (ATOMIC_CS, ATOMIC_FA) in both requester endianness modes of the
ATOMIC capability page: mode 0 (big-endian, the default when the driver sets nothing)
and mode 1 (host order, set by SET_HCA_CAP as mlx5_core does), host order following the
HOST_ENDIANNESS register. Each device checks the CUR page, the responder's memory bytes
and the original values returned to the requester."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, run_isolated, get, H  # noqa: E402
from vcx_verbs import Verbs, cqe_fields, dseg, raddr, atomic  # noqa: E402

t = Tap()
CS, FA = 0x11, 0x12
V0 = 0x0102030405060708


def setup(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x10000)
    key = v.create_mkey(pd, buf, 0x10000)
    cq = v.create_cq()
    a = v.create_qp("RC", pd, cq, cq)
    b = v.create_qp("RC", pd, cq, cq)
    v.connect(a, b.qpn)
    v.connect(b, a.qpn)
    return buf, key, cq, a


def mode(v):
    r = v.d.exec(H["VCX_CMD_OP_QUERY_HCA_CAP"], (3 << 1) | 1, out_len=0x1010)
    return get(r.out, H["VCX_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE"], 0x10)


def run(v, fmt, desc):
    """FA +0x10, CS hit, CS miss on V0; returns nothing, checks exact bytes."""
    buf, key, cq, a = setup(v)
    tgt, res = buf + 0x8000, buf + 0x8100
    v.qt.memwrite(tgt, struct.pack(fmt, V0))
    a.post_send(FA, raddr(tgt, key) + atomic(0x10) + dseg(res, 8, key))
    t.eq((v.qt.memread(tgt, 8), v.qt.memread(res, 8)),
         (struct.pack(fmt, V0 + 0x10), struct.pack(fmt, V0)),
         "%s: FA +0x10 leaves V0+0x10 in memory, returns V0" % desc)
    a.post_send(CS, raddr(tgt, key) + atomic(0x1122334455667788, V0 + 0x10) +
                dseg(res + 8, 8, key))
    t.eq((v.qt.memread(tgt, 8), v.qt.memread(res + 8, 8)),
         (struct.pack(fmt, 0x1122334455667788), struct.pack(fmt, V0 + 0x10)),
         "%s: CS with a matching compare swaps, returns the old value" % desc)
    a.post_send(CS, raddr(tgt, key) + atomic(5, V0) + dseg(res + 16, 8, key))
    t.eq((v.qt.memread(tgt, 8), v.qt.memread(res + 16, 8)),
         (struct.pack(fmt, 0x1122334455667788), struct.pack(fmt, 0x1122334455667788)),
         "%s: CS with a different compare leaves memory, returns it" % desc)
    # the same bytes read in the other order: 1 becomes 1 << 56
    other = "<Q" if fmt == ">Q" else ">Q"
    v.qt.memwrite(tgt, struct.pack(other, 1))
    a.post_send(FA, raddr(tgt, key) + atomic(1) + dseg(res + 24, 8, key))
    t.eq((v.qt.memread(tgt, 8), v.qt.memread(res + 24, 8)),
         (struct.pack(fmt, (1 << 56) + 1), struct.pack(fmt, 1 << 56)),
         "%s: memory is interpreted in that order (1 in the other order is 1 << 56)" % desc)
    s = [cqe_fields(e) for e in cq.poll_all()]
    t.eq([(x["opcode"], x["sop"], x["byte_cnt"]) for x in s],
         [(0, FA, 8), (0, CS, 8), (0, CS, 8), (0, FA, 8)],
         "%s: four successful requester CQEs, byte_cnt 8" % desc)


def big_endian_default():
    v = Verbs(atomic_mode=None)
    try:
        t.eq(mode(v), 0, "no SET_HCA_CAP: atomic_req_8B_endianness_mode 0 (big-endian)")
        run(v, ">Q", "mode 0")
    finally:
        v.close()


def big_endian_set():
    v = Verbs(atomic_mode=0)
    try:
        t.eq(mode(v), 0, "SET_HCA_CAP mode 0: CUR 0")
        buf, key, cq, a = setup(v)
        v.qt.memwrite(buf + 0x8000, struct.pack(">Q", 41))
        a.post_send(FA, raddr(buf + 0x8000, key) + atomic(1) + dseg(buf + 0x8100, 8, key))
        t.eq((v.qt.memread(buf + 0x8000, 8), v.qt.memread(buf + 0x8100, 8)),
             (struct.pack(">Q", 42), struct.pack(">Q", 41)), "mode 0 set explicitly: big-endian")
    finally:
        v.close()


def host_order():
    v = Verbs(atomic_mode=1)
    try:
        t.eq(mode(v), 1, "SET_HCA_CAP mode 1: CUR 1 (host endianness)")
        run(v, "<Q", "mode 1, little-endian host")
        # a big-endian host (HOST_ENDIANNESS he 0x80): host order is big-endian
        r = v.d.exec(H["VCX_CMD_OP_ACCESS_REG"], 0, in_len=32, out_len=32,
                     fields=[(H["VCX_ACCESS_REG_IN_REGISTER_ID"], 0x7004)],
                     payload={16: b"\x80" + bytes(15)})
        t.eq(r.status, 0, "HOST_ENDIANNESS he 0x80 written")
        run(v, ">Q", "mode 1, big-endian host")
    finally:
        v.close()


def main():
    for name, fn in [("big_endian_default", big_endian_default),
                     ("big_endian_set", big_endian_set), ("host_order", host_order)]:
        run_isolated(t, name, fn)
    t.done()


if __name__ == "__main__":
    main()
