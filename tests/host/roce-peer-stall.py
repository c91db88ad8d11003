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
PSNs are matched without the QP (the two ends' PSN spaces start at random 24-bit values,
so a false match needs two QPs within a few hundred PSNs of each other).
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
    """Time, Ethernet source, BTH opcode, PSN and AckReq of every BTH frame in PCAP."""
    return subprocess.run(
        ["tshark", "-n", "-r", pcap, "-Y", "infiniband.bth", "-T", "fields",
         "-e", "frame.time_relative", "-e", "eth.src", "-e", "infiniband.bth.opcode",
         "-e", "infiniband.bth.psn", "-e", "infiniband.bth.a"],
        capture_output=True, text=True, check=True).stdout


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
    # copies of each vcx request (PSN) with AckReq in the peer's capture
    peer_copies = {}
    for f in (l.split("\t") for l in (peer or "").splitlines()):
        if (len(f) >= 5 and f[2] and f[3] and f[1].lower() == vcx and int(f[2], 0) < 0x20
                and int(f[2], 0) not in RESPONSES and f[4] in ("1", "True")):
            peer_copies[int(f[3], 0)] = peer_copies.get(int(f[3], 0), 0) + 1
    copies = {}     # PSN of an unanswered vcx request -> times it was sent
    stall = None

    def judge(psn, times, answer):
        gaps = [(b - x) * 1000 for x, b in zip(times, times[1:])]
        if len(times) < a.retries + 1 or min(gaps) < a.min_gap:
            return None
        if peer is not None and peer_copies.get(psn, 0) < len(times):
            return None                     # not every copy reached the peer
        return (f"peer stall: vcx sent PSN {psn} {len(times)} times from {times[0]:.3f} s "
                f"to {times[-1]:.3f} s, {min(gaps):.0f} to {max(gaps):.0f} ms apart; the peer's "
                + (f"first answer came at {answer:.3f} s" if answer is not None
                   else "answer never came"))

    for line in out.splitlines():
        f = line.split("\t")
        if len(f) < 5 or not f[2] or not f[3]:
            continue
        t, src, op, psn = float(f[0]), f[1].lower(), int(f[2], 0), int(f[3], 0)
        if op >= 0x20:
            continue                        # not RC
        if src == vcx:
            if op not in RESPONSES and f[4] in ("1", "True"):
                copies.setdefault(psn, []).append(t)
        elif op in RESPONSES:
            for q in [q for q in copies if psn_le(q, psn)]:
                stall = stall or judge(q, copies.pop(q), t)
    for q, times in copies.items():
        stall = stall or judge(q, times, None)
    if stall:
        print(stall)
        return 0
    return 1

if __name__ == "__main__":
    sys.exit(main())
