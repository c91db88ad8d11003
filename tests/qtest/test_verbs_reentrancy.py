#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The device's own DMA and MSI-X writes cannot re-enter it. The transport executor runs
in a bottom half guarded by the device's MemReentrancyGuard, so its DMA into BAR0 (the
command doorbell) is refused: a receive WQE whose scatter entry is a PA key aimed at the
command doorbell, delivered from the RNR timer path, does not run the DESTROY_QP (of the
requester) or force-close TEARDOWN_HCA waiting in a command entry; the receive completes
with a local protection error and the requester with a remote operational error. MSI-X
messages aimed at the doorbell are blocked the same way, from the executor (a completion
event) and from monitor work (qp-error's WQ catastrophic event). Config space through
ECAM belongs to the host bridge: a receive scatter entry aimed at the FLR bit of the
device's own PCIe DEVCTL (q35 MMCONFIG) and MSI-X messages aimed there (executor,
monitor) are refused as config writes, logged, and the device is not reset; the same FLR
written by the CPU still resets it. Behind a root port, a DMA that sets the port's
secondary bus reset reaches the device while it works: that reset is deferred until the
executor's run returned, then the device is reset, and QEMU survives."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, H, BAR0, DEV_PATH, MSI_BASE, put  # noqa: E402
from vcx_verbs import P, OP, Verbs, dseg, inline, rc_pair, run_isolated  # noqa: E402
from vcx_verbs import cqe_tuple as f  # noqa: E402

t = Tap()
SEND = 0x0a
REQ_ERR, RESP_ERR = 0xd, 0xe
CMD_DBELL = BAR0 + H["VCX_ISEG_CMD_DBELL"]
SLOT = 5                        # the command entry the stray write would ring
DEVCTL = 0x60 + 8               # PCIe capability at 0x60 (device-interface.md)
FLR = 0x8000


def bswap32(v):
    return struct.unpack("<I", struct.pack(">I", v))[0]


def pa_key(v, pd):
    """A PA key over all of guest-physical space (length64), every right."""
    return v.create_mkey(pd, 0, 0, mode=0, length64=True)


def setup(v):
    pd = v.alloc_pd()
    buf = v.alloc(0x4000)
    key = v.create_mkey(pd, buf, 0x4000)
    cq = v.create_cq(log_size=8)
    return pd, buf, key, pa_key(v, pd), cq


def arm_command(v, opcode, fields=(), out_len=16, in_len=16):
    """Prepare command entry SLOT (owned by the device) without ringing it."""
    inbuf = bytearray(in_len)
    struct.pack_into(">HH", inbuf, 0, opcode, 0)
    for fld, val in fields:
        put(inbuf, fld, val)
    v.d.post(inbuf, out_len, slot=SLOT, ring=False)


def counts(v):
    s = v.d.state()
    return s["hca"], int(s["qps"]), int(s["cqs"]), int(s["mkeys"])


def msix_vector(v, vec, addr, data):
    e = BAR0 + H["VCX_MSIX_TABLE_OFFSET"] + 16 * vec
    v.qt.writel(e + 0, addr & 0xffffffff)
    v.qt.writel(e + 4, addr >> 32)
    v.qt.writel(e + 8, data)


def msix_restore(v, vec):
    msix_vector(v, vec, MSI_BASE + 4 * vec, 0x1000 + vec)


def rnr_then_scatter(v, a, b, cq, src, key, target, pa, n=4):
    """A sends n bytes with no receive at B (RNR NAK, SQ stalled); then B posts a receive
    whose one scatter entry is the PA key at target; the RNR timer (10 us) retries."""
    a.post_send(SEND, dseg(src, n, key))
    ok = cq.poll_all() == []
    b.post_recv([(target, n, pa)])
    v.qt.clock_step(15_000)
    return ok, sorted(f(e, "qpn", "opcode", "syndrome") for e in cq.poll_all())


def case_rnr_dma_cmd_doorbell(v, what, opcode, fields, victim):
    pd, buf, key, pa, cq = setup(v)
    a, b = rc_pair(v, pd, cq)          # min_rnr_nak 1: the RNR timer is 10 us
    arm_command(v, OP[opcode], fields(a, b))
    v.qt.memwrite(buf, struct.pack(">I", 1 << SLOT))      # what the doorbell would get
    before = counts(v)
    rnr, got = rnr_then_scatter(v, a, b, cq, buf, key, CMD_DBELL, pa)
    t.ok(rnr, "%s: SEND without a receive: RNR NAK, nothing completes" % what)
    t.eq(got, sorted([(b.qpn, RESP_ERR, 0x04), (a.qpn, REQ_ERR, 0x14)]),
         "%s: retried from the RNR timer, the scatter into BAR0 is refused: receive "
         "local protection error (0x04), requester remote operational error (0x14)" % what)
    t.eq(v.d.owned(SLOT), 1, "%s: the command entry was never executed (still owned by "
         "the device)" % what)
    t.eq(counts(v), before, "%s: no object was destroyed, the HCA is still initialized"
         % what)
    t.eq((v.qp_state(a), v.qp_state(b)), (6, 6), "%s: %s and its peer exist, in ERR"
         % (what, victim))
    t.ok("DMA write of 4 bytes at 0x%x failed" % CMD_DBELL in v.qt.log(),
         "%s: the refused DMA is logged as a guest error" % what)


def case_destroy_requester(v):
    case_rnr_dma_cmd_doorbell(
        v, "DESTROY_QP of the requester", "DESTROY_QP",
        lambda a, b: [(P["VCX_OBJ_NUMBER"], a.qpn)], "the requester")


def case_teardown(v):
    case_rnr_dma_cmd_doorbell(
        v, "TEARDOWN_HCA force close", "TEARDOWN_HCA",
        lambda a, b: [(H["VCX_TEARDOWN_HCA_IN_PROFILE"], 1)], "the requester")


def case_msix_cmd_doorbell(v):
    pd, buf, key, pa, cq = setup(v)
    a, b = rc_pair(v, pd, cq)
    arm_command(v, OP["DESTROY_QP"], [(P["VCX_OBJ_NUMBER"], b.qpn)])
    before = counts(v)
    # MSI-X messages are 4-byte little-endian writes; the init segment is big-endian.
    msix_vector(v, 2, CMD_DBELL, bswap32(1 << SLOT))      # completion EQ's vector
    msix_vector(v, 1, CMD_DBELL, bswap32(1 << SLOT))      # async EQ's vector
    v.events(comp=True)
    cq.arm()
    b.post_recv([(buf + 0x100, 16, key)])
    a.post_send(SEND, inline(b"event"))
    got = sorted(f(e, "qpn", "opcode") for e in cq.poll_all())
    t.eq(got, sorted([(a.qpn, 0), (b.qpn, 2)]), "MSI-X: the SEND completes on both sides")
    t.eq([ty for ty, _ in v.events(comp=True)], [0x00],
         "the completion event was posted (its MSI-X message aimed at the doorbell)")
    t.eq(v.d.owned(SLOT), 1, "MSI-X from the executor: the command was not rung")
    r = v.qt.qom_set(DEV_PATH, "qp-error", b.qpn)
    t.ok("error" not in r, "qp-error: WQ catastrophic event with its MSI-X message at the "
         "doorbell, from monitor work")
    t.eq(v.d.owned(SLOT), 1, "MSI-X from monitor work: the command was not rung")
    t.eq(counts(v), before, "no object was destroyed")
    t.eq(v.qp_state(b), 6, "the faulted QP exists, in ERR")
    msix_restore(v, 1)
    msix_restore(v, 2)
    v.events()


def flr_payload(v):
    devctl = v.qt.readl(v.d.ecam(DEVCTL)) & 0xffff
    return devctl, struct.pack("<HH", devctl | FLR, 0)


def case_ecam_flr_dma(v):
    pd, buf, key, pa, cq = setup(v)
    a, b = rc_pair(v, pd, cq)
    ecam = v.d.mmconfig_enable()
    ids = v.qt.readl(v.d.ecam(0))
    t.eq(ids, v.d.cfg_read(0), "ECAM at 0x%x shows the device's config space" % ecam)
    devctl, payload = flr_payload(v)
    v.qt.memwrite(buf, payload)
    before = counts(v)
    log0 = len(v.qt.log())
    rnr, got = rnr_then_scatter(v, a, b, cq, buf, key, v.d.ecam(DEVCTL), pa)
    t.ok(rnr, "ECAM: SEND without a receive: RNR NAK")
    t.eq(got, sorted([(a.qpn, 0, 0), (b.qpn, 2, 0)]),
         "ECAM: the DMA into DEVCTL completes as a memory write (RESP_SEND, REQ)")
    t.eq(counts(v), before, "ECAM: FLR written by the device's own DMA: no reset, every "
         "object alive")
    t.eq(v.qt.readl(v.d.ecam(DEVCTL)) & 0xffff, devctl, "DEVCTL unchanged")
    log = v.qt.log()[log0:]
    t.ok("config write at 0x%x (4 bytes, 0x%x)" % (DEVCTL, devctl | FLR) in log and
         "refused" in log and "vcx_err_config_self" in log,
         "the refused config write is logged (guest error) and traced")
    t.eq(v.qp_state(a), 3, "the requester is still in RTS")


def case_ecam_flr_msix(v):
    pd, buf, key, pa, cq = setup(v)
    a, b = rc_pair(v, pd, cq)
    v.d.mmconfig_enable()
    devctl, _ = flr_payload(v)
    before = counts(v)
    msix_vector(v, 2, v.d.ecam(DEVCTL), devctl | FLR)
    msix_vector(v, 1, v.d.ecam(DEVCTL), devctl | FLR)
    v.events(comp=True)
    cq.arm()
    b.post_recv([(buf + 0x100, 16, key)])
    a.post_send(SEND, inline(b"flr"))
    t.eq(sorted(f(e, "qpn", "opcode") for e in cq.poll_all()), sorted([(a.qpn, 0),
                                                                      (b.qpn, 2)]),
         "MSI-X at DEVCTL: the SEND completes")
    t.eq([ty for ty, _ in v.events(comp=True)], [0x00], "its completion event was posted")
    t.eq(counts(v), before, "MSI-X at the FLR bit from the executor: no reset")
    v.qt.qom_set(DEV_PATH, "qp-error", b.qpn)
    t.eq(counts(v), before, "MSI-X at the FLR bit from monitor work (qp-error): no reset")
    t.eq(v.qt.readl(v.d.ecam(DEVCTL)) & 0xffff, devctl, "DEVCTL unchanged")
    msix_restore(v, 1)
    msix_restore(v, 2)
    v.events()
    v.qt.writel(v.d.ecam(DEVCTL), devctl | FLR)
    v.qt.clock_step(50_000_000)
    t.eq(counts(v), ("disabled", 0, 0, 0),
         "control: the same FLR written by the CPU through ECAM resets the device")


def secondary_bus_reset():
    """vcx behind a root port; a DMA of the device sets the port's secondary bus reset."""
    rp = 4 << 3

    def bridge(d):
        d.cfg_write_at(0, rp, 0x18, 0x010100)            # buses: primary 0, secondary 1
        d.cfg_write_at(0, rp, 0x20, 0xfff0)              # no non-prefetchable window
        d.cfg_write_at(0, rp, 0x24, 0xe1f1e001)          # prefetchable 0xe0000000..0xe1ffffff
        d.cfg_write_at(0, rp, 0x28, 0)
        d.cfg_write_at(0, rp, 0x2c, 0)
        d.cfg_write_at(0, rp, 0x04, 0x6)                 # memory space + bus master

    v = Verbs(bus=1, devfn=0, pre_setup=bridge,
              devices=["-device", "pcie-root-port,id=rp0,bus=pcie.0,addr=04.0,chassis=1",
                       "-device", "vcx,id=vcx0,bus=rp0,addr=00.0"])
    try:
        pd, buf, key, pa, cq = setup(v)
        a, b = rc_pair(v, pd, cq)
        v.d.mmconfig_enable()
        bctl = v.qt.readl(v.d.ecam(0x3c, bus=0, devfn=rp))
        t.eq(v.qt.readl(v.d.ecam(0)), v.d.cfg_read(0), "behind a root port: ECAM shows the "
             "device on bus 1")
        v.qt.memwrite(buf, struct.pack("<I", bctl | 0x40 << 16))    # bridge control SBR
        rnr, _ = rnr_then_scatter(v, a, b, cq, buf, key, v.d.ecam(0x3c, bus=0, devfn=rp),
                                  pa)
        t.ok(rnr, "SEND without a receive: RNR NAK")
        v.qt.clock_step(50_000_000)
        t.ok(v.qt.alive(), "the executor's DMA reset the bus under the device: QEMU alive")
        log = v.qt.log()
        t.ok("reset while the device executes" in log and "deferred" in log,
             "the reset arriving during the executor's run is deferred (guest error log)")
        t.eq(counts(v), ("disabled", 0, 0, 0), "then the device is reset: HCA disabled, no "
             "objects")
    finally:
        v.close()


def main():
    v = Verbs(trace="vcx_err_config_self")
    try:
        for name, fn in (("DESTROY_QP through the doorbell", case_destroy_requester),
                         ("TEARDOWN_HCA through the doorbell", case_teardown),
                         ("MSI-X at the doorbell", case_msix_cmd_doorbell),
                         ("FLR by DMA through ECAM", case_ecam_flr_dma),
                         ("FLR by MSI-X through ECAM", case_ecam_flr_msix)):
            run_isolated(t, name, lambda fn=fn: fn(v))
        t.ok(v.qt.alive(), "QEMU alive")
    finally:
        v.close()
    run_isolated(t, "secondary bus reset", secondary_bus_reset)
    t.done()


if __name__ == "__main__":
    main()
