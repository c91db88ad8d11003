#!/usr/bin/env python3
"""Did a RoCE peer stall, or did vcx fail? Read from a capture of the link.

tests/guest/roce-check runs this on the captures of a two-VM test against rxe that
failed. It looks in PCAP, the vcx end's capture, for RC requests of the vcx end (MAC
--vcx) that asked for an acknowledgement (BTH AckReq) and that vcx sent again and again,
the original and at least --retries retransmissions, each at least --min-gap ms after
the one before (the local ACK timeout at work), while no answer arrived: no ACK, NAK,
READ response or atomic ACK from the peer with that PSN or a later one until the last
copy. With --peer-pcap (the peer's own end) every one of those copies must be in that
capture too, i.e. reached the peer's QEMU. Such a request is a peer that stopped
answering frames it was given, with vcx retrying exactly as IBTA 9.7.6.1.3 asks; when
vcx's retry_cnt then runs out, the failure is the peer's.

Send times come from the vcx end: on the runner's stream links a peer that stops reading
holds the frames back in the link (backpressure), so its own capture shows the copies
arriving bunched, when it reads them again, not when vcx sent them.

Exit status 0 and one line of evidence if there is such a request, 1 if there is none
(the failure is not explained by a peer stall), 2 if the capture cannot be read.
An answer counts only for the requests of its own connection: it names the vcx QP
(BTH DestQP) while vcx's requests name the peer's, so each vcx QP is first paired with the
peer QP it talks to, by exact PSN: an answer to vcx QP A carrying a PSN that vcx sent to
peer QP B, or vcx answering a request to A with a PSN it got as a request to B. Matching
by PSN alone let another QP's answer, at a random PSN that is "later" half of the time in
24-bit serial order, hide a stall (ibv_srq_pingpong -q 16 against rxe, 2026-12-03). An
answer to a QP never paired counts for every request, as before: when in doubt, no rerun.
Usage: roce-peer-stall.py PCAP --vcx MAC [--peer-pcap PCAP] [--retries N] [--min-gap MS]
"""
import argparse
import subprocess
import sys

PSN_MOD = 1 << 24
# RC opcodes (IBTA 9.2, table 38) the responder sends: READ responses, ACKNOWLEDGE,
# ATOMIC ACKNOWLEDGE.
RESPONSES = {0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12}


def psn_le(a, b):
    """a <= b in 24-bit serial arithmetic."""
    return (b - a) % PSN_MOD < PSN_MOD // 2


def read(pcap):
    """(time, Ethernet source, BTH opcode, PSN, AckReq, DestQP) of every RC frame in PCAP."""
    out = subprocess.run(
        ["tshark", "-n", "-r", pcap, "-Y", "infiniband.bth", "-T", "fields",
         "-e", "frame.time_relative", "-e", "eth.src", "-e", "infiniband.bth.opcode",
         "-e", "infiniband.bth.psn", "-e", "infiniband.bth.a", "-e", "infiniband.bth.destqp"],
        capture_output=True, text=True, check=True).stdout
    frames = []
    for f in (l.split("\t") for l in out.splitlines()):
        if len(f) < 6 or not f[2] or not f[3] or not f[5] or int(f[2], 0) >= 0x20:
            continue                        # not RC
        frames.append((float(f[0]), f[1].lower(), int(f[2], 0), int(f[3], 0),
                       f[4] in ("1", "True"), int(f[5], 0)))
    return frames


def pair_qps(frames, vcx):
    """vcx QP -> the peer QPs it is seen talking to (exact PSN matches, docstring)."""
    sent = {}                               # (from vcx?, PSN) -> QPs the requests named
    for _, src, op, psn, _, qp in frames:
        if op not in RESPONSES:
            sent.setdefault((src == vcx, psn), set()).add(qp)
    pairs = {}
    for _, src, op, psn, _, qp in frames:
        if op in RESPONSES:
            if src == vcx:                  # vcx answers peer QP qp: requests to vcx QP a
                for a in sent.get((False, psn), ()):
                    pairs.setdefault(a, set()).add(qp)
            else:                           # the peer answers vcx QP qp
                pairs.setdefault(qp, set()).update(sent.get((True, psn), ()))
    return pairs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("pcap")
    p.add_argument("--vcx", required=True, help="MAC of the vcx end")
    p.add_argument("--peer-pcap", help="the peer end's capture: every copy must be in it")
    p.add_argument("--retries", type=int, default=7, help="retransmissions seen (retry_cnt)")
    p.add_argument("--min-gap", type=float, default=50.0, help="ms between copies, at least")
    a = p.parse_args()
    vcx = a.vcx.lower()
    try:
        out = read(a.pcap)
        peer = read(a.peer_pcap) if a.peer_pcap else None
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"roce-peer-stall: cannot read a capture: {e}", file=sys.stderr)
        return 2
    # copies of each vcx request (peer QP, PSN) with AckReq in the peer's capture
    peer_copies = {}
    for _, src, op, psn, ack_req, qp in peer or ():
        if src == vcx and op not in RESPONSES and ack_req:
            peer_copies[qp, psn] = peer_copies.get((qp, psn), 0) + 1
    pairs = pair_qps(out, vcx)
    copies = {}     # (peer QP, PSN) of an unanswered vcx request -> times it was sent
    stall = None

    def judge(key, times, answer):
        gaps = [(b - x) * 1000 for x, b in zip(times, times[1:])]
        if len(times) < a.retries + 1 or min(gaps) < a.min_gap:
            return None
        if peer is not None and peer_copies.get(key, 0) < len(times):
            return None                     # not every copy reached the peer
        return (f"peer stall: vcx sent PSN {key[1]} {len(times)} times from {times[0]:.3f} s "
                f"to {times[-1]:.3f} s, {min(gaps):.0f} to {max(gaps):.0f} ms apart; the peer's "
                + (f"first answer came at {answer:.3f} s" if answer is not None
                   else "answer never came"))

    for t, src, op, psn, ack_req, qp in out:
        if src == vcx:
            if op not in RESPONSES and ack_req:
                copies.setdefault((qp, psn), []).append(t)
        elif op in RESPONSES:
            mine = pairs.get(qp)
            for key in [k for k in copies if (not mine or k[0] in mine) and psn_le(k[1], psn)]:
                stall = stall or judge(key, copies.pop(key), t)
    for key, times in copies.items():
        stall = stall or judge(key, times, None)
    if stall:
        print(stall)
        return 0
    return 1

if __name__ == "__main__":
    sys.exit(main())
