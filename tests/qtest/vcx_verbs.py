#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Verbs-level helpers over vcx_qtest: PD, MKEY, CQ, QP, SRQ/RMP objects built from guest
RAM buffers with the PRM commands, WQE writers, doorbells and CQE/EQE readers.

Layouts come from include/vcx/prm-obj.h and prm-wqe.h (as vcx_qtest reads prm-cmd.h);
the tests still compare CQE and EQE bytes with literal values."""
import re
import struct
import time

from vcx_qtest import H, ROOT, BAR0, EQ_BASE, Fld, Vcx, get, put, bswap32  # noqa: F401
from vcx_qtest import load_header_defines, run_isolated


P = load_header_defines(["prm-obj.h", "prm-wqe.h"], base=H)
NIC = load_header_defines(["prm-nic.h"], base=P)    # the Q counter commands
OP = {k[len("VCX_CMD_OP_"):]: v for k, v in P.items() if k.startswith("VCX_CMD_OP_")}

# Guest memory map of the verbs tests (512 MiB guest; vcx_qtest uses below 0x10000000).
CQ_BASE = 0x10000000
QP_BASE = 0x11000000
SRQ_BASE = 0x12000000
DBR_BASE = 0x13000000
DATA_BASE = 0x14000000
ASYNC_EQ = EQ_BASE            # EQ 0: async events
COMP_EQ = EQ_BASE + 0x10000   # EQ 1: completion events
ASYNC_EVENTS = ((1 << 0x02) | (1 << 0x04) | (1 << 0x05) | (1 << 0x10) | (1 << 0x11) |
                (1 << 0x12) | (1 << 0x13) | (1 << 0x14))

ST = {"RC": 0, "UC": 1, "UD": 2, "QP1": 8, "REG_UMR": 0xc}
# GID table entry 0 of every Verbs() device: ::ffff:10.0.0.1 (the av() default destination)
GID0 = bytes(10) + b"\xff\xff" + bytes([10, 0, 0, 1])
QP_STATE = {"RST": 0, "INIT": 1, "RTR": 2, "RTS": 3, "ERR": 6}


def bswap64(v):
    return struct.unpack("<Q", struct.pack(">Q", v))[0]


class Cq:
    def __init__(self, dev, cqn, base, log_size, dbr, uar, cqe_sz=0):
        self.dev, self.cqn, self.base, self.log_size = dev, cqn, base, log_size
        self.dbr, self.uar, self.ci, self.cqe_sz = dbr, uar, 0, cqe_sz

    def entry(self, index):
        size = 64 << self.cqe_sz
        off = (index & ((1 << self.log_size) - 1)) * size + size - 64
        return self.dev.qt.memread(self.base + off, 64)

    def poll(self):
        """The next CQE owned by software, or None; consumes it and updates set_ci."""
        e = self.entry(self.ci)
        own = e[0x3f]
        if (own >> 4) == 0xf or (own & 1) != ((self.ci >> self.log_size) & 1):
            return None
        self.ci += 1
        self.dev.qt.memwrite(self.dbr, struct.pack(">I", self.ci & 0xffffff))
        return e

    def poll_all(self, limit=64):
        out = []
        for _ in range(limit):
            e = self.poll()
            if e is None:
                break
            out.append(e)
        return out

    def arm(self, solicited=False, sn=0):
        word = (sn & 3) << 28 | (1 if solicited else 0) << 24 | (self.ci & 0xffffff)
        self.dev.qt.writeq(BAR0 + self.uar * 4096 + 0x20, bswap64(word << 32 | self.cqn))


class Qp:
    def __init__(self, dev, qpn, st, base, dbr, log_sq, log_rq, rq_stride, uar, srq):
        self.dev, self.qpn, self.st, self.base, self.dbr = dev, qpn, st, base, dbr
        self.log_sq, self.log_rq, self.rq_stride, self.uar, self.srq = (
            log_sq, log_rq, rq_stride, uar, srq)
        self.rq_bytes = 0 if srq or log_rq is None else rq_stride << log_rq
        self.sq_pi = 0
        self.rq_pi = 0
        self.bf = 0

    def sq_addr(self, index):
        return self.base + self.rq_bytes + (index & ((1 << self.log_sq) - 1)) * 64

    def write_wqe(self, wqe, index=None):
        index = self.sq_pi if index is None else index
        for i in range(0, len(wqe), 64):
            self.dev.qt.memwrite(self.sq_addr(index + i // 64), wqe[i:i + 64])

    def ring(self, ctrl8):
        self.dev.qt.memwrite(self.dbr + 4, struct.pack(">I", self.sq_pi & 0xffff))
        off = 0x800 + self.bf * 0x100
        self.bf ^= 1
        self.dev.qt.writeq(BAR0 + self.uar * 4096 + off,
                           bswap64(struct.unpack(">Q", ctrl8)[0]))

    def post_send(self, opcode, segs=b"", ce=True, imm=0, se=False, ring=True,
                  ds=None, raw=None, fence=0):
        """Build and post one WQE: control segment + segs (bytes). Returns its index.
        fence: the control segment's fence mode (fm, bits 7:5 of fm_ce_se)."""
        body = bytes(segs)
        nds = (16 + len(body)) // 16 if ds is None else ds
        wqe = bytearray(16 + len(body))
        fm = (P["VCX_WQE_CE_CQE"] if ce else 0) | (P["VCX_WQE_SE_SOLICITED"] if se else 0)
        fm |= (fence & 7) << 5
        struct.pack_into(">IIBBBBI", wqe, 0, (self.sq_pi & 0xffff) << 8 | opcode,
                         self.qpn << 8 | (nds & 0x3f), 0, 0, 0, fm, imm)
        wqe[16:] = body
        if raw is not None:
            wqe = bytearray(raw)
        wqe += bytes((-len(wqe)) % 64)
        index = self.sq_pi
        self.write_wqe(wqe)
        self.sq_pi += max(1, (max(nds, 1) * 16 + 63) // 64) if raw is None else len(wqe) // 64
        if ring:
            self.ring(bytes(wqe[:8]))
        return index

    def post_recv(self, sges, stride_sges=None):
        n = self.rq_stride // 16
        wqe = bytearray(self.rq_stride)
        for i, (addr, length, lkey) in enumerate(sges):
            struct.pack_into(">IIQ", wqe, 16 * i, length, lkey, addr)
        if len(sges) < n:
            struct.pack_into(">IIQ", wqe, 16 * len(sges), 0, 0x100, 0)
        idx = self.rq_pi & ((1 << self.log_rq) - 1)
        self.dev.qt.memwrite(self.base + idx * self.rq_stride, wqe)
        self.rq_pi += 1
        self.dev.qt.memwrite(self.dbr, struct.pack(">I", self.rq_pi & 0xffff))


class Srq:
    def __init__(self, dev, srqn, base, log_size, stride, dbr, rmp):
        self.dev, self.srqn, self.base, self.log_size = dev, srqn, base, log_size
        self.stride, self.dbr, self.rmp = stride, dbr, rmp
        self.head = 0
        self.counter = 0
        n = 1 << log_size
        for i in range(n):          # linked list as libmlx5 builds it: i -> i + 1
            self.dev.qt.memwrite(base + i * stride, struct.pack(">HH", 0, (i + 1) % n))

    def post(self, sges, ring=True):
        """Fill the WQE at head; returns its index."""
        idx = self.head
        addr = self.base + idx * self.stride
        nxt = struct.unpack(">H", self.dev.qt.memread(addr + 2, 2))[0]
        body = bytearray(self.stride - 16)
        for i, (a, length, lkey) in enumerate(sges):
            struct.pack_into(">IIQ", body, 16 * i, length, lkey, a)
        if len(sges) < len(body) // 16:
            struct.pack_into(">IIQ", body, 16 * len(sges), 0, 0x100, 0)
        self.dev.qt.memwrite(addr + 16, body)
        self.head = nxt
        self.counter += 1
        if ring:
            self.dev.qt.memwrite(self.dbr, struct.pack(">I", self.counter & 0xffff))
        return idx


class Verbs:
    """An HCA brought up with one UAR, an async EQ (0) and a completion EQ (1)."""

    def __init__(self, issi=1, atomic_mode=1, gid0=True, **kw):
        """atomic_mode: the ATOMIC cap atomic_req_8B_endianness_mode to set before INIT_HCA
        (1 host order, as mlx5_core sets it; None leaves the default, 0 big-endian).
        gid0: write GID0 to RoCE address table entry 0 (as the driver's default GID)."""
        self.d = Vcx(**kw)
        self.qt = self.d.qt
        self.d.bring_up(issi=issi, init=False)
        if atomic_mode is not None:
            r = self.set_atomic_mode(atomic_mode)
            assert r.status == 0, "SET_HCA_CAP atomic: 0x%x" % r.status
        r = self.d.exec(H["VCX_CMD_OP_INIT_HCA"])
        assert r.status == 0, "INIT_HCA failed"
        self.uar = self.d.alloc_uar()
        r = self.d.create_eq(self.uar, ASYNC_EVENTS, log_size=6, intr=1, base=ASYNC_EQ)
        assert r.status == 0, "async EQ: status 0x%x" % r.status
        self.async_eqn = r.f(H["VCX_CREATE_EQ_OUT_EQN"])
        r = self.d.create_eq(self.uar, 0, log_size=6, intr=2, base=COMP_EQ)
        assert r.status == 0
        self.comp_eqn = r.f(H["VCX_CREATE_EQ_OUT_EQN"])
        self.async_ci = 0
        self.comp_ci = 0
        self.next_cq = CQ_BASE
        self.next_qp = QP_BASE
        self.next_srq = SRQ_BASE
        self.next_dbr = DBR_BASE
        self.next_data = DATA_BASE
        if gid0:
            r = self.set_gid(0, GID0)
            assert r.status == 0, "SET_ROCE_ADDRESS 0: 0x%x 0x%x" % (r.status, r.syndrome)

    def close(self):
        self.qt.close()

    # the transport executor --------------------------------------------------------------
    def advance(self, ns, step):
        """Advance the virtual clock by ns, at most step ns at a time. Timers (RNR and ACK
        timeouts, the ERR watch) only queue work for the executor, a bottom half that runs
        between qtest commands and not inside clock_step: a chain of timeouts (a retry
        whose next timeout is set by the run that retried) needs one step per timeout."""
        while ns > 0:
            n = min(ns, step)
            self.qt.clock_step(n)
            ns -= n

    def settle(self, timeout=60.0):
        """Wait (host time) until the executor has nothing queued (state xport_queued 0);
        returns the seconds it took."""
        start = time.time()
        while int(self.d.state()["xport_queued"]):
            if time.time() - start > timeout:
                raise RuntimeError("executor still busy after %.0f s" % timeout)
            time.sleep(0.002)
        return time.time() - start

    def runs(self):
        """Executor runs since the device was created (state xport_runs)."""
        return int(self.d.state()["xport_runs"])

    # memory -------------------------------------------------------------------------------
    def alloc(self, size, align=4096):
        a = (self.next_data + align - 1) & ~(align - 1)
        self.next_data = a + size
        return a

    def dbr(self):
        a = self.next_dbr
        self.next_dbr += 64
        self.qt.memwrite(a, bytes(8))
        return a

    # events -------------------------------------------------------------------------------
    def events(self, comp=False):
        """New EQEs of the async (or completion) EQ as (type, data bytes 0x20..0x3b)."""
        base = COMP_EQ if comp else ASYNC_EQ
        out = []
        for _ in range(64):
            ci = self.comp_ci if comp else self.async_ci
            e = self.d.eqe(base, ci % 64)
            if (e[0x3f] & 1) != ((ci >> 6) & 1):
                break
            out.append((e[1], e))
            if comp:
                self.comp_ci += 1
            else:
                self.async_ci += 1
        return out

    # commands -----------------------------------------------------------------------------
    def cmd(self, op, in_len=16, out_len=16, fields=(), payload=None, op_mod=0):
        return self.d.exec(OP[op], op_mod=op_mod, in_len=in_len, out_len=out_len,
                           fields=fields, payload=payload)

    def set_atomic_mode(self, mode):
        """SET_HCA_CAP of the ATOMIC page (type 3): a copy of CUR with the endianness mode."""
        r = self.d.exec(H["VCX_CMD_OP_QUERY_HCA_CAP"], (3 << 1) | 1, out_len=0x1010)
        assert r.status == 0
        cap = bytearray(r.out[0x10:0x1010])
        put(cap, H["VCX_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE"], mode)
        return self.d.exec(H["VCX_CMD_OP_SET_HCA_CAP"], 3 << 1, in_len=0x1010,
                           payload={0x10: bytes(cap)})

    def set_gid(self, index, gid, version=2, l3=None, mac=b"\x52\x54\x00\x12\x34\x56",
                vlan=None, port=1):
        """SET_ROCE_ADDRESS; a zero gid deletes (the entry is then sent all zeros)."""
        e = bytearray(32)
        if any(gid):
            e[0:16] = gid
            if vlan is not None:
                put(e, H["VCX_GID_VLAN_VALID"], 1)
                put(e, H["VCX_GID_VLAN_ID"], vlan)
            e[0x12:0x18] = mac
            if l3 is None:
                l3 = 0 if gid[:12] == bytes(10) + b"\xff\xff" else 1
            put(e, H["VCX_GID_L3_TYPE"], l3)
            put(e, H["VCX_GID_VERSION"], version)
        return self.cmd("SET_ROCE_ADDRESS", in_len=0x30,
                        fields=[(H["VCX_ROCE_ADDRESS_IN_INDEX"], index),
                                (H["VCX_ROCE_ADDRESS_IN_VHCA_PORT_NUM"], port)],
                        payload={0x10: bytes(e)})

    def query_gid(self, index, port=1):
        return self.cmd("QUERY_ROCE_ADDRESS", out_len=0x30,
                        fields=[(H["VCX_ROCE_ADDRESS_IN_INDEX"], index),
                                (H["VCX_ROCE_ADDRESS_IN_VHCA_PORT_NUM"], port)])

    def alloc_pd(self):
        r = self.cmd("ALLOC_PD")
        assert r.status == 0, "ALLOC_PD 0x%x" % r.status
        return r.f(P["VCX_ALLOC_PD_OUT_PD"])

    def mkc(self, pd, start, length, access="lr lw rr rw a", mode=1, key=0x5a,
            log_page=12, xlt=None, free=False, umr_en=False, length64=False):
        m = bytearray(64)
        put(m, P["VCX_MKC_ACCESS_MODE_1_0"], mode & 3)
        put(m, P["VCX_MKC_ACCESS_MODE_4_2"], mode >> 2)
        for a in access.split():
            put(m, P["VCX_MKC_" + a.upper()], 1)
        put(m, P["VCX_MKC_FREE"], int(free))
        put(m, P["VCX_MKC_UMR_EN"], int(umr_en))
        put(m, P["VCX_MKC_LENGTH64"], int(length64))
        put(m, P["VCX_MKC_QPN"], 0xffffff)
        put(m, P["VCX_MKC_MKEY_7_0"], key)
        put(m, P["VCX_MKC_PD"], pd)
        put(m, P["VCX_MKC_START_ADDR"], start)
        put(m, P["VCX_MKC_LEN"], length)
        if mode == 1:
            put(m, P["VCX_MKC_LOG_PAGE_SIZE"], log_page)
            npages = ((start & ((1 << log_page) - 1)) + length + (1 << log_page) - 1) >> log_page
            put(m, P["VCX_MKC_TRANSLATIONS_OCTWORD_SIZE"],
                (npages + 1) // 2 if xlt is None else xlt)
        return m

    def create_mkey(self, pd, start, length, access="lr lw rr rw a", key=0x5a, pages=None,
                    mode=1, xlt_actual=None, raw_status=False, **kw):
        """MTT key over guest-physical [start, start+length) mapped 1:1 (IOVA = address)
        unless pages (list of page addresses) is given."""
        m = self.mkc(pd, start, length, access, mode, key, **kw)
        mtt = b""
        if mode == 1:
            lp = kw.get("log_page", 12)
            base = start & ~((1 << lp) - 1)
            npages = ((start - base) + length + (1 << lp) - 1) >> lp
            pages = pages if pages is not None else [base + (i << lp) for i in range(npages)]
            mtt = b"".join(struct.pack(">Q", p) for p in pages)
            if len(pages) % 2:
                mtt += bytes(8)
        act = len(mtt) // 16 if xlt_actual is None else xlt_actual
        r = self.cmd("CREATE_MKEY", in_len=0x110 + len(mtt),
                     fields=[(P["VCX_CREATE_MKEY_IN_XLT_ACTUAL"], act)],
                     payload={0x10: m, 0x110: mtt})
        if raw_status:
            return r
        assert r.status == 0, "CREATE_MKEY status 0x%x syndrome 0x%x" % (r.status, r.syndrome)
        return r.f(P["VCX_CREATE_MKEY_OUT_MKEY_INDEX"]) << 8 | key

    def create_cq(self, log_size=6, eqn=None, cqe_sz=0, raw=None, npas=None, big=False):
        """big: a ring over 1 MiB that is meant to work (initialised, with its PAS)."""
        size = (64 << cqe_sz) << log_size
        base = self.next_cq
        self.next_cq += -(-max(size, 4096) // 4096) * 4096 + 0x1000  # page-aligned bases
        if big:
            npas = -(-size // 4096)
        if size <= (1 << 20) or big:    # refused giant CQs are never initialised
            ring = bytearray(size)
            for i in range(1 << log_size):
                ring[i * (64 << cqe_sz) + (64 << cqe_sz) - 1] = 0xf0
            self.qt.memwrite(base, ring)
        elif npas is None:
            npas = 1
        dbr = self.dbr()
        cqc = bytearray(64)
        put(cqc, P["VCX_CQC_LOG_CQ_SIZE"], log_size)
        put(cqc, P["VCX_CQC_CQE_SZ"], cqe_sz)
        put(cqc, P["VCX_CQC_UAR_PAGE"], self.uar)
        put(cqc, P["VCX_CQC_C_EQN"], self.comp_eqn if eqn is None else eqn)
        put(cqc, P["VCX_CQC_DBR_ADDR"], dbr)
        if raw:
            raw(cqc)
        n = max(1, -(-size // 4096)) if npas is None else npas
        pas = b"".join(struct.pack(">Q", base + i * 4096) for i in range(n))
        r = self.cmd("CREATE_CQ", in_len=0x110 + len(pas), payload={0x10: cqc, 0x110: pas})
        if r.status:
            return r
        return Cq(self.d, r.f(P["VCX_CREATE_CQ_OUT_CQN"]), base, log_size, dbr, self.uar,
                  cqe_sz)

    def qpc(self, st, pd, scq, rcq, log_sq=4, log_rq=4, rq_stride=64, srq=None,
            dbr=0, zero_rq=False):
        c = bytearray(P["VCX_QPC_SIZE"])
        put(c, P["VCX_QPC_ST"], ST[st])
        put(c, P["VCX_QPC_PM_STATE"], 3)
        put(c, P["VCX_QPC_PD"], pd)
        put(c, P["VCX_QPC_UAR_PAGE"], self.uar)
        put(c, P["VCX_QPC_LOG_SQ_SIZE"], log_sq)
        if srq is not None:
            put(c, P["VCX_QPC_RQ_TYPE"], 1)
            put(c, P["VCX_QPC_SRQN_RMPN_XRQN"], srq.srqn)
        elif zero_rq:
            put(c, P["VCX_QPC_RQ_TYPE"], 3)
        else:
            put(c, P["VCX_QPC_LOG_RQ_SIZE"], log_rq)
            put(c, P["VCX_QPC_LOG_RQ_STRIDE"], (rq_stride // 16).bit_length() - 1)
        put(c, P["VCX_QPC_CQN_SND"], scq.cqn if scq else 0)
        put(c, P["VCX_QPC_CQN_RCV"], rcq.cqn if rcq else 0)
        put(c, P["VCX_QPC_DBR_ADDR"], dbr)
        return c

    def create_qp(self, st, pd, scq, rcq, log_sq=4, log_rq=4, rq_stride=64, srq=None,
                  raw=None, zero_rq=False):
        dbr = self.dbr()
        c = self.qpc(st, pd, scq, rcq, log_sq, log_rq, rq_stride, srq, dbr, zero_rq)
        if raw:
            raw(c)
        rq_bytes = 0 if (srq is not None or zero_rq) else rq_stride << log_rq
        size = rq_bytes + (64 << log_sq)
        base = self.next_qp
        self.next_qp += -(-max(size, 4096) // 4096) * 4096 + 0x1000  # page-aligned bases
        self.qt.memset(base, size, 0)
        n = max(1, -(-size // 4096))
        pas = b"".join(struct.pack(">Q", base + i * 4096) for i in range(n))
        r = self.cmd("CREATE_QP", in_len=0x110 + len(pas), payload={0x18: c, 0x110: pas})
        if r.status:
            return r
        return Qp(self.d, r.f(P["VCX_CREATE_QP_OUT_QPN"]), st, base, dbr, log_sq,
                  None if (srq is not None or zero_rq) else log_rq, rq_stride, self.uar, srq)

    def modify(self, op, qp, fields=(), ads=(), mask=0):
        c = bytearray(P["VCX_QPC_SIZE"])
        for f, v in fields:
            put(c, P["VCX_QPC_" + f.upper()], v)
        for f, v in ads:
            put(c, P["VCX_ADS_" + f.upper()], v, P["VCX_QPC_PRI_PATH_AT"])
        return self.cmd(op, in_len=0x110, fields=[(P["VCX_MODIFY_QP_IN_QPN"], qp.qpn),
                                                  (P["VCX_QP_IN_OPT_PARAM_MASK"], mask)],
                        payload={0x18: c})

    def connect(self, qp, remote_qpn=0, qkey=0x11111111, rnr_retry=7, retry=7,
                min_rnr=1, access=(1, 1, 1), psn=0x100, rpsn=0x100):
        """RST -> INIT -> RTR -> RTS as mlx5_ib does it for RC/UC/UD (QP1 as UD)."""
        ud = qp.st in ("UD", "QP1")
        f = [("q_key", qkey)] if ud else []
        if qp.st == "RC":
            f += [("rre", access[0]), ("rwe", access[1]), ("rae", access[2])]
        elif qp.st == "UC":
            f += [("rwe", access[1])]
        r = self.modify("RST2INIT_QP", qp, f, ads=[("vhca_port_num", 1)])
        assert r.status == 0, "RST2INIT 0x%x 0x%x" % (r.status, r.syndrome)
        f = [("mtu", 3), ("log_msg_max", 30)]
        if not ud:
            f += [("remote_qpn", remote_qpn), ("next_rcv_psn", rpsn)]
        if qp.st == "RC":
            f += [("log_rra_max", 2), ("min_rnr_nak", min_rnr)]
        r = self.modify("INIT2RTR_QP", qp, f, ads=[("vhca_port_num", 1), ("hop_limit", 64)])
        assert r.status == 0, "INIT2RTR 0x%x 0x%x" % (r.status, r.syndrome)
        f = [("next_send_psn", psn)]
        if qp.st == "RC":
            f += [("retry_count", retry), ("rnr_retry", rnr_retry), ("log_sra_max", 2)]
        r = self.modify("RTR2RTS_QP", qp, f, ads=[("ack_timeout", 14)])
        assert r.status == 0, "RTR2RTS 0x%x 0x%x" % (r.status, r.syndrome)

    def query_qp(self, qp):
        r = self.cmd("QUERY_QP", out_len=0x110, fields=[(P["VCX_OBJ_NUMBER"], qp.qpn)])
        return r

    def qp_state(self, qp):
        return get(self.query_qp(qp).out, P["VCX_QPC_STATE"], 0x18)

    def create_srq(self, pd, log_size=3, stride=64, lwm=0, rmp=False, raw=None):
        size = stride << log_size
        base = self.next_srq
        self.next_srq += -(-max(size, 4096) // 4096) * 4096 + 0x1000  # page-aligned bases
        self.qt.memset(base, size, 0)
        dbr = self.dbr()
        n = max(1, -(-size // 4096))
        pas = b"".join(struct.pack(">Q", base + i * 4096) for i in range(n))
        lstride = stride.bit_length() - 1
        if rmp:
            rmpc = bytearray(0x30 + 0xc0)
            put(rmpc, P["VCX_RMPC_STATE"], 1)
            w = 0x30
            put(rmpc, P["VCX_WQ_WQ_TYPE"], 0, w)
            put(rmpc, P["VCX_WQ_LWM"], lwm, w)
            put(rmpc, P["VCX_WQ_PD"], pd, w)
            put(rmpc, P["VCX_WQ_DBR_ADDR"], dbr, w)
            put(rmpc, P["VCX_WQ_LOG_WQ_STRIDE"], lstride, w)
            put(rmpc, P["VCX_WQ_LOG_WQ_SZ"], log_size, w)
            if raw:
                raw(rmpc)
            r = self.cmd("CREATE_RMP", in_len=0x110 + len(pas),
                         payload={0x20: rmpc, 0x110: pas})
        else:
            c = bytearray(64)
            put(c, P["VCX_SRQC_LOG_SRQ_SIZE"], log_size)
            put(c, P["VCX_SRQC_LOG_RQ_STRIDE"], lstride - 4)
            put(c, P["VCX_SRQC_PD"], pd)
            put(c, P["VCX_SRQC_LWM"], lwm)
            put(c, P["VCX_SRQC_DBR_ADDR"], dbr)
            if raw:
                raw(c)
            r = self.cmd("CREATE_SRQ", in_len=0x110 + len(pas), payload={0x10: c, 0x110: pas})
        if r.status:
            return r
        return Srq(self.d, r.f(P["VCX_OBJ_NUMBER"]), base, log_size, stride, dbr, rmp)


# WQE segment builders ----------------------------------------------------------------------

def dseg(addr, length, lkey):
    return struct.pack(">IIQ", length, lkey, addr)


def inline(data):
    seg = struct.pack(">I", 0x80000000 | len(data)) + bytes(data)
    return seg + bytes((-len(seg)) % 16)


def raddr(va, rkey):
    return struct.pack(">QII", va, rkey, 0)


def atomic(swap_add, compare=0):
    return struct.pack(">QQ", swap_add, compare)


def av(dqpn, qkey, rgid=None, hop_limit=64, sgid_index=0):
    a = bytearray(48)
    struct.pack_into(">I", a, 0, qkey)
    struct.pack_into(">I", a, 8, 0x80000000 | dqpn)
    a[0x1b] = hop_limit
    struct.pack_into(">I", a, 0x1c, 1 << 30 | sgid_index << 20)
    a[0x20:0x30] = rgid or (bytes(10) + b"\xff\xff" + bytes([10, 0, 0, 1]))
    return bytes(a)


# XRC (PRM "XRC Domain", "XRC SRQ"; hw-model/vcx-xrc.c), for test_verbs_xrc and test_roce

def xrc(srqn):
    """The 16-byte XRC segment: remote XRC SRQ number in dword 0 bits 23:0."""
    return struct.pack(">IIII", srqn & 0xffffff, 0, 0, 0)


def alloc_xrcd(v):
    r = v.cmd("ALLOC_XRCD")
    assert r.status == 0, "ALLOC_XRCD: 0x%x 0x%x" % (r.status, r.syndrome)
    return r.f(P["VCX_ALLOC_XRCD_OUT_XRCD"])


def create_xrc_srq(v, pd, xrcd, cqn, log_size=3, stride=64, lwm=0, raw=None, npas=None,
                   user_index=0, issi0=False):
    """CREATE_XRC_SRQ (or, issi0, CREATE_SRQ with srqc.xrcd and cqn): an Srq to post to,
    or the failed Result."""
    size = stride << log_size
    base = v.next_srq
    v.next_srq += -(-max(size, 4096) // 4096) * 4096 + 0x1000
    if size <= 1 << 20:
        v.qt.memset(base, size, 0)
    dbr = v.dbr()
    n = max(1, -(-size // 4096)) if npas is None else npas
    pas = b"".join(struct.pack(">Q", base + i * 4096) for i in range(n))
    c = bytearray(64)
    pre = "VCX_SRQC_" if issi0 else "VCX_XRC_SRQC_"
    put(c, P[pre + ("LOG_SRQ_SIZE" if issi0 else "LOG_SIZE")], log_size)
    put(c, P[pre + "LOG_RQ_STRIDE"], stride.bit_length() - 1 - 4)
    put(c, P[pre + "XRCD"], xrcd)
    put(c, P[pre + "CQN"], cqn)
    put(c, P[pre + "PD"], pd)
    put(c, P[pre + "LWM"], lwm)
    put(c, P[pre + "DBR_ADDR"], dbr)
    if not issi0:
        put(c, P["VCX_XRC_SRQC_USER_INDEX"], user_index)
    payload = {0x10: c, 0x110: pas}
    if raw:
        raw(c, payload)
    r = v.cmd("CREATE_SRQ" if issi0 else "CREATE_XRC_SRQ", in_len=0x110 + len(pas),
              payload=payload)
    if r.status or size > 1 << 20:
        return r
    return Srq(v.d, r.f(P["VCX_CREATE_XRC_SRQ_OUT_SRQN"]), base, log_size, stride, dbr, False)


def xrc_ini(v, pd, cq, xrcd=0, raw=None):
    def fn(c):
        put(c, P["VCX_QPC_ST"], 3)
        put(c, P["VCX_QPC_XRCD"], xrcd)
        if raw:
            raw(c)
    return v.create_qp("RC", pd, cq, None, zero_rq=True, raw=fn)


def xrc_tgt(v, pd, xrcd, rcq=None, srq=None, raw=None):
    def fn(c):
        put(c, P["VCX_QPC_ST"], 3)
        put(c, P["VCX_QPC_NO_SQ"], 1)
        put(c, P["VCX_QPC_XRCD"], xrcd)
        if raw:
            raw(c)
    return v.create_qp("RC", pd, None, rcq, srq=srq, zero_rq=srq is None, raw=fn)


def xport_runs(log):
    """The vcx_xport_run trace lines of a QEMU log (trace='vcx_xport_run'), in order, as
    (run, WQEs, bytes, host ns, more)."""
    return [tuple(int(x) for x in m.groups()) for m in re.finditer(
        r"vcx_xport_run executor run (\d+): (\d+) WQEs, (\d+) bytes, (-?\d+) ns host "
        r"time, more (\d)", log)]


CQE_REQ_ERR, CQE_RESP_ERR = 0xd, 0xe


def cqe_fields(e):
    """The CQE fields the tests check, by name. Bytes 0x30..0x37 are the completion
    timestamp, except in an error CQE, whose vendor syndrome and syndrome are there."""
    err = e[0x3f] >> 4 in (CQE_REQ_ERR, CQE_RESP_ERR)
    return {
        "opcode": e[0x3f] >> 4,
        "owner": e[0x3f] & 1,
        "se": (e[0x3f] >> 1) & 1,
        "syndrome": e[0x37] if err else 0,
        "vendor": e[0x36] if err else 0,
        "timestamp": 0 if err else struct.unpack_from(">Q", e, 0x30)[0],
        "byte_cnt": struct.unpack_from(">I", e, 0x2c)[0],
        "imm": struct.unpack_from(">I", e, 0x24)[0],
        "srqn": struct.unpack_from(">I", e, 0x20)[0] & 0xffffff,
        "flags_rqpn": struct.unpack_from(">I", e, 0x18)[0],
        "sop": e[0x38],
        "qpn": struct.unpack_from(">I", e, 0x38)[0] & 0xffffff,
        "wqe_counter": struct.unpack_from(">H", e, 0x3c)[0],
    }


def cqe_tuple(e, *names):
    """The named fields of CQE e (cqe_fields), as a tuple to compare."""
    c = cqe_fields(e)
    return tuple(c[n] for n in names)


# Q counters (PRM "Counters"): the QPs that name one count in it

def alloc_qc(v):
    r = v.cmd("ALLOC_Q_COUNTER", in_len=NIC["VCX_ALLOC_Q_COUNTER_IN_LEN"], out_len=16)
    assert r.status == 0, "ALLOC_Q_COUNTER 0x%x" % r.status
    return r.f(NIC["VCX_ALLOC_Q_COUNTER_OUT_COUNTER_SET_ID"])


def dealloc_qc(v, cid):
    r = v.cmd("DEALLOC_Q_COUNTER", in_len=NIC["VCX_DEALLOC_Q_COUNTER_IN_LEN"],
              fields=[(NIC["VCX_DEALLOC_Q_COUNTER_IN_COUNTER_SET_ID"], cid)])
    assert r.status == 0, "DEALLOC_Q_COUNTER 0x%x" % r.status


def query_qc(v, cid, *names, clear=0):
    """The named fields of Q counter cid, as a tuple (clear=1: and zero them)."""
    r = v.cmd("QUERY_Q_COUNTER", in_len=NIC["VCX_QUERY_Q_COUNTER_IN_LEN"],
              out_len=NIC["VCX_QUERY_Q_COUNTER_OUT_LEN"],
              fields=[(NIC["VCX_QUERY_Q_COUNTER_IN_COUNTER_SET_ID"], cid),
                      (NIC["VCX_QUERY_Q_COUNTER_IN_CLEAR"], clear)])
    assert r.status == 0, "QUERY_Q_COUNTER 0x%x" % r.status
    return tuple(get(r.out, NIC["VCX_QUERY_Q_COUNTER_OUT_" + n.upper()]) for n in names)


def set_counter(v, qp, cid):
    return v.modify("RTS2RTS_QP", qp, [("counter_set_id", cid)],
                    mask=P["VCX_QP_OPTPAR_COUNTER_SET_ID"])


def rc_pair(v, pd, cq):
    """Two RC QPs of pd on cq, connected to each other and in RTS."""
    a = v.create_qp("RC", pd, cq, cq)
    b = v.create_qp("RC", pd, cq, cq)
    v.connect(a, b.qpn)
    v.connect(b, a.qpn)
    return a, b


def umr_ctrl(flags, xlt_oct, mask):
    """A 48-byte UMR control segment (prm-wqe.h): flags, xlt_octowords, mkey_mask."""
    c = bytearray(48)
    c[0] = flags
    struct.pack_into(">H", c, 4, xlt_oct)
    struct.pack_into(">Q", c, 8, mask)
    return bytes(c)


def pd_buf_key_cq(v):
    """A PD, a 64 KiB buffer with an MTT key over it (IOVA = address) and a CQ."""
    pd = v.alloc_pd()
    buf = v.alloc(0x10000)
    key = v.create_mkey(pd, buf, 0x10000)
    cq = v.create_cq()
    return pd, buf, key, cq


def run_cases(tap, cases, device=None, **kw):
    """Run each (name, fn(v)) against one device, each isolated (an exception is one
    failed check); QEMU must still be alive after all of them. device: the class to make
    it with kw (default Verbs; test_roce.Wire for the wire tests)."""
    v = (device or Verbs)(**kw)
    try:
        for name, fn in cases:
            run_isolated(tap, name, lambda fn=fn: fn(v))
        tap.ok(v.qt.alive(), "QEMU alive at the end")
    finally:
        v.close()
    tap.done()
