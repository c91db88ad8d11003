#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Zero-copy transfers (docs/device-interface.md, "The executor"): the executor copies
guest buffer to guest buffer in pieces mapped in place, cut at every SGE and MTT page
boundary of either side. Payloads are compared byte for byte: SENDs whose gather and
scatter lists cut the message at different places (inline bytes, odd lengths and
addresses), RDMA WRITE and READ between an MTT key with its pages out of order and a
PA-mode key, and through one whose pages form runs contiguous in guest memory, a WRITE whose source and destination overlap, and a WRITE into the
device's own BAR, which is not RAM: it takes the bounce path and fails as before."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, BAR0  # noqa: E402
from vcx_verbs import (cqe_fields, dseg, inline, raddr, rc_pair,  # noqa: E402
                       pd_buf_key_cq, cqe_tuple as f, run_cases)

t = Tap()
SEND, WRITE, READ = 0x0a, 0x08, 0x10


def pattern(n, seed):
    return bytes((i * 7 + seed) & 0xff for i in range(n))


def sge_cuts(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x20000)
    key = v.create_mkey(pd, buf, 0x20000)
    cq = v.create_cq()
    a = v.create_qp("RC", pd, cq, cq)
    b = v.create_qp("RC", pd, cq, cq, rq_stride=128)      # room for five scatter entries
    v.connect(a, b.qpn)
    v.connect(b, a.qpn)
    head = b"inline head "
    body = pattern(9000, 1)
    v.qt.memwrite(buf + 0x0ffd, body)       # crosses two page boundaries at odd offsets
    # scatter: 5 + 4093 + 1 + the rest, each entry in another page, odd addresses (no
    # zero-length entries: a byte count of 0 means 2 GiB in a data segment)
    cuts = [(buf + 0x8003, 5), (buf + 0x9ff1, 4093), (buf + 0xc7ff, 1),
            (buf + 0xd001, 4913)]
    b.post_recv([(addr, n, key) for addr, n in cuts])
    a.post_send(SEND, inline(head) + dseg(buf + 0x0ffd, 5000, key) +
                dseg(buf + 0x0ffd + 5000, 4000, key))
    msg = head + body
    got = b"".join(v.qt.memread(addr, n) for addr, n in cuts)
    t.ok(got == msg, "SEND: inline head + two gathers land over four scatter entries cut "
                     "elsewhere, byte for byte")
    r = cq.poll_all()
    resp = [e for e in r if cqe_fields(e)["qpn"] == b.qpn]
    t.eq([f(e, "opcode", "byte_cnt", "syndrome") for e in resp], [(2, len(msg), 0)],
         "one receive CQE with the whole byte count")
    t.eq(v.qt.memread(buf + 0xd001 + 4913, 16), bytes(16), "nothing past the last entry")


def mtt_and_pa(v):
    pd = v.alloc_pd()
    pages = [v.alloc(0x1000) for _ in range(4)]
    # an MTT key whose IOVA pages map to guest pages in reverse order
    m = v.create_mkey(pd, pages[0], 0x4000, pages=[pages[3], pages[2], pages[1], pages[0]])
    flat = v.alloc(0x8000)
    pa = v.create_mkey(pd, 0, 0, mode=0, length64=True, key=0x44)
    cq = v.create_cq()
    a, b = rc_pair(v, pd, cq)
    data = pattern(0x3ffe, 9)
    v.qt.memwrite(flat + 1, data)
    a.post_send(WRITE, raddr(pages[0] + 1, m) + dseg(flat + 1, len(data), pa))
    back = b"".join(v.qt.memread(p, 0x1000) for p in (pages[3], pages[2], pages[1], pages[0]))
    t.ok(back[1:1 + len(data)] == data,
         "WRITE from a PA key into an MTT key whose pages run backwards: every page right")
    a.post_send(READ, raddr(pages[0] + 1, m) + dseg(flat + 0x4001, len(data), pa))
    t.ok(v.qt.memread(flat + 0x4001, len(data)) == data,
         "READ back through the same MTT key into the PA key")
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()
          if cqe_fields(e)["qpn"] == a.qpn], [(0, 0), (0, 0)], "both complete without error")


def mtt_runs(v):
    """MTT pages that follow each other in guest memory move as one run; a page that does
    not follow ends it, even when it lies right after an earlier page of the key."""
    pd = v.alloc_pd()
    g = v.alloc(0x4000)
    h = v.alloc(0x3000)
    order = [g, g + 0x1000, g + 0x2000, h, h + 0x1000, g + 0x3000, h + 0x2000]
    m = v.create_mkey(pd, 0x7000000, 0x7000, pages=order)
    flat = v.alloc(0x10000)
    pa = v.create_mkey(pd, 0, 0, mode=0, length64=True, key=0x46)
    cq = v.create_cq()
    a, b = rc_pair(v, pd, cq)
    data = pattern(0x6ffd, 3)
    v.qt.memwrite(g, bytes(0x4000))
    v.qt.memwrite(h, bytes(0x3000))
    v.qt.memwrite(flat + 3, data)
    a.post_send(WRITE, raddr(0x7000002, m) + dseg(flat + 3, len(data), pa))
    back = b"".join(v.qt.memread(p, 0x1000) for p in order)
    t.ok(back[2:2 + len(data)] == data and back[:2] == bytes(2) and back[-1:] == bytes(1),
         "WRITE across runs of 3, 2, 1 and 1 guest-contiguous pages: every page right, "
         "nothing outside")
    a.post_send(READ, raddr(0x7000002, m) + dseg(flat + 0x8001, len(data), pa))
    t.ok(v.qt.memread(flat + 0x8001, len(data)) == data, "READ back through the same key")
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()
          if cqe_fields(e)["qpn"] == a.qpn], [(0, 0), (0, 0)], "both complete without error")


def overlap(v):
    pd, buf, key, cq = pd_buf_key_cq(v)
    a, b = rc_pair(v, pd, cq)
    data = pattern(0x3000, 3)
    v.qt.memwrite(buf, data)
    a.post_send(WRITE, raddr(buf + 0x100, key) + dseg(buf, len(data), key))
    t.ok(v.qt.memread(buf + 0x100, len(data)) == data,
         "WRITE onto its own source moved 0x100 bytes up: the data as it was (memmove)")
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0, 0)], "completes")


def own_bar(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x1000)
    key = v.create_mkey(pd, buf, 0x1000)
    pa = v.create_mkey(pd, 0, 0, mode=0, length64=True, key=0x45)
    cq = v.create_cq()
    a, b = rc_pair(v, pd, cq)
    v.qt.memwrite(buf, pattern(64, 5))
    # a UAR page of the device's own BAR0, far from any page the test uses
    target = BAR0 + 0x100 * 0x1000
    a.post_send(WRITE, raddr(target, pa) + dseg(buf, 64, key))
    s = [e for e in cq.poll_all() if cqe_fields(e)["qpn"] == a.qpn]
    t.eq([f(e, "opcode", "syndrome") for e in s], [(0xd, 0x14)],
         "WRITE into the device's own BAR: not RAM, bounce path, remote operational error")
    t.ok(v.qt.alive(), "QEMU alive")


def main():
    run_cases(t, (("sge_cuts", sge_cuts), ("mtt_and_pa", mtt_and_pa), ("mtt_runs", mtt_runs),
                  ("overlap", overlap),
                  ("own_bar", own_bar)))


if __name__ == "__main__":
    main()
