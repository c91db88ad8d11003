#!/usr/bin/env python3
"""Recompute the ICRC of every RoCE v2 frame of a pcap (the runner's --capture, QEMU's
filter-dump) and compare it with the frame's trailer.

RoCE v2 (IBTA vol 1, Annex A17) carries the InfiniBand transport in UDP to port 4791.
The invariant CRC (A17.3.3, and vol 1 7.8.1 for the CRC itself) is the CRC-32 of the
Ethernet/IEEE 802.3 polynomial over, in order:
  - 8 bytes of 0xff, standing for the LRH that RoCE v2 does not carry;
  - the IP header, with the fields routers may change set to all ones: IPv4 type of
    service, time to live and header checksum; IPv6 traffic class, flow label and hop
    limit (the version nibble kept);
  - the UDP header with its checksum set to all ones;
  - the BTH with its reserved byte resv8a (byte 4, in front of the destination QP) set to
    all ones;
  - the rest of the transport headers, the payload and the pad bytes, unchanged.
It is the usual CRC-32 (initial value all ones, result inverted), which is what
zlib.crc32 computes. Linux's Soft-RoCE (rxe) keeps the CRC register's value after the
8 masked-LRH bytes as its seed (0xdebb20e3), runs the same CRC over the rest without
pre- or post-inversion, inverts the result and stores the 32-bit value in the host's
byte order, which on x86 is little-endian: the first trailer byte is the CRC's low byte.
This checker expects exactly that (and reports frames that would match big-endian
apart, so a byte-order bug shows as such).

Frames are delimited by the IP and UDP lengths, not by the captured length: Ethernet
pads frames shorter than 60 bytes (a RoCE v2 packet with no payload can be 58). One
802.1Q tag is accepted. Output: counts per opcode and per source MAC, every mismatch with
its frame number. Exit status 0 only when at least one RoCE v2 frame was found (or
--min N were) and every one checked; 1 otherwise; 2 for an unreadable file.
Usage: roce-icrc-check.py [--min N] [--port 4791] [--quiet] FILE.pcap
"""
import argparse
import collections
import struct
import sys
import zlib

ROCEV2_PORT = 4791
ETH_P_IP, ETH_P_IPV6, ETH_P_8021Q = 0x0800, 0x86DD, 0x8100
LINKTYPE_ETHERNET = 1
BTH_LEN = 12
ICRC_LEN = 4

# IBTA vol 1 table 38 (opcode = transport bits 7:5, operation bits 4:0): names of the
# operations, and the transports by their bits 7:5.
TRANSPORTS = {0: "RC", 1: "UC", 2: "RD", 3: "UD", 4: "CNP", 5: "XRC"}
OPERATIONS = {
    0x00: "SEND_FIRST", 0x01: "SEND_MIDDLE", 0x02: "SEND_LAST", 0x03: "SEND_LAST_IMM",
    0x04: "SEND_ONLY", 0x05: "SEND_ONLY_IMM", 0x06: "WRITE_FIRST", 0x07: "WRITE_MIDDLE",
    0x08: "WRITE_LAST", 0x09: "WRITE_LAST_IMM", 0x0A: "WRITE_ONLY",
    0x0B: "WRITE_ONLY_IMM", 0x0C: "READ_REQUEST", 0x0D: "READ_RESPONSE_FIRST",
    0x0E: "READ_RESPONSE_MIDDLE", 0x0F: "READ_RESPONSE_LAST", 0x10: "READ_RESPONSE_ONLY",
    0x11: "ACKNOWLEDGE", 0x12: "ATOMIC_ACKNOWLEDGE", 0x13: "COMPARE_SWAP",
    0x14: "FETCH_ADD", 0x16: "SEND_LAST_INV", 0x17: "SEND_ONLY_INV",
}
# The CNP (A17.9.2: transport 100b, operation 00001) has its own name; other unknown
# operations are shown by number.
CNP_OPCODE = 0x81


def opcode_name(op):
    if op == CNP_OPCODE:
        return "CNP"
    t = TRANSPORTS.get(op >> 5, f"T{op >> 5}")
    return f"{t}_{OPERATIONS.get(op & 0x1F, f'0x{op & 0x1f:02x}')}"


def read_pcap(path):
    """Yield (frame number, captured bytes, original length) of a classic pcap file."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            raise ValueError("not a pcap file (shorter than its header)")
        magic = head[:4]
        # Microsecond or nanosecond timestamps, either byte order.
        if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
            e = "<"
        elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
            e = ">"
        else:
            raise ValueError(f"not a classic pcap file (magic {magic.hex()}; pcapng is not read)")
        linktype = struct.unpack(e + "I", head[20:24])[0] & 0x0FFFFFFF
        if linktype != LINKTYPE_ETHERNET:
            raise ValueError(f"link type {linktype}, not Ethernet")
        n = 0
        while True:
            rec = f.read(16)
            if not rec:
                return
            if len(rec) < 16:
                raise ValueError(f"truncated record header after frame {n}")
            _, _, incl, orig = struct.unpack(e + "IIII", rec)
            data = f.read(incl)
            if len(data) < incl:
                raise ValueError(f"truncated frame {n + 1}")
            n += 1
            yield n, data, orig


class Result:
    def __init__(self):
        self.frames = 0
        self.roce = 0
        self.good = 0
        self.bad = []          # (frame, why)
        self.by_opcode = collections.Counter()
        self.by_src = collections.Counter()


def masked_icrc(ip_hdr, is_v4, udp_hdr, bth, rest):
    """The ICRC over the masked headers (module docstring), as the CRC-32 value."""
    ip = bytearray(ip_hdr)
    if is_v4:
        ip[1] = 0xFF                 # type of service (DSCP, ECN)
        ip[8] = 0xFF                 # time to live
        ip[10:12] = b"\xff\xff"      # header checksum
    else:
        ip[0] |= 0x0F                # traffic class, high nibble (version kept)
        ip[1:4] = b"\xff\xff\xff"    # traffic class low nibble, flow label
        ip[7] = 0xFF                 # hop limit
    udp = bytearray(udp_hdr)
    udp[6:8] = b"\xff\xff"           # UDP checksum
    b = bytearray(bth)
    b[4] = 0xFF                      # resv8a
    return zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(b) + rest)


def check_frame(num, data, orig, port, res):
    """Check one frame; returns None for a frame that is not RoCE v2."""
    if len(data) < 14:
        return None
    src = data[6:12]
    etype = struct.unpack("!H", data[12:14])[0]
    off = 14
    if etype == ETH_P_8021Q:
        if len(data) < 18:
            return None
        etype = struct.unpack("!H", data[16:18])[0]
        off = 18
    if etype == ETH_P_IP:
        if len(data) < off + 20 or data[off] >> 4 != 4:
            return None
        ihl = (data[off] & 0x0F) * 4
        if data[off + 9] != 17:
            return None
        total = struct.unpack("!H", data[off + 2:off + 4])[0]
        frag = struct.unpack("!H", data[off + 6:off + 8])[0]
        ip_hdr_len, ip_end, is_v4 = ihl, off + total, True
        if frag & 0x1FFF or frag & 0x2000:
            # A fragment: RoCE v2 is never fragmented (DF), this one cannot be checked.
            if len(data) >= off + ihl + 4 and struct.unpack(
                    "!H", data[off + ihl + 2:off + ihl + 4])[0] == port:
                res.roce += 1
                res.bad.append((num, "IPv4 fragment"))
            return None
    elif etype == ETH_P_IPV6:
        if len(data) < off + 40 or data[off] >> 4 != 6 or data[off + 6] != 17:
            return None   # extension headers never precede RoCE v2's UDP
        plen = struct.unpack("!H", data[off + 4:off + 6])[0]
        ip_hdr_len, ip_end, is_v4 = 40, off + 40 + plen, False
    else:
        return None
    u = off + ip_hdr_len
    if len(data) < u + 8:
        return None
    dport = struct.unpack("!H", data[u + 2:u + 4])[0]
    if dport != port:
        return None
    res.roce += 1
    res.by_src[src.hex(":")] += 1
    if orig > len(data):
        res.bad.append((num, f"captured {len(data)} of {orig} bytes: cannot check"))
        return False
    if is_v4 and ihl < 20:
        res.bad.append((num, f"IPv4 header length {ihl}"))
        return False
    udp_len = struct.unpack("!H", data[u + 4:u + 6])[0]
    if ip_end > len(data) or u + udp_len != ip_end:
        res.bad.append((num, f"lengths disagree: IP ends at {ip_end}, UDP at {u + udp_len}, "
                             f"frame {len(data)} bytes"))
        return False
    ib = data[u + 8:u + udp_len]
    if len(ib) < BTH_LEN + ICRC_LEN:
        res.bad.append((num, f"UDP payload of {len(ib)} bytes: no room for BTH and ICRC"))
        return False
    op = ib[0]
    res.by_opcode[opcode_name(op)] += 1
    want = masked_icrc(data[off:u], is_v4, data[u:u + 8], ib[:BTH_LEN],
                       ib[BTH_LEN:-ICRC_LEN])
    got_le = struct.unpack("<I", ib[-ICRC_LEN:])[0]
    if got_le == want:
        res.good += 1
        return True
    got_be = struct.unpack(">I", ib[-ICRC_LEN:])[0]
    why = f"{opcode_name(op)} PSN {int.from_bytes(ib[9:12], 'big')}: ICRC trailer " \
          f"{ib[-ICRC_LEN:].hex()}, computed {struct.pack('<I', want).hex()} (little-endian)"
    if got_be == want:
        why += ": the trailer holds it big-endian"
    res.bad.append((num, why))
    return False


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pcap")
    p.add_argument("--min", type=int, default=1, help="fewest RoCE v2 frames to pass (default 1)")
    p.add_argument("--port", type=int, default=ROCEV2_PORT, help="UDP destination port (4791)")
    p.add_argument("--quiet", action="store_true", help="only the summary line")
    a = p.parse_args()
    res = Result()
    try:
        for num, data, orig in read_pcap(a.pcap):
            res.frames += 1
            check_frame(num, data, orig, a.port, res)
    except (OSError, ValueError) as e:
        print(f"roce-icrc-check: {a.pcap}: {e}", file=sys.stderr)
        return 2
    if not a.quiet:
        for name, n in sorted(res.by_opcode.items()):
            print(f"  {name:28} {n}")
        for src, n in sorted(res.by_src.items()):
            print(f"  from {src}  {n}")
    for num, why in res.bad[:20]:
        print(f"  frame {num}: {why}")
    if len(res.bad) > 20:
        print(f"  ... and {len(res.bad) - 20} more")
    print(f"{a.pcap}: {res.frames} frames, {res.roce} RoCE v2 (UDP port {a.port}), "
          f"{res.good} ICRC correct, {len(res.bad)} not")
    if res.bad:
        print("FAIL: frames whose ICRC does not check", file=sys.stderr)
        return 1
    if res.roce < a.min:
        print(f"FAIL: {res.roce} RoCE v2 frames, fewer than {a.min}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
