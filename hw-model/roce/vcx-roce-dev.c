/*
 * vcx: the RoCEv2 wire engine's device part: which messages go on the wire, frames out
 * to the port's netdev and in from the NIC receive path, the ACKs coalesced per
 * executor run, the READ responses the executor sends under its budget, the wire-fault
 * property and the counters of the state property.
 *
 * Routing: a message of an RC, UC, UD, GSI QP or XRC initiator goes on the wire when the
 * device has a netdev with a peer and its destination GID (RC/UC/XRC: the path's rgid;
 * UD: the address vector's) is not a valid entry of the port's own GID table; otherwise
 * the loopback engine (vcx-resp.c) moves it whole to the port's own QP.
 *
 * With the loopback-frames property every such message takes this engine, to the port's
 * own QPs too: a frame to the port's MAC goes back into the NIC receive queue (as
 * looped, vcx_nic_loopback_roce) instead of onto the netdev, a frame to a multicast MAC
 * goes to both, so local traffic has the wire's behaviour, faults and counters. Looping
 * copies each packet twice, which is why it is not the default. A frame to the port's
 * own MAC while no wire fault is set is built without its ICRC and not checked on
 * receipt: nothing can see or change it between the two, so the check could not fail,
 * and the CRC was half of the loop's cost. A fault set meanwhile (rx) seals it first.
 *
 * Receive: vcx-nic-rx.c hands every frame it recognises as RoCEv2 (UDP port 4791 to
 * one of the port's GID addresses), from the netdev or looped, to vcx_roce_rx(), within
 * the executor's budget (one frame per WQE of the budget). A frame failing a check is
 * dropped and counted, never a guest error: the wire is not the guest.
 *
 * Wire faults (property "wire-fault"): "drop=F,dup=F,reorder=F,corrupt=F,seed=N,
 * dir=tx|rx|both", F a fraction 0..1; RoCEv2 frames only. Each frame draws from a
 * xorshift64* generator seeded with N: dropped with probability drop, else one byte of
 * its BTH or what follows flipped with probability corrupt, else sent (received) twice
 * with probability dup, else held back and sent after the next frame (or at the end of
 * the executor run) with probability reorder. What it did is counted in the state.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "qom/object.h"
#include "net/net.h"
#include "vcx-roce.h"
#include "../nic/vcx-nic.h"
#include "hw/vcx/trace.h"

/*
 * Where a QP's message to GID dgid goes: the wire when the port has a netdev peer and
 * dgid is none of the port's own RoCE addresses (RC, UC, UD, QP1 and XRC initiators),
 * otherwise the loopback engine.
 */
bool vcx_roce_route_gid(VcxState *s, VcxQp *qp, const uint8_t *dgid)
{
    if (!vcx_qp_is_rc_requester(qp) && qp->st != VCX_QP_ST_UC && !vcx_qp_is_dgram(qp)) {
        return false;
    }
    if (s->params.loopback_frames) {
        return true;
    }
    if (!s->nic || !qemu_get_queue(s->nic)->peer) {
        return false;
    }
    for (uint32_t i = 0; i < VCX_GID_TABLE_SIZE; i++) {
        const uint8_t *e = vcx_gid_entry(s, i);

        if (e && !memcmp(e + VCX_FLD_BYTE(VCX_GID_L3_ADDRESS), dgid, 16)) {
            return false;
        }
    }
    return true;
}

bool vcx_roce_route(VcxState *s, VcxQp *qp, const VcxPkt *pkt)
{
    return vcx_roce_route_gid(s, qp, pkt->dgid);
}

/*
 * Faults
 */

static double vcx_fault_roll(VcxRoceFault *f)
{
    uint64_t x = f->rng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    f->rng = x;
    return ((x * 0x2545f4914f6cdd1dull) >> 11) * (1.0 / 9007199254740992.0);
}

static bool vcx_fault_active(const VcxRoceFault *f, bool tx)
{
    return f && (tx ? f->tx : f->rx) &&
           (f->drop > 0 || f->dup > 0 || f->reorder > 0 || f->corrupt > 0);
}

typedef enum {
    VCX_FAULT_NONE, VCX_FAULT_DROP, VCX_FAULT_CORRUPT, VCX_FAULT_DUP, VCX_FAULT_REORDER,
} VcxFaultKind;

static VcxFaultKind vcx_fault_pick(VcxState *s, VcxRoceFault *f)
{
    VcxRoceStats *st = &vcx_roce(s)->st;

    if (f->drop > 0 && vcx_fault_roll(f) < f->drop) {
        st->fault_drop++;
        return VCX_FAULT_DROP;
    }
    if (f->corrupt > 0 && vcx_fault_roll(f) < f->corrupt) {
        st->fault_corrupt++;
        return VCX_FAULT_CORRUPT;
    }
    if (f->dup > 0 && vcx_fault_roll(f) < f->dup) {
        st->fault_dup++;
        return VCX_FAULT_DUP;
    }
    if (f->reorder > 0 && vcx_fault_roll(f) < f->reorder) {
        return VCX_FAULT_REORDER;       /* counted where a frame is held back */
    }
    return VCX_FAULT_NONE;
}

/* Flip one byte from the BTH on (the last 4 are the ICRC): the ICRC check catches it. */
static void vcx_fault_corrupt(VcxRoceFault *f, uint8_t *c, uint32_t len)
{
    uint32_t tag = len > 14 && lduw_be_p(c + 12) == 0x8100 ? VCX_VLAN_HLEN : 0;
    uint32_t from = MIN(len - 1, VCX_ETH_HLEN + tag + VCX_IP4_HLEN + VCX_UDP_HLEN);

    c[from + (uint32_t)(vcx_fault_roll(f) * (len - from)) % (len - from)] ^= 0x5a;
}

/*
 * Transmit
 */

/* sealed false only for a frame to the port's own MAC (vcx_roce_send) */
static void vcx_roce_wire_out(VcxState *s, const uint8_t *f, uint32_t len, bool sealed)
{
    VcxRoceStats *st = &vcx_roce(s)->st;
    bool group = f[0] & 1, own = !memcmp(f, s->port.mac, 6);

    st->tx_pkts++;
    st->tx_bytes += len;
    vcx_nic_count_roce(s, f, len, true);        /* QUERY_VPORT_COUNTER's transmitted_ib_* */
    if (s->params.loopback_frames && (group || own)) {
        vcx_nic_loopback_roce(s, f, len, sealed);
        if (own) {
            return;
        }
    }
    if (s->nic) {
        vcx_pcnt_tx(s, f, len);
        qemu_send_packet(qemu_get_queue(s->nic), f, len);
    } else {
        trace_vcx_roce_tx_drop(len, "no netdev");
    }
}

static void vcx_roce_release_tx(VcxState *s)
{
    VcxRoceDev *r = vcx_roce(s);

    if (r->held_tx) {
        uint8_t *h = r->held_tx;

        r->held_tx = NULL;
        vcx_roce_wire_out(s, h, r->held_tx_len, true);
        g_free(h);
    }
}

static void vcx_roce_xmit(VcxState *s, const uint8_t *f, uint32_t len, bool sealed)
{
    VcxRoceFault *fl = s->wire_fault;
    VcxRoceDev *r = vcx_roce(s);
    uint8_t c[VCX_ROCE_FRAME_MAX] VCX_NOINIT;

    if (!vcx_port_oper_up(s)) {
        trace_vcx_roce_tx_drop(len, "port down");
        return;
    }
    if (vcx_fault_active(fl, true)) {
        switch (vcx_fault_pick(s, fl)) {
        case VCX_FAULT_DROP:
            trace_vcx_roce_fault("tx", "drop", len);
            return;
        case VCX_FAULT_CORRUPT:
            memcpy(c, f, len);
            vcx_fault_corrupt(fl, c, len);
            trace_vcx_roce_fault("tx", "corrupt", len);
            f = c;
            break;
        case VCX_FAULT_DUP:
            trace_vcx_roce_fault("tx", "dup", len);
            vcx_roce_wire_out(s, f, len, sealed);
            break;
        case VCX_FAULT_REORDER:
            if (!r->held_tx) {
                trace_vcx_roce_fault("tx", "reorder", len);
                r->st.fault_reorder++;
                r->held_tx = g_memdup2(f, len);
                r->held_tx_len = len;
                return;
            }
            break;
        default:
            break;
        }
    }
    vcx_roce_wire_out(s, f, len, sealed);
    vcx_roce_release_tx(s);
}

void vcx_roce_send(VcxState *s, const VcxWireAddr *a, const VcxRocePkt *p)
{
    uint8_t f[VCX_ROCE_FRAME_MAX] VCX_NOINIT;
    /* unseen between build and check: to the port itself, no fault either way */
    bool sealed = !s->params.loopback_frames || memcmp(a->dmac, s->port.mac, 6) ||
                  vcx_fault_active(s->wire_fault, true) ||
                  vcx_fault_active(s->wire_fault, false);
    uint32_t len = vcx_roce_build(f, a, p, sealed);

    trace_vcx_roce_tx(p->opcode, p->dqpn, p->psn, p->len, len);
    vcx_roce_xmit(s, f, len, sealed);
}

/* An ACKNOWLEDGE of an RC QP's responder: ACK, RNR NAK or NAK with this syndrome. */
void vcx_roce_send_aeth(VcxState *s, VcxQp *qp, uint8_t synd, uint32_t psn)
{
    VcxWireAddr a;
    VcxRocePkt p = {
        .opcode = vcx_roce_rc_transport(qp) | IB_OP_ACKNOWLEDGE, .pkey = VCX_DEFAULT_PKEY,
        .dqpn = qp->remote_qpn, .psn = psn & VCX_PSN_MASK, .aeth_synd = synd,
        .msn = qp->msn,
    };

    vcx_roce_addr_path(s, qp, &a);
    vcx_roce_send(s, &a, &p);
}

/*
 * Coalesced ACKs and READ responses: QPs named by number and incarnation.
 */

static void vcx_roce_flush_acks(VcxState *s)
{
    VcxRoceDev *r = vcx_roce(s);

    for (uint32_t i = 0; i < r->nacks; i++) {
        VcxQp *qp = vcx_qp_get(s, r->acks[i].qpn);
        VcxWireResp *wr;

        if (!qp || qp->gen != r->acks[i].gen) {
            continue;
        }
        wr = &qp->xs->wresp;
        wr->ack_queued = false;
        /* behind READ responses still to send, it goes after them (vcx-roce-resp.c) */
        if (wr->ack_due && vcx_qp_receiving(qp) && !wr->rd_active) {
            wr->ack_due = false;
            r->st.acks_sent++;
            vcx_roce_send_aeth(s, qp, VCX_AETH_ACK, wr->ack_psn);
        }
    }
    r->nacks = 0;
}

void vcx_roce_queue_ack(VcxState *s, VcxQp *qp)
{
    VcxRoceDev *r = vcx_roce(s);
    VcxWireResp *wr = &qp->xs->wresp;

    if (wr->ack_queued) {
        return;
    }
    if (r->nacks == VCX_ROCE_LIST_MAX) {
        vcx_roce_flush_acks(s);
    }
    r->acks[r->nacks++] = (VcxRoceQpRef) { qp->qpn, qp->gen };
    wr->ack_queued = true;
}

void vcx_roce_queue_read(VcxState *s, VcxQp *qp)
{
    VcxRoceDev *r = vcx_roce(s);
    VcxWireResp *wr = &qp->xs->wresp;

    if (wr->rd_queued) {
        return;
    }
    if (r->nreads == VCX_ROCE_LIST_MAX) {
        /* more QPs answering READs than the list holds: the requester asks again */
        trace_vcx_roce_rx_drop(0, qp->qpn, "READ response list full");
        wr->rd_active = false;
        return;
    }
    r->reads[r->nreads++] = (VcxRoceQpRef) { qp->qpn, qp->gen };
    wr->rd_queued = true;
    qemu_bh_schedule(s->objs->bh);
}

bool vcx_roce_pending(VcxState *s)
{
    VcxRoceDev *r = vcx_roce(s);

    return r && (r->nreads || r->held_tx || r->held_rx);
}

/* READ responses wait to be sent (vcx_roce_run). */
bool vcx_roce_reads_pending(VcxState *s)
{
    VcxRoceDev *r = vcx_roce(s);

    return r && r->nreads;
}

/* The executor's RoCE work: READ responses, within the budget; true if some are left. */
bool vcx_roce_run(VcxState *s, VcxBudget *b)
{
    VcxRoceDev *r = vcx_roce(s);
    uint32_t keep = 0;

    for (uint32_t i = 0; i < r->nreads; i++) {
        VcxQp *qp = vcx_qp_get(s, r->reads[i].qpn);

        if (!qp || qp->gen != r->reads[i].gen) {
            continue;
        }
        if (b->bytes && b->wqes && vcx_roce_read_run(s, qp, b)) {
            r->reads[keep++] = r->reads[i];
        } else if (qp->xs->wresp.rd_active) {
            r->reads[keep++] = r->reads[i];     /* out of budget: the next run */
        } else {
            qp->xs->wresp.rd_queued = false;
        }
    }
    r->nreads = keep;
    return keep != 0;
}

/*
 * Receive
 */

/* One frame: false if it was dropped before reaching a QP. */
static bool vcx_roce_rx_one(VcxState *s, const uint8_t *f, uint32_t len, bool sealed)
{
    VcxRoceStats *st = &vcx_roce(s)->st;
    VcxRocePkt p;
    VcxQp *qp;

    st->rx_pkts++;
    st->rx_bytes += len;
    if (!vcx_roce_parse(s, f, len, sealed, &p)) {
        return false;
    }
    vcx_nic_count_roce(s, f, len, false);       /* a RoCE packet of the port: received_ib_* */
    trace_vcx_roce_rx(p.opcode, p.dqpn, p.psn, p.len);
    if (p.dqpn == VCX_MCAST_QPN && (p.opcode & ~IB_OP_MASK) == IB_TRANSPORT_UD &&
        vcx_gid_is_mcast(p.dgid)) {
        return vcx_roce_mcg_rx(s, &p);  /* every QP attached to the group */
    }
    qp = vcx_qp_by_wire_qpn(s, p.dqpn);
    if (!qp) {
        st->bad_qp++;
        trace_vcx_roce_rx_drop(p.opcode, p.dqpn, "no such QP");
        return false;
    }
    if (p.flags & (VCX_OPF_ACK | VCX_OPF_READ_RESP)) {
        /* RC answers to an RC QP, XRC answers to an XRC initiator */
        if (!vcx_qp_is_rc_requester(qp) ||
            (p.opcode & ~IB_OP_MASK) != vcx_roce_rc_transport(qp)) {
            st->bad_qp++;
            trace_vcx_roce_rx_drop(p.opcode, p.dqpn,
                                   "answer for a QP not RC nor XRC initiator");
            return false;
        }
        vcx_roce_req_rx(s, qp, &p);
    } else {
        vcx_roce_resp_rx(s, qp, &p);
    }
    return true;
}

static void vcx_roce_release_rx(VcxState *s)
{
    VcxRoceDev *r = vcx_roce(s);

    if (r->held_rx) {
        uint8_t *h = r->held_rx;

        r->held_rx = NULL;
        vcx_roce_rx_one(s, h, r->held_rx_len, true);
        g_free(h);
    }
}

/*
 * A RoCEv2 frame from the wire (vcx-nic-rx.c), in the executor: false if it was dropped
 * before reaching a QP (the NIC counts those in roce_rx_drop).
 */
bool vcx_roce_rx(VcxState *s, const uint8_t *f, uint32_t len, bool sealed)
{
    bool ok;

    VcxRoceFault *fl = s->wire_fault;
    VcxRoceDev *r = vcx_roce(s);
    uint8_t c[VCX_ROCE_FRAME_MAX] VCX_NOINIT;

    if (len > sizeof(c)) {
        r->st.rx_pkts++;
        r->st.malformed++;
        trace_vcx_roce_rx_drop(0, 0, "longer than any RoCEv2 frame");
        return false;
    }
    if (vcx_fault_active(fl, false)) {
        if (!sealed) {
            /* looped before the fault was set: its ICRC must catch a corruption */
            memcpy(c, f, len);
            vcx_roce_icrc_seal(c, len);
            f = c;
            sealed = true;
        }
        switch (vcx_fault_pick(s, fl)) {
        case VCX_FAULT_DROP:
            trace_vcx_roce_fault("rx", "drop", len);
            return false;
        case VCX_FAULT_CORRUPT:
            if (f != c) {
                memcpy(c, f, len);
            }
            vcx_fault_corrupt(fl, c, len);
            trace_vcx_roce_fault("rx", "corrupt", len);
            f = c;
            break;
        case VCX_FAULT_DUP:
            trace_vcx_roce_fault("rx", "dup", len);
            vcx_roce_rx_one(s, f, len, sealed);
            break;
        case VCX_FAULT_REORDER:
            if (!r->held_rx) {
                trace_vcx_roce_fault("rx", "reorder", len);
                r->st.fault_reorder++;
                r->held_rx = g_memdup2(f, len);
                r->held_rx_len = len;
                return true;
            }
            break;
        default:
            break;
        }
    }
    ok = vcx_roce_rx_one(s, f, len, sealed);
    vcx_roce_release_rx(s);
    return ok;
}

/* The end of a batch of received frames: the coalesced ACKs go out. */
void vcx_roce_rx_end(VcxState *s)
{
    if (vcx_roce(s)) {
        vcx_roce_flush_acks(s);
    }
}

/* The end of an executor run: frames the reorder fault held back go now. */
void vcx_roce_run_end(VcxState *s)
{
    if (vcx_roce(s)) {
        vcx_roce_release_rx(s);
        vcx_roce_flush_acks(s);
        vcx_roce_release_tx(s);
    }
}

/* The QP entered ERR: its wire message and responder state end. */
void vcx_roce_qp_err(VcxState *s, VcxQp *qp)
{
    VcxWireResp *wr = &qp->xs->wresp;

    vcx_roce_req_err(qp);
    qp->xs->req.wire = false;
    wr->in_msg = false;
    wr->rd_active = false;
    wr->ack_due = false;
    wr->nak_due = false;
}

/*
 * Lifecycle, state, property
 */

void vcx_roce_init(VcxState *s)
{
    s->objs->roce = g_new0(VcxRoceDev, 1);
}

void vcx_roce_reset(VcxState *s)
{
    VcxRoceDev *r = vcx_roce(s);

    if (!r) {
        return;
    }
    g_free(r->held_tx);
    g_free(r->held_rx);
    r->held_tx = r->held_rx = NULL;
    r->nacks = r->nreads = 0;
    vcx_roce_mcg_reset(s);
}

void vcx_roce_fini(VcxState *s)
{
    vcx_roce_reset(s);
    g_free(s->objs->roce);
    s->objs->roce = NULL;
}

char *vcx_roce_state(VcxState *s)
{
    VcxRoceStats *t = &vcx_roce(s)->st;

    return g_strdup_printf(
        "roce_tx_pkts=%" PRIu64 " roce_tx_bytes=%" PRIu64 " roce_rx_pkts=%" PRIu64
        " roce_rx_bytes=%" PRIu64 " roce_icrc_err=%" PRIu64 " roce_malformed=%" PRIu64
        " roce_bad_tver=%" PRIu64 " roce_bad_pkey=%" PRIu64 " roce_bad_qp=%" PRIu64
        " roce_bad_opcode=%" PRIu64 " roce_qkey_err=%" PRIu64
        " out_of_sequence=%" PRIu64 " duplicate_request=%" PRIu64
        " packet_seq_err=%" PRIu64 " implied_nak_seq_err=%" PRIu64
        " local_ack_timeout_err=%" PRIu64 " rnr_nak_retry_err=%" PRIu64
        " rnr_nak_sent=%" PRIu64 " rnr_nak_rcvd=%" PRIu64 " nak_sent=%" PRIu64
        " acks_sent=%" PRIu64 " retransmits=%" PRIu64 " out_of_buffer=%" PRIu64
        " uc_msg_dropped=%" PRIu64 " req_transport_retries_exceeded=%" PRIu64
        " req_rnr_retries_exceeded=%" PRIu64 " fault_drop=%" PRIu64 " fault_dup=%" PRIu64
        " fault_reorder=%" PRIu64 " fault_corrupt=%" PRIu64,
        t->tx_pkts, t->tx_bytes, t->rx_pkts, t->rx_bytes, t->icrc_err, t->malformed,
        t->bad_tver, t->bad_pkey, t->bad_qp, t->bad_opcode, t->qkey_err,
        t->out_of_sequence, t->duplicate_request, t->packet_seq_err,
        t->implied_nak_seq_err, t->local_ack_timeout_err, t->rnr_nak_retry_err,
        t->rnr_nak_sent, t->rnr_nak_rcvd, t->nak_sent, t->acks_sent, t->retransmits,
        t->out_of_buffer, t->uc_msg_dropped, t->req_transport_retries_exceeded,
        t->req_rnr_retries_exceeded, t->fault_drop, t->fault_dup,
        t->fault_reorder, t->fault_corrupt);
}

static char *vcx_fault_text(const VcxRoceFault *f)
{
    return g_strdup_printf("drop=%g,dup=%g,reorder=%g,corrupt=%g,seed=%" PRIu64 ",dir=%s",
                           f->drop, f->dup, f->reorder, f->corrupt, f->seed,
                           f->tx && f->rx ? "both" : f->tx ? "tx" : "rx");
}

static char *vcx_get_wire_fault(Object *obj, Error **errp)
{
    return vcx_fault_text(VCX(obj)->wire_fault);
}

static void vcx_set_wire_fault(Object *obj, const char *value, Error **errp)
{
    VcxState *s = VCX(obj);
    VcxRoceFault f = { .tx = true, .rx = true };
    g_auto(GStrv) parts = g_strsplit(value, ",", 0);

    for (char **p = parts; *p; p++) {
        char *eq = strchr(*p, '=');
        double *frac = NULL;
        char *end;

        if (!**p) {
            continue;
        }
        if (!eq) {
            error_setg(errp, "wire-fault: '%s' is not key=value", *p);
            return;
        }
        *eq++ = 0;
        if (!strcmp(*p, "drop")) {
            frac = &f.drop;
        } else if (!strcmp(*p, "dup")) {
            frac = &f.dup;
        } else if (!strcmp(*p, "reorder")) {
            frac = &f.reorder;
        } else if (!strcmp(*p, "corrupt")) {
            frac = &f.corrupt;
        } else if (!strcmp(*p, "seed")) {
            f.seed = g_ascii_strtoull(eq, &end, 0);
            if (end == eq || *end) {
                error_setg(errp, "wire-fault: seed '%s' is not a number", eq);
                return;
            }
            continue;
        } else if (!strcmp(*p, "dir")) {
            f.tx = !strcmp(eq, "tx") || !strcmp(eq, "both");
            f.rx = !strcmp(eq, "rx") || !strcmp(eq, "both");
            if (!f.tx && !f.rx) {
                error_setg(errp, "wire-fault: dir '%s' is not tx, rx or both", eq);
                return;
            }
            continue;
        } else {
            error_setg(errp, "wire-fault: unknown key '%s' (drop, dup, reorder, corrupt, "
                       "seed, dir)", *p);
            return;
        }
        *frac = g_ascii_strtod(eq, &end);
        if (end == eq || *end || !(*frac >= 0 && *frac <= 1)) {
            error_setg(errp, "wire-fault: %s '%s' is not a fraction 0..1", *p, eq);
            return;
        }
    }
    f.rng = f.seed ? f.seed : 0x9e3779b97f4a7c15ull;
    *s->wire_fault = f;
    trace_vcx_roce_fault_set(f.seed, f.tx, f.rx);
}

/* instance_finalize: the property's state lives as long as the object, not the device */
void vcx_roce_fault_prop_fini(VcxState *s)
{
    g_free(s->wire_fault);
    s->wire_fault = NULL;
}

void vcx_roce_fault_prop_init(VcxState *s)
{
    s->wire_fault = g_new0(VcxRoceFault, 1);
    s->wire_fault->tx = s->wire_fault->rx = true;
    object_property_add_str(OBJECT(s), "wire-fault", vcx_get_wire_fault,
                            vcx_set_wire_fault);
}
