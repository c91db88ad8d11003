/*
 * vcx: the transport engine in the Error state (IBTA 10.3.1, 11.6.2): every outstanding
 * WQE of a QP in ERR completes with WR_FLUSH_ERR, in order, within the executor's budget;
 * WQEs posted later are found by the ERR watch, a periodic look at the producer counters
 * of QPs in ERR. The engine's overview is at the top of vcx-xport.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci_device.h"
#include "vcx-xport.h"
#include "trace.h"

/*
 * Flush: every outstanding WQE of a QP in ERR completes with WR_FLUSH_ERR. Each flush CQE
 * is an error CQE of its side in the QP's Q counter (req_ / resp_cqe_error) and a flush
 * (req_ / resp_cqe_flush_error), added once per queue flushed, not per CQE.
 */

uint64_t vcx_sq_off(VcxQp *qp, uint16_t index)
{
    return qp->sq_offset + (uint64_t)(index & (vcx_sq_size(qp) - 1)) * VCX_SEND_WQEBB;
}

void vcx_qp_catas(VcxState *s, VcxQp *qp, const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x: %s: QP goes to error\n", qp->qpn, why);
    trace_vcx_err_qp(qp->qpn, why);
    vcx_qp_srq_event(s, VCX_EVENT_TYPE_WQ_CATAS_ERROR, qp->qpn, VCX_EVENT_QUEUE_TYPE_QP);
    vcx_qp_to_err(s, qp);
}

/*
 * Complete the SQ's posted WQEs with WR_FLUSH_ERR (the QP is in ERR), the WQE in
 * execution included, within the budget; true if WQEs are left for another run.
 */
static bool vcx_flush_sq(VcxState *s, VcxQp *qp, VcxBudget *b)
{
    uint8_t cqe[VCX_CQE_SIZE];
    uint32_t pi = 0, n;

    qp->xs->req.x.active = false;
    if (qp->no_sq || vcx_dbr_read(s, qp->dbr_addr + VCX_QP_DBR_SEND, &pi) != MEMTX_OK) {
        return false;
    }
    for (n = 0; qp->xs->allow && qp->sq_ci != (uint16_t)pi; n++) {
        uint8_t ctrl[VCX_WQE_CTRL_SIZE];
        uint32_t ds = 1, op = 0;

        if (!b->wqes) {
            break;
        }
        b->wqes--;
        qp->xs->allow--;
        if (vcx_qbuf_read(s, &qp->buf, vcx_sq_off(qp, qp->sq_ci), ctrl,
                          sizeof(ctrl)) == MEMTX_OK) {
            ds = MAX(vcx_get(ctrl, VCX_WQE_CTRL_DS_CNT), 1);
            op = vcx_get(ctrl, VCX_WQE_CTRL_OPCODE);
        }
        vcx_cqe_err(cqe, qp, VCX_CQE_REQ_ERR, VCX_CQE_SYND_WR_FLUSH_ERR, qp->sq_ci, op);
        vcx_post(s, qp, qp->scq, cqe, false);
        qp->sq_ci += MIN(DIV_ROUND_UP(ds * VCX_WQE_DS, VCX_SEND_WQEBB),
                         VCX_SEND_WQE_MAX_WQEBBS);
    }
    if (n) {
        /* one flush CQE per WQE: the requester's error CQEs, of which flushes */
        trace_vcx_flush(qp->qpn, "SQ", n);
        vcx_qp_qc_n(s, qp, VCX_QC_REQ_CQE_ERROR, n);
        vcx_qp_qc_n(s, qp, VCX_QC_REQ_CQE_FLUSH_ERROR, n);
    }
    return !b->wqes && qp->xs->allow && qp->sq_ci != (uint16_t)pi;
}

/* Complete at most budget posted receive WQEs with WR_FLUSH_ERR; how many it did. */
static uint32_t vcx_flush_rq(VcxState *s, VcxQp *qp, uint32_t budget)
{
    uint8_t cqe[VCX_CQE_SIZE];
    uint32_t pi = 0, n;

    if (qp->rq_type != VCX_QP_RQ_TYPE_REGULAR ||
        vcx_dbr_read(s, qp->dbr_addr + VCX_QP_DBR_RECV, &pi) != MEMTX_OK) {
        return 0;
    }
    budget = MIN(budget, 1u << qp->log_rq_size);
    for (n = 0; n < budget && qp->rq_ci != (uint16_t)pi; n++) {
        vcx_cqe_err(cqe, qp, VCX_CQE_RESP_ERR, VCX_CQE_SYND_WR_FLUSH_ERR, qp->rq_ci, 0);
        vcx_post(s, qp, qp->rcq, cqe, false);
        qp->rq_ci++;
    }
    qp->rq_pi = pi;
    if (n) {
        /* as vcx_post_resp_err counts a receive WQE flushed alone */
        trace_vcx_flush(qp->qpn, "RQ", n);
        vcx_qp_qc_n(s, qp, VCX_QC_RESP_CQE_ERROR, n);
        vcx_qp_qc_n(s, qp, VCX_QC_RESP_CQE_FLUSH_ERROR, n);
    }
    return n;
}

/* A QP in ERR: flush its SQ, then its RQ; true if work is left for another run. */
bool vcx_flush_qp(VcxState *s, VcxQp *qp, VcxBudget *b)
{
    uint32_t n;

    if (vcx_flush_sq(s, qp, b)) {
        return true;
    }
    if (!b->wqes) {
        return true;            /* the RQ's turn comes in the next run */
    }
    n = vcx_flush_rq(s, qp, b->wqes);
    b->wqes -= n;
    return !b->wqes;
}

/* Fault injection (the qp-error property): false if there is no such QP. */
bool vcx_xport_qp_fault(VcxState *s, uint32_t qpn)
{
    VcxQp *qp = vcx_qp_get(s, qpn);

    if (!qp) {
        return false;
    }
    vcx_qp_catas(s, qp, "fault injected from the monitor");
    return true;
}

/*
 * Receives posted to a QP in ERR. IBTA's Error state completes every work request posted
 * to the QP with a flush error, including those posted after the QP entered it, and the
 * kernel's ib_drain_rq (and mlx5_ib's drain_rq) depend on it: they move the QP to ERR,
 * post one receive and wait for its completion. The SQ has a doorbell, so a send posted
 * in ERR is flushed when it rings (vcx_req_run). The RQ has none: software only bumps
 * the receive counter of the doorbell record, which the device reads when a message
 * arrives, and a QP in ERR receives nothing. So the device watches the receive counters
 * of its QPs in ERR that have their own RQ: a timer marks the watch due (err_due) and
 * schedules the executor, which re-reads them, first shortly after the QP entered ERR,
 * then at an interval that doubles up to VCX_ERR_WATCH_MAX_NS and falls back to the
 * shortest whenever it finds work. The flushes count against the executor's WQE budget
 * (at most half of a run while QPs are queued as well); the watch stays due, and the
 * executor goes on in its next run, until a run has looked at every watched QP.
 */
#define VCX_ERR_WATCH_MIN_NS    (20 * SCALE_US)
#define VCX_ERR_WATCH_MAX_NS    (10 * SCALE_MS)

static void vcx_err_watch_arm(VcxObjects *o, int64_t interval)
{
    int64_t when = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + interval;

    o->err_interval = interval;
    if (!timer_pending(o->err_timer) || timer_expire_time_ns(o->err_timer) > when) {
        timer_mod(o->err_timer, when);
    }
}

/* The watch's timer: only marks the watch due for the executor. */
void vcx_err_watch_cb(void *opaque)
{
    VcxState *s = opaque;
    VcxObjects *o = s->objs;

    o->err_due = true;
    qemu_bh_schedule(o->bh);
    if (o->err_count) {
        vcx_err_watch_arm(o, MIN(o->err_interval * 2, VCX_ERR_WATCH_MAX_NS));
    }
}

/* The executor's look at the watched QPs, within the run's WQE budget. */
void vcx_err_watch_run(VcxState *s, VcxBudget *b)
{
    VcxObjects *o = s->objs;
    uint32_t share = QTAILQ_EMPTY(&o->runq) ? b->wqes : b->wqes / 2;
    uint32_t found = 0, i;

    if (vcx_fw_dead(s)) {
        vcx_err_watch_arm(o, VCX_ERR_WATCH_MAX_NS);     /* dead firmware flushes nothing */
        return;
    }

    /* Round robin: each QP looked at goes to the tail, so the budget is shared fairly. */
    for (i = o->err_count; i && share; i--) {
        VcxQp *qp = QTAILQ_FIRST(&o->errq);
        uint32_t n;

        QTAILQ_REMOVE(&o->errq, qp, err_link);
        QTAILQ_INSERT_TAIL(&o->errq, qp, err_link);
        n = vcx_flush_rq(s, qp, share);
        share -= n;
        b->wqes -= n;
        found += n;
    }
    o->err_due = o->err_count && (i || !share);
    if (found) {
        vcx_err_watch_arm(o, VCX_ERR_WATCH_MIN_NS);
    }
}

/* The QP entered ERR: watch its receive counter while it stays there. */
static void vcx_xport_err_watch(VcxState *s, VcxQp *qp)
{
    VcxObjects *o = s->objs;

    if (qp->err_watched || qp->rq_type != VCX_QP_RQ_TYPE_REGULAR) {
        return;
    }
    qp->err_watched = true;
    QTAILQ_INSERT_TAIL(&o->errq, qp, err_link);
    o->err_count++;
    vcx_err_watch_arm(o, VCX_ERR_WATCH_MIN_NS);
}

void vcx_err_unwatch(VcxState *s, VcxQp *qp)
{
    VcxObjects *o = s->objs;

    if (!qp->err_watched) {
        return;
    }
    QTAILQ_REMOVE(&o->errq, qp, err_link);
    qp->err_watched = false;
    if (!--o->err_count) {
        timer_del(o->err_timer);
        o->err_due = false;
    }
}

/*
 * The QP entered ERR (vcx_qp_to_err): the RNR / ACK wait ends, the message it was sending
 * ends (its WQE is flushed with the SQ; the responder is free for other senders at
 * once), a receive WQE consumed by a message that did not finish is flushed now (the
 * flush of the RQ starts after it), and the executor flushes the rest.
 */
void vcx_xport_qp_err(VcxState *s, VcxQp *qp)
{
    VcxRx *rx = &qp->xs->rx;

    qp->xs->req.x.active = false;
    vcx_roce_qp_err(s, qp);
    qp->rnr_wait = false;
    qp->ack_wait = false;
    timer_del(qp->rnr_timer);
    rx->seq = 0;
    if (rx->held) {
        /* an XRC SRQ destroyed since took its WQE with it: nothing to complete */
        VcxRecv rcv = vcx_recv_of(s, qp, rx->srqn, rx->srq_gen);

        rx->held = false;
        if (rcv.cq) {
            vcx_post_resp_err(s, qp, &rcv, VCX_CQE_SYND_WR_FLUSH_ERR, rx->index);
            trace_vcx_flush(qp->qpn, "receive WQE of an unfinished message", 1);
        }
    }
    vcx_xport_err_watch(s, qp);
    vcx_xport_kick(s, qp);
}

