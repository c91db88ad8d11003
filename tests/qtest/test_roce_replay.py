#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""RoCEv2 on the wire, the responder's answers to duplicates while a long READ is being
answered (the test plays the remote requester, as in test_roce.py, whose Wire it uses):
  - a duplicate of an older READ taken part-way through a later READ's answer: the older
    one answered again, then the later one again from the PSN it was asked from, with
    READ_RESPONSE_FIRST there, never from where it stopped;
  - a duplicate WRITE asking for an ACK and then a duplicate of the READ after it: the
    READ's answer acknowledges the WRITE, and no ACK with the older PSN follows it.
Both were found with Soft-RoCE as the requester (tests/guest/roce-loss.sh against rxe,
docs/networking.md "Wire faults"). The 1 MiB READ takes four executor runs; the frames go
back to back and everything the device sends is read as it comes."""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_roce import t, frame, reth, decode, Wire  # noqa: E402
from vcx_verbs import run_cases  # noqa: E402


SIZE, MTU = 1 << 20, 1024    # the long READ: 1,024 responses, four runs of the executor


def read_source(v):
    """A 1 MiB buffer with its key, and an RC QP at path MTU 1024 to the test's QP."""
    pd = v.alloc_pd()
    buf = v.alloc(SIZE)
    key = v.create_mkey(pd, buf, SIZE)
    cq = v.create_cq()
    v.sock.drain()
    return buf, key, v.wire_qp("RC", pd, cq, mtu=3)


def answer(psn, n):
    """The (name, PSN) of a READ's n responses from PSN: FIRST, MIDDLE .., LAST."""
    return ([("READ_RESPONSE_FIRST", psn)] +
            [("READ_RESPONSE_MIDDLE", psn + i) for i in range(1, n - 1)] +
            [("READ_RESPONSE_LAST", psn + n - 1)])


def frames_after(v, frames, quiet_s=0.5, limit_s=30):
    """Send frames back to back and collect what the device sends until it is quiet for
    quiet_s: a reader thread takes them as they come, into a receive buffer with room for
    thousands (SO_RCVBUFFORCE, Linux 33, passes rmem_max as root)."""
    try:
        v.sock.rx.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), 32 << 20)
    except PermissionError:
        v.sock.rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 << 20)
    got, stop = [], threading.Event()

    def reader():
        while not stop.is_set():
            f = v.sock.recv(0.1)
            if f is not None:
                got.append(f)
    th = threading.Thread(target=reader)
    th.start()
    try:
        for f in frames:
            v.sock.send(f)
        n, end = -1, time.time() + limit_s
        while len(got) != n and time.time() < end:
            n = len(got)
            time.sleep(quiet_s)
    finally:
        stop.set()
        th.join()
    return [decode(f) for f in got]


def case_read_preempted(v):
    """A duplicate of an older READ taken while a later READ's responses are still going
    out: the older one is answered again first, then the later one again from the PSN its
    requester asked for, READ_RESPONSE_FIRST there. Never a FIRST at a PSN in the middle of
    the later READ that nobody asked for: Soft-RoCE's completer, part-way through that
    READ, takes it as out of sequence, completes the READ as successful with the rest
    never placed and moves its QP to error (WARNING in rxe_completer). hfi1's responder
    restarts the entry being sent the same way."""
    buf, key, qp = read_source(v)
    size, nb = SIZE, SIZE // MTU
    src = bytes(range(256)) * (size // 256)
    v.qt.memwrite(buf, src)
    # READ A, then READ B and A again back to back: B's first run sends 256 KiB and the
    # next takes A's duplicate. A host that stalls the test between its two frames lets B
    # finish first, which proves nothing: then again, five times at most.
    a_psn = 0x200
    for attempt in range(5):
        b_psn = a_psn + 1
        v.inject(frame(0x0c, qp.qpn, a_psn, ext=reth(buf + 0x100, key, 600), ackreq=True))
        fr = v.out(1)
        t.eq([(d["name"], d["psn"]) for d in fr], [("READ_RESPONSE_ONLY", a_psn)],
             "READ A at 0x%x: one response" % a_psn)
        fr = frames_after(v, [
            frame(0x0c, qp.qpn, b_psn, ext=reth(buf, key, size), ackreq=True),
            frame(0x0c, qp.qpn, a_psn, ext=reth(buf + 0x100, key, 600), ackreq=True)])
        seq = [(d["name"], d["psn"]) for d in fr]
        a = seq.index(("READ_RESPONSE_ONLY", a_psn)) if ("READ_RESPONSE_ONLY", a_psn) in seq \
            else -1
        if 0 < a < nb:
            break
        print("# attempt %d: A's duplicate answered after %d of B's %d responses" %
              (attempt + 1, a, nb), flush=True)
        a_psn = b_psn + nb
    t.ok(0 < a < nb, "A's duplicate taken while B's responses went out (%d of %d sent "
         "before it)" % (a, nb))
    if not 0 < a < nb:
        return
    want = answer(b_psn, nb)

    def first_diff(got, exp):
        return next(((i, g, w) for i, (g, w) in enumerate(zip(got, exp)) if g != w),
                    "lengths %d, %d" % (len(got), len(exp)))
    t.ok(seq[:a] == want[:a], "B's responses before it in order from its FIRST",
         first_diff(seq[:a], want[:a]))
    t.eq(seq[a + 1:a + 2], [("READ_RESPONSE_FIRST", b_psn)],
         "after A's answer B starts again at 0x%x, the PSN asked for, not at 0x%x" %
         (b_psn, b_psn + a))
    t.ok(seq[a + 1:] == want, "then all of B: FIRST, MIDDLE .., LAST, 0x%x .. 0x%x" %
         (b_psn, b_psn + nb - 1), first_diff(seq[a + 1:], want))
    t.eq(b"".join(d["payload"] for d in fr[a + 1:]), src, "B's payload, all of it")


def case_dup_ack_covered(v):
    """A duplicate WRITE asking for an ACK, then a duplicate of the READ after it, while
    that READ's responses are still going out: the READ's answer acknowledges the WRITE,
    so no ACK of the WRITE follows it with an older PSN (Soft-RoCE, part-way through a
    READ, takes such an ACK as the end of a message and then completes the READ with the
    rest never placed; roce-loss-rxe-peer)."""
    buf, key, qp = read_source(v)
    size, nb = SIZE, SIZE // MTU
    # The duplicates must land while the READ is still answered, which takes some
    # milliseconds; a host that stalls the test longer gets them answered afterwards (the
    # READ then twice): again, five times at most.
    w_psn = 0x200
    for attempt in range(5):
        r_psn = w_psn + 1
        write = frame(0x0a, qp.qpn, w_psn, b"abcd", ext=reth(buf, key, 4), ackreq=True)
        v.inject(write)
        t.eq([(d["name"], d["psn"]) for d in v.out(1)], [("ACKNOWLEDGE", w_psn)],
             "WRITE at 0x%x: ACK" % w_psn)
        read = frame(0x0c, qp.qpn, r_psn, ext=reth(buf, key, size), ackreq=True)
        seq = [(d["name"], d["psn"]) for d in frames_after(v, [read, write, read])]
        if sum(x[0].startswith("READ_RESPONSE") for x in seq) == nb:
            break
        print("# attempt %d: the duplicates came after the READ's answer" % (attempt + 1),
              flush=True)
        w_psn = r_psn + nb
    t.ok(seq[:nb] == answer(r_psn, nb),
         "the READ answered whole and in order, once (%d frames in all)" % len(seq))
    t.eq([x for x in seq if x[0] == "ACKNOWLEDGE"], [],
         "no ACK of the duplicate WRITE: the READ's answer covers it")


def main():
    run_cases(t, (("READ cut short by an older one", case_read_preempted),
                  ("an ACK a READ's answer covers", case_dup_ack_covered)), device=Wire)


if __name__ == "__main__":
    main()
