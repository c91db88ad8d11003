#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Bounded random run: 2000 iterations (fixed seed, VCX_FUZZ_SEED / VCX_FUZZ_ITERS override)
of random command entries, random mailbox chains, random command bodies for the known
opcodes and random doorbell / UAR writes. Afterwards QEMU must be alive, the state
property must answer, and after FLR the device must work normally."""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import H, Tap, Vcx, BAR0, MBOX, MBOX_SLOT, put, run_isolated  # noqa: E402

OP = {k[len("VCX_CMD_OP_"):]: v for k, v in H.items() if k.startswith("VCX_CMD_OP_")}
KNOWN = [OP[n] for n in ("QUERY_HCA_CAP", "QUERY_ADAPTER", "INIT_HCA", "TEARDOWN_HCA",
                         "ENABLE_HCA", "DISABLE_HCA", "QUERY_PAGES", "MANAGE_PAGES",
                         "SET_HCA_CAP", "QUERY_ISSI", "SET_ISSI", "CREATE_EQ", "DESTROY_EQ",
                         "QUERY_EQ", "QUERY_VPORT_STATE", "QUERY_NIC_VPORT_CONTEXT",
                         "MODIFY_NIC_VPORT_CONTEXT", "ALLOC_UAR", "DEALLOC_UAR", "ACCESS_REG")]
LENGTHS = [8, 16, 0x20, 0x40, 0x70, 0x110, 0x118, 0x200, 0x1010]
t = Tap()


def rand_entry(rng, d, slot):
    """Random entry: fully random, or well-formed transport around a random body."""
    ent = bytearray(rng.randbytes(64))
    if rng.random() < 0.7:
        ent[0] = 7
        ent[0x3f] |= 1
        in_len = rng.choice([rng.randrange(0, 64), rng.randrange(0, 0x1200),
                             rng.getrandbits(32)])
        out_len = rng.choice([rng.randrange(0, 64), rng.randrange(0, 0x1200),
                              rng.getrandbits(32)])
        put(ent, H["VCX_CMDQ_ENT_IN_LEN"], in_len)
        put(ent, H["VCX_CMDQ_ENT_OUT_LEN"], out_len)
        base = MBOX + slot * MBOX_SLOT
        if rng.random() < 0.8:
            put(ent, H["VCX_CMDQ_ENT_IN_PTR"], base)
            put(ent, H["VCX_CMDQ_ENT_OUT_PTR"], base + 0x10000)
        if rng.random() < 0.8:
            body = bytearray(16)
            put(body, H["VCX_CMD_IN_OPCODE"], rng.choice(KNOWN))
            put(body, H["VCX_CMD_IN_OP_MOD"], rng.choice([0, 1, 2, 3, 8, 9,
                                                         rng.getrandbits(16)]))
            if rng.random() < 0.7:
                body[2:4] = b"\0\0"     # uid 0, so the handlers are reached
            body[8:16] = rng.randbytes(8)
            ent[0x10:0x20] = body
    return ent


def rand_chain(rng, d, slot, token):
    """Random mailbox chain at the slot's in and out addresses: mostly well linked."""
    for which, start in ((0, MBOX + slot * MBOX_SLOT), (1, MBOX + slot * MBOX_SLOT + 0x10000)):
        n = rng.randrange(0, 10)
        for i in range(n):
            blk = bytearray(rng.randbytes(0x240))
            if rng.random() < 0.85:
                nxt = start + (i + 1) * 1024 if i + 1 < n else 0
                if rng.random() < 0.05:
                    nxt = start                 # loop
                put(blk, H["VCX_MBOX_NEXT_PTR"], nxt)
                put(blk, H["VCX_MBOX_BLOCK_NUM"], i if rng.random() < 0.95 else rng.getrandbits(32))
                put(blk, H["VCX_MBOX_TOKEN"], token if rng.random() < 0.95 else rng.getrandbits(8))
            d.qt.memwrite(start + i * 1024, blk)


def fuzz(d, iters, seed):
    rng = random.Random(seed)
    for it in range(iters):
        r = rng.random()
        if r < 0.02:
            d.bring_up() if d.state()["hca"] == "disabled" else None
            continue
        if r < 0.07:
            # random MMIO into the init segment or a UAR page
            off = rng.choice([0x18, 0x10, 0x14, 0x1fc, rng.randrange(0, 0x1000) & ~3,
                              4 * 4096 + rng.choice([0x20, 0x40, 0x48, 0x800]),
                              rng.randrange(4, 64) * 4096 + 0x40])
            if off in (0x10, 0x14):
                continue                        # keep the queue where the test can see it
            d.qt.writel(BAR0 + off, rng.getrandbits(32))
            continue
        nslots = rng.choice([1, 1, 1, 2, 3])
        mask = 0
        for _ in range(nslots):
            slot = rng.randrange(0, 32)
            if rng.random() < 0.5:
                # valid transport, random command body for a known opcode
                inbuf = bytearray(rng.randbytes(rng.choice(LENGTHS + [rng.randrange(8, 0x1400)])))
                put(inbuf, H["VCX_CMD_IN_OPCODE"], rng.choice(KNOWN))
                put(inbuf, H["VCX_CMD_IN_OP_MOD"], rng.choice([0, 1, 2, 3, 8, 9,
                                                               rng.getrandbits(16)]))
                if rng.random() < 0.8:
                    inbuf[2:4] = b"\0\0"
                d.post(inbuf, rng.choice(LENGTHS + [rng.randrange(8, 0x1400)]), slot=slot,
                       ring=False)
            else:
                ent = rand_entry(rng, d, slot)
                rand_chain(rng, d, slot, ent[0x3c])
                d.qt.memwrite(d.entry_addr(slot), ent)
            mask |= 1 << slot
        d.iseg_write(0x18, mask)
        if it % 250 == 0:
            d.state()
    return rng


def main():
    iters = int(os.environ.get("VCX_FUZZ_ITERS", "2000"))
    seed = int(os.environ.get("VCX_FUZZ_SEED", "20261129"))
    d = Vcx()
    run_isolated(t, "fuzz", lambda: fuzz(d, iters, seed))
    t.ok(d.qt.alive(), "QEMU alive after %d random iterations (seed %d)" % (iters, seed))
    t.ok(int(d.state()["cmds"]) > iters // 4,
         "a large share of the random entries reached the dispatcher")
    st = {}
    try:
        st = d.state()
    except Exception as e:  # noqa: BLE001
        st = {"error": str(e)}
    t.ok("hca" in st and "pages" in st, "state property still answers", st)
    # function level reset brings it back to a clean, working device
    cap = d.find_cap(0x10)
    d.cfg_write(cap + 8, d.cfg_read(cap + 8) | (1 << 15))
    d.pci_setup()
    d.cmdq_setup()
    st = d.state()
    t.eq((st["hca"], st["pages"], st["uars"], st["eqs"]), ("disabled", "0", "0", "0"),
         "after FLR the fuzzed state is gone")
    ok = True
    try:
        d.bring_up()
    except Exception:  # noqa: BLE001
        ok = False
    t.ok(ok and d.state()["hca"] == "initialized", "normal bring-up works after the run")
    d.qt.close()
    t.done()


if __name__ == "__main__":
    main()
