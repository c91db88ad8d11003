#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The RC requester's window on the wire (IBTA vol 1 9.7), with the test as the remote
host (test_roce.py's encoder, decoder and Wire device):
  - several WQEs in flight before the first ACK, each at its own PSNs, AckReq on each
    request's last packet; completions in SQ order as ACKs arrive, a partial ACK
    completing only what it covers;
  - go-back-N across WQEs: a NAK sequence error in the middle of the second WQE resends
    from that packet to the end of the window, payload read again; the first WQE
    completes (the NAK acknowledges what came before it);
  - the local ACK timeout resends every outstanding WQE from the first unacknowledged PSN;
  - max_rd_atomic (2^log_sra_max) READs outstanding, the next READ sent when one ends;
  - a READ response acknowledges the SEND before it; an ACK past a READ whose responses
    did not all arrive asks for the READ again (implied NAK) and resends what follows;
  - a fenced WQE waits for the READ before it; a WQE that fails its checks completes in
    error after the WQEs before it, and nothing after it is sent;
  - at most 64 WQEs in flight, and 256 PSNs past the first unacknowledged one, with an
    AckReq on every 64th packet of a long message;
  - the responder: responses leave in PSN order (an ACK and an ATOMIC_ACKNOWLEDGE after
    the responses of a READ before them; duplicate READs each answered whole, in order),
    and more READs than 2^log_rra_max outstanding is an invalid request (NAK, QP to
    ERR)."""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import get  # noqa: E402
from vcx_verbs import P, cqe_fields, dseg, raddr, atomic, run_cases  # noqa: E402
from vcx_nic import N  # noqa: E402
from test_roce import (t, Wire, setup, pattern, frame, aeth, reth, check_hdr,  # noqa: E402
                       RQPN, SEND, WRITE, READ, FA)

FENCE_SMALL, FENCE_SMALL_AND_FENCE = 1, 4
MTU4096 = 5


def cqes(cq):
    """The CQEs waiting, as (wqe_counter, opcode, syndrome) tuples."""
    return [(cqe_fields(e)["wqe_counter"], cqe_fields(e)["opcode"],
             cqe_fields(e)["syndrome"]) for e in cq.poll_all()]


def names(fr):
    return [(d["name"], d["psn"]) for d in fr]


def case_pipeline(v):
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq, log_sq=7)
    a, b, c = pattern(600, 1), pattern(300, 2), pattern(100, 3)
    v.qt.memwrite(buf, a)
    v.qt.memwrite(buf + 0x1000, b)
    v.qt.memwrite(buf + 0x2000, c)
    i0 = qp.post_send(SEND, dseg(buf, 600, key))
    i1 = qp.post_send(WRITE, raddr(0x7000000000, 0xabcd) + dseg(buf + 0x1000, 300, key))
    i2 = qp.post_send(SEND, dseg(buf + 0x2000, 100, key))
    fr = v.out(6)
    t.eq(names(fr), [("SEND_FIRST", 0x100), ("SEND_MIDDLE", 0x101), ("SEND_LAST", 0x102),
                     ("WRITE_FIRST", 0x103), ("WRITE_LAST", 0x104), ("SEND_ONLY", 0x105)],
         "three WQEs on the wire before any ACK, PSNs in order")
    for i, d in enumerate(fr):
        check_hdr(d, "packet %d" % i, d["opcode"], RQPN, 0x100 + i, i in (2, 4, 5),
                  len(d["payload"]))
    t.eq((b"".join(d["payload"] for d in fr[:3]), fr[3]["payload"] + fr[4]["payload"],
          fr[5]["payload"]), (a, b, c), "each WQE's payload bytes")
    t.eq(cqes(cq), [], "no completion before an ACK")
    v.inject(frame(0x11, qp.qpn, 0x103, ext=aeth(0x1f, 1)))
    t.eq(cqes(cq), [(i0, 0, 0)], "ACK of 0x103 (inside the WRITE): only the SEND completes")
    v.inject(frame(0x11, qp.qpn, 0x105, ext=aeth(0x1f, 3)))
    t.eq(cqes(cq), [(i1, 0, 0), (i2, 0, 0)], "coalesced ACK of 0x105: the other two, in order")
    t.ok(v.quiet(), "nothing resent")


def case_goback(v):
    pd, buf, key, cq = setup(v)
    qc = v.q_counter()
    qp = v.wire_qp("RC", pd, cq, log_sq=7, counter=qc)
    msgs = [pattern(600, 10 + k) for k in range(3)]
    idx = []
    for k, m in enumerate(msgs):
        v.qt.memwrite(buf + 0x1000 * k, m)
        idx.append(qp.post_send(SEND, dseg(buf + 0x1000 * k, 600, key)))
    fr = v.out(9)
    t.eq([d["psn"] for d in fr], list(range(0x100, 0x109)), "nine packets of three SENDs")
    seq0 = v.counter("packet_seq_err")
    v.inject(frame(0x11, qp.qpn, 0x104, ext=aeth(0x60, 1)))
    fr = v.out(6, timeout=1.0)
    t.eq(names(fr), [("SEND_MIDDLE", 0x104), ("SEND_LAST", 0x105), ("SEND_FIRST", 0x106),
                     ("SEND_MIDDLE", 0x107), ("SEND_LAST", 0x108)],
         "NAK sequence error at 0x104: go back to it, through the end of the window")
    t.eq([d["payload"] for d in fr],
         [msgs[1][256:512], msgs[1][512:], msgs[2][:256], msgs[2][256:512], msgs[2][512:]],
         "payload read again from guest memory at each packet's offset")
    t.eq(cqes(cq), [(idx[0], 0, 0)], "the NAK acknowledges the first SEND")
    t.eq(v.counter("packet_seq_err"), seq0 + 1, "one sequence NAK counted")
    v.inject(frame(0x11, qp.qpn, 0x108, ext=aeth(0x1f, 3)))
    t.eq(cqes(cq), [(idx[1], 0, 0), (idx[2], 0, 0)], "the ACK of 0x108 completes the rest")


def case_timeout(v):
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq, log_sq=7, retry=3, ack_timeout=10)    # 4.2 ms
    v.qt.memwrite(buf, pattern(300, 4))
    i0 = qp.post_send(SEND, dseg(buf, 300, key))
    i1 = qp.post_send(SEND, dseg(buf, 8, key))
    t.eq(names(v.out(3)), [("SEND_FIRST", 0x100), ("SEND_LAST", 0x101), ("SEND_ONLY", 0x102)],
         "two SENDs sent")
    v.inject(frame(0x11, qp.qpn, 0x100, ext=aeth(0x1f, 0)))
    to0 = v.counter("local_ack_timeout_err")
    v.advance(4096 << 10, 4096 << 10)
    v.settle()
    t.eq(names(v.out(2)), [("SEND_LAST", 0x101), ("SEND_ONLY", 0x102)],
         "the ACK timeout: everything from the first unacknowledged PSN sent again")
    t.eq(v.counter("local_ack_timeout_err"), to0 + 1, "one timeout counted")
    v.inject(frame(0x11, qp.qpn, 0x102, ext=aeth(0x1f, 2)))
    t.eq(cqes(cq), [(i0, 0, 0), (i1, 0, 0)], "both complete at the ACK")


def case_rd_atomic_limit(v):
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq, log_sq=7, sra=1)      # max_rd_atomic 2
    idx = [qp.post_send(READ, raddr(0x7000000000 + 0x100 * k, 0xabcd) +
                        dseg(buf + 0x100 * k, 100, key)) for k in range(4)]
    fr = v.out(4, timeout=0.5)
    t.eq(names(fr), [("READ_REQUEST", 0x100), ("READ_REQUEST", 0x101)],
         "log_sra_max 1: two READs outstanding, no more")
    data = [pattern(100, 50 + k) for k in range(4)]
    v.inject(frame(0x10, qp.qpn, 0x100, data[0], ext=aeth(0x1f, 1)))
    t.eq(cqes(cq), [(idx[0], 0, 0)], "the first READ completes")
    t.eq(names(v.out(2, timeout=0.5)), [("READ_REQUEST", 0x102)], "and the third goes out")
    v.inject(frame(0x10, qp.qpn, 0x101, data[1], ext=aeth(0x1f, 2)))
    v.inject(frame(0x10, qp.qpn, 0x102, data[2], ext=aeth(0x1f, 3)))
    t.eq(names(v.out(2, timeout=0.5)), [("READ_REQUEST", 0x103)], "then the fourth")
    v.inject(frame(0x10, qp.qpn, 0x103, data[3], ext=aeth(0x1f, 4)))
    t.eq(cqes(cq), [(idx[k], 0, 0) for k in (1, 2, 3)], "all four complete in order")
    t.eq([v.qt.memread(buf + 0x100 * k, 100) for k in range(4)], data,
         "each READ's data in its own buffer")


def case_implied(v):
    pd, buf, key, cq = setup(v)
    qc = v.q_counter()
    qp = v.wire_qp("RC", pd, cq, log_sq=7, counter=qc)
    v.qt.memwrite(buf, b"first")
    v.qt.memwrite(buf + 0x2000, b"third")
    v.qt.memset(buf + 0x1000, 600, 0)
    i0 = qp.post_send(SEND, dseg(buf, 5, key))
    i1 = qp.post_send(READ, raddr(0x7000001000, 0xabcd) + dseg(buf + 0x1000, 600, key))
    i2 = qp.post_send(SEND, dseg(buf + 0x2000, 5, key))
    t.eq(names(v.out(3)), [("SEND_ONLY", 0x100), ("READ_REQUEST", 0x101), ("SEND_ONLY", 0x104)],
         "SEND, READ (PSNs 0x101-0x103), SEND at 0x104")
    data = pattern(600, 61)
    v.inject(frame(0x0d, qp.qpn, 0x101, data[:256], ext=aeth(0x1f, 1)))
    t.eq(cqes(cq), [(i0, 0, 0)], "the READ's first response acknowledges the SEND before it")
    v.inject(frame(0x11, qp.qpn, 0x104, ext=aeth(0x1f, 3)))
    fr = v.out(2)
    t.eq([(d["name"], d["psn"], d.get("va"), d.get("dma_len")) for d in fr],
         [("READ_REQUEST", 0x102, 0x7000001100, 344), ("SEND_ONLY", 0x104, None, None)],
         "an ACK past the READ while two responses are missing: the READ asked again from "
         "0x102, and the SEND after it resent (go-back-N)")
    r = v.query_q_counter(qc)
    t.eq(get(r.out, N["VCX_QUERY_Q_COUNTER_OUT_IMPLIED_NAK_SEQ_ERR"]), 1, "an implied NAK")
    v.inject(frame(0x0d, qp.qpn, 0x102, data[256:512], ext=aeth(0x1f, 3)))
    v.inject(frame(0x0f, qp.qpn, 0x103, data[512:], ext=aeth(0x1f, 3)))
    t.eq(cqes(cq), [(i1, 0, 0)], "the READ completes")
    t.eq(v.qt.memread(buf + 0x1000, 600), data, "every READ byte placed")
    v.inject(frame(0x11, qp.qpn, 0x104, ext=aeth(0x1f, 3)))
    t.eq(cqes(cq), [(i2, 0, 0)], "the SEND after it completes at its ACK")


def case_fence_and_errors(v):
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq, log_sq=7)
    i0 = qp.post_send(READ, raddr(0x7000000000, 0xabcd) + dseg(buf, 64, key))
    i1 = qp.post_send(SEND, dseg(buf + 0x100, 8, key), fence=FENCE_SMALL_AND_FENCE)
    t.eq(names(v.out(2, timeout=0.5)), [("READ_REQUEST", 0x100)],
         "a SEND with a fence waits for the READ before it")
    v.inject(frame(0x10, qp.qpn, 0x100, bytes(64), ext=aeth(0x1f, 1)))
    t.eq(cqes(cq), [(i0, 0, 0)], "the READ completes")
    t.eq(names(v.out(1)), [("SEND_ONLY", 0x101)], "then the fenced SEND goes out")
    v.inject(frame(0x11, qp.qpn, 0x101, ext=aeth(0x1f, 2)))
    t.eq(cqes(cq), [(i1, 0, 0)], "and completes")
    # a WQE that fails its checks behind one in flight
    j0 = qp.post_send(SEND, dseg(buf, 8, key))
    j1 = qp.post_send(SEND, dseg(buf, 8, 0xdead00))
    qp.post_send(SEND, dseg(buf, 8, key))
    t.eq(names(v.out(3, timeout=0.5)), [("SEND_ONLY", 0x102)],
         "a SEND with a bad lkey behind one in flight: nothing from it on is sent")
    t.eq(cqes(cq), [], "no completion yet: completions stay in order")
    v.inject(frame(0x11, qp.qpn, 0x102, ext=aeth(0x1f, 3)))
    got = cqes(cq)
    t.eq(got[:2], [(j0, 0, 0), (j1, 13, P["VCX_CQE_SYND_LOCAL_PROT_ERR"])],
         "the first completes, then the bad one with a local protection error")
    t.eq(len(got), 3, "and the one after it is flushed")
    t.eq(v.qp_state(qp), 6, "the QP is in ERR")


def case_limits(v):
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq, log_sq=7)
    big_rx(v)
    v.qt.memwrite(buf, b"12345678")
    for k in range(70):
        qp.post_send(SEND, dseg(buf, 8, key), ce=(k % 10 == 9), ring=(k == 69))
    fr = v.out(70, timeout=0.5)
    t.eq((len(fr), fr[-1]["psn"] if fr else None), (64, 0x100 + 63),
         "70 SENDs posted: 64 in flight")
    v.inject(frame(0x11, qp.qpn, 0x100 + 9, ext=aeth(0x1f, 10)))
    fr = v.out(7, timeout=0.5)
    t.eq([d["psn"] for d in fr], list(range(0x140, 0x146)), "an ACK of ten: the other six")
    t.eq([c[0] for c in cqes(cq)], [9], "the tenth (signaled) completes")
    v.inject(frame(0x11, qp.qpn, 0x145, ext=aeth(0x1f, 70)))
    t.eq([c[0] for c in cqes(cq)], [19, 29, 39, 49, 59, 69], "then every signaled one")
    # one long WRITE: 320 packets at MTU 256, at most 256 PSNs ahead of the ACKs
    long = v.alloc(80 * 1024)
    v.qt.memwrite(long, pattern(80 * 1024, 7))
    key2 = v.create_mkey(pd, long, 80 * 1024)
    qp.post_send(WRITE, raddr(0x7000000000, 0xabcd) + dseg(long, 80 * 1024, key2))
    fr = v.out(320, timeout=1.0)
    t.eq((len(fr), fr[0]["psn"], fr[-1]["psn"]), (256, 0x146, 0x146 + 255),
         "an 80 KiB WRITE at MTU 256: 256 packets, then the window is full")
    t.eq([d["psn"] - 0x146 for d in fr if d["ackreq"]], [63, 127, 191, 255],
         "AckReq on every 64th packet of the long message")
    v.inject(frame(0x11, qp.qpn, 0x146 + 63, ext=aeth(0x1f, 70)))
    fr = v.out(64, timeout=1.0)
    t.eq((len(fr), fr[-1]["psn"] if fr else None, fr[-1]["name"] if fr else None),
         (64, 0x146 + 319, "WRITE_LAST"), "the ACK of its 64th packet lets the rest go")
    v.inject(frame(0x11, qp.qpn, 0x146 + 319, ext=aeth(0x1f, 71)))
    t.eq(len(cqes(cq)), 1, "and it completes")


def big_rx(v):
    """Room in the test's socket for a few MiB of READ responses (root may force it)."""
    for opt in (getattr(socket, "SO_RCVBUFFORCE", 33), socket.SO_RCVBUF):
        try:
            v.sock.rx.setsockopt(socket.SOL_SOCKET, opt, 16 << 20)
            return
        except OSError:
            pass


def case_resp_order(v):
    pd, buf, key, cq = setup(v)
    big = v.alloc(1 << 20)
    bkey = v.create_mkey(pd, big, 1 << 20)
    v.qt.memwrite(big, pattern(4096, 9))
    qp = v.wire_qp("RC", pd, cq, mtu=MTU4096)
    qp.post_recv([(buf, 1024, key)])
    v.qt.memwrite(buf + 0x2000, struct.pack("<Q", 5))
    big_rx(v)
    # a 1 MiB READ (256 responses, several executor runs), then a SEND and an atomic
    v.sock.send(frame(0x0c, qp.qpn, 0x200, ext=reth(big, bkey, 1 << 20), ackreq=True))
    v.sock.send(frame(0x04, qp.qpn, 0x300, b"after", ackreq=True))
    v.sock.send(frame(0x14, qp.qpn, 0x301, ackreq=True,
                      ext=struct.pack(">QIQQ", buf + 0x2000, key, 1, 0)))
    fr = v.out(260, timeout=2.0)
    order = [(d["name"], d["psn"]) for d in fr if d["name"] != "READ_RESPONSE_MIDDLE"]
    t.eq(order[:2], [("READ_RESPONSE_FIRST", 0x200), ("READ_RESPONSE_LAST", 0x2ff)],
         "the READ's responses come first")
    t.eq(sum(d["name"] == "READ_RESPONSE_MIDDLE" for d in fr), 254, "254 MIDDLE responses")
    # The SEND's ACK may be left out: an ATOMIC_ACKNOWLEDGE at 0x301 acknowledges 0x300.
    t.ok(order[2:] in ([("ATOMIC_ACKNOWLEDGE", 0x301)],
                       [("ACKNOWLEDGE", 0x300), ("ATOMIC_ACKNOWLEDGE", 0x301)]),
         "then the SEND's ACK (or none) and the atomic's ACK, in PSN order", order[2:])
    t.eq([d["orig"] for d in fr if d["name"] == "ATOMIC_ACKNOWLEDGE"], [5],
         "the atomic's original value")
    t.eq(struct.unpack("<Q", v.qt.memread(buf + 0x2000, 8))[0], 6, "the atomic ran once")


def case_dup_reads(v):
    """A requester going back sends its READs again in PSN order: each is answered whole,
    in that order; a later duplicate does not cut short the answer of an earlier one."""
    pd, buf, key, cq = setup(v)
    big = v.alloc(1 << 20)
    bkey = v.create_mkey(pd, big, 1 << 20)
    v.qt.memwrite(big, pattern(1 << 20, 3))
    qp = v.wire_qp("RC", pd, cq, mtu=MTU4096)
    big_rx(v)
    half = 512 * 1024
    v.inject(frame(0x0c, qp.qpn, 0x200, ext=reth(big, bkey, half), ackreq=True))
    v.inject(frame(0x0c, qp.qpn, 0x280, ext=reth(big + half, bkey, half), ackreq=True))
    t.eq(len(v.out(256, timeout=2.0)), 256, "two READs of 512 KiB: 256 responses")
    for psn, off in ((0x200, 0), (0x280, half)):
        v.sock.send(frame(0x0c, qp.qpn, psn, ext=reth(big + off, bkey, half), ackreq=True))
    fr = v.out(257, timeout=2.0)
    t.eq([d["psn"] for d in fr], list(range(0x200, 0x300)),
         "both duplicates answered whole, in PSN order")
    t.eq(b"".join(d["payload"] for d in fr), v.qt.memread(big, 1 << 20),
         "with the bytes of their ranges")


def case_dup_no_ackreq(v):
    """Duplicates of a message sent again are ACKed only where the requester asks for it
    (AckReq): an ACK of the middle of a message makes Soft-RoCE cut the message in two."""
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq)
    qp.post_recv([(buf, 1024, key)])
    msg = pattern(600, 8)
    pkts = [(0x00, msg[:256], False), (0x01, msg[256:512], False), (0x02, msg[512:], True)]
    for i, (op, part, ack) in enumerate(pkts):
        v.inject(frame(op, qp.qpn, 0x200 + i, part, ackreq=ack))
    t.eq(names(v.out(2, timeout=0.5)), [("ACKNOWLEDGE", 0x202)], "a SEND of 3 packets: ACK")
    dup0 = v.counter("duplicate_request")
    for i, (op, part, ack) in enumerate(pkts):
        v.inject(frame(op, qp.qpn, 0x200 + i, part, ackreq=ack))
    t.eq(names(v.out(3, timeout=0.5)), [("ACKNOWLEDGE", 0x202)],
         "the same packets again: one ACK, for the AckReq packet only")
    t.eq(v.counter("duplicate_request"), dup0 + 3, "three duplicates counted")
    t.eq(len(cqes(cq)), 1, "delivered once")


def case_rra_limit(v):
    pd, buf, key, cq = setup(v)
    big = v.alloc(1 << 20)
    bkey = v.create_mkey(pd, big, 1 << 20)
    qp = v.wire_qp("RC", pd, cq, mtu=MTU4096, rra=1)      # max_dest_rd_atomic 2
    nak0 = v.counter("nak_sent")
    for k in range(4):
        v.sock.send(frame(0x0c, qp.qpn, 0x200 + 256 * k, ext=reth(big, bkey, 1 << 20),
                          ackreq=True))
    v.settle()
    v.sock.drain()
    t.eq(v.qp_state(qp), 6, "READs beyond log_rra_max 1 outstanding: the QP goes to ERR")
    t.eq(v.counter("nak_sent"), nak0 + 1, "after one NAK (invalid request)")


def main():
    run_cases(t, (("pipeline", case_pipeline), ("go-back-N", case_goback),
                  ("ACK timeout", case_timeout),
                  ("max_rd_atomic", case_rd_atomic_limit),
                  ("implied NAK", case_implied),
                  ("fence and errors", case_fence_and_errors),
                  ("window limits", case_limits),
                  ("responder order", case_resp_order),
                  ("duplicate READs", case_dup_reads),
                  ("duplicates without AckReq", case_dup_no_ackreq),
                  ("max_dest_rd_atomic", case_rra_limit)), device=Wire)


if __name__ == "__main__":
    main()
