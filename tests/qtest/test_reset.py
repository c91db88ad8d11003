#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Reset and health: function level reset and system reset drop every object, UAR, EQ and
page; a fatal health syndrome set from QMP shows in the health buffer and stops command
processing; the monitor's state property reflects all of it."""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import H, Tap, Vcx, DEV_PATH, BAR0, run_isolated  # noqa: E402

OP = {k[len("VCX_CMD_OP_"):]: v for k, v in H.items() if k.startswith("VCX_CMD_OP_")}
t = Tap()


def populate(d):
    d.bring_up()
    uar = d.alloc_uar()
    d.create_eq(uar, 1 << 0xa, log_size=2)
    d.alloc_uar()
    st = d.state()
    t.eq((st["hca"], st["issi"], st["pages"], st["uars"], st["eqs"]),
         ("initialized", "1", "80", "2", "1"), "populated: initialized, ISSI 1, 80 pages, 2 UARs, 1 EQ")


def is_power_on(st):
    return (st["hca"], st["issi"], st["pages"], st["uars"], st["eqs"], st["health"]) == \
        ("disabled", "0", "0", "0", "0", "0x00")


def flr(d):
    populate(d)
    cap = d.find_cap(0x10)
    t.eq(cap, 0x60, "PCIe capability at 0x60")
    devcap = d.cfg_read(cap + 4)
    t.ok(devcap & (1 << 28), "DevCap advertises function level reset")
    d.cfg_write(cap + 8, d.cfg_read(cap + 8) | (1 << 15))
    st = d.state()
    t.ok(is_power_on(st), "after FLR: disabled, ISSI 0, no pages, UARs or EQs", st)
    t.eq(d.cfg_read(0x04) & 0x6, 0, "after FLR: memory and bus master disabled")
    d.pci_setup()
    t.eq(d.iseg_read(0x14) & ~0xfff, 0, "after FLR: command queue address cleared")
    d.cmdq_setup()
    r = d.exec(OP["QUERY_ISSI"], out_len=0x70)
    t.eq((r.status, r.syndrome), (4, 0x010aff04), "after FLR: commands see a disabled HCA")
    d.bring_up()
    t.eq(d.state()["hca"], "initialized", "driver can bring the function up again after FLR")


def system_reset(d):
    d.alloc_uar()
    r = d.qt.qmp("system_reset")
    t.ok("return" in r, "QMP system_reset accepted")
    st = d.state()
    for _ in range(50):
        if is_power_on(st):
            break
        time.sleep(0.05)
        st = d.state()
    t.ok(is_power_on(st), "after system reset: power-on state", st)
    d.pci_setup()
    d.cmdq_setup()
    d.bring_up()
    t.eq(d.state()["hca"], "initialized", "driver can bring the function up again after reset")


def health(d):
    hb = H["VCX_ISEG_HEALTH"]
    c0 = d.iseg_read(0x1010) & 0xffffff
    d.qt.clock_step(300 * 1000 * 1000)
    c1 = d.iseg_read(0x1010) & 0xffffff
    t.eq(c1 - c0, 3, "healthy: health counter advances 3 in 300 ms")
    t.eq((d.iseg_read(hb + 0x3c), d.iseg_read(0x1010) >> 24), (0, 0), "healthy: syndrome 0")
    t.eq(d.iseg_read(hb + 0x38), 0, "healthy: no rfr, no severity")
    r = d.qt.qom_set(DEV_PATH, "health-syndrome", 7)
    t.ok("return" in r, "qom-set health-syndrome 7")
    t.eq(d.qt.qom_get(DEV_PATH, "health-syndrome"), 7, "qom-get health-syndrome: 7")
    t.eq(d.iseg_read(hb + 0x3c), 0x00070000, "health buffer irisc/synd dword: synd 7")
    # mlx5_core reads the syndrome byte alone (ioread8 of health->synd)
    t.eq(d.qt.readb(BAR0 + hb + 0x3d), 7, "health buffer synd byte (1-byte read at 0x23d): 7")
    t.eq(d.qt.readw(BAR0 + hb + 0x3e), 0, "health buffer ext_synd (2-byte read at 0x23e): 0")
    t.eq(d.iseg_read(hb + 0x38), 0x8a000000,
         "health buffer: rfr (reset for recovery), valid, severity 2 (critical)")
    t.eq(d.iseg_read(0x1010) >> 24, 7, "health counter register carries syndrome 7")
    c2 = d.iseg_read(0x1010) & 0xffffff
    d.qt.clock_step(300 * 1000 * 1000)
    t.eq(d.iseg_read(0x1010) & 0xffffff, c2, "dead firmware: health counter stops")
    t.eq(d.state()["health"], "0x07", "state property: health=0x07")
    r = d.qt.qmp("human-monitor-command",
                 **{"command-line": "qom-get %s state" % DEV_PATH})
    t.ok("hca=initialized health=0x07" in r.get("return", ""),
         "HMP qom-get of the state property works", r)
    r = d.qt.qmp("human-monitor-command", **{"command-line": "info vcx"})
    t.ok(r.get("return", "").startswith(DEV_PATH + ": issi=1 hca=initialized health=0x07"),
         "HMP info vcx prints the device's state line", r)
    d.post(struct.pack(">HHHH", OP["QUERY_ISSI"], 0, 0, 0) + bytes(8), 0x70)
    t.eq(d.owned(0), 1, "fatal syndrome: a rung command is never answered")
    d.qt.qmp("system_reset")
    for _ in range(50):
        if d.state()["health"] == "0x00":
            break
        time.sleep(0.05)
    t.eq(d.state()["health"], "0x00", "system reset clears the syndrome")
    d.pci_setup()
    d.cmdq_setup()
    r = d.exec(OP["ENABLE_HCA"])
    t.eq((r.deliv, r.status), (0, 0), "commands answered again after reset")


def main():
    d = Vcx()
    for name, fn in [("flr", flr), ("system_reset", system_reset), ("health", health)]:
        run_isolated(t, name, lambda fn=fn: fn(d))
    t.ok(d.qt.alive(), "QEMU still running")
    d.qt.close()
    t.done()


if __name__ == "__main__":
    main()
