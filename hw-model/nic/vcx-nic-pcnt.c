/*
 * vcx: the physical port's counters and the PPCNT register (PRM "Port Performance
 * Counters Register"), what mlx5e reads for its *_phy statistics.
 *
 * They count frames at the MAC, both directions on the port's netdev, before the vport
 * filter and steering: frames sent onto the netdev (NIC SQs and the RoCE engine), frames
 * the netdev delivered (vcx_nic_receive). Frames looped inside the device (to the own
 * MAC, and the loopback copy of multicast) never cross the MAC and are not counted. As
 * on the wire, a frame counts with its FCS and at least 64 bytes: max(len, 60) + 4 (the
 * netdev carries no FCS and no pad). The size histogram (RFC 2819) uses that length.
 *
 * Groups: IEEE 802.3 (0x00), RFC 2863 (0x01), RFC 2819 (0x02), per priority (0x10, the
 * frame's VLAN PCP, 0 untagged), physical layer (0x12) and InfiniBand port counters
 * (0x20: mlx5_ib answers IBTA PortCounters MADs from it, on Ethernet ports too; IBTA
 * 16.1.3.5, the counters stop at their maximum). Counters a virtual link cannot have
 * (FCS, alignment, symbol and FEC errors, collisions, pause frames, link integrity and
 * VL15) read 0.
 * Errors: frames the MAC takes no further, runts (< 14 bytes: undersize) and frames over
 * the largest frame (PMTU max_mtu + 18: too long); discards: frames received while the
 * firmware is dead. The counters start at 0 at every reset of the device (not at a
 * driver's TEARDOWN_HCA); clr clears one group (the per-priority group: one priority)
 * by keeping the values at that moment as the group's base.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/timer.h"
#include "hw/vcx/trace.h"
#include "hw/vcx/vcx-cmd.h"
#include "vcx-nic.h"

enum {
    SYND_PPCNT_PORT = 0x20,
    SYND_PPCNT_PNAT,
    SYND_PPCNT_GRP,
    SYND_PPCNT_PRIO,
    SYND_PPCNT_WRITE,
};

QEMU_BUILD_BUG_ON(VCX_PCNT_BINS != VCX_PPCNT_2819_BINS);
QEMU_BUILD_BUG_ON(VCX_PC_NUM > UINT8_MAX);     /* VcxPcntDir holds the indices */

/* RFC 2819 size bins (octets with FCS): 64, 65-127, ... 8192-10239 */
static const uint32_t vcx_pcnt_bin_hi[VCX_PCNT_BINS] = {
    64, 127, 255, 511, 1023, 1518, 2047, 4095, 8191, 10239,
};

static uint32_t vcx_pcnt_wire_len(uint32_t len)
{
    return MAX(len, 60u) + 4;
}

static uint32_t vcx_pcnt_prio(const uint8_t *f, uint32_t len)
{
    uint16_t tpid = len >= 16 ? lduw_be_p(f + 12) : 0;

    return tpid == 0x8100 || tpid == 0x88a8 ? f[14] >> 5 : 0;
}

static void vcx_pcnt_size(VcxPortCnt *p, uint32_t wire)
{
    for (uint32_t i = 0; i < VCX_PCNT_BINS; i++) {
        if (wire <= vcx_pcnt_bin_hi[i]) {
            p->c[VCX_PC_RX_BIN + i]++;
            return;
        }
    }
}

/* The counters of one direction: frames, octets, multicast, broadcast, per priority. */
typedef struct VcxPcntDir {
    uint8_t frames, octets, mc, bc, prio_frames, prio_octets;
} VcxPcntDir;

static const VcxPcntDir vcx_pcnt_tx_dir = {
    VCX_PC_TX_FRAMES, VCX_PC_TX_OCTETS, VCX_PC_TX_MC, VCX_PC_TX_BC,
    VCX_PC_PRIO_TX_FRAMES, VCX_PC_PRIO_TX_OCTETS,
};
static const VcxPcntDir vcx_pcnt_rx_dir = {
    VCX_PC_RX_FRAMES, VCX_PC_RX_OCTETS, VCX_PC_RX_MC, VCX_PC_RX_BC,
    VCX_PC_PRIO_RX_FRAMES, VCX_PC_PRIO_RX_OCTETS,
};

static void vcx_pcnt_frame(VcxPortCnt *p, const VcxPcntDir *d, const uint8_t *f,
                           uint32_t wire, uint32_t prio)
{
    static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

    p->c[d->frames]++;
    p->c[d->octets] += wire;
    if (!memcmp(f, bc, 6)) {
        p->c[d->bc]++;
    } else if (f[0] & 1) {
        p->c[d->mc]++;
    }
    p->c[d->prio_frames + prio]++;
    p->c[d->prio_octets + prio] += wire;
}

/* A frame onto the netdev. */
void vcx_pcnt_tx(VcxState *s, const uint8_t *f, uint32_t len)
{
    vcx_pcnt_frame(&s->pcnt, &vcx_pcnt_tx_dir, f, vcx_pcnt_wire_len(len),
                   vcx_pcnt_prio(f, len));
}

/*
 * A frame from the netdev: received (ok), a MAC error (runt or too long), or received
 * and discarded (no resources).
 */
void vcx_pcnt_rx(VcxState *s, const uint8_t *f, uint32_t len, VcxPcntRx what)
{
    VcxPortCnt *p = &s->pcnt;
    uint32_t wire = vcx_pcnt_wire_len(len), prio;

    vcx_pcnt_size(p, wire);
    if (what == VCX_PCNT_RX_RUNT || what == VCX_PCNT_RX_TOO_LONG) {
        p->c[what == VCX_PCNT_RX_RUNT ? VCX_PC_RX_UNDERSIZE : VCX_PC_RX_TOO_LONG]++;
        p->c[VCX_PC_RX_ERR_OCTETS] += wire;
        return;
    }
    prio = vcx_pcnt_prio(f, len);
    vcx_pcnt_frame(p, &vcx_pcnt_rx_dir, f, wire, prio);
    if (what == VCX_PCNT_RX_DISCARD) {
        p->c[VCX_PC_RX_DISCARDS]++;
        p->c[VCX_PC_PRIO_RX_DISCARDS + prio]++;
    }
}

void vcx_pcnt_link_down(VcxState *s)
{
    s->pcnt.c[VCX_PC_LINK_DOWN]++;
}

void vcx_pcnt_reset(VcxState *s)
{
    int64_t now = qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL);

    memset(&s->pcnt, 0, sizeof(s->pcnt));
    for (uint32_t g = 0; g < VCX_PCNT_GROUPS; g++) {
        s->pcnt.cleared_ms[g] = now;
    }
}

/*
 * PPCNT
 */

typedef enum VcxPcntGroup {
    VCX_PG_802_3, VCX_PG_2863, VCX_PG_2819, VCX_PG_PRIO, VCX_PG_PHYS, VCX_PG_IB,
} VcxPcntGroup;

typedef struct VcxPcntView {
    const VcxPortCnt *p;
    VcxPcntGroup g;
    uint8_t *set;               /* the register's counter set */
} VcxPcntView;

/* A counter since the group's last clear. */
static uint64_t vcx_pv(const VcxPcntView *v, uint32_t id)
{
    return v->p->c[id] - v->p->base[v->g][id];
}

static void vcx_pv_put(const VcxPcntView *v, uint32_t slot, uint64_t val)
{
    stq_be_p(v->set + 8 * slot, val);   /* high dword first, as the PRM lays them out */
}

/* IEEE 802.3 (30.3.1.1): frames and octets that crossed the MAC well. */
static void vcx_ppcnt_802_3(const VcxPcntView *v)
{
    vcx_pv_put(v, VCX_PPCNT_802_3_FRAMES_TX, vcx_pv(v, VCX_PC_TX_FRAMES));
    vcx_pv_put(v, VCX_PPCNT_802_3_FRAMES_RX, vcx_pv(v, VCX_PC_RX_FRAMES));
    vcx_pv_put(v, VCX_PPCNT_802_3_OCTETS_TX, vcx_pv(v, VCX_PC_TX_OCTETS));
    vcx_pv_put(v, VCX_PPCNT_802_3_OCTETS_RX, vcx_pv(v, VCX_PC_RX_OCTETS));
    vcx_pv_put(v, VCX_PPCNT_802_3_MC_TX, vcx_pv(v, VCX_PC_TX_MC));
    vcx_pv_put(v, VCX_PPCNT_802_3_BC_TX, vcx_pv(v, VCX_PC_TX_BC));
    vcx_pv_put(v, VCX_PPCNT_802_3_MC_RX, vcx_pv(v, VCX_PC_RX_MC));
    vcx_pv_put(v, VCX_PPCNT_802_3_BC_RX, vcx_pv(v, VCX_PC_RX_BC));
    vcx_pv_put(v, VCX_PPCNT_802_3_TOO_LONG, vcx_pv(v, VCX_PC_RX_TOO_LONG));
}

/* RFC 2863 (ifTable / ifXTable) */
static void vcx_ppcnt_2863(const VcxPcntView *v)
{
    uint64_t rx = vcx_pv(v, VCX_PC_RX_FRAMES), rx_mc = vcx_pv(v, VCX_PC_RX_MC);
    uint64_t rx_bc = vcx_pv(v, VCX_PC_RX_BC), tx = vcx_pv(v, VCX_PC_TX_FRAMES);
    uint64_t tx_mc = vcx_pv(v, VCX_PC_TX_MC), tx_bc = vcx_pv(v, VCX_PC_TX_BC);

    vcx_pv_put(v, VCX_PPCNT_2863_IN_OCTETS, vcx_pv(v, VCX_PC_RX_OCTETS));
    vcx_pv_put(v, VCX_PPCNT_2863_IN_UCAST, rx - rx_mc - rx_bc);
    vcx_pv_put(v, VCX_PPCNT_2863_IN_DISCARDS, vcx_pv(v, VCX_PC_RX_DISCARDS));
    vcx_pv_put(v, VCX_PPCNT_2863_IN_ERRORS,
               vcx_pv(v, VCX_PC_RX_UNDERSIZE) + vcx_pv(v, VCX_PC_RX_TOO_LONG));
    vcx_pv_put(v, VCX_PPCNT_2863_OUT_OCTETS, vcx_pv(v, VCX_PC_TX_OCTETS));
    vcx_pv_put(v, VCX_PPCNT_2863_OUT_UCAST, tx - tx_mc - tx_bc);
    vcx_pv_put(v, VCX_PPCNT_2863_IN_MC, rx_mc);
    vcx_pv_put(v, VCX_PPCNT_2863_IN_BC, rx_bc);
    vcx_pv_put(v, VCX_PPCNT_2863_OUT_MC, tx_mc);
    vcx_pv_put(v, VCX_PPCNT_2863_OUT_BC, tx_bc);
}

/* RFC 2819 (etherStatsTable): received frames, bad ones included, and their sizes. */
static void vcx_ppcnt_2819(const VcxPcntView *v)
{
    uint64_t bad = vcx_pv(v, VCX_PC_RX_UNDERSIZE) + vcx_pv(v, VCX_PC_RX_TOO_LONG);

    vcx_pv_put(v, VCX_PPCNT_2819_DROP_EVENTS, vcx_pv(v, VCX_PC_RX_DISCARDS));
    vcx_pv_put(v, VCX_PPCNT_2819_OCTETS,
               vcx_pv(v, VCX_PC_RX_OCTETS) + vcx_pv(v, VCX_PC_RX_ERR_OCTETS));
    vcx_pv_put(v, VCX_PPCNT_2819_PKTS, vcx_pv(v, VCX_PC_RX_FRAMES) + bad);
    vcx_pv_put(v, VCX_PPCNT_2819_BC, vcx_pv(v, VCX_PC_RX_BC));
    vcx_pv_put(v, VCX_PPCNT_2819_MC, vcx_pv(v, VCX_PC_RX_MC));
    vcx_pv_put(v, VCX_PPCNT_2819_UNDERSIZE, vcx_pv(v, VCX_PC_RX_UNDERSIZE));
    vcx_pv_put(v, VCX_PPCNT_2819_OVERSIZE, vcx_pv(v, VCX_PC_RX_TOO_LONG));
    for (uint32_t i = 0; i < VCX_PCNT_BINS; i++) {
        vcx_pv_put(v, VCX_PPCNT_2819_PKTS64 + i, vcx_pv(v, VCX_PC_RX_BIN + i));
    }
}

static void vcx_ppcnt_prio(const VcxPcntView *v, uint32_t prio)
{
    vcx_pv_put(v, VCX_PPCNT_PRIO_RX_OCTETS, vcx_pv(v, VCX_PC_PRIO_RX_OCTETS + prio));
    vcx_pv_put(v, VCX_PPCNT_PRIO_RX_FRAMES, vcx_pv(v, VCX_PC_PRIO_RX_FRAMES + prio));
    vcx_pv_put(v, VCX_PPCNT_PRIO_TX_OCTETS, vcx_pv(v, VCX_PC_PRIO_TX_OCTETS + prio));
    vcx_pv_put(v, VCX_PPCNT_PRIO_TX_FRAMES, vcx_pv(v, VCX_PC_PRIO_TX_FRAMES + prio));
    vcx_pv_put(v, VCX_PPCNT_PRIO_RX_DISCARDS, vcx_pv(v, VCX_PC_PRIO_RX_DISCARDS + prio));
}

static void vcx_ppcnt_phys(const VcxPcntView *v, int64_t now_ms)
{
    vcx_pv_put(v, VCX_PPCNT_PHYS_TIME_SINCE_CLEAR, now_ms - v->p->cleared_ms[v->g]);
    stl_be_p(v->set + VCX_PPCNT_PHYS_LINK_DOWN_EVENTS, vcx_pv(v, VCX_PC_LINK_DOWN));
}

/*
 * IBTA PortCounters (16.1.3.5) of the port: LinkDownedCounter the link's downs,
 * PortRcvErrors the frames the MAC took no further; both saturate.
 */
static void vcx_ppcnt_ib(const VcxPcntView *v)
{
    vcx_set(v->set, VCX_PPCNT_IB_LINK_DOWNED, MIN(vcx_pv(v, VCX_PC_LINK_DOWN), UINT8_MAX));
    vcx_set(v->set, VCX_PPCNT_IB_PORT_RCV_ERRORS,
            MIN(vcx_pv(v, VCX_PC_RX_UNDERSIZE) + vcx_pv(v, VCX_PC_RX_TOO_LONG), UINT16_MAX));
}

/* The counters a group's clr clears (the per-priority group: those of one priority). */
static bool vcx_pcnt_in_group(VcxPcntGroup g, uint32_t id, uint32_t prio)
{
    switch (g) {
    case VCX_PG_PRIO:
        return id == VCX_PC_PRIO_RX_FRAMES + prio || id == VCX_PC_PRIO_RX_OCTETS + prio ||
               id == VCX_PC_PRIO_TX_FRAMES + prio || id == VCX_PC_PRIO_TX_OCTETS + prio ||
               id == VCX_PC_PRIO_RX_DISCARDS + prio;
    case VCX_PG_PHYS:
        return id == VCX_PC_LINK_DOWN;
    case VCX_PG_IB:
        return id == VCX_PC_LINK_DOWN || id == VCX_PC_RX_UNDERSIZE || id == VCX_PC_RX_TOO_LONG;
    default:
        return id < VCX_PC_PRIO_RX_FRAMES;
    }
}

static uint8_t vcx_ppcnt(VcxState *s, VcxCmd *cmd, const uint8_t *in, uint8_t *out,
                         bool write)
{
    uint32_t grp = vcx_get(in, VCX_PPCNT_GRP), prio = vcx_get(in, VCX_PPCNT_PRIO_TC);
    int64_t now = qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL);
    VcxPortCnt *p = &s->pcnt;
    VcxPcntView v = { p, VCX_PG_802_3, out + VCX_PPCNT_COUNTER_SET };

    if (vcx_get(in, VCX_PPCNT_LOCAL_PORT) != VCX_PORT_NUM) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PPCNT_PORT,
                            "PPCNT local_port %u, the device has port %u only",
                            vcx_get(in, VCX_PPCNT_LOCAL_PORT), VCX_PORT_NUM);
    }
    if (vcx_get(in, VCX_PPCNT_PNAT) || vcx_get(in, VCX_PPCNT_PLANE_IND)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PPCNT_PNAT,
                            "PPCNT pnat %u plane_ind %u: only the local port number (0) "
                            "and no plane", vcx_get(in, VCX_PPCNT_PNAT),
                            vcx_get(in, VCX_PPCNT_PLANE_IND));
    }
    switch (grp) {
    case VCX_PPCNT_GRP_IEEE_802_3:
        v.g = VCX_PG_802_3;
        break;
    case VCX_PPCNT_GRP_RFC_2863:
        v.g = VCX_PG_2863;
        break;
    case VCX_PPCNT_GRP_RFC_2819:
        v.g = VCX_PG_2819;
        break;
    case VCX_PPCNT_GRP_PER_PRIO:
        v.g = VCX_PG_PRIO;
        if (prio > 7) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PPCNT_PRIO,
                                "PPCNT per-priority group: prio_tc %u > 7", prio);
        }
        break;
    case VCX_PPCNT_GRP_PHYS_LAYER:
        v.g = VCX_PG_PHYS;
        break;
    case VCX_PPCNT_GRP_IB_PORT:
        v.g = VCX_PG_IB;
        break;
    default:
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PPCNT_GRP,
                            "PPCNT counter group 0x%x not supported (0x0, 0x1, 0x2, 0x10, "
                            "0x12, 0x20)", grp);
    }
    if (write && !vcx_get(in, VCX_PPCNT_CLR)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PPCNT_WRITE,
                            "PPCNT write without clr: the counters are read only");
    }
    memset(out, 0, VCX_REG_PPCNT_LEN);
    vcx_set(out, VCX_PPCNT_LOCAL_PORT, VCX_PORT_NUM);
    vcx_set(out, VCX_PPCNT_GRP, grp);
    vcx_set(out, VCX_PPCNT_PRIO_TC, v.g == VCX_PG_PRIO ? prio : 0);
    switch (v.g) {
    case VCX_PG_802_3:
        vcx_ppcnt_802_3(&v);
        break;
    case VCX_PG_2863:
        vcx_ppcnt_2863(&v);
        break;
    case VCX_PG_2819:
        vcx_ppcnt_2819(&v);
        break;
    case VCX_PG_PRIO:
        vcx_ppcnt_prio(&v, prio);
        break;
    case VCX_PG_PHYS:
        vcx_ppcnt_phys(&v, now);
        break;
    case VCX_PG_IB:
        vcx_ppcnt_ib(&v);
        break;
    }
    if (vcx_get(in, VCX_PPCNT_CLR)) {
        /* a query returns the values before the clear */
        for (uint32_t id = 0; id < VCX_PC_NUM; id++) {
            if (vcx_pcnt_in_group(v.g, id, prio)) {
                p->base[v.g][id] = p->c[id];
            }
        }
        if (v.g != VCX_PG_PRIO) {
            p->cleared_ms[v.g] = now;
        }
    }
    trace_vcx_ppcnt(grp, prio, vcx_get(in, VCX_PPCNT_CLR));
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_reg_ppcnt_read(VcxState *s, VcxCmd *cmd, const uint8_t *in, uint8_t *out)
{
    return vcx_ppcnt(s, cmd, in, out, false);
}

uint8_t vcx_reg_ppcnt_write(VcxState *s, VcxCmd *cmd, const uint8_t *in, uint8_t *out)
{
    return vcx_ppcnt(s, cmd, in, out, true);
}
