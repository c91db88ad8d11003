/*
 * vcx: transport engine: send queue execution (requester), receive processing
 * (responder), CQE generation and the loopback path between QPs of the port.
 *
 * Structure, from doorbell to completion:
 *
 *   SQ doorbell (UAR BlueFlame register, 8-byte control segment), RTS transition,
 *   RNR / ACK timer, a QP entering ERR, the ERR watch's timer
 *     -> vcx_xport_kick() / err_due: queue the work and schedule the executor; nothing
 *        is executed in the caller (an MMIO write, a timer, a command)
 *     -> the executor (vcx_xport_bh): one bottom half per device, created with
 *        qemu_bh_new_guarded() on the device's MemReentrancyGuard; each run drains the
 *        run queue round robin under a budget and reschedules itself while work remains
 *     -> requester (vcx_req_*): fetch WQEs up to the doorbell record's producer counter,
 *        decode and check them (opcode for the QP type, DS count, lkeys), build a VcxPkt
 *     -> VcxPkt: one message as the BTH-level operation a RoCEv2 packet sequence
 *        carries (BTH opcode, PSN and packet count at the path MTU, DETH, RETH,
 *        AtomicETH, ImmDt, IETH, GRH fields); the payload is referenced as the
 *        requester's gather list. vcx_xport_transmit() delivers it to the responder of
 *        the destination QP on this port; a wire path would frame it here instead.
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
 * one piece, so a run may overshoot the byte budget by one MTU.
 *
 * Lifetimes. The executor runs between commands, never inside one, and commands never
 * run inside it: a command is an MMIO write, and MMIO into the device (its command
 * doorbell, a UAR, the MSI-X table) from the executor's own DMA or MSI-X messages is
 * refused by QEMU's re-entrancy guard, which the guarded bottom half engages (the DMA
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
#include "vcx-obj.h"
#include "trace.h"

/* IBTA BTH opcodes: transport in bits 7:5, operation in bits 4:0. */
#define IB_TRANSPORT_RC         0x00
#define IB_TRANSPORT_UC         0x20
#define IB_TRANSPORT_UD         0x60
#define IB_TRANSPORT_XRC        0xa0
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
#define VCX_DIRECT_MAX          (64 * KiB)      /* one zero-copy piece, for the byte budget */
#define VCX_DIRECT_MIN          512u
#define VCX_PSN_MASK            0xffffffu
#define VCX_RNR_INFINITE        7
#define VCX_ROCE_HDRS           (8 + 12)        /* UDP + BTH, for the IP payload length */

/*
 * Budget of one executor run. Measured with qtest on the development host (2 AMD EPYC
 * vCPUs, the project's QEMU build): a 4 KiB bounce chunk costs about 0.7 us (two pci_dma calls,
 * each a flatview lookup and a memcpy), a WQE with a small payload 0.5-1 us (WQE and
 * doorbell record reads, checks, CQE write, consumer counter read), so a run of 64 WQEs
 * takes 30-60 us and one moving 256 KiB about 45 us (99th percentile under 0.2 ms; what
 * is slower is the host faulting in fresh guest RAM). That keeps a run well under a
 * millisecond, so the vCPU's next MMIO access and the monitor wait at most that long,
 * while a run still does about as much as one main loop iteration costs (some 40 us
 * here): payload moves at 2-4 GB/s. Much smaller budgets would spend the time in the
 * main loop instead. vcx_xport_run traces each run's host time, to check these figures
 * elsewhere.
 */
#define VCX_XPORT_RUN_WQES      64u
#define VCX_XPORT_RUN_BYTES     (256 * KiB)

typedef struct VcxBudget {
    uint32_t wqes;              /* WQEs the run may still start or flush */
    uint64_t bytes;             /* payload bytes it may still move */
} VcxBudget;

/*
 * One gather or scatter entry: inline bytes (data) or a range of a memory key, named by
 * number and checked again at every access (vcx_sgl_io), never held as a pointer.
 */
typedef struct VcxSge {
    const uint8_t *data;        /* inline bytes in the requester's WQE copy; NULL: key */
    uint64_t va;
    uint32_t key;
    uint32_t len;
} VcxSge;

typedef struct VcxSgl {
    uint32_t n;
    uint64_t total;
    uint32_t pdn;               /* the keys are used for this PD and QP ... */
    uint32_t qpn;
    uint32_t access;            /* ... with these rights (VCX_ACC_*) */
    VcxSge sge[VCX_MAX_SGE];
} VcxSgl;

/* A position in a scatter/gather list. */
typedef struct VcxSglCursor {
    const VcxSgl *sgl;
    uint32_t i;
    uint64_t off;
} VcxSglCursor;

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
    uint32_t xrc_srqn;          /* XRCETH: the XRC SRQ at the target */
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
} VcxAck;

/* A message in its data phase, resumable across executor runs. */
typedef struct VcxXfer {
    bool active;
    bool whole;                 /* UD: one MTU at most, moved in one piece */
    bool read;                  /* RDMA READ: responder memory to the local list */
    bool uses_rx;               /* the responder consumed a receive WQE for it */
    bool scatter;               /* the payload goes to that WQE (SEND), not an rkey */
    uint8_t op;                 /* BTH operation (IB_OP_*) */
    uint8_t cqe_op;             /* responder CQE opcode (uses_rx) */
    uint8_t l3;                 /* UD: RoCE L3 type of the GRH area */
    uint16_t index;             /* responder's receive WQE (uses_rx) */
    uint32_t resp_qpn;          /* responder by device number ... */
    uint64_t resp_gen;          /* ... and incarnation */
    uint32_t srqn;              /* XRC target: the XRC SRQ serving it by number ... */
    uint64_t srq_gen;           /* ... and incarnation */
    uint64_t seq;               /* message number (VcxRx.seq at the responder) */
    uint64_t left;              /* payload bytes still to move */
    VcxSglCursor src, dst;      /* where the next chunk comes from and goes */
    VcxSgl remote;              /* WRITE target / READ source: the rkey range */
} VcxXfer;

/* The WQE at sq_ci while it executes: it lives as long as its QP's incarnation. */
typedef struct VcxReq {
    uint8_t wqe[VCX_SEND_WQE_MAX_WQEBBS * VCX_SEND_WQEBB];
    uint32_t nbb;
    uint8_t opcode;
    uint8_t fm_ce_se;
    uint32_t byte_cnt;          /* for the requester CQE */
    VcxSgl sgl;
    VcxPkt pkt;
    VcxAck ack;
    VcxXfer x;
} VcxReq;

/*
 * The responder side: the message arriving in several runs (RC/UC) and the receive WQE
 * it consumed. seq 0: none; a non-zero seq whose owner no longer runs that message
 * (vcx_rx_busy) is a message that will never finish.
 */
typedef struct VcxRx {
    uint64_t seq;
    uint32_t owner;             /* requester QP number ... */
    uint64_t owner_gen;         /* ... and incarnation */
    bool held;                  /* a receive WQE consumed, not completed yet */
    uint16_t index;
    uint32_t srqn;              /* XRC target: the XRC SRQ it came from, by number ... */
    uint64_t srq_gen;           /* ... and incarnation */
    VcxSgl sgl;                 /* its scatter list (also the scratch list of a UD one) */
} VcxRx;

struct VcxXportQp {
    VcxReq req;
    VcxRx rx;
    uint32_t allow;             /* WQEs the SQ may still start since the last kick */
    bool fresh;                 /* the doorbell record was not read since the kick */
};

typedef enum VcxStep {
    VCX_STEP_DONE,              /* WQE completed, the SQ goes on */
    VCX_STEP_STOP,              /* the SQ stops: RNR / ACK wait, error */
    VCX_STEP_MORE,              /* the run's budget ended inside the WQE */
    VCX_STEP_ANSWER,            /* the message has its answer in the VcxReq's ack */
} VcxStep;

static const char *const vcx_ack_names[] = {
    "ACK", "RNR NAK", "PSN NAK", "invalid request NAK", "remote access NAK",
    "remote operational NAK", "no response",
};

static void vcx_xport_transmit(VcxState *s, VcxQp *qp, VcxReq *rq);
static void vcx_rnr_timer_cb(void *opaque);

/*
 * Scatter/gather copy
 */

static MemTxResult vcx_sgl_io(VcxState *s, VcxSglCursor *c, uint8_t *buf, uint32_t len,
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
static void vcx_sgl_single(VcxSgl *l, uint32_t key, uint32_t pdn, uint32_t qpn,
                           uint32_t access, uint64_t va, uint32_t len)
{
    l->n = 1;
    l->total = len;
    l->pdn = pdn;
    l->qpn = qpn;
    l->access = access;
    l->sge[0] = (VcxSge) { .key = key, .va = va, .len = len };
}

/*
 * The receive side of a message: the responder QP's own RQ or SRQ, receive CQ and PD, or
 * for an XRC target the XRC SRQ the message names with that SRQ's CQ and PD (vcx-xrc.c).
 * Computed for each use: a message only names an XRC SRQ by number and incarnation.
 */
typedef struct VcxRecv {
    VcxSrq *srq;                /* where receive WQEs come from (NULL: the QP's RQ) */
    VcxCq *cq;                  /* where receives complete */
    uint32_t pdn;               /* the PD of rkeys and of send-with-invalidate keys */
} VcxRecv;

static VcxRecv vcx_recv_own(VcxQp *qp)
{
    return (VcxRecv) { qp->rq_type == VCX_QP_RQ_TYPE_SRQ ? qp->srq : NULL, qp->rcq,
                       qp->pdn };
}

static VcxRecv vcx_recv_xrc(VcxState *s, VcxSrq *srq)
{
    return (VcxRecv) { srq, vcx_cq_get(s, srq->cqn), srq->pdn };
}

/* An XRC target's SRQ by number and incarnation: .srq is NULL once it is gone. */
static VcxRecv vcx_recv_of(VcxState *s, VcxQp *qp, uint32_t srqn, uint64_t gen)
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
static uint8_t vcx_qp_transport(const VcxQp *qp)
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
static bool vcx_qp_reliable(const VcxQp *qp)
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

/* A receive WQE completes in error, on the CQ of its receive side (srqn if an SRQ's). */
static void vcx_post_resp_err(VcxState *s, VcxQp *qp, const VcxRecv *rcv, uint8_t synd,
                              uint16_t index)
{
    uint8_t cqe[VCX_CQE_SIZE];

    vcx_cqe_err(cqe, qp, VCX_CQE_RESP_ERR, synd, index, 0);
    vcx_set(cqe, VCX_CQE_SRQN_UIDX, rcv->srq ? rcv->srq->srqn : 0);
    vcx_post(s, rcv->cq, cqe, false);
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

static uint32_t vcx_sq_size(VcxQp *qp)
{
    return qp->no_sq ? 0 : 1u << qp->log_sq_size;
}

void vcx_xport_kick(VcxState *s, VcxQp *qp)
{
    VcxObjects *o = s->objs;

    /* as many WQEs as the SQ holds per kick: a counter run past the WQEs stops there */
    qp->xs->allow = vcx_sq_size(qp);
    qp->xs->fresh = true;
    vcx_xport_requeue(o, qp);
    qemu_bh_schedule(o->bh);
}

/* QPs queued for the executor, plus one for a due ERR watch (the state property). */
uint32_t vcx_xport_queued(VcxState *s)
{
    VcxObjects *o = s->objs;
    uint32_t n = o->err_due;
    VcxQp *qp;

    QTAILQ_FOREACH(qp, &o->runq, run_link) {
        n++;
    }
    return n;
}

/*
 * Flush: every outstanding WQE of a QP in ERR completes with WR_FLUSH_ERR.
 */

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
        vcx_post(s, qp->scq, cqe, false);
        qp->sq_ci += MIN(DIV_ROUND_UP(ds * VCX_WQE_DS, VCX_SEND_WQEBB),
                         VCX_SEND_WQE_MAX_WQEBBS);
    }
    if (n) {
        trace_vcx_flush(qp->qpn, "SQ", n);
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
        vcx_post(s, qp->rcq, cqe, false);
        qp->rq_ci++;
    }
    if (n) {
        trace_vcx_flush(qp->qpn, "RQ", n);
    }
    return n;
}

/* A QP in ERR: flush its SQ, then its RQ; true if work is left for another run. */
static bool vcx_flush_qp(VcxState *s, VcxQp *qp, VcxBudget *b)
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
static void vcx_err_watch_cb(void *opaque)
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
static void vcx_err_watch_run(VcxState *s, VcxBudget *b)
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
    qp->rnr_wait = false;
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

/*
 * Responder
 */

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

static bool vcx_qp_receiving(const VcxQp *qp)
{
    return qp->state == VCX_QP_STATE_RTR || qp->state == VCX_QP_STATE_RTS;
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
static int vcx_resp_take_wqe(VcxState *s, VcxQp *qp, const VcxRecv *rcv, uint16_t *index,
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

static void vcx_resp_error(VcxState *s, VcxQp *qp, const VcxRecv *rcv, uint8_t synd,
                           uint16_t index, bool consumed)
{
    if (consumed) {
        vcx_post_resp_err(s, qp, rcv, synd, index);
    }
    vcx_qp_to_err(s, qp);
}

static bool vcx_resp_rkey(VcxState *s, VcxQp *qp, uint32_t pdn, const VcxPkt *pkt,
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
    if (!ud && vcx_rx_busy(s, &qp->xs->rx)) {
        /* a second sender interleaving its packets with the message in progress */
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x: message from QP 0x%x while one from "
                      "QP 0x%x is arriving: out of sequence\n", qp->qpn, pkt->sqpn,
                      qp->xs->rx.owner);
        trace_vcx_err_qp(qp->qpn, "message from a second sender while one is arriving");
        ack->type = rc ? VCX_NAK_SEQ : VCX_NO_RESPONSE;
        return;
    }
    if (xrc) {
        /* the XRCETH names the SRQ, which must be of the target's domain (vcx-xrc.c) */
        const char *why = NULL;
        VcxSrq *srq = vcx_xrc_target_srq(s, qp, pkt->xrc_srqn, &why);

        if (!srq) {
            vcx_xrc_invalid_request(s, qp, pkt->xrc_srqn, why);
            ack->type = VCX_NAK_INV_REQ;
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
        ack->type = rc ? VCX_NAK_INV_REQ : VCX_NO_RESPONSE;
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
            ack->type = VCX_NAK_INV_REQ;
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
            ack->type = rc ? VCX_NAK_INV_REQ : VCX_NO_RESPONSE;
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
        ack->type = rc ? VCX_NAK_INV_REQ : VCX_NO_RESPONSE;
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

/* The responder ends the message once its payload has moved: CQE, PSN. */
static void vcx_resp_end(VcxState *s, VcxQp *qp, const VcxPkt *pkt, VcxXfer *x,
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
                (inv->access_mode == VCX_MKC_ACCESS_MODE_KLM &&
                 (!inv->en_rinval || inv->qpn != qp->qpn))) {
                qemu_log_mask(LOG_GUEST_ERROR, "vcx: QP 0x%x send with invalidate of "
                              "key 0x%x: not an invalidatable key of the QP's PD\n",
                              qp->qpn, pkt->inv_rkey);
                trace_vcx_err_rkey(qp->qpn, pkt->inv_rkey, 0, "cannot invalidate");
                vcx_resp_error(s, qp, &rcv, VCX_CQE_SYND_LOCAL_QP_OP_ERR, x->index, true);
                ack->type = VCX_NAK_INV_REQ;
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
        vcx_post(s, rcv.cq, cqe, pkt->se);
    }
    if (!ud) {
        qp->rq_psn = (qp->rq_psn + pkt->npkts) & VCX_PSN_MASK;
        qp->msn = (qp->msn + 1) & VCX_PSN_MASK;
    }
}

/* A chunk of the payload could not move: how the responder and the answer take it. */
static void vcx_resp_fault(VcxState *s, VcxQp *qp, VcxXfer *x, bool src_fault,
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

/* Hand a message to its destination; only QPs of this port exist so far. */
static void vcx_xport_transmit(VcxState *s, VcxQp *qp, VcxReq *rq)
{
    const VcxPkt *pkt = &rq->pkt;

    trace_vcx_pkt(pkt->opcode, pkt->sqpn, pkt->dqpn, pkt->psn, pkt->npkts, pkt->len);
    memset(&rq->ack, 0, sizeof(rq->ack));
    rq->x.active = false;
    /*
     * A port that is not operationally up (link property off, or PAOS admin down)
     * carries nothing, loopback included: the message is lost as on a dead wire, so RC
     * retries until its retry count is spent and UC/UD complete without delivery.
     */
    if (!vcx_port_oper_up(s)) {
        trace_vcx_resp_drop(pkt->dqpn, "port down");
        rq->ack.type = VCX_NO_RESPONSE;
        return;
    }
    vcx_resp_begin(s, qp, rq);
    if (!rq->x.active) {
        trace_vcx_ack(pkt->dqpn, vcx_ack_names[rq->ack.type]);
    }
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

/* The RNR / ACK timer: the SQ may go on; the executor does it. */
static void vcx_rnr_timer_cb(void *opaque)
{
    VcxQp *qp = opaque;

    qp->rnr_wait = false;
    trace_vcx_rnr_retry(qp->qpn, qp->rnr_left);
    vcx_xport_kick(qp->s, qp);
}

/* Complete the WQE at sq_ci in error and move the QP to ERR (the executor flushes). */
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
    qp->xs->req.x.active = false;
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

/* The WQE at sq_ci completed: its CQE if it asked for one, and the SQ moves on. */
static VcxStep vcx_req_complete(VcxState *s, VcxQp *qp, VcxReq *rq)
{
    uint8_t cqe[VCX_CQE_SIZE];

    if ((rq->fm_ce_se & VCX_WQE_CE_CQE) == VCX_WQE_CE_CQE) {
        vcx_cqe_req(cqe, qp, qp->sq_ci, rq->opcode, rq->byte_cnt);
        vcx_post(s, qp->scq, cqe, false);
    }
    qp->sq_ci += rq->nbb;
    qp->rnr_left = qp->rnr_retry;
    qp->retry_left = qp->retry_count;
    return VCX_STEP_DONE;
}

/*
 * Fetch and decode the WQE at sq_ci and send its message: DONE for what completes
 * locally (UMR, NOP), STOP when it failed, ANSWER when the responder answered (rq->ack)
 * or opened the data phase (rq->x.active).
 */
static VcxStep vcx_req_begin(VcxState *s, VcxQp *qp, VcxReq *rq)
{
    uint8_t *w = rq->wqe;
    VcxPkt *pkt = &rq->pkt;
    uint32_t ds, end, off = VCX_WQE_CTRL_SIZE, access = VCX_ACC_LOCAL_READ;
    uint8_t transport, synd;
    uint32_t mtu = 128u << qp->mtu;
    const char *why = NULL;
    uint16_t index = qp->sq_ci;
    const uint8_t *sgid, *path, *seg;

    rq->x.active = false;
    if (vcx_qbuf_read(s, &qp->buf, vcx_sq_off(qp, index), w, VCX_SEND_WQEBB) != MEMTX_OK) {
        vcx_qp_catas(s, qp, "send WQE not readable");
        return VCX_STEP_STOP;
    }
    rq->opcode = vcx_get(w, VCX_WQE_CTRL_OPCODE);
    rq->fm_ce_se = vcx_get(w, VCX_WQE_CTRL_FM_CE_SE);
    ds = vcx_get(w, VCX_WQE_CTRL_DS_CNT);
    rq->nbb = MAX(DIV_ROUND_UP(ds * VCX_WQE_DS, VCX_SEND_WQEBB), 1);
    if (!ds || rq->nbb > VCX_SEND_WQE_MAX_WQEBBS || rq->nbb > vcx_sq_size(qp)) {
        vcx_req_fail(s, qp, 1, rq->opcode, VCX_CQE_SYND_LOCAL_QP_OP_ERR, "bad DS count");
        return VCX_STEP_STOP;
    }
    for (uint32_t i = 1; i < rq->nbb; i++) {
        if (vcx_qbuf_read(s, &qp->buf, vcx_sq_off(qp, index + i), w + i * VCX_SEND_WQEBB,
                          VCX_SEND_WQEBB) != MEMTX_OK) {
            vcx_qp_catas(s, qp, "send WQE not readable");
            return VCX_STEP_STOP;
        }
    }
    end = ds * VCX_WQE_DS;
    if (!vcx_op_valid(qp->st, rq->opcode)) {
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_LOCAL_QP_OP_ERR,
                     "opcode not valid for the QP type");
        return VCX_STEP_STOP;
    }
    rq->byte_cnt = 0;

    if (rq->opcode == VCX_OPCODE_UMR || qp->st == VCX_QP_ST_REG_UMR) {
        /* Memory key registration / invalidation: executed here, nothing is sent. */
        if (rq->opcode == VCX_OPCODE_NOP) {
            return vcx_req_complete(s, qp, rq);
        }
        synd = vcx_mkey_umr(s, qp->pdn, qp->qpn, qp->st == VCX_QP_ST_REG_UMR, w, end, &why);
        if (synd) {
            vcx_req_fail(s, qp, rq->nbb, rq->opcode, synd, why);
            return VCX_STEP_STOP;
        }
        return vcx_req_complete(s, qp, rq);
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
        const uint8_t *av = vcx_req_take_seg(s, qp, rq, &off, end, VCX_WQE_AV_SIZE,
                                             "no datagram segment");

        if (!av) {
            return VCX_STEP_STOP;
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
            return VCX_STEP_STOP;
        }
    }
    if (sgid) {
        memcpy(pkt->sgid, sgid + VCX_FLD_BYTE(VCX_GID_L3_ADDRESS), 16);
    }
    if (qp->st == VCX_QP_ST_XRC && rq->opcode != VCX_OPCODE_NOP) {
        /* XRC initiator: the XRC segment (the remote XRC SRQ) follows the control one */
        seg = vcx_req_take_seg(s, qp, rq, &off, end, VCX_WQE_XRC_SEG_SIZE,
                               "no XRC segment");
        if (!seg) {
            return VCX_STEP_STOP;
        }
        pkt->xrc_srqn = vcx_get(seg, VCX_XRC_SEG_SRQN);
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
            return VCX_STEP_STOP;
        }
        pkt->va = vcx_get64(seg, VCX_WQE_RADDR_RADDR);
        pkt->rkey = vcx_get(seg, VCX_WQE_RADDR_RKEY);
        break;
    }
    if (rq->opcode == VCX_OPCODE_ATOMIC_CS || rq->opcode == VCX_OPCODE_ATOMIC_FA) {
        seg = vcx_req_take_seg(s, qp, rq, &off, end, VCX_WQE_ATOMIC_SEG_SIZE,
                               "no atomic segment");
        if (!seg) {
            return VCX_STEP_STOP;
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
        return VCX_STEP_STOP;
    }
    pkt->payload = &rq->sgl;
    pkt->len = rq->sgl.total;
    if (rq->sgl.total > (1ull << MIN(qp->log_msg_max ? qp->log_msg_max : VCX_LOG_MAX_MSG,
                                     VCX_LOG_MAX_MSG)) ||
        (vcx_qp_is_dgram(qp) && rq->sgl.total > mtu)) {
        vcx_req_fail(s, qp, rq->nbb, rq->opcode, VCX_CQE_SYND_LOCAL_LENGTH_ERR,
                     "message longer than the maximum");
        return VCX_STEP_STOP;
    }
    rq->byte_cnt = rq->sgl.total;

    switch (rq->opcode) {
    case VCX_OPCODE_NOP:
        return vcx_req_complete(s, qp, rq);
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
            return VCX_STEP_STOP;
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

    vcx_xport_transmit(s, qp, rq);
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
    uint8_t bounce[VCX_BOUNCE];
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
            timer_mod(qp->rnr_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                                     vcx_ack_timeout_ns(qp));
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
        qp->rnr_wait = true;
        timer_mod(qp->rnr_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                                 vcx_rnr_ns(ack->rnr_timer));
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

    if (!rq->x.active) {
        st = vcx_req_begin(s, qp, rq);
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
    uint32_t pi;

    if (qp->state == VCX_QP_STATE_ERR) {
        return vcx_flush_qp(s, qp, b);
    }
    if (qp->state != VCX_QP_STATE_RTS || qp->no_sq || qp->rnr_wait) {
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
    while ((rq->x.active || qp->sq_ci != qp->sq_pi) && qp->state == VCX_QP_STATE_RTS) {
        VcxStep st;

        if (!rq->x.active) {
            if (!xs->allow) {
                break;
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

/*
 * The executor: one run of the device's guarded bottom half. QPs take turns from the
 * head of the run queue; one whose turn ended with the budget goes back to the tail.
 */
static void vcx_xport_bh(void *opaque)
{
    VcxState *s = opaque;
    VcxObjects *o = s->objs;
    VcxBudget b = { VCX_XPORT_RUN_WQES, VCX_XPORT_RUN_BYTES };
    int64_t start = get_clock();
    VcxQp *qp;

    if (vcx_fw_dead(s)) {
        /* dead firmware executes nothing (vcx_fw_dead); a reset drops the queue */
        trace_vcx_dev_err_xport_dead(QTAILQ_EMPTY(&o->runq) ? 0 : QTAILQ_FIRST(&o->runq)->qpn);
        return;
    }
    o->runs++;
    if (o->err_due) {
        vcx_err_watch_run(s, &b);
    }
    while (b.wqes && b.bytes && !s->reset_pending && (qp = QTAILQ_FIRST(&o->runq))) {
        QTAILQ_REMOVE(&o->runq, qp, run_link);
        qp->kicked = false;
        if (vcx_req_run(s, qp, &b)) {
            vcx_xport_requeue(o, qp);
        }
    }
    trace_vcx_xport_run(o->runs, VCX_XPORT_RUN_WQES - b.wqes,
                        VCX_XPORT_RUN_BYTES - b.bytes, get_clock() - start,
                        !QTAILQ_EMPTY(&o->runq) || o->err_due);
    if ((!QTAILQ_EMPTY(&o->runq) || o->err_due) && !s->reset_pending) {
        qemu_bh_schedule(o->bh);
    }
}

void vcx_xport_init(VcxState *s)
{
    VcxObjects *o = s->objs;

    QTAILQ_INIT(&o->runq);
    QTAILQ_INIT(&o->errq);
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
    vcx_xport_kick(s, qp);      /* the executor runs it later, not in this MMIO write */
}
