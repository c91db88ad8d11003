/*
 * vcx: the transport engine's responder: a message arriving at a QP of the port, checked
 * against the QP's type and state, its PSN, keys and rights; the receive WQE it takes
 * (the QP's RQ or SRQ, or for an XRC target the XRC SRQ it names); ACK / NAK decisions;
 * the end of the message (the receive CQE, invalidation, PSN) and faults in its data
 * phase; the responder's Q counter events (vcx_qp_qc(), which the RoCEv2 engine uses
 * too). The engine's overview is at the top of vcx-xport.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci_device.h"
#include "vcx-xport.h"
#include "trace.h"

/* A message arriving at the responder whose requester still runs it. */
static bool vcx_rx_busy(VcxState *s, const VcxRx *rx)
{
    VcxQp *owner;

    if (!rx->seq) {
        return false;
    }
    owner = vcx_qp_get(s, rx->owner);
    return owner && owner->gen == rx->owner_gen && owner->xs->req.x.active &&
           owner->xs->req.x.seq == rx->seq;
}

bool vcx_qp_receiving(const VcxQp *qp)
{
    return qp->state == VCX_QP_STATE_RTR || qp->state == VCX_QP_STATE_RTS;
}

void vcx_qp_qc_n(VcxState *s, VcxQp *qp, VcxQcRdma f, uint32_t n)
{
    static const char *const names[VCX_QC_RDMA_N] = {
        [VCX_QC_RX_WRITE_REQUESTS] = "rx_write_requests",
        [VCX_QC_RX_READ_REQUESTS] = "rx_read_requests",
        [VCX_QC_RX_ATOMIC_REQUESTS] = "rx_atomic_requests",
        [VCX_QC_OUT_OF_BUFFER] = "out_of_buffer",
        [VCX_QC_OUT_OF_SEQUENCE] = "out_of_sequence",
        [VCX_QC_DUPLICATE_REQUEST] = "duplicate_request",
        [VCX_QC_RNR_NAK_RETRY_ERR] = "rnr_nak_retry_err",
        [VCX_QC_PACKET_SEQ_ERR] = "packet_seq_err",
        [VCX_QC_IMPLIED_NAK_SEQ_ERR] = "implied_nak_seq_err",
        [VCX_QC_LOCAL_ACK_TIMEOUT_ERR] = "local_ack_timeout_err",
        [VCX_QC_RESP_LOCAL_LENGTH_ERROR] = "resp_local_length_error",
        [VCX_QC_RESP_CQE_ERROR] = "resp_cqe_error",
        [VCX_QC_REQ_CQE_ERROR] = "req_cqe_error",
        [VCX_QC_REQ_REMOTE_INVALID_REQUEST] = "req_remote_invalid_request",
        [VCX_QC_REQ_REMOTE_ACCESS_ERRORS] = "req_remote_access_errors",
        [VCX_QC_RESP_REMOTE_ACCESS_ERRORS] = "resp_remote_access_errors",
        [VCX_QC_RESP_CQE_FLUSH_ERROR] = "resp_cqe_flush_error",
        [VCX_QC_REQ_CQE_FLUSH_ERROR] = "req_cqe_flush_error",
        [VCX_QC_REQ_TRANSPORT_RETRIES_EXCEEDED] = "req_transport_retries_exceeded",
        [VCX_QC_REQ_RNR_RETRIES_EXCEEDED] = "req_rnr_retries_exceeded",
        [VCX_QC_REQ_LOCAL_LENGTH_ERROR] = "req_local_length_error",
        [VCX_QC_RESP_LOCAL_QP_ERROR] = "resp_local_qp_error",
        [VCX_QC_LOCAL_OPERATION_ERROR] = "local_operation_error",
        [VCX_QC_RESP_LOCAL_PROTECTION] = "resp_local_protection",
        [VCX_QC_REQ_LOCAL_PROTECTION] = "req_local_protection",
        [VCX_QC_REQ_MW_BINDING] = "req_mw_binding",
        [VCX_QC_REQ_BAD_RESPONSE] = "req_bad_response",
        [VCX_QC_RESP_REMOTE_INVALID_REQUEST] = "resp_remote_invalid_request",
        [VCX_QC_REQ_REMOTE_OPERATION_ERRORS] = "req_remote_operation_errors",
        [VCX_QC_CQ_OVERFLOW] = "cq_overflow",
    };
    uint32_t id = vcx_get(qp->qpc, VCX_QPC_COUNTER_SET_ID);

    if (f < VCX_QC_RDMA_N && n) {
        trace_vcx_qp_qc(qp->qpn, names[f], n, id);
        vcx_qc_count(s, id, f, n);
    }
}

/*
 * Next receive WQE of the QP: 1 with its scatter list in sgl, 0 none, -1 error (QP in
 * ERR), -2 a bad segment (the WQE is consumed, *synd says how it completes).
 */
static int vcx_resp_get_wqe(VcxState *s, VcxQp *qp, const VcxRecv *rcv, VcxSgl *sgl,
                            uint16_t *index, uint8_t *synd)
{
    uint8_t wqe[1u << 9];
    uint32_t stride, first, pdn;
    uint32_t recv;
    const char *why = NULL;

    if (rcv->srq) {
        int r = vcx_srq_pop(s, rcv->srq, wqe, index);

        if (r <= 0) {
            *synd = VCX_CQE_SYND_LOCAL_QP_OP_ERR;
            return r;
        }
        stride = 1u << rcv->srq->log_stride;
        first = VCX_SRQ_NEXT_SEG_SIZE;
        pdn = rcv->srq->pdn;
    } else if (qp->rq_type == VCX_QP_RQ_TYPE_REGULAR) {
        stride = VCX_RQ_STRIDE_MIN << qp->log_rq_stride;
        /*
         * The doorbell record is read only when the WQEs it last announced are used up,
         * as an HCA caches the producer counter: software posting receives ahead keeps
         * the device off the cache line it is writing.
         */
        if (qp->rq_pi == qp->rq_ci) {
            if (vcx_dbr_read(s, qp->dbr_addr + VCX_QP_DBR_RECV, &recv) != MEMTX_OK) {
                vcx_qp_catas(s, qp, "doorbell record not readable");
                return -1;
            }
            qp->rq_pi = recv;
            if (qp->rq_pi == qp->rq_ci) {
                return 0;
            }
        }
        if (vcx_qbuf_read(s, &qp->buf, (uint64_t)(qp->rq_ci &
                                                  ((1u << qp->log_rq_size) - 1)) * stride,
                          wqe, stride) != MEMTX_OK) {
            vcx_qp_catas(s, qp, "receive WQE not readable");
            return -1;
        }
        *index = qp->rq_ci++;
        first = 0;
        pdn = qp->pdn;
    } else {
        return 0;
    }
    sgl->n = 0;
    sgl->total = 0;
    sgl->pdn = pdn;
    sgl->qpn = qp->qpn;
    sgl->access = VCX_ACC_LOCAL_WRITE;
    for (uint32_t off = first; off + VCX_WQE_DATA_SEG_SIZE <= stride;
         off += VCX_WQE_DATA_SEG_SIZE) {
        const uint8_t *d = wqe + off;
        uint32_t lkey = vcx_get(d, VCX_WQE_DATA_LKEY);
        uint32_t bc = vcx_get(d, VCX_WQE_DATA_BYTE_COUNT);
        uint64_t va = vcx_get64(d, VCX_WQE_DATA_ADDR);

        if (lkey == VCX_INVALID_LKEY) {
            break;
        }
        /*
         * The key, PD and access right are checked now; the range only for the bytes a
         * message writes (vcx_sgl_io), as on ConnectX and rxe: a receive entry may reach
         * past its key (perftest posts MTU-sized receives).
         */
        if (bc & VCX_WQE_INLINE_FLAG) {
            why = "inline segment in a receive WQE";
        } else if (!vcx_mkey_check(s, lkey, pdn, qp->qpn, va, 0, VCX_ACC_LOCAL_WRITE,
                                   &why)) {
            /* why set by the check */
        } else {
            sgl->sge[sgl->n++] = (VcxSge) { .key = lkey, .va = va, .len = bc };
            sgl->total += bc;
            continue;
        }
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x receive WQE 0x%x segment %u lkey "
                      "0x%x: %s\n", qp->qpn, *index, (off - first) / 16, lkey, why);
        trace_vcx_err_wqe(qp->qpn, *index, why);
        *synd = VCX_CQE_SYND_LOCAL_PROT_ERR;
        return -2;
    }
    return 1;
}

/*
 * The receive WQE for a message: one a message that never finished left consumed (it is
 * this message's now), else the next one of the RQ or SRQ; as vcx_resp_get_wqe().
 */
int vcx_resp_take_wqe(VcxState *s, VcxQp *qp, const VcxRecv *rcv, uint16_t *index,
                             uint8_t *synd)
{
    VcxRx *rx = &qp->xs->rx;

    if (rx->held && vcx_qp_is_xrc_tgt(qp) &&
        (rx->srqn != rcv->srq->srqn || rx->srq_gen != rcv->srq->gen)) {
        /* an XRC target's held WQE is of another XRC SRQ: it completes flushed there */
        VcxRecv old = vcx_recv_of(s, qp, rx->srqn, rx->srq_gen);

        rx->held = false;
        if (old.cq) {
            vcx_post_resp_err(s, qp, &old, VCX_CQE_SYND_WR_FLUSH_ERR, rx->index);
        }
    }
    if (rx->held) {
        rx->held = false;
        *index = rx->index;
        return 1;
    }
    return vcx_resp_get_wqe(s, qp, rcv, &rx->sgl, index, synd);
}

/* The 40 bytes in front of a UD receive: the GRH, or an IPv4 header in its last 20. */
void vcx_resp_grh(const VcxPkt *pkt, uint8_t *grh, bool *ipv4)
{
    static const uint8_t v4_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    uint32_t plen = VCX_ROCE_HDRS + 8 + pkt->len + 4;       /* + DETH, ICRC */

    memset(grh, 0, VCX_GRH_SIZE);
    *ipv4 = !memcmp(pkt->dgid, v4_prefix, sizeof(v4_prefix));
    if (*ipv4) {
        uint8_t *ip = grh + 20;
        uint32_t sum = 0;

        ip[0] = 0x45;
        ip[1] = pkt->tclass;
        stw_be_p(ip + 2, 20 + plen);
        stw_be_p(ip + 6, 0x4000);
        ip[8] = pkt->hop_limit;
        ip[9] = 17;
        memcpy(ip + 12, pkt->sgid + 12, 4);
        memcpy(ip + 16, pkt->dgid + 12, 4);
        for (int i = 0; i < 20; i += 2) {
            sum += lduw_be_p(ip + i);
        }
        sum = (sum & 0xffff) + (sum >> 16);
        sum = (sum & 0xffff) + (sum >> 16);
        stw_be_p(ip + 10, ~sum & 0xffff);
    } else {
        stl_be_p(grh, 6u << 28 | (uint32_t)pkt->tclass << 20 | (pkt->flow_label & 0xfffff));
        stw_be_p(grh + 4, plen);
        grh[6] = 17;
        grh[7] = pkt->hop_limit;
        memcpy(grh + 8, pkt->sgid, 16);
        memcpy(grh + 24, pkt->dgid, 16);
    }
}

void vcx_resp_error(VcxState *s, VcxQp *qp, const VcxRecv *rcv, uint8_t synd,
                           uint16_t index, bool consumed)
{
    if (consumed) {
        vcx_post_resp_err(s, qp, rcv, synd, index);
    }
    vcx_qp_to_err(s, qp);
}

bool vcx_resp_rkey(VcxState *s, VcxQp *qp, uint32_t pdn, const VcxPkt *pkt,
                          uint64_t len, uint32_t access, bool allowed, VcxMkey **mk)
{
    const char *why = "QP does not allow this remote access";

    *mk = NULL;
    if (allowed) {
        *mk = vcx_mkey_check(s, pkt->rkey, pdn, qp->qpn, pkt->va, len, access, &why);
    }
    if (!*mk) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x rkey 0x%x va 0x%" PRIx64 " len %"
                      PRIu64 ": %s\n", qp->qpn, pkt->rkey, pkt->va, len, why);
        trace_vcx_err_rkey(qp->qpn, pkt->rkey, pkt->va, why);
    }
    return *mk != NULL;
}

/*
 * An invalid request: an RC responder answers it with a NAK invalid request (IBTA
 * 9.7.5.2.2), counted in resp_remote_invalid_request as the wire's are (vcx_wire_nak);
 * UC and UD drop it.
 */
static void vcx_resp_nak_inval(VcxState *s, VcxQp *qp, VcxAck *ack, bool rc)
{
    ack->type = rc ? VCX_NAK_INV_REQ : VCX_NO_RESPONSE;
    if (rc) {
        vcx_qp_qc(s, qp, VCX_QC_RESP_REMOTE_INVALID_REQUEST);
    }
}

/* The message's data phase starts: payload of len bytes to move. */
static void vcx_resp_open(VcxState *s, VcxQp *qp, VcxQp *req, VcxXfer *x, uint64_t len,
                          bool whole)
{
    VcxRx *rx = &qp->xs->rx;

    x->active = true;
    x->whole = whole;
    x->left = len;
    x->resp_qpn = qp->qpn;
    x->resp_gen = qp->gen;
    x->seq = ++s->objs->xfer_seq;
    if (!whole && !x->read) {
        /* the responder is busy with it until vcx_resp_end() */
        rx->seq = x->seq;
        rx->owner = req->qpn;
        rx->owner_gen = req->gen;
        if (x->uses_rx) {
            rx->held = true;
            rx->index = x->index;
            rx->srqn = x->srqn;
            rx->srq_gen = x->srq_gen;
        }
    }
    trace_vcx_xfer_open(req->qpn, qp->qpn, x->seq, len);
}

/*
 * Responder, first packet: every check, the receive WQE, UD's GRH area. The message is
 * answered at once in rq->ack, or its payload is left to the data phase (rq->x.active).
 */
static void vcx_resp_begin(VcxState *s, VcxQp *req, VcxReq *rq)
{
    const VcxPkt *pkt = &rq->pkt;
    VcxAck *ack = &rq->ack;
    VcxXfer *x = &rq->x;
    uint8_t op = pkt->opcode & IB_OP_MASK;
    uint8_t transport = pkt->opcode & ~IB_OP_MASK;
    VcxQp *qp = vcx_qp_by_wire_qpn(s, pkt->dqpn);
    bool xrc = transport == IB_TRANSPORT_XRC;
    bool rc = transport == IB_TRANSPORT_RC || xrc, ud = transport == IB_TRANSPORT_UD;
    VcxRecv rcv;
    VcxSglCursor dst;
    VcxSgl *sgl;
    uint16_t index = 0;
    uint8_t synd = 0;
    VcxMkey *mk = NULL;
    int r;

    memset(x, 0, offsetof(VcxXfer, remote));
    x->op = op;
    ack->type = VCX_NO_RESPONSE;
    if (!qp || vcx_qp_transport(qp) != transport || !vcx_qp_receiving(qp)) {
        trace_vcx_resp_drop(pkt->dqpn, "no ready QP of that type");
        return;
    }
    if (ud && pkt->qkey != qp->q_key) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: %s QP 0x%x Q_Key 0x%x, message from QP 0x%x "
                      "carries 0x%x: dropped\n", qp->st == VCX_QP_ST_QP1 ? "GSI" : "UD",
                      qp->qpn, qp->q_key, pkt->sqpn, pkt->qkey);
        trace_vcx_resp_drop(qp->qpn, "Q_Key mismatch");
        return;
    }
    if (!ud && pkt->psn != qp->rq_psn) {
        trace_vcx_resp_drop(qp->qpn, "PSN out of sequence");
        ack->type = rc ? VCX_NAK_SEQ : VCX_NO_RESPONSE;
        return;
    }
    vcx_qp_comm_est(s, qp);             /* the first packet in RTR */
    if (!ud && vcx_rx_busy(s, &qp->xs->rx)) {
        /* a second sender interleaving its packets with the message in progress */
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x: message from QP 0x%x while one from "
                      "QP 0x%x is arriving: out of sequence\n", qp->qpn, pkt->sqpn,
                      qp->xs->rx.owner);
        trace_vcx_err_qp(qp->qpn, "message from a second sender while one is arriving");
        ack->type = rc ? VCX_NAK_SEQ : VCX_NO_RESPONSE;
        return;
    }
    /*
     * A request taken in order, in the responder's Q counter by kind, as the wire engine
     * counts a message's first packet (roce/vcx-roce-resp.c): a ConnectX counts loopback
     * traffic as any other.
     */
    vcx_qp_qc(s, qp, op == IB_OP_WRITE_ONLY || op == IB_OP_WRITE_ONLY_IMM ?
                     VCX_QC_RX_WRITE_REQUESTS :
                     op == IB_OP_READ_REQUEST ? VCX_QC_RX_READ_REQUESTS :
                     op == IB_OP_COMPARE_SWAP || op == IB_OP_FETCH_ADD ?
                     VCX_QC_RX_ATOMIC_REQUESTS : VCX_QC_RDMA_N);
    if (xrc) {
        /* the XRCETH names the SRQ, which must be of the target's domain (vcx-xrc.c) */
        const char *why = NULL;
        VcxSrq *srq = vcx_xrc_target_srq(s, qp, pkt->xrc_srqn, &why);

        if (!srq) {
            vcx_xrc_invalid_request(s, qp, pkt->xrc_srqn, why);
            vcx_resp_nak_inval(s, qp, ack, true);
            return;
        }
        rcv = vcx_recv_xrc(s, srq);
        x->srqn = srq->srqn;
        x->srq_gen = srq->gen;
    } else {
        rcv = vcx_recv_own(qp);
    }
    if (!xrc && qp->rq_type == VCX_QP_RQ_TYPE_ZERO_SIZE &&
        (op == IB_OP_SEND_ONLY || op == IB_OP_SEND_ONLY_IMM || op == IB_OP_SEND_ONLY_INV ||
         op == IB_OP_WRITE_ONLY_IMM)) {
        trace_vcx_resp_drop(qp->qpn, "message needs a receive queue, the QP has none");
        vcx_resp_nak_inval(s, qp, ack, rc);
        return;
    }

    switch (op) {
    case IB_OP_READ_REQUEST:
        if (!vcx_resp_rkey(s, qp, rcv.pdn, pkt, pkt->dma_len, VCX_ACC_REMOTE_READ, qp->rre,
                           &mk)) {
            goto access_error;
        }
        /* the read responses: the requester pulls them in its data phase */
        x->read = true;
        vcx_sgl_single(&x->remote, pkt->rkey, rcv.pdn, qp->qpn, VCX_ACC_REMOTE_READ,
                       pkt->va, pkt->dma_len);
        if (pkt->dma_len) {
            vcx_resp_open(s, qp, req, x, pkt->dma_len, false);
            x->src = (VcxSglCursor) { .sgl = &x->remote };
            x->dst = (VcxSglCursor) { .sgl = &rq->sgl };
        }
        goto ack;
    case IB_OP_COMPARE_SWAP:
    case IB_OP_FETCH_ADD: {
        uint8_t v[8];
        uint64_t orig, val;
        bool big;

        if (pkt->va & 7) {
            trace_vcx_err_rkey(qp->qpn, pkt->rkey, pkt->va, "atomic not 8-byte aligned");
            vcx_resp_nak_inval(s, qp, ack, true);
            vcx_qp_to_err(s, qp);
            return;
        }
        if (!vcx_resp_rkey(s, qp, rcv.pdn, pkt, 8, VCX_ACC_REMOTE_ATOMIC, qp->rae, &mk)) {
            goto access_error;
        }
        if (vcx_mkey_rw(s, mk, pkt->va, v, 8, false) != MEMTX_OK) {
            goto op_error;
        }
        /* the byte order the driver chose (atomic_req_8B_endianness_mode) */
        big = vcx_atomic_big_endian(s);
        orig = big ? ldq_be_p(v) : ldq_le_p(v);
        val = op == IB_OP_FETCH_ADD ? orig + pkt->swap_add
                                    : (orig == pkt->compare ? pkt->swap_add : orig);
        if (big) {
            stq_be_p(v, val);
        } else {
            stq_le_p(v, val);
        }
        if (vcx_mkey_rw(s, mk, pkt->va, v, 8, true) != MEMTX_OK) {
            goto op_error;
        }
        ack->atomic_orig = orig;
        goto ack;
    }
    case IB_OP_WRITE_ONLY:
    case IB_OP_WRITE_ONLY_IMM:
        if (pkt->len &&
            !vcx_resp_rkey(s, qp, rcv.pdn, pkt, pkt->len, VCX_ACC_REMOTE_WRITE, qp->rwe,
                           &mk)) {
            goto access_error;
        }
        if (op == IB_OP_WRITE_ONLY_IMM) {
            r = vcx_resp_take_wqe(s, qp, &rcv, &index, &synd);
            if (r == 0) {
                goto rnr;
            } else if (r < 0) {
                vcx_resp_error(s, qp, &rcv, synd, index, r == -2);
                ack->type = rc ? VCX_NAK_REM_OP : VCX_NO_RESPONSE;
                return;
            }
            x->uses_rx = true;
            x->index = index;
            x->cqe_op = VCX_CQE_RESP_WR_IMM;
        }
        vcx_sgl_single(&x->remote, pkt->rkey, rcv.pdn, qp->qpn, VCX_ACC_REMOTE_WRITE,
                       pkt->va, pkt->len);
        vcx_resp_open(s, qp, req, x, pkt->len, false);
        x->src = (VcxSglCursor) { .sgl = pkt->payload };
        x->dst = (VcxSglCursor) { .sgl = &x->remote };
        goto ack;
    case IB_OP_SEND_ONLY:
    case IB_OP_SEND_ONLY_IMM:
    case IB_OP_SEND_ONLY_INV: {
        uint64_t need = pkt->len + (ud ? VCX_GRH_SIZE : 0);

        r = vcx_resp_take_wqe(s, qp, &rcv, &index, &synd);
        if (r == 0) {
            goto rnr;
        } else if (r < 0) {
            vcx_resp_error(s, qp, &rcv, synd, index, r == -2);
            ack->type = rc ? VCX_NAK_REM_OP : VCX_NO_RESPONSE;
            return;
        }
        sgl = &qp->xs->rx.sgl;
        if (need > sgl->total) {
            qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x receive WQE 0x%x holds %" PRIu64
                          " bytes, message needs %" PRIu64 "\n", qp->qpn, index,
                          sgl->total, need);
            trace_vcx_err_wqe(qp->qpn, index, "receive WQE too short");
            vcx_resp_error(s, qp, &rcv, VCX_CQE_SYND_LOCAL_LENGTH_ERR, index, true);
            vcx_resp_nak_inval(s, qp, ack, rc);
            return;
        }
        dst = (VcxSglCursor) { .sgl = sgl };
        if (ud) {
            uint8_t grh[VCX_GRH_SIZE];
            bool ipv4;

            vcx_resp_grh(pkt, grh, &ipv4);
            if (vcx_sgl_io(s, &dst, grh, sizeof(grh), true) != MEMTX_OK) {
                vcx_resp_error(s, qp, &rcv, VCX_CQE_SYND_LOCAL_PROT_ERR, index, true);
                return;
            }
            x->l3 = ipv4 ? VCX_CQE_ROCE_L3_IPV4 : VCX_CQE_ROCE_L3_IPV6;
        }
        x->uses_rx = true;
        x->scatter = true;
        x->index = index;
        x->cqe_op = op == IB_OP_SEND_ONLY_INV ? VCX_CQE_RESP_SEND_INV :
                    op == IB_OP_SEND_ONLY_IMM ? VCX_CQE_RESP_SEND_IMM : VCX_CQE_RESP_SEND;
        vcx_resp_open(s, qp, req, x, pkt->len, ud);
        x->src = (VcxSglCursor) { .sgl = pkt->payload };
        x->dst = dst;
        goto ack;
    }
    default:
        vcx_resp_nak_inval(s, qp, ack, rc);
        vcx_qp_to_err(s, qp);
        return;
    }

ack:
    ack->type = VCX_ACK;
    if (!x->active && !x->read) {
        /* nothing to move: the message is complete (atomics, zero-length WRITE) */
        if (!ud) {
            qp->rq_psn = (qp->rq_psn + pkt->npkts) & VCX_PSN_MASK;
            qp->msn = (qp->msn + 1) & VCX_PSN_MASK;
        }
    } else if (x->read) {
        /* the READ request is accepted: its responses follow in the data phase */
        qp->rq_psn = (qp->rq_psn + pkt->npkts) & VCX_PSN_MASK;
        qp->msn = (qp->msn + 1) & VCX_PSN_MASK;
    }
    return;
rnr:
    trace_vcx_resp_rnr(qp->qpn, qp->min_rnr_nak);
    vcx_qp_qc(s, qp, VCX_QC_OUT_OF_BUFFER);     /* an RNR NAK sent, or UC/UD's loss */
    ack->type = rc ? VCX_NAK_RNR : VCX_NO_RESPONSE;
    ack->rnr_timer = qp->min_rnr_nak;
    return;
access_error:
    ack->type = rc ? VCX_NAK_REM_ACCESS : VCX_NO_RESPONSE;
    if (rc) {
        /* the NAK remote access error this responder sends, as the wire's (vcx_wire_nak) */
        vcx_qp_qc(s, qp, VCX_QC_RESP_REMOTE_ACCESS_ERRORS);
        vcx_qp_to_err(s, qp);
    }
    return;
op_error:
    ack->type = rc ? VCX_NAK_REM_OP : VCX_NO_RESPONSE;
    vcx_qp_to_err(s, qp);
}

/* The responder ends the message once its payload has moved: CQE, PSN. */
void vcx_resp_end(VcxState *s, VcxQp *qp, const VcxPkt *pkt, VcxXfer *x,
                         VcxAck *ack)
{
    bool ud = vcx_qp_is_dgram(qp);
    uint8_t cqe[VCX_CQE_SIZE];
    VcxRx *rx = &qp->xs->rx;
    /* an XRC SRQ is still there: vcx_xfer_run checked it before ending the message */
    VcxRecv rcv = vcx_recv_of(s, qp, x->srqn, x->srq_gen);

    rx->seq = 0;
    ack->type = VCX_ACK;
    if (x->uses_rx) {
        rx->held = false;
        if (x->op == IB_OP_SEND_ONLY_INV) {
            VcxMkey *inv = vcx_mkey_get(s, pkt->inv_rkey);

            if (!inv || inv->pdn != rcv.pdn || !inv->umr_en ||
                (inv->access_mode == VCX_MKC_ACCESS_MODE_KLM && !inv->indirect &&
                 (!inv->en_rinval || inv->qpn != qp->qpn))) {
                qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x send with invalidate of "
                              "key 0x%x: not an invalidatable key of the QP's PD\n",
                              qp->qpn, pkt->inv_rkey);
                trace_vcx_err_rkey(qp->qpn, pkt->inv_rkey, 0, "cannot invalidate");
                vcx_resp_error(s, qp, &rcv, VCX_CQE_SYND_LOCAL_QP_OP_ERR, x->index, true);
                vcx_resp_nak_inval(s, qp, ack, true);
                return;
            }
            inv->free = true;
            if (inv->access_mode == VCX_MKC_ACCESS_MODE_KLM) {
                inv->qpn = VCX_MKC_QPN_UNBOUND;     /* a type 2 window, unbound */
            }
        }
        /* A receive WQE was consumed: its completion. */
        memset(cqe, 0, sizeof(cqe));
        if (ud) {
            vcx_set(cqe, VCX_CQE_GRH, 1);
            vcx_set(cqe, VCX_CQE_ROCE_L3_TYPE, x->l3);
            /* the frame's 802.1Q tag (mlx5 CQE l4_l3_hdr_type bit 0 and vlan_info) */
            if (pkt->vlan) {
                vcx_set(cqe, VCX_CQE_VLAN_PRESENT, 1);
                vcx_set(cqe, VCX_CQE_VLAN_INFO, pkt->vlan_tci);
            }
        }
        vcx_set(cqe, VCX_CQE_RQPN, pkt->sqpn);
        if (rcv.srq) {
            vcx_set(cqe, VCX_CQE_SRQN_UIDX, rcv.srq->srqn);
        }
        vcx_set(cqe, VCX_CQE_IMM_INVAL_PKEY,
                x->cqe_op == VCX_CQE_RESP_SEND_INV ? pkt->inv_rkey :
                (x->cqe_op == VCX_CQE_RESP_SEND ? 0 : pkt->imm));
        if (qp->st == VCX_QP_ST_QP1) {
            /* GSI receives report the packet's BTH P_Key here (mlx5 CQE "pkey") */
            if (x->cqe_op == VCX_CQE_RESP_SEND) {
                vcx_set(cqe, VCX_CQE_IMM_INVAL_PKEY, VCX_DEFAULT_PKEY);
            }
            s->objs->qp1_received++;
        }
        vcx_set(cqe, VCX_CQE_BYTE_CNT, pkt->len + (ud ? VCX_GRH_SIZE : 0));
        vcx_set(cqe, VCX_CQE_QPN, qp->qpn);
        vcx_set(cqe, VCX_CQE_WQE_COUNTER, x->index);
        cqe[VCX_CQE_OP_OWN_BYTE] = x->cqe_op << 4;
        vcx_post(s, qp, rcv.cq, cqe, pkt->se);
    }
    if (!ud) {
        qp->rq_psn = (qp->rq_psn + pkt->npkts) & VCX_PSN_MASK;
        qp->msn = (qp->msn + 1) & VCX_PSN_MASK;
    }
}

/* A chunk of the payload could not move: how the responder and the answer take it. */
void vcx_resp_fault(VcxState *s, VcxQp *qp, VcxXfer *x, bool src_fault,
                           VcxAck *ack)
{
    bool rc = vcx_qp_reliable(qp);
    VcxRx *rx = &qp->xs->rx;
    VcxRecv rcv = vcx_recv_of(s, qp, x->srqn, x->srq_gen);

    rx->seq = 0;
    ack->type = rc ? VCX_NAK_REM_OP : VCX_NO_RESPONSE;
    if (x->scatter && !src_fault) {
        /* a SEND the receive WQE cannot hold: that WQE completes with the error */
        rx->held = false;
        vcx_resp_error(s, qp, &rcv, VCX_CQE_SYND_LOCAL_PROT_ERR, x->index, true);
        return;
    }
    /*
     * Remote operational error: the responder fails, and the receive WQE the message
     * consumed, if any, is flushed with it (vcx_xport_qp_err).
     */
    if (x->uses_rx) {
        rx->held = true;
        rx->index = x->index;
        rx->srqn = x->srqn;
        rx->srq_gen = x->srq_gen;
    }
    if (qp->state == VCX_QP_STATE_ERR) {
        vcx_xport_qp_err(s, qp);
    } else {
        vcx_qp_to_err(s, qp);
    }
}

/*
 * Hand a message to its destination: a QP of this port, or the wire (vcx_roce_route); a
 * UD message to a multicast GID to every member of its group on this port and the wire.
 * False if the WQE failed here.
 */
bool vcx_xport_transmit(VcxState *s, VcxQp *qp, VcxReq *rq)
{
    const VcxPkt *pkt = &rq->pkt;

    trace_vcx_pkt(pkt->opcode, pkt->sqpn, pkt->dqpn, pkt->psn, pkt->npkts, pkt->len);
    memset(&rq->ack, 0, sizeof(rq->ack));
    rq->x.active = false;
    rq->looped = false;
    /*
     * A port that is not operationally up (link property off, or PAOS admin down)
     * carries nothing, loopback included: the message is lost as on a dead wire, so RC
     * retries until its retry count is spent and UC/UD complete without delivery.
     */
    if (!vcx_port_oper_up(s)) {
        trace_vcx_resp_drop(pkt->dqpn, "port down");
        rq->ack.type = VCX_NO_RESPONSE;
        return true;
    }
    if (vcx_qp_is_dgram(qp) && pkt->dqpn == VCX_MCAST_QPN && vcx_gid_is_mcast(pkt->dgid)) {
        bool wire = vcx_roce_route(s, qp, pkt);

        /* with loopback-frames the group's frame itself reaches the port's members */
        if (!s->params.loopback_frames && !vcx_roce_mcg_loopback(s, qp, rq, wire)) {
            return false;
        }
        if (wire) {
            vcx_roce_req_start(s, qp, rq);
        } else {
            rq->ack.type = VCX_ACK;     /* UD: complete once sent */
        }
        return true;
    }
    if (vcx_roce_route(s, qp, pkt)) {
        vcx_roce_req_start(s, qp, rq);  /* a QP on another host: RoCEv2 frames */
        return true;
    }
    /* to a QP of the port, whole: its frames in the vport counters all the same */
    vcx_roce_count_whole(s, qp, rq, false);
    rq->looped = true;
    vcx_resp_begin(s, qp, rq);
    if (!rq->x.active) {
        trace_vcx_ack(pkt->dqpn, vcx_ack_names[rq->ack.type]);
    }
    return true;
}

