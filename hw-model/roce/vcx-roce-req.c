/*
 * vcx: the RoCEv2 requester (IBTA vol 1 9.7.1 .. 9.7.6).
 *
 * UC and UD (vcx_roce_req_start, vcx_roce_req_run): the WQE's message cut into packets
 * at the path MTU (UD: one packet), sent under the executor's byte budget; the WQE
 * completes once its packets are sent, as on a real wire.
 *
 * RC: a window of WQEs outstanding (VcxWireWin, vcx-roce-qp.h), run by
 * vcx_roce_win_run() in place of the executor's one-WQE-at-a-time loop:
 *   - WQEs start in SQ order while the window has room: at most VCX_WIRE_WIN_MSGS WQEs,
 *     packets at most VCX_WIRE_WIN_PSNS PSNs past the first unacknowledged one, and at
 *     most 2^log_sra_max RDMA READs and atomics (max_rd_atomic). Each takes the next
 *     PSNs (a READ as many as its responses); AckReq is set on the last packet of every
 *     request and on every 64th packet of a long message, so ACKs open the window
 *     before the message ends (Soft-RoCE asks as often);
 *   - a UMR or NOP runs when it starts and completes in order with the rest; a WQE with
 *     a fence waits for the window to be empty (initiator small fence: for the READs and
 *     atomics before it); a WQE that fails before it is sent completes in error once it
 *     is the oldest (completions stay in order), and nothing after it starts meanwhile;
 *   - answers (IBTA 9.7.5.1): an ACK acknowledges every PSN up to its own; a NAK, a READ
 *     response or an atomic ACK at a PSN acknowledges everything before it; a READ or
 *     atomic whose answer is still missing when a later PSN is acknowledged is asked
 *     again (an implied NAK, 9.7.5.1.2); WQEs complete in SQ order as they are done;
 *   - NAK PSN sequence error: go back to its PSN and send from there, WQEs decoded again
 *     from the SQ and payload read again from guest memory (go-back-N);
 *   - RNR NAK: wait the time of its timer field (table 45), then send from its PSN;
 *     rnr_retry times (7: for ever), then RNR_RETRY_EXC_ERR;
 *   - NAK invalid request / remote access / remote operational error: the WQE at that
 *     PSN completes with that error and the QP goes to ERR (the rest are flushed);
 *   - the local ACK timeout (4.096 us << ack_timeout; 0: none) restarts at every step of
 *     progress; when it expires, send again from the first unacknowledged PSN,
 *     retry_count times, then TRANSPORT_RETRY_EXC_ERR;
 *   - READ responses are placed at (PSN - request PSN) * MTU of the local list; a gap
 *     asks again from the first missing response (va and length moved on), whose answer
 *     may start with FIRST or, as the rest of the original READ, with MIDDLE;
 *   - a timeout, a sequence NAK and a READ asked again each spend one of retry_count; an
 *     answer that moves the first unacknowledged PSN on gives it all back (9.7.6.1.3;
 *     Soft-RoCE does the same).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "vcx-roce.h"
#include "../nic/vcx-nic.h"
#include "hw/vcx/trace.h"

#define VCX_WIRE_ACKREQ_EVERY   64u     /* packets of a message between two AckReq */
#define VCX_PSN_HALF            0x800000u

/* A cursor at byte off of a list. */
static void vcx_sgl_seek(VcxSglCursor *c, const VcxSgl *l, uint64_t off)
{
    c->sgl = l;
    c->i = 0;
    c->off = 0;
    while (c->i < l->n && off >= l->sge[c->i].len) {
        off -= l->sge[c->i].len;
        c->i++;
    }
    c->off = off;
}

static uint32_t vcx_psn_sub(uint32_t a, uint32_t b)
{
    return (a - b) & VCX_PSN_MASK;
}

static uint32_t vcx_path_mtu(const VcxQp *qp)
{
    return 128u << MIN(MAX(qp->mtu, 1), 5);
}

/* The opcode of packet i of n of a SEND or WRITE whose ONLY opcode is only. */
static uint8_t vcx_wire_data_op(uint8_t only, uint32_t i, uint32_t n)
{
    uint8_t t = only & ~IB_OP_MASK, op = only & IB_OP_MASK;
    bool write = op == IB_OP_WRITE_ONLY || op == IB_OP_WRITE_ONLY_IMM;

    if (n == 1) {
        return only;
    }
    if (i == 0) {
        return t | (write ? IB_OP_WRITE_FIRST : IB_OP_SEND_FIRST);
    }
    if (i + 1 < n) {
        return t | (write ? IB_OP_WRITE_MIDDLE : IB_OP_SEND_MIDDLE);
    }
    switch (op) {
    case IB_OP_WRITE_ONLY:
        return t | IB_OP_WRITE_LAST;
    case IB_OP_WRITE_ONLY_IMM:
        return t | IB_OP_WRITE_LAST_IMM;
    case IB_OP_SEND_ONLY_IMM:
        return t | IB_OP_SEND_LAST_IMM;
    case IB_OP_SEND_ONLY_INV:
        return t | IB_OP_SEND_LAST_INV;
    default:
        return t | IB_OP_SEND_LAST;
    }
}

/*
 * Loopback without frames (loopback-frames off): vcx_xport_transmit() moves a message to
 * a QP of the port whole, and the vport's ib counters take the frames a ConnectX loops
 * for it, as with loopback-frames on: each frame once sent and once received. They are
 * the frames this file and the responder build: the request cut at the path MTU (a UD
 * message is one frame), one ACK or NAK per RC message (AckReq comes with its last
 * packet; VCX_WIRE_ACKREQ_EVERY packets of a longer one would ask for more), a READ's
 * responses at the path MTU, one atomic ACK. Their Ethernet, IP and UDP headers are
 * those of the request's source GID entry, for the responses too: the paths of a looped
 * pair name GIDs of the same port, mirror images of each other. Unicast: a multicast
 * datagram's local copy is counted where it is made (vcx_roce_mcg_loopback).
 */

/* Octets of the n frames (n >= 1) of len payload bytes at mtu; packet i's opcode op. */
static uint64_t vcx_loop_octets(uint32_t outer, uint8_t (*op)(uint8_t, uint32_t, uint32_t),
                                uint8_t only, uint32_t n, uint64_t len, uint32_t mtu)
{
    uint64_t o;

    if (n == 1) {
        return vcx_roce_frame_len(outer, op(only, 0, 1), len);
    }
    o = vcx_roce_frame_len(outer, op(only, 0, n), mtu) +
        vcx_roce_frame_len(outer, op(only, n - 1, n), len - (uint64_t)(n - 1) * mtu);
    if (n > 2) {
        o += (uint64_t)(n - 2) * vcx_roce_frame_len(outer, op(only, 1, n), mtu);
    }
    return o;
}

static uint32_t vcx_loop_npkts(uint64_t len, uint32_t mtu)
{
    return MAX(DIV_ROUND_UP(len, mtu), 1);
}

/*
 * The request's frames (answer false; their outer bytes kept in rq->loop_outer) or
 * those of the answer in rq->ack (true).
 */
void vcx_roce_count_whole(VcxState *s, VcxQp *qp, VcxReq *rq, bool answer)
{
    const VcxPkt *m = &rq->pkt;
    uint8_t op = m->opcode & IB_OP_MASK, t = m->opcode & ~IB_OP_MASK;
    bool dgram = vcx_qp_is_dgram(qp);
    uint32_t mtu = dgram ? 4096 : vcx_path_mtu(qp), n = 1;
    uint64_t octets;

    if (!answer) {
        rq->loop_outer = vcx_roce_frame_outer_gid(s, dgram ?
            vcx_get(m->av, VCX_WQE_AV_SGID_INDEX) :
            vcx_get(qp->qpc + VCX_QPC_PRI_PATH_AT, VCX_ADS_SRC_ADDR_INDEX));
        if (op == IB_OP_READ_REQUEST || op == IB_OP_COMPARE_SWAP || op == IB_OP_FETCH_ADD) {
            octets = vcx_roce_frame_len(rq->loop_outer, m->opcode, 0);
        } else {
            n = dgram ? 1 : vcx_loop_npkts(m->len, mtu);
            octets = vcx_loop_octets(rq->loop_outer, vcx_wire_data_op, m->opcode, n, m->len,
                                     mtu);
        }
    } else if (!vcx_qp_reliable(qp) || rq->ack.type == VCX_NO_RESPONSE) {
        return;
    } else if (rq->ack.type == VCX_ACK && op == IB_OP_READ_REQUEST) {
        n = vcx_loop_npkts(m->dma_len, mtu);
        octets = vcx_loop_octets(rq->loop_outer, vcx_roce_read_resp_op, t, n, m->dma_len,
                                 mtu);
    } else if (rq->ack.type == VCX_ACK &&
               (op == IB_OP_COMPARE_SWAP || op == IB_OP_FETCH_ADD)) {
        octets = vcx_roce_frame_len(rq->loop_outer, t | IB_OP_ATOMIC_ACK, 0);
    } else {
        octets = vcx_roce_frame_len(rq->loop_outer, t | IB_OP_ACKNOWLEDGE, 0); /* or NAK */
    }
    vcx_nic_count_roce_looped(s, n, octets);
}

/*
 * Packet i of n of the SEND or WRITE message rq decoded, at first_psn + i: its payload
 * read from the gather list at i * mtu. False if the payload could not be read.
 */
static bool vcx_wire_send_data(VcxState *s, const VcxReq *rq, const VcxWireAddr *a,
                               uint32_t first_psn, uint32_t i, uint32_t n, uint32_t mtu,
                               bool reliable, VcxBudget *b)
{
    const VcxPkt *m = &rq->pkt;
    uint64_t off = (uint64_t)i * mtu;
    uint8_t buf[4096] VCX_NOINIT;
    VcxSglCursor c;
    VcxRocePkt p = {
        .opcode = vcx_wire_data_op(m->opcode, i, n),
        .pkey = VCX_DEFAULT_PKEY,
        .dqpn = m->dqpn,
        .psn = (first_psn + i) & VCX_PSN_MASK,
        .ackreq = reliable && (i + 1 == n || (i + 1) % VCX_WIRE_ACKREQ_EVERY == 0),
        .se = m->se && i + 1 == n,
        .qkey = m->qkey,
        .sqpn = m->sqpn,
        .xrc_srqn = m->xrc_srqn,
        .imm = m->inv_rkey ? m->inv_rkey : m->imm,
        .len = MIN(m->len - MIN(off, m->len), mtu),
        .payload = buf,
    };

    if (i == 0) {
        p.va = m->va;
        p.rkey = m->rkey;
        p.dma_len = m->len;
    }
    vcx_sgl_seek(&c, &rq->sgl, off);
    if (p.len && vcx_sgl_io(s, &c, buf, p.len, false) != MEMTX_OK) {
        return false;
    }
    vcx_roce_send(s, a, &p);
    b->bytes -= MIN(b->bytes, MAX(p.len, 1u));
    return true;
}

/*
 * UC and UD
 */

void vcx_roce_req_start(VcxState *s, VcxQp *qp, VcxReq *rq)
{
    VcxWireReq *w = &qp->xs->wreq;
    const VcxPkt *pkt = &rq->pkt;

    memset(w, 0, sizeof(*w));
    w->sending = true;
    w->first_psn = pkt->psn;
    if (vcx_qp_is_dgram(qp)) {
        w->mtu = 4096;
        w->npkts = 1;
        vcx_roce_addr_av(s, qp, pkt->av, vcx_gid_entry(s, vcx_get(pkt->av,
                                                                   VCX_WQE_AV_SGID_INDEX)),
                         &w->addr);
    } else {
        w->mtu = vcx_path_mtu(qp);
        w->npkts = MAX(DIV_ROUND_UP(pkt->len, w->mtu), 1);
        vcx_roce_addr_path(s, qp, &w->addr);
        rq->pkt.npkts = w->npkts;       /* the PSNs vcx_req_answer() moves on by */
    }
    rq->wire = true;
    trace_vcx_roce_req_start(qp->qpn, pkt->opcode, w->first_psn, w->npkts, pkt->len);
}

VcxStep vcx_roce_req_run(VcxState *s, VcxQp *qp, VcxReq *rq, VcxBudget *b)
{
    VcxWireReq *w = &qp->xs->wreq;

    while (w->sending && w->next < w->npkts) {
        if (!b->bytes) {
            return VCX_STEP_MORE;
        }
        if (!vcx_wire_send_data(s, rq, &w->addr, w->first_psn, w->next, w->npkts, w->mtu,
                                false, b)) {
            w->sending = false;
            rq->wire = false;
            vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_LOCAL_PROT_ERR,
                         "payload not readable");
            return VCX_STEP_STOP;
        }
        w->next++;
    }
    w->sending = false;
    rq->wire = false;
    rq->ack.type = VCX_ACK;
    return VCX_STEP_ANSWER;
}

/*
 * RC: the window
 */

static VcxWireMsg *vcx_win_msg(VcxWireWin *w, uint32_t k)
{
    return &w->msg[(w->head + k) % VCX_WIRE_WIN_MSGS];
}

/* The first PSN not acknowledged. */
static uint32_t vcx_win_una(VcxWireWin *w)
{
    return w->n ? (vcx_win_msg(w, 0)->first_psn + w->acked) & VCX_PSN_MASK : w->psn_hi;
}

bool vcx_roce_win_busy(const VcxQp *qp)
{
    return qp->xs->win && qp->xs->win->n;
}

/*
 * An RC QP or XRC initiator whose path leads off the port (or with WQEs still in its
 * window).
 */
bool vcx_roce_win_wants(VcxState *s, VcxQp *qp)
{
    if (!vcx_qp_is_rc_requester(qp)) {
        return false;
    }
    return vcx_roce_win_busy(qp) ||
           vcx_roce_route_gid(s, qp, qp->qpc + VCX_QPC_PRI_PATH_AT +
                                     VCX_FLD_BYTE(VCX_ADS_RGID_RIP));
}

void vcx_roce_win_free(VcxQp *qp)
{
    VcxWireWin *w = qp->xs ? qp->xs->win : NULL;

    if (w) {
        g_free(w->tq);
        g_free(w);
        qp->xs->win = NULL;
    }
}

/* The QP entered ERR: the window is gone (its WQEs are flushed from sq_ci on). */
static void vcx_win_clear(VcxQp *qp)
{
    VcxWireWin *w = qp->xs->win;

    if (w) {
        w->n = 0;
        w->timer = w->rnr = false;
        w->tq_valid = w->hq_valid = false;
    }
}

/* The local ACK timer, (re)started: progress was made or the first packet went out. */
static void vcx_win_arm(VcxQp *qp, VcxWireWin *w)
{
    uint32_t t = vcx_get(qp->qpc + VCX_QPC_PRI_PATH_AT, VCX_ADS_ACK_TIMEOUT);

    if (!t) {
        return;                 /* no timeout: the requester waits for ever (IBTA) */
    }
    w->timer = true;
    qp->rnr_wait = true;
    vcx_qp_timer_arm(qp, 4096LL << MIN(t, 31u), true);
}

static void vcx_win_disarm(VcxQp *qp, VcxWireWin *w)
{
    w->timer = false;
    qp->rnr_wait = false;
    timer_del(qp->rnr_timer);
}

/* The WQE whose packets go out next, decoded from the SQ (again); NULL if it fails now. */
static VcxReq *vcx_win_tq(VcxState *s, VcxQp *qp, VcxWireWin *w, const VcxWireMsg *m)
{
    if (w->tq_valid && w->tq->index == m->index) {
        return w->tq;
    }
    w->tq_valid = vcx_req_decode(s, qp, w->tq, m->index) == VCX_DEC_MSG;
    return w->tq_valid ? w->tq : NULL;
}

/* The oldest WQE decoded (a READ's scatter list, an atomic's result buffer). */
static VcxReq *vcx_win_hq(VcxState *s, VcxQp *qp, VcxWireWin *w)
{
    const VcxWireMsg *m = vcx_win_msg(w, 0);
    VcxReq *rq = &qp->xs->req;

    if (w->tq_valid && w->tq->index == m->index) {
        return w->tq;
    }
    if (!(w->hq_valid && rq->index == m->index)) {
        w->hq_valid = vcx_req_decode(s, qp, rq, m->index) == VCX_DEC_MSG;
    }
    return w->hq_valid ? rq : NULL;
}

/* The oldest WQE completes with an error CQE and the QP goes to ERR. */
static void vcx_win_fail(VcxState *s, VcxQp *qp, VcxWireWin *w, uint8_t synd,
                         const char *why)
{
    const VcxWireMsg *m = vcx_win_msg(w, 0);

    trace_vcx_roce_req_done(qp->qpn, why);
    if (synd == VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR) {
        vcx_roce(s)->st.req_transport_retries_exceeded++;
    } else if (synd == VCX_CQE_SYND_RNR_RETRY_EXC_ERR) {
        vcx_roce(s)->st.req_rnr_retries_exceeded++;
    }
    vcx_req_fail(s, qp, m->nbb, m->opcode, synd, why);     /* clears the window */
}

/*
 * Complete the oldest WQEs that are done, in SQ order; false if one of them failed (the
 * QP is in ERR then).
 */
static bool vcx_win_retire(VcxState *s, VcxQp *qp, VcxWireWin *w)
{
    while (w->n) {
        VcxWireMsg *m = vcx_win_msg(w, 0);

        if (m->kind == VCX_WMSG_LOCAL && m->synd) {
            vcx_win_fail(s, qp, w, m->synd, m->why);
            return false;
        }
        if (m->kind != VCX_WMSG_LOCAL && w->acked < m->npkts) {
            break;
        }
        vcx_req_post_cqe(s, qp, m->index, m->opcode, m->fm_ce_se, m->byte_cnt);
        qp->sq_ci += m->nbb;
        if (m->kind == VCX_WMSG_READ || m->kind == VCX_WMSG_ATOMIC) {
            w->rd_out--;
        }
        trace_vcx_roce_req_done(qp->qpn, "ACK");
        w->head = (w->head + 1) % VCX_WIRE_WIN_MSGS;
        w->n--;
        w->acked = 0;
        w->reissued = false;
        w->req_from = 0;
        w->hq_valid = false;
        if (w->tx) {
            w->tx--;
        } else {
            w->tx_pkt = 0;
        }
        /* the next WQE gets the whole of both retry counts, as each WQE does */
        qp->retry_left = qp->retry_count;
        qp->rnr_left = qp->rnr_retry;
    }
    if (!w->n) {
        vcx_win_disarm(qp, w);
        w->rnr = false;
    }
    return true;
}

/* Send again from PSN psn (in the window): the WQE holding it, from that packet. */
static void vcx_win_goback(VcxWireWin *w, uint32_t psn)
{
    uint32_t k;

    for (k = 0; k < w->n; k++) {
        const VcxWireMsg *m = vcx_win_msg(w, k);

        if (m->kind != VCX_WMSG_LOCAL && vcx_psn_sub(psn, m->first_psn) < m->npkts) {
            break;
        }
    }
    w->tx = k;
    w->tx_pkt = k < w->n ? vcx_psn_sub(psn, vcx_win_msg(w, k)->first_psn) : 0;
    if (k == 0 && vcx_win_msg(w, 0)->kind == VCX_WMSG_READ) {
        w->tx_pkt = w->acked;           /* a READ asks from its first missing response */
    }
}

/*
 * The oldest WQE is a READ or atomic whose answer is missing although a later PSN was
 * answered: ask again (an implied NAK, IBTA 9.7.5.1.2), once until data flows again.
 * It spends one of retry_count. False if the retries were spent (the QP is in ERR).
 */
static bool vcx_win_implied_nak(VcxState *s, VcxQp *qp, VcxWireWin *w)
{
    if (w->reissued) {
        return true;
    }
    vcx_roce(s)->st.implied_nak_seq_err++;
    vcx_qp_qc(s, qp, VCX_QC_IMPLIED_NAK_SEQ_ERR);
    if (!qp->retry_left) {
        vcx_win_fail(s, qp, w, VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR,
                     "READ or atomic answer missing, retries exhausted");
        return false;
    }
    qp->retry_left--;
    vcx_roce(s)->st.retransmits++;
    w->reissued = true;
    vcx_win_goback(w, vcx_win_una(w));
    trace_vcx_roce_req_resend(qp->qpn, vcx_win_una(w));
    vcx_xport_kick(s, qp);
    return true;
}

/*
 * Every PSN before psn is acknowledged (an ACK of psn - 1, or what a NAK, READ response
 * or atomic ACK at psn says of the PSNs before it): complete what that finishes. A READ
 * or atomic before psn still without its answer is asked again. True if the oldest WQE
 * then starts at psn or after it (or the window is empty); false otherwise, or if the QP
 * went to ERR (check qp->state).
 */
static bool vcx_win_acked_before(VcxState *s, VcxQp *qp, VcxWireWin *w, uint32_t psn)
{
    uint32_t una0 = vcx_win_una(w);

    while (w->n) {
        VcxWireMsg *m = vcx_win_msg(w, 0);
        uint32_t d = vcx_psn_sub(psn, m->first_psn);

        if (m->kind == VCX_WMSG_LOCAL) {
            if (!vcx_win_retire(s, qp, w)) {
                return false;
            }
            continue;
        }
        if (d == 0 || d >= VCX_PSN_HALF) {
            break;                              /* psn is at or before its first PSN */
        }
        if (m->kind != VCX_WMSG_DATA) {
            vcx_win_implied_nak(s, qp, w);
            return false;
        }
        if (d <= w->acked) {
            break;
        }
        w->acked = MIN(d, m->npkts);
        if (!vcx_win_retire(s, qp, w)) {
            return false;
        }
        if (d < m->npkts) {
            break;
        }
    }
    if (vcx_win_una(w) != una0) {
        qp->retry_left = qp->retry_count;       /* forward progress */
        if (w->n && w->timer && !w->rnr) {
            vcx_win_arm(qp, w);
        }
        vcx_xport_kick(s, qp);                  /* the window has room again */
    }
    return !w->n || vcx_psn_sub(vcx_win_una(w), psn) < VCX_PSN_HALF;
}

/* A READ response for the oldest WQE (a READ), d responses after its first PSN. */
static void vcx_win_read_resp(VcxState *s, VcxQp *qp, VcxWireWin *w, const VcxRocePkt *p,
                              uint32_t d)
{
    VcxWireMsg *m = vcx_win_msg(w, 0);
    uint32_t mtu = vcx_path_mtu(qp);
    VcxReq *rq = vcx_win_hq(s, qp, w);
    uint64_t off = (uint64_t)d * mtu;
    uint32_t want;
    bool last = d + 1 == m->npkts;
    VcxSglCursor c;

    if (!rq) {
        vcx_win_fail(s, qp, w, VCX_CQE_SYND_LOCAL_QP_OP_ERR, "READ WQE changed in the SQ");
        return;
    }
    want = MIN(rq->pkt.dma_len - MIN(off, rq->pkt.dma_len), mtu);
    if (d < w->acked) {
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "READ response already placed");
        return;
    }
    if (d > w->acked) {
        vcx_win_implied_nak(s, qp, w);          /* a response missing: ask from it */
        return;
    }
    /*
     * The responses of the original READ start with FIRST (or ONLY). Those of a READ
     * asked again from the middle may start either way: as a new request (FIRST / ONLY,
     * what vcx's responder sends) or as the rest of the one the responder holds
     * (MIDDLE / LAST, what Soft-RoCE replays); a FIRST anywhere else is out of place.
     */
    if (p->len != want || !!(p->flags & VCX_OPF_LAST) != last ||
        ((p->flags & VCX_OPF_FIRST) && d != w->req_from) ||
        (!(p->flags & VCX_OPF_FIRST) && d == 0)) {
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "READ response length or opcode");
        vcx_roce(s)->st.malformed++;
        return;
    }
    w->reissued = false;
    qp->retry_left = qp->retry_count;           /* forward progress */
    vcx_sgl_seek(&c, &rq->sgl, off);
    if (p->len && vcx_sgl_io(s, &c, (uint8_t *)p->payload, p->len, true) != MEMTX_OK) {
        vcx_win_fail(s, qp, w, VCX_CQE_SYND_LOCAL_PROT_ERR, "read response not deliverable");
        return;
    }
    w->acked = d + 1;
    if (last) {
        vcx_win_retire(s, qp, w);
        vcx_xport_kick(s, qp);
    } else if (w->timer) {
        vcx_win_arm(qp, w);
    }
}

/* The ATOMIC_ACKNOWLEDGE of the oldest WQE (an atomic): its original value, and done. */
static void vcx_win_atomic_ack(VcxState *s, VcxQp *qp, VcxWireWin *w, const VcxRocePkt *p)
{
    VcxReq *rq = vcx_win_hq(s, qp, w);
    VcxSglCursor dst;
    uint8_t v[8];

    if (!rq) {
        vcx_win_fail(s, qp, w, VCX_CQE_SYND_LOCAL_QP_OP_ERR, "atomic WQE changed in the SQ");
        return;
    }
    if (vcx_atomic_big_endian(s)) {
        stq_be_p(v, p->orig);
    } else {
        stq_le_p(v, p->orig);
    }
    dst = (VcxSglCursor) { .sgl = &rq->sgl };
    if (vcx_sgl_io(s, &dst, v, sizeof(v), true) != MEMTX_OK) {
        vcx_win_fail(s, qp, w, VCX_CQE_SYND_LOCAL_PROT_ERR, "atomic result not writable");
        return;
    }
    qp->retry_left = qp->retry_count;
    w->acked = 1;
    vcx_win_retire(s, qp, w);
    vcx_xport_kick(s, qp);
}

/* The window's WQE k whose PSNs hold psn (READ: its responses), or w->n. */
static uint32_t vcx_win_find(VcxWireWin *w, uint32_t psn)
{
    for (uint32_t k = 0; k < w->n; k++) {
        const VcxWireMsg *m = vcx_win_msg(w, k);

        if (m->kind != VCX_WMSG_LOCAL && vcx_psn_sub(psn, m->first_psn) < m->npkts) {
            return k;
        }
    }
    return w->n;
}

/* An answer from the wire: ACK, NAK, READ response, atomic ACK (IBTA 9.7.5.1). */
void vcx_roce_req_rx(VcxState *s, VcxQp *qp, const VcxRocePkt *p)
{
    VcxWireWin *w = qp->xs->win;
    VcxRoceStats *st = &vcx_roce(s)->st;
    uint32_t una, d, span, k;

    if (qp->state != VCX_QP_STATE_RTS || !w || !w->n) {
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "no request waiting for an answer");
        return;
    }
    una = vcx_win_una(w);
    d = vcx_psn_sub(p->psn, una);
    span = vcx_psn_sub(w->psn_hi, una);
    if (p->flags & VCX_OPF_READ_RESP) {
        k = d < span ? vcx_win_find(w, p->psn) : w->n;
        if (k == w->n || vcx_win_msg(w, k)->kind != VCX_WMSG_READ) {
            trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "READ response without its READ");
            return;
        }
        if (!vcx_win_acked_before(s, qp, w, vcx_win_msg(w, k)->first_psn) ||
            qp->state != VCX_QP_STATE_RTS) {
            return;
        }
        vcx_win_read_resp(s, qp, w, p, vcx_psn_sub(p->psn, vcx_win_msg(w, 0)->first_psn));
        return;
    }
    if ((p->opcode & IB_OP_MASK) == IB_OP_ATOMIC_ACK) {
        k = d < span ? vcx_win_find(w, p->psn) : w->n;
        if (k == w->n || vcx_win_msg(w, k)->kind != VCX_WMSG_ATOMIC ||
            (p->aeth_synd >> 5)) {
            trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "atomic ACK without its atomic");
            return;
        }
        if (vcx_win_acked_before(s, qp, w, p->psn) && qp->state == VCX_QP_STATE_RTS) {
            vcx_win_atomic_ack(s, qp, w, p);
        }
        return;
    }
    switch (p->aeth_synd >> 5) {
    case 0:                                     /* ACK: every PSN up to its own */
        if (d >= span) {
            trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "ACK of a PSN not outstanding");
            return;
        }
        vcx_win_acked_before(s, qp, w, (p->psn + 1) & VCX_PSN_MASK);
        return;
    case 1:                                     /* RNR NAK */
        if (d >= span) {
            trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "RNR NAK of a PSN not sent");
            return;
        }
        if (!vcx_win_acked_before(s, qp, w, p->psn) || qp->state != VCX_QP_STATE_RTS) {
            return;
        }
        st->rnr_nak_rcvd++;
        if (qp->rnr_retry != VCX_RNR_INFINITE && !qp->rnr_left) {
            vcx_win_fail(s, qp, w, VCX_CQE_SYND_RNR_RETRY_EXC_ERR, "RNR retries exhausted");
            return;
        }
        /* counted while within rnr_retry; the last one is req_rnr_retries_exceeded */
        st->rnr_nak_retry_err++;
        vcx_qp_qc(s, qp, VCX_QC_RNR_NAK_RETRY_ERR);
        if (qp->rnr_retry != VCX_RNR_INFINITE) {
            qp->rnr_left--;
        }
        vcx_win_goback(w, p->psn);
        w->rnr = true;
        w->rnr_psn = p->psn;
        w->timer = true;
        qp->rnr_wait = true;
        vcx_qp_timer_arm(qp, vcx_rnr_ns(p->aeth_synd & 0x1f), false);
        trace_vcx_roce_req_rnr(qp->qpn, p->psn, p->aeth_synd & 0x1f);
        return;
    case 3:                                     /* NAK */
        /* a NAK names a PSN sent, or the one after the last sent (the one expected) */
        if (d > span) {
            trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "NAK of a packet not sent");
            return;
        }
        if (!vcx_win_acked_before(s, qp, w, p->psn) || qp->state != VCX_QP_STATE_RTS ||
            !w->n) {
            return;
        }
        if ((p->aeth_synd & 0x1f) == 0) {       /* PSN sequence error */
            if (w->rnr && p->psn == w->rnr_psn) {
                return;                 /* the gap an RNR NAK already named: wait for it */
            }
            if (!qp->retry_left) {
                vcx_win_fail(s, qp, w, VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR,
                             "PSN sequence NAKs, retries exhausted");
                return;
            }
            st->packet_seq_err++;       /* within retry_count, as ConnectX counts it */
            vcx_qp_qc(s, qp, VCX_QC_PACKET_SEQ_ERR);
            qp->retry_left--;
            st->retransmits++;
            vcx_win_goback(w, p->psn);
            trace_vcx_roce_req_resend(qp->qpn, p->psn);
            vcx_xport_kick(s, qp);
            return;
        }
        if (d == span) {
            trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "NAK of a packet not sent");
            return;
        }
        switch (p->aeth_synd & 0x1f) {
        case 2:
            vcx_win_fail(s, qp, w, VCX_CQE_SYND_REMOTE_ACCESS_ERR, "remote access NAK");
            return;
        case 3:
            vcx_win_fail(s, qp, w, VCX_CQE_SYND_REMOTE_OP_ERR, "remote operational NAK");
            return;
        default:                        /* 1, and the reserved codes: invalid request */
            vcx_win_fail(s, qp, w, VCX_CQE_SYND_REMOTE_INVAL_REQ_ERR,
                         "invalid request NAK");
            return;
        }
    default:
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "reserved AETH syndrome");
        return;
    }
}

/* Send the request packet at the window's cursor; false if the WQE failed (ERR). */
static bool vcx_win_send(VcxState *s, VcxQp *qp, VcxWireWin *w, VcxWireMsg *m,
                         VcxReq *rq, VcxBudget *b)
{
    uint32_t mtu = vcx_path_mtu(qp), i = w->tx_pkt;
    const VcxPkt *pm = &rq->pkt;
    uint32_t end;

    if (m->kind == VCX_WMSG_DATA) {
        if (!vcx_wire_send_data(s, rq, &w->addr, m->first_psn, i, m->npkts, mtu, true, b)) {
            if (w->tx == 0) {
                vcx_win_fail(s, qp, w, VCX_CQE_SYND_LOCAL_PROT_ERR, "payload not readable");
                return false;
            }
            w->tx_pkt = m->npkts;       /* fails once it is the oldest, sent again */
            return true;
        }
        w->tx_pkt++;
        end = (m->first_psn + i + 1) & VCX_PSN_MASK;
    } else {
        uint64_t off = (uint64_t)i * mtu;
        VcxRocePkt p = {
            .opcode = pm->opcode, .pkey = VCX_DEFAULT_PKEY, .dqpn = pm->dqpn,
            .psn = (m->first_psn + i) & VCX_PSN_MASK, .ackreq = true,
            .va = pm->va + off, .rkey = pm->rkey,
            .dma_len = pm->dma_len - MIN(off, pm->dma_len),
            .swap_add = pm->swap_add, .compare = pm->compare, .xrc_srqn = pm->xrc_srqn,
        };

        if (w->tx == 0) {
            w->req_from = i;
        }
        vcx_roce_send(s, &w->addr, &p);
        b->bytes -= MIN(b->bytes, 1u);
        w->tx_pkt = m->npkts;
        end = (m->first_psn + m->npkts) & VCX_PSN_MASK;
    }
    if (vcx_psn_sub(end, w->psn_hi) < VCX_PSN_HALF) {
        w->psn_hi = end;
    }
    if (!w->timer) {
        vcx_win_arm(qp, w);
    }
    return true;
}

/*
 * Start the WQE at sq_next: true if it joined the window; false if it must wait (window
 * full, fence, max_rd_atomic, a WQE that fails while others are outstanding), or if it
 * failed at once (*stop, the QP is in ERR).
 */
static bool vcx_win_start(VcxState *s, VcxQp *qp, VcxWireWin *w, bool *stop)
{
    VcxReq *rq = w->tq;
    VcxDecode r = vcx_req_decode(s, qp, rq, w->sq_next);
    uint8_t fm = rq->fm_ce_se & VCX_WQE_FM_MASK;
    VcxWireMsg *m;

    w->tq_valid = false;
    if (r == VCX_DEC_FAIL || r == VCX_DEC_CATAS) {
        if (w->n) {
            return false;               /* it completes in order, when it is the oldest */
        }
        if (r == VCX_DEC_CATAS) {
            vcx_qp_catas(s, qp, rq->why);
        } else {
            vcx_req_fail(s, qp, rq->nbb, rq->opcode, rq->synd, rq->why);
        }
        *stop = true;
        return false;
    }
    if (w->n && fm && (fm != VCX_WQE_FM_INITIATOR_SMALL || w->rd_out)) {
        return false;                   /* a fence: the WQEs before it complete first */
    }
    if (r == VCX_DEC_MSG && (rq->opcode == VCX_OPCODE_RDMA_READ ||
                             rq->opcode == VCX_OPCODE_ATOMIC_CS ||
                             rq->opcode == VCX_OPCODE_ATOMIC_FA) &&
        w->rd_out >= (1u << qp->log_sra_max)) {
        return false;                   /* max_rd_atomic READs and atomics outstanding */
    }
    m = vcx_win_msg(w, w->n);
    *m = (VcxWireMsg) {
        .index = w->sq_next, .nbb = rq->nbb, .opcode = rq->opcode,
        .fm_ce_se = rq->fm_ce_se, .byte_cnt = rq->byte_cnt, .first_psn = qp->sq_psn,
    };
    if (r == VCX_DEC_LOCAL) {
        m->kind = VCX_WMSG_LOCAL;
        if (rq->opcode != VCX_OPCODE_NOP) {
            m->synd = vcx_mkey_umr(s, qp->pdn, qp->qpn, qp->st == VCX_QP_ST_REG_UMR,
                                   rq->wqe, rq->end, &m->why);
        }
    } else {
        m->kind = rq->opcode == VCX_OPCODE_RDMA_READ ? VCX_WMSG_READ :
                  (rq->opcode == VCX_OPCODE_ATOMIC_CS ||
                   rq->opcode == VCX_OPCODE_ATOMIC_FA) ? VCX_WMSG_ATOMIC : VCX_WMSG_DATA;
        /* PSNs at the path MTU: a READ takes as many as its responses, an atomic one */
        m->npkts = m->kind == VCX_WMSG_ATOMIC ? 1 :
                   MAX(DIV_ROUND_UP(MAX(rq->pkt.len, rq->pkt.dma_len), vcx_path_mtu(qp)), 1);
        rq->pkt.npkts = m->npkts;
        rq->pkt.psn = m->first_psn;
        if (m->kind != VCX_WMSG_DATA) {
            w->rd_out++;
        }
        w->tq_valid = true;
        trace_vcx_roce_req_start(qp->qpn, rq->pkt.opcode, m->first_psn, m->npkts,
                                 rq->pkt.len);
    }
    qp->sq_psn = (qp->sq_psn + m->npkts) & VCX_PSN_MASK;
    w->sq_next += m->nbb;
    w->n++;
    return true;
}

/*
 * Run the RC QP's window: timers that expired, packets to send (again), WQEs to start.
 * qp->sq_pi was read from the doorbell record by the caller.
 */
VcxWinStep vcx_roce_win_run(VcxState *s, VcxQp *qp, VcxBudget *b)
{
    VcxXportQp *xs = qp->xs;
    VcxRoceStats *st = &vcx_roce(s)->st;
    VcxWireWin *w = xs->win;
    bool stop = false;

    if (!w) {
        w = xs->win = g_new0(VcxWireWin, 1);
        w->tq = g_new0(VcxReq, 1);
    }
    if (!w->n) {
        /* a window starts afresh from sq_ci (the executor's other path may have run) */
        memset(w->msg, 0, sizeof(w->msg));
        w->head = w->tx = w->tx_pkt = w->acked = w->rd_out = 0;
        w->sq_next = qp->sq_ci;
        w->psn_hi = qp->sq_psn;
        w->rnr = w->reissued = w->tq_valid = w->hq_valid = false;
        w->req_from = 0;
        vcx_win_disarm(qp, w);
    }
    vcx_roce_addr_path(s, qp, &w->addr);
    if (w->timer && !qp->rnr_wait) {
        w->timer = false;
        if (w->rnr) {
            w->rnr = false;             /* the RNR wait is over: send from its PSN */
            st->retransmits++;
        } else if (w->n && vcx_win_una(w) != w->psn_hi) {
            trace_vcx_roce_req_timeout(qp->qpn, vcx_win_una(w), qp->retry_left);
            if (!qp->retry_left) {
                vcx_win_fail(s, qp, w, VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR,
                             "local ACK timeout, retries exhausted");
                return VCX_WIN_STOP;
            }
            st->local_ack_timeout_err++;        /* within retry_count */
            vcx_qp_qc(s, qp, VCX_QC_LOCAL_ACK_TIMEOUT_ERR);
            qp->retry_left--;
            st->retransmits++;
            vcx_win_goback(w, vcx_win_una(w));
        }
    }
    if (w->rnr) {
        return VCX_WIN_IDLE;
    }
    for (;;) {
        if (w->tx < w->n) {
            VcxWireMsg *m = vcx_win_msg(w, w->tx);
            VcxReq *rq;

            if (m->kind == VCX_WMSG_LOCAL || w->tx_pkt >= m->npkts) {
                w->tx++;
                w->tx_pkt = 0;
                continue;
            }
            if (vcx_psn_sub((m->first_psn + w->tx_pkt) & VCX_PSN_MASK, vcx_win_una(w)) >=
                VCX_WIRE_WIN_PSNS) {
                break;                  /* the window is full: wait for ACKs */
            }
            if (!b->bytes || !b->wqes) {
                return VCX_WIN_MORE;
            }
            rq = vcx_win_tq(s, qp, w, m);
            if (!rq) {
                if (w->tx == 0) {
                    vcx_win_fail(s, qp, w, w->tq->synd ? w->tq->synd :
                                 VCX_CQE_SYND_LOCAL_QP_OP_ERR,
                                 "WQE no longer valid when sent again");
                    return VCX_WIN_STOP;
                }
                break;                  /* it fails once it is the oldest */
            }
            if (!vcx_win_send(s, qp, w, m, rq, b)) {
                return VCX_WIN_STOP;
            }
            continue;
        }
        if (w->sq_next == qp->sq_pi || !xs->allow || w->n == VCX_WIRE_WIN_MSGS) {
            break;
        }
        if (!b->wqes || !b->bytes) {
            return VCX_WIN_MORE;
        }
        if (!vcx_win_start(s, qp, w, &stop)) {
            if (stop) {
                return VCX_WIN_STOP;
            }
            break;
        }
        b->wqes--;
        xs->allow--;
        if (!vcx_win_retire(s, qp, w)) {        /* a UMR or NOP at the head */
            return VCX_WIN_STOP;
        }
    }
    return VCX_WIN_IDLE;
}

/* The QP entered ERR: its wire requester state ends (vcx-roce-dev.c). */
void vcx_roce_req_err(VcxQp *qp)
{
    qp->xs->wreq.sending = false;
    vcx_win_clear(qp);
}
