#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""UARs and event queues: ALLOC_UAR/DEALLOC_UAR, CREATE_EQ/DESTROY_EQ/QUERY_EQ, EQE
format and owner bit, PAS page placement, arm/no-arm doorbells and MSI-X, command
completion EQEs, port change EQEs, overrun and DMA failure handling."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import H, Tap, Vcx, DEV_PATH, EQ_BASE, get, put, run_isolated  # noqa: E402

OP = {k[len("VCX_CMD_OP_"):]: v for k, v in H.items() if k.startswith("VCX_CMD_OP_")}
t = Tap()
CMD_EV, PORT_EV = 1 << 0x0a, 1 << 0x09


def check(r, status, syndrome, desc):
    t.eq((r.deliv, r.status, r.syndrome), (0, status, syndrome), desc)


def nop(d, slot=0):
    """A harmless command (QUERY_ISSI) to make a completion."""
    return d.exec(OP["QUERY_ISSI"], out_len=0x70, slot=slot)


def uars(d):
    u1, u2 = d.alloc_uar(), d.alloc_uar()
    t.eq((u1, u2), (4, 5), "ALLOC_UAR hands out 4 then 5 (first index above iseg + MSI-X)")
    t.eq(d.state()["uars"], "2", "state property: uars=2")
    check(d.exec(OP["DEALLOC_UAR"], fields=[(H["VCX_DEALLOC_UAR_IN_UAR"], 2)]), 3, 0x08030002,
          "DEALLOC_UAR 2 (below first UAR index): BAD_PARAM")
    check(d.exec(OP["DEALLOC_UAR"], fields=[(H["VCX_DEALLOC_UAR_IN_UAR"], 0x800000 - 1)]), 3,
          0x08030002, "DEALLOC_UAR beyond BAR0: BAD_PARAM")
    check(d.exec(OP["DEALLOC_UAR"], fields=[(H["VCX_DEALLOC_UAR_IN_UAR"], 100)]), 9, 0x08030003,
          "DEALLOC_UAR of an unallocated index: BAD_RES_STATE")
    check(d.exec(OP["ALLOC_UAR"], op_mod=2), 3, 0x0802ff09, "ALLOC_UAR op_mod 2: BAD_PARAM")
    check(d.exec(OP["ALLOC_UAR"], fields=[(H["VCX_CMD_IN_UID"], 3)]), 3, 0x0802ff08,
          "ALLOC_UAR uid 3: BAD_PARAM")
    check(d.exec(OP["ALLOC_UAR"], out_len=8), 0x51, 0x0802ff03,
          "ALLOC_UAR with an 8-byte output: BAD_OUTPUT_LEN")
    t.eq(d.state()["uars"], "2", "refused ALLOC_UARs allocated nothing")
    check(d.exec(OP["DEALLOC_UAR"], fields=[(H["VCX_DEALLOC_UAR_IN_UAR"], u2)]), 0, 0,
          "DEALLOC_UAR 5: OK")
    check(d.exec(OP["DEALLOC_UAR"], fields=[(H["VCX_DEALLOC_UAR_IN_UAR"], u2)]), 9, 0x08030003,
          "DEALLOC_UAR 5 twice: BAD_RES_STATE")
    t.eq(d.alloc_uar(), 5, "freed index is handed out again")
    d.exec(OP["DEALLOC_UAR"], fields=[(H["VCX_DEALLOC_UAR_IN_UAR"], 5)])
    return u1


def create_bad(d, uar):
    def eqc(**kv):
        def f(e):
            for k, v in kv.items():
                put(e, H["VCX_EQC_" + k.upper()], v)
        return f
    check(d.create_eq(uar, CMD_EV, log_size=16, npas=1), 3, 0x03010001,
          "CREATE_EQ log_eq_size 16 > 15: BAD_PARAM")
    check(d.create_eq(uar + 1, CMD_EV), 3, 0x03010002, "CREATE_EQ on an unallocated UAR: BAD_PARAM")
    check(d.create_eq(uar, CMD_EV, intr=64), 3, 0x03010003, "CREATE_EQ intr 64 (of 64 vectors): BAD_PARAM")
    check(d.create_eq(uar, CMD_EV, extra=eqc(log_page_size=19)), 3, 0x03010004,
          "CREATE_EQ log_page_size 19: BAD_PARAM")
    check(d.create_eq(uar, CMD_EV, log_size=7, npas=1), 0x50, 0x03010005,
          "CREATE_EQ of 8 KiB with one 4 KiB PAS entry: BAD_INPUT_LEN")
    check(d.create_eq(uar, CMD_EV, base=EQ_BASE + 0x800), 3, 0x03010006,
          "CREATE_EQ with a misaligned PAS entry: BAD_PARAM")
    check(d.create_eq(uar, CMD_EV, extra=eqc(st=5)), 3, 0x0301000b, "CREATE_EQ st 5: BAD_PARAM")
    r = d.exec(OP["CREATE_EQ"], in_len=0x118,
               payload={0x10: bytes(12) + bytes([4, 0, 0, uar]), 0x60: b"\x01",
                        0x110: struct.pack(">Q", EQ_BASE)})
    check(r, 3, 0x0301000a, "CREATE_EQ subscribing event type >= 64: BAD_PARAM")
    check(d.exec(OP["CREATE_EQ"], in_len=0x100), 0x50, 0x0301ff02,
          "CREATE_EQ input 0x100 bytes: BAD_INPUT_LEN")
    cap = d.find_cap(0x11)
    ctl = d.cfg_read(cap)
    d.cfg_write(cap, ctl & ~(1 << 31))
    check(d.create_eq(uar, CMD_EV), 3, 0x0301000c, "CREATE_EQ with MSI-X disabled: BAD_PARAM")
    d.cfg_write(cap, ctl)
    t.eq(d.state()["eqs"], "0", "refused CREATE_EQs created nothing")


def create_query_destroy(d, uar):
    r = d.create_eq(uar, CMD_EV | PORT_EV, log_size=5, intr=3)
    t.eq((r.status, r.f(H["VCX_CREATE_EQ_OUT_EQN"])), (0, 0), "CREATE_EQ: OK, eq_number 0")
    r = d.exec(OP["QUERY_EQ"], out_len=0x118, fields=[(H["VCX_QUERY_EQ_IN_EQN"], 0)])
    o = 0x10
    t.eq((r.status, r.f(H["VCX_EQC_LOG_EQ_SIZE"], o), r.f(H["VCX_EQC_UAR_PAGE"], o),
          r.f(H["VCX_EQC_INTR"], o), r.f(H["VCX_EQC_ST"], o),
          struct.unpack(">Q", r.out[0x58:0x60])[0], struct.unpack(">Q", r.out[0x110:0x118])[0]),
         (0, 5, uar, 3, 0xa, CMD_EV | PORT_EV, EQ_BASE),
         "QUERY_EQ: log_size 5, uar, intr 3, st fired, bitmask, PAS[0]")
    check(d.exec(OP["QUERY_EQ"], out_len=0x110, fields=[(H["VCX_QUERY_EQ_IN_EQN"], 7)]), 9,
          0x03030009, "QUERY_EQ of a free EQ number: BAD_RES_STATE")
    check(d.exec(OP["QUERY_EQ"], out_len=0x110, fields=[(H["VCX_QUERY_EQ_IN_EQN"], 200)]), 3,
          0x03030008, "QUERY_EQ 200: BAD_PARAM")
    check(d.exec(OP["QUERY_EQ"], out_len=0x100, fields=[(H["VCX_QUERY_EQ_IN_EQN"], 0)]), 0x51,
          0x0303ff03, "QUERY_EQ with a 0x100-byte output: BAD_OUTPUT_LEN")
    check(d.exec(OP["QUERY_EQ"], op_mod=1, out_len=0x110), 3, 0x0303ff09,
          "QUERY_EQ op_mod 1: BAD_PARAM")
    check(d.exec(OP["DESTROY_EQ"], fields=[(H["VCX_DESTROY_EQ_IN_EQN"], 64)]), 3, 0x03020008,
          "DESTROY_EQ 64: BAD_PARAM")
    check(d.exec(OP["DESTROY_EQ"], fields=[(H["VCX_DESTROY_EQ_IN_EQN"], 9)]), 9, 0x03020009,
          "DESTROY_EQ of a free EQ number: BAD_RES_STATE")
    check(d.exec(OP["DESTROY_EQ"], op_mod=1), 3, 0x0302ff09, "DESTROY_EQ op_mod 1: BAD_PARAM")
    check(d.exec(OP["DEALLOC_UAR"], fields=[(H["VCX_DEALLOC_UAR_IN_UAR"], uar)]), 9, 0x08030004,
          "DEALLOC_UAR of a UAR an EQ uses: BAD_RES_STATE")
    check(d.exec(OP["DESTROY_EQ"], fields=[(H["VCX_DESTROY_EQ_IN_EQN"], 0)]), 0, 0, "DESTROY_EQ 0: OK")
    t.eq(d.state()["eqs"], "0", "state property: eqs=0")
    # EQ number exhaustion
    ok = all(d.create_eq(uar, 0, log_size=0, base=EQ_BASE + 0x100000 + i * 4096).status == 0
             for i in range(64))
    t.ok(ok, "64 EQs created")
    check(d.create_eq(uar, 0, log_size=0), 8, 0x03010007, "65th EQ: EXCEED_LIM")
    for i in range(64):
        d.exec(OP["DESTROY_EQ"], fields=[(H["VCX_DESTROY_EQ_IN_EQN"], i)])
    t.eq(d.state()["eqs"], "0", "all 64 destroyed")


def cmd_events(d, uar):
    r = d.create_eq(uar, CMD_EV, log_size=2, intr=2)
    eqn = r.f(H["VCX_CREATE_EQ_OUT_EQN"])
    t.eq(r.status, 0, "command EQ (4 entries, vector 2) created")
    e = d.eqe(EQ_BASE, 0)
    t.eq(e[0x3f], 1, "CREATE_EQ of the command EQ itself completed by polling (no EQE)")
    nop(d, slot=3)
    e = d.eqe(EQ_BASE, 0)
    t.eq((e[1], e[3], struct.unpack(">I", e[0x20:0x24])[0], e[0x3f] & 1), (0x0a, 0, 1 << 3, 0),
         "command completion EQE: type 0x0A, vector bit 3, owner 0")
    t.ok(not d.msi_count(2), "EQ not armed yet: no MSI-X")
    d.uar_write(uar, 0x48, (eqn << 24) | 0)
    t.ok(not d.msi_count(2), "no-arm doorbell (0x48) with an EQE pending: still no MSI-X")
    d.uar_write(uar, 0x40, (eqn << 24) | 0)
    t.ok(d.msi_count(2), "arm doorbell with an EQE pending past CI fires MSI-X at once")
    d.uar_write(uar, 0x40, (eqn << 24) | 1)
    t.ok(not d.msi_count(2), "arm with nothing pending: no MSI-X")
    # two entries rung together: one EQE with both bits
    d.post(struct.pack(">HHHH", OP["QUERY_ISSI"], 0, 0, 0) + bytes(8), 0x70, slot=1, ring=False)
    d.post(struct.pack(">HHHH", OP["QUERY_ISSI"], 0, 0, 0) + bytes(8), 0x70, slot=2, ring=False)
    d.iseg_write(0x18, 0x6)
    e = d.eqe(EQ_BASE, 1)
    t.eq((e[1], struct.unpack(">I", e[0x20:0x24])[0]), (0x0a, 0x6),
         "entries 1 and 2 rung together: one EQE with bitmask 0x6")
    t.ok(d.msi_count(2), "armed EQ: MSI-X on the EQE")
    nop(d)
    t.ok(not d.msi_count(2), "fired EQ: the next EQE raises no MSI-X until re-armed")
    nop(d)
    # entries 0..3 written; the 5th overruns (consumer still 1, 4 pending)
    d.uar_write(uar, 0x48, (eqn << 24) | 1)
    nop(d)
    e = d.eqe(EQ_BASE, 0)
    t.eq((e[0x3f] & 1, struct.unpack(">I", e[0x20:0x24])[0]), (1, 1),
         "5th EQE after CI 1 wraps to entry 0 with owner 1")
    r = nop(d)
    t.eq(d.qt.memread(EQ_BASE + 64, 64), d.eqe(EQ_BASE, 1), "overrun: entry 1 not overwritten")
    t.ok("EQ %d overrun" % eqn in d.qt.log(), "overrun logged as a guest error")
    t.eq(r.status, 0, "command still completes (polling) when its EQE is dropped")
    d.uar_write(uar, 0x40, (eqn << 24) | 5)
    d.msi_count(2)
    check(d.exec(OP["DESTROY_EQ"], fields=[(H["VCX_DESTROY_EQ_IN_EQN"], eqn)]), 0, 0,
          "DESTROY_EQ of the command EQ (completion by polling again)")


def placement_and_dma(d, uar):
    # 128 EQEs over two non-contiguous 4 KiB pages, page_offset 0
    p0, p1 = EQ_BASE + 0x200000, EQ_BASE + 0x300000
    init = bytes([0] * 63 + [1]) * 64
    d.qt.memwrite(p0, init)
    d.qt.memwrite(p1, init)
    eqc = bytearray(64)
    put(eqc, H["VCX_EQC_LOG_EQ_SIZE"], 7)
    put(eqc, H["VCX_EQC_UAR_PAGE"], uar)
    r = d.exec(OP["CREATE_EQ"], in_len=0x120,
               payload={0x10: eqc, 0x58: struct.pack(">Q", CMD_EV),
                        0x110: struct.pack(">QQ", p0, p1)})
    eqn = r.f(H["VCX_CREATE_EQ_OUT_EQN"])
    for i in range(65):
        nop(d)
    t.eq((d.qt.memread(p0 + 63 * 64 + 1, 1)[0], d.qt.memread(p1 + 1, 1)[0],
          d.qt.memread(p1 + 0x3f, 1)[0]), (0x0a, 0x0a, 0),
         "EQE 63 at the end of page 0, EQE 64 at the start of PAS page 1")
    d.exec(OP["DESTROY_EQ"], fields=[(H["VCX_DESTROY_EQ_IN_EQN"], eqn)])
    # EQ buffer outside guest memory: the EQ goes to write failure, QEMU survives
    r = d.create_eq(uar, CMD_EV, base=0x4000_0000_0000, log_size=1)
    eqn = r.f(H["VCX_CREATE_EQ_OUT_EQN"]) if r.status == 0 else None
    t.eq(r.status, 0, "CREATE_EQ with a PAS outside guest memory accepted (not touched yet)")
    r2 = nop(d)
    r3 = d.exec(OP["QUERY_EQ"], out_len=0x110, fields=[(H["VCX_QUERY_EQ_IN_EQN"], eqn or 0)])
    t.eq((r2.status, r3.f(H["VCX_EQC_STATUS"], 0x10)), (0, 0xa),
         "EQE write to unbacked memory: command completes, EQ status 0xA (write failure)")
    d.exec(OP["DESTROY_EQ"], fields=[(H["VCX_DESTROY_EQ_IN_EQN"], eqn or 0)])


def port_events(d, uar):
    r = d.create_eq(uar, PORT_EV, log_size=2, intr=5)
    eqn = r.f(H["VCX_CREATE_EQ_OUT_EQN"])
    d.uar_write(uar, 0x40, eqn << 24)
    d.qt.qom_set(DEV_PATH, "link", False)
    e = d.eqe(EQ_BASE, 0)
    t.eq((e[1], e[3], e[0x28], e[0x3f] & 1), (0x09, 1, 0x10, 0),
         "link down: port change EQE type 0x09 sub_type 1 (down), port 1 in bits 7:4")
    t.ok(d.msi_count(5), "port change EQE raised MSI-X vector 5")
    st = d.state()
    r = d.exec(OP["QUERY_VPORT_STATE"])
    t.eq((st["link"], r.f(H["VCX_QUERY_VPORT_STATE_OUT_STATE"])), ("down", 0),
         "state property link=down, QUERY_VPORT_STATE state 0")
    d.qt.qom_set(DEV_PATH, "link", False)
    t.eq(d.eqe(EQ_BASE, 1)[0x3f], 1, "setting link down again sends no EQE")
    d.qt.qom_set(DEV_PATH, "link", True)
    e = d.eqe(EQ_BASE, 1)
    t.eq((e[1], e[3], e[0x28]), (0x09, 4, 0x10), "link up: port change EQE sub_type 4 (active)")
    t.ok(not d.msi_count(5), "EQ fired and not re-armed: no MSI-X for the second EQE")
    t.eq(d.qt.qom_get(DEV_PATH, "link"), True, "qom-get link: true")
    # doorbell faults
    d.uar_write(uar, 0x40, (33 << 24) | 0)
    t.ok("EQ doorbell on UAR %d for EQ 33" % uar in d.qt.log(), "doorbell for a missing EQ: guest error")
    d.uar_write(200, 0x40, eqn << 24)
    t.ok("write to UAR 200 offset 0x40: UAR not allocated" in d.qt.log(),
         "doorbell on an unallocated UAR page: guest error")
    d.exec(OP["DESTROY_EQ"], fields=[(H["VCX_DESTROY_EQ_IN_EQN"], eqn)])


def main():
    d = Vcx()
    d.bring_up()
    uar = [None]

    def setup():
        uar[0] = uars(d)
    run_isolated(t, "uars", setup)
    for name, fn in [("create_bad", create_bad), ("cqd", create_query_destroy),
                     ("cmd_events", cmd_events), ("placement", placement_and_dma),
                     ("port", port_events)]:
        run_isolated(t, name, lambda fn=fn: fn(d, uar[0]))
    t.ok(d.qt.alive(), "QEMU still running")
    d.qt.close()
    t.done()


if __name__ == "__main__":
    main()
