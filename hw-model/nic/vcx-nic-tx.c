/*
 * vcx: the Ethernet send path: SQ doorbells, send WQEs to frames, checksum offload,
 * where a frame goes, send completions and the SQ error state (PRM "Send Queue",
 * "Ethernet Segment").
 *
 * A send WQE is a control segment (opcode SEND 0x0a, LSO 0x0e or NOP 0x00, WQE index, SQ
 * number, ds count, fm_ce_se), then for SEND and LSO the Ethernet segment (cs_flags, mss,
 * inline_hdr_sz and the first 2 inline header bytes, the rest continuing in the following
 * 16-byte units; or, for a SEND, a VLAN tag to insert), then data segments (byte_count,
 * lkey, address). A SEND's frame is the inline bytes followed by the data segments'
 * bytes, with the tag to insert after the source MAC, read through memory keys of the
 * SQ's PD with local read (the WQE fails with LOCAL_PROT_ERR otherwise); frames under 60
 * bytes are padded, frames over the vport MTU + 18 fail with LOCAL_LENGTH_ERR, an mss on
 * a SEND, an unknown opcode or a ds count that does not fit fail with LOCAL_QP_OP_ERR.
 * An LSO WQE's TCP payload is cut into frames of mss bytes (vcx_nic_lso). A failed WQE
 * completes with an error CQE (REQ_ERR, always, whatever the WQE asked), the SQ goes to
 * ERR and, with flush_in_error_en, every WQE still posted completes with WR_FLUSH_ERR.
 * Otherwise a CQE (REQ, wqe_counter = the WQE's index) is written only when fm_ce_se asks
 * for one (CQ_UPDATE).
 *
 * Destinations, as the port's embedded switch decides: a unicast frame to the port's
 * own MAC loops back to local receive and does not leave; multicast and broadcast go to
 * the wire and loop back too (TIRs blocking self loopback drop their own); everything
 * else goes to the wire, the netdev (nowhere without one). With the link down frames are
 * dropped and counted as transmit errors; the WQEs still complete.
 *
 * The executor runs SQs from its run queue (vcx_nic_tx_run) within the run's budget: an
 * SQ doorbell only queues the SQ.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "net/net.h"
#include "hw/vcx/trace.h"
#include "vcx-nic.h"

#define VCX_NIC_SQ_RUN_WQES     32u     /* one SQ's turn before the next SQ's */

/*
 * Doorbell and run queue
 */

/* Queue an SQ with WQEs posted, or an SQ or RQ in ERR with WQEs to flush. */
void vcx_nic_wq_kick(VcxState *s, VcxNicWq *sq)
{
    VcxNic *n = vcx_nic(s);

    if (!sq->kicked) {
        sq->kicked = true;
        QTAILQ_INSERT_TAIL(&n->runq, sq, run_link);
    }
    qemu_bh_schedule(s->objs->bh);
}

void vcx_nic_doorbell(VcxState *s, uint32_t uar, uint32_t sqn, uint64_t value)
{
    VcxNicWq *sq = vcx_sq_get(s, sqn);

    if (!sq) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: SQ doorbell on UAR %u for SQ 0x%x, which does "
                      "not exist\n", uar, sqn);
        trace_vcx_err_sq_doorbell(uar, sqn, "no such SQ");
        return;
    }
    if (vcx_get(sq->ctx + VCX_SQC_WQ_AT, VCX_WQ_UAR_PAGE) != uar) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: SQ doorbell for SQ 0x%x on UAR %u, but the SQ "
                      "uses UAR %u: ignored\n", sqn, uar,
                      vcx_get(sq->ctx + VCX_SQC_WQ_AT, VCX_WQ_UAR_PAGE));
        trace_vcx_err_sq_doorbell(uar, sqn, "wrong UAR");
        return;
    }
    trace_vcx_sq_doorbell(sqn, (value >> 40) & 0xffff);
    /* at most a ring's worth per doorbell: a counter run past the WQEs stops there */
    sq->allow = 1u << sq->log_wq_sz;
    vcx_nic_wq_kick(s, sq);
}

/*
 * Completions and errors
 */

static void vcx_nic_sq_cqe(VcxState *s, VcxNicWq *sq, uint8_t cqe_op, uint8_t synd,
                           uint16_t index, uint8_t wqe_op)
{
    uint8_t cqe[VCX_CQE_SIZE] = { 0 };

    vcx_set(cqe, VCX_CQE_SOP_OPCODE, wqe_op);
    vcx_set(cqe, VCX_CQE_QPN, sq->num);
    vcx_set(cqe, VCX_CQE_WQE_COUNTER, index);
    if (cqe_op == VCX_CQE_REQ_ERR) {
        vcx_set(cqe, VCX_CQE_SYNDROME, synd);
    }
    cqe[VCX_CQE_OP_OWN_BYTE] = cqe_op << 4;
    vcx_cq_post(s, sq->cq, cqe, false);
}

static void vcx_nic_sq_fail(VcxState *s, VcxNicWq *sq, uint16_t index, uint8_t wqe_op,
                            uint8_t synd, const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR, "vcx: SQ 0x%x WQE 0x%x (opcode 0x%x): %s: error CQE "
                  "syndrome 0x%x, SQ to ERR\n", sq->num, index, wqe_op, why, synd);
    trace_vcx_err_nic_wqe(sq->num, index, why);
    vcx_nic_sq_cqe(s, sq, VCX_CQE_REQ_ERR, synd, index, wqe_op);
    sq->state = VCX_SQC_STATE_ERR;
    sq->flushing = sq->flush_in_error;
}

static MemTxResult vcx_nic_sq_read(VcxState *s, VcxNicWq *sq, uint16_t bb, uint8_t *buf,
                                   uint32_t nbb)
{
    uint32_t size = 1u << sq->log_wq_sz;

    for (uint32_t i = 0; i < nbb; i++) {
        uint64_t off = (uint64_t)((bb + i) & (size - 1)) << VCX_SEND_WQEBB_SHIFT;
        MemTxResult r = vcx_qbuf_read(s, &sq->buf, off, buf + i * VCX_SEND_WQEBB,
                                      VCX_SEND_WQEBB);

        if (r != MEMTX_OK) {
            return r;
        }
    }
    return MEMTX_OK;
}

/* Where a built frame goes: the wire, local receive (with its transport domain), both. */
static void vcx_nic_xmit(VcxState *s, VcxNicWq *sq, const uint8_t *f, uint32_t len)
{
    VcxNic *n = vcx_nic(s);
    bool group = f[0] & 1;
    bool own = !memcmp(f, s->port.mac, 6);

    if (!vcx_port_oper_up(s)) {
        n->st.tx_err_pkts++;
        n->st.tx_err_bytes += len;
        trace_vcx_nic_tx(sq->num, len, "link down: dropped");
        return;
    }
    vcx_nic_count_tx(s, f, len);
    n->st.nic_tx++;
    if (group || own) {
        n->st.lb_pkts++;
        n->st.lb_bytes += len;
        vcx_nic_loopback(s, f, len, sq->tis ? sq->tis->tdn : 0);
    }
    if (!own && s->nic) {
        vcx_pcnt_tx(s, f, len);
        qemu_send_packet(qemu_get_queue(s->nic), f, len);
    }
    trace_vcx_nic_tx(sq->num, len, own ? "loopback" : group ? "wire and loopback" :
                     s->nic ? "wire" : "no netdev");
}

/*
 * A SEND or LSO WQE decoded: its inline headers, checksum flags, MSS and the data
 * segments' bytes, each through a memory key already checked for local read.
 */
#define VCX_NIC_WQE_MAX_DSEGS   (VCX_SEND_WQE_MAX_WQEBBS * VCX_SEND_WQEBB / VCX_WQE_DS)

typedef struct VcxNicGather {
    VcxMkey *mk;
    uint64_t va;
    uint32_t len;
} VcxNicGather;

typedef struct VcxNicSendWqe {
    const uint8_t *hdr;         /* the inline headers, in the WQE */
    uint32_t ihs;
    bool insert;                /* a VLAN tag to insert after the source MAC */
    uint16_t tpid, tci;
    uint8_t cs;
    uint16_t mss;
    uint32_t ng;
    uint64_t total;             /* bytes of the data segments */
    VcxNicGather g[VCX_NIC_WQE_MAX_DSEGS];
} VcxNicSendWqe;

/*
 * Decode the Ethernet segment and the data segments; 0 or the error CQE syndrome (why
 * says what). limit: the most bytes the WQE may carry, inline headers included (the
 * vport MTU + 18 for SEND, 2^max_lso_cap for LSO); a length error is found before the
 * memory key of the segment that passes the limit is checked, as the gather reads in
 * order.
 */
static uint8_t vcx_nic_decode(VcxState *s, VcxNicWq *sq, const uint8_t *wqe, uint32_t ds,
                              uint32_t limit, VcxNicSendWqe *w, const char **why)
{
    const uint8_t *eth = wqe + VCX_WQE_CTRL_SIZE;
    uint32_t end = ds * VCX_WQE_DS, off;

    if (ds < 2) {
        *why = "send WQE without an Ethernet segment";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    w->ihs = vcx_get(eth, VCX_ETH_SEG_INLINE_HDR_SZ);
    w->hdr = eth + VCX_ETH_SEG_INLINE_HDR_AT;
    w->insert = w->ihs & VCX_ETH_INSERT_VLAN;
    if (w->insert) {
        /* the insert fields take the place of the inline headers */
        if (w->ihs & ~(VCX_ETH_INSERT_VLAN | VCX_ETH_INSERT_SVLAN)) {
            *why = "unknown VLAN insert type bits";
            return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
        }
        w->tpid = (w->ihs & VCX_ETH_INSERT_SVLAN) ? VCX_ETHERTYPE_SVLAN : VCX_ETHERTYPE_VLAN;
        w->tci = vcx_get(eth, VCX_ETH_SEG_INSERT_VLAN_TCI);
        w->ihs = 0;
        limit -= VCX_NIC_VLAN_HLEN;
    }
    w->mss = vcx_get(eth, VCX_ETH_SEG_MSS);
    w->cs = vcx_get(eth, VCX_ETH_SEG_CS_FLAGS);
    w->ng = 0;
    w->total = 0;
    if (w->cs & (VCX_ETH_CS_L3_INNER | VCX_ETH_CS_L4_INNER)) {
        *why = "inner checksum flags: no tunnel offloads";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (w->ihs > end - VCX_WQE_CTRL_SIZE - VCX_ETH_SEG_INLINE_HDR_AT) {
        *why = "inline headers beyond the WQE";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (w->ihs > limit) {
        *why = "frame longer than the vport MTU";
        return VCX_CQE_SYND_LOCAL_LENGTH_ERR;
    }
    off = VCX_WQE_CTRL_SIZE + VCX_ETH_SEG_SIZE;
    if (w->ihs > 2) {
        off += ROUND_UP(w->ihs - 2, VCX_WQE_DS);
    }
    for (; off + VCX_WQE_DATA_SEG_SIZE <= end; off += VCX_WQE_DATA_SEG_SIZE) {
        const uint8_t *d = wqe + off;
        uint32_t bc = vcx_get(d, VCX_WQE_DATA_BYTE_COUNT);
        uint32_t lkey = vcx_get(d, VCX_WQE_DATA_LKEY);
        uint64_t va = vcx_get64(d, VCX_WQE_DATA_ADDR);
        uint32_t n = bc ? bc : 0x80000000u;     /* 0 means 2^31 bytes */
        VcxMkey *mk;

        if (bc & VCX_WQE_INLINE_FLAG) {
            *why = "inline data segment: headers go in the Ethernet segment";
            return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
        }
        if (n > limit - w->ihs - w->total) {
            *why = w->mss ? "LSO message longer than 2^max_lso_cap bytes" :
                            "frame longer than the vport MTU";
            return VCX_CQE_SYND_LOCAL_LENGTH_ERR;
        }
        mk = vcx_mkey_check(s, lkey, sq->pdn, sq->num, va, n, VCX_ACC_LOCAL_READ, why);
        if (!mk) {
            return VCX_CQE_SYND_LOCAL_PROT_ERR;
        }
        /* the ds count bounds the segments: at most a WQE of 16 WQEBBs' worth */
        w->g[w->ng++] = (VcxNicGather){ mk, va, n };
        w->total += n;
    }
    if (off != end) {
        *why = "ds count ends inside a data segment";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    return 0;
}

/*
 * Copy len bytes of the data segments from the cursor (segment *gi, byte *go) to dst and
 * move the cursor on.
 */
static MemTxResult vcx_nic_gather(VcxState *s, const VcxNicSendWqe *w, uint32_t *gi,
                                  uint32_t *go, uint8_t *dst, uint32_t len)
{
    while (len) {
        const VcxNicGather *g = &w->g[*gi];
        uint32_t n = MIN(len, g->len - *go);
        MemTxResult r = vcx_mkey_rw(s, g->mk, g->va + *go, dst, n, false);

        if (r != MEMTX_OK) {
            return r;
        }
        dst += n;
        len -= n;
        *go += n;
        if (*go == g->len) {
            (*gi)++;
            *go = 0;
        }
    }
    return MEMTX_OK;
}

/* Pad a frame to the Ethernet minimum (without FCS); its new length. */
static uint32_t vcx_nic_pad(uint8_t *frame, uint32_t len)
{
    if (len < VCX_NIC_MIN_FRAME) {
        memset(frame + len, 0, VCX_NIC_MIN_FRAME - len);
        len = VCX_NIC_MIN_FRAME;
    }
    return len;
}

/* SEND: the inline headers and the data segments make one frame; 0 or the syndrome. */
static uint8_t vcx_nic_send(VcxState *s, VcxNicWq *sq, const uint8_t *wqe, uint32_t ds,
                            uint32_t *bytes, const char **why)
{
    VcxNic *n = vcx_nic(s);
    VcxNicSendWqe w;
    uint32_t gi = 0, go = 0, len;
    uint8_t synd = vcx_nic_decode(s, sq, wqe, ds, s->port.vport_mtu + 18, &w, why);

    if (synd) {
        return synd;
    }
    if (w.mss) {
        *why = "mss set on a SEND: segmentation is the LSO opcode's";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    len = w.ihs + w.total;
    if (len < 14) {
        *why = "frame shorter than an Ethernet header";
        return VCX_CQE_SYND_LOCAL_LENGTH_ERR;
    }
    memcpy(n->frame, w.hdr, w.ihs);
    if (vcx_nic_gather(s, &w, &gi, &go, n->frame + w.ihs, w.total) != MEMTX_OK) {
        *why = "gather DMA failed";
        return VCX_CQE_SYND_LOCAL_PROT_ERR;
    }
    if (w.insert) {
        /* the tag goes between the source MAC and the EtherType; offloads see it */
        memmove(n->frame + 16, n->frame + 12, len - 12);
        stw_be_p(n->frame + 12, w.tpid);
        stw_be_p(n->frame + 14, w.tci);
        len += VCX_NIC_VLAN_HLEN;
    }
    len = vcx_nic_pad(n->frame, len);
    vcx_nic_csum_offload(n->frame, len, w.cs);
    vcx_nic_xmit(s, sq, n->frame, len);
    *bytes = len;
    return 0;
}

/*
 * LSO (large send offload, opcode 0x0e; PRM "Ethernet Segment": mss): the inline headers
 * are exactly the Ethernet (one VLAN tag allowed), IPv4 or IPv6 (no extension header) and
 * TCP headers; the data segments are the TCP payload, cut into segments of mss bytes,
 * each sent as its own frame with the headers replicated and fixed up as a TCP
 * segmentation offload does: IPv4 total length and identification (the first segment's
 * plus its index), IPv6 payload length, TCP sequence number (the first segment's plus
 * the payload before it), FIN and PSH kept on the last segment only and CWR on the first
 * only, and the IPv4 header and TCP checksums computed (the lengths changed, so always,
 * whatever cs_flags asks). A message is at most 2^max_lso_cap bytes, headers included.
 * What cannot be segmented fails the WQE (LOCAL_QP_OP_ERR; a segment over the vport MTU:
 * LOCAL_LENGTH_ERR) before any frame leaves.
 */
static uint8_t vcx_nic_lso(VcxState *s, VcxNicWq *sq, const uint8_t *wqe, uint32_t ds,
                           uint32_t *bytes, const char **why)
{
    uint8_t *f = vcx_nic(s)->frame;
    uint32_t max = s->port.vport_mtu + 18, l3, l4, gi = 0, go = 0, seq0, nseg;
    uint16_t id0;
    uint8_t flags;
    VcxNicHdrs p;
    VcxNicSendWqe w;
    const uint8_t *h;
    uint8_t synd = vcx_nic_decode(s, sq, wqe, ds, 1u << VCX_NIC_LOG_MAX_LSO, &w, why);

    if (synd) {
        return synd;
    }
    h = w.hdr;
    if (!w.mss) {
        *why = "LSO WQE with mss 0";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (w.insert) {
        *why = "VLAN insertion on an LSO WQE: the tag goes in the inline headers";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (w.ihs < 14) {
        *why = "LSO without the Ethernet header inline";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    vcx_nic_parse_hdrs(h, w.ihs, &p);
    if (!p.ipv) {
        *why = "LSO of a frame that is not IPv4 or IPv6 inline";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (p.frag) {
        *why = "LSO of an IPv4 fragment";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (p.proto != VCX_IPPROTO_TCP) {
        *why = "LSO of a frame that is not TCP (no UDP segmentation)";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    l3 = p.l3;
    l4 = p.l4;
    if (!l4 || w.ihs < l4 + 20 || (h[l4 + 12] >> 4) < 5 ||
        w.ihs != l4 + (h[l4 + 12] >> 4) * 4) {
        *why = "LSO inline headers do not end where the TCP header ends";
        return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
    }
    if (w.ihs + MIN(w.total, (uint64_t)w.mss) > max) {
        *why = "LSO segment longer than the vport MTU";
        return VCX_CQE_SYND_LOCAL_LENGTH_ERR;
    }
    seq0 = ldl_be_p(h + l4 + 4);
    id0 = p.ipv == 4 ? lduw_be_p(h + l3 + 4) : 0;
    nseg = w.total ? DIV_ROUND_UP(w.total, w.mss) : 1;
    *bytes = 0;
    for (uint32_t i = 0, off = 0; i < nseg; i++) {
        uint32_t seg = MIN((uint64_t)w.mss, w.total - off), len = w.ihs + seg;

        memcpy(f, h, w.ihs);
        if (vcx_nic_gather(s, &w, &gi, &go, f + w.ihs, seg) != MEMTX_OK) {
            *why = "gather DMA failed";
            return VCX_CQE_SYND_LOCAL_PROT_ERR;
        }
        if (p.ipv == 4) {
            stw_be_p(f + l3 + 2, len - l3);
            stw_be_p(f + l3 + 4, id0 + i);
        } else {
            stw_be_p(f + l3 + 4, len - l4);
        }
        stl_be_p(f + l4 + 4, seq0 + off);
        flags = f[l4 + 13];
        if (i) {
            flags &= ~VCX_TCP_CWR;
        }
        if (i + 1 < nseg) {
            flags &= ~(VCX_TCP_FIN | VCX_TCP_PSH);
        }
        f[l4 + 13] = flags;
        len = vcx_nic_pad(f, len);
        vcx_nic_csum_fill(f, len, &p, VCX_ETH_CS_L3 | VCX_ETH_CS_L4);
        vcx_nic_xmit(s, sq, f, len);
        *bytes += len;
        off += seg;
    }
    trace_vcx_nic_lso(sq->num, w.total, w.mss, nseg);
    return 0;
}

/* Flush the WQEs posted to an SQ in ERR: one WR_FLUSH_ERR CQE each, within the budget. */
static bool vcx_nic_sq_flush(VcxState *s, VcxNicWq *sq, VcxBudget *b)
{
    uint32_t size = 1u << sq->log_wq_sz;

    while (sq->ci != sq->pi) {
        uint8_t ctrl[VCX_SEND_WQEBB];
        uint32_t ds, nbb;

        if (!b->wqes) {
            return true;
        }
        b->wqes--;
        if (vcx_nic_sq_read(s, sq, sq->ci, ctrl, 1) != MEMTX_OK) {
            break;
        }
        ds = vcx_get(ctrl, VCX_WQE_CTRL_DS_CNT);
        nbb = MAX(1u, DIV_ROUND_UP(ds * VCX_WQE_DS, VCX_SEND_WQEBB));
        vcx_nic_sq_cqe(s, sq, VCX_CQE_REQ_ERR, VCX_CQE_SYND_WR_FLUSH_ERR,
                       vcx_get(ctrl, VCX_WQE_CTRL_WQE_INDEX),
                       vcx_get(ctrl, VCX_WQE_CTRL_OPCODE));
        sq->ci += MIN(nbb, (uint16_t)(sq->pi - sq->ci));
        if (nbb > size) {
            break;
        }
    }
    sq->flushing = false;
    return false;
}

/* Run one SQ up to its producer counter or its share of the budget; true: work left. */
static bool vcx_nic_sq_run(VcxState *s, VcxNicWq *sq, VcxBudget *b)
{
    uint32_t size = 1u << sq->log_wq_sz, turn = VCX_NIC_SQ_RUN_WQES;
    uint8_t wqe[VCX_SEND_WQE_MAX_WQEBBS * VCX_SEND_WQEBB];
    uint32_t pi;

    if (sq->state == VCX_SQC_STATE_ERR && sq->flushing) {
        if (vcx_dbr_read(s, sq->dbr_addr + VCX_QP_DBR_SEND, &pi) == MEMTX_OK) {
            sq->pi = pi;
        }
        return vcx_nic_sq_flush(s, sq, b);
    }
    if (sq->state != VCX_SQC_STATE_RDY) {
        return false;
    }
    if (vcx_dbr_read(s, sq->dbr_addr + VCX_QP_DBR_SEND, &pi) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: SQ 0x%x doorbell record at 0x%" PRIx64
                      " not readable\n", sq->num, sq->dbr_addr);
        trace_vcx_err_nic_wqe(sq->num, sq->ci, "doorbell record not readable");
        return false;
    }
    if ((uint16_t)(pi - sq->ci) > size && sq->pi != (uint16_t)pi) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: SQ 0x%x producer counter 0x%x is more than %u "
                      "WQEBBs ahead of 0x%x\n", sq->num, pi & 0xffff, size, sq->ci);
        trace_vcx_err_nic_wqe(sq->num, sq->ci, "producer counter beyond the ring");
    }
    sq->pi = pi;
    while (sq->ci != sq->pi && sq->state == VCX_SQC_STATE_RDY && sq->allow) {
        uint32_t ds, nbb, sent = 0;
        uint16_t index;
        uint8_t op, synd = 0;
        const char *why = NULL;

        if (!b->wqes || !b->bytes || !turn) {
            return true;
        }
        b->wqes--;
        turn--;
        if (vcx_nic_sq_read(s, sq, sq->ci, wqe, 1) != MEMTX_OK) {
            vcx_nic_sq_fail(s, sq, sq->ci, 0, VCX_CQE_SYND_LOCAL_PROT_ERR,
                            "WQE not readable");
            sq->ci++;
            break;
        }
        op = vcx_get(wqe, VCX_WQE_CTRL_OPCODE);
        index = vcx_get(wqe, VCX_WQE_CTRL_WQE_INDEX);
        ds = vcx_get(wqe, VCX_WQE_CTRL_DS_CNT);
        nbb = DIV_ROUND_UP(ds * VCX_WQE_DS, VCX_SEND_WQEBB);
        if (!ds || nbb > VCX_SEND_WQE_MAX_WQEBBS || nbb > size ||
            nbb > (uint16_t)(sq->pi - sq->ci)) {
            vcx_nic_sq_fail(s, sq, index, op, VCX_CQE_SYND_LOCAL_QP_OP_ERR,
                            "ds count 0 or beyond the WQEs posted");
            sq->ci++;
            break;
        }
        if (vcx_get(wqe, VCX_WQE_CTRL_QPN) != sq->num) {
            why = "control segment names another SQ";
            synd = VCX_CQE_SYND_LOCAL_QP_OP_ERR;
        } else if (op == VCX_OPCODE_SEND || op == VCX_OPCODE_LSO) {
            if (nbb > 1 && vcx_nic_sq_read(s, sq, sq->ci + 1, wqe + VCX_SEND_WQEBB,
                                           nbb - 1) != MEMTX_OK) {
                why = "WQE not readable";
                synd = VCX_CQE_SYND_LOCAL_PROT_ERR;
            } else if (op == VCX_OPCODE_SEND) {
                synd = vcx_nic_send(s, sq, wqe, ds, &sent, &why);
            } else {
                synd = vcx_nic_lso(s, sq, wqe, ds, &sent, &why);
            }
        } else if (op != VCX_OPCODE_NOP) {
            why = "opcode is neither SEND, LSO nor NOP";
            synd = VCX_CQE_SYND_LOCAL_QP_OP_ERR;
        }
        if (synd) {
            vcx_nic_sq_fail(s, sq, index, op, synd, why);
            sq->ci += nbb;
            break;
        }
        b->bytes -= MIN(b->bytes, sent);
        sq->ci += nbb;
        sq->allow -= MIN(sq->allow, nbb);
        if (vcx_get(wqe, VCX_WQE_CTRL_FM_CE_SE) & VCX_WQE_CE_CQE) {   /* CQ_UPDATE */
            vcx_nic_sq_cqe(s, sq, VCX_CQE_REQ, 0, index, op);
        }
    }
    if (sq->state == VCX_SQC_STATE_ERR && sq->flushing) {
        return true;
    }
    return false;
}

bool vcx_nic_tx_run(VcxState *s, VcxBudget *b)
{
    VcxNic *n = vcx_nic(s);
    VcxNicWq *sq;

    while (b->wqes && b->bytes && !s->reset_pending && (sq = QTAILQ_FIRST(&n->runq))) {
        QTAILQ_REMOVE(&n->runq, sq, run_link);
        sq->kicked = false;
        if (sq->is_sq ? vcx_nic_sq_run(s, sq, b) : vcx_nic_rq_flush(s, sq, b)) {
            sq->kicked = true;
            QTAILQ_INSERT_TAIL(&n->runq, sq, run_link);
        }
    }
    return !QTAILQ_EMPTY(&n->runq);
}
