#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Command queue transport: entries, mailbox chains, delivery statuses, signatures,
ownership, several entries per doorbell, and the dispatcher's generic command statuses."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import H, Tap, Vcx, get, put, synd, xor8, run_isolated, MBOX, DEV_PATH  # noqa: E402

OP = {k[len("VCX_CMD_OP_"):]: v for k, v in H.items() if k.startswith("VCX_CMD_OP_")}
t = Tap()


def query_cap_cur(d, **kw):
    return d.exec(OP["QUERY_HCA_CAP"], 1, out_len=0x1010, **kw)


def transport_happy(d):
    low = d.iseg_read(0x14)
    t.eq(low & 0xff, 0x56, "iseg 0x14 reports log_cmdq_size 5, log_cmdq_stride 6")
    t.eq(d.iseg_read(0x04) >> 16, 5, "cmd_interface_rev is 5")
    r = d.exec(OP["ENABLE_HCA"])
    t.eq((r.deliv, r.status, r.syndrome), (0, 0, 0), "ENABLE_HCA inline in/out: OK")
    t.eq(d.owned(0), 0, "ownership bit cleared on completion")
    r = query_cap_cur(d)
    t.eq((r.deliv, r.status), (0, 0), "QUERY_HCA_CAP through 8 output mailboxes: OK")
    t.eq(get(r.out, H["VCX_CAP_GEN_PORT_TYPE"], 0x10), 1, "cap from mailbox: port_type Ethernet")
    t.eq(get(r.out, H["VCX_CAP_GEN_MAX_NUM_EQS"], 0x10), 64, "cap from mailbox: max_num_eqs 64")
    # token stamped into every output mailbox
    tok = d.token
    addr = get(r.entry, H["VCX_CMDQ_ENT_OUT_PTR"])
    toks = []
    for _ in range(8):
        blk = d.qt.memread(addr, 0x240)
        toks.append(blk[0x23d])
        addr = get(blk, H["VCX_MBOX_NEXT_PTR"])
    t.eq(toks, [tok] * 8, "token stamped in all 8 output mailboxes")
    # input via mailboxes: SET_HCA_CAP with CUR unchanged
    inbuf = bytearray(0x1010)
    put(inbuf, H["VCX_CMD_IN_OPCODE"], OP["SET_HCA_CAP"])
    inbuf[0x10:] = r.out[0x10:0x1010]
    r2 = d.exec_raw(inbuf, 16)
    t.eq((r2.deliv, r2.status), (0, 0), "SET_HCA_CAP with 0x1010-byte input over 8 mailboxes: OK")


def several_outstanding(d):
    # three entries rung by one doorbell write, each its own command
    d.post(bytes(struct.pack(">HHHH", OP["QUERY_ISSI"], 0, 0, 0)) + bytes(8), 0x70, slot=1,
           ring=False)
    d.post(bytes(struct.pack(">HHHH", 0x999, 0, 0, 0)) + bytes(8), 16, slot=2, ring=False)
    d.post(bytes(struct.pack(">HHHH", OP["QUERY_ADAPTER"], 0, 0, 0)) + bytes(8), 0x110,
           slot=31, ring=False)
    d.iseg_write(0x18, (1 << 1) | (1 << 2) | (1 << 31))
    r1, r2, r3 = d.collect(1, 0x70), d.collect(2, 16), d.collect(31, 0x110)
    t.eq([d.owned(1), d.owned(2), d.owned(31)], [0, 0, 0], "doorbell 0x80000006 completes entries 1, 2, 31")
    t.eq((r1.status, r1.u32(0x6c)), (0, 3), "entry 1: QUERY_ISSI supported_issi 0b11")
    t.eq((r2.status, r2.syndrome), (2, synd(0x999, 0xff01)), "entry 2: unknown opcode BAD_OP, syndrome 0x0999ff01")
    t.eq((r3.status, r3.u32(0x10 + 0x1c) & 0xffff), (0, 0x1af4), "entry 31: QUERY_ADAPTER vsd_vendor_id 0x1af4")


def delivery_errors(d):
    q = OP["QUERY_HCA_CAP"]
    base = bytearray(16)
    put(base, H["VCX_CMD_IN_OPCODE"], q)
    put(base, H["VCX_CMD_IN_OP_MOD"], 1)

    def run(desc, want, out_len=0x1010, inbuf=base, hook=None, token=None):
        r = d.exec_raw(inbuf, out_len, entry_hook=hook, token=token)
        t.eq(r.deliv, want, desc)
        return r

    def set_type(e, i, o):
        e[0] = 0x5
    run("entry type 5: delivery status 0x10 (bad descriptor)", 0x10, hook=set_type)

    def in_len(n):
        return lambda e, i, o: put(e, H["VCX_CMDQ_ENT_IN_LEN"], n)
    run("input length 4: delivery status 7", 7, hook=in_len(4))
    run("input length 3 MiB: delivery status 7", 7, hook=in_len(3 << 20))

    def out_len(n):
        return lambda e, i, o: put(e, H["VCX_CMDQ_ENT_OUT_LEN"], n)
    run("output length 0: delivery status 8", 8, hook=out_len(0))
    run("output length 0xffffffff: delivery status 8", 8, hook=out_len(0xffffffff))

    def out_ptr(v):
        return lambda e, i, o: put(e, H["VCX_CMDQ_ENT_OUT_PTR"], v)
    run("output mailbox pointer 0x100 (not 512-aligned): delivery status 4", 4,
        hook=out_ptr(MBOX + 0x100))
    run("output mailbox pointer 0 with 0x1010-byte output: delivery status 4", 4,
        hook=out_ptr(0))
    run("output mailbox pointer beyond RAM: delivery status 4", 4,
        hook=out_ptr(0x4000_0000_0000))

    # input chain faults use SET_HCA_CAP (9 input blocks) built from the current caps
    cur = query_cap_cur(d).out
    sbuf = bytearray(0x1010)
    put(sbuf, H["VCX_CMD_IN_OPCODE"], OP["SET_HCA_CAP"])
    sbuf[0x10:] = cur[0x10:0x1010]

    def in_ptr(v):
        return lambda e, i, o: put(e, H["VCX_CMDQ_ENT_IN_PTR"], v)
    run("input mailbox pointer misaligned: delivery status 5", 5, out_len=16, inbuf=sbuf,
        hook=in_ptr(MBOX + 8))
    run("input mailbox pointer beyond RAM: delivery status 5", 5, out_len=16, inbuf=sbuf,
        hook=in_ptr(0x4000_0000_0000))

    def patch_block(k, off, data):
        def hook(e, i, o):
            d.qt.memwrite(i + k * 1024 + off, data)
        return hook
    run("input block 3 numbered 7: delivery status 3 (bad block number)", 3, out_len=16,
        inbuf=sbuf, hook=patch_block(3, 0x238, struct.pack(">I", 7)))
    run("input block 2 token wrong: delivery status 2 (token)", 2, out_len=16, inbuf=sbuf,
        hook=patch_block(2, 0x23d, b"\xee"))
    run("input chain loops back to block 0: delivery status 3", 3, out_len=16, inbuf=sbuf,
        hook=patch_block(4, 0x230, struct.pack(">Q", MBOX)))
    run("input chain next pointer not 1 KiB aligned: delivery status 5", 5, out_len=16,
        inbuf=sbuf, hook=patch_block(1, 0x230, struct.pack(">Q", MBOX + 0x1200)))
    run("input chain ends early (next 0): delivery status 5", 5, out_len=16, inbuf=sbuf,
        hook=patch_block(5, 0x230, struct.pack(">Q", 0)))

    def patch_out(k, off, data):
        def hook(e, i, o):
            d.qt.memwrite(o + k * 1024 + off, data)
        return hook
    run("output block 5 token wrong: delivery status 2", 2, hook=patch_out(5, 0x23d, b"\x01"))
    run("output block 1 numbered 0: delivery status 3", 3,
        hook=patch_out(1, 0x238, struct.pack(">I", 0)))
    # a delivery failure executes nothing
    st = d.state()
    t.eq(st["hca"], "enabled", "failed deliveries executed nothing (HCA still enabled)")


def generic_statuses(d):
    r = d.exec(0x0)
    t.eq((r.status, r.syndrome), (2, synd(0, 0xff01)), "opcode 0: BAD_OP syndrome 0x0000ff01")
    r = d.exec(0x7ff, out_len=0x40)
    t.eq((r.status, r.syndrome, r.out[8:]), (2, synd(0x7ff, 0xff01), bytes(0x38)),
         "opcode 0x7ff: BAD_OP, rest of output zero")
    r = d.exec(OP["QUERY_HCA_CAP"], 1, out_len=0x100)
    t.eq((r.status, r.syndrome), (0x51, synd(0x100, 0xff03)), "QUERY_HCA_CAP output 0x100: BAD_OUTPUT_LEN")
    r = d.exec(OP["SET_HCA_CAP"], 0, in_len=0x100)
    t.eq((r.status, r.syndrome), (0x50, synd(0x109, 0xff02)), "SET_HCA_CAP input 0x100: BAD_INPUT_LEN")
    r = d.exec(OP["QUERY_ADAPTER"], 1, out_len=0x110)
    t.eq((r.status, r.syndrome), (3, synd(0x101, 0xff09)), "QUERY_ADAPTER op_mod 1: BAD_PARAM")
    r = d.exec(OP["QUERY_ISSI"], out_len=0x70, fields=[(H["VCX_CMD_IN_UID"], 5)])
    t.eq((r.status, r.syndrome), (3, synd(0x10a, 0xff08)), "QUERY_ISSI uid 5: BAD_PARAM")
    t.ok("BAD_OP (0x2), syndrome 0x07ffff01" in d.qt.log(), "BAD_OP logged as a guest error")


def ownership_and_doorbell(d):
    # entry not owned by the device: doorbell ignored, entry untouched
    ent = bytearray(64)
    ent[0] = 7
    put(ent, H["VCX_CMDQ_ENT_IN_LEN"], 16)
    put(ent, H["VCX_CMDQ_ENT_OUT_LEN"], 16)
    put(ent, H["VCX_CMD_IN_OPCODE"], OP["QUERY_ISSI"], 0x10)
    d.qt.memwrite(d.entry_addr(4), ent)
    n = d.state()["cmds"]
    d.iseg_write(0x18, 1 << 4)
    t.eq((d.qt.memread(d.entry_addr(4), 64), d.state()["cmds"]), (bytes(ent), n),
         "doorbell on an entry with ownership 0: not executed, entry untouched")


def signatures(d):
    cur = bytearray(query_cap_cur(d).out)
    put(cur, H["VCX_CAP_GEN_CMDIF_CHECKSUM"], 3, 0x10)
    sbuf = bytearray(0x1010)
    put(sbuf, H["VCX_CMD_IN_OPCODE"], OP["SET_HCA_CAP"])
    sbuf[0x10:] = cur[0x10:0x1010]
    r = d.exec_raw(sbuf, 16)
    t.eq((r.deliv, r.status), (0, 0), "SET_HCA_CAP cmdif_checksum = 3: OK")
    r = d.exec(OP["QUERY_HCA_CAP"], 1, out_len=0x1010, csum=True)
    t.eq((r.deliv, r.status, get(r.out, H["VCX_CAP_GEN_CMDIF_CHECKSUM"], 0x10)), (0, 0, 3),
         "signed command accepted, CUR cmdif_checksum reads 3")
    t.eq(xor8(r.entry), 0xff, "completed entry carries a valid signature")
    addr = get(r.entry, H["VCX_CMDQ_ENT_OUT_PTR"])
    good = True
    for _ in range(8):
        blk = d.qt.memread(addr, 0x240)
        good &= xor8(blk) == 0xff and xor8(blk[0x200:0x23f]) == 0xff
        addr = get(blk, H["VCX_MBOX_NEXT_PTR"])
    t.ok(good, "output mailboxes carry valid block and control signatures")
    r = d.exec(OP["QUERY_ISSI"], out_len=0x70)
    t.eq(r.deliv, 1, "unsigned entry with checksums on: delivery status 1")

    def bad_block(e, i, o):
        d.qt.memwrite(i + 2 * 1024 + 0x100, b"\x55")
    sbuf2 = bytearray(sbuf)
    put(sbuf2, H["VCX_CAP_GEN_CMDIF_CHECKSUM"], 3, 0x10)
    r = d.exec_raw(sbuf2, 16, csum=True, entry_hook=bad_block)
    t.eq(r.deliv, 1, "input block 2 altered after signing: delivery status 1")
    # switch checksums off again (signed)
    put(sbuf2, H["VCX_CAP_GEN_CMDIF_CHECKSUM"], 0, 0x10)
    r = d.exec_raw(sbuf2, 16, csum=True)
    t.eq((r.deliv, r.status), (0, 0), "SET_HCA_CAP cmdif_checksum = 0 (signed): OK")
    r = d.exec(OP["QUERY_ISSI"], out_len=0x70)
    t.eq((r.deliv, r.status), (0, 0), "unsigned entries accepted again")


def initializing():
    d = Vcx(setup=False, device_args="init-delay-ms=100")
    # set up by hand: no clock step, so the initializing bit is still set
    d.cfg_write(0x10, 0xE0000000)
    d.cfg_write(0x14, 0)
    d.cfg_write(0x04, 0x6)
    d.cmdq_setup()
    t.eq(d.iseg_read(0x1fc) >> 31, 1, "initializing bit set right after reset")
    d.post(bytes(struct.pack(">HHHH", OP["ENABLE_HCA"], 0, 0, 0)) + bytes(8), 16)
    t.eq(d.owned(0), 1, "command rung while initializing is not answered")
    d.qt.clock_step(200 * 1000 * 1000)
    t.eq(d.iseg_read(0x1fc) >> 31, 0, "initializing bit clears after init-delay-ms")
    d.iseg_write(0x18, 1)
    t.eq(d.owned(0), 0, "same entry rung again after init completes")
    d.qt.close()


def stalled_commands():
    """Fault injection: cmd-stall leaves the next N rung commands unanswered, as hung
    firmware would; other commands go on; cmd-exec-to-ms is advertised at 0xff8."""
    d = Vcx(device_args="cmd-exec-to-ms=2000")
    t.eq(d.iseg_read(0xff8), 2000, "init segment 0xff8 advertises cmd-exec-to-ms")
    t.eq(d.iseg_read(0xffc), 0, "0xffc stays 0 (no DTOR register to read)")
    r = d.qt.qom_set(DEV_PATH, "cmd-stall", 1)
    t.ok("return" in r, "qom-set cmd-stall 1")
    d.post(struct.pack(">HHHH", OP["QUERY_ISSI"], 0, 0, 0) + bytes(8), 0x70, slot=1)
    t.eq((d.owned(1), d.qt.qom_get(DEV_PATH, "cmd-stall")), (1, 0),
         "stalled command keeps its entry device-owned; the stall count is used up")
    r = d.exec(OP["ENABLE_HCA"], slot=2)
    t.eq((r.deliv, r.status, d.owned(1)), (0, 0, 1),
         "the next command on another entry is answered; the stalled one is not")
    d.qt.qom_set(DEV_PATH, "cmd-stall", 3)
    d.qt.qmp("system_reset")
    t.eq(d.qt.qom_get(DEV_PATH, "cmd-stall"), 0, "system reset clears cmd-stall")
    d.qt.close()


def main():
    d = Vcx()
    for name, fn in [("transport", transport_happy), ("outstanding", several_outstanding),
                     ("delivery", delivery_errors), ("generic", generic_statuses),
                     ("ownership", ownership_and_doorbell), ("signatures", signatures)]:
        run_isolated(t, name, lambda fn=fn: fn(d))
    t.ok(d.qt.alive(), "QEMU still running")
    d.qt.close()
    run_isolated(t, "initializing", initializing)
    run_isolated(t, "stall", stalled_commands)
    t.done()


if __name__ == "__main__":
    main()
