#!/usr/bin/env bash
# tests/host/roce-peer-stall.py (roce-check's rerun rule against Soft-RoCE) on small
# captures written here: a vcx request sent 8 times 67 ms apart and answered only after
# the last copy is a peer stall (exit 0); the same request answered after its third copy,
# sent only 5 times (vcx gave up early) or sent 10 ms apart (vcx did not wait) is not
# (exit 1); an answer on another connection, at a PSN later in serial order, does not hide
# a stall; with the peer end's capture (--peer-pcap) every copy must be there too; an
# unreadable capture is exit 2.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${VCX_SRC:?}"
check="python3 $VCX_SRC/tests/host/roce-peer-stall.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
VCX=52:54:00:77:00:01 PEER=52:54:00:77:00:02

# mkcap.py OUT EVENT...: a pcap of RoCE v2 frames, EVENT = TIME_MS,FROM(vcx|peer),OPCODE,PSN[,DESTQP]
# (DestQP 0x11 by default)
cat >"$tmp/mkcap.py" <<'EOF'
import struct, sys
macs = {"vcx": bytes.fromhex("525400770001"), "peer": bytes.fromhex("525400770002")}
ips = {"vcx": bytes([192, 168, 77, 1]), "peer": bytes([192, 168, 77, 2])}
out = open(sys.argv[1], "wb")
out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
for ev in sorted(sys.argv[2:], key=lambda e: int(e.split(",")[0])):   # in time order
    ms, who, op, psn, *qp = ev.split(",")
    op, psn, other = int(op, 0), int(psn), "peer" if who == "vcx" else "vcx"
    qp = int(qp[0], 0) if qp else 0x11
    ack_req = 0x80 if op in (0x04, 0x02) else 0       # SEND ONLY / LAST ask for an ACK
    bth = bytes([op, 0x40, 0xFF, 0xFF, 0]) + qp.to_bytes(3, "big") + struct.pack("!I", ack_req << 24 | psn)
    ext = bytes([0x1F, 0, 0, 1]) if op == 0x11 else b""  # AETH: ACK
    payload = bth + ext + b"\0" * 4                       # ICRC not checked here
    udp = struct.pack("!HHHH", 49152, 4791, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     ips[who], ips[other]) + udp
    frame = macs[other] + macs[who] + b"\x08\x00" + ip
    t = int(ms) * 1000
    out.write(struct.pack("<IIII", t // 1000000, t % 1000000, len(frame), len(frame)) + frame)
EOF
mk() { local f=$tmp/$1.pcap; shift; python3 "$tmp/mkcap.py" "$f" "$@"; echo "$f"; }
copies() { # N GAP_MS [FIRST_MS]: vcx's SEND ONLY of PSN 100, N times
	local i
	for ((i = 0; i < $1; i++)); do echo "$((${3:-1000} + i * $2)),vcx,0x04,100"; done
}

f=$(mk stall $(copies 8 67) 1900,peer,0x11,100)
out=$($check "$f" --vcx $VCX) || fail "8 copies 67 ms apart, answered after the last: not called a stall"
grep -q '^peer stall: vcx sent PSN 100 8 times from 0.000 s to 0.469 s, 67 to 67 ms apart; the peer.s first answer came at 0.900 s$' <<<"$out" ||
	fail "stall line: $out"
echo "ok 8 copies 67 ms apart, answered 0.43 s after the last: $out"

f=$(mk never $(copies 8 67))
grep -q "answer never came" <<<"$($check "$f" --vcx $VCX)" || fail "8 copies never answered: not called a stall"
echo "ok 8 copies never answered: a stall"

for c in "answered after the third copy:$(copies 3 67) 1150,peer,0x11,100 $(copies 5 67 1250 | sed 's/,100$/,101/')" \
	"sent only 5 times:$(copies 5 67) 1900,peer,0x11,100" \
	"sent 10 ms apart:$(copies 8 10) 1900,peer,0x11,100"; do
	what=${c%%:*}
	f=$(mk case ${c#*:})
	rc=0
	out=$($check "$f" --vcx $VCX) || rc=$?
	[ $rc = 1 ] || fail "$what: exit $rc, want 1 ($out)"
	echo "ok $what: not a stall"
done

# Two connections: vcx QP 0x21 talks to peer QP 0x11, 0x22 to 0x12 (paired by the first
# answers' PSNs). The peer keeps answering 0x22 at PSN 5001, "later" than 100 in 24-bit
# serial order, while PSN 100 to 0x11 goes unanswered: still a stall.
f=$(mk two-qps 900,vcx,0x04,99,0x11 910,peer,0x11,99,0x21 920,vcx,0x04,5000,0x12 \
	930,peer,0x11,5000,0x22 $(copies 8 67 | sed 's/$/,0x11/') 1100,vcx,0x04,5001,0x12 \
	1110,peer,0x11,5001,0x22 1900,peer,0x11,100,0x21)
out=$($check "$f" --vcx $VCX) || fail "a stall on one QP while another QP is answered: not called a stall"
grep -q "^peer stall: vcx sent PSN 100 8 times" <<<"$out" || fail "two QPs: $out"
echo "ok a stall on one QP while another QP is answered: $out"

# --peer-pcap: times from the vcx end; the peer's end, behind a stream link that held the
# frames back, has the 8 copies bunched (a stall), or only 5 of them (not one).
v=$(mk vcx-end $(copies 8 67) 1900,peer,0x11,100)
p=$(mk peer-end $(copies 8 2 1500) 1520,peer,0x11,100)
grep -q "^peer stall: vcx sent PSN 100 8 times" <<<"$($check "$v" --peer-pcap "$p" --vcx $VCX)" ||
	fail "8 copies at the vcx end, all 8 at the peer's: not called a stall"
echo "ok --peer-pcap with every copy at the peer's end: a stall"
p=$(mk peer-short $(copies 5 2 1500) 1520,peer,0x11,100)
rc=0
out=$($check "$v" --peer-pcap "$p" --vcx $VCX) || rc=$?
[ $rc = 1 ] || fail "--peer-pcap with 5 of 8 copies at the peer's end: exit $rc, want 1 ($out)"
echo "ok --peer-pcap with copies missing at the peer's end: not a stall"

rc=0
$check "$tmp/none.pcap" --vcx $VCX 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "missing capture: exit $rc, want 2"
echo "ok missing capture: exit 2"
