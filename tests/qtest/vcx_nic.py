#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Ethernet NIC helpers over vcx_verbs: a device whose port is on a QEMU "socket" netdev in
UDP mode on 127.0.0.1 (every frame one datagram), the NIC objects (transport domain, TIS,
SQ, RQ, RQT, TIR, flow tables) built with the PRM commands of include/vcx/prm-nic.h,
Ethernet send WQEs, receive WQEs, frames and an independent Toeplitz hash.

Layouts come from prm-nic.h (as vcx_verbs reads prm-obj.h); the tests compare frames, CQE
fields, statuses and syndromes with literal values."""
import socket
import struct
import time

import vcx_verbs
from vcx_qtest import H, BAR0, put, get  # noqa: F401
from vcx_verbs import P, Verbs, bswap64, dseg  # noqa: F401
from vcx_qtest import load_header_defines, run_isolated

# The async EQ of these devices also takes port change events (type 0x09).
vcx_verbs.ASYNC_EVENTS |= 1 << 0x09

N = load_header_defines(["prm-nic.h"], base=P)
NOP_ = {k[len("VCX_CMD_OP_"):]: v for k, v in N.items() if k.startswith("VCX_CMD_OP_")}

MAC = bytes.fromhex("525400abcdef")         # the device's port (mac= property)
PEER = bytes.fromhex("020000000002")        # the other end of the wire
BCAST = b"\xff" * 6
# The Microsoft RSS verification key (the "Verifying the RSS Hash Calculation" vectors).
MS_KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c"
                       "6a42b73bbeac01fa")


def toeplitz(key, data):
    """Toeplitz hash written from its definition: for every set input bit i (MSB first),
    XOR in the 32 key bits starting at bit i."""
    k = int.from_bytes(key, "big")
    klen = len(key) * 8
    h = 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            h ^= (k >> (klen - 32 - i)) & 0xffffffff
    return h


def csum(data):
    s = 0
    if len(data) % 2:
        data += b"\0"
    for i in range(0, len(data), 2):
        s += data[i] << 8 | data[i + 1]
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def ipv4(src, dst, proto, payload, ttl=64, ident=1, good_csum=True):
    h = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, 0x4000,
                              ttl, proto, 0, bytes(src), bytes(dst)))
    if good_csum:
        struct.pack_into(">H", h, 10, ~csum(bytes(h)) & 0xffff)
    return bytes(h) + payload


def l4_csum(src, dst, proto, seg):
    if len(src) == 4:
        pseudo = bytes(src) + bytes(dst) + struct.pack(">BBH", 0, proto, len(seg))
    else:
        pseudo = bytes(src) + bytes(dst) + struct.pack(">IxxxB", len(seg), proto)
    c = ~csum(pseudo + seg) & 0xffff
    return 0xffff if (c == 0 and proto == 17) else c


def udp(src, dst, sport, dport, data, good_csum=True):
    seg = bytearray(struct.pack(">HHHH", sport, dport, 8 + len(data), 0) + data)
    if good_csum:
        struct.pack_into(">H", seg, 6, l4_csum(src, dst, 17, bytes(seg)))
    return bytes(seg)


def tcp(src, dst, sport, dport, data, good_csum=True, seq=1, flags=0x18):
    seg = bytearray(struct.pack(">HHIIBBHHH", sport, dport, seq, 0, 0x50, flags, 1024, 0, 0) +
                    data)
    if good_csum:
        struct.pack_into(">H", seg, 16, l4_csum(src, dst, 6, bytes(seg)))
    return bytes(seg)


def ipv6(src, dst, nh, payload, hop=64):
    return struct.pack(">IHBB16s16s", 0x60000000, len(payload), nh, hop, bytes(src),
                       bytes(dst)) + payload


def eth(dst, src, etype, payload):
    return bytes(dst) + bytes(src) + struct.pack(">H", etype) + payload


def pad60(frame):
    return frame + bytes(max(0, 60 - len(frame)))


class NicSocket:
    """The far end of the device's wire: a UDP socket on 127.0.0.1 the netdev sends to,
    and the port the netdev listens on."""

    def __init__(self):
        self.rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rx.bind(("127.0.0.1", 0))
        self.port = self.rx.getsockname()[1]
        t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t.bind(("127.0.0.1", 0))
        self.dev_port = t.getsockname()[1]
        t.close()
        self.tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def netdev(self, nid="n0"):
        return "socket,id=%s,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d" % (
            nid, self.port, self.dev_port)

    def send(self, frame):
        self.tx.sendto(bytes(frame), ("127.0.0.1", self.dev_port))

    def recv(self, timeout=2.0):
        """The next frame the device put on the wire, or None."""
        self.rx.settimeout(timeout)
        try:
            return self.rx.recv(65536)
        except socket.timeout:
            return None

    def drain(self):
        frames = []
        while True:
            f = self.recv(0.05)
            if f is None:
                return frames
            frames.append(f)

    def close(self):
        self.rx.close()
        self.tx.close()


class Sq:
    def __init__(self, nic, sqn, base, log_sz, dbr):
        self.nic, self.sqn, self.base, self.log_sz, self.dbr = nic, sqn, base, log_sz, dbr
        self.pi = 0
        self.bf = 0

    def post(self, wqe, ring=True):
        """Write a WQE (bytes, padded to 64-byte units) at the producer counter."""
        wqe = bytes(wqe) + bytes((-len(wqe)) % 64)
        for i in range(0, len(wqe), 64):
            idx = (self.pi + i // 64) & ((1 << self.log_sz) - 1)
            self.nic.qt.memwrite(self.base + idx * 64, wqe[i:i + 64])
        index = self.pi
        self.pi += len(wqe) // 64
        if ring:
            self.ring(wqe[:8])
        return index

    def ring(self, ctrl8):
        self.nic.qt.memwrite(self.dbr + 4, struct.pack(">I", self.pi & 0xffff))
        off = 0x800 + self.bf * 0x100
        self.bf ^= 1
        self.nic.qt.writeq(BAR0 + self.nic.uar * 4096 + off,
                           bswap64(struct.unpack(">Q", bytes(ctrl8))[0]))


class Rq:
    def __init__(self, nic, rqn, base, log_sz, stride, dbr):
        self.nic, self.rqn, self.base, self.log_sz, self.stride, self.dbr = (
            nic, rqn, base, log_sz, stride, dbr)
        self.pi = 0

    def post(self, sges):
        """One receive WQE of (addr, length, lkey) data segments."""
        wqe = bytearray(self.stride)
        for i, (a, n, k) in enumerate(sges):
            struct.pack_into(">IIQ", wqe, 16 * i, n, k, a)
        if len(sges) < self.stride // 16:
            struct.pack_into(">IIQ", wqe, 16 * len(sges), 0, 0x100, 0)
        idx = self.pi & ((1 << self.log_sz) - 1)
        self.nic.qt.memwrite(self.base + idx * self.stride, bytes(wqe))
        self.pi += 1
        self.nic.qt.memwrite(self.dbr, struct.pack(">I", self.pi & 0xffff))


def send_wqe(sqn, index, frame_inline, dsegs=(), cs=0, ce=True, opcode=0x0a, mss=0,
             ds=None, insert=None):
    """An Ethernet send WQE: control, Ethernet segment with frame_inline as inline headers
    (or insert = (insert type, VLAN TCI) in their place), then (addr, length, lkey) data
    segments."""
    ihs = len(frame_inline)
    eseg = bytearray(16)
    eseg[4] = cs
    struct.pack_into(">H", eseg, 6, mss)
    if insert is not None:
        struct.pack_into(">HH", eseg, 12, *insert)
    else:
        struct.pack_into(">H", eseg, 12, ihs)
        eseg[14:16] = bytes(frame_inline[:2]) + bytes(max(0, 2 - ihs))
    rest = bytes(frame_inline[2:])
    rest += bytes((-len(rest)) % 16)
    body = bytes(eseg) + rest + b"".join(struct.pack(">IIQ", n, k, a) for a, n, k in dsegs)
    nds = (16 + len(body)) // 16 if ds is None else ds
    ctrl = struct.pack(">IIBBBBI", (index & 0xffff) << 8 | opcode, sqn << 8 | (nds & 0x3f),
                       0, 0, 0, 0x08 if ce else 0, 0)
    return ctrl + body


def nop_wqe(sqn, index, ce=True):
    return struct.pack(">IIBBBBI", (index & 0xffff) << 8 | 0, sqn << 8 | 1, 0, 0, 0,
                       0x08 if ce else 0, 0)


class Nic(Verbs):
    """A Verbs device whose port is on a socket netdev (or none: netdev=False)."""

    def __init__(self, netdev=True, mac=MAC, props="", **kw):
        """props: more -device vcx properties ("name=value,...")."""
        self.sock = NicSocket() if netdev else None
        dev = "mac=%s" % ":".join("%02x" % b for b in mac) + ("," + props if props else "")
        extra = []
        if netdev:
            dev += ",netdev=n0"
            extra = ["-netdev", self.sock.netdev()]
        super().__init__(device_args=dev, extra=extra, **kw)
        self.next_wq = 0x15000000

    def close(self):
        super().close()
        if self.sock:
            self.sock.close()

    def ncmd(self, op, in_len=16, out_len=16, fields=(), payload=None, op_mod=0):
        return self.d.exec(NOP_[op], op_mod=op_mod, in_len=in_len, out_len=out_len,
                           fields=fields, payload=payload)

    def ok(self, r, what):
        assert r.status == 0, "%s: status 0x%x syndrome 0x%x" % (what, r.status, r.syndrome)
        return r

    def wq_mem(self, size):
        a = self.next_wq
        self.next_wq += -(-max(size, 4096) // 4096) * 4096 + 0x1000
        self.qt.memset(a, size, 0)
        return a

    # objects --------------------------------------------------------------------------
    def td(self):
        r = self.ok(self.ncmd("ALLOC_TRANSPORT_DOMAIN"), "ALLOC_TRANSPORT_DOMAIN")
        return r.f(N["VCX_ALLOC_TD_OUT_TD"])

    def tis(self, td, prio=0):
        c = bytearray(N["VCX_TISC_SIZE"])
        put(c, N["VCX_TISC_TRANSPORT_DOMAIN"], td)
        put(c, N["VCX_TISC_PRIO"], prio)
        r = self.ok(self.ncmd("CREATE_TIS", in_len=N["VCX_CREATE_TIS_IN_LEN"],
                              payload={0x20: bytes(c)}), "CREATE_TIS")
        return r.f(N["VCX_CREATE_TIS_OUT_TISN"])

    def sqc(self, pd, cq, tis, log_sz, dbr, flush=True):
        c = bytearray(0xf0)
        put(c, N["VCX_SQC_FLUSH_IN_ERROR_EN"], int(flush))
        put(c, N["VCX_SQC_CQN"], cq.cqn)
        put(c, N["VCX_SQC_TIS_LST_SZ"], 1)
        put(c, N["VCX_SQC_TIS_NUM_0"], tis)
        w = N["VCX_SQC_WQ_AT"]
        put(c, P["VCX_WQ_WQ_TYPE"], 1, w)
        put(c, P["VCX_WQ_PD"], pd, w)
        put(c, P["VCX_WQ_UAR_PAGE"], self.uar, w)
        put(c, P["VCX_WQ_DBR_ADDR"], dbr, w)
        put(c, P["VCX_WQ_LOG_WQ_STRIDE"], 6, w)
        put(c, P["VCX_WQ_LOG_WQ_SZ"], log_sz, w)
        return c

    def create_sq_raw(self, c, size):
        base = self.wq_mem(size)
        n = max(1, -(-size // 4096))
        pas = b"".join(struct.pack(">Q", base + i * 4096) for i in range(n))
        return self.ncmd("CREATE_SQ", in_len=0x110 + len(pas),
                         payload={0x20: bytes(c), 0x110: pas}), base

    def sq(self, pd, cq, tis, log_sz=6, flush=True, rdy=True, raw=None):
        dbr = self.dbr()
        c = self.sqc(pd, cq, tis, log_sz, dbr, flush)
        if raw:
            raw(c)
        r, base = self.create_sq_raw(c, 64 << log_sz)
        if r.status:
            return r
        sq = Sq(self, r.f(N["VCX_CREATE_SQ_OUT_SQN"]), base, log_sz, dbr)
        if rdy:
            self.ok(self.modify_sq(sq.sqn, 0, 1), "MODIFY_SQ RST->RDY")
        return sq

    def modify_sq(self, sqn, cur, new, bitmask=0):
        c = bytearray(0xf0)
        put(c, N["VCX_SQC_STATE"], new)
        return self.ncmd("MODIFY_SQ", in_len=N["VCX_MODIFY_SQ_IN_LEN"],
                         fields=[(N["VCX_MODIFY_SQ_IN_SQN"], sqn),
                                 (N["VCX_MODIFY_SQ_IN_SQ_STATE"], cur),
                                 (N["VCX_MODIFY_SQ_IN_MODIFY_BITMASK"], bitmask)],
                         payload={0x20: bytes(c)})

    def query_sq(self, sqn):
        return self.ncmd("QUERY_SQ", out_len=N["VCX_QUERY_SQ_OUT_LEN"],
                         fields=[(P["VCX_OBJ_NUMBER"], sqn)])

    def sq_state(self, sqn):
        return get(self.query_sq(sqn).out, N["VCX_SQC_STATE"], N["VCX_QUERY_SQ_OUT_CTX_AT"])

    def rqc(self, pd, cq, log_sz, log_stride, dbr, counter=0, vsd=1):
        c = bytearray(0xf0)
        put(c, N["VCX_RQC_VSD"], vsd)
        put(c, N["VCX_RQC_CQN"], cq.cqn)
        put(c, N["VCX_RQC_COUNTER_SET_ID"], counter)
        w = N["VCX_RQC_WQ_AT"]
        put(c, P["VCX_WQ_WQ_TYPE"], 1, w)
        put(c, P["VCX_WQ_PD"], pd, w)
        put(c, P["VCX_WQ_DBR_ADDR"], dbr, w)
        put(c, P["VCX_WQ_LOG_WQ_STRIDE"], log_stride, w)
        put(c, P["VCX_WQ_LOG_WQ_SZ"], log_sz, w)
        return c

    def rq(self, pd, cq, log_sz=4, log_stride=6, counter=0, rdy=True, raw=None, vsd=1):
        dbr = self.dbr()
        c = self.rqc(pd, cq, log_sz, log_stride, dbr, counter, vsd)
        if raw:
            raw(c)
        size = 1 << (log_sz + log_stride)
        base = self.wq_mem(size)
        n = max(1, -(-size // 4096))
        pas = b"".join(struct.pack(">Q", base + i * 4096) for i in range(n))
        r = self.ncmd("CREATE_RQ", in_len=0x110 + len(pas),
                      payload={0x20: bytes(c), 0x110: pas})
        if r.status:
            return r
        rq = Rq(self, r.f(N["VCX_CREATE_RQ_OUT_RQN"]), base, log_sz, 1 << log_stride, dbr)
        if rdy:
            self.ok(self.modify_rq(rq.rqn, 0, 1), "MODIFY_RQ RST->RDY")
        return rq

    def modify_rq(self, rqn, cur, new, bitmask=0, counter=0, vsd=1):
        c = bytearray(0xf0)
        put(c, N["VCX_RQC_STATE"], new)
        put(c, N["VCX_RQC_VSD"], vsd)
        put(c, N["VCX_RQC_COUNTER_SET_ID"], counter)
        return self.ncmd("MODIFY_RQ", in_len=N["VCX_MODIFY_RQ_IN_LEN"],
                         fields=[(N["VCX_MODIFY_RQ_IN_RQN"], rqn),
                                 (N["VCX_MODIFY_RQ_IN_RQ_STATE"], cur),
                                 (N["VCX_MODIFY_RQ_IN_MODIFY_BITMASK"], bitmask)],
                         payload={0x20: bytes(c)})

    def rqt(self, rqns, max_size=None):
        c = bytearray(N["VCX_RQTC_SIZE"] + 4 * len(rqns))
        put(c, N["VCX_RQTC_RQT_MAX_SIZE"], max_size or len(rqns))
        put(c, N["VCX_RQTC_RQT_ACTUAL_SIZE"], len(rqns))
        for i, n in enumerate(rqns):
            struct.pack_into(">I", c, N["VCX_RQTC_RQ_NUM_AT"] + 4 * i, n)
        r = self.ncmd("CREATE_RQT", in_len=0x20 + len(c), payload={0x20: bytes(c)})
        return r if r.status else r.f(N["VCX_CREATE_RQT_OUT_RQTN"])

    def tirc(self, td, rqn=0, rqt=0, hash_fn=0, key=MS_KEY, l3=0, l4=0, fields=0,
             self_lb=0):
        c = bytearray(N["VCX_TIRC_SIZE"])
        put(c, N["VCX_TIRC_DISP_TYPE"], 1 if rqt else 0)
        put(c, N["VCX_TIRC_INLINE_RQN"], rqn)
        put(c, N["VCX_TIRC_INDIRECT_TABLE"], rqt)
        put(c, N["VCX_TIRC_RX_HASH_FN"], hash_fn)
        put(c, N["VCX_TIRC_SELF_LB_BLOCK"], self_lb)
        put(c, N["VCX_TIRC_TRANSPORT_DOMAIN"], td)
        kat = N["VCX_TIRC_RX_HASH_TOEPLITZ_KEY"].byte
        c[kat:kat + 40] = key
        sel = N["VCX_TIRC_HASH_OUTER_AT"]
        put(c, N["VCX_HASH_SEL_L3_PROT_TYPE"], l3, sel)
        put(c, N["VCX_HASH_SEL_L4_PROT_TYPE"], l4, sel)
        put(c, N["VCX_HASH_SEL_SELECTED_FIELDS"], fields, sel)
        return c

    def tir(self, td, raw=None, **kw):
        c = self.tirc(td, **kw)
        if raw:
            raw(c)
        r = self.ncmd("CREATE_TIR", in_len=N["VCX_CREATE_TIR_IN_LEN"],
                      payload={0x20: bytes(c)})
        return r if r.status else r.f(N["VCX_CREATE_TIR_OUT_TIRN"])

    def ft(self, level=0, log_size=4, miss=0, miss_id=0, raw=None):
        c = bytearray(N["VCX_FTC_SIZE"])
        put(c, N["VCX_FTC_LEVEL"], level)
        put(c, N["VCX_FTC_LOG_SIZE"], log_size)
        put(c, N["VCX_FTC_TABLE_MISS_ACTION"], miss)
        put(c, N["VCX_FTC_TABLE_MISS_ID"], miss_id)
        if raw:
            raw(c)
        r = self.ncmd("CREATE_FLOW_TABLE", in_len=N["VCX_CREATE_FT_IN_LEN"],
                      out_len=N["VCX_CREATE_FT_OUT_LEN"],
                      payload={N["VCX_CREATE_FT_IN_CTX_AT"]: bytes(c)})
        return r if r.status else r.f(N["VCX_CREATE_FT_OUT_TABLE_ID"])

    def fg(self, ft, start, end, criteria=None, enable=None, table_type=0):
        """criteria: {field name: mask} over the outer headers (or raw 64 bytes)."""
        m = bytearray(64)
        if isinstance(criteria, (bytes, bytearray)):
            m[:] = criteria
        else:
            for name, v in (criteria or {}).items():
                if name in ("SRC_IP", "DST_IP"):
                    at = N["VCX_MATCH_%s_AT" % name]
                    m[at:at + 16] = v
                else:
                    put(m, N["VCX_MATCH_" + name], v)
        en = (1 if criteria else 0) if enable is None else enable
        return self.ncmd("CREATE_FLOW_GROUP", in_len=N["VCX_CREATE_FG_IN_LEN"],
                         fields=[(N["VCX_FT_IN_TABLE_TYPE"], table_type),
                                 (N["VCX_FG_IN_TABLE_ID"], ft),
                                 (N["VCX_FG_START_FLOW_INDEX"], start),
                                 (N["VCX_FG_END_FLOW_INDEX"], end),
                                 (N["VCX_FG_MATCH_CRITERIA_ENABLE"], en)],
                         payload={N["VCX_FG_MATCH_CRITERIA_AT"]: bytes(m)})

    def fg_id(self, *a, **kw):
        r = self.ok(self.fg(*a, **kw), "CREATE_FLOW_GROUP")
        return r.f(N["VCX_CREATE_FG_OUT_GROUP_ID"])

    def fte(self, ft, index, group, action=4, dest=None, value=None, flow_tag=0, op_mod=0,
            modify_mask=0, ndest=None):
        """dest: (type, id); value: {field: value} of the outer headers."""
        c = bytearray(N["VCX_FTE_CTX_SIZE"] + 8)
        put(c, N["VCX_FTE_GROUP_ID"], group)
        put(c, N["VCX_FTE_FLOW_TAG"], flow_tag)
        put(c, N["VCX_FTE_ACTION"], action)
        put(c, N["VCX_FTE_DESTINATION_LIST_SIZE"],
            (1 if dest else 0) if ndest is None else ndest)
        mv = N["VCX_FTE_MATCH_VALUE_AT"]
        for name, v in (value or {}).items():
            if name in ("SRC_IP", "DST_IP"):
                at = mv + N["VCX_MATCH_%s_AT" % name]
                c[at:at + 16] = v
            else:
                put(c, N["VCX_MATCH_" + name], v, mv)
        if dest:
            put(c, N["VCX_DEST_TYPE"], dest[0], N["VCX_FTE_DEST_AT"])
            put(c, N["VCX_DEST_ID"], dest[1], N["VCX_FTE_DEST_AT"])
        return self.ncmd("SET_FLOW_TABLE_ENTRY", op_mod=op_mod,
                         in_len=N["VCX_SET_FTE_IN_LEN"] + 8,
                         fields=[(N["VCX_SET_FTE_IN_TABLE_ID"], ft),
                                 (N["VCX_SET_FTE_IN_FLOW_INDEX"], index),
                                 (N["VCX_SET_FTE_IN_MODIFY_ENABLE_MASK"], modify_mask)],
                         payload={N["VCX_SET_FTE_IN_CTX_AT"]: bytes(c)})

    def root(self, ft, op_mod=0):
        return self.ncmd("SET_FLOW_TABLE_ROOT", op_mod=op_mod,
                         in_len=N["VCX_SET_FT_ROOT_IN_LEN"],
                         fields=[(N["VCX_SET_FT_ROOT_IN_TABLE_ID"], ft)])

    def catch_all(self, tirn, flow_tag=0x123, log_size=2):
        """A root table (level 0) whose one group without criteria forwards all to tirn."""
        ft = self.ft(0, log_size)
        g = self.fg_id(ft, 0, 0)
        self.ok(self.fte(ft, 0, g, 4, (2, tirn), flow_tag=flow_tag), "catch-all FTE")
        self.ok(self.root(ft), "SET_FLOW_TABLE_ROOT")
        return ft

    def q_counter(self):
        r = self.ok(self.ncmd("ALLOC_Q_COUNTER"), "ALLOC_Q_COUNTER")
        return r.f(N["VCX_ALLOC_Q_COUNTER_OUT_COUNTER_SET_ID"])

    def query_q_counter(self, cid, clear=0):
        return self.ncmd("QUERY_Q_COUNTER", in_len=N["VCX_QUERY_Q_COUNTER_IN_LEN"],
                         out_len=N["VCX_QUERY_Q_COUNTER_OUT_LEN"],
                         fields=[(N["VCX_QUERY_Q_COUNTER_IN_COUNTER_SET_ID"], cid),
                                 (N["VCX_QUERY_Q_COUNTER_IN_CLEAR"], clear)])

    def vport_counters(self, clear=0):
        r = self.ok(self.ncmd("QUERY_VPORT_COUNTER", in_len=N["VCX_QUERY_VPORT_COUNTER_IN_LEN"],
                              out_len=N["VCX_QUERY_VPORT_COUNTER_OUT_LEN"],
                              fields=[(N["VCX_QUERY_VPORT_COUNTER_IN_CLEAR"], clear)]),
                    "QUERY_VPORT_COUNTER")
        out = {}
        for k, at in N.items():
            if k.startswith("VCX_VPORT_CNT_") and k.endswith("_AT"):
                name = k[len("VCX_VPORT_CNT_"):-3].lower()
                out[name] = struct.unpack_from(">QQ", r.out, at)
        return out

    def mac_set(self, mac=MAC):
        """A PD, an MTT key over 1 MiB of data, a CQ, TD, TIS and SQ: what sending needs."""
        pd = self.alloc_pd()
        buf = self.alloc(1 << 20)
        key = self.create_mkey(pd, buf, 1 << 20)
        return pd, buf, key

    def frames_seen(self):
        """Frames the receive path has finished with: delivered, dropped, RoCE."""
        st = self.d.state()
        return int(st["nic_rx"]) + int(st["nic_rx_drop"]) + int(st["roce_rx_drop"])

    def wire_in(self, frame, timeout=5.0):
        """Send frame to the device over the wire and wait until the device has handled
        it (delivered or dropped)."""
        before = self.frames_seen()
        self.sock.send(frame)
        end = time.time() + timeout
        while self.frames_seen() == before:
            if time.time() > end:
                raise RuntimeError("the device did not take the frame in %.0f s" % timeout)
            time.sleep(0.005)
        self.settle()


def run_nic_cases(t, cases):
    """Each (name, fn) on a fresh Nic: fn(v) isolated, then QEMU must still be alive."""
    for name, fn in cases:
        v = Nic()
        try:
            run_isolated(t, name, lambda fn=fn: fn(v))
            t.ok(v.qt.alive(), "QEMU alive after %s" % name)
        finally:
            v.close()
