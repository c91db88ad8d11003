/*
 * vcx: the RoCEv2 requester (IBTA vol 1 9.7.1 .. 9.7.6): the WQE's message cut into
 * packets at the path MTU (FIRST / MIDDLE / LAST / ONLY, RETH on the first, ImmDt or IETH
 * on the last, AckReq on the last of every RC request), sent under the executor's byte
 * budget, and the answers arriving from the wire:
 *   - ACK (AETH syndrome 000): packets up to its PSN acknowledged; the last one completes
 *     the message;
 *   - NAK PSN sequence error: go back to the NAK's PSN and send from there again, the
 *     payload read again from guest memory at that packet's offset; counts against
 *     retry_count as a timeout does (and so does a READ asked again, below); an ACK or
 *     READ response that moves the first unacknowledged PSN on is forward progress and
 *     gives the message its whole retry_count again (IBTA 9.7.6.1.3; rxe does the same);
 *   - RNR NAK: wait the time of its timer field (table 45), then send from its PSN;
 *     rnr_retry times (7: for ever), then RNR_RETRY_EXC_ERR;
 *   - NAK invalid request / remote access / remote operational error: the WQE completes
 *     with that syndrome (vcx_req_answer);
 *   - the local ACK timeout (4.096 us << ack_timeout; 0: none, the requester waits for
 *     ever): send again from the first unacknowledged PSN, retry_count times, then
 *     TRANSPORT_RETRY_EXC_ERR;
 *   - READ responses: each in PSN order placed at (PSN - request PSN) * MTU of the local
 *     scatter list; a gap re-issues the READ from the first missing PSN (va and length
 *     moved on), whose responses may start with FIRST or, as the rest of the original
 *     READ, with MIDDLE; AtomicAckETH: the original value (vcx_req_answer writes it).
 * One message is in flight per QP (VcxWireReq, vcx-roce-qp.h explains the window that can
 * follow). UC and UD complete once their packets are sent, as on a real wire.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "vcx-roce.h"
#include "hw/vcx/trace.h"

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

static bool vcx_wire_timed(VcxQp *qp)
{
    return vcx_get(qp->qpc + VCX_QPC_PRI_PATH_AT, VCX_ADS_ACK_TIMEOUT) != 0;
}

/* The local ACK timer, (re)started for the message; without a timeout, wait for ever. */
static void vcx_wire_arm(VcxQp *qp)
{
    uint32_t t = vcx_get(qp->qpc + VCX_QPC_PRI_PATH_AT, VCX_ADS_ACK_TIMEOUT);

    qp->rnr_wait = true;
    if (t) {
        timer_mod(qp->rnr_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                                 (4096LL << MIN(t, 31u)));
    }
}

/* The SQ goes on at once (an answer, or a NAK to act on). */
static void vcx_wire_wake(VcxState *s, VcxQp *qp)
{
    qp->rnr_wait = false;
    timer_del(qp->rnr_timer);
    vcx_xport_kick(s, qp);
}

static void vcx_wire_done(VcxState *s, VcxQp *qp, VcxAckType type)
{
    qp->xs->req.ack.type = type;
    qp->xs->wreq.state = VCX_WREQ_DONE;
    trace_vcx_roce_req_done(qp->qpn, vcx_ack_names[type]);
    vcx_wire_wake(s, qp);
}

static void vcx_wire_fail(VcxState *s, VcxQp *qp, uint8_t synd, const char *why)
{
    VcxReq *rq = &qp->xs->req;

    qp->xs->wreq.state = VCX_WREQ_IDLE;
    rq->wire = false;
    vcx_req_fail(s, qp, rq->nbb, rq->opcode, synd, why);
}

void vcx_roce_req_start(VcxState *s, VcxQp *qp, VcxReq *rq)
{
    VcxWireReq *w = &qp->xs->wreq;
    const VcxPkt *pkt = &rq->pkt;
    uint8_t op = pkt->opcode & IB_OP_MASK;

    memset(w, 0, sizeof(*w));
    w->state = VCX_WREQ_SEND;
    w->reliable = vcx_qp_reliable(qp);
    w->read = op == IB_OP_READ_REQUEST;
    w->atomic = op == IB_OP_COMPARE_SWAP || op == IB_OP_FETCH_ADD;
    w->first_psn = pkt->psn;
    if (vcx_qp_is_dgram(qp)) {
        w->mtu = 4096;
        w->npkts = 1;
        vcx_roce_addr_av(s, qp, pkt->av, vcx_gid_entry(s, vcx_get(pkt->av,
                                                                   VCX_WQE_AV_SGID_INDEX)),
                         &w->addr);
    } else {
        w->mtu = 128u << MIN(MAX(qp->mtu, 1), 5);
        w->npkts = MAX(DIV_ROUND_UP(MAX(pkt->len, pkt->dma_len), w->mtu), 1);
        if (w->atomic) {
            w->npkts = 1;
        }
        vcx_roce_addr_path(s, qp, &w->addr);
        rq->pkt.npkts = w->npkts;       /* the PSNs vcx_req_answer() moves on by */
    }
    rq->wire = true;
    trace_vcx_roce_req_start(qp->qpn, pkt->opcode, w->first_psn, w->npkts, pkt->len);
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

/* Send packet i of the message; false if its payload could not be read (WQE failed). */
static bool vcx_wire_send_pkt(VcxState *s, VcxQp *qp, VcxReq *rq, uint32_t i,
                              VcxBudget *b)
{
    VcxWireReq *w = &qp->xs->wreq;
    const VcxPkt *m = &rq->pkt;
    uint8_t buf[4096];
    VcxRocePkt p = {
        .pkey = VCX_DEFAULT_PKEY,
        .dqpn = m->dqpn,
        .psn = (w->first_psn + i) & VCX_PSN_MASK,
        .ackreq = w->reliable && i + 1 == w->npkts,
        .qkey = m->qkey,
        .sqpn = m->sqpn,
        .imm = m->inv_rkey ? m->inv_rkey : m->imm,
    };

    if (w->read) {
        uint64_t off = (uint64_t)w->acked * w->mtu;

        p.opcode = m->opcode;
        w->req_from = w->acked;
        p.psn = (w->first_psn + w->acked) & VCX_PSN_MASK;
        p.ackreq = true;
        p.va = m->va + off;
        p.rkey = m->rkey;
        p.dma_len = m->dma_len - off;
    } else if (w->atomic) {
        p.opcode = m->opcode;
        p.ackreq = true;
        p.va = m->va;
        p.rkey = m->rkey;
        p.swap_add = m->swap_add;
        p.compare = m->compare;
    } else {
        uint64_t off = (uint64_t)i * w->mtu;
        VcxSglCursor c;

        p.opcode = vcx_wire_data_op(m->opcode, i, w->npkts);
        p.len = MIN(m->len - MIN(off, m->len), w->mtu);
        p.se = m->se && i + 1 == w->npkts;
        if (i == 0) {
            p.va = m->va;
            p.rkey = m->rkey;
            p.dma_len = m->len;
        }
        vcx_sgl_seek(&c, &rq->sgl, off);
        if (p.len && vcx_sgl_io(s, &c, buf, p.len, false) != MEMTX_OK) {
            vcx_wire_fail(s, qp, VCX_CQE_SYND_LOCAL_PROT_ERR, "payload not readable");
            return false;
        }
        p.payload = buf;
        b->bytes -= MIN(b->bytes, p.len);
    }
    vcx_roce_send(s, &w->addr, &p);
    return true;
}

VcxStep vcx_roce_req_run(VcxState *s, VcxQp *qp, VcxReq *rq, VcxBudget *b)
{
    VcxWireReq *w = &qp->xs->wreq;
    VcxRoceStats *st = &vcx_roce(s)->st;

    for (int guard = 0; guard < 4; guard++) {
        switch (w->state) {
        case VCX_WREQ_SEND:
            if (w->read || w->atomic) {
                if (!vcx_wire_send_pkt(s, qp, rq, 0, b)) {
                    return VCX_STEP_STOP;
                }
                w->next = w->npkts;
            }
            while (w->next < w->npkts) {
                if (!b->bytes) {
                    return VCX_STEP_MORE;
                }
                if (!vcx_wire_send_pkt(s, qp, rq, w->next, b)) {
                    return VCX_STEP_STOP;
                }
                w->next++;
            }
            if (!w->reliable) {
                w->state = VCX_WREQ_IDLE;
                rq->wire = false;
                rq->ack.type = VCX_ACK;
                return VCX_STEP_ANSWER;
            }
            w->state = VCX_WREQ_WAIT;
            vcx_wire_arm(qp);
            return VCX_STEP_STOP;
        case VCX_WREQ_WAIT:
            if (qp->rnr_wait) {
                return VCX_STEP_STOP;
            }
            /* the local ACK timer fired */
            st->local_ack_timeout_err++;
            vcx_qp_qc(s, qp, VCX_QC_LOCAL_ACK_TIMEOUT_ERR);
            trace_vcx_roce_req_timeout(qp->qpn, w->first_psn + w->acked, qp->retry_left);
            if (!qp->retry_left) {
                vcx_wire_fail(s, qp, VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR,
                              "local ACK timeout, retries exhausted");
                return VCX_STEP_STOP;
            }
            qp->retry_left--;
            st->retransmits++;
            w->next = w->acked;
            w->state = VCX_WREQ_SEND;
            break;
        case VCX_WREQ_RNR:
            if (qp->rnr_wait) {
                return VCX_STEP_STOP;
            }
            st->retransmits++;
            w->state = VCX_WREQ_SEND;
            break;
        case VCX_WREQ_DONE:
            w->state = VCX_WREQ_IDLE;
            rq->wire = false;
            return VCX_STEP_ANSWER;
        default:
            rq->wire = false;
            return VCX_STEP_STOP;
        }
    }
    return VCX_STEP_STOP;
}

/* A READ response packet at index d of the message. */
static void vcx_wire_read_resp(VcxState *s, VcxQp *qp, const VcxRocePkt *p, uint32_t d)
{
    VcxWireReq *w = &qp->xs->wreq;
    VcxReq *rq = &qp->xs->req;
    uint64_t off = (uint64_t)d * w->mtu;
    uint32_t want = MIN(rq->pkt.dma_len - MIN(off, rq->pkt.dma_len), w->mtu);
    bool last = d + 1 == w->npkts;
    VcxSglCursor c;

    if (d < w->acked) {
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "READ response already placed");
        return;
    }
    if (d > w->acked) {
        /*
         * A response missing: ask again from it, once until data flows again. The implied
         * NAK is a retry like a PSN sequence NAK: it spends one of retry_count.
         */
        if (!w->reissued) {
            vcx_roce(s)->st.implied_nak_seq_err++;
            vcx_qp_qc(s, qp, VCX_QC_IMPLIED_NAK_SEQ_ERR);
            if (!qp->retry_left) {
                vcx_wire_fail(s, qp, VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR,
                              "READ responses missing, retries exhausted");
                return;
            }
            qp->retry_left--;
            vcx_roce(s)->st.retransmits++;      /* the READ request goes out again */
            w->reissued = true;
            w->state = VCX_WREQ_SEND;
            vcx_wire_wake(s, qp);
        }
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
        vcx_wire_fail(s, qp, VCX_CQE_SYND_LOCAL_PROT_ERR, "read response not deliverable");
        return;
    }
    w->acked = d + 1;
    if (last) {
        vcx_wire_done(s, qp, VCX_ACK);
    } else if (vcx_wire_timed(qp)) {
        vcx_wire_arm(qp);
    }
}

/* An answer from the wire for the QP's message: ACK, NAK, READ response, atomic ACK. */
void vcx_roce_req_rx(VcxState *s, VcxQp *qp, const VcxRocePkt *p)
{
    VcxWireReq *w = &qp->xs->wreq;
    VcxReq *rq = &qp->xs->req;
    VcxRoceStats *st = &vcx_roce(s)->st;
    uint32_t d;

    if (qp->state != VCX_QP_STATE_RTS || !rq->wire ||
        (w->state != VCX_WREQ_SEND && w->state != VCX_WREQ_WAIT)) {
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "no request waiting for an answer");
        return;
    }
    d = (p->psn - w->first_psn) & VCX_PSN_MASK;
    if (d >= w->npkts) {
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "answer PSN outside the message");
        return;
    }
    if (p->flags & VCX_OPF_READ_RESP) {
        if (!w->read) {
            trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "READ response without a READ");
            return;
        }
        vcx_wire_read_resp(s, qp, p, d);
        return;
    }
    if ((p->aeth_synd >> 5) && d > w->next) {
        /* a NAK can only name a PSN sent, or the next one expected */
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "NAK of a packet not sent");
        return;
    }
    switch (p->aeth_synd >> 5) {
    case 0:                                     /* ACK */
        if ((p->opcode & IB_OP_MASK) == IB_OP_ATOMIC_ACK) {
            if (!w->atomic) {
                trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "atomic ACK without an atomic");
                return;
            }
            rq->ack.atomic_orig = p->orig;
            vcx_wire_done(s, qp, VCX_ACK);
            return;
        }
        if (w->read || w->atomic || d >= w->next) {
            trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "ACK of a packet not sent");
            return;
        }
        if (d + 1 > w->acked) {
            qp->retry_left = qp->retry_count;   /* forward progress */
            w->acked = d + 1;
        }
        if (w->acked == w->npkts) {
            vcx_wire_done(s, qp, VCX_ACK);
        }
        return;
    case 1:                                     /* RNR NAK */
        st->rnr_nak_rcvd++;
        if (qp->rnr_retry != VCX_RNR_INFINITE && !qp->rnr_left) {
            st->rnr_nak_retry_err++;
            vcx_qp_qc(s, qp, VCX_QC_RNR_NAK_RETRY_ERR);
            vcx_wire_fail(s, qp, VCX_CQE_SYND_RNR_RETRY_EXC_ERR, "RNR retries exhausted");
            return;
        }
        if (qp->rnr_retry != VCX_RNR_INFINITE) {
            qp->rnr_left--;
        }
        w->acked = w->next = d;
        w->state = VCX_WREQ_RNR;
        qp->rnr_wait = true;
        timer_mod(qp->rnr_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                                 vcx_rnr_ns(p->aeth_synd & 0x1f));
        trace_vcx_roce_req_rnr(qp->qpn, p->psn, p->aeth_synd & 0x1f);
        return;
    case 3:                                     /* NAK */
        switch (p->aeth_synd & 0x1f) {
        case 0:
            st->packet_seq_err++;
            vcx_qp_qc(s, qp, VCX_QC_PACKET_SEQ_ERR);
            if (!qp->retry_left) {
                vcx_wire_fail(s, qp, VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR,
                              "PSN sequence NAKs, retries exhausted");
                return;
            }
            qp->retry_left--;
            st->retransmits++;
            w->acked = w->next = d;
            w->state = VCX_WREQ_SEND;
            trace_vcx_roce_req_resend(qp->qpn, p->psn);
            vcx_wire_wake(s, qp);
            return;
        case 1:
            vcx_wire_done(s, qp, VCX_NAK_INV_REQ);
            return;
        case 2:
            vcx_wire_done(s, qp, VCX_NAK_REM_ACCESS);
            return;
        case 3:
            vcx_wire_done(s, qp, VCX_NAK_REM_OP);
            return;
        default:
            vcx_wire_done(s, qp, VCX_NAK_INV_REQ);
            return;
        }
    default:
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "reserved AETH syndrome");
        return;
    }
}
