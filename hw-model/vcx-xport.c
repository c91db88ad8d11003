/*
 * vcx: transport engine: send queue execution (requester), receive processing
 * (responder), CQE generation and the loopback path between QPs of the port.
 *
 * Structure, from doorbell to completion:
 *
 *   SQ doorbell (UAR BlueFlame register, 8-byte control segment) or RTS transition
 *     -> vcx_xport_kick(): the QP joins the run queue; the executor (vcx_xport_run)
 *        drains it. Nothing below depends on the doorbell writer's thread: moving the
 *        executor to a bottom half or an I/O thread only changes vcx_xport_kick().
 *     -> requester (vcx_req_*): fetch WQEs up to the doorbell record's producer counter,
 *        decode and check them (opcode for the QP type, DS count, lkeys), build a VcxPkt
 *     -> VcxPkt: one message as the BTH-level operation a RoCEv2 packet sequence
 *        carries (BTH opcode, PSN and packet count at the path MTU, DETH, RETH,
 *        AtomicETH, ImmDt, IETH, GRH fields); the payload is referenced as the
 *        requester's gather list. vcx_xport_transmit() delivers it to the responder of
 *        the destination QP on this port; a wire path would frame it here instead.
 *     -> responder (vcx_resp_*): QP and PSN checks, Q_Key, rkey checks, receive WQE
 *        from the RQ or SRQ, scatter, responder CQE; answers with a VcxAck (ACK, RNR
 *        NAK with the timer, NAK codes, read response source, atomic original value)
 *     -> requester completion: read/atomic results land in the local scatter list,
 *        the requester CQE is written if the WQE asked for one or on error.
 *
 * RNR: a receive without a WQE is NAKed with the responder's min_rnr_nak; the RC
 * requester stalls its SQ and retries after that time (QEMU_CLOCK_VIRTUAL timer), up to
 * rnr_retry times (7: forever), then completes with RNR_RETRY_EXC_ERR. UC and UD drop the
 * message (the requester completes successfully), as the wire would.
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
#include "hw/pci/pci_device.h"
#include "vcx-obj.h"
#include "trace.h"

/* IBTA BTH opcodes: transport in bits 7:5, operation in bits 4:0. */
#define IB_TRANSPORT_RC         0x00
#define IB_TRANSPORT_UC         0x20
#define IB_TRANSPORT_UD         0x60
#define IB_OP_SEND_ONLY         0x04
#define IB_OP_SEND_ONLY_IMM     0x05
#define IB_OP_WRITE_ONLY        0x0a
#define IB_OP_WRITE_ONLY_IMM    0x0b
#define IB_OP_READ_REQUEST      0x0c
#define IB_OP_COMPARE_SWAP      0x13
#define IB_OP_FETCH_ADD         0x14
#define IB_OP_SEND_ONLY_INV     0x17
#define IB_OP_MASK              0x1f

#define VCX_GRH_SIZE            40u
#define VCX_BOUNCE              4096u
#define VCX_PSN_MASK            0xffffffu
#define VCX_RNR_INFINITE        7
#define VCX_ROCE_HDRS           (8 + 12)        /* UDP + BTH, for the IP payload length */

/* One message as the BTH-level operation the wire would carry. */
typedef struct VcxPkt {
    uint8_t opcode;             /* BTH opcode */
    bool se;                    /* BTH solicited event */
    uint32_t dqpn;              /* BTH destination QP */
    uint32_t psn;               /* BTH PSN of the first packet */
    uint32_t npkts;             /* packets at the path MTU */
    uint32_t sqpn;              /* DETH source QP (UD) / requester QP */
    uint32_t qkey;              /* DETH */
    uint64_t va;                /* RETH / AtomicETH */
    uint32_t rkey;
    uint32_t dma_len;
    uint64_t swap_add;          /* AtomicETH */
    uint64_t compare;
    uint32_t imm;               /* ImmDt */
    uint32_t inv_rkey;          /* IETH */
    uint8_t sgid[16];           /* GRH / IP header */
    uint8_t dgid[16];
    uint8_t hop_limit;
    uint8_t tclass;
    uint32_t flow_label;
    const VcxSgl *payload;      /* requester memory holding the payload */
    uint64_t len;
} VcxPkt;

typedef enum VcxAckType {
    VCX_ACK,
    VCX_NAK_RNR,
    VCX_NAK_SEQ,
    VCX_NAK_INV_REQ,
    VCX_NAK_REM_ACCESS,
    VCX_NAK_REM_OP,
    VCX_NO_RESPONSE,            /* dropped: no response ever comes */
} VcxAckType;

typedef struct VcxAck {
    VcxAckType type;
    uint8_t rnr_timer;          /* AETH timer field of an RNR NAK */
    uint64_t atomic_orig;
    VcxMkey *read_mr;           /* RDMA READ response data: responder memory */
    uint64_t read_va;
} VcxAck;

/* A position in a scatter/gather list. */
typedef struct VcxSglCursor {
    const VcxSgl *sgl;
    uint32_t i;
    uint64_t off;
} VcxSglCursor;

static const char *const vcx_ack_names[] = {
    "ACK", "RNR NAK", "PSN NAK", "invalid request NAK", "remote access NAK",
    "remote operational NAK", "no response",
};

/*
 * Scatter/gather copy
 */

static MemTxResult vcx_sgl_io(VcxState *s, VcxSglCursor *c, uint8_t *buf, uint32_t len,
                              bool write)
{
    uint32_t guard = VCX_MAX_SGE + 1;

    while (len && guard--) {
        const VcxSge *e;
        uint32_t n;

        if (c->i >= c->sgl->n) {
            return MEMTX_DECODE_ERROR;
        }
        e = &c->sgl->sge[c->i];
        n = MIN(len, e->len - c->off);
        if (n) {
            if (e->mr) {
                MemTxResult r = vcx_mkey_rw(s, e->mr, e->va + c->off, buf, n, write);

                if (r != MEMTX_OK) {
                    return r;
                }
            } else if (write) {
                return MEMTX_DECODE_ERROR;      /* inline data is a gather source only */
            } else {
                memcpy(buf, e->data + c->off, n);
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

/* Copy len bytes from src to dst through a bounce buffer; false on a DMA failure. */
static bool vcx_sgl_copy(VcxState *s, VcxSglCursor *dst, VcxSglCursor *src, uint64_t len,
                         bool *src_fault)
{
    uint8_t bounce[VCX_BOUNCE];

    *src_fault = false;
    while (len) {
        uint32_t n = MIN(len, sizeof(bounce));

        if (vcx_sgl_io(s, src, bounce, n, false) != MEMTX_OK) {
            *src_fault = true;
            return false;
        }
        if (vcx_sgl_io(s, dst, bounce, n, true) != MEMTX_OK) {
            return false;
        }
        len -= n;
    }
    return true;
}

/* An MKEY range as a one-entry list. */
static void vcx_sgl_single(VcxSgl *l, VcxMkey *mr, uint64_t va, uint32_t len)
{
    l->n = 1;
    l->total = len;
    l->sge[0] = (VcxSge) { .mr = mr, .va = va, .len = len };
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

static void vcx_cqe_err(uint8_t *cqe, VcxQp *qp, uint8_t cqe_opcode, uint8_t synd,
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

static void vcx_post(VcxState *s, VcxCq *cq, uint8_t *cqe, bool se)
{
    if (cq) {
        vcx_cq_post(s, cq, cqe, se);
    }
}

/*
 * Flush: every outstanding WQE of a QP in ERR completes with WR_FLUSH_ERR.
 */

static uint32_t vcx_sq_size(VcxQp *qp)
{
    return qp->no_sq ? 0 : 1u << qp->log_sq_size;
}

static uint64_t vcx_sq_off(VcxQp *qp, uint16_t index)
{
    return qp->sq_offset + (uint64_t)(index & (vcx_sq_size(qp) - 1)) * VCX_SEND_WQEBB;
}

static void vcx_qp_catas(VcxState *s, VcxQp *qp, const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x: %s: QP goes to error\n", qp->qpn, why);
    trace_vcx_err_qp(qp->qpn, why);
    vcx_qp_srq_event(s, VCX_EVENT_TYPE_WQ_CATAS_ERROR, qp->qpn, VCX_EVENT_QUEUE_TYPE_QP);
    vcx_qp_to_err(s, qp);
}

/* Complete the SQ's posted WQEs with WR_FLUSH_ERR (the QP is in ERR). */
static void vcx_flush_sq(VcxState *s, VcxQp *qp)
{
    uint8_t cqe[VCX_CQE_SIZE];
    uint32_t pi = 0, n;

    /*
     * A QP sending to itself can be moved to ERR by its own responder half while its
     * requester holds a WQE; the requester flushes the SQ once that WQE is completed.
     */
    if (qp->no_sq || qp->in_req ||
        vcx_dbr_read(s, qp->dbr_addr + VCX_QP_DBR_SEND, &pi) != MEMTX_OK) {
        return;
    }
    for (n = 0; n < vcx_sq_size(qp) && qp->sq_ci != (uint16_t)pi; n++) {
        uint8_t ctrl[VCX_WQE_CTRL_SIZE];
        uint32_t ds = 1, op = 0;

        if (vcx_qbuf_read(s, &qp->buf, vcx_sq_off(qp, qp->sq_ci), ctrl,
                          sizeof(ctrl)) == MEMTX_OK) {
            ds = MAX(vcx_get(ctrl, VCX_WQE_CTRL_DS_CNT), 1);
            op = vcx_get(ctrl, VCX_WQE_CTRL_OPCODE);
        }
        vcx_cqe_err(cqe, qp, VCX_CQE_REQ_ERR, VCX_CQE_SYND_WR_FLUSH_ERR, qp->sq_ci, op);
        vcx_post(s, qp->scq, cqe, false);
        qp->sq_ci += MIN(DIV_ROUND_UP(ds * VCX_WQE_DS, VCX_SEND_WQEBB),
                         VCX_SEND_WQE_MAX_WQEBBS);
    }
    if (n) {
        trace_vcx_flush(qp->qpn, "SQ", n);
    }
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
        vcx_post(s, qp->rcq, cqe, false);
        qp->rq_ci++;
    }
    if (n) {
        trace_vcx_flush(qp->qpn, "RQ", n);
    }
    return n;
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

void vcx_xport_flush(VcxState *s, VcxQp *qp)
{
    if (qp->state != VCX_QP_STATE_ERR) {
        return;
    }
    qp->rnr_wait = false;
    timer_del(qp->rnr_timer);
    vcx_flush_sq(s, qp);
    vcx_flush_rq(s, qp, UINT32_MAX);
}

/*
 * Receives posted to a QP in ERR. IBTA's Error state completes every work request posted
 * to the QP with a flush error, including those posted after the QP entered it, and the
 * kernel's ib_drain_rq (and mlx5_ib's drain_rq) depend on it: they move the QP to ERR,
 * post one receive and wait for its completion. The SQ has a doorbell, so a send posted
 * in ERR is flushed when it rings (vcx_req_run). The RQ has none: software only bumps
 * the receive counter of the doorbell record, which the device reads when a message
 * arrives, and a QP in ERR receives nothing. So the device watches the receive counters
 * of its QPs in ERR that have their own RQ: a timer re-reads them, first shortly after
 * the QP entered ERR, then at an interval that doubles up to VCX_ERR_WATCH_MAX_NS and
 * falls back to the shortest whenever it finds work. One run flushes at most
 * VCX_ERR_WATCH_BUDGET WQEs over all QPs, so a guest cannot make it work without bound.
 */
#define VCX_ERR_WATCH_MIN_NS    (20 * SCALE_US)
#define VCX_ERR_WATCH_MAX_NS    (10 * SCALE_MS)
#define VCX_ERR_WATCH_BUDGET    4096u

static void vcx_err_watch_arm(VcxObjects *o, int64_t interval)
{
    int64_t when = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + interval;

    o->err_interval = interval;
    if (!timer_pending(o->err_timer) || timer_expire_time_ns(o->err_timer) > when) {
        timer_mod(o->err_timer, when);
    }
}

static void vcx_err_watch_cb(void *opaque)
{
    VcxState *s = opaque;
    VcxObjects *o = s->objs;
    uint32_t budget = VCX_ERR_WATCH_BUDGET, found = 0;

    /* Round robin: each QP looked at goes to the tail, so the budget is shared fairly. */
    for (uint32_t i = o->err_count; i && budget; i--) {
        VcxQp *qp = QTAILQ_FIRST(&o->errq);
        uint32_t n;

        QTAILQ_REMOVE(&o->errq, qp, err_link);
        QTAILQ_INSERT_TAIL(&o->errq, qp, err_link);
        n = vcx_flush_rq(s, qp, budget);
        budget -= n;
        found += n;
    }
    if (o->err_count) {
        vcx_err_watch_arm(o, found ? VCX_ERR_WATCH_MIN_NS
                                   : MIN(o->err_interval * 2, VCX_ERR_WATCH_MAX_NS));
    }
}

/* The QP entered ERR: watch its receive counter while it stays there. */
void vcx_xport_err_watch(VcxState *s, VcxQp *qp)
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

static void vcx_err_unwatch(VcxState *s, VcxQp *qp)
{
    VcxObjects *o = s->objs;

    if (!qp->err_watched) {
        return;
    }
    QTAILQ_REMOVE(&o->errq, qp, err_link);
    qp->err_watched = false;
    if (!--o->err_count) {
        timer_del(o->err_timer);
    }
}

void vcx_xport_init(VcxState *s)
{
    QTAILQ_INIT(&s->objs->runq);
    QTAILQ_INIT(&s->objs->errq);
    s->objs->err_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, vcx_err_watch_cb, s);
}

void vcx_xport_fini(VcxState *s)
{
    timer_free(s->objs->err_timer);
    s->objs->err_timer = NULL;
}

/*
 * Responder
 */

/* Next receive WQE of the QP: 1 with its scatter list, 0 none, -1 error (QP in ERR). */
static int vcx_resp_get_wqe(VcxState *s, VcxQp *qp, VcxSgl *sgl, uint16_t *index,
                            uint8_t *synd)
{
    uint8_t wqe[1u << 9];
    uint32_t stride, first, pdn;
    uint32_t recv;
    const char *why = NULL;

    if (qp->rq_type == VCX_QP_RQ_TYPE_SRQ) {
        int r = vcx_srq_pop(s, qp->srq, wqe, index);

        if (r <= 0) {
            *synd = VCX_CQE_SYND_LOCAL_QP_OP_ERR;
            return r;
        }
        stride = 1u << qp->srq->log_stride;
        first = VCX_SRQ_NEXT_SEG_SIZE;
        pdn = qp->srq->pdn;
    } else if (qp->rq_type == VCX_QP_RQ_TYPE_REGULAR) {
        stride = VCX_RQ_STRIDE_MIN << qp->log_rq_stride;
        if (vcx_dbr_read(s, qp->dbr_addr + VCX_QP_DBR_RECV, &recv) != MEMTX_OK) {
            vcx_qp_catas(s, qp, "doorbell record not readable");
            return -1;
        }
        if ((uint16_t)(recv - qp->rq_ci) == 0) {
            return 0;
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
    for (uint32_t off = first; off + VCX_WQE_DATA_SEG_SIZE <= stride;
         off += VCX_WQE_DATA_SEG_SIZE) {
        const uint8_t *d = wqe + off;
        uint32_t lkey = vcx_get(d, VCX_WQE_DATA_LKEY);
        uint32_t bc = vcx_get(d, VCX_WQE_DATA_BYTE_COUNT);
        uint64_t va = vcx_get64(d, VCX_WQE_DATA_ADDR);
        VcxMkey *mk;

        if (lkey == VCX_INVALID_LKEY) {
            break;
        }
        /*
         * The key, PD and access right are checked now; the range only for the bytes a
         * message writes (vcx_mkey_rw), as on ConnectX and rxe: a receive entry may reach
         * past its key (perftest posts MTU-sized receives).
         */
        if (bc & VCX_WQE_INLINE_FLAG) {
            why = "inline segment in a receive WQE";
        } else if (!(mk = vcx_mkey_check(s, lkey, pdn, qp->qpn, va, 0,
                                         VCX_ACC_LOCAL_WRITE, &why))) {
            /* why set by the check */
        } else {
            sgl->sge[sgl->n++] = (VcxSge) { .mr = mk, .va = va, .len = bc };
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

/* The 40 bytes in front of a UD receive: the GRH, or an IPv4 header in its last 20. */
static void vcx_resp_grh(const VcxPkt *pkt, uint8_t *grh, bool *ipv4)
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

static void vcx_resp_error(VcxState *s, VcxQp *qp, uint8_t synd, uint16_t index,
                           bool consumed)
{
    uint8_t cqe[VCX_CQE_SIZE];

    if (consumed) {
        vcx_cqe_err(cqe, qp, VCX_CQE_RESP_ERR, synd, index, 0);
        vcx_post(s, qp->rcq, cqe, false);
    }
    vcx_qp_to_err(s, qp);
}

static bool vcx_resp_rkey(VcxState *s, VcxQp *qp, const VcxPkt *pkt, uint64_t len,
                          uint32_t access, bool allowed, VcxMkey **mk)
{
    const char *why = "QP does not allow this remote access";

    *mk = NULL;
    if (allowed) {
        *mk = vcx_mkey_check(s, pkt->rkey, qp->pdn, qp->qpn, pkt->va, len, access, &why);
    }
    if (!*mk) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x rkey 0x%x va 0x%" PRIx64 " len %"
                      PRIu64 ": %s\n", qp->qpn, pkt->rkey, pkt->va, len, why);
        trace_vcx_err_rkey(qp->qpn, pkt->rkey, pkt->va, why);
    }
    return *mk != NULL;
}

static void vcx_resp_receive(VcxState *s, const VcxPkt *pkt, VcxAck *ack)
{
    uint8_t op = pkt->opcode & IB_OP_MASK;
    uint8_t transport = pkt->opcode & ~IB_OP_MASK;
    VcxQp *qp = vcx_qp_by_wire_qpn(s, pkt->dqpn);
    bool rc = transport == IB_TRANSPORT_RC, ud = transport == IB_TRANSPORT_UD;
    uint8_t cqe[VCX_CQE_SIZE];
    uint8_t cqe_op = VCX_CQE_RESP_SEND;
    VcxSgl sgl;
    VcxSglCursor dst, src;
    uint16_t index = 0;
    uint8_t synd = 0, l3 = 0;
    bool fault;
    VcxMkey *mk = NULL;
    int r;

    ack->type = VCX_NO_RESPONSE;
    if (!qp || qp->st == VCX_QP_ST_REG_UMR ||
        (qp->st == VCX_QP_ST_RC) != rc || vcx_qp_is_dgram(qp) != ud ||
        (qp->state != VCX_QP_STATE_RTR && qp->state != VCX_QP_STATE_RTS)) {
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
    if (qp->rq_type == VCX_QP_RQ_TYPE_ZERO_SIZE &&
        (op == IB_OP_SEND_ONLY || op == IB_OP_SEND_ONLY_IMM || op == IB_OP_SEND_ONLY_INV ||
         op == IB_OP_WRITE_ONLY_IMM)) {
        trace_vcx_resp_drop(qp->qpn, "message needs a receive queue, the QP has none");
        ack->type = rc ? VCX_NAK_INV_REQ : VCX_NO_RESPONSE;
        return;
    }

    switch (op) {
    case IB_OP_READ_REQUEST:
        if (!vcx_resp_rkey(s, qp, pkt, pkt->dma_len, VCX_ACC_REMOTE_READ, qp->rre, &mk)) {
            goto access_error;
        }
        ack->read_mr = mk;
        ack->read_va = pkt->va;
        goto ack;
    case IB_OP_COMPARE_SWAP:
    case IB_OP_FETCH_ADD: {
        uint8_t v[8];
        uint64_t orig, val;
        bool big;

        if (pkt->va & 7) {
            trace_vcx_err_rkey(qp->qpn, pkt->rkey, pkt->va, "atomic not 8-byte aligned");
            ack->type = VCX_NAK_INV_REQ;
            vcx_qp_to_err(s, qp);
            return;
        }
        if (!vcx_resp_rkey(s, qp, pkt, 8, VCX_ACC_REMOTE_ATOMIC, qp->rae, &mk)) {
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
            !vcx_resp_rkey(s, qp, pkt, pkt->len, VCX_ACC_REMOTE_WRITE, qp->rwe, &mk)) {
            goto access_error;
        }
        if (op == IB_OP_WRITE_ONLY_IMM) {
            r = vcx_resp_get_wqe(s, qp, &sgl, &index, &synd);
            if (r == 0) {
                goto rnr;
            } else if (r < 0) {
                vcx_resp_error(s, qp, synd, index, r == -2);
                ack->type = rc ? VCX_NAK_REM_OP : VCX_NO_RESPONSE;
                return;
            }
        }
        if (pkt->len) {
            VcxSgl target;

            vcx_sgl_single(&target, mk, pkt->va, pkt->len);
            dst = (VcxSglCursor) { .sgl = &target };
            src = (VcxSglCursor) { .sgl = pkt->payload };
            if (!vcx_sgl_copy(s, &dst, &src, pkt->len, &fault)) {
                goto op_error;
            }
        }
        if (op == IB_OP_WRITE_ONLY) {
            goto ack;
        }
        cqe_op = VCX_CQE_RESP_WR_IMM;
        break;
    case IB_OP_SEND_ONLY:
    case IB_OP_SEND_ONLY_IMM:
    case IB_OP_SEND_ONLY_INV: {
        uint64_t need = pkt->len + (ud ? VCX_GRH_SIZE : 0);

        r = vcx_resp_get_wqe(s, qp, &sgl, &index, &synd);
        if (r == 0) {
            goto rnr;
        } else if (r < 0) {
            vcx_resp_error(s, qp, synd, index, r == -2);
            ack->type = rc ? VCX_NAK_REM_OP : VCX_NO_RESPONSE;
            return;
        }
        if (need > sgl.total) {
            qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x receive WQE 0x%x holds %" PRIu64
                          " bytes, message needs %" PRIu64 "\n", qp->qpn, index,
                          sgl.total, need);
            trace_vcx_err_wqe(qp->qpn, index, "receive WQE too short");
            vcx_resp_error(s, qp, VCX_CQE_SYND_LOCAL_LENGTH_ERR, index, true);
            ack->type = rc ? VCX_NAK_INV_REQ : VCX_NO_RESPONSE;
            return;
        }
        dst = (VcxSglCursor) { .sgl = &sgl };
        if (ud) {
            uint8_t grh[VCX_GRH_SIZE];
            bool ipv4;

            vcx_resp_grh(pkt, grh, &ipv4);
            if (vcx_sgl_io(s, &dst, grh, sizeof(grh), true) != MEMTX_OK) {
                vcx_resp_error(s, qp, VCX_CQE_SYND_LOCAL_PROT_ERR, index, true);
                return;
            }
            l3 = ipv4 ? VCX_CQE_ROCE_L3_IPV4 : VCX_CQE_ROCE_L3_IPV6;
        }
        src = (VcxSglCursor) { .sgl = pkt->payload };
        if (!vcx_sgl_copy(s, &dst, &src, pkt->len, &fault)) {
            if (fault) {
                goto op_error;
            }
            vcx_resp_error(s, qp, VCX_CQE_SYND_LOCAL_PROT_ERR, index, true);
            ack->type = rc ? VCX_NAK_REM_OP : VCX_NO_RESPONSE;
            return;
        }
        if (op == IB_OP_SEND_ONLY_INV) {
            VcxMkey *inv = vcx_mkey_get(s, pkt->inv_rkey);

            if (!inv || inv->pdn != qp->pdn || !inv->umr_en ||
                (inv->access_mode == VCX_MKC_ACCESS_MODE_KLM &&
                 (!inv->en_rinval || inv->qpn != qp->qpn))) {
                qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x send with invalidate of "
                              "key 0x%x: not an invalidatable key of the QP's PD\n",
                              qp->qpn, pkt->inv_rkey);
                trace_vcx_err_rkey(qp->qpn, pkt->inv_rkey, 0, "cannot invalidate");
                vcx_resp_error(s, qp, VCX_CQE_SYND_LOCAL_QP_OP_ERR, index, true);
                ack->type = VCX_NAK_INV_REQ;
                return;
            }
            inv->free = true;
            if (inv->access_mode == VCX_MKC_ACCESS_MODE_KLM) {
                inv->qpn = VCX_MKC_QPN_UNBOUND;     /* a type 2 window, unbound */
            }
            cqe_op = VCX_CQE_RESP_SEND_INV;
        } else {
            cqe_op = op == IB_OP_SEND_ONLY_IMM ? VCX_CQE_RESP_SEND_IMM : VCX_CQE_RESP_SEND;
        }
        break;
    }
    default:
        ack->type = rc ? VCX_NAK_INV_REQ : VCX_NO_RESPONSE;
        vcx_qp_to_err(s, qp);
        return;
    }

    /* A receive WQE was consumed: its completion. */
    memset(cqe, 0, sizeof(cqe));
    if (ud) {
        vcx_set(cqe, VCX_CQE_GRH, 1);
        vcx_set(cqe, VCX_CQE_ROCE_L3_TYPE, l3);
    }
    vcx_set(cqe, VCX_CQE_RQPN, pkt->sqpn);
    if (qp->srq) {
        vcx_set(cqe, VCX_CQE_SRQN_UIDX, qp->srq->srqn);
    }
    vcx_set(cqe, VCX_CQE_IMM_INVAL_PKEY,
            cqe_op == VCX_CQE_RESP_SEND_INV ? pkt->inv_rkey :
            (cqe_op == VCX_CQE_RESP_SEND ? 0 : pkt->imm));
    if (qp->st == VCX_QP_ST_QP1) {
        /* GSI receives report the packet's BTH P_Key here (mlx5 CQE "pkey") */
        if (cqe_op == VCX_CQE_RESP_SEND) {
            vcx_set(cqe, VCX_CQE_IMM_INVAL_PKEY, VCX_DEFAULT_PKEY);
        }
        s->objs->qp1_received++;
    }
    vcx_set(cqe, VCX_CQE_BYTE_CNT, pkt->len + (ud ? VCX_GRH_SIZE : 0));
    vcx_set(cqe, VCX_CQE_QPN, qp->qpn);
    vcx_set(cqe, VCX_CQE_WQE_COUNTER, index);
    cqe[VCX_CQE_OP_OWN_BYTE] = cqe_op << 4;
    vcx_post(s, qp->rcq, cqe, pkt->se);
    /* fall through */

ack:
    ack->type = VCX_ACK;
    if (!ud) {
        qp->rq_psn = (qp->rq_psn + pkt->npkts) & VCX_PSN_MASK;
        qp->msn = (qp->msn + 1) & VCX_PSN_MASK;
    }
    return;
rnr:
    trace_vcx_resp_rnr(qp->qpn, qp->min_rnr_nak);
    ack->type = rc ? VCX_NAK_RNR : VCX_NO_RESPONSE;
    ack->rnr_timer = qp->min_rnr_nak;
    return;
access_error:
    ack->type = rc ? VCX_NAK_REM_ACCESS : VCX_NO_RESPONSE;
    if (rc) {
        vcx_qp_to_err(s, qp);
    }
    return;
op_error:
    ack->type = rc ? VCX_NAK_REM_OP : VCX_NO_RESPONSE;
    vcx_qp_to_err(s, qp);
}

/* Hand a message to its destination; only QPs of this port exist so far. */
static void vcx_xport_transmit(VcxState *s, const VcxPkt *pkt, VcxAck *ack)
{
    trace_vcx_pkt(pkt->opcode, pkt->sqpn, pkt->dqpn, pkt->psn, pkt->npkts, pkt->len);
    memset(ack, 0, sizeof(*ack));
    /*
     * A port that is not operationally up (link property off, or PAOS admin down)
     * carries nothing, loopback included: the message is lost as on a dead wire, so RC
     * retries until its retry count is spent and UC/UD complete without delivery.
     */
    if (!vcx_port_oper_up(s)) {
        trace_vcx_resp_drop(pkt->dqpn, "port down");
        ack->type = VCX_NO_RESPONSE;
        return;
    }
    vcx_resp_receive(s, pkt, ack);
    trace_vcx_ack(pkt->dqpn, vcx_ack_names[ack->type]);
}

/*
 * Requester
 */

/* RNR NAK timer field (IBTA 9.7.5.2.8, table 45), in nanoseconds. */
static int64_t vcx_rnr_ns(uint8_t t)
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

static void vcx_rnr_timer_cb(void *opaque)
{
    VcxQp *qp = opaque;

    qp->rnr_wait = false;
    trace_vcx_rnr_retry(qp->qpn, qp->rnr_left);
    vcx_xport_kick(qp->s, qp);
}

/* Complete the WQE at sq_ci in error and move the QP to ERR. */
static void vcx_req_fail(VcxState *s, VcxQp *qp, uint32_t nbb, uint8_t wqe_op,
                         uint8_t synd, const char *why)
{
    uint8_t cqe[VCX_CQE_SIZE];

    qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x WQE 0x%x (opcode 0x%x): %s: error CQE "
                  "syndrome 0x%x\n", qp->qpn, qp->sq_ci, wqe_op, why, synd);
    trace_vcx_err_wqe(qp->qpn, qp->sq_ci, why);
    vcx_cqe_err(cqe, qp, VCX_CQE_REQ_ERR, synd, qp->sq_ci, wqe_op);
    vcx_post(s, qp->scq, cqe, false);
    qp->sq_ci += nbb;
    vcx_qp_to_err(s, qp);
    vcx_xport_flush(s, qp);
}

typedef struct VcxReq {
    uint8_t wqe[VCX_SEND_WQE_MAX_WQEBBS * VCX_SEND_WQEBB];
    uint32_t nbb;
    uint8_t opcode;
    uint8_t fm_ce_se;
    VcxSgl sgl;
    VcxPkt pkt;
} VcxReq;

/* Parse the data and inline segments from byte off to the end of the WQE. */
static uint8_t vcx_req_gather(VcxState *s, VcxQp *qp, VcxReq *rq, uint32_t off,
                              uint32_t end, uint32_t access, const char **why)
{
    VcxSgl *l = &rq->sgl;

    l->n = 0;
    l->total = 0;
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
            VcxMkey *mk;

            if (end - off < VCX_WQE_DATA_SEG_SIZE) {
                *why = "data segment beyond the WQE";
                return VCX_CQE_SYND_LOCAL_QP_OP_ERR;
            }
            mk = vcx_mkey_check(s, lkey, qp->pdn, qp->qpn, va, len, access, why);
            if (!mk) {
                return VCX_CQE_SYND_LOCAL_PROT_ERR;
            }
            l->sge[l->n++] = (VcxSge) { .mr = mk, .va = va, .len = len };
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
        return st == VCX_QP_ST_RC || st == VCX_QP_ST_UC;
    case VCX_OPCODE_SEND_INVAL:
    case VCX_OPCODE_RDMA_READ:
    case VCX_OPCODE_ATOMIC_CS:
    case VCX_OPCODE_ATOMIC_FA:
        return st == VCX_QP_ST_RC;
    default:
        return false;
    }
}

/*
 * The next fixed-size segment of the WQE being executed, advancing *off past it; a WQE
 * whose DS count ends before it completes with a local QP operation error (NULL).
 */
static const uint8_t *vcx_req_take_seg(VcxState *s, VcxQp *qp, VcxReq *rq, uint32_t *off,
                                       uint32_t end, uint32_t size, const char *missing)
{
    const uint8_t *seg = rq->wqe + *off;

    if (end < *off + size) {
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_LOCAL_QP_OP_ERR, missing);
        return NULL;
    }
    *off += size;
    return seg;
}

/* Execute the WQE at sq_ci. Returns false when the SQ must stop (RNR wait, error). */
static bool vcx_req_wqe(VcxState *s, VcxQp *qp, VcxReq *rq)
{
    uint8_t *w = rq->wqe;
    VcxPkt *pkt = &rq->pkt;
    uint32_t ds, end, off = VCX_WQE_CTRL_SIZE, access = VCX_ACC_LOCAL_READ;
    uint8_t transport, synd, cqe[VCX_CQE_SIZE];
    uint32_t mtu = 128u << qp->mtu;
    const char *why = NULL;
    uint16_t index = qp->sq_ci;
    uint32_t byte_cnt;
    const uint8_t *sgid, *path, *seg;
    VcxAck ack;

    if (vcx_qbuf_read(s, &qp->buf, vcx_sq_off(qp, index), w, VCX_SEND_WQEBB) != MEMTX_OK) {
        vcx_qp_catas(s, qp, "send WQE not readable");
        return false;
    }
    rq->opcode = vcx_get(w, VCX_WQE_CTRL_OPCODE);
    rq->fm_ce_se = vcx_get(w, VCX_WQE_CTRL_FM_CE_SE);
    ds = vcx_get(w, VCX_WQE_CTRL_DS_CNT);
    rq->nbb = MAX(DIV_ROUND_UP(ds * VCX_WQE_DS, VCX_SEND_WQEBB), 1);
    if (!ds || rq->nbb > VCX_SEND_WQE_MAX_WQEBBS || rq->nbb > vcx_sq_size(qp)) {
        vcx_req_fail(s, qp, 1, rq->opcode, VCX_CQE_SYND_LOCAL_QP_OP_ERR, "bad DS count");
        return false;
    }
    for (uint32_t i = 1; i < rq->nbb; i++) {
        if (vcx_qbuf_read(s, &qp->buf, vcx_sq_off(qp, index + i), w + i * VCX_SEND_WQEBB,
                          VCX_SEND_WQEBB) != MEMTX_OK) {
            vcx_qp_catas(s, qp, "send WQE not readable");
            return false;
        }
    }
    end = ds * VCX_WQE_DS;
    if (!vcx_op_valid(qp->st, rq->opcode)) {
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_LOCAL_QP_OP_ERR,
                     "opcode not valid for the QP type");
        return false;
    }

    if (rq->opcode == VCX_OPCODE_UMR || qp->st == VCX_QP_ST_REG_UMR) {
        /* Memory key registration / invalidation: executed here, nothing is sent. */
        if (rq->opcode == VCX_OPCODE_NOP) {
            byte_cnt = 0;
            goto done;
        }
        synd = vcx_mkey_umr(s, qp->pdn, qp->qpn, qp->st == VCX_QP_ST_REG_UMR, w, end, &why);
        if (synd) {
            vcx_req_fail(s, qp, rq->nbb, rq->opcode, synd, why);
            return false;
        }
        byte_cnt = 0;
        goto done;
    }

    transport = qp->st == VCX_QP_ST_RC ? IB_TRANSPORT_RC :
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
        const uint8_t *av = vcx_req_take_seg(s, qp, rq, &off, end, VCX_WQE_AV_SIZE,
                                             "no datagram segment");

        if (!av) {
            return false;
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
        sgid = vcx_gid_entry(s, vcx_get(av, VCX_WQE_AV_SGID_INDEX));
        if (!sgid) {
            vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_LOCAL_QP_OP_ERR,
                         "address vector sgid_index names no RoCE address");
            return false;
        }
    }
    if (sgid) {
        memcpy(pkt->sgid, sgid + VCX_FLD_BYTE(VCX_GID_L3_ADDRESS), 16);
    }

    switch (rq->opcode) {
    case VCX_OPCODE_RDMA_WRITE:
    case VCX_OPCODE_RDMA_WRITE_IMM:
    case VCX_OPCODE_RDMA_READ:
    case VCX_OPCODE_ATOMIC_CS:
    case VCX_OPCODE_ATOMIC_FA:
        seg = vcx_req_take_seg(s, qp, rq, &off, end, VCX_WQE_RADDR_SEG_SIZE,
                               "no remote address segment");
        if (!seg) {
            return false;
        }
        pkt->va = vcx_get64(seg, VCX_WQE_RADDR_RADDR);
        pkt->rkey = vcx_get(seg, VCX_WQE_RADDR_RKEY);
        break;
    }
    if (rq->opcode == VCX_OPCODE_ATOMIC_CS || rq->opcode == VCX_OPCODE_ATOMIC_FA) {
        seg = vcx_req_take_seg(s, qp, rq, &off, end, VCX_WQE_ATOMIC_SEG_SIZE,
                               "no atomic segment");
        if (!seg) {
            return false;
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
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, synd, why);
        return false;
    }
    pkt->payload = &rq->sgl;
    pkt->len = rq->sgl.total;
    if (rq->sgl.total > (1ull << MIN(qp->log_msg_max ? qp->log_msg_max : VCX_LOG_MAX_MSG,
                                     VCX_LOG_MAX_MSG)) ||
        (vcx_qp_is_dgram(qp) && rq->sgl.total > mtu)) {
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_LOCAL_LENGTH_ERR,
                     "message longer than the maximum");
        return false;
    }
    byte_cnt = rq->sgl.total;

    switch (rq->opcode) {
    case VCX_OPCODE_NOP:
        goto done;
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
            vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_LOCAL_LENGTH_ERR,
                         "atomic result buffer shorter than 8 bytes");
            return false;
        }
        pkt->opcode = transport | (rq->opcode == VCX_OPCODE_ATOMIC_CS ?
                                   IB_OP_COMPARE_SWAP : IB_OP_FETCH_ADD);
        pkt->dma_len = VCX_ATOMIC_SIZE;
        pkt->len = 0;
        byte_cnt = VCX_ATOMIC_SIZE;
        break;
    }
    pkt->npkts = MAX(DIV_ROUND_UP(MAX(pkt->len, pkt->dma_len), mtu), 1);
    if (pkt->opcode == (transport | IB_OP_COMPARE_SWAP) ||
        pkt->opcode == (transport | IB_OP_FETCH_ADD)) {
        pkt->npkts = 1;
    }

    vcx_xport_transmit(s, pkt, &ack);

    switch (ack.type) {
    case VCX_ACK:
        break;
    case VCX_NO_RESPONSE:
        if (qp->st == VCX_QP_ST_RC) {
            if (!qp->retry_left) {
                vcx_req_fail(s, qp, rq->nbb, rq->opcode,
                             VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR, "no response");
                return false;
            }
            qp->retry_left--;
            qp->rnr_wait = true;        /* the SQ waits for the same timer */
            timer_mod(qp->rnr_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                                     vcx_ack_timeout_ns(qp));
            return false;
        }
        break;
    case VCX_NAK_SEQ:
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_TRANSPORT_RETRY_EXC_ERR,
                     "PSN sequence error NAKs");
        return false;
    case VCX_NAK_RNR:
        if (qp->rnr_retry != VCX_RNR_INFINITE && !qp->rnr_left) {
            vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_RNR_RETRY_EXC_ERR,
                         "RNR retries exhausted");
            return false;
        }
        if (qp->rnr_retry != VCX_RNR_INFINITE) {
            qp->rnr_left--;
        }
        qp->rnr_wait = true;
        timer_mod(qp->rnr_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                                 vcx_rnr_ns(ack.rnr_timer));
        return false;
    case VCX_NAK_INV_REQ:
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_REMOTE_INVAL_REQ_ERR,
                     "invalid request NAK");
        return false;
    case VCX_NAK_REM_ACCESS:
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_REMOTE_ACCESS_ERR,
                     "remote access NAK");
        return false;
    case VCX_NAK_REM_OP:
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_REMOTE_OP_ERR,
                     "remote operational NAK");
        return false;
    }

    /* Responses carrying data: READ payload, atomic original value. */
    if (ack.read_mr) {
        VcxSgl from;
        VcxSglCursor dst = { .sgl = &rq->sgl }, src = { .sgl = &from };
        bool fault;

        vcx_sgl_single(&from, ack.read_mr, ack.read_va, pkt->dma_len);
        if (!vcx_sgl_copy(s, &dst, &src, pkt->dma_len, &fault)) {
            vcx_req_fail(s, qp, rq->nbb, rq->opcode,
                         fault ? VCX_CQE_SYND_REMOTE_OP_ERR : VCX_CQE_SYND_LOCAL_PROT_ERR,
                         "read response not deliverable");
            return false;
        }
    } else if (pkt->dma_len == VCX_ATOMIC_SIZE && !pkt->len &&
               rq->opcode != VCX_OPCODE_RDMA_READ) {
        uint8_t v[8];
        VcxSglCursor dst = { .sgl = &rq->sgl };

        if (vcx_atomic_big_endian(s)) {
            stq_be_p(v, ack.atomic_orig);
        } else {
            stq_le_p(v, ack.atomic_orig);
        }
        if (vcx_sgl_io(s, &dst, v, sizeof(v), true) != MEMTX_OK) {
            vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_LOCAL_PROT_ERR,
                         "atomic result not writable");
            return false;
        }
    }
    if (!vcx_qp_is_dgram(qp)) {
        qp->sq_psn = (qp->sq_psn + pkt->npkts) & VCX_PSN_MASK;
    } else if (qp->st == VCX_QP_ST_QP1) {
        s->objs->qp1_sent++;
    }

done:
    if ((rq->fm_ce_se & VCX_WQE_CE_CQE) == VCX_WQE_CE_CQE) {
        vcx_cqe_req(cqe, qp, index, rq->opcode, byte_cnt);
        vcx_post(s, qp->scq, cqe, false);
    }
    qp->sq_ci += rq->nbb;
    qp->rnr_left = qp->rnr_retry;
    qp->retry_left = qp->retry_count;
    return true;
}

/* Run the SQ of one QP up to the producer counter of its doorbell record. */
static void vcx_req_run(VcxState *s, VcxQp *qp)
{
    g_autofree VcxReq *rq = NULL;
    uint32_t pi;

    if (qp->state == VCX_QP_STATE_ERR) {
        vcx_xport_flush(s, qp);
        return;
    }
    if (qp->state != VCX_QP_STATE_RTS || qp->no_sq || qp->rnr_wait) {
        return;
    }
    if (vcx_dbr_read(s, qp->dbr_addr + VCX_QP_DBR_SEND, &pi) != MEMTX_OK) {
        vcx_qp_catas(s, qp, "doorbell record not readable");
        return;
    }
    qp->sq_pi = pi;
    if ((uint16_t)(qp->sq_pi - qp->sq_ci) > vcx_sq_size(qp)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x send counter 0x%x is more than %u "
                      "WQEBBs ahead of 0x%x\n", qp->qpn, qp->sq_pi, vcx_sq_size(qp),
                      qp->sq_ci);
        trace_vcx_err_qp(qp->qpn, "send counter beyond the queue size");
    }
    rq = g_new(VcxReq, 1);
    qp->in_req = true;
    for (uint32_t n = 0; n < vcx_sq_size(qp) && qp->sq_ci != qp->sq_pi &&
                         qp->state == VCX_QP_STATE_RTS; n++) {
        if (!vcx_req_wqe(s, qp, rq)) {
            break;
        }
    }
    qp->in_req = false;
    if (qp->state == VCX_QP_STATE_ERR) {
        vcx_xport_flush(s, qp);
    }
}

/*
 * Executor and doorbells
 */

void vcx_xport_kick(VcxState *s, VcxQp *qp)
{
    VcxObjects *o = s->objs;

    if (!qp->kicked) {
        qp->kicked = true;
        QTAILQ_INSERT_TAIL(&o->runq, qp, run_link);
    }
    if (o->running) {
        return;                 /* the loop below picks it up */
    }
    o->running = true;
    while ((qp = QTAILQ_FIRST(&o->runq))) {
        QTAILQ_REMOVE(&o->runq, qp, run_link);
        qp->kicked = false;
        vcx_req_run(s, qp);
    }
    o->running = false;
}

void vcx_xport_qp_init(VcxState *s, VcxQp *qp)
{
    qp->s = s;
    qp->rnr_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, vcx_rnr_timer_cb, qp);
    qp->rnr_wait = false;
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
    vcx_xport_kick(s, qp);
}
