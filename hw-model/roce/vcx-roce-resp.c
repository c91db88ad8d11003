/*
 * vcx: the RoCEv2 responder (IBTA vol 1 9.7.4 .. 9.7.5): request packets arriving from
 * the wire at a QP of the port.
 *
 * RC, by PSN against the expected PSN (next_rcv_psn):
 *   - expected: processed. SEND into the receive WQE taken at its FIRST/ONLY packet, at
 *     a running offset; WRITE into the RETH range (rkey checked for the whole range at
 *     FIRST/ONLY, each piece again as it is written); WRITE with immediate takes its
 *     receive WQE at the last packet; READ is entered in the replay cache and answered
 *     packet by packet under the executor's budget (vcx_roce_read_run); an atomic is
 *     executed once, its original value kept in the replay cache and returned in an
 *     ATOMIC_ACKNOWLEDGE. An AckReq packet is ACKed once per executor run, coalesced
 *     with the others of its QP (vcx-roce-dev.c);
 *   - ahead (a gap): one NAK PSN sequence error with the expected PSN, then silence
 *     until the expected PSN arrives;
 *   - behind (a duplicate, within 2^23): SEND and WRITE ACKed again with their own PSN
 *     (never one of a READ's responses), never delivered twice; a READ answered again from the duplicate's PSN
 *     with its own RETH; an atomic answered from the replay cache, never executed twice.
 *   - no receive WQE: RNR NAK with min_rnr_nak, nothing consumed; the requester sends
 *     the packet again;
 *   - rkey or rights violated: NAK remote access error, the QP to ERR (as loopback);
 *     a length beyond the WQE, an opcode out of sequence: NAK invalid request, ERR.
 * UC: a packet that is not the expected PSN drops the message in progress; FIRST/ONLY
 * starts again at its PSN. UD: one SEND packet, Q_Key checked, the 40-byte GRH area
 * (IPv4 header in its last 20 bytes) in front of the payload.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "vcx-roce.h"
#include "hw/vcx/trace.h"

static void vcx_sgl_at(VcxSglCursor *c, const VcxSgl *l, uint64_t off)
{
    c->sgl = l;
    c->i = 0;
    while (c->i < l->n && off >= l->sge[c->i].len) {
        off -= l->sge[c->i].len;
        c->i++;
    }
    c->off = off;
}

/* The VcxPkt vcx_resp_end() and vcx_resp_grh() take, for a received packet. */
static void vcx_wire_msg(const VcxRocePkt *p, VcxQp *qp, uint64_t len, VcxPkt *m)
{
    memset(m, 0, sizeof(*m));
    m->opcode = p->opcode;
    m->se = p->se;
    m->sqpn = vcx_qp_is_dgram(qp) ? p->sqpn : qp->remote_qpn;
    m->qkey = p->qkey;
    m->imm = p->imm;
    m->inv_rkey = p->imm;
    memcpy(m->sgid, p->sgid, 16);
    memcpy(m->dgid, p->dgid, 16);
    m->tclass = p->tclass;
    m->hop_limit = p->hop_limit;
    m->flow_label = p->flow_label;
    m->vlan = p->vlan;
    m->vlan_tci = p->vlan_tci;
    m->len = len;
}

/*
 * A NAK; a remote access error one counts in resp_remote_access_errors, an invalid
 * request one in resp_remote_invalid_request. Responses leave in PSN order (IBTA
 * 9.7.5.1): an RNR or sequence NAK for a request that came after READs still being
 * answered waits until their responses are out (vcx_wire_resp_idle); sent now it would
 * tell the requester those READs are done.
 */
static void vcx_wire_nak(VcxState *s, VcxQp *qp, uint8_t synd, uint32_t psn)
{
    VcxWireResp *wr = &qp->xs->wresp;

    if (wr->rd_active && ((synd & 0xe0) == VCX_AETH_RNR || synd == VCX_AETH_NAK_SEQ)) {
        wr->nak_due = true;
        wr->nak_synd = synd;
        wr->nak_psn = psn;
        return;
    }
    vcx_roce(s)->st.nak_sent++;
    if (synd == VCX_AETH_NAK_REM_ACCESS) {
        vcx_qp_qc(s, qp, VCX_QC_RESP_REMOTE_ACCESS_ERRORS);
    } else if (synd == VCX_AETH_NAK_INV_REQ) {
        vcx_qp_qc(s, qp, VCX_QC_RESP_REMOTE_INVALID_REQUEST);
    }
    vcx_roce_send_aeth(s, qp, synd, psn);
}

/* The READ responses are all out: the NAK or coalesced ACK held behind them goes. */
static void vcx_wire_resp_idle(VcxState *s, VcxQp *qp)
{
    VcxWireResp *wr = &qp->xs->wresp;

    if (wr->nak_due) {
        wr->nak_due = false;
        wr->ack_due = false;            /* the NAK acknowledges what came before it */
        vcx_wire_nak(s, qp, wr->nak_synd, wr->nak_psn);
    } else if (wr->ack_due) {
        vcx_roce_queue_ack(s, qp);
    }
}

/* A class C error (IBTA 9.9.3.1.3): NAK, then the QP to ERR. */
static void vcx_wire_fatal(VcxState *s, VcxQp *qp, uint8_t synd, uint32_t psn,
                           const char *why)
{
    trace_vcx_roce_resp_err(qp->qpn, psn, why);
    if (vcx_qp_reliable(qp)) {
        vcx_wire_nak(s, qp, synd, psn);
    }
    qp->xs->wresp.in_msg = false;
    vcx_qp_to_err(s, qp);
}

/*
 * The receive side of a request: the QP's own, or for an XRC target the XRC SRQ its
 * XRCETH names (with that SRQ's CQ and PD, IBTA 11.2.7), which must be an XRC SRQ of the
 * target's domain and not in error. False, with the NAK invalid request sent and the
 * target in ERR, if it is not (vcx-xrc.c).
 */
static bool vcx_wire_recv(VcxState *s, VcxQp *qp, const VcxRocePkt *p, VcxRecv *rcv)
{
    const char *why = NULL;
    VcxSrq *srq;

    if (!vcx_qp_is_xrc_tgt(qp)) {
        *rcv = vcx_recv_own(qp);
        return true;
    }
    srq = vcx_xrc_target_srq(s, qp, p->xrc_srqn, &why);
    if (!srq) {
        trace_vcx_roce_resp_err(qp->qpn, p->psn, why);
        vcx_wire_nak(s, qp, VCX_AETH_NAK_INV_REQ, p->psn);
        qp->xs->wresp.in_msg = false;
        vcx_xrc_invalid_request(s, qp, p->xrc_srqn, why);
        return false;
    }
    *rcv = vcx_recv_xrc(s, srq);
    return true;
}

/* An XRC target's SRQ by number and incarnation, where a CQE or flush must find it. */
static void vcx_wire_srq_id(const VcxQp *qp, const VcxRecv *rcv, uint32_t *srqn,
                            uint64_t *gen)
{
    if (vcx_qp_is_xrc_tgt(qp)) {
        *srqn = rcv->srq->srqn;
        *gen = rcv->srq->gen;
    }
}

/* The packet was taken: the next PSN, and the ACK it asks for. */
static void vcx_wire_accept(VcxState *s, VcxQp *qp, const VcxRocePkt *p, bool ack)
{
    VcxWireResp *wr = &qp->xs->wresp;

    qp->rq_psn = (p->psn + 1) & VCX_PSN_MASK;
    wr->nak_sent = false;
    wr->nak_due = false;
    if (ack && p->ackreq && vcx_qp_reliable(qp)) {
        wr->ack_due = true;
        wr->ack_psn = p->psn;
        vcx_roce_queue_ack(s, qp);
    }
}

static void vcx_wire_ud(VcxState *s, VcxQp *qp, const VcxRocePkt *p)
{
    VcxRoceStats *st = &vcx_roce(s)->st;
    VcxRecv rcv = vcx_recv_own(qp);
    uint8_t grh[VCX_GRH_SIZE], synd = 0;
    VcxXfer x = { 0 };
    VcxSglCursor c;
    VcxAck ack;
    VcxPkt m;
    uint16_t index = 0;
    bool ipv4;
    int r;

    if (p->qkey != qp->q_key) {
        st->qkey_err++;
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "Q_Key mismatch");
        return;
    }
    r = vcx_resp_take_wqe(s, qp, &rcv, &index, &synd);
    if (r == 0) {
        st->out_of_buffer++;
        vcx_qp_qc(s, qp, VCX_QC_OUT_OF_BUFFER);
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "no receive WQE");
        return;
    } else if (r < 0) {
        vcx_resp_error(s, qp, &rcv, synd, index, r == -2);
        return;
    }
    if (p->len + VCX_GRH_SIZE > qp->xs->rx.sgl.total) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x receive WQE 0x%x holds %" PRIu64
                      " bytes, datagram needs %u\n", qp->qpn, index,
                      qp->xs->rx.sgl.total, p->len + VCX_GRH_SIZE);
        vcx_resp_error(s, qp, &rcv, VCX_CQE_SYND_LOCAL_LENGTH_ERR, index, true);
        return;
    }
    vcx_wire_msg(p, qp, p->len, &m);
    vcx_resp_grh(&m, grh, &ipv4);
    vcx_sgl_at(&c, &qp->xs->rx.sgl, 0);
    if (vcx_sgl_io(s, &c, grh, sizeof(grh), true) != MEMTX_OK ||
        (p->len && vcx_sgl_io(s, &c, (uint8_t *)p->payload, p->len, true) != MEMTX_OK)) {
        vcx_resp_error(s, qp, &rcv, VCX_CQE_SYND_LOCAL_PROT_ERR, index, true);
        return;
    }
    x.uses_rx = true;
    x.scatter = true;
    x.index = index;
    x.op = p->opcode & IB_OP_MASK;
    x.l3 = ipv4 ? VCX_CQE_ROCE_L3_IPV4 : VCX_CQE_ROCE_L3_IPV6;
    x.cqe_op = x.op == IB_OP_SEND_ONLY_IMM ? VCX_CQE_RESP_SEND_IMM : VCX_CQE_RESP_SEND;
    vcx_resp_end(s, qp, &m, &x, &ack);
}

/*
 * READs and atomics taken whose responses have not all been sent once. A duplicate
 * answered again does not count: its requester may hold it done already.
 */
static uint32_t vcx_wire_rd_pending(const VcxWireResp *wr)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < VCX_WIRE_RD_MAX; i++) {
        n += wr->rd[i].valid && !wr->rd[i].sent;
    }
    return n;
}

/* The ATOMIC_ACKNOWLEDGE of replay entry e (first sent, or sent again for a duplicate). */
static void vcx_wire_atomic_ack(VcxState *s, VcxQp *qp, const VcxWireRdEntry *e)
{
    VcxWireAddr a;
    VcxRocePkt r = {
        .opcode = vcx_roce_rc_transport(qp) | IB_OP_ATOMIC_ACK, .pkey = VCX_DEFAULT_PKEY,
        .dqpn = qp->remote_qpn, .psn = e->psn, .aeth_synd = VCX_AETH_ACK,
        .msn = qp->msn, .orig = e->orig,
    };

    vcx_roce_addr_path(s, qp, &a);
    vcx_roce_send(s, &a, &r);
}

static uint32_t vcx_resp_mtu(const VcxQp *qp)
{
    return 128u << MIN(MAX(qp->mtu, 1), 5);
}

/* How old replay entry i is: 0 for the oldest kept. */
static uint32_t vcx_wire_rd_age(const VcxWireResp *wr, uint32_t i)
{
    return (i + VCX_WIRE_RD_MAX - wr->rd_head) % VCX_WIRE_RD_MAX;
}

/* Entry e is to be answered (again) from psn, with this RETH. */
static void vcx_wire_rd_replay(VcxWireRdEntry *e, uint32_t psn, uint64_t va, uint32_t rkey,
                               uint32_t len, uint32_t mtu)
{
    e->answered = false;
    e->rp_psn = psn & VCX_PSN_MASK;
    e->rp_va = va;
    e->rp_rkey = rkey;
    e->rp_len = len;
    e->rp_npkts = MAX(DIV_ROUND_UP(len, mtu), 1);
}

static void vcx_wire_rd_job(VcxQp *qp, uint32_t i);

/* A duplicate request (PSN behind the expected one). */
static void vcx_wire_dup(VcxState *s, VcxQp *qp, const VcxRocePkt *p)
{
    VcxWireResp *wr = &qp->xs->wresp;

    vcx_roce(s)->st.duplicate_request++;
    vcx_qp_qc(s, qp, VCX_QC_DUPLICATE_REQUEST);
    trace_vcx_roce_resp_dup(qp->qpn, p->psn, qp->rq_psn);
    if (p->flags & (VCX_OPF_SEND | VCX_OPF_WRITE)) {
        /*
         * Not delivered again; acknowledged again with its own PSN if it asks for an ACK
         * (AckReq). Not with the last PSN received: that may be a PSN of a READ's
         * responses, and an ACK of it tells the requester the READ is done whether its
         * response arrived or not. Not for a packet without AckReq: an ACK of the middle
         * of a message the requester is sending again is one it did not ask for, and
         * Soft-RoCE then resends the rest of that message as a new one (a zero-length
         * SEND_ONLY at the acknowledged PSN, then FIRST), which the responder must refuse
         * as out of sequence. An ACK already due for a later SEND / WRITE packet goes out
         * instead (it covers this one).
         */
        if (!p->ackreq) {
            return;
        }
        if (!wr->ack_due ||
            ((p->psn - wr->ack_psn) & VCX_PSN_MASK) < 0x800000) {
            wr->ack_psn = p->psn;
        }
        wr->ack_due = true;
        vcx_roce_queue_ack(s, qp);
        return;
    }
    for (uint32_t i = 0; i < VCX_WIRE_RD_MAX; i++) {
        VcxWireRdEntry *e = &wr->rd[i];
        uint32_t d = (p->psn - e->psn) & VCX_PSN_MASK;

        if (!e->valid || d >= e->npkts || e->atomic != !!(p->flags & VCX_OPF_ATOMIC_REQ)) {
            continue;
        }
        /*
         * Answered again, it acknowledges the requests before it, as a new READ's or
         * atomic's answer does (vcx_wire_read): an ACK still due for an older duplicate
         * SEND or WRITE is not sent. Held behind READ responses, it would go out after
         * this answer with an older PSN, which Soft-RoCE, part-way through a READ, takes
         * as the end of a message and then refuses the READ's next MIDDLE, completing
         * the READ with the rest never placed (docs/networking.md, "Wire faults").
         */
        if (wr->ack_due && p->psn != wr->ack_psn &&
            ((p->psn - wr->ack_psn) & VCX_PSN_MASK) < 0x800000) {
            wr->ack_due = false;
        }
        if (e->atomic) {
            if (e->answered) {
                vcx_wire_atomic_ack(s, qp, e);
            }                           /* else it is answered in its turn */
            return;
        }
        /*
         * READ: answered again from this PSN, with the duplicate's own RETH, in its turn:
         * a requester going back sends its READs again in PSN order, and each one's
         * responses must follow the one before. One older than the READ being answered
         * goes first; the one being answered then starts again from the PSN its
         * requester asked for (its answer point, rp_*), READ_RESPONSE_FIRST there.
         * Not from where it stopped: a FIRST in the middle of a READ is a PSN nobody
         * asked for, and a requester part-way through that READ takes it as out of
         * sequence (Soft-RoCE then completes the READ with the rest never placed).
         * Sending a response again is harmless: the requester drops what it holds.
         * hfi1's responder restarts the entry being sent the same way.
         */
        vcx_wire_rd_replay(e, p->psn, p->va, p->rkey, p->dma_len, vcx_resp_mtu(qp));
        if (!wr->rd_active) {
            vcx_wire_rd_job(qp, i);
            vcx_roce_queue_read(s, qp);
        } else if (vcx_wire_rd_age(wr, i) < vcx_wire_rd_age(wr, wr->rd_slot)) {
            VcxWireRdEntry *c = &wr->rd[wr->rd_slot];

            if (wr->j_next >= wr->j_npkts) {
                c->answered = c->sent = true;
            }                           /* else answered again from its rp_* */
            vcx_wire_rd_job(qp, i);
        }
        return;
    }
    trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "duplicate not in the replay cache");
}

/* Start answering replay entry i from its answer point (rp_*). */
static void vcx_wire_rd_job(VcxQp *qp, uint32_t i)
{
    VcxWireResp *wr = &qp->xs->wresp;
    VcxWireRdEntry *e = &wr->rd[i % VCX_WIRE_RD_MAX];

    wr->rd_active = true;
    wr->rd_slot = i % VCX_WIRE_RD_MAX;
    wr->j_psn = e->rp_psn;
    wr->j_va = e->rp_va;
    wr->j_rkey = e->rp_rkey;
    wr->j_len = e->rp_len;
    wr->j_pdn = e->pdn;
    wr->j_npkts = e->rp_npkts;
    wr->j_next = 0;
}

static VcxWireRdEntry *vcx_wire_rd_new(VcxWireResp *wr)
{
    VcxWireRdEntry *e = &wr->rd[wr->rd_head % VCX_WIRE_RD_MAX];

    wr->rd_head = (wr->rd_head + 1) % VCX_WIRE_RD_MAX;
    memset(e, 0, sizeof(*e));
    e->valid = true;
    return e;
}

static void vcx_wire_read(VcxState *s, VcxQp *qp, const VcxRocePkt *p, uint32_t mtu)
{
    VcxWireResp *wr = &qp->xs->wresp;
    VcxPkt m = { .rkey = p->rkey, .va = p->va };
    VcxWireRdEntry *e;
    VcxRecv rcv;
    VcxMkey *mk;

    if (!vcx_wire_recv(s, qp, p, &rcv)) {
        return;
    }
    if (vcx_wire_rd_pending(wr) >= (1u << MIN(qp->log_rra_max, VCX_LOG_MAX_RA))) {
        /* more READs and atomics outstanding than max_dest_rd_atomic: an invalid request */
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_INV_REQ, p->psn,
                       "more READs and atomics outstanding than log_rra_max allows");
        return;
    }
    if (p->dma_len && !vcx_resp_rkey(s, qp, rcv.pdn, &m, p->dma_len, VCX_ACC_REMOTE_READ,
                                     qp->rre, &mk)) {
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_REM_ACCESS, p->psn, "READ rkey");
        return;
    }
    e = vcx_wire_rd_new(wr);
    e->psn = p->psn;
    e->npkts = MAX(DIV_ROUND_UP(p->dma_len, mtu), 1);
    e->va = p->va;
    e->rkey = p->rkey;
    e->len = p->dma_len;
    e->pdn = rcv.pdn;
    vcx_wire_rd_replay(e, p->psn, p->va, p->rkey, p->dma_len, mtu);
    qp->rq_psn = (p->psn + e->npkts) & VCX_PSN_MASK;
    qp->msn = (qp->msn + 1) & VCX_PSN_MASK;
    wr->nak_sent = false;
    wr->nak_due = false;
    wr->ack_due = false;                /* its responses acknowledge what came before */
    if (!wr->rd_active) {
        vcx_wire_rd_job(qp, e - wr->rd);
    }
    vcx_roce_queue_read(s, qp);
}

static void vcx_wire_atomic(VcxState *s, VcxQp *qp, const VcxRocePkt *p)
{
    VcxWireResp *wr = &qp->xs->wresp;
    VcxPkt m = { .rkey = p->rkey, .va = p->va };
    uint8_t v[8];
    uint64_t orig, val;
    VcxWireRdEntry *e;
    VcxRecv rcv;
    VcxMkey *mk;
    bool big = vcx_atomic_big_endian(s);

    if (!vcx_wire_recv(s, qp, p, &rcv)) {
        return;
    }
    if (p->va & 7) {
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_INV_REQ, p->psn, "atomic not 8-byte aligned");
        return;
    }
    if (vcx_wire_rd_pending(wr) >= (1u << MIN(qp->log_rra_max, VCX_LOG_MAX_RA))) {
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_INV_REQ, p->psn,
                       "more READs and atomics outstanding than log_rra_max allows");
        return;
    }
    if (!vcx_resp_rkey(s, qp, rcv.pdn, &m, 8, VCX_ACC_REMOTE_ATOMIC, qp->rae, &mk)) {
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_REM_ACCESS, p->psn, "atomic rkey");
        return;
    }
    if (vcx_mkey_rw(s, mk, p->va, v, 8, false) != MEMTX_OK) {
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_REM_OP, p->psn, "atomic target not readable");
        return;
    }
    orig = big ? ldq_be_p(v) : ldq_le_p(v);
    val = (p->opcode & IB_OP_MASK) == IB_OP_FETCH_ADD ? orig + p->swap_add :
          (orig == p->compare ? p->swap_add : orig);
    if (big) {
        stq_be_p(v, val);
    } else {
        stq_le_p(v, val);
    }
    if (vcx_mkey_rw(s, mk, p->va, v, 8, true) != MEMTX_OK) {
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_REM_OP, p->psn, "atomic target not writable");
        return;
    }
    e = vcx_wire_rd_new(wr);
    e->atomic = true;
    e->psn = p->psn;
    e->npkts = 1;
    e->orig = orig;
    if (wr->rd_active && wr->rd_slot == (uint32_t)(e - wr->rd)) {
        wr->rd_active = false;          /* overwrote the entry being answered */
    }
    qp->msn = (qp->msn + 1) & VCX_PSN_MASK;
    vcx_wire_accept(s, qp, p, false);
    wr->ack_due = false;                /* its answer acknowledges what came before */
    if (wr->rd_active) {
        return;                         /* answered after the READ responses before it */
    }
    e->answered = e->sent = true;
    vcx_wire_atomic_ack(s, qp, e);
}

/* SEND packets of RC and UC. */
static void vcx_wire_send(VcxState *s, VcxQp *qp, const VcxRocePkt *p, uint32_t mtu)
{
    VcxWireResp *wr = &qp->xs->wresp;
    VcxRx *rx = &qp->xs->rx;
    bool rc = vcx_qp_reliable(qp);
    uint8_t op = p->opcode & IB_OP_MASK, synd = 0;
    VcxSglCursor c;
    VcxRecv rcv;

    if (!vcx_wire_recv(s, qp, p, &rcv)) {
        return;
    }
    if (p->flags & VCX_OPF_FIRST) {
        uint16_t index = 0;
        int r = vcx_resp_take_wqe(s, qp, &rcv, &index, &synd);

        if (r == 0) {
            if (rc) {
                vcx_roce(s)->st.rnr_nak_sent++;
                vcx_qp_qc(s, qp, VCX_QC_OUT_OF_BUFFER);
                trace_vcx_roce_resp_rnr(qp->qpn, p->psn, qp->min_rnr_nak);
                vcx_wire_nak(s, qp, VCX_AETH_RNR | (qp->min_rnr_nak & 0x1f), p->psn);
            } else {
                vcx_roce(s)->st.out_of_buffer++;
                vcx_qp_qc(s, qp, VCX_QC_OUT_OF_BUFFER);
                vcx_wire_accept(s, qp, p, false);       /* UC: the message is lost */
            }
            return;
        } else if (r < 0) {
            vcx_resp_error(s, qp, &rcv, synd, index, r == -2);
            if (rc) {
                vcx_wire_nak(s, qp, VCX_AETH_NAK_REM_OP, p->psn);
            }
            return;
        }
        wr->in_msg = !(p->flags & VCX_OPF_LAST);
        wr->write = false;
        wr->off = 0;
        wr->index = index;
        wr->first_op = op;
        rx->held = true;
        rx->index = index;
        vcx_wire_srq_id(qp, &rcv, &rx->srqn, &rx->srq_gen);     /* where a flush ends it */
    } else if (vcx_qp_is_xrc_tgt(qp) &&
               (rcv.srq->srqn != rx->srqn || rcv.srq->gen != rx->srq_gen)) {
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_INV_REQ, p->psn,
                       "XRCETH names another XRC SRQ in the middle of a message");
        return;
    }
    if (wr->off + p->len > rx->sgl.total) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x receive WQE 0x%x holds %" PRIu64
                      " bytes, message needs more than %" PRIu64 "\n", qp->qpn, wr->index,
                      rx->sgl.total, wr->off + p->len);
        rx->held = false;
        vcx_resp_error(s, qp, &rcv, VCX_CQE_SYND_LOCAL_LENGTH_ERR, wr->index, true);
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_INV_REQ, p->psn, "receive WQE too short");
        return;
    }
    vcx_sgl_at(&c, &rx->sgl, wr->off);
    if (p->len && vcx_sgl_io(s, &c, (uint8_t *)p->payload, p->len, true) != MEMTX_OK) {
        rx->held = false;
        vcx_resp_error(s, qp, &rcv, VCX_CQE_SYND_LOCAL_PROT_ERR, wr->index, true);
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_REM_OP, p->psn, "receive buffer not writable");
        return;
    }
    wr->off += p->len;
    if (p->flags & VCX_OPF_LAST) {
        VcxXfer x = { 0 };
        VcxAck ack;
        VcxPkt m;

        wr->in_msg = false;
        vcx_wire_msg(p, qp, wr->off, &m);
        x.uses_rx = true;
        x.scatter = true;
        x.index = wr->index;
        vcx_wire_srq_id(qp, &rcv, &x.srqn, &x.srq_gen);
        x.op = (p->flags & VCX_OPF_IETH) ? IB_OP_SEND_ONLY_INV : op;
        x.cqe_op = (p->flags & VCX_OPF_IETH) ? VCX_CQE_RESP_SEND_INV :
                   (p->flags & VCX_OPF_IMM) ? VCX_CQE_RESP_SEND_IMM : VCX_CQE_RESP_SEND;
        vcx_resp_end(s, qp, &m, &x, &ack);
        if (ack.type != VCX_ACK) {
            vcx_wire_fatal(s, qp, VCX_AETH_NAK_INV_REQ, p->psn, "send with invalidate");
            return;
        }
    }
    vcx_wire_accept(s, qp, p, true);
}

/* WRITE packets of RC and UC. */
static void vcx_wire_write(VcxState *s, VcxQp *qp, const VcxRocePkt *p, uint32_t mtu)
{
    VcxWireResp *wr = &qp->xs->wresp;
    bool rc = vcx_qp_reliable(qp);
    uint16_t index = 0;
    uint8_t synd = 0;
    VcxSglCursor c;
    VcxRecv rcv;
    VcxSgl l;

    if (!vcx_wire_recv(s, qp, p, &rcv)) {
        return;
    }
    if (p->flags & VCX_OPF_FIRST) {
        VcxPkt m = { .rkey = p->rkey, .va = p->va };
        VcxMkey *mk;

        if (p->dma_len && !vcx_resp_rkey(s, qp, rcv.pdn, &m, p->dma_len,
                                         VCX_ACC_REMOTE_WRITE, qp->rwe, &mk)) {
            if (rc) {
                vcx_wire_fatal(s, qp, VCX_AETH_NAK_REM_ACCESS, p->psn, "WRITE rkey");
            } else {
                vcx_wire_accept(s, qp, p, false);       /* UC: dropped */
            }
            return;
        }
        wr->in_msg = true;
        wr->write = true;
        wr->off = 0;
        wr->wr_va = p->va;
        wr->wr_rkey = p->rkey;
        wr->wr_len = p->dma_len;
        wr->pdn = rcv.pdn;
        wr->first_op = p->opcode & IB_OP_MASK;
    }
    if (wr->off + p->len > wr->wr_len ||
        ((p->flags & VCX_OPF_LAST) && wr->off + p->len != wr->wr_len)) {
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_INV_REQ, p->psn, "WRITE length not the RETH's");
        return;
    }
    if ((p->flags & VCX_OPF_LAST) && (p->flags & VCX_OPF_IMM)) {
        /* the immediate needs a receive WQE: RNR before anything is written */
        int r = vcx_resp_take_wqe(s, qp, &rcv, &index, &synd);

        if (r == 0) {
            if (rc) {
                vcx_roce(s)->st.rnr_nak_sent++;
                vcx_qp_qc(s, qp, VCX_QC_OUT_OF_BUFFER);
                trace_vcx_roce_resp_rnr(qp->qpn, p->psn, qp->min_rnr_nak);
                vcx_wire_nak(s, qp, VCX_AETH_RNR | (qp->min_rnr_nak & 0x1f), p->psn);
                wr->in_msg = !(p->flags & VCX_OPF_FIRST);
            } else {
                vcx_roce(s)->st.out_of_buffer++;
                vcx_qp_qc(s, qp, VCX_QC_OUT_OF_BUFFER);
                wr->in_msg = false;
                vcx_wire_accept(s, qp, p, false);
            }
            return;
        } else if (r < 0) {
            vcx_resp_error(s, qp, &rcv, synd, index, r == -2);
            if (rc) {
                vcx_wire_nak(s, qp, VCX_AETH_NAK_REM_OP, p->psn);
            }
            return;
        }
    }
    vcx_sgl_single(&l, wr->wr_rkey, wr->pdn, qp->qpn, VCX_ACC_REMOTE_WRITE, wr->wr_va,
                   wr->wr_len);
    vcx_sgl_at(&c, &l, wr->off);
    if (p->len && vcx_sgl_io(s, &c, (uint8_t *)p->payload, p->len, true) != MEMTX_OK) {
        if ((p->flags & VCX_OPF_LAST) && (p->flags & VCX_OPF_IMM)) {
            qp->xs->rx.held = true;             /* flushed with the QP */
            qp->xs->rx.index = index;
            vcx_wire_srq_id(qp, &rcv, &qp->xs->rx.srqn, &qp->xs->rx.srq_gen);
        }
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_REM_ACCESS, p->psn, "WRITE target");
        return;
    }
    wr->off += p->len;
    if (p->flags & VCX_OPF_LAST) {
        wr->in_msg = false;
        if (p->flags & VCX_OPF_IMM) {
            VcxXfer x = { 0 };
            VcxAck ack;
            VcxPkt m;

            vcx_wire_msg(p, qp, wr->off, &m);
            x.uses_rx = true;
            x.index = index;
            vcx_wire_srq_id(qp, &rcv, &x.srqn, &x.srq_gen);
            x.op = IB_OP_WRITE_ONLY_IMM;
            x.cqe_op = VCX_CQE_RESP_WR_IMM;
            vcx_resp_end(s, qp, &m, &x, &ack);
        } else {
            qp->msn = (qp->msn + 1) & VCX_PSN_MASK;
        }
    }
    vcx_wire_accept(s, qp, p, true);
}

/* A request packet for QP qp (BTH destination QP), checked by vcx_roce_parse(). */
void vcx_roce_resp_rx(VcxState *s, VcxQp *qp, const VcxRocePkt *p)
{
    VcxWireResp *wr = &qp->xs->wresp;
    VcxRoceStats *st = &vcx_roce(s)->st;
    uint8_t transport = p->opcode & ~IB_OP_MASK;
    uint32_t mtu = 128u << MIN(MAX(qp->mtu, 1), 5), d;
    bool rc = transport == IB_TRANSPORT_RC || transport == IB_TRANSPORT_XRC;

    if (!vcx_qp_receiving(qp) || vcx_qp_transport(qp) != transport) {
        st->bad_qp++;
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "QP not ready or of another type");
        return;
    }
    if (transport == IB_TRANSPORT_UD) {
        vcx_wire_ud(s, qp, p);
        return;
    }
    d = (p->psn - qp->rq_psn) & VCX_PSN_MASK;
    if (d && rc) {
        if (d < 0x800000) {
            st->out_of_sequence++;
            vcx_qp_qc(s, qp, VCX_QC_OUT_OF_SEQUENCE);
            trace_vcx_roce_resp_gap(qp->qpn, p->psn, qp->rq_psn, wr->nak_sent);
            if (!wr->nak_sent) {
                wr->nak_sent = true;
                vcx_wire_nak(s, qp, VCX_AETH_NAK_SEQ, qp->rq_psn);
            }
        } else {
            vcx_wire_dup(s, qp, p);
        }
        return;
    }
    if (d || (!rc && (p->flags & VCX_OPF_FIRST) && wr->in_msg)) {
        /* UC: packets were lost: the message in progress is dropped */
        if (wr->in_msg) {
            st->uc_msg_dropped++;
            wr->in_msg = false;
        }
        if (!(p->flags & VCX_OPF_FIRST)) {
            st->out_of_sequence++;
            qp->rq_psn = (p->psn + 1) & VCX_PSN_MASK;
            trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "UC: rest of a lost message");
            return;
        }
    }
    if (!rc && !(p->flags & VCX_OPF_FIRST) && !wr->in_msg) {
        qp->rq_psn = (p->psn + 1) & VCX_PSN_MASK;
        trace_vcx_roce_rx_drop(p->opcode, p->dqpn, "UC: rest of a dropped message");
        return;
    }
    /* the opcode must continue (or not) the message in progress (IBTA 9.8.3.1) */
    if (!!(p->flags & VCX_OPF_FIRST) == wr->in_msg ||
        (wr->in_msg && !!(p->flags & VCX_OPF_WRITE) != wr->write)) {
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_INV_REQ, p->psn, "opcode out of sequence");
        return;
    }
    if (!(p->flags & VCX_OPF_LAST) && p->len != mtu) {
        vcx_wire_fatal(s, qp, VCX_AETH_NAK_INV_REQ, p->psn, "FIRST/MIDDLE not one MTU");
        return;
    }
    vcx_qp_comm_est(s, qp);             /* the first packet accepted in RTR */
    if (p->flags & VCX_OPF_FIRST) {
        vcx_qp_qc(s, qp, (p->flags & VCX_OPF_WRITE) ? VCX_QC_RX_WRITE_REQUESTS :
                         (p->flags & VCX_OPF_READ_REQ) ? VCX_QC_RX_READ_REQUESTS :
                         (p->flags & VCX_OPF_ATOMIC_REQ) ? VCX_QC_RX_ATOMIC_REQUESTS :
                         VCX_QC_RDMA_N);
    }
    if (p->flags & VCX_OPF_SEND) {
        if (!vcx_qp_is_xrc_tgt(qp) && qp->rq_type == VCX_QP_RQ_TYPE_ZERO_SIZE) {
            vcx_wire_fatal(s, qp, VCX_AETH_NAK_INV_REQ, p->psn, "SEND to a QP without RQ");
            return;
        }
        vcx_wire_send(s, qp, p, mtu);
    } else if (p->flags & VCX_OPF_WRITE) {
        vcx_wire_write(s, qp, p, mtu);
    } else if (p->flags & VCX_OPF_READ_REQ) {
        vcx_wire_read(s, qp, p, mtu);
    } else if (p->flags & VCX_OPF_ATOMIC_REQ) {
        vcx_wire_atomic(s, qp, p);
    }
}

/*
 * Send the READ responses of the QP within the budget; true if some are left. FIRST,
 * MIDDLE, LAST (AETH on FIRST and LAST) or ONLY, each at its PSN, payload read again
 * from the rkey range (checked at every piece).
 */
bool vcx_roce_read_run(VcxState *s, VcxQp *qp, VcxBudget *b)
{
    VcxWireResp *wr = &qp->xs->wresp;
    uint32_t mtu = 128u << MIN(MAX(qp->mtu, 1), 5);
    uint8_t buf[4096] VCX_NOINIT;
    VcxWireAddr a;

    /* a responder answers in RTR as in RTS (IBTA 10.3.1: RTR receives and responds) */
    if (!wr->rd_active || !vcx_qp_receiving(qp)) {
        wr->rd_active = false;
        return false;
    }
    vcx_roce_addr_path(s, qp, &a);
    for (uint32_t guard = 0; guard < VCX_WIRE_RD_MAX && wr->rd_active; guard++) {
        while (wr->j_next < wr->j_npkts) {
            uint32_t i = wr->j_next, n = wr->j_npkts;
            uint64_t off = (uint64_t)i * mtu;
            VcxRocePkt p = {
                .pkey = VCX_DEFAULT_PKEY, .dqpn = qp->remote_qpn,
                .psn = (wr->j_psn + i) & VCX_PSN_MASK,
                .aeth_synd = VCX_AETH_ACK, .msn = qp->msn, .payload = buf,
                .len = MIN(wr->j_len - MIN(off, wr->j_len), mtu),
            };
            VcxSglCursor c;
            VcxSgl l;

            if (!b->bytes || !b->wqes) {
                return true;
            }
            p.opcode = vcx_roce_read_resp_op(vcx_roce_rc_transport(qp), i, n);
            vcx_sgl_single(&l, wr->j_rkey, wr->j_pdn, qp->qpn, VCX_ACC_REMOTE_READ,
                           wr->j_va, wr->j_len);
            vcx_sgl_at(&c, &l, off);
            if (p.len && vcx_sgl_io(s, &c, buf, p.len, false) != MEMTX_OK) {
                wr->rd_active = false;
                vcx_wire_fatal(s, qp, VCX_AETH_NAK_REM_ACCESS, p.psn, "READ source");
                return false;
            }
            vcx_roce_send(s, &a, &p);
            b->bytes -= MIN(b->bytes, MAX(p.len, 1u));
            wr->j_next++;
        }
        /*
         * Then the oldest replay entry not answered yet: an atomic's ACK goes at once, a
         * READ's responses next. READs answered before are not sent again unasked: after
         * a duplicate the requester asks again for what it still misses (IBTA
         * 9.7.5.1.6), and an unasked second answer crosses that request's.
         */
        wr->rd_active = false;
        wr->rd[wr->rd_slot].answered = wr->rd[wr->rd_slot].sent = true;
        for (uint32_t k = 0; k < VCX_WIRE_RD_MAX && !wr->rd_active; k++) {
            VcxWireRdEntry *e = &wr->rd[(wr->rd_head + k) % VCX_WIRE_RD_MAX];

            if (!e->valid || e->answered) {
                continue;
            }
            if (e->atomic) {
                e->answered = e->sent = true;
                vcx_wire_atomic_ack(s, qp, e);
            } else {
                vcx_wire_rd_job(qp, (wr->rd_head + k) % VCX_WIRE_RD_MAX);
            }
        }
    }
    if (!wr->rd_active) {
        vcx_wire_resp_idle(s, qp);
    }
    return wr->rd_active;
}
