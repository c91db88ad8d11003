#!/usr/bin/env bash
# tests/host/roce-icrc-check.py against frames Linux's Soft-RoCE sent between two VMs
# (tests/host/data/rxe-rocev2.pcap: one frame of each of 22 RC, UC and UD opcodes, IPv4,
# taken from a capture of the roce-rxe-pair test): every ICRC checks; changing only the
# fields the ICRC masks (IPv4 TOS, TTL, header checksum, UDP checksum, BTH resv8a) still
# checks; changing one byte of anything else (BTH, extended header, payload, the trailer)
# fails that frame and only that one; a trailer stored big-endian is named as such; a
# capture without RoCE v2 frames fails.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${VCX_SRC:?}"
check="python3 $VCX_SRC/tests/host/roce-icrc-check.py"
fixture=$VCX_SRC/tests/host/data/rxe-rocev2.pcap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$($check --min 22 "$fixture") || fail "rxe's frames: $out"
grep -q ' 22 RoCE v2 (UDP port 4791), 22 ICRC correct, 0 not$' <<<"$out" || fail "rxe's frames: $out"
echo "ok rxe's frames: 22 of 22 ICRCs correct"

# mutate.py IN OUT WHAT FRAME: a copy of the pcap with one change in frame FRAME (1-based).
cat >"$tmp/mutate.py" <<'EOF'
import struct, sys
src, dst, what, which = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
raw = open(src, "rb").read()
out, off, n = bytearray(raw[:24]), 24, 0
while off < len(raw):
    incl = struct.unpack("<I", raw[off + 8:off + 12])[0]
    rec, frame = raw[off:off + 16], bytearray(raw[off + 16:off + 16 + incl])
    off += 16 + incl
    n += 1
    if n == which:
        ip, udp, bth = 14, 34, 42
        ulen = struct.unpack("!H", frame[udp + 4:udp + 6])[0]
        end = udp + ulen              # the ICRC is the last 4 bytes before end
        masked = {"tos": ip + 1, "ttl": ip + 8, "ipsum": ip + 10, "udpsum": udp + 6,
                  "resv8a": bth + 4}
        changed = {"opcode": bth, "pkey": bth + 2, "destqp": bth + 7, "psn": bth + 11,
                   "ext": bth + 12, "last": end - 5, "icrc": end - 1, "udpsport": udp}
        if what in masked:
            frame[masked[what]] ^= 0x5A
        elif what in changed:
            frame[changed[what]] ^= 0x01
        elif what == "swap":
            frame[end - 4:end] = frame[end - 4:end][::-1]
        else:
            sys.exit(f"unknown change {what}")
    out += rec + frame
open(dst, "wb").write(out)
EOF
mutate() { python3 "$tmp/mutate.py" "$fixture" "$tmp/m.pcap" "$1" "$2"; }

for f in 1 9 21 22; do
	for what in tos ttl ipsum udpsum resv8a; do
		mutate $what $f
		out=$($check "$tmp/m.pcap" 2>&1) || fail "frame $f with only $what changed (a masked field) no longer checks: $out"
	done
done
echo "ok masked fields (TOS, TTL, IP checksum, UDP checksum, resv8a) do not change the ICRC"

for f in 1 5 9 13 17 21 22; do
	for what in opcode pkey destqp psn ext last icrc udpsport; do
		mutate $what $f
		if out=$($check "$tmp/m.pcap" 2>&1); then
			fail "frame $f with $what changed still checks: $out"
		fi
		grep -q ' 21 ICRC correct, 1 not$' <<<"$out" && grep -q "^  frame $f: " <<<"$out" ||
			fail "frame $f with $what changed: expected exactly frame $f to fail: $out"
	done
done
echo "ok one changed byte outside the masked fields fails its frame and only it"

mutate swap 3
if out=$($check "$tmp/m.pcap" 2>&1); then fail "a byte-swapped trailer checks: $out"; fi
grep -q "big-endian" <<<"$out" || fail "a byte-swapped trailer is not named big-endian: $out"
echo "ok a big-endian trailer is reported as such"

python3 - "$tmp/empty.pcap" <<'EOF'
import struct, sys
f = open(sys.argv[1], "wb")
f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
arp = bytes.fromhex("ffffffffffff525400770001" "0806") + bytes(46)
f.write(struct.pack("<IIII", 0, 0, len(arp), len(arp)) + arp)
EOF
if out=$($check "$tmp/empty.pcap" 2>&1); then fail "a capture without RoCE v2 passes: $out"; fi
echo "ok a capture without RoCE v2 frames fails"
! $check "$tmp/does-not-exist.pcap" >/dev/null 2>&1 || fail "a missing file passes"
echo "PASS: roce-icrc-check.py: rxe's ICRCs, the masked fields, single-byte changes, byte order"
