#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Bounded random input into the RDMA paths: random bytes in send WQEs, receive and SRQ
WQEs and doorbell records, random doorbell writes of every size to the CQ doorbell and
the BlueFlame registers, and random inputs to every object command. QEMU must stay alive
and keep answering commands; the seed is printed so a failure can be replayed
(VCX_FUZZ_SEED)."""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, BAR0, run_isolated  # noqa: E402
from vcx_verbs import Verbs, OP, P, dseg  # noqa: E402

t = Tap()
OBJ_OPS = ["ALLOC_PD", "DEALLOC_PD", "CREATE_MKEY", "QUERY_MKEY", "DESTROY_MKEY",
           "CREATE_CQ", "DESTROY_CQ", "QUERY_CQ", "MODIFY_CQ", "CREATE_QP", "DESTROY_QP",
           "RST2INIT_QP", "INIT2INIT_QP", "INIT2RTR_QP", "RTR2RTS_QP", "RTS2RTS_QP",
           "2ERR_QP", "2RST_QP", "QUERY_QP", "CREATE_SRQ", "DESTROY_SRQ", "QUERY_SRQ",
           "ARM_RQ", "CREATE_RMP", "MODIFY_RMP", "QUERY_RMP", "DESTROY_RMP"]


def data_path(v, rnd):
    pd = v.alloc_pd()
    buf = v.alloc(0x10000)
    key = v.create_mkey(pd, buf, 0x10000)
    cq = v.create_cq(log_size=8)
    srq = v.create_srq(pd, log_size=4, stride=128)
    qps = []
    for st in ("RC", "RC", "UC", "UD"):
        a = v.create_qp(st, pd, cq, cq, log_sq=4)
        b = v.create_qp(st, pd, cq, cq, srq=srq if st == "RC" else None)
        v.connect(a, b.qpn, rnr_retry=1) if st != "UD" else v.connect(a)
        v.connect(b, a.qpn, rnr_retry=1) if st != "UD" else v.connect(b)
        qps += [a, b]
    for i in range(300):
        qp = rnd.choice(qps)
        what = rnd.randrange(8)
        if what == 0:           # random WQE, then a doorbell
            wqe = bytearray(rnd.randbytes(64 * rnd.randint(1, 4)))
            wqe[4:7] = struct.pack(">I", qp.qpn << 8)[:3]
            if rnd.random() < 0.5:      # make some plausible: a real lkey somewhere
                struct.pack_into(">IIQ", wqe, 16, rnd.randint(0, 256), key, buf)
            qp.write_wqe(bytes(wqe))
            qp.sq_pi += rnd.randint(0, 4)
            qp.ring(bytes(wqe[:8]))
        elif what == 1:         # random SRQ WQE and counter
            v.qt.memwrite(srq.base + rnd.randrange(16) * 128, rnd.randbytes(128))
            v.qt.memwrite(srq.dbr, struct.pack(">I", rnd.getrandbits(16)))
        elif what == 2:         # random doorbell records
            v.qt.memwrite(qp.dbr, rnd.randbytes(8))
            qp.ring(rnd.randbytes(8))
        elif what == 3:         # random CQ doorbell, random CQ consumer index
            v.qt.memwrite(cq.dbr, rnd.randbytes(4))
            v.qt.writeq(BAR0 + v.uar * 4096 + 0x20, rnd.getrandbits(64))
        elif what == 4:         # random sized writes anywhere in the BlueFlame area
            off = 0x800 + rnd.randrange(0x800)
            size = rnd.choice([1, 2, 4, 8])
            off &= ~(size - 1)
            cmd = {1: "writeb", 2: "writew", 4: "writel", 8: "writeq"}[size]
            v.qt.cmd("%s 0x%x 0x%x" % (cmd, BAR0 + v.uar * 4096 + off,
                                       rnd.getrandbits(8 * size)))
        elif what == 5:         # a valid send, to keep traffic flowing
            qp.post_send(0x0a, dseg(buf, rnd.randint(0, 64), key))
        elif what == 6:         # random receive WQE
            if qp.log_rq is not None:
                v.qt.memwrite(qp.base + rnd.randrange(1 << qp.log_rq) * qp.rq_stride,
                              rnd.randbytes(qp.rq_stride))
                v.qt.memwrite(qp.dbr, struct.pack(">I", rnd.getrandbits(16)))
        else:
            v.qt.clock_step(rnd.randint(1, 2000000))
        cq.poll_all(256)
        v.events()
        v.events(comp=True)
    t.ok(v.qt.alive(), "300 random data-path inputs: QEMU alive")
    r = v.cmd("QUERY_CQ", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)])
    t.eq(r.status, 0, "commands still answered after the data-path fuzz")


def commands(v, rnd):
    statuses = set()
    for i in range(250):
        op = rnd.choice(OBJ_OPS)
        n = rnd.choice([16, 0x20, 0x110, 0x118, 0x130, 0x200])
        body = bytearray(rnd.randbytes(n))
        struct.pack_into(">HHHH", body, 0, OP[op], 0, 0, rnd.choice([0, 0, 0, 1]))
        if rnd.random() < 0.7:          # small object numbers hit live objects
            struct.pack_into(">I", body, 8, rnd.randrange(16))
        r = v.d.exec_raw(bytes(body), rnd.choice([16, 0x110, 0x130, 0x200]))
        statuses.add(r.status)
    t.ok(v.qt.alive(), "250 random object commands: QEMU alive")
    t.ok(statuses - {0}, "random commands were refused with statuses %s" %
         sorted(hex(s) for s in statuses))
    r = v.d.exec(OP["QUERY_ISSI"], out_len=0x70)
    t.eq(r.status, 0, "QUERY_ISSI still answered")


def main():
    seed = int(os.environ.get("VCX_FUZZ_SEED", random.randrange(1 << 32)))
    print("# seed %d" % seed)
    rnd = random.Random(seed)
    v = Verbs()
    try:
        run_isolated(t, "data path", lambda: data_path(v, rnd))
        run_isolated(t, "commands", lambda: commands(v, rnd))
    finally:
        v.close()
    t.done()


if __name__ == "__main__":
    main()
