/*
 * vcx: transport engine: send queue execution (requester), receive processing
 * (responder), CQE generation and the loopback path between QPs of the port. This file
 * holds the executor, the requester and the data phase; the responder is in vcx-resp.c,
 * the Error state (flushes, the ERR watch) in vcx-flush.c, their shared types in
 * vcx-xport.h. The overview below covers all three.
 *
 * Structure, from doorbell to completion:
 *
 *   SQ doorbell (UAR BlueFlame register, 8-byte control segment), RTS transition,
 *   RNR / ACK timer, a QP entering ERR, the ERR watch's timer
 *     -> vcx_xport_kick() / err_due: queue the work and schedule the executor; nothing
 *        is executed in the caller (a timer, a command), except that the SQ doorbell's
 *        MMIO write first runs its own QP for a small slice under the re-entrancy
 *        guard its dispatch engaged (vcx_xport_doorbell_run)
 *     -> the executor (vcx_xport_bh): one bottom half per device, created with
 *        qemu_bh_new_guarded() on the device's MemReentrancyGuard; each run drains the
 *        run queue round robin under a budget and reschedules itself while work remains
 *     -> requester (vcx_req_*): fetch WQEs up to the doorbell record's producer counter,
 *        decode and check them (opcode for the QP type, DS count, lkeys), build a VcxPkt
 *     -> VcxPkt: one message as the BTH-level operation a RoCEv2 packet sequence
 *        carries (BTH opcode, PSN and packet count at the path MTU, DETH, RETH,
 *        AtomicETH, ImmDt, IETH, GRH fields); the payload is referenced as the
 *        requester's gather list. vcx_xport_transmit() delivers it to the responder of
 *        the destination QP on this port, or, for a destination GID that is not the
 *        port's own, hands it to the RoCEv2 wire engine (hw-model/roce/: packets at the
 *        path MTU, ACK/NAK, retransmission; the WQE then waits in rq->wire for its
 *        answer from the peer); with the loopback-frames property every message takes
 *        the wire engine, its frames to the port's own QPs looping inside the device.
 *     -> responder, first packet (vcx_resp_begin): QP and PSN checks, Q_Key, rkey
 *        checks, receive WQE from the RQ or SRQ, UD's GRH area; answers at once with a
 *        VcxAck (RNR NAK with the timer, NAK codes, atomic original value) or opens the
 *        message's data phase
 *     -> data phase (vcx_xfer_run): the payload moves guest buffer to guest buffer in
 *        one copy, pieces of both lists mapped in place (vcx_xfer_direct), through a
 *        4 KiB bounce buffer where a side is not plain RAM; WRITE and
 *        SEND from the requester's gather list to the rkey range or receive WQE, READ
 *        from the rkey range to the requester's scatter list; then the responder
 *        completes the message (vcx_resp_end: CQE, invalidation, PSN)
 *     -> requester completion: the answer's handling, atomic results, the requester
 *        CQE if the WQE asked for one or on error.
 *
 * Executor budget: one run starts at most VCX_XPORT_RUN_WQES WQEs (executed or flushed,
 * receives flushed included) and moves at most VCX_XPORT_RUN_BYTES payload bytes; see
 * the values below for why. A message larger than what is left of the run is resumed in
 * the next run where it stopped (VcxXfer: cursors into both lists), so one WQE may
 * span many runs; it still completes exactly once and WQEs complete in order, because
 * the SQ does not move past the WQE in execution. UD messages (one MTU at most) move in
 * one piece, so a run may overshoot the byte budget by one MTU; a QP's turn that spent
 * the byte budget may start one more WQE with VCX_XPORT_TAIL_BYTES (vcx-xport.h).
 *
 * Lifetimes. The executor runs between commands, never inside one, and commands never
 * run inside it: a command is an MMIO write, and MMIO into the device (its command
 * doorbell, a UAR, the MSI-X table) from the executor's own DMA or MSI-X messages is
 * refused by QEMU's re-entrancy guard, which the guarded bottom half engages, as the
 * UAR write's dispatch does for the doorbell's slice (the DMA
 * fails with MEMTX_ACCESS_ERROR and completes the WQE in error). Config space through
 * ECAM belongs to the host bridge, so the guard does not cover it: vcx_write_config()
 * refuses config writes while the guard is engaged (they can only come from the
 * device's own DMA or MSI-X), so a DMA or MSI-X message aimed at the FLR bit does not
 * reset the device under the executor; a reset that still reaches the device while it
 * is working (a bridge's secondary bus reset written by that DMA) is deferred to a
 * bottom half (vcx.c), and a run stops early while one is pending. Between runs,
 * commands and resets may destroy anything, so nothing the executor keeps across runs
 * is a pointer to another object:
 *   - the WQE in execution and its message (VcxReq, VcxXfer) belong to the requester
 *     QP (qp->xs) and go with it at DESTROY_QP and 2RST_QP; at 2ERR_QP the WQE is
 *     flushed;
 *   - memory keys are named by number in every gather/scatter entry (VcxSge) and are
 *     looked up and checked again (vcx_mkey_check: PD, QP, rights, range) for each
 *     piece, and a mapping never outlives its copy; a key destroyed, invalidated or
 *     re-registered since is refused as a protection / remote access fault, as hardware
 *     checks keys at access time;
 *   - the responder is named by QP number and incarnation (qp->gen, new at create and
 *     2RST_QP) and checked at every resume: gone, reset or no longer RTR/RTS, it lost
 *     the message (an RC requester retries after its ACK timeout, UC completes as on a
 *     lossy wire);
 *   - CQs, SRQs and PDs cannot be destroyed while a QP names them (BAD_RES_STATE);
 *   - an XRC target does not name the XRC SRQs its messages use (any of its domain,
 *     vcx-xrc.c): a message names its SRQ by number and incarnation (srq->gen), looked
 *     up again at every resume; one whose SRQ went away is lost like one whose responder
 *     went away, and the receive WQE it held goes with the SRQ.
 * The responder remembers the message arriving (VcxRx: its owner's QP number,
 * incarnation and message number) and the receive WQE it consumed for it. Another
 * sender's message meanwhile is out of sequence (RC NAK, UC drop). A message whose
 * requester went away leaves the WQE to the next message (as a restarted message
 * reuses it on the wire), and a responder entering ERR flushes it, so every receive
 * WQE too completes once and in order.
 *
 * RNR: a receive without a WQE is NAKed with the responder's min_rnr_nak; the RC
 * requester stalls its SQ and retries after that time (QEMU_CLOCK_VIRTUAL timer, IBTA
 * table 45 in vcx_rnr_ns()), up to rnr_retry times (7: forever), then completes with
 * RNR_RETRY_EXC_ERR. UC and UD drop the message (the requester completes successfully),
 * as the wire would.
 * Errors complete the WQE with the PRM syndrome, move the QP to ERR and flush every
 * outstanding WQE with WR_FLUSH_ERR CQEs (one per WQE). Loopback delivers whole messages
 * in order, so PSN, ACK timeout and retransmission logic reduce to: a message the
 * responder drops (no such QP, QP not yet ready) is sent again after the local ACK timeout
 * (4.096 us << ack_timeout of the primary path), up to retry_count times, then fails with
 * TRANSPORT_RETRY_EXC_ERR. A peer still on its way to RTR is the common case: the two
 * sides of a connection move to RTR at different moments. While the port is down every
 * message is lost the same way (vcx_xport_transmit).
 *
 * Atomics operate on 8 naturally aligned bytes in the byte order the driver chose with
 * the ATOMIC capability atomic_req_8B_endianness_mode (vcx_atomic_big_endian(): 0
 * big-endian, the default; 1 host order); the original value is returned the same way.
 *
 * QP1 (the GSI QP) is a UD QP whose wire number is 1 (vcx_qp_wire_qpn(),
 * vcx_qp_by_wire_qpn()): its datagrams carry source QPN 1, datagrams to QPN 1 reach it,
 * it accepts only the GSI Q_Key 0x80010000, and its receive CQEs carry the P_Key.
 *
 * Source GIDs come from the RoCE address table (vcx-roce.c): a UD WQE's address vector
 * names its entry by sgid_index (an empty entry fails the WQE with a local QP operation
 * error); RC/UC use the path's src_addr_index, checked when the path was applied.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/units.h"
#include "hw/pci/pci_device.h"
#include "vcx-xport.h"
#include "trace.h"

const char *const vcx_ack_names[] = {
    "ACK", "RNR NAK", "PSN NAK", "invalid request NAK", "remote access NAK",
    "remote operational NAK", "no response",
};

static void vcx_rnr_timer_cb(void *opaque);

/*
 * Scatter/gather copy
 */

MemTxResult vcx_sgl_io(VcxState *s, VcxSglCursor *c, uint8_t *buf, uint32_t len,
                              bool write)
{
    const VcxSgl *l = c->sgl;
    uint32_t guard = VCX_MAX_SGE + 1;

    while (len && guard--) {
        const VcxSge *e;
        uint32_t n;

        if (c->i >= l->n) {
            return MEMTX_DECODE_ERROR;
        }
        e = &l->sge[c->i];
        n = MIN(len, e->len - c->off);
        if (n && e->data) {
            if (write) {
                return MEMTX_DECODE_ERROR;      /* inline data is a gather source only */
            }
            memcpy(buf, e->data + c->off, n);
        } else if (n) {
            uint64_t va = e->va + c->off;
            const char *why = NULL;
            VcxMkey *mk = vcx_mkey_check(s, e->key, l->pdn, l->qpn, va, n, l->access,
                                         &why);
            MemTxResult r;

            if (!mk) {
                qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x key 0x%x va 0x%" PRIx64
                              " len %u: %s\n", l->qpn, e->key, va, n, why);
                trace_vcx_err_rkey(l->qpn, e->key, va, why);
                return MEMTX_ACCESS_ERROR;
            }
            r = vcx_mkey_rw(s, mk, va, buf, n, write);
            if (r != MEMTX_OK) {
                return r;
            }
        }
        buf += n;
        len -= n;
        c->off += n;
        if (c->off == e->len) {
            c->i++;
            c->off = 0;
        }
    }
    return len ? MEMTX_DECODE_ERROR : MEMTX_OK;
}

/* Step over empty entries, so that the cursor names the entry the next byte comes from. */
static void vcx_sgl_skip_empty(VcxSglCursor *c)
{
    while (c->i < c->sgl->n && c->off == c->sgl->sge[c->i].len) {
        c->i++;
        c->off = 0;
    }
}

/*
 * Zero-copy piece: the next at most len bytes of the list as host memory, inline bytes
 * as they are, key bytes mapped in place. *mapped says whether vcx_mkey_unmap must give
 * it back. 0 when the piece is not plain RAM or its key does not pass the check; the
 * bounce path then moves it and reports exactly what is wrong, so the zero-copy path
 * never decides an error itself.
 */
static uint32_t vcx_sgl_piece(VcxState *s, VcxSglCursor *c, uint32_t len, bool write,
                              uint8_t **p, bool *mapped)
{
    const VcxSgl *l = c->sgl;
    const VcxSge *e;
    const char *why;
    uint32_t n;
    uint64_t va;
    VcxMkey *mk;

    vcx_sgl_skip_empty(c);
    *mapped = false;
    if (c->i >= l->n) {
        return 0;
    }
    e = &l->sge[c->i];
    n = MIN(len, e->len - c->off);
    if (e->data) {
        if (write) {
            return 0;
        }
        *p = (uint8_t *)e->data + c->off;
        return n;
    }
    va = e->va + c->off;
    mk = vcx_mkey_check(s, e->key, l->pdn, l->qpn, va, n, l->access, &why);
    if (!mk) {
        return 0;
    }
    *p = vcx_mkey_map(s, mk, va, n, write, &n);
    if (!*p) {
        return 0;
    }
    *mapped = true;
    return n;
}

static void vcx_sgl_advance(VcxSglCursor *c, uint32_t n)
{
    c->off += n;
    vcx_sgl_skip_empty(c);
}

/*
 * Move up to len bytes from x->src to x->dst in one copy, guest buffer to guest buffer.
 * Returns the bytes moved; 0 if either side's next piece is not plain RAM.
 */
static uint32_t vcx_xfer_direct(VcxState *s, VcxXfer *x, uint32_t len)
{
    uint8_t *src, *dst;
    bool src_mapped, dst_mapped;
    uint32_t ns, nd, n = 0;

    ns = vcx_sgl_piece(s, &x->src, len, false, &src, &src_mapped);
    if (!ns) {
        return 0;
    }
    nd = vcx_sgl_piece(s, &x->dst, ns, true, &dst, &dst_mapped);
    if (nd) {
        n = MIN(ns, nd);
        memmove(dst, src, n);      /* a loopback transfer may name the same buffer */
        vcx_sgl_advance(&x->src, n);
        vcx_sgl_advance(&x->dst, n);
    }
    if (dst_mapped) {
        vcx_mkey_unmap(s, dst, nd, true, n);
    }
    if (src_mapped) {
        vcx_mkey_unmap(s, src, ns, false, n);
    }
    return n;
}

/* A key range as a one-entry list. */
void vcx_sgl_single(VcxSgl *l, uint32_t key, uint32_t pdn, uint32_t qpn,
                           uint32_t access, uint64_t va, uint32_t len)
{
    l->n = 1;
    l->total = len;
    l->pdn = pdn;
    l->qpn = qpn;
    l->access = access;
    l->sge[0] = (VcxSge) { .key = key, .va = va, .len = len };
}

VcxRecv vcx_recv_own(VcxQp *qp)
{
    return (VcxRecv) { qp->rq_type == VCX_QP_RQ_TYPE_SRQ ? qp->srq : NULL, qp->rcq,
                       qp->pdn };
}

VcxRecv vcx_recv_xrc(VcxState *s, VcxSrq *srq)
{
    return (VcxRecv) { srq, vcx_cq_get(s, srq->cqn), srq->pdn };
}

/* An XRC target's SRQ by number and incarnation: .srq is NULL once it is gone. */
VcxRecv vcx_recv_of(VcxState *s, VcxQp *qp, uint32_t srqn, uint64_t gen)
{
    VcxSrq *srq;

    if (!vcx_qp_is_xrc_tgt(qp)) {
        return vcx_recv_own(qp);
    }
    srq = vcx_srq_get(s, srqn);
    if (!srq || srq->gen != gen) {
        return (VcxRecv) { NULL, NULL, 0 };
    }
    return vcx_recv_xrc(s, srq);
}

/* BTH transport a QP receives: 0xff for none (REG_UMR, XRC initiator). */
uint8_t vcx_qp_transport(const VcxQp *qp)
{
    switch (qp->st) {
    case VCX_QP_ST_RC:
        return IB_TRANSPORT_RC;
    case VCX_QP_ST_UC:
        return IB_TRANSPORT_UC;
    case VCX_QP_ST_UD:
    case VCX_QP_ST_QP1:
        return IB_TRANSPORT_UD;
    case VCX_QP_ST_XRC:
        return qp->no_sq ? IB_TRANSPORT_XRC : 0xff;
    default:
        return 0xff;
    }
}

/* Reliable: RC and XRC (ACKs, NAKs, retries). */
bool vcx_qp_reliable(const VcxQp *qp)
{
    return qp->st == VCX_QP_ST_RC || qp->st == VCX_QP_ST_XRC;
}

/*
 * CQEs
 */

static void vcx_cqe_req(uint8_t *cqe, VcxQp *qp, uint16_t wqe_index, uint8_t wqe_opcode,
                        uint32_t byte_cnt)
{
    memset(cqe, 0, VCX_CQE_SIZE);
    vcx_set(cqe, VCX_CQE_BYTE_CNT, byte_cnt);
    vcx_set(cqe, VCX_CQE_SOP_OPCODE, wqe_opcode);
    vcx_set(cqe, VCX_CQE_QPN, qp->qpn);
    vcx_set(cqe, VCX_CQE_WQE_COUNTER, wqe_index);
    cqe[VCX_CQE_OP_OWN_BYTE] = VCX_CQE_REQ << 4;
}

void vcx_cqe_err(uint8_t *cqe, VcxQp *qp, uint8_t cqe_opcode, uint8_t synd,
                        uint16_t wqe_index, uint8_t wqe_opcode)
{
    memset(cqe, 0, VCX_CQE_SIZE);
    if (qp->srq && cqe_opcode == VCX_CQE_RESP_ERR) {
        vcx_set(cqe, VCX_CQE_SRQN_UIDX, qp->srq->srqn);
    }
    vcx_set(cqe, VCX_CQE_SYNDROME, synd);
    vcx_set(cqe, VCX_CQE_SOP_OPCODE, wqe_opcode);
    vcx_set(cqe, VCX_CQE_QPN, qp->qpn);
    vcx_set(cqe, VCX_CQE_WQE_COUNTER, wqe_index);
    cqe[VCX_CQE_OP_OWN_BYTE] = cqe_opcode << 4;
}

/*
 * A CQE of qp's on cq (none: no CQE). One that finds the CQ full puts it in error
 * (vcx_cq_post) and counts in the QP's cq_overflow.
 */
void vcx_post(VcxState *s, VcxQp *qp, VcxCq *cq, uint8_t *cqe, bool se)
{
    uint8_t status;

    if (!cq) {
        return;
    }
    status = cq->status;
    if (!vcx_cq_post(s, cq, cqe, se) && status == VCX_CQC_STATUS_OK &&
        cq->status == VCX_CQC_STATUS_OVERFLOW) {
        vcx_qp_qc(s, qp, VCX_QC_CQ_OVERFLOW);
    }
}

/*
 * The field of the enhanced error group (PRM "Counters", query_q_counter_out) an error
 * CQE of the requester (req) or the responder counts in by its syndrome, beside
 * req_cqe_error or resp_cqe_error; VCX_QC_RDMA_N for none (a local access error, an
 * abort, and the NAK syndromes on the responder side, which counts the NAKs it sends).
 */
static VcxQcRdma vcx_err_qc(uint8_t synd, bool req)
{
    switch (synd) {
    case VCX_CQE_SYND_LOCAL_LENGTH_ERR:
        return req ? VCX_QC_REQ_LOCAL_LENGTH_ERROR : VCX_QC_RESP_LOCAL_LENGTH_ERROR;
    case VCX_CQE_SYND_LOCAL_QP_OP_ERR:
        return req ? VCX_QC_LOCAL_OPERATION_ERROR : VCX_QC_RESP_LOCAL_QP_ERROR;
    case VCX_CQE_SYND_LOCAL_PROT_ERR:
        return req ? VCX_QC_REQ_LOCAL_PROTECTION : VCX_QC_RESP_LOCAL_PROTECTION;
    case VCX_CQE_SYND_WR_FLUSH_ERR:
        return req ? VCX_QC_REQ_CQE_FLUSH_ERROR : VCX_QC_RESP_CQE_FLUSH_ERROR;
    }
    if (!req) {
        return VCX_QC_RDMA_N;
    }
    switch (synd) {
    case VCX_CQE_SYND_MW_BIND_ERR:
        return VCX_QC_REQ_MW_BINDING;
    case VCX_CQE_SYND_BAD_RESP_ERR:
        return VCX_QC_REQ_BAD_RESPONSE;
    case VCX_CQE_SYND_REMOTE_INVAL_REQ_ERR:
        return VCX_QC_REQ_REMOTE_INVALID_REQUEST;
    case VCX_CQE_SYND_REMOTE_ACCESS_ERR:
        return VCX_QC_REQ_REMOTE_ACCESS_ERRORS;
    case VCX_CQE_SYND_REMOTE_OP_ERR:
        return VCX_QC_REQ_REMOTE_OPERATION_ERRORS;
    case VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR:
        return VCX_QC_REQ_TRANSPORT_RETRIES_EXCEEDED;
    case VCX_CQE_SYND_RNR_RETRY_EXC_ERR:
        return VCX_QC_REQ_RNR_RETRIES_EXCEEDED;
    }
    return VCX_QC_RDMA_N;
}

/*
 * A receive WQE completes in error, on the CQ of its receive side (srqn if an SRQ's). Every
 * responder error CQE but the RQ flushes of vcx_flush_rq is written here, for both
 * engines, and counted in the responder's Q counter: resp_cqe_error, and the field of
 * its syndrome (vcx_err_qc).
 */
void vcx_post_resp_err(VcxState *s, VcxQp *qp, const VcxRecv *rcv, uint8_t synd,
                              uint16_t index)
{
    uint8_t cqe[VCX_CQE_SIZE];

    if (!rcv->cq) {
        return;                 /* no receive CQ (an XRC SRQ gone since): no CQE */
    }
    vcx_cqe_err(cqe, qp, VCX_CQE_RESP_ERR, synd, index, 0);
    vcx_set(cqe, VCX_CQE_SRQN_UIDX, rcv->srq ? rcv->srq->srqn : 0);
    vcx_post(s, qp, rcv->cq, cqe, false);
    vcx_qp_qc(s, qp, VCX_QC_RESP_CQE_ERROR);
    vcx_qp_qc(s, qp, vcx_err_qc(synd, false));
}

/*
 * Executor and run queue
 */

static void vcx_xport_requeue(VcxObjects *o, VcxQp *qp)
{
    if (!qp->kicked) {
        qp->kicked = true;
        QTAILQ_INSERT_TAIL(&o->runq, qp, run_link);
    }
}

uint32_t vcx_sq_size(VcxQp *qp)
{
    return qp->no_sq ? 0 : 1u << qp->log_sq_size;
}

/* Work for the QP's SQ: it joins the run queue. */
static void vcx_xport_queue(VcxState *s, VcxQp *qp)
{
    /* as many WQEs as the SQ holds per kick: a counter run past the WQEs stops there */
    qp->xs->allow = vcx_sq_size(qp);
    qp->xs->fresh = true;
    vcx_xport_requeue(s->objs, qp);
}

void vcx_xport_kick(VcxState *s, VcxQp *qp)
{
    vcx_xport_queue(s, qp);
    if (!s->objs->in_run) {
        /* inside a run, its end schedules the bottom half for a queue left non-empty */
        qemu_bh_schedule(s->objs->bh);
    }
}

/*
 * QPs queued for the executor, plus one for a due ERR watch, one for NIC work (SQs or
 * frames waiting) and one per CQ event whose moderation period ended, for the state
 * property.
 */
uint32_t vcx_xport_queued(VcxState *s)
{
    VcxObjects *o = s->objs;
    uint32_t n = o->err_due + vcx_nic_pending(s) + vcx_roce_pending(s);
    VcxQp *qp;
    VcxCq *cq;

    QTAILQ_FOREACH(qp, &o->runq, run_link) {
        n++;
    }
    QTAILQ_FOREACH(cq, &o->modq, mod_link) {
        n++;
    }
    return n;
}

/*
 * Requester
 */

/* RNR NAK timer field (IBTA 9.7.5.2.8, table 45), in nanoseconds. */
int64_t vcx_rnr_ns(uint8_t t)
{
    /* units of 10 us: 0 is 655.36 ms, 1 is 0.01 ms ... 31 is 491.52 ms */
    static const uint32_t us10[32] = {
        65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512,
        768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
    };

    return (int64_t)us10[t & 31] * 10000;
}

/*
 * Local ACK timeout: 4.096 us << ack_timeout (IBTA 9.7.6.1.3); 0 means "infinite" on
 * the wire, where the requester would wait for ever: loopback takes the shortest period.
 */
static int64_t vcx_ack_timeout_ns(VcxQp *qp)
{
    uint32_t t = vcx_get(qp->qpc + VCX_QPC_PRI_PATH_AT, VCX_ADS_ACK_TIMEOUT);

    return 4096LL << MIN(MAX(t, 1u), 31u);
}

/*
 * The QP's RNR / ACK timer ends its wait ns from now. lazy: a deadline that only moves
 * later (the local ACK timer restarted at each ACK) leaves a timer that is already due
 * earlier alone, and the callback sets it again for what is left. Moving a QEMU timer
 * that is the clock's earliest wakes the main loop (an eventfd write, then the BQL taken
 * against the vCPUs): once per ACK that was a quarter of the looped frames' cost.
 */
void vcx_qp_timer_arm(VcxQp *qp, int64_t ns, bool lazy)
{
    int64_t due = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + ns;

    qp->timer_due = due;
    if (lazy && timer_pending(qp->rnr_timer) && timer_expire_time_ns(qp->rnr_timer) <= due) {
        return;
    }
    timer_mod(qp->rnr_timer, due);
}

/* The RNR / ACK timer: the SQ may go on; the executor does it. */
static void vcx_rnr_timer_cb(void *opaque)
{
    VcxQp *qp = opaque;

    if (qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) < qp->timer_due) {
        timer_mod(qp->rnr_timer, qp->timer_due);        /* pushed back meanwhile */
        return;
    }
    qp->rnr_wait = false;
    if (qp->ack_wait) {
        /* ConnectX counts the timeouts within retry_count (the last: retries exceeded) */
        qp->ack_wait = false;
        vcx_qp_qc(qp->s, qp, VCX_QC_LOCAL_ACK_TIMEOUT_ERR);
    }
    trace_vcx_rnr_retry(qp->qpn, qp->rnr_left);
    vcx_xport_kick(qp->s, qp);
}

/*
 * Complete the WQE at sq_ci in error and move the QP to ERR (the executor flushes). Every
 * requester error CQE but the flushes (vcx-flush.c) is written here, for both engines.
 */
void vcx_req_fail(VcxState *s, VcxQp *qp, uint32_t nbb, uint8_t wqe_op,
                         uint8_t synd, const char *why)
{
    uint8_t cqe[VCX_CQE_SIZE];

    qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x WQE 0x%x (opcode 0x%x): %s: error CQE "
                  "syndrome 0x%x\n", qp->qpn, qp->sq_ci, wqe_op, why, synd);
    trace_vcx_err_wqe(qp->qpn, qp->sq_ci, why);
    vcx_cqe_err(cqe, qp, VCX_CQE_REQ_ERR, synd, qp->sq_ci, wqe_op);
    vcx_post(s, qp, qp->scq, cqe, false);
    vcx_qp_qc(s, qp, VCX_QC_REQ_CQE_ERROR);
    vcx_qp_qc(s, qp, vcx_err_qc(synd, true));
    qp->sq_ci += nbb;
    qp->xs->req.x.active = false;
    qp->xs->req.wire = false;
    vcx_qp_to_err(s, qp);
}

/* Parse the data and inline segments from byte off to the end of the WQE. */
static uint8_t vcx_req_gather(VcxState *s, VcxQp *qp, VcxReq *rq, uint32_t off,
                              uint32_t end, uint32_t access, const char **why)
{
    VcxSgl *l = &rq->sgl;

    l->n = 0;
    l->total = 0;
    l->pdn = qp->pdn;
    l->qpn = qp->qpn;
    l->access = access;
    while (off < end) {
        const uint8_t *d = rq->wqe + off;
        uint32_t bc = vcx_get(d, VCX_WQE_DATA_BYTE_COUNT);

        if (l->n == VCX_MAX_SGE) {
            *why = "too many segments";
            return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
        }
        if (bc & VCX_WQE_INLINE_FLAG) {
            uint32_t len = bc & ~VCX_WQE_INLINE_FLAG;

            if (access != VCX_ACC_LOCAL_READ ||
                len > end - off - VCX_WQE_INLINE_HDR_SIZE) {
                *why = "inline segment beyond the WQE or in a read/atomic";
                return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
            }
            l->sge[l->n++] = (VcxSge) { .data = d + VCX_WQE_INLINE_HDR_SIZE, .len = len };
            l->total += len;
            off += vcx_wqe_inline_ds(len) * VCX_WQE_DS;
        } else {
            uint32_t lkey = vcx_get(d, VCX_WQE_DATA_LKEY);
            uint64_t va = vcx_get64(d, VCX_WQE_DATA_ADDR);
            uint32_t len = bc ? bc : 0x80000000u;

            if (end - off < VCX_WQE_DATA_SEG_SIZE) {
                *why = "data segment beyond the WQE";
                return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
            }
            /* checked in full now, and again for each chunk as it moves */
            if (!vcx_mkey_check(s, lkey, qp->pdn, qp->qpn, va, len, access, why)) {
                return VCX_CQE_SYND_LOCAL_PROT_ERR;
            }
            l->sge[l->n++] = (VcxSge) { .key = lkey, .va = va, .len = len };
            l->total += len;
            off += VCX_WQE_DATA_SEG_SIZE;
        }
    }
    return 0;
}

static bool vcx_op_valid(uint8_t st, uint8_t op)
{
    if (st == VCX_QP_ST_REG_UMR) {
        return op == VCX_OPCODE_UMR || op == VCX_OPCODE_NOP;
    }
    switch (op) {
    case VCX_OPCODE_NOP:
    case VCX_OPCODE_SEND:
    case VCX_OPCODE_SEND_IMM:
    case VCX_OPCODE_UMR:
        return true;
    case VCX_OPCODE_RDMA_WRITE:
    case VCX_OPCODE_RDMA_WRITE_IMM:
        return st == VCX_QP_ST_RC || st == VCX_QP_ST_UC || st == VCX_QP_ST_XRC;
    case VCX_OPCODE_SEND_INVAL:
    case VCX_OPCODE_RDMA_READ:
    case VCX_OPCODE_ATOMIC_CS:
    case VCX_OPCODE_ATOMIC_FA:
        return st == VCX_QP_ST_RC || st == VCX_QP_ST_XRC;
    default:
        return false;
    }
}

/*
 * The next fixed-size segment of the WQE being decoded, advancing *off past it; NULL
 * when the WQE's DS count ends before it (a local QP operation error).
 */
static const uint8_t *vcx_req_take_seg(VcxReq *rq, uint32_t *off, uint32_t end,
                                       uint32_t size, const char *missing)
{
    const uint8_t *seg = rq->wqe + *off;

    if (end < *off + size) {
        rq->synd = VCX_CQE_SYND_LOCAL_QP_OP_ERR;
        rq->why = missing;
        return NULL;
    }
    *off += size;
    return seg;
}

/* A send WQE completed: its requester CQE, if its control segment asked for one. */
void vcx_req_post_cqe(VcxState *s, VcxQp *qp, uint16_t index, uint8_t wqe_opcode,
                      uint8_t fm_ce_se, uint32_t byte_cnt)
{
    uint8_t cqe[VCX_CQE_SIZE];

    if ((fm_ce_se & VCX_WQE_CE_CQE) == VCX_WQE_CE_CQE) {
        vcx_cqe_req(cqe, qp, index, wqe_opcode, byte_cnt);
        vcx_post(s, qp, qp->scq, cqe, false);
    }
}

/* The WQE at sq_ci completed: its CQE if it asked for one, and the SQ moves on. */
static VcxStep vcx_req_complete(VcxState *s, VcxQp *qp, VcxReq *rq)
{
    vcx_req_post_cqe(s, qp, qp->sq_ci, rq->opcode, rq->fm_ce_se, rq->byte_cnt);
    qp->sq_ci += rq->nbb;
    rq->wire = false;
    qp->rnr_left = qp->rnr_retry;
    qp->retry_left = qp->retry_count;
    return VCX_STEP_DONE;
}

/* A decode failure: the CQE syndrome and the reason, for the WQE's error completion. */
static VcxDecode vcx_req_bad(VcxReq *rq, uint8_t synd, const char *why)
{
    rq->synd = synd;
    rq->why = why;
    return VCX_DEC_FAIL;
}

/*
 * Fetch and decode the WQE at SQ position index into rq: its message as a VcxPkt with the
 * gather list, without acting on it, so the RC wire requester can decode a WQE again
 * when it sends the WQE's packets again (roce/vcx-roce-req.c). MSG: a message to send;
 * LOCAL: a WQE executed by the device itself (UMR, NOP; checked further when executed);
 * FAIL: the WQE completes in error with rq->synd (rq->why); CATAS: the WQE could not be
 * read (a catastrophic QP error, rq->why).
 */
VcxDecode vcx_req_decode(VcxState *s, VcxQp *qp, VcxReq *rq, uint16_t index)
{
    uint8_t *w = rq->wqe;
    VcxPkt *pkt = &rq->pkt;
    uint32_t ds, end, off = VCX_WQE_CTRL_SIZE, access = VCX_ACC_LOCAL_READ;
    uint8_t transport, synd;
    uint32_t mtu = 128u << qp->mtu;
    const char *why = NULL;
    const uint8_t *sgid, *path, *seg;

    rq->x.active = false;
    rq->index = index;
    rq->nbb = 1;
    rq->opcode = 0;
    if (vcx_qbuf_read(s, &qp->buf, vcx_sq_off(qp, index), w, VCX_SEND_WQEBB) != MEMTX_OK) {
        rq->why = "send WQE not readable";
        return VCX_DEC_CATAS;
    }
    rq->opcode = vcx_get(w, VCX_WQE_CTRL_OPCODE);
    rq->fm_ce_se = vcx_get(w, VCX_WQE_CTRL_FM_CE_SE);
    ds = vcx_get(w, VCX_WQE_CTRL_DS_CNT);
    rq->nbb = MAX(DIV_ROUND_UP(ds * VCX_WQE_DS, VCX_SEND_WQEBB), 1);
    if (!ds || rq->nbb > VCX_SEND_WQE_MAX_WQEBBS || rq->nbb > vcx_sq_size(qp)) {
        rq->nbb = 1;
        return vcx_req_bad(rq, VCX_CQE_SYND_LOCAL_QP_OP_ERR, "bad DS count");
    }
    for (uint32_t i = 1; i < rq->nbb; i++) {
        if (vcx_qbuf_read(s, &qp->buf, vcx_sq_off(qp, index + i), w + i * VCX_SEND_WQEBB,
                          VCX_SEND_WQEBB) != MEMTX_OK) {
            rq->why = "send WQE not readable";
            return VCX_DEC_CATAS;
        }
    }
    end = ds * VCX_WQE_DS;
    rq->end = end;
    if (!vcx_op_valid(qp->st, rq->opcode)) {
        return vcx_req_bad(rq, VCX_CQE_SYND_LOCAL_QP_OP_ERR,
                           "opcode not valid for the QP type");
    }
    rq->byte_cnt = 0;
    if (rq->opcode == VCX_OPCODE_UMR || qp->st == VCX_QP_ST_REG_UMR) {
        return VCX_DEC_LOCAL;       /* memory key registration / invalidation, or a NOP */
    }

    transport = qp->st == VCX_QP_ST_XRC ? IB_TRANSPORT_XRC :
                qp->st == VCX_QP_ST_RC ? IB_TRANSPORT_RC :
                qp->st == VCX_QP_ST_UC ? IB_TRANSPORT_UC : IB_TRANSPORT_UD;
    memset(pkt, 0, sizeof(*pkt));
    pkt->se = rq->fm_ce_se & VCX_WQE_SE_SOLICITED;
    pkt->sqpn = vcx_qp_wire_qpn(qp);
    pkt->dqpn = qp->remote_qpn;
    pkt->psn = qp->sq_psn;
    pkt->imm = vcx_get(w, VCX_WQE_CTRL_IMM);
    pkt->hop_limit = vcx_get(qp->qpc + VCX_QPC_PRI_PATH_AT, VCX_ADS_HOP_LIMIT);
    pkt->tclass = vcx_get(qp->qpc + VCX_QPC_PRI_PATH_AT, VCX_ADS_TCLASS);
    pkt->flow_label = vcx_get(qp->qpc + VCX_QPC_PRI_PATH_AT, VCX_ADS_FLOW_LABEL);
    memcpy(pkt->dgid, qp->qpc + VCX_QPC_PRI_PATH_AT + VCX_FLD_BYTE(VCX_ADS_RGID_RIP), 16);
    /* RC/UC: the path's source GID, checked when the path was set (0 if deleted since) */
    path = qp->qpc + VCX_QPC_PRI_PATH_AT;
    sgid = vcx_qp_is_dgram(qp) ? NULL :
           vcx_gid_entry(s, vcx_get(path, VCX_ADS_SRC_ADDR_INDEX));

    if (vcx_qp_is_dgram(qp) && rq->opcode != VCX_OPCODE_NOP) {
        const uint8_t *av = vcx_req_take_seg(rq, &off, end, VCX_WQE_AV_SIZE,
                                             "no datagram segment");

        if (!av) {
            return VCX_DEC_FAIL;
        }
        pkt->qkey = vcx_get(av, VCX_WQE_AV_QKEY);
        if (pkt->qkey & 0x80000000u) {
            pkt->qkey = qp->q_key;      /* controlled Q_Key: the QP's own */
        }
        pkt->dqpn = vcx_get(av, VCX_WQE_AV_DQPN);
        pkt->hop_limit = vcx_get(av, VCX_WQE_AV_HOP_LIMIT);
        pkt->tclass = vcx_get(av, VCX_WQE_AV_TCLASS);
        pkt->flow_label = vcx_get(av, VCX_WQE_AV_FLOW_LABEL);
        memcpy(pkt->dgid, av + VCX_FLD_BYTE(VCX_WQE_AV_RGID), 16);
        pkt->av = av;
        sgid = vcx_gid_entry(s, vcx_get(av, VCX_WQE_AV_SGID_INDEX));
        if (!sgid) {
            return vcx_req_bad(rq, VCX_CQE_SYND_LOCAL_QP_OP_ERR,
                               "address vector sgid_index names no RoCE address");
        }
    }
    if (sgid) {
        memcpy(pkt->sgid, sgid + VCX_FLD_BYTE(VCX_GID_L3_ADDRESS), 16);
        /* the tag a frame would carry (PCP from the AV or the path) */
        pkt->vlan = vcx_gid_vlan_tci(sgid, pkt->av ? vcx_get(pkt->av, VCX_WQE_AV_SL_ROCE) :
                                     vcx_get(path, VCX_ADS_ETH_PRIO), &pkt->vlan_tci);
    }
    if (qp->st == VCX_QP_ST_XRC && rq->opcode != VCX_OPCODE_NOP) {
        /* XRC initiator: the XRC segment (the remote XRC SRQ) follows the control one */
        seg = vcx_req_take_seg(rq, &off, end, VCX_WQE_XRC_SEG_SIZE, "no XRC segment");
        if (!seg) {
            return VCX_DEC_FAIL;
        }
        pkt->xrc_srqn = vcx_get(seg, VCX_XRC_SEG_SRQN);
    }

    switch (rq->opcode) {
    case VCX_OPCODE_RDMA_WRITE:
    case VCX_OPCODE_RDMA_WRITE_IMM:
    case VCX_OPCODE_RDMA_READ:
    case VCX_OPCODE_ATOMIC_CS:
    case VCX_OPCODE_ATOMIC_FA:
        seg = vcx_req_take_seg(rq, &off, end, VCX_WQE_RADDR_SEG_SIZE,
                               "no remote address segment");
        if (!seg) {
            return VCX_DEC_FAIL;
        }
        pkt->va = vcx_get64(seg, VCX_WQE_RADDR_RADDR);
        pkt->rkey = vcx_get(seg, VCX_WQE_RADDR_RKEY);
        break;
    }
    if (rq->opcode == VCX_OPCODE_ATOMIC_CS || rq->opcode == VCX_OPCODE_ATOMIC_FA) {
        seg = vcx_req_take_seg(rq, &off, end, VCX_WQE_ATOMIC_SEG_SIZE, "no atomic segment");
        if (!seg) {
            return VCX_DEC_FAIL;
        }
        pkt->swap_add = vcx_get64(seg, VCX_WQE_ATOMIC_SWAP_ADD);
        pkt->compare = vcx_get64(seg, VCX_WQE_ATOMIC_COMPARE);
    }
    if (rq->opcode == VCX_OPCODE_RDMA_READ || rq->opcode == VCX_OPCODE_ATOMIC_CS ||
        rq->opcode == VCX_OPCODE_ATOMIC_FA) {
        access = VCX_ACC_LOCAL_WRITE;
    }
    synd = vcx_req_gather(s, qp, rq, off, end, access, &why);
    if (synd) {
        return vcx_req_bad(rq, synd, why);
    }
    pkt->payload = &rq->sgl;
    pkt->len = rq->sgl.total;
    if (rq->sgl.total > (1ull << MIN(qp->log_msg_max ? qp->log_msg_max : VCX_LOG_MAX_MSG,
                                     VCX_LOG_MAX_MSG)) ||
        (vcx_qp_is_dgram(qp) && rq->sgl.total > mtu)) {
        return vcx_req_bad(rq, VCX_CQE_SYND_LOCAL_LENGTH_ERR,
                           "message longer than the maximum");
    }
    rq->byte_cnt = rq->sgl.total;

    switch (rq->opcode) {
    case VCX_OPCODE_NOP:
        return VCX_DEC_LOCAL;
    case VCX_OPCODE_SEND:
        pkt->opcode = transport | IB_OP_SEND_ONLY;
        break;
    case VCX_OPCODE_SEND_IMM:
        pkt->opcode = transport | IB_OP_SEND_ONLY_IMM;
        break;
    case VCX_OPCODE_SEND_INVAL:
        pkt->opcode = transport | IB_OP_SEND_ONLY_INV;
        pkt->inv_rkey = pkt->imm;
        break;
    case VCX_OPCODE_RDMA_WRITE:
        pkt->opcode = transport | IB_OP_WRITE_ONLY;
        break;
    case VCX_OPCODE_RDMA_WRITE_IMM:
        pkt->opcode = transport | IB_OP_WRITE_ONLY_IMM;
        break;
    case VCX_OPCODE_RDMA_READ:
        pkt->opcode = transport | IB_OP_READ_REQUEST;
        pkt->dma_len = rq->sgl.total;
        pkt->len = 0;
        break;
    case VCX_OPCODE_ATOMIC_CS:
    case VCX_OPCODE_ATOMIC_FA:
        if (rq->sgl.total < VCX_ATOMIC_SIZE) {
            return vcx_req_bad(rq, VCX_CQE_SYND_LOCAL_LENGTH_ERR,
                               "atomic result buffer shorter than 8 bytes");
        }
        pkt->opcode = transport | (rq->opcode == VCX_OPCODE_ATOMIC_CS ?
                                   IB_OP_COMPARE_SWAP : IB_OP_FETCH_ADD);
        pkt->dma_len = VCX_ATOMIC_SIZE;
        pkt->len = 0;
        rq->byte_cnt = VCX_ATOMIC_SIZE;
        break;
    }
    pkt->npkts = MAX(DIV_ROUND_UP(MAX(pkt->len, pkt->dma_len), mtu), 1);
    if (pkt->opcode == (transport | IB_OP_COMPARE_SWAP) ||
        pkt->opcode == (transport | IB_OP_FETCH_ADD)) {
        pkt->npkts = 1;
    }
    return VCX_DEC_MSG;
}

/*
 * Decode the WQE at sq_ci and act on it: DONE for what completes locally (UMR, NOP),
 * STOP when it failed, ANSWER when its message went to the responder (rq->ack) or opened
 * the data phase (rq->x.active).
 */
static VcxStep vcx_req_begin(VcxState *s, VcxQp *qp, VcxReq *rq)
{
    const char *why = NULL;
    uint8_t synd;

    switch (vcx_req_decode(s, qp, rq, qp->sq_ci)) {
    case VCX_DEC_CATAS:
        vcx_qp_catas(s, qp, rq->why);
        return VCX_STEP_STOP;
    case VCX_DEC_FAIL:
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, rq->synd, rq->why);
        return VCX_STEP_STOP;
    case VCX_DEC_LOCAL:
        if (rq->opcode == VCX_OPCODE_NOP) {
            return vcx_req_complete(s, qp, rq);
        }
        /* Memory key registration / invalidation: executed here, nothing is sent. */
        synd = vcx_mkey_umr(s, qp->pdn, qp->qpn, qp->st == VCX_QP_ST_REG_UMR, rq->wqe,
                            rq->end, &why);
        if (synd) {
            vcx_req_fail(s, qp, rq->nbb, rq->opcode, synd, why);
            return VCX_STEP_STOP;
        }
        return vcx_req_complete(s, qp, rq);
    case VCX_DEC_MSG:
        break;
    }
    if (!vcx_xport_transmit(s, qp, rq)) {
        return VCX_STEP_STOP;
    }
    return VCX_STEP_ANSWER;
}

/*
 * The data phase: move the payload within the run's byte budget (MORE: resume in the
 * next run), then let the responder end the message; ANSWER with rq->ack, or STOP if
 * the WQE failed here (READ into the local list).
 */
static VcxStep vcx_xfer_run(VcxState *s, VcxQp *qp, VcxReq *rq, VcxBudget *b)
{
    VcxXfer *x = &rq->x;
    VcxQp *resp = vcx_qp_get(s, x->resp_qpn);
    uint8_t bounce[VCX_BOUNCE] VCX_NOINIT;
    const char *lost = NULL;
    bool src_fault = false;

    /* Re-validate the responder: commands may have run since the last run. */
    if (!resp || resp->gen != x->resp_gen) {
        lost = "responder QP destroyed or reset";
    } else if (!vcx_qp_receiving(resp)) {
        lost = "responder QP left RTR/RTS";
    } else if (!x->whole && !x->read && resp->xs->rx.seq != x->seq) {
        lost = "responder dropped the message";
    } else if (vcx_qp_is_xrc_tgt(resp) && !vcx_recv_of(s, resp, x->srqn, x->srq_gen).srq) {
        lost = "XRC SRQ destroyed";
    } else if (!vcx_port_oper_up(s)) {
        lost = "port down";
    }
    if (lost) {
        /* the rest of the message never arrives: no answer comes */
        trace_vcx_xfer_lost(qp->qpn, x->resp_qpn, x->seq, x->left, lost);
        x->active = false;
        rq->ack.type = VCX_NO_RESPONSE;
        return VCX_STEP_ANSWER;
    }
    /* the lists, set again each time: the receive list belongs to the responder */
    if (x->read) {
        x->src.sgl = &x->remote;
        x->dst.sgl = &rq->sgl;
    } else {
        x->src.sgl = &rq->sgl;
        x->dst.sgl = x->scatter ? &resp->xs->rx.sgl : &x->remote;
    }
    while (x->left) {
        uint64_t want;
        uint32_t n;

        if (!x->whole && !b->bytes) {
            trace_vcx_xfer_pause(qp->qpn, x->seq, x->left);
            return VCX_STEP_MORE;
        }
        /*
         * Zero-copy from 512 bytes on: below that, two pci_dma calls cost less than
         * two mappings. A piece never takes more than what is left of the byte budget.
         */
        want = MIN(x->left, VCX_DIRECT_MAX);
        if (!x->whole) {
            want = MIN(want, b->bytes);
        }
        n = want < VCX_DIRECT_MIN ? 0 : vcx_xfer_direct(s, x, want);
        if (n) {
            x->left -= n;
            b->bytes -= MIN(b->bytes, n);
            continue;
        }
        /* not plain RAM on one side (or a bad key): through the bounce buffer */
        n = MIN(x->left, VCX_BOUNCE);
        if (vcx_sgl_io(s, &x->src, bounce, n, false) != MEMTX_OK) {
            src_fault = true;
            goto fault;
        }
        if (vcx_sgl_io(s, &x->dst, bounce, n, true) != MEMTX_OK) {
            goto fault;
        }
        x->left -= n;
        b->bytes -= MIN(b->bytes, n);
    }
    x->active = false;
    trace_vcx_xfer_done(qp->qpn, x->seq);
    if (x->read) {
        rq->ack.type = VCX_ACK;
    } else {
        vcx_resp_end(s, resp, &rq->pkt, x, &rq->ack);
    }
    trace_vcx_ack(rq->pkt.dqpn, vcx_ack_names[rq->ack.type]);
    return VCX_STEP_ANSWER;

fault:
    x->active = false;
    if (x->read) {
        vcx_req_fail(s, qp, rq->nbb, rq->opcode,
                     src_fault ? VCX_CQE_SYND_REMOTE_OP_ERR : VCX_CQE_SYND_LOCAL_PROT_ERR,
                     "read response not deliverable");
        return VCX_STEP_STOP;
    }
    vcx_resp_fault(s, resp, x, src_fault, &rq->ack);
    trace_vcx_ack(rq->pkt.dqpn, vcx_ack_names[rq->ack.type]);
    return VCX_STEP_ANSWER;
}

/* The responder's answer to the WQE's message, and the WQE's completion. */
static VcxStep vcx_req_answer(VcxState *s, VcxQp *qp, VcxReq *rq)
{
    VcxPkt *pkt = &rq->pkt;
    VcxAck *ack = &rq->ack;

    if (rq->looped) {
        vcx_roce_count_whole(s, qp, rq, true);
        rq->looped = false;
    }
    switch (ack->type) {
    case VCX_ACK:
        break;
    case VCX_NO_RESPONSE:
        if (vcx_qp_reliable(qp)) {
            if (!qp->retry_left) {
                vcx_req_fail(s, qp, rq->nbb, rq->opcode,
                             VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR, "no response");
                return VCX_STEP_STOP;
            }
            qp->retry_left--;
            qp->rnr_wait = true;        /* the SQ waits for the same timer */
            qp->ack_wait = true;
            vcx_qp_timer_arm(qp, vcx_ack_timeout_ns(qp), false);
            return VCX_STEP_STOP;
        }
        break;
    case VCX_NAK_SEQ:
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR,
                     "PSN sequence error NAKs");
        return VCX_STEP_STOP;
    case VCX_NAK_RNR:
        if (qp->rnr_retry != VCX_RNR_INFINITE && !qp->rnr_left) {
            vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_RNR_RETRY_EXC_ERR,
                         "RNR retries exhausted");
            return VCX_STEP_STOP;
        }
        if (qp->rnr_retry != VCX_RNR_INFINITE) {
            qp->rnr_left--;
        }
        /* ConnectX counts the RNR NAKs within rnr_retry (the last: retries exceeded) */
        vcx_qp_qc(s, qp, VCX_QC_RNR_NAK_RETRY_ERR);
        qp->rnr_wait = true;
        vcx_qp_timer_arm(qp, vcx_rnr_ns(ack->rnr_timer), false);
        return VCX_STEP_STOP;
    case VCX_NAK_INV_REQ:
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_REMOTE_INVAL_REQ_ERR,
                     "invalid request NAK");
        return VCX_STEP_STOP;
    case VCX_NAK_REM_ACCESS:
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_REMOTE_ACCESS_ERR,
                     "remote access NAK");
        return VCX_STEP_STOP;
    case VCX_NAK_REM_OP:
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_REMOTE_OP_ERR,
                     "remote operational NAK");
        return VCX_STEP_STOP;
    }

    /* The atomic original value. (READ payload moved in the data phase.) */
    if (rq->opcode == VCX_OPCODE_ATOMIC_CS || rq->opcode == VCX_OPCODE_ATOMIC_FA) {
        uint8_t v[8];
        VcxSglCursor dst = { .sgl = &rq->sgl };

        if (vcx_atomic_big_endian(s)) {
            stq_be_p(v, ack->atomic_orig);
        } else {
            stq_le_p(v, ack->atomic_orig);
        }
        if (vcx_sgl_io(s, &dst, v, sizeof(v), true) != MEMTX_OK) {
            vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_LOCAL_PROT_ERR,
                         "atomic result not writable");
            return VCX_STEP_STOP;
        }
    }
    if (!vcx_qp_is_dgram(qp)) {
        qp->sq_psn = (qp->sq_psn + pkt->npkts) & VCX_PSN_MASK;
    } else if (qp->st == VCX_QP_ST_QP1) {
        s->objs->qp1_sent++;
    }
    return vcx_req_complete(s, qp, rq);
}

/* Execute (or go on executing) the WQE at sq_ci. */
static VcxStep vcx_req_wqe(VcxState *s, VcxQp *qp, VcxReq *rq, VcxBudget *b)
{
    VcxStep st;

    if (!rq->x.active && !rq->wire) {
        st = vcx_req_begin(s, qp, rq);
        if (st != VCX_STEP_ANSWER) {
            return st;
        }
    }
    if (rq->wire) {
        /* on the wire: packets, then the answer from the peer (roce/vcx-roce-req.c) */
        st = vcx_roce_req_run(s, qp, rq, b);
        if (st != VCX_STEP_ANSWER) {
            return st;
        }
    }
    if (rq->x.active) {
        st = vcx_xfer_run(s, qp, rq, b);
        if (st != VCX_STEP_ANSWER) {
            return st;
        }
    }
    return vcx_req_answer(s, qp, rq);
}

/*
 * Run the SQ of one QP up to the producer counter of its doorbell record, within the
 * budget; true if it has work left for the next run. A QP in ERR is flushed instead.
 */
static bool vcx_req_run(VcxState *s, VcxQp *qp, VcxBudget *b)
{
    VcxXportQp *xs = qp->xs;
    VcxReq *rq = &xs->req;
    bool tail = false;
    uint32_t pi;

    if (qp->state == VCX_QP_STATE_ERR) {
        return vcx_flush_qp(s, qp, b);
    }
    if (qp->state != VCX_QP_STATE_RTS || qp->no_sq ||
        (qp->rnr_wait && !vcx_roce_win_busy(qp))) {
        return false;
    }
    if (vcx_dbr_read(s, qp->dbr_addr + VCX_QP_DBR_SEND, &pi) != MEMTX_OK) {
        vcx_qp_catas(s, qp, "doorbell record not readable");
        return false;
    }
    qp->sq_pi = pi;
    if (xs->fresh && (uint16_t)(qp->sq_pi - qp->sq_ci) > vcx_sq_size(qp)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x send counter 0x%x is more than %u "
                      "WQEBBs ahead of 0x%x\n", qp->qpn, qp->sq_pi, vcx_sq_size(qp),
                      qp->sq_ci);
        trace_vcx_err_qp(qp->qpn, "send counter beyond the queue size");
    }
    xs->fresh = false;
    if (!rq->x.active && !rq->wire && vcx_roce_win_wants(s, qp)) {
        /* an RC QP on the wire: its window of WQEs (roce/vcx-roce-req.c) */
        return vcx_roce_win_run(s, qp, b) == VCX_WIN_MORE;
    }
    while ((rq->x.active || qp->sq_ci != qp->sq_pi) && qp->state == VCX_QP_STATE_RTS) {
        VcxStep st;

        if (!rq->x.active && !rq->wire) {
            if (!xs->allow) {
                break;
            }
            if (b->wqes && !b->bytes && !tail) {
                /* the tail allowance (VCX_XPORT_TAIL_BYTES), once per turn */
                b->bytes = VCX_XPORT_TAIL_BYTES;
                b->tail += VCX_XPORT_TAIL_BYTES;
                tail = true;
            }
            if (!b->wqes || !b->bytes) {
                return true;
            }
            b->wqes--;
            xs->allow--;
        } else if (!b->bytes) {
            return true;
        }
        st = vcx_req_wqe(s, qp, rq, b);
        if (st == VCX_STEP_MORE) {
            return true;
        }
        if (st == VCX_STEP_STOP) {
            break;
        }
    }
    /* a QP that went to ERR here was queued again by vcx_qp_to_err() for its flush */
    return false;
}

/* One QP's turn in a run; back to the tail of the run queue if it has work left. */
static void vcx_xport_turn(VcxState *s, VcxQp *qp, VcxBudget *b)
{
    VcxObjects *o = s->objs;

    QTAILQ_REMOVE(&o->runq, qp, run_link);
    qp->kicked = false;
    if (vcx_req_run(s, qp, b)) {
        vcx_xport_requeue(o, qp);
    }
}

/* The end of a run: held frames go, the run is traced, and the bottom half is due again
 * while any work remains. */
static void vcx_xport_run_end(VcxState *s, uint32_t wqes, uint64_t bytes, int64_t start,
                              bool nic_more)
{
    VcxObjects *o = s->objs;
    bool more;

    vcx_roce_run_end(s);
    nic_more = nic_more || vcx_nic_pending(s) || vcx_roce_pending(s);
    more = !QTAILQ_EMPTY(&o->runq) || o->err_due || nic_more;
    trace_vcx_xport_run(o->runs, wqes, bytes, get_clock() - start, more);
    if (more && !s->reset_pending) {
        qemu_bh_schedule(o->bh);
    }
}

/*
 * The executor: one run of the device's guarded bottom half. QPs take turns from the
 * head of the run queue; one whose turn ended with the budget goes back to the tail.
 */
static void vcx_xport_bh(void *opaque)
{
    VcxState *s = opaque;
    VcxObjects *o = s->objs;
    VcxBudget b = { VCX_XPORT_RUN_WQES, VCX_XPORT_RUN_BYTES, 0 };
    int64_t start = get_clock();
    bool nic_more = false;
    VcxQp *qp;

    if (vcx_fw_dead(s)) {
        /* dead firmware executes nothing (vcx_fw_dead); a reset drops the queue */
        trace_vcx_dev_err_xport_dead(QTAILQ_EMPTY(&o->runq) ? 0 : QTAILQ_FIRST(&o->runq)->qpn);
        return;
    }
    o->runs++;
    o->in_run = true;
    if (o->err_due) {
        vcx_err_watch_run(s, &b);
    }
    vcx_cq_mod_run(s);
    if (vcx_nic_pending(s)) {
        /* Ethernet SQs and frames received; half the run if QPs wait too */
        VcxBudget nb = b;

        if (!QTAILQ_EMPTY(&o->runq)) {
            nb.wqes = MAX(1u, b.wqes / 2);
            nb.bytes = MAX(1u, b.bytes / 2);
        }
        nb.wqes = MIN(nb.wqes, b.wqes);
        nb.bytes = MIN(nb.bytes, b.bytes);
        {
            uint32_t w0 = nb.wqes;
            uint64_t b0 = nb.bytes;

            nic_more = vcx_nic_run(s, &nb);
            b.wqes -= w0 - nb.wqes;
            b.bytes -= b0 - nb.bytes;
        }
    }
    if (vcx_roce_pending(s)) {
        vcx_roce_run(s, &b);            /* READ responses to the wire */
    }
    while (b.wqes && b.bytes && !s->reset_pending && (qp = QTAILQ_FIRST(&o->runq))) {
        vcx_xport_turn(s, qp, &b);
    }
    o->in_run = false;
    vcx_xport_run_end(s, VCX_XPORT_RUN_WQES - b.wqes, VCX_XPORT_RUN_BYTES + b.tail - b.bytes,
                      start, nic_more);
}

/*
 * Frames the slice looped to the port's own QPs (loopback-frames) are taken in the same
 * slice, under the frames' own budget (VCX_XPORT_SLICE_FRAMES): the responder's placement
 * and CQE, the ACK it loops back (vcx_roce_rx_end), the requester's completion, READ
 * responses. Without this every looped message waited for the main loop to wake twice
 * (request, then ACK), some 40 us each on a host whose cores run the vCPUs, where the
 * whole-message path completes within the doorbell write. Each frame costs one WQE of
 * the budget, so the rounds end; frames from the netdev ahead of them in the queue are
 * taken too, in order, as the bottom half would.
 */
#define VCX_XPORT_SLICE_FRAME_ROUNDS    4u

static void vcx_xport_slice_frames(VcxState *s, VcxBudget *b)
{
    for (uint32_t i = 0; i < VCX_XPORT_SLICE_FRAME_ROUNDS; i++) {
        bool frames = vcx_nic_rx_pending(s), reads = vcx_roce_reads_pending(s);

        if (!b->wqes || !b->bytes || s->reset_pending || (!frames && !reads)) {
            return;
        }
        if (frames) {
            vcx_nic_rx_run(s, b);
        }
        if (reads && b->wqes && b->bytes) {
            vcx_roce_run(s, b);
        }
    }
}

/*
 * The SQ doorbell's slice: the QP whose doorbell this MMIO write rang runs at once, under
 * the small budget of VCX_XPORT_DOORBELL_WQES / _BYTES, and the executor's bottom half
 * takes whatever is left. A message thus completes before the guest's next instruction
 * instead of after a wake-up of QEMU's main loop thread, which on a host whose cores are
 * busy with vCPU threads waits for the scheduler: tens of microseconds per message, the
 * whole latency of a small one. It is as safe as a run of the bottom half: the MMIO
 * dispatch engaged the device's re-entrancy guard (vcx_busy), so the slice's DMA and
 * MSI-X cannot reach the device's own MMIO or config space, and it is bounded the same
 * way, only smaller, so the vCPU returns from its write within some microseconds.
 * Without the guard (a caller that is not an MMIO dispatch), dead firmware or a reset
 * on its way, the QP only joins the run queue.
 */
static void vcx_xport_doorbell_run(VcxState *s, VcxQp *qp)
{
    VcxObjects *o = s->objs;
    VcxBudget b = { VCX_XPORT_DOORBELL_WQES, VCX_XPORT_DOORBELL_BYTES, 0 };
    /* the receiving half of what the slice looped: frames, not WQEs (see above) */
    VcxBudget fb = { VCX_XPORT_SLICE_FRAMES, VCX_XPORT_DOORBELL_BYTES, 0 };
    uint64_t bytes;
    uint32_t wqes;
    int64_t start;

    vcx_xport_queue(s, qp);
    if (!vcx_busy(s) || vcx_fw_dead(s) || s->reset_pending) {
        qemu_bh_schedule(o->bh);
        return;
    }
    start = get_clock();
    o->runs++;
    o->in_run = true;
    vcx_xport_turn(s, qp, &b);
    for (uint32_t i = 0; i < VCX_XPORT_SLICE_FRAME_ROUNDS && s->params.loopback_frames; i++) {
        vcx_xport_slice_frames(s, &fb);
        /* the ACKs opened its window again: it goes on while the slice lasts */
        if (!qp->kicked || !b.wqes || !b.bytes || s->reset_pending) {
            break;
        }
        vcx_xport_turn(s, qp, &b);
    }
    o->in_run = false;
    wqes = VCX_XPORT_DOORBELL_WQES - b.wqes + VCX_XPORT_SLICE_FRAMES - fb.wqes;
    bytes = 2 * VCX_XPORT_DOORBELL_BYTES + b.tail - b.bytes - fb.bytes;
    trace_vcx_xport_doorbell_slice(qp->qpn, wqes, bytes, qp->kicked);
    vcx_xport_run_end(s, wqes, bytes, start, false);
}

void vcx_xport_init(VcxState *s)
{
    VcxObjects *o = s->objs;

    QTAILQ_INIT(&o->runq);
    QTAILQ_INIT(&o->errq);
    QTAILQ_INIT(&o->modq);
    o->err_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, vcx_err_watch_cb, s);
    /* DMA and MSI-X of a run cannot re-enter the device's MMIO (see the header) */
    o->bh = qemu_bh_new_guarded(vcx_xport_bh, s, &DEVICE(s)->mem_reentrancy_guard);
}

void vcx_xport_fini(VcxState *s)
{
    timer_free(s->objs->err_timer);
    s->objs->err_timer = NULL;
    qemu_bh_delete(s->objs->bh);
    s->objs->bh = NULL;
}

void vcx_xport_qp_init(VcxState *s, VcxQp *qp)
{
    qp->s = s;
    qp->gen = ++s->objs->qp_gen;
    qp->xs = g_new0(VcxXportQp, 1);
    qp->rnr_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, vcx_rnr_timer_cb, qp);
    qp->rnr_wait = false;
    qp->ack_wait = false;
    qp->rnr_left = qp->rnr_retry;
    qp->retry_left = qp->retry_count;
}

void vcx_xport_qp_fini(VcxState *s, VcxQp *qp)
{
    vcx_err_unwatch(s, qp);
    if (qp->kicked) {
        QTAILQ_REMOVE(&s->objs->runq, qp, run_link);
        qp->kicked = false;
    }
    timer_free(qp->rnr_timer);
    qp->rnr_timer = NULL;
    vcx_roce_win_free(qp);
    g_free(qp->xs);
    qp->xs = NULL;
}

/* UAR 0x800..0xfff: BlueFlame registers; the first 8 bytes of a half ring the SQ. */
void vcx_xport_sq_doorbell(VcxState *s, uint32_t uar, uint32_t offset, uint64_t value,
                           unsigned size)
{
    uint32_t qpn = ((uint32_t)value >> 8) & 0xffffff;
    VcxQp *qp;

    if (offset % VCX_UAR_BF_BUF_SIZE) {
        trace_vcx_bf_data(uar, offset, size);   /* BlueFlame copy of the WQE: unused */
        return;
    }
    if (size != VCX_SQ_DOORBELL_SIZE) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: UAR %u SQ doorbell at 0x%x written with %u "
                      "bytes, expected 8: ignored\n", uar, offset, size);
        trace_vcx_err_uar_access(uar, offset, size);
        return;
    }
    if (qpn >= VCX_NIC_WQ_NUM_BASE && qpn < VCX_NIC_WQ_NUM_END) {
        vcx_nic_doorbell(s, uar, qpn, value);  /* an Ethernet SQ (nic/vcx-nic-tx.c) */
        return;
    }
    qp = vcx_qp_get(s, qpn);
    if (!qp) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: SQ doorbell on UAR %u for QP 0x%x, which does "
                      "not exist\n", uar, qpn);
        trace_vcx_err_sq_doorbell(uar, qpn, "no such QP");
        return;
    }
    if (qp->uar_page != uar) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: SQ doorbell for QP 0x%x on UAR %u, but the QP "
                      "uses UAR %u: ignored\n", qpn, uar, qp->uar_page);
        trace_vcx_err_sq_doorbell(uar, qpn, "wrong UAR");
        return;
    }
    trace_vcx_sq_doorbell(qpn, (value >> 40) & 0xffff);
    vcx_xport_doorbell_run(s, qp);
}
