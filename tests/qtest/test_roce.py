#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""RoCEv2 on the wire: the device's port on a socket netdev whose far end is this test,
playing the remote host (GID ::ffff:10.0.0.2, MAC 02:00:00:00:00:02). The test has its
own RoCEv2 encoder and decoder (IBTA vol 1 ch 9 and Annex A17) with the ICRC computed by
zlib.crc32, and checks:
  - frames the device sends for RC SEND (FIRST/MIDDLE/LAST at MTU 256), WRITE_IMM, READ,
    FETCH_ADD and UD SEND: every Ethernet, IPv4, UDP and BTH field, the extension headers,
    the payload bytes, the pad and the ICRC;
  - requester completions only once the test ACKs; READ responses and the atomic ACK
    land in the local buffer; NAK sequence error -> resend from the NAK's PSN; the local
    ACK timeout -> resend, then TRANSPORT_RETRY_EXC_ERR after retry_count;
  - frames the test injects: ACK (coalesced, AETH MSN), NAK sequence error once per gap,
    RNR NAK with the timer field, remote access NAK, duplicates re-ACKed without a second
    CQE, READ requests answered with multi-packet responses (payload checked), atomics
    executed once and answered again from the replay cache (duplicates during a long READ:
    test_roce_replay.py);
  - bad ICRC, truncated frame, BTH TVer 1, wrong P_Key, unknown QP: dropped and counted;
  - the GSI QP (QP 1, GSI Q_Key, the GRH area), UC (a gap drops the message), an IPv6 GID
    (IPv6 fields, ICRC masking, UDP source port from the flow label), a GID on a VLAN
    (802.1Q tag with VID and PCP sent; tagged frames received, the tag in the UD CQE), XRC
    (initiator frames with the XRCETH, XRC answers; a target's XRC SRQ by XRCETH),
    the QP's Q counter
    (error NAKs received and sent, retries exceeded, flushes: enhanced error fields);
  - the wire-fault property: set and read back, refused values, drop and dup on transmit,
    corrupt on receive (caught by the ICRC), reorder on transmit;
  - UD multicast: ATTACH_TO_MCG / DETACH_FROM_MCG statuses, caps and limits, delivery of
    a multicast frame to every attached QP (Q_Key per QP) and not to others, a multicast
    SEND's frame (group MAC, QP 0xFFFFFF) and its local copies.
Traffic between QPs of the port (loopback without a wire, whole or as frames) is in
test_roce_loopback.py."""
import os
import struct
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, put, run_isolated  # noqa: E402
from vcx_verbs import (P, cqe_fields, dseg, raddr, atomic, xrc,  # noqa: E402
                       alloc_xrcd, create_xrc_srq, xrc_ini, xrc_tgt)
from vcx_nic import Nic, PEER, N  # noqa: E402
from vcx_qtest import get, H  # noqa: E402

t = Tap()
SEND, SEND_IMM, WRITE, WRITE_IMM, READ, CS, FA = 0x0a, 0x0b, 0x08, 0x09, 0x10, 0x11, 0x12
DEV_MAC = bytes.fromhex("525400123456")         # MAC of the device's GID0 entry
DEV_IP = bytes([10, 0, 0, 1])
PEER_IP = bytes([10, 0, 0, 2])
PEER_GID = bytes(10) + b"\xff\xff" + PEER_IP
DEV6 = bytes.fromhex("fd770000000000000000000000000001")
PEER6 = bytes.fromhex("fd770000000000000000000000000002")
RQPN = 0x123                                    # the remote QP the test plays
MTU256 = 1                                      # IB MTU code of 256 bytes

# BTH operations and what they carry (IBTA table 38): written here from the spec, not
# from the device's table.
OPS = {
    0x00: ("SEND_FIRST", ""), 0x01: ("SEND_MIDDLE", ""), 0x02: ("SEND_LAST", ""),
    0x03: ("SEND_LAST_IMM", "I"), 0x04: ("SEND_ONLY", ""), 0x05: ("SEND_ONLY_IMM", "I"),
    0x06: ("WRITE_FIRST", "R"), 0x07: ("WRITE_MIDDLE", ""), 0x08: ("WRITE_LAST", ""),
    0x09: ("WRITE_LAST_IMM", "I"), 0x0a: ("WRITE_ONLY", "R"), 0x0b: ("WRITE_ONLY_IMM", "RI"),
    0x0c: ("READ_REQUEST", "R"), 0x0d: ("READ_RESPONSE_FIRST", "A"),
    0x0e: ("READ_RESPONSE_MIDDLE", ""), 0x0f: ("READ_RESPONSE_LAST", "A"),
    0x10: ("READ_RESPONSE_ONLY", "A"), 0x11: ("ACKNOWLEDGE", "A"),
    0x12: ("ATOMIC_ACKNOWLEDGE", "AK"), 0x13: ("COMPARE_SWAP", "T"), 0x14: ("FETCH_ADD", "T"),
}
EXT_LEN = {"D": 8, "X": 4, "R": 16, "T": 28, "A": 4, "K": 8, "I": 4}


def ip_csum(h):
    s = sum(struct.unpack(">%dH" % (len(h) // 2), h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def icrc(ip_hdr, udp_and_rest, ipv4=True):
    """ICRC (Annex A17.3.3): CRC-32 over 8 bytes of 0xff, the IP header with TOS, TTL and
    checksum (IPv6: class, flow label, hop limit) set to ones, the UDP header with its
    checksum set to ones, the BTH with resv8a set to ones, the rest up to the ICRC."""
    ip = bytearray(ip_hdr)
    if ipv4:
        ip[1] = 0xff
        ip[8] = 0xff
        ip[10:12] = b"\xff\xff"
    else:
        ip[0] |= 0x0f
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xff
    rest = bytearray(udp_and_rest)
    rest[6:8] = b"\xff\xff"
    rest[8 + 4] = 0xff
    return zlib.crc32(bytes(ip) + bytes(rest), zlib.crc32(b"\xff" * 8)) & 0xffffffff


def frame(op, dqpn, psn, payload=b"", ackreq=False, se=False, ext=b"", pkey=0xffff,
          tver=0, transport=0x00, sport=0xc123, bad_icrc=False, ipv6=False, dip=None,
          dmac=DEV_MAC):
    """A RoCEv2 frame from the peer to the device over IPv4 (or IPv6); dip / dmac: another
    destination (a multicast group)."""
    pad = -len(payload) % 4
    bth = struct.pack(">BBHII", transport | op, (se << 7) | (pad << 4) | tver, pkey,
                      dqpn & 0xffffff, (ackreq << 31) | (psn & 0xffffff))
    body = bth + ext + payload + bytes(pad)
    udp = struct.pack(">HHHH", sport, 4791, 8 + len(body) + 4, 0)
    if ipv6:
        ip = struct.pack(">IHBB16s16s", 6 << 28 | 0x10 << 20 | 0xabcde, 8 + len(body) + 4, 17,
                         64, PEER6, dip or DEV6)
        c = icrc(ip, udp + body, ipv4=False)
        return dmac + PEER + b"\x86\xdd" + ip + udp + body + struct.pack("<I", c)
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(body) + 4, 0, 0x4000,
                               64, 17, 0, PEER_IP, dip or DEV_IP))
    struct.pack_into(">H", ip, 10, ~ip_csum(bytes(ip)) & 0xffff)
    c = icrc(bytes(ip), udp + body) ^ (1 if bad_icrc else 0)
    return dmac + PEER + b"\x08\x00" + bytes(ip) + udp + body + struct.pack("<I", c)


def aeth(synd, msn):
    return struct.pack(">I", synd << 24 | msn)


def reth(va, rkey, length):
    return struct.pack(">QII", va, rkey, length)


def decode(f):
    """Every field of a RoCEv2/IPv4 frame from the device; raises on any inconsistency."""
    d = {"dmac": f[0:6], "smac": f[6:12], "etype": struct.unpack_from(">H", f, 12)[0]}
    if d["etype"] == 0x86dd:
        ip = f[14:54]
        vtf, plen, nh, hop, src, dst = struct.unpack(">IHBB16s16s", ip)
        d.update(version=vtf >> 28, tclass=(vtf >> 20) & 0xff, flow=vtf & 0xfffff, plen=plen,
                 nh=nh, hop=hop, src=src, dst=dst, ipv6=True)
        assert len(f) >= 54 + plen, "frame shorter than its IPv6 payload length"
        l4 = f[54:54 + plen]
    else:
        assert d["etype"] == 0x0800, "ethertype 0x%x" % d["etype"]
        ip = f[14:34]
        (vihl, tos, tot, ident, frag, ttl, proto, csum, src, dst) = struct.unpack(
            ">BBHHHBBH4s4s", ip)
        d.update(vihl=vihl, tos=tos, tot=tot, frag=frag, ttl=ttl, proto=proto, src=src,
                 dst=dst, ip_csum_ok=ip_csum(ip) == 0xffff, ipv6=False)
        assert len(f) >= 14 + tot, "frame shorter than its IP length"
        l4 = f[34:14 + tot]
    sport, dport, ulen, ucsum = struct.unpack_from(">HHHH", l4, 0)
    d.update(sport=sport, dport=dport, ulen=ulen, ucsum=ucsum, ulen_ok=ulen == len(l4))
    b = l4[8:20]
    op, fl, pkey, dqpn, apsn = struct.unpack(">BBHII", b)
    d.update(opcode=op, se=fl >> 7, mig=(fl >> 6) & 1, pad=(fl >> 4) & 3, tver=fl & 15,
             pkey=pkey, resv8a=dqpn >> 24, dqpn=dqpn & 0xffffff, ackreq=apsn >> 31,
             resv7=(apsn >> 24) & 0x7f, psn=apsn & 0xffffff)
    name, exts = OPS[op & 0x1f]
    d["name"] = name
    if op >> 5 == 3:
        exts = "D" + exts
    elif op >> 5 == 5 and not 0x0d <= op & 0x1f <= 0x12:
        exts = "X" + exts               # an XRC request: the XRCETH (IBTA annex A14)
    off = 20
    for e in exts:
        h = l4[off:off + EXT_LEN[e]]
        if e == "D":
            d["qkey"], sq = struct.unpack(">II", h)
            d["sqpn"] = sq & 0xffffff
        elif e == "X":
            d["xrcsrq"] = struct.unpack(">I", h)[0]
        elif e == "R":
            d["va"], d["rkey"], d["dma_len"] = struct.unpack(">QII", h)
        elif e == "T":
            d["va"], d["rkey"], d["swap_add"], d["compare"] = struct.unpack(">QIQQ", h)
        elif e == "A":
            v = struct.unpack(">I", h)[0]
            d["synd"], d["msn"] = v >> 24, v & 0xffffff
        elif e == "K":
            d["orig"] = struct.unpack(">Q", h)[0]
        elif e == "I":
            d["imm"] = struct.unpack(">I", h)[0]
        off += EXT_LEN[e]
    end = len(l4) - 4
    d["payload"] = l4[off:end - d["pad"]]
    d["pad_bytes"] = l4[end - d["pad"]:end]
    d["icrc"] = struct.unpack("<I", l4[end:])[0]
    d["icrc_ok"] = d["icrc"] == icrc(ip, l4[:end], ipv4=not d["ipv6"])
    return d


def check_hdr(d, what, opcode, dqpn, psn, ackreq, plen):
    """The fields every frame from the device has, as IBTA and RFC 791/768 give them."""
    if d["ipv6"]:
        t.eq((d["dmac"], d["smac"], d["etype"], d["version"], d["nh"], d["src"], d["dst"]),
             (PEER, DEV_MAC, 0x86dd, 6, 17, DEV6, PEER6),
             what + ": Ethernet, IPv6 version 6, next header UDP, addresses")
    else:
        t.eq((d["dmac"], d["smac"], d["vihl"], d["tos"], d["frag"], d["ttl"], d["proto"],
          d["ip_csum_ok"], d["src"], d["dst"]),
             (PEER, DEV_MAC, 0x45, 0, 0x4000, 64, 17, True, DEV_IP, PEER_IP),
             what + ": Ethernet to the path MAC from the GID's, IPv4 IHL 5 TOS 0 DF TTL 64 "
             "UDP, checksum, addresses")
    t.eq((d["dport"], d["ucsum"], d["ulen_ok"], d["sport"] >= 0xc000),
         (4791, 0, True, True), what + ": UDP to 4791, checksum 0, length, source port "
         "in 0xc000-0xffff")
    t.eq((d["opcode"], d["mig"], d["tver"], d["pkey"], d["resv8a"], d["dqpn"], d["ackreq"],
          d["resv7"], d["psn"], d["pad"], d["pad_bytes"], len(d["payload"]), d["icrc_ok"]),
         (opcode, 0, 0, 0xffff, 0, dqpn, ackreq, 0, psn, -plen % 4, bytes(-plen % 4), plen,
          True), what + ": BTH opcode 0x%02x, TVer 0, P_Key, QP, AckReq %d, PSN 0x%x, "
         "pad, ICRC" % (opcode, ackreq, psn))


class Wire(Nic):
    """A device with GID0 ::ffff:10.0.0.1 and the test as the peer host."""

    def wait(self, key, before, timeout=5.0):
        end = time.time() + timeout
        while int(self.d.state()[key]) == before:
            if time.time() > end:
                raise RuntimeError("state %s stayed %d" % (key, before))
            time.sleep(0.005)
        self.settle()

    def inject(self, f):
        before = int(self.d.state()["roce_rx_pkts"])
        self.sock.send(f)
        self.wait("roce_rx_pkts", before)

    def out(self, n, timeout=2.0):
        """The next n frames the device sent (decoded); fewer if no more come."""
        got = []
        for _ in range(n):
            f = self.sock.recv(timeout)
            if f is None:
                break
            got.append(decode(f))
        return got

    def quiet(self):
        return self.sock.recv(0.2) is None

    def counter(self, name):
        return int(self.d.state()[name])

    def modify_raw(self, op, qp, fields=(), ads=(), rgid=None, rmac=None):
        c = bytearray(P["VCX_QPC_SIZE"])
        for f, val in fields:
            put(c, P["VCX_QPC_" + f.upper()], val)
        base = P["VCX_QPC_PRI_PATH_AT"]
        for f, val in ads:
            put(c, P["VCX_ADS_" + f.upper()], val, base)
        if rgid:
            c[base + 0x10:base + 0x20] = rgid
        if rmac:
            c[base + 0x26:base + 0x2c] = rmac
        r = self.cmd(op, in_len=0x110, fields=[(P["VCX_MODIFY_QP_IN_QPN"], qp.qpn),
                                               (P["VCX_QP_IN_OPT_PARAM_MASK"], 0)],
                     payload={0x18: c})
        assert r.status == 0, "%s 0x%x 0x%x" % (op, r.status, r.syndrome)

    def wire_qp(self, st, pd, cq, psn=0x100, rpsn=0x200, retry=7, ack_timeout=14,
                min_rnr=5, mtu=MTU256, rnr_retry=7, counter=0, rgid=PEER_GID, path=(),
                rts=True, log_sq=4, sra=2, rra=2, qp=None):
        """A QP connected to the test's QP RQPN on the peer host (path rgid/rmac); qp: one
        created already (an XRC QP, st "RC")."""
        qp = qp or self.create_qp(st, pd, cq, cq, log_sq=log_sq)
        f = [("rre", 1), ("rwe", 1), ("rae", 1)] if st == "RC" else [("rwe", 1)]
        f.append(("counter_set_id", counter))
        self.modify_raw("RST2INIT_QP", qp, f, ads=[("vhca_port_num", 1)])
        f = [("mtu", mtu), ("log_msg_max", 30), ("remote_qpn", RQPN),
             ("next_rcv_psn", rpsn)]
        if st == "RC":
            f += [("log_rra_max", rra), ("min_rnr_nak", min_rnr)]
        self.modify_raw("INIT2RTR_QP", qp, f,
                        ads=[("vhca_port_num", 1), ("hop_limit", 64)] + list(path),
                        rgid=rgid, rmac=PEER)
        if not rts:
            return qp                   # a responder only (perftest's READ server)
        f = [("next_send_psn", psn)]
        if st == "RC":
            f += [("retry_count", retry), ("rnr_retry", rnr_retry), ("log_sra_max", sra)]
        self.modify_raw("RTR2RTS_QP", qp, f, ads=[("ack_timeout", ack_timeout)])
        return qp


def wire_av(qkey, dqpn, gid=PEER_GID, rmac=PEER, sgid_index=0, sl=0):
    """A UD address vector (mlx5_wqe_av, 48 bytes): Q_Key, remote QP (with the GRH bit),
    rmac, hop limit 64, the GRH flag and sgid_index, the remote GID; RoCE keeps the SL in
    byte 0x0c bits 3:1."""
    a = bytearray(48)
    struct.pack_into(">I", a, 0, qkey)
    struct.pack_into(">I", a, 8, 0x80000000 | dqpn)
    a[0x0c] = (sl & 7) << 1
    a[0x14:0x1a] = rmac
    a[0x1b] = 64
    struct.pack_into(">I", a, 0x1c, 1 << 30 | sgid_index << 20)
    a[0x20:0x30] = gid
    return bytes(a)


def setup(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x10000)
    key = v.create_mkey(pd, buf, 0x10000)
    cq = v.create_cq()
    v.sock.drain()
    return pd, buf, key, cq


def pattern(n, seed):
    return bytes((seed + i * 7) & 0xff for i in range(n))


def case_rc_send(v):
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq)
    msg = pattern(600, 1)
    v.qt.memwrite(buf, msg)
    qp.post_send(SEND_IMM, dseg(buf, 600, key), imm=0xfeedf00d, se=True)
    fr = v.out(3)
    t.eq([d["name"] for d in fr], ["SEND_FIRST", "SEND_MIDDLE", "SEND_LAST_IMM"],
         "RC SEND_IMM of 600 bytes at MTU 256: FIRST, MIDDLE, LAST_IMM")
    for i, d in enumerate(fr):
        check_hdr(d, "SEND packet %d" % i, [0x00, 0x01, 0x03][i], RQPN, 0x100 + i, i == 2,
                  [256, 256, 88][i])
    t.eq((b"".join(d["payload"] for d in fr), fr[2].get("imm"), [d["se"] for d in fr]),
         (msg, 0xfeedf00d, [0, 0, 1]), "payload bytes, ImmDt on the last, SE on the last")
    t.eq(fr[0]["sport"], fr[2]["sport"], "one UDP source port for the QP")
    t.eq(cq.poll(), None, "no requester CQE before the ACK")
    v.inject(frame(0x11, qp.qpn, 0x101, ext=aeth(0x1f, 0)))
    t.eq(cq.poll(), None, "an ACK of PSN 0x101 does not complete a message ending at 0x102")
    v.inject(frame(0x11, qp.qpn, 0x102, ext=aeth(0x1f, 1)))
    e = cq.poll()
    t.ok(e is not None and cqe_fields(e)["opcode"] == 0 and
         cqe_fields(e)["byte_cnt"] == 600, "ACK of 0x102: requester CQE, byte_cnt 600")
    # go-back-N: the next SEND, a NAK sequence error at its second packet
    qp.post_send(SEND, dseg(buf, 600, key))
    fr = v.out(3)
    t.eq([d["psn"] for d in fr], [0x103, 0x104, 0x105], "next message from PSN 0x103")
    v.inject(frame(0x11, qp.qpn, 0x107, ext=aeth(0x60, 1)))
    t.ok(v.quiet(), "a NAK of a PSN never sent is ignored")
    v.inject(frame(0x11, qp.qpn, 0x104, ext=aeth(0x60, 1)))
    fr = v.out(2)
    t.eq([(d["name"], d["psn"], d["payload"]) for d in fr],
         [("SEND_MIDDLE", 0x104, msg[256:512]), ("SEND_LAST", 0x105, msg[512:])],
         "NAK sequence error at 0x104: MIDDLE and LAST sent again, payload re-read")
    v.inject(frame(0x11, qp.qpn, 0x105, ext=aeth(0x1f, 2)))
    t.ok(cq.poll() is not None, "and its ACK completes it")


def case_vport_counters(v):
    """QUERY_VPORT_COUNTER's ib counters count the RoCE frames of the port (what mlx5_ib's
    PMA reads for the port_xmit/rcv counters); the eth counters leave them out."""
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq)
    c0 = v.vport_counters()
    v.qt.memwrite(buf, pattern(600, 3))
    qp.post_send(SEND, dseg(buf, 600, key))
    sent = [v.sock.recv(2.0) for _ in range(3)]
    t.ok(all(sent), "SEND of 600 bytes at MTU 256: 3 frames")
    ack = frame(0x11, qp.qpn, 0x102, ext=aeth(0x1f, 1))
    v.inject(frame(0x11, qp.qpn, 0x102, ext=aeth(0x1f, 1), bad_icrc=True))
    v.inject(ack)
    t.ok(cq.poll() is not None, "the ACK completes it")
    c1 = v.vport_counters(clear=1)

    def delta(name):
        return tuple(b - a for a, b in zip(c0[name], c1[name]))
    t.eq((delta("tx_ib_unicast"), delta("rx_ib_unicast")),
         ((3, sum(len(f) for f in sent if f)), (1, len(ack))),
         "transmitted_ib_unicast: the 3 frames and their bytes; received_ib_unicast: the "
         "ACK, not the one with a bad ICRC")
    t.eq([delta(n) for n in ("tx_eth_unicast", "rx_eth_unicast", "tx_ib_multicast",
                             "rx_ib_multicast")], [(0, 0)] * 4,
         "the eth counters and the ib multicast counters did not move")
    t.eq((v.vport_counters()["tx_ib_unicast"], v.vport_counters()["rx_ib_unicast"]),
         ((0, 0), (0, 0)), "clear: they start again from 0")


def case_rc_write_read_atomic(v):
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq)
    msg = pattern(300, 9)
    v.qt.memwrite(buf, msg)
    wqe_segs = raddr(0x7000000000, 0xabcd) + dseg(buf, 300, key)
    qp.post_send(WRITE_IMM, wqe_segs, imm=0x11223344)
    fr = v.out(2)
    t.eq([d["name"] for d in fr], ["WRITE_FIRST", "WRITE_LAST_IMM"], "WRITE_IMM of 300 B")
    check_hdr(fr[0], "WRITE_FIRST", 0x06, RQPN, 0x100, 0, 256)
    check_hdr(fr[1], "WRITE_LAST_IMM", 0x09, RQPN, 0x101, 1, 44)
    t.eq((fr[0]["va"], fr[0]["rkey"], fr[0]["dma_len"], fr[1]["imm"],
          fr[0]["payload"] + fr[1]["payload"]), (0x7000000000, 0xabcd, 300, 0x11223344, msg),
         "RETH va, rkey, DMA length on FIRST; ImmDt on LAST; payload")
    v.inject(frame(0x11, qp.qpn, 0x101, ext=aeth(0x1f, 1)))
    t.ok(cq.poll() is not None, "WRITE_IMM completes at its ACK")
    # READ of 600 bytes: one request, three responses
    v.qt.memset(buf + 0x1000, 600, 0)
    qp.post_send(READ, raddr(0x7000001000, 0xabcd) + dseg(buf + 0x1000, 600, key))
    fr = v.out(1)
    check_hdr(fr[0], "READ_REQUEST", 0x0c, RQPN, 0x102, 1, 0)
    t.eq((fr[0]["va"], fr[0]["rkey"], fr[0]["dma_len"]), (0x7000001000, 0xabcd, 600),
         "READ request RETH")
    data = pattern(600, 77)
    v.inject(frame(0x0d, qp.qpn, 0x102, data[:256], ext=aeth(0x1f, 2)))
    v.inject(frame(0x0e, qp.qpn, 0x103, data[256:512]))
    t.eq(cq.poll(), None, "no CQE before READ_RESPONSE_LAST")
    v.inject(frame(0x0f, qp.qpn, 0x104, data[512:], ext=aeth(0x1f, 2)))
    e = cq.poll()
    t.ok(e is not None and cqe_fields(e)["syndrome"] == 0, "READ completes")
    t.eq(v.qt.memread(buf + 0x1000, 600), data, "READ responses placed in the local buffer")
    # FETCH_ADD: the next PSN is 0x105 (the READ took three)
    v.qt.memwrite(buf + 0x2000, bytes(8))
    qp.post_send(FA, raddr(0x7000002000, 0xabcd) + atomic(5) + dseg(buf + 0x2000, 8, key))
    fr = v.out(1)
    check_hdr(fr[0], "FETCH_ADD", 0x14, RQPN, 0x105, 1, 0)
    t.eq((fr[0]["va"], fr[0]["rkey"], fr[0]["swap_add"], fr[0]["compare"]),
         (0x7000002000, 0xabcd, 5, 0), "AtomicETH va, rkey, add, compare")
    v.inject(frame(0x12, qp.qpn, 0x105, ext=aeth(0x1f, 3) + struct.pack(">Q", 0x1234)))
    t.ok(cq.poll() is not None, "atomic completes at its ATOMIC_ACKNOWLEDGE")
    t.eq(struct.unpack("<Q", v.qt.memread(buf + 0x2000, 8))[0], 0x1234,
         "AtomicAckETH original value in the local buffer (host order)")


def case_ud_send(v):
    pd, buf, key, cq = setup(v)
    qp = v.create_qp("UD", pd, cq, cq)
    v.connect(qp, qkey=0x1111)
    msg = pattern(100, 3)
    v.qt.memwrite(buf, msg)
    qp.post_send(SEND, wire_av(0x2222, 0x456) + dseg(buf, 100, key))
    fr = v.out(1)
    t.eq(len(fr), 1, "UD SEND: one frame")
    check_hdr(fr[0], "UD SEND_ONLY", 0x64, 0x456, fr[0]["psn"], 0, 100)
    t.eq((fr[0]["qkey"], fr[0]["sqpn"], fr[0]["payload"]), (0x2222, qp.qpn, msg),
         "DETH Q_Key and source QP, payload")
    e = cq.poll()
    t.ok(e is not None and cqe_fields(e)["opcode"] == 0, "UD completes once sent")


def case_responder(v):
    pd, buf, key, cq = setup(v)
    qc = v.q_counter()
    qp = v.wire_qp("RC", pd, cq, min_rnr=5, counter=qc)
    rk = key
    # RNR: no receive WQE yet
    v.inject(frame(0x04, qp.qpn, 0x200, b"hello", ackreq=True))
    fr = v.out(1)
    t.eq([(d["name"], d["psn"], d["synd"]) for d in fr], [("ACKNOWLEDGE", 0x200, 0x25)],
         "SEND without a receive WQE: RNR NAK, timer field = min_rnr_nak 5")
    check_hdr(fr[0], "RNR NAK", 0x11, RQPN, 0x200, 0, 0)
    qp.post_recv([(buf + 0x3000, 1024, key)])
    qp.post_recv([(buf + 0x4000, 1024, key)])
    v.inject(frame(0x04, qp.qpn, 0x200, b"hello", ackreq=True))
    fr = v.out(1)
    t.eq([(d["name"], d["psn"], d["synd"], d["msn"]) for d in fr],
         [("ACKNOWLEDGE", 0x200, 0x1f, 1)], "SEND_ONLY: ACK, credits invalid, MSN 1")
    e = cq.poll()
    t.ok(e is not None and cqe_fields(e)["opcode"] == 2 and cqe_fields(e)["byte_cnt"] == 5,
         "receive CQE: RESP_SEND, byte_cnt 5")
    t.eq(v.qt.memread(buf + 0x3000, 5), b"hello", "payload in the receive buffer")
    dup0 = v.counter("duplicate_request")
    v.inject(frame(0x04, qp.qpn, 0x200, b"hello", ackreq=True))
    fr = v.out(1)
    t.eq([(d["name"], d["psn"], d["synd"]) for d in fr], [("ACKNOWLEDGE", 0x200, 0x1f)],
         "duplicate SEND: ACKed again")
    t.eq((cq.poll(), v.counter("duplicate_request")), (None, dup0 + 1),
         "duplicate: no second CQE, counted")
    # a gap: one NAK, then silence
    oos0 = v.counter("out_of_sequence")
    v.inject(frame(0x04, qp.qpn, 0x202, b"x", ackreq=True))
    fr = v.out(1)
    t.eq([(d["name"], d["psn"], d["synd"]) for d in fr], [("ACKNOWLEDGE", 0x201, 0x60)],
         "PSN 0x202 while 0x201 expected: NAK sequence error with PSN 0x201")
    v.inject(frame(0x04, qp.qpn, 0x203, b"y", ackreq=True))
    t.ok(v.quiet(), "a second packet of the same gap: no second NAK")
    t.eq(v.counter("out_of_sequence"), oos0 + 2, "both counted out_of_sequence")
    # multi-packet SEND in order: one ACK for the AckReq packet
    msg = pattern(600, 5)
    v.inject(frame(0x00, qp.qpn, 0x201, msg[:256]))
    v.inject(frame(0x01, qp.qpn, 0x202, msg[256:512]))
    v.inject(frame(0x02, qp.qpn, 0x203, msg[512:], ackreq=True))
    fr = v.out(2, timeout=0.5)
    t.eq([(d["name"], d["psn"], d["synd"], d["msn"]) for d in fr],
         [("ACKNOWLEDGE", 0x203, 0x1f, 2)], "FIRST/MIDDLE/LAST: one ACK (PSN 0x203, MSN 2)")
    e = cq.poll()
    t.ok(e is not None and cqe_fields(e)["byte_cnt"] == 600, "one CQE of 600 bytes")
    t.eq(v.qt.memread(buf + 0x4000, 600), msg, "payload of the three packets")
    # READ request: responses at MTU 256, payload from the rkey range
    src = pattern(600, 99)
    v.qt.memwrite(buf + 0x5000, src)
    v.inject(frame(0x0c, qp.qpn, 0x204, ext=reth(buf + 0x5000, rk, 600), ackreq=True))
    fr = v.out(3)
    t.eq([(d["name"], d["psn"], d.get("synd")) for d in fr],
         [("READ_RESPONSE_FIRST", 0x204, 0x1f), ("READ_RESPONSE_MIDDLE", 0x205, None),
          ("READ_RESPONSE_LAST", 0x206, 0x1f)], "READ: FIRST (AETH), MIDDLE, LAST (AETH)")
    for i, d in enumerate(fr):
        check_hdr(d, "READ response %d" % i, [0x0d, 0x0e, 0x0f][i], RQPN, 0x204 + i, 0,
                  [256, 256, 88][i])
    t.eq(b"".join(d["payload"] for d in fr), src, "READ response payload bytes")
    # duplicate READ from its second PSN: answered again from there
    v.inject(frame(0x0c, qp.qpn, 0x205, ext=reth(buf + 0x5100, rk, 344), ackreq=True))
    fr = v.out(2)
    t.eq([(d["name"], d["psn"], d["payload"]) for d in fr],
         [("READ_RESPONSE_FIRST", 0x205, src[256:512]),
          ("READ_RESPONSE_LAST", 0x206, src[512:])],
         "duplicate READ at PSN 0x205: answered again from it")
    # atomic executed once, duplicate answered from the replay cache
    v.qt.memwrite(buf + 0x6000, struct.pack("<Q", 40))
    ateth = struct.pack(">QIQQ", buf + 0x6000, rk, 2, 0)
    v.inject(frame(0x14, qp.qpn, 0x207, ext=ateth, ackreq=True))
    v.inject(frame(0x14, qp.qpn, 0x207, ext=ateth, ackreq=True))
    fr = v.out(2)
    t.eq([(d["name"], d["psn"], d["orig"]) for d in fr],
         [("ATOMIC_ACKNOWLEDGE", 0x207, 40), ("ATOMIC_ACKNOWLEDGE", 0x207, 40)],
         "FETCH_ADD and its duplicate: both answered with the original value 40")
    t.eq(struct.unpack("<Q", v.qt.memread(buf + 0x6000, 8))[0], 42,
         "executed once (40 + 2)")
    # remote access violation: NAK, QP to ERR
    v.inject(frame(0x0a, qp.qpn, 0x208, b"zz", ext=reth(buf, 0xdead00, 2), ackreq=True))
    fr = v.out(1)
    t.eq([(d["name"], d["psn"], d["synd"]) for d in fr], [("ACKNOWLEDGE", 0x208, 0x62)],
         "WRITE with a bad rkey: NAK remote access error")
    t.eq(v.qp_state(qp), 6, "and the QP is in ERR")
    r = v.query_q_counter(qc, clear=1)
    names = ["OUT_OF_BUFFER", "OUT_OF_SEQUENCE", "DUPLICATE_REQUEST", "RX_READ_REQUESTS",
             "RX_ATOMIC_REQUESTS", "RX_WRITE_REQUESTS", "PACKET_SEQ_ERR",
             "RESP_REMOTE_ACCESS_ERRORS", "RESP_CQE_ERROR"]
    t.eq([get(r.out, N["VCX_QUERY_Q_COUNTER_OUT_" + n]) for n in names],
         [1, 2, 3, 1, 1, 1, 0, 1, 0], "the QP's Q counter: out_of_buffer 1 (the RNR NAK), "
         "out_of_sequence 2, duplicate_request 3, one READ, one atomic, one WRITE request, "
         "resp_remote_access_errors 1 (the NAK sent; no receive WQE left to flush)")
    r = v.query_q_counter(qc)
    t.eq([get(r.out, N["VCX_QUERY_Q_COUNTER_OUT_" + n])
          for n in ("DUPLICATE_REQUEST", "RESP_REMOTE_ACCESS_ERRORS")], [0, 0],
         "cleared by clear=1")
    # an invalid request: a SEND_MIDDLE with no message begun, on a QP with no receive WQE
    qp2 = v.wire_qp("RC", pd, cq, counter=qc)
    v.inject(frame(0x01, qp2.qpn, 0x200, bytes(256), ackreq=True))
    fr = v.out(1)
    t.eq([(d["name"], d["psn"], d["synd"]) for d in fr], [("ACKNOWLEDGE", 0x200, 0x61)],
         "SEND_MIDDLE with no message begun: NAK invalid request")
    r = v.query_q_counter(qc)
    t.eq([get(r.out, N["VCX_QUERY_Q_COUNTER_OUT_" + n])
          for n in ("RESP_REMOTE_INVALID_REQUEST", "RESP_CQE_ERROR", "OUT_OF_BUFFER")],
         [1, 0, 0], "resp_remote_invalid_request 1 (the NAK sent), no CQE")


def case_dup_after_read(v):
    """A duplicate WRITE behind a READ is ACKed with its own PSN, never with a PSN of the
    READ's responses: a requester takes an ACK of a READ's last PSN as its completion
    (Soft-RoCE does, rxe_comp.c COMPST_WRITE_SEND) and the READ then ends without the
    response that carried that PSN; found by tests/guest/roce-loss.sh against rxe (the
    last 1 KiB of a READ never placed, the READ completed successfully)."""
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq)
    v.inject(frame(0x0a, qp.qpn, 0x200, b"abcd", ext=reth(buf + 0x1000, key, 4), ackreq=True))
    fr = v.out(1)
    t.eq([(d["name"], d["psn"], d["synd"]) for d in fr], [("ACKNOWLEDGE", 0x200, 0x1f)],
         "WRITE_ONLY at 0x200: ACK")
    v.inject(frame(0x0c, qp.qpn, 0x201, ext=reth(buf + 0x2000, key, 600), ackreq=True))
    fr = v.out(3)
    t.eq([(d["name"], d["psn"]) for d in fr],
         [("READ_RESPONSE_FIRST", 0x201), ("READ_RESPONSE_MIDDLE", 0x202),
          ("READ_RESPONSE_LAST", 0x203)], "READ at 0x201: responses 0x201 .. 0x203")
    dup0 = v.counter("duplicate_request")
    v.inject(frame(0x0a, qp.qpn, 0x200, b"abcd", ext=reth(buf + 0x1000, key, 4), ackreq=True))
    fr = v.out(1)
    t.eq([(d["name"], d["psn"], d["synd"]) for d in fr], [("ACKNOWLEDGE", 0x200, 0x1f)],
         "the WRITE again: ACKed with its own PSN 0x200, not the READ's last 0x203")
    t.eq(v.counter("duplicate_request"), dup0 + 1, "counted as a duplicate")
    t.ok(v.quiet(), "nothing more sent")
    # a second READ, then the first asked again from its middle: only that is answered
    v.inject(frame(0x0c, qp.qpn, 0x204, ext=reth(buf + 0x3000, key, 300), ackreq=True))
    fr = v.out(2)
    t.eq([(d["name"], d["psn"]) for d in fr],
         [("READ_RESPONSE_FIRST", 0x204), ("READ_RESPONSE_LAST", 0x205)],
         "READ at 0x204: responses 0x204, 0x205")
    v.inject(frame(0x0c, qp.qpn, 0x202, ext=reth(buf + 0x2100, key, 344), ackreq=True))
    fr = v.out(3, timeout=0.5)
    t.eq([(d["name"], d["psn"]) for d in fr],
         [("READ_RESPONSE_FIRST", 0x202), ("READ_RESPONSE_LAST", 0x203)],
         "the first READ asked again from 0x202: answered from there, the READ at 0x204 "
         "(answered before) not sent again unasked")


def case_rtr_responder(v):
    """A QP left in RTR responds: READ responses and ACKs (IBTA 10.3.1), as the server of
    ib_read_bw, which never moves its QP to RTS, needs."""
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq, rts=False)
    v.events()
    src = pattern(600, 77)
    v.qt.memwrite(buf + 0x7000, src)
    v.inject(frame(0x0c, qp.qpn, 0x200, ext=reth(buf + 0x7000, key, 600), ackreq=True))
    fr = v.out(3)
    t.eq([(d["name"], d["psn"]) for d in fr],
         [("READ_RESPONSE_FIRST", 0x200), ("READ_RESPONSE_MIDDLE", 0x201),
          ("READ_RESPONSE_LAST", 0x202)], "RTR QP: READ answered with three responses")
    t.eq(b"".join(d["payload"] for d in fr), src, "RTR QP: READ response payload bytes")
    qpn_of = lambda e: e[0x3b] | e[0x3a] << 8 | e[0x39] << 16  # noqa: E731
    t.eq([(ty, qpn_of(e)) for ty, e in v.events()], [(0x02, qp.qpn)],
         "first packet in RTR: Communication Established (0x02) for the QP")
    v.inject(frame(0x0a, qp.qpn, 0x203, b"rtr", ext=reth(buf + 0x7400, key, 3), ackreq=True))
    fr = v.out(1)
    t.eq([(d["name"], d["psn"], d["synd"]) for d in fr], [("ACKNOWLEDGE", 0x203, 0x1f)],
         "RTR QP: WRITE ACKed")
    t.eq(v.qt.memread(buf + 0x7400, 3), b"rtr", "RTR QP: WRITE payload in memory")
    t.eq(v.events(), [], "Communication Established once per INIT2RTR, not per packet")


def case_bad_frames(v):
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq)
    qp.post_recv([(buf, 1024, key)])
    good = frame(0x04, qp.qpn, 0x200, b"abcd", ackreq=True)
    cases = [
        ("bad ICRC", frame(0x04, qp.qpn, 0x200, b"abcd", ackreq=True, bad_icrc=True),
         "roce_icrc_err"),
        ("BTH TVer 1", frame(0x04, qp.qpn, 0x200, b"abcd", ackreq=True, tver=1),
         "roce_bad_tver"),
        ("P_Key 0x1234", frame(0x04, qp.qpn, 0x200, b"abcd", ackreq=True, pkey=0x1234),
         "roce_bad_pkey"),
        ("unknown QP", frame(0x04, 0xfff0, 0x200, b"abcd", ackreq=True), "roce_bad_qp"),
    ]
    trunc = bytearray(good[:14 + 20 + 8 + 6])
    struct.pack_into(">H", trunc, 16, 20 + 8 + 6)
    trunc[24:26] = b"\0\0"
    struct.pack_into(">H", trunc, 24, ~ip_csum(bytes(trunc[14:34])) & 0xffff)
    struct.pack_into(">H", trunc, 38, 8 + 6)
    cases.append(("truncated (6 bytes of BTH)", bytes(trunc), "roce_malformed"))
    for name, f, ctr in cases:
        c0, d0 = v.counter(ctr), v.counter("roce_rx_drop")
        v.inject(f)
        t.eq((v.counter(ctr), v.counter("roce_rx_drop")), (c0 + 1, d0 + 1),
             name + ": dropped and counted (%s)" % ctr)
        t.ok(v.quiet(), name + ": nothing sent back")
    t.eq(cq.poll(), None, "no CQE from any of them")
    v.inject(good)
    t.eq([(d["name"], d["synd"]) for d in v.out(1)], [("ACKNOWLEDGE", 0x1f)],
         "the same packet intact is taken and ACKed")
    t.ok(v.qt.alive(), "QEMU alive")


def case_retransmit(v):
    pd, buf, key, cq = setup(v)
    qc = v.q_counter()
    qp = v.wire_qp("RC", pd, cq, retry=2, ack_timeout=10, counter=qc)   # 4.2 ms
    v.qt.memwrite(buf, b"retry me")
    qp.post_send(SEND, dseg(buf, 8, key))
    first = v.out(1)
    t.eq([(d["name"], d["psn"]) for d in first], [("SEND_ONLY", 0x100)], "sent once")
    t.ok(v.quiet(), "nothing more before the ACK timeout")
    to0 = v.counter("local_ack_timeout_err")
    for i in range(2):
        v.advance(4096 << 10, 4096 << 10)
        v.settle()
        fr = v.out(1)
        t.eq([(d["name"], d["psn"], d["payload"]) for d in fr],
             [("SEND_ONLY", 0x100, b"retry me")], "ACK timeout %d: sent again" % (i + 1))
    t.eq(cq.poll(), None, "no completion while retries are left")
    v.advance(4096 << 10, 4096 << 10)
    v.settle()
    e = cq.poll()
    t.ok(e is not None and cqe_fields(e)["syndrome"] == P["VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR"],
         "retry_count 2 spent: TRANSPORT_RETRY_EXC_ERR")
    t.eq(v.counter("local_ack_timeout_err"), to0 + 2,
         "two timeouts within retry_count counted (the third exceeded it)")
    r = v.query_q_counter(qc)
    t.eq([get(r.out, N["VCX_QUERY_Q_COUNTER_OUT_" + n])
          for n in ("LOCAL_ACK_TIMEOUT_ERR", "REQ_TRANSPORT_RETRIES_EXCEEDED", "REQ_CQE_ERROR")],
         [2, 1, 1], "and in the QP's Q counter: local_ack_timeout_err 2, "
         "req_transport_retries_exceeded 1, req_cqe_error 1")
    t.ok(v.quiet(), "no fourth transmission")


def case_nak_counters(v):
    """Error NAKs from the wire in the requester's Q counter (enhanced error fields): a
    remote access NAK ends the WRITE, the SEND sent behind it is flushed; an invalid
    request NAK ends a SEND."""
    pd, buf, key, cq = setup(v)
    qc = v.q_counter()
    names = ("REQ_CQE_ERROR", "REQ_REMOTE_ACCESS_ERRORS", "REQ_REMOTE_INVALID_REQUEST",
             "REQ_CQE_FLUSH_ERROR", "RESP_REMOTE_ACCESS_ERRORS", "RESP_CQE_ERROR")

    def counts():
        r = v.query_q_counter(qc)
        return [get(r.out, N["VCX_QUERY_Q_COUNTER_OUT_" + n]) for n in names]

    qp = v.wire_qp("RC", pd, cq, counter=qc)
    v.qt.memwrite(buf, b"denied")
    qp.post_send(WRITE, raddr(0x7000000000, 0xbad) + dseg(buf, 6, key))
    qp.post_send(SEND, dseg(buf, 6, key))
    t.eq([(d["name"], d["psn"]) for d in v.out(2)], [("WRITE_ONLY", 0x100),
                                                    ("SEND_ONLY", 0x101)],
         "WRITE sent, and the SEND behind it (the requester's window)")
    t.eq(counts(), [0] * 6, "nothing counted before the answer")
    v.inject(frame(0x11, qp.qpn, 0x100, ext=aeth(0x62, 0)))
    v.settle()
    t.eq([(cqe_fields(e)["syndrome"], cqe_fields(e)["sop"]) for e in cq.poll_all()],
         [(0x13, WRITE), (0x05, SEND)],
         "NAK remote access error: the WRITE completes with 0x13, the SEND is flushed")
    t.eq(counts(), [2, 1, 0, 1, 0, 0], "req_cqe_error 2, req_remote_access_errors 1 (the "
         "NAK received), req_cqe_flush_error 1; no responder field")
    t.ok(v.quiet(), "the flushed SEND is not sent again")
    qp = v.wire_qp("RC", pd, cq, counter=qc, psn=0x300, rpsn=0x400)
    qp.post_send(SEND, dseg(buf, 6, key))
    t.eq([(d["name"], d["psn"]) for d in v.out(1)], [("SEND_ONLY", 0x300)], "SEND sent")
    v.inject(frame(0x11, qp.qpn, 0x300, ext=aeth(0x61, 0)))
    v.settle()
    t.eq([cqe_fields(e)["syndrome"] for e in cq.poll_all()], [0x12],
         "NAK invalid request: the SEND completes with 0x12")
    t.eq(counts(), [3, 1, 1, 1, 0, 0], "req_remote_invalid_request 1, req_cqe_error 3")


def case_read_reissue(v):
    """A READ response lost: the device asks again from the first missing PSN (an implied
    NAK, IBTA 9.7.5.1.2) and places the answer, whether the responder starts it with
    FIRST (a new request, as vcx's responder does) or, as Soft-RoCE does when it replays
    from the middle of a READ it holds (rxe_resp.c, rdatm_res_state_replay), with MIDDLE
    and LAST; found by tests/guest/roce-loss.sh against rxe (transport retries exhausted)."""
    pd, buf, key, cq = setup(v)
    qc = v.q_counter()
    qp = v.wire_qp("RC", pd, cq, counter=qc)
    data = pattern(1000, 33)
    for how, ops in (("MIDDLE, MIDDLE, LAST", (0x0e, 0x0e, 0x0f)),
                     ("FIRST, MIDDLE, LAST", (0x0d, 0x0e, 0x0f))):
        v.qt.memset(buf + 0x1000, 1000, 0)
        qp.post_send(READ, raddr(0x7000001000, 0xabcd) + dseg(buf + 0x1000, 1000, key))
        fr = v.out(1)
        p0 = fr[0]["psn"] if fr else 0
        t.eq([(d["name"], d["dma_len"]) for d in fr], [("READ_REQUEST", 1000)],
             "READ of 1000 bytes at MTU 256 (%s case)" % how)
        v.inject(frame(0x0d, qp.qpn, p0, data[:256], ext=aeth(0x1f, 0)))
        re0 = v.counter("retransmits")
        v.inject(frame(0x0e, qp.qpn, p0 + 2, data[512:768]))    # p0 + 1 lost
        fr = v.out(1)
        t.eq([(d["name"], d["psn"], d["va"], d["dma_len"]) for d in fr],
             [("READ_REQUEST", p0 + 1, 0x7000001100, 744)],
             "a response missing: READ asked again from PSN +1, va and length moved on")
        t.eq(v.counter("retransmits"), re0 + 1, "the READ asked again is a retransmission")
        for i, op in enumerate(ops):
            part = data[256 * (i + 1):256 * (i + 2)]
            v.inject(frame(op, qp.qpn, p0 + 1 + i, part,
                           ext=aeth(0x1f, 1) if op != 0x0e else b""))
        e = cq.poll()
        t.ok(e is not None and cqe_fields(e)["syndrome"] == 0,
             "the re-issued READ answered with %s: the READ completes" % how)
        t.eq(v.qt.memread(buf + 0x1000, 1000), data, "every byte placed (%s)" % how)
    r = v.query_q_counter(qc)
    t.eq(get(r.out, N["VCX_QUERY_Q_COUNTER_OUT_IMPLIED_NAK_SEQ_ERR"]), 2,
         "two implied NAKs in the QP's Q counter")
    t.ok(v.quiet(), "nothing more sent")


def case_read_retry_count(v):
    """A READ asked again spends one of retry_count, as a PSN sequence NAK does, and a
    response placed (forward progress) gives the message its whole retry_count back."""
    pd, buf, key, cq = setup(v)
    data = pattern(1000, 41)
    # retry_count 1: a timeout, a response placed, a timeout again: still no error
    qp = v.wire_qp("RC", pd, cq, retry=1, ack_timeout=10)       # 4.2 ms
    qp.post_send(READ, raddr(0x7000001000, 0xabcd) + dseg(buf + 0x1000, 1000, key))
    p0 = v.out(1)[0]["psn"]
    v.advance(4096 << 10, 4096 << 10)
    v.settle()
    t.eq([(d["name"], d["psn"]) for d in v.out(1)], [("READ_REQUEST", p0)],
         "retry_count 1: the ACK timeout sends the READ again")
    v.inject(frame(0x0d, qp.qpn, p0, data[:256], ext=aeth(0x1f, 0)))
    v.advance(4096 << 10, 4096 << 10)
    v.settle()
    t.eq([(d["name"], d["psn"]) for d in v.out(1)], [("READ_REQUEST", p0 + 1)],
         "a response placed, then a timeout: asked again from PSN +1, no error")
    t.eq(cq.poll(), None, "the first response gave retry_count back")
    for i in range(1, 4):
        v.inject(frame(0x0e if i < 3 else 0x0f, qp.qpn, p0 + i, data[256 * i:256 * (i + 1)],
                       ext=aeth(0x1f, 1) if i == 3 else b""))
    e = cq.poll()
    t.ok(e is not None and cqe_fields(e)["syndrome"] == 0, "the READ completes")
    t.eq(v.qt.memread(buf + 0x1000, 1000), data, "every byte placed")
    # retry_count 1: a response missing (the READ asked again), then a timeout: spent
    qp = v.wire_qp("RC", pd, cq, retry=1, ack_timeout=10, psn=0x300, rpsn=0x400)
    qp.post_send(READ, raddr(0x7000001000, 0xabcd) + dseg(buf + 0x1000, 1000, key))
    p0 = v.out(1)[0]["psn"]
    v.inject(frame(0x0d, qp.qpn, p0, data[:256], ext=aeth(0x1f, 0)))
    v.inject(frame(0x0e, qp.qpn, p0 + 2, data[512:768]))        # p0 + 1 lost
    t.eq([(d["name"], d["psn"]) for d in v.out(1)], [("READ_REQUEST", p0 + 1)],
         "a response missing: the READ asked again (one retry spent)")
    v.advance(4096 << 10, 4096 << 10)
    v.settle()
    e = cq.poll()
    t.ok(e is not None and cqe_fields(e)["syndrome"] == P["VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR"],
         "then the ACK timeout: retry_count 1 spent, TRANSPORT_RETRY_EXC_ERR")
    t.ok(v.quiet(), "nothing more sent")


def case_faults(v):
    pd, buf, key, cq = setup(v)
    r = v.qt.qom_set("/machine/peripheral/vcx0", "wire-fault", "drop=1,seed=7,dir=tx")
    t.ok("error" not in r, "wire-fault set")
    t.eq(v.qt.qom_get("/machine/peripheral/vcx0", "wire-fault"),
         "drop=1,dup=0,reorder=0,corrupt=0,seed=7,dir=tx", "wire-fault reads back")
    r = v.qt.qom_set("/machine/peripheral/vcx0", "wire-fault", "drop=2")
    t.ok("error" in r, "a fraction above 1 is refused")
    d0 = v.counter("fault_drop")
    qp = v.wire_qp("RC", pd, cq)
    v.qt.memwrite(buf, b"lost")
    qp.post_send(SEND, dseg(buf, 4, key))
    v.settle()
    t.ok(v.quiet(), "drop=1 on transmit: nothing on the wire")
    t.eq(v.counter("fault_drop"), d0 + 1, "fault_drop counted")
    v.qt.qom_set("/machine/peripheral/vcx0", "wire-fault", "dup=1,dir=tx")
    v.advance(4096 << 14, 4096 << 14)
    v.settle()
    fr = v.out(2)
    t.eq([(d["name"], d["psn"]) for d in fr], [("SEND_ONLY", 0x100)] * 2,
         "dup=1: the retransmission goes out twice")
    v.qt.qom_set("/machine/peripheral/vcx0", "wire-fault", "")
    v.inject(frame(0x11, qp.qpn, 0x100, ext=aeth(0x1f, 1)))
    t.ok(cq.poll() is not None, "faults off: the ACK completes the SEND")


def case_gsi(v):
    """QP1 on the wire: its datagrams to the peer's QP 1 (source QP 1, GSI Q_Key) and the
    peer's to it, with the GRH area (IPv4 header in its last 20 bytes)."""
    pd, buf, key, cq = setup(v)
    qp1 = v.create_qp("QP1", pd, cq, cq)
    v.modify("RST2INIT_QP", qp1, [("q_key", 0x80010000)],
             ads=[("vhca_port_num", 1), ("pkey_index", 0)])
    v.modify("INIT2RTR_QP", qp1, [("mtu", 1), ("log_msg_max", 8)], ads=[("vhca_port_num", 1)])
    v.modify("RTR2RTS_QP", qp1, [("next_send_psn", 0)])
    mad = pattern(256, 11)
    v.qt.memwrite(buf, mad)
    qp1.post_send(SEND, wire_av(0x80010000, 1) + dseg(buf, 256, key))
    fr = v.out(1)
    t.eq(len(fr), 1, "GSI datagram on the wire")
    check_hdr(fr[0], "GSI SEND_ONLY", 0x64, 1, fr[0]["psn"], 0, 256)
    t.eq((fr[0]["qkey"], fr[0]["sqpn"], fr[0]["payload"]), (0x80010000, 1, mad),
         "to QP 1 from QP 1 with the GSI Q_Key, the MAD bytes")
    t.ok(cq.poll() is not None, "send CQE")
    qp1.post_recv([(buf + 0x1000, 40 + 256, key)])
    reply = pattern(256, 33)
    deth = struct.pack(">II", 0x80010000, 1)
    v.inject(frame(0x04, 1, 0x55, reply, ext=deth, transport=0x60))
    e = cq.poll()
    t.ok(e is not None and cqe_fields(e)["opcode"] == 2 and
         cqe_fields(e)["byte_cnt"] == 296, "GSI receive CQE: RESP_SEND, 40 + 256 bytes")
    grh = v.qt.memread(buf + 0x1000, 40)
    ip = grh[20:]
    t.eq((grh[:20], ip[0], struct.unpack(">H", ip[2:4])[0], ip[9], ip[12:16], ip[16:20],
          ip_csum(ip)), (bytes(20), 0x45, 20 + 8 + 12 + 8 + 256 + 4, 17, PEER_IP, DEV_IP,
                         0xffff),
         "GRH area: IPv4 header of the datagram in its last 20 bytes")
    t.eq(v.qt.memread(buf + 0x1000 + 40, 256), reply, "the MAD after the GRH area")
    q0 = v.counter("roce_qkey_err")
    v.inject(frame(0x04, 1, 0x56, reply, ext=struct.pack(">II", 0x1234, 1), transport=0x60))
    t.eq((cq.poll(), v.counter("roce_qkey_err")), (None, q0 + 1),
         "another Q_Key to QP1: dropped and counted")


def case_uc(v):
    """UC: a lost packet drops its message; the next FIRST starts again."""
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("UC", pd, cq)
    qp.post_recv([(buf, 1024, key)])
    msg = pattern(600, 21)
    u0 = v.counter("uc_msg_dropped")
    v.inject(frame(0x00, qp.qpn, 0x200, msg[:256], transport=0x20))
    v.inject(frame(0x02, qp.qpn, 0x202, msg[512:], transport=0x20))     # 0x201 lost
    t.eq((cq.poll(), v.counter("uc_msg_dropped")), (None, u0 + 1),
         "UC FIRST then LAST after a gap: no CQE, the message dropped and counted")
    t.ok(v.quiet(), "UC never answers")
    v.inject(frame(0x00, qp.qpn, 0x203, msg[:256], transport=0x20))
    v.inject(frame(0x01, qp.qpn, 0x204, msg[256:512], transport=0x20))
    v.inject(frame(0x02, qp.qpn, 0x205, msg[512:], transport=0x20))
    e = cq.poll()
    t.ok(e is not None and cqe_fields(e)["byte_cnt"] == 600, "the next message arrives whole")
    t.eq(v.qt.memread(buf, 600), msg, "into the receive WQE the lost one had taken")
    qp.post_send(SEND, dseg(buf, 300, key))
    fr = v.out(2)
    t.eq([(d["name"], d["psn"], d["ackreq"]) for d in fr],
         [("SEND_FIRST", 0x100, 0), ("SEND_LAST", 0x101, 0)], "UC SEND: no AckReq")
    for i, d in enumerate(fr):
        check_hdr(d, "UC packet %d" % i, [0x20, 0x22][i], RQPN, 0x100 + i, 0, [256, 44][i])
    t.ok(cq.poll() is not None, "UC completes once sent")


def case_ipv6(v):
    """An IPv6 GID: IPv6 header fields from the path, the ICRC's IPv6 masking, the UDP
    source port from the flow label."""
    pd, buf, key, cq = setup(v)
    r = v.set_gid(1, DEV6, l3=1, mac=DEV_MAC)
    t.eq(r.status, 0, "SET_ROCE_ADDRESS 1: an IPv6 GID")
    qp = v.wire_qp("RC", pd, cq, rgid=PEER6,
                   path=[("src_addr_index", 1), ("tclass", 0x28), ("flow_label", 0x12345),
                         ("hop_limit", 9)])
    msg = pattern(10, 4)
    v.qt.memwrite(buf, msg)
    qp.post_send(SEND, dseg(buf, 10, key))
    fr = v.out(1)
    t.eq(len(fr), 1, "one IPv6 frame")
    d = fr[0]
    check_hdr(d, "IPv6 SEND_ONLY", 0x04, RQPN, 0x100, 1, 10)
    fl = 0x12345
    t.eq((d["tclass"], d["flow"], d["hop"], d["plen"], d["sport"], d["payload"]),
         (0x28, fl, 9, 8 + 12 + 12 + 4, ((fl & 0x3fff) ^ (fl >> 14)) | 0xc000, msg),
         "traffic class, flow label, hop limit, payload length; UDP source port from the "
         "flow label")
    v.inject(frame(0x11, qp.qpn, 0x100, ext=aeth(0x1f, 1), ipv6=True))
    t.ok(cq.poll() is not None, "an ACK over IPv6 completes it")
    v.set_gid(1, bytes(16))


def untag(f):
    """An 802.1Q-tagged frame: (TCI, the frame without its tag); TCI None if untagged."""
    if f[12:14] != b"\x81\x00":
        return None, f
    return struct.unpack_from(">H", f, 14)[0], f[:12] + f[16:]


def tag(f, tci):
    return f[:12] + struct.pack(">HH", 0x8100, tci) + f[12:]


def case_vlan(v):
    """A GID entry with a VLAN: its frames carry an IEEE 802.1Q tag (VID from the entry;
    PCP from the RC path's eth_prio or the UD address vector's SL); tagged frames are
    received, and a UD receive CQE reports the tag (mlx5 CQE: l4_l3_hdr_type bit 0 at byte
    0x1d, vlan_info at 0x1e)."""
    pd, buf, key, cq = setup(v)
    vid = 77
    r = v.set_gid(2, bytes(10) + b"\xff\xff" + DEV_IP, mac=DEV_MAC, vlan=vid)
    t.eq(r.status, 0, "SET_ROCE_ADDRESS 2: ::ffff:10.0.0.1 on VLAN 77")
    qp = v.wire_qp("RC", pd, cq, path=[("src_addr_index", 2), ("eth_prio", 5)])
    msg = pattern(10, 6)
    v.qt.memwrite(buf, msg)
    qp.post_send(SEND, dseg(buf, 10, key))
    f = v.sock.recv(2.0)
    t.ok(f is not None, "RC SEND over the VLAN GID: a frame")
    tci, rest = untag(f)
    t.eq(tci, 5 << 13 | vid, "802.1Q tag: TPID 0x8100, PCP 5 (eth_prio), DEI 0, VID 77")
    d = decode(rest)
    check_hdr(d, "tagged SEND_ONLY", 0x04, RQPN, 0x100, 1, 10)
    t.eq(d["payload"], msg, "tagged SEND_ONLY: payload")
    v.inject(tag(frame(0x11, qp.qpn, 0x100, ext=aeth(0x1f, 1)), 5 << 13 | vid))
    t.ok(cq.poll() is not None, "a tagged ACK completes it")

    ud = v.create_qp("UD", pd, cq, cq)
    v.connect(ud, qkey=0x1111)
    qp_msg = pattern(20, 7)
    v.qt.memwrite(buf, qp_msg)
    ud.post_send(SEND, wire_av(0x2222, 0x456, sgid_index=2, sl=3) + dseg(buf, 20, key))
    f = v.sock.recv(2.0)
    t.ok(f is not None, "UD SEND over the VLAN GID: a frame")
    tci, rest = untag(f)
    t.eq(tci, 3 << 13 | vid, "UD: 802.1Q tag with PCP 3 (the AV's SL), VID 77")
    d = decode(rest)
    t.eq((d["qkey"], d["sqpn"], d["payload"]), (0x2222, ud.qpn, qp_msg),
         "tagged UD SEND_ONLY: DETH and payload")
    t.ok(cq.poll() is not None, "UD send CQE")

    deth = struct.pack(">II", 0x1111, 0x456)
    for tci, what in ((6 << 13 | vid, "tagged"), (None, "untagged")):
        ud.post_recv([(buf + 0x1000, 40 + 64, key)])
        dgram = pattern(64, 8 if tci else 9)
        f = frame(0x04, ud.qpn, 0, dgram, ext=deth, transport=0x60)
        v.inject(tag(f, tci) if tci is not None else f)
        e = cq.poll()
        t.ok(e is not None and cqe_fields(e)["opcode"] == 2, what + " UD datagram received")
        if e is None:
            continue
        t.eq((e[0x1d] & 1, struct.unpack_from(">H", e, 0x1e)[0]),
             (1, tci) if tci is not None else (0, 0),
             what + " UD receive CQE: vlan present and vlan_info (PCP 6, VID 77)"
             if tci is not None else what + " UD receive CQE: no vlan")
        t.eq(v.qt.memread(buf + 0x1000 + 40, 64), dgram, what + " datagram's bytes")
    v.set_gid(2, bytes(16))


def case_xrc(v):
    """XRC on the wire (IBTA annex A14): an initiator's SEND and READ leave as XRC frames
    (transport 0xa0, the XRCETH naming the remote XRC SRQ) and complete at XRC answers (an
    RC ACK is not one); a target serves XRC SENDs into the XRC SRQ their XRCETH names (the
    CQE on that SRQ's CQ), answers with XRC ACKs without an XRCETH, and answers an XRCETH
    naming an SRQ of another domain with a NAK invalid request, the target going to ERR."""
    pd, buf, key, cq = setup(v)
    ini = v.wire_qp("RC", pd, cq, qp=xrc_ini(v, pd, cq))
    msg = pattern(10, 12)
    v.qt.memwrite(buf, msg)
    ini.post_send(SEND, xrc(0x4321) + dseg(buf, 10, key))
    fr = v.out(1)
    t.eq([(d["opcode"], d.get("xrcsrq"), d["psn"], d["ackreq"], d["payload"]) for d in fr],
         [(0xa4, 0x4321, 0x100, 1, msg)],
         "XRC SEND_ONLY (0xa4): XRCETH with the remote XRC SRQ, AckReq, payload")
    if fr:
        check_hdr(fr[0], "XRC SEND_ONLY", 0xa4, RQPN, 0x100, 1, 10)
    b0 = v.counter("roce_bad_qp")
    v.inject(frame(0x11, ini.qpn, 0x100, ext=aeth(0x1f, 1)))
    t.eq((cq.poll(), v.counter("roce_bad_qp")), (None, b0 + 1),
         "an RC ACK to the XRC initiator: dropped and counted")
    v.inject(frame(0x11, ini.qpn, 0x100, ext=aeth(0x1f, 1), transport=0xa0))
    e = cq.poll()
    t.ok(e is not None and cqe_fields(e)["syndrome"] == 0, "the XRC ACK (0xb1) completes it")
    ini.post_send(READ, xrc(0x4321) + raddr(0x7000, 0x99) + dseg(buf + 0x800, 16, key))
    fr = v.out(1)
    t.eq([(d["opcode"], d.get("xrcsrq"), d.get("va"), d.get("rkey"), d.get("dma_len"))
          for d in fr], [(0xac, 0x4321, 0x7000, 0x99, 16)],
         "XRC READ request (0xac): XRCETH, then the RETH")
    data = pattern(16, 13)
    v.inject(frame(0x10, ini.qpn, 0x101, data, ext=aeth(0x1f, 2), transport=0xa0))
    e = cq.poll()
    t.ok(e is not None and cqe_fields(e)["syndrome"] == 0 and
         v.qt.memread(buf + 0x800, 16) == data, "XRC READ_RESPONSE_ONLY (0xb0): data placed")

    xrcd, other = alloc_xrcd(v), alloc_xrcd(v)
    scq = v.create_cq()
    srq = create_xrc_srq(v, pd, xrcd, scq.cqn)
    srq2 = create_xrc_srq(v, pd, other, scq.cqn)
    tgt = v.wire_qp("RC", pd, cq, qp=xrc_tgt(v, pd, xrcd))
    srq.post([(buf + 0x1000, 64, key)])
    v.sock.drain()
    dgram = pattern(40, 14)
    xeth = struct.pack(">I", srq.srqn)
    v.inject(frame(0x04, tgt.qpn, 0x200, dgram, ackreq=True, ext=xeth, transport=0xa0))
    e = scq.poll()
    t.eq(None if e is None else (cqe_fields(e)["opcode"], cqe_fields(e)["qpn"],
                                 cqe_fields(e)["srqn"], cqe_fields(e)["byte_cnt"]),
         (2, tgt.qpn, srq.srqn, 40),
         "XRC SEND_ONLY to the target: RESP_SEND on the XRC SRQ's CQ, qpn = target, srqn")
    t.eq(v.qt.memread(buf + 0x1000, 40), dgram, "payload in the XRC SRQ's WQE")
    fr = v.out(1)
    t.eq([(d["opcode"], d.get("xrcsrq"), d["psn"], d.get("synd"), d.get("msn")) for d in fr],
         [(0xb1, None, 0x200, 0x1f, 1)], "XRC ACKNOWLEDGE (0xb1), no XRCETH, MSN 1")
    srq2.post([(buf + 0x2000, 64, key)])
    v.inject(frame(0x04, tgt.qpn, 0x201, dgram, ackreq=True,
                   ext=struct.pack(">I", srq2.srqn), transport=0xa0))
    fr = v.out(1)
    t.eq([(d["opcode"], d["psn"], d.get("synd")) for d in fr], [(0xb1, 0x201, 0x61)],
         "XRCETH naming an XRC SRQ of another domain: NAK invalid request")
    t.eq((v.qp_state(tgt), scq.poll()), (6, None), "the target in ERR, nothing received")
    t.ok("XRC SRQ of another XRC domain" in v.qt.log(), "logged as a guest error")


def case_rx_faults(v):
    """wire-fault: corrupt on receive is caught by the ICRC; reorder on transmit."""
    pd, buf, key, cq = setup(v)
    qp = v.wire_qp("RC", pd, cq)
    for i in range(3):
        qp.post_recv([(buf + i * 0x100, 0x100, key)])
    dev = "/machine/peripheral/vcx0"
    v.qt.qom_set(dev, "wire-fault", "corrupt=1,dir=rx,seed=3")
    i0, c0 = v.counter("roce_icrc_err"), v.counter("fault_corrupt")
    v.inject(frame(0x04, qp.qpn, 0x200, b"abcd", ackreq=True))
    t.eq((v.counter("roce_icrc_err"), v.counter("fault_corrupt"), cq.poll()),
         (i0 + 1, c0 + 1, None), "corrupt=1 on receive: the ICRC check drops it")
    t.ok(v.quiet(), "and nothing is answered")
    v.qt.qom_set(dev, "wire-fault", "reorder=1,dir=tx,seed=3")
    r0 = v.counter("fault_reorder")
    msg = pattern(600, 8)
    v.qt.memwrite(buf + 0x1000, msg)
    qp.post_send(SEND, dseg(buf + 0x1000, 600, key))
    fr = v.out(3)
    v.qt.qom_set(dev, "wire-fault", "")
    t.eq([(d["name"], d["psn"]) for d in fr],
         [("SEND_MIDDLE", 0x101), ("SEND_FIRST", 0x100), ("SEND_LAST", 0x102)],
         "reorder=1 on transmit: FIRST held back behind MIDDLE, LAST at the end of the run")
    t.eq(v.counter("fault_reorder"), r0 + 2, "two frames held back")


def case_fuzz(v):
    """Frames with a valid ICRC but random opcodes, extension bytes, payloads, pad counts
    and PSNs, to QPs of every state the test left and to none: never a crash."""
    import random
    rnd = random.Random(11)
    pd, buf, key, cq = setup(v)
    rc = v.wire_qp("RC", pd, cq)
    uc = v.wire_qp("UC", pd, cq)
    for q in (rc, uc):
        for _ in range(4):
            q.post_recv([(buf + 0x8000, 0x1000, key)])
    qpns = [rc.qpn, uc.qpn, 1, 0xffffff, rnd.randrange(1 << 24)]
    taken0 = v.counter("roce_rx_pkts")
    for i in range(300):
        op = rnd.randrange(256)
        ext = bytes(rnd.randrange(256) for _ in range(rnd.choice([0, 4, 8, 16, 20, 28, 33])))
        payload = bytes(rnd.randrange(256) for _ in range(rnd.choice([0, 1, 5, 256, 300])))
        f = bytearray(frame(op & 0x1f, rnd.choice(qpns), rnd.randrange(1 << 24), payload,
                            ackreq=rnd.random() < 0.5, ext=ext, transport=op & 0xe0))
        if rnd.random() < 0.2:                  # a pad count that does not fit, ICRC redone
            f[42 + 1] ^= 0x30
            body = bytes(f[34:-4])
            f[-4:] = struct.pack("<I", icrc(bytes(f[14:34]), body))
        v.inject(bytes(f))
    v.sock.drain()
    t.eq(v.counter("roce_rx_pkts"), taken0 + 300, "300 random frames taken")
    t.ok(v.qt.alive(), "QEMU alive after them")


# UD multicast (ATTACH_TO_MCG / DETACH_FROM_MCG): the group ::ffff:239.1.2.3, its MAC
# 01:00:5e:01:02:03 (RFC 1112: 01:00:5e and the low 23 bits), BTH destination QP 0xFFFFFF.
MGRP_IP = bytes([239, 1, 2, 3])
MGID = bytes(10) + b"\xff\xff" + MGRP_IP
MMAC = bytes.fromhex("01005e010203")
MGID6 = bytes.fromhex("ff0e0000000000000000000012345678")
MMAC6 = bytes.fromhex("333312345678")
MCAST_QPN = 0xffffff
ATTACH, DETACH = 0x806, 0x807


def mcg(v, op, qpn, gid):
    return v.cmd("ATTACH_TO_MCG" if op == ATTACH else "DETACH_FROM_MCG", in_len=0x20,
                 fields=[(P["VCX_MCG_IN_QPN"], qpn)], payload={0x10: gid})


def ud_qp(v, pd, scq, rcq, qkey):
    qp = v.create_qp("UD", pd, scq, rcq)
    v.connect(qp, qkey=qkey)
    return qp


def mcast_av(qkey, gid, rmac=bytes(6)):
    """A UD address vector to a group: QP 0xFFFFFF, the group's GID, rmac as given."""
    return wire_av(qkey, MCAST_QPN, gid, rmac)


def check_mcast_recv(v, cq, buf, msg, sqpn, what, dst=MGRP_IP):
    e = cq.poll()
    c = cqe_fields(e) if e else {}
    t.eq((c.get("opcode"), c.get("byte_cnt"), c.get("flags_rqpn", 0) & 0xffffff,
          (c.get("flags_rqpn", 0) >> 28) & 3), (2, 40 + len(msg), sqpn, 1),
         what + ": RESP_SEND, byte_cnt 40 + payload, source QP, GRH present")
    grh = v.qt.memread(buf, 40 + len(msg))
    t.eq((grh[20], grh[20 + 9], grh[20 + 16:40], grh[40:]), (0x45, 17, dst, msg),
         what + ": GRH area IPv4 header to the group, payload bytes")


def case_mcast_cmds(v):
    """ATTACH_TO_MCG / DETACH_FROM_MCG statuses and syndromes, the caps, DESTROY_QP
    detaching, block_lb_mc refused."""
    pd, buf, key, cq = setup(v)
    r = v.d.exec(H["VCX_CMD_OP_QUERY_HCA_CAP"], 1, out_len=0x1010)
    caps = (get(r.out, H["VCX_CAP_GEN_LOG_MAX_MCG"], 0x10),
            get(r.out, H["VCX_CAP_GEN_MAX_QP_MCG"], 0x10),
            get(r.out, H["VCX_CAP_GEN_BLOCK_LB_MC"], 0x10))
    t.eq(caps, (6, 16, 0), "caps log_max_mcg 6, max_qp_mcg 16, block_lb_mc 0")
    a = ud_qp(v, pd, cq, cq, 0x5555)
    rc = v.create_qp("RC", pd, cq, cq)
    g0 = v.counter("mcgs")
    r = mcg(v, ATTACH, a.qpn, MGID)
    t.eq((r.status, r.syndrome, v.counter("mcgs")), (0, 0, g0 + 1),
         "ATTACH a UD QP to ::ffff:239.1.2.3: one more group in use (state mcgs)")
    for what, args, st, chk in (
            ("the same QP twice", (a.qpn, MGID), 0x09, 4),
            ("a QP that does not exist", (0xabcdef, MGID), 0x03, 1),
            ("an RC QP", (rc.qpn, MGID), 0x03, 2),
            ("a unicast GID", (a.qpn, PEER_GID), 0x03, 3),
            ("IPv4-mapped 192.0.2.1", (a.qpn, bytes(10) + b"\xff\xff" + bytes([192, 0, 2, 1])),
             0x03, 3)):
        r = mcg(v, ATTACH, *args)
        t.eq((r.status, r.syndrome), (st, ATTACH << 16 | chk),
             "ATTACH %s: status 0x%x syndrome 0x%08x" % (what, st, ATTACH << 16 | chk))
    r = mcg(v, DETACH, a.qpn, MGID6)
    t.eq((r.status, r.syndrome), (0x09, DETACH << 16 | 7), "DETACH from a group never joined")
    r = v.cmd("ATTACH_TO_MCG", in_len=0x1c, fields=[(P["VCX_MCG_IN_QPN"], a.qpn)])
    t.eq(r.status, 0x50, "ATTACH with 28 input bytes: BAD_INPUT_LEN")
    # the group table: 64 groups
    for i in range(63):
        r = mcg(v, ATTACH, a.qpn, bytes(10) + b"\xff\xff" + bytes([239, 2, 0, i]))
        assert r.status == 0, "ATTACH group %d: 0x%x" % (i, r.status)
    r = mcg(v, ATTACH, a.qpn, MGID6)
    t.eq((r.status, r.syndrome), (0x08, ATTACH << 16 | 5), "a 65th group: EXCEED_LIM")
    for i in range(63):
        r = mcg(v, DETACH, a.qpn, bytes(10) + b"\xff\xff" + bytes([239, 2, 0, i]))
        assert r.status == 0, "DETACH group %d: 0x%x" % (i, r.status)
    t.eq((mcg(v, ATTACH, a.qpn, MGID6).status, v.counter("mcgs")), (0, g0 + 2),
         "the groups freed by their last DETACH")
    t.eq((mcg(v, DETACH, a.qpn, MGID6).status, v.counter("mcgs")), (0, g0 + 1),
         "and DETACH again")
    # 16 QPs per group; DESTROY_QP leaves the group
    more = [ud_qp(v, pd, cq, cq, 0x5555) for _ in range(15)]
    for q in more:
        assert mcg(v, ATTACH, q.qpn, MGID).status == 0
    extra = ud_qp(v, pd, cq, cq, 0x5555)
    r = mcg(v, ATTACH, extra.qpn, MGID)
    t.eq((r.status, r.syndrome), (0x08, ATTACH << 16 | 6), "a 17th QP in a group: EXCEED_LIM")
    r = v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], more[0].qpn)])
    t.eq(r.status, 0, "DESTROY_QP of an attached QP")
    t.eq(mcg(v, ATTACH, extra.qpn, MGID).status, 0, "its place in the group is free again")
    r = mcg(v, DETACH, more[0].qpn, MGID)
    t.eq(r.status, 0x03, "DETACH of the destroyed QP: it does not exist (BAD_PARAM)")
    for q in more[1:] + [extra, a, rc]:
        v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], q.qpn)])
    t.eq(v.counter("mcgs"), g0, "the group went with its last member's DESTROY_QP")
    r = v.create_qp("UD", pd, cq, cq, raw=lambda c: put(c, P["VCX_QPC_BLOCK_LB_MC"], 1))
    t.eq((r.status, r.syndrome & 0xffff0000), (0x03, 0x05000000),
         "CREATE_QP with block_lb_mc (cap 0): BAD_PARAM")


def case_mcast_rx(v):
    """A multicast datagram from the wire reaches every attached QP (Q_Key per QP), not an
    unattached one; after DETACH and DESTROY_QP only the members left."""
    pd, buf, key, _ = setup(v)
    cqs = [v.create_cq() for _ in range(4)]
    a, b, c = (ud_qp(v, pd, cqs[i], cqs[i], 0x5555) for i in range(3))
    d = ud_qp(v, pd, cqs[3], cqs[3], 0x7777)            # attached, another Q_Key
    for q in (a, b, d):
        assert mcg(v, ATTACH, q.qpn, MGID).status == 0
    qps = (a, b, c, d)
    for i, q in enumerate(qps):
        q.post_recv([(buf + 0x1000 * i, 1024, key)])
    msg = pattern(200, 51)
    deth = struct.pack(">II", 0x5555, 0x321)
    q0 = v.counter("roce_qkey_err")
    v.inject(frame(0x04, MCAST_QPN, 0x10, msg, ext=deth, transport=0x60, dip=MGRP_IP,
                   dmac=MMAC))
    check_mcast_recv(v, cqs[0], buf, msg, 0x321, "member a")
    check_mcast_recv(v, cqs[1], buf + 0x1000, msg, 0x321, "member b")
    t.eq((cqs[2].poll(), v.qt.memread(buf + 0x2000 + 40, 8)), (None, bytes(8)),
         "the unattached QP: no CQE, nothing written")
    t.eq((cqs[3].poll(), v.counter("roce_qkey_err")), (None, q0 + 1),
         "the member with another Q_Key: dropped and counted")
    # IPv6 group ff0e::1234:5678, MAC 33:33:12:34:56:78
    assert mcg(v, ATTACH, c.qpn, MGID6).status == 0
    msg6 = pattern(60, 9)
    v.inject(frame(0x04, MCAST_QPN, 0x11, msg6, ext=deth, transport=0x60, ipv6=True,
                   dip=MGID6, dmac=MMAC6))
    e = cqs[2].poll()
    grh = v.qt.memread(buf + 0x2000, 100)
    t.eq((e is not None and cqe_fields(e)["byte_cnt"], grh[0] >> 4, grh[24:40], grh[40:]),
         (100, 6, MGID6, msg6), "IPv6 group: the member's CQE, GRH to the group, payload")
    t.eq((cqs[0].poll(), cqs[1].poll()), (None, None), "members of the IPv4 group: nothing")
    # a group nobody here joined is not RoCE for this port: the vport filter drops it
    r0 = v.counter("roce_rx_pkts")
    v.wire_in(frame(0x04, MCAST_QPN, 0x12, msg, ext=deth, transport=0x60,
                    dip=bytes([239, 9, 9, 9]), dmac=bytes.fromhex("01005e090909")))
    t.eq(v.counter("roce_rx_pkts"), r0, "a group not joined: not taken by the RoCE engine")
    assert mcg(v, DETACH, b.qpn, MGID).status == 0
    v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], d.qpn)])
    a.post_recv([(buf + 0x4000, 1024, key)])
    b.post_recv([(buf + 0x5000, 1024, key)])
    v.inject(frame(0x04, MCAST_QPN, 0x13, msg[:50], ext=deth, transport=0x60, dip=MGRP_IP,
                   dmac=MMAC))
    check_mcast_recv(v, cqs[0], buf + 0x4000, msg[:50], 0x321, "after DETACH b: a")
    t.eq(cqs[1].poll(), None, "the detached QP: nothing")
    for q in (a, b, c):
        v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], q.qpn)])


def case_mcast_tx(v):
    """A UD SEND to the group: on the wire to the group's MAC and IP, BTH QP 0xFFFFFF, and
    a local copy to each member of the port (the sender too, attached)."""
    pd, buf, key, scq = setup(v)
    cqs = [v.create_cq() for _ in range(3)]
    a = ud_qp(v, pd, scq, cqs[0], 0x5555)       # the sender, attached
    b = ud_qp(v, pd, cqs[1], cqs[1], 0x5555)
    c = ud_qp(v, pd, cqs[2], cqs[2], 0x5555)    # not attached
    for q in (a, b):
        assert mcg(v, ATTACH, q.qpn, MGID).status == 0
    a.post_recv([(buf + 0x1000, 1024, key)])
    b.post_recv([(buf + 0x2000, 1024, key)])
    c.post_recv([(buf + 0x3000, 1024, key)])
    msg = pattern(300, 77)
    v.qt.memwrite(buf, msg)
    a.post_send(SEND, mcast_av(0x5555, MGID) + dseg(buf, 300, key))
    fr = v.out(1)
    t.eq(len(fr), 1, "multicast SEND: one frame on the wire")
    f = fr[0] if fr else {}
    t.eq((f.get("dmac"), f.get("smac"), f.get("dst"), f.get("src"), f.get("dport"),
          f.get("opcode"), f.get("dqpn"), f.get("qkey"), f.get("sqpn"), f.get("payload"),
          f.get("icrc_ok")),
         (MMAC, DEV_MAC, MGRP_IP, DEV_IP, 4791, 0x64, MCAST_QPN, 0x5555, a.qpn, msg, True),
         "to 01:00:5e:01:02:03 and 239.1.2.3 from the GID's MAC and IP, UD SEND_ONLY to "
         "QP 0xFFFFFF, DETH Q_Key and source QP, payload, ICRC")
    e = scq.poll()
    t.ok(e is not None and cqe_fields(e)["opcode"] == 0, "the sender's send CQE")
    check_mcast_recv(v, cqs[0], buf + 0x1000, msg, a.qpn, "local copy to the sender")
    check_mcast_recv(v, cqs[1], buf + 0x2000, msg, a.qpn, "local copy to member b")
    t.eq(cqs[2].poll(), None, "the unattached QP: nothing")
    for q in (a, b, c):
        v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], q.qpn)])


def main():
    v = Wire()
    try:
        for name, fn in (("RC SEND", case_rc_send), ("vport counters", case_vport_counters),
                         ("RC WRITE/READ/atomic",
                                                      case_rc_write_read_atomic),
                         ("UD SEND", case_ud_send), ("GSI", case_gsi), ("UC", case_uc),
                         ("responder", case_responder), ("RTR responder", case_rtr_responder),
                         ("duplicate behind a READ", case_dup_after_read),
                         ("bad frames", case_bad_frames), ("retransmission", case_retransmit),
                         ("error NAKs in the Q counter", case_nak_counters),
                         ("READ asked again", case_read_reissue),
                         ("READ retries and forward progress", case_read_retry_count),
                         ("wire faults", case_faults), ("IPv6", case_ipv6),
                         ("VLAN", case_vlan), ("XRC", case_xrc),
                         ("receive faults", case_rx_faults), ("fuzz", case_fuzz),
                         ("multicast commands", case_mcast_cmds),
                         ("multicast receive", case_mcast_rx),
                         ("multicast send", case_mcast_tx)):
            run_isolated(t, name, lambda fn=fn: fn(v))
        t.ok(v.qt.alive(), "QEMU alive at the end")
    finally:
        v.close()
    t.done()


if __name__ == "__main__":
    main()
