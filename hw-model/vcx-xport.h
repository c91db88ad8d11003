/*
 * vcx: the transport engine's private header, shared by its three files:
 *   vcx-xport.c  the executor (bottom half, run queue, budget), the requester and the data
 *                phase, scatter/gather and CQE helpers (the engine's overview is there);
 *   vcx-resp.c   the responder: a message arriving at a QP, its receive WQE, its end;
 *   vcx-flush.c  the Error state: flushes and the ERR watch.
 * Nothing outside these files includes it; the rest of the device sees vcx-obj.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_VCX_XPORT_H
#define HW_VCX_XPORT_H

#include "qemu/units.h"
#include "vcx-obj.h"
#include "roce/vcx-roce-qp.h"

/* IBTA BTH opcodes: transport in bits 7:5, operation in bits 4:0. */
#define IB_TRANSPORT_RC         0x00
#define IB_TRANSPORT_UC         0x20
#define IB_TRANSPORT_UD         0x60
/* BTH destination QP of a multicast datagram (IBTA 10.5.1.1, the permissive QPN) */
#define VCX_MCAST_QPN           0xffffffu
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

/*
 * Budget of the SQ doorbell's own slice (vcx_xport_doorbell_run): a quarter of a run, so
 * the ringing vCPU is back within some 15 us, while the common small message (and a
 * batch of a few) completes before the doorbell write returns.
 */
#define VCX_XPORT_DOORBELL_WQES     16u
#define VCX_XPORT_DOORBELL_BYTES    (64 * KiB)

/*
 * With loopback-frames, the receiving half of what the slice sent to the port's own QPs
 * has a budget of its own: as many frames as a run's WQEs, as many bytes as the slice
 * sent. One frame is one WQE of it. Charged to the slice's own budget (as before), a
 * 64 KiB message at MTU 1024 left all 64 of its frames to the bottom half.
 */
#define VCX_XPORT_SLICE_FRAMES      VCX_XPORT_RUN_WQES

/*
 * A turn whose messages spent the byte budget may still start one more WQE with this
 * much of a budget: a kernel ULP posts its data and its answer in one doorbell (NVMe over
 * RDMA's target: an RDMA WRITE of the read data, then the response SEND), and without
 * the allowance a 64 KiB WRITE spends the doorbell slice to the byte and leaves the
 * 16-byte SEND to the next run of the bottom half, a wake-up of the main loop thread per
 * I/O. A message larger than the allowance moves that much and goes on in the next run,
 * as any message does. The WQE budget still bounds a run: it overshoots its byte budget
 * by at most this much per WQE it starts.
 */
#define VCX_XPORT_TAIL_BYTES        (4 * KiB)

/* VcxBudget is in vcx-obj.h: the NIC's part of a run (hw-model/nic/) shares it. */

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
    bool vlan;                  /* the 802.1Q tag the frame carries (vcx_gid_vlan_tci) */
    uint16_t vlan_tci;          /* PCP (15:13), DEI, VID (11:0): a UD CQE's vlan_info */
    const uint8_t *av;          /* UD: the address vector in the requester's WQE copy */
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

/*
 * A WQE decoded (vcx_req_decode): the one at sq_ci while it executes, or, for the RC wire
 * requester, the one whose packets it sends. It lives as long as its QP's incarnation.
 */
typedef struct VcxReq {
    uint8_t wqe[VCX_SEND_WQE_MAX_WQEBBS * VCX_SEND_WQEBB];
    uint16_t index;             /* its SQ position (WQEBB counter) */
    uint32_t nbb;
    uint32_t end;               /* bytes of the WQE its DS count covers */
    uint8_t opcode;
    uint8_t fm_ce_se;
    uint8_t synd;               /* VCX_DEC_FAIL: the CQE syndrome ... */
    const char *why;            /* ... and why (also VCX_DEC_CATAS) */
    uint32_t byte_cnt;          /* for the requester CQE */
    VcxSgl sgl;
    VcxPkt pkt;
    VcxAck ack;
    VcxXfer x;
    bool wire;                  /* the message is on the wire (roce/vcx-roce-req.c) */
    bool looped;                /* moved whole to a QP of the port, its answer not counted */
    uint32_t loop_outer;        /* ... and its frames' bytes around the BTH and payload */
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
    VcxWireReq wreq;            /* UC / UD: the requester's message on the wire */
    VcxWireWin *win;            /* RC: the requester's window (allocated at first use) */
    VcxWireResp wresp;          /* the responder's side of the wire */
    uint32_t allow;             /* WQEs the SQ may still start since the last kick */
    bool fresh;                 /* the doorbell record was not read since the kick */
};

/* What vcx_req_decode() found at an SQ position. */
typedef enum VcxDecode {
    VCX_DEC_MSG,                /* a message to send (rq->pkt, rq->sgl) */
    VCX_DEC_LOCAL,              /* executed by the device: UMR, NOP */
    VCX_DEC_FAIL,               /* completes in error: rq->synd, rq->why */
    VCX_DEC_CATAS,              /* not readable: the QP's catastrophic error */
} VcxDecode;

typedef enum VcxStep {
    VCX_STEP_DONE,              /* WQE completed, the SQ goes on */
    VCX_STEP_STOP,              /* the SQ stops: RNR / ACK wait, error */
    VCX_STEP_MORE,              /* the run's budget ended inside the WQE */
    VCX_STEP_ANSWER,            /* the message has its answer in the VcxReq's ack */
} VcxStep;


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

extern const char *const vcx_ack_names[];

/* vcx-xport.c */
MemTxResult vcx_sgl_io(VcxState *s, VcxSglCursor *c, uint8_t *buf, uint32_t len,
                       bool write);
void vcx_sgl_single(VcxSgl *l, uint32_t key, uint32_t pdn, uint32_t qpn, uint32_t access,
                    uint64_t va, uint32_t len);
VcxRecv vcx_recv_own(VcxQp *qp);
VcxRecv vcx_recv_xrc(VcxState *s, VcxSrq *srq);
VcxRecv vcx_recv_of(VcxState *s, VcxQp *qp, uint32_t srqn, uint64_t gen);
uint8_t vcx_qp_transport(const VcxQp *qp);
bool vcx_qp_reliable(const VcxQp *qp);
void vcx_cqe_err(uint8_t *cqe, VcxQp *qp, uint8_t cqe_opcode, uint8_t synd,
                 uint16_t wqe_index, uint8_t wqe_opcode);
void vcx_post(VcxState *s, VcxQp *qp, VcxCq *cq, uint8_t *cqe, bool se);
void vcx_post_resp_err(VcxState *s, VcxQp *qp, const VcxRecv *rcv, uint8_t synd,
                       uint16_t index);
uint32_t vcx_sq_size(VcxQp *qp);

VcxDecode vcx_req_decode(VcxState *s, VcxQp *qp, VcxReq *rq, uint16_t index);
void vcx_req_post_cqe(VcxState *s, VcxQp *qp, uint16_t index, uint8_t wqe_opcode,
                      uint8_t fm_ce_se, uint32_t byte_cnt);
int64_t vcx_rnr_ns(uint8_t t);
void vcx_qp_timer_arm(VcxQp *qp, int64_t ns, bool lazy);
void vcx_req_fail(VcxState *s, VcxQp *qp, uint32_t nbb, uint8_t wqe_op, uint8_t synd,
                  const char *why);

/* vcx-resp.c */
bool vcx_qp_receiving(const VcxQp *qp);
/* n events of the QP, in the Q counter its counter_set_id names (both engines). */
void vcx_qp_qc_n(VcxState *s, VcxQp *qp, VcxQcRdma f, uint32_t n);
static inline void vcx_qp_qc(VcxState *s, VcxQp *qp, VcxQcRdma f)
{
    vcx_qp_qc_n(s, qp, f, 1);
}
int vcx_resp_take_wqe(VcxState *s, VcxQp *qp, const VcxRecv *rcv, uint16_t *index,
                      uint8_t *synd);
void vcx_resp_grh(const VcxPkt *pkt, uint8_t *grh, bool *ipv4);
void vcx_resp_error(VcxState *s, VcxQp *qp, const VcxRecv *rcv, uint8_t synd,
                    uint16_t index, bool consumed);
bool vcx_resp_rkey(VcxState *s, VcxQp *qp, uint32_t pdn, const VcxPkt *pkt, uint64_t len,
                   uint32_t access, bool allowed, VcxMkey **mk);
void vcx_resp_end(VcxState *s, VcxQp *qp, const VcxPkt *pkt, VcxXfer *x, VcxAck *ack);
void vcx_resp_fault(VcxState *s, VcxQp *qp, VcxXfer *x, bool src_fault, VcxAck *ack);
bool vcx_xport_transmit(VcxState *s, VcxQp *qp, VcxReq *rq);

/* roce/vcx-roce-dev.c: the wire path */
bool vcx_roce_route(VcxState *s, VcxQp *qp, const VcxPkt *pkt);
bool vcx_roce_route_gid(VcxState *s, VcxQp *qp, const uint8_t *dgid);
void vcx_roce_req_start(VcxState *s, VcxQp *qp, VcxReq *rq);
VcxStep vcx_roce_req_run(VcxState *s, VcxQp *qp, VcxReq *rq, VcxBudget *b);
/* roce/vcx-roce-req.c: the frames of a message looped whole, in the vport counters */
void vcx_roce_count_whole(VcxState *s, VcxQp *qp, VcxReq *rq, bool answer);
/* roce/vcx-roce-req.c: the RC window */
typedef enum VcxWinStep {
    VCX_WIN_IDLE,               /* nothing to do until an answer, a timer or a doorbell */
    VCX_WIN_MORE,               /* the run's budget ended with work left */
    VCX_WIN_STOP,               /* a WQE failed: the QP went to ERR */
} VcxWinStep;
bool vcx_roce_win_wants(VcxState *s, VcxQp *qp);
bool vcx_roce_win_busy(const VcxQp *qp);
VcxWinStep vcx_roce_win_run(VcxState *s, VcxQp *qp, VcxBudget *b);
void vcx_roce_win_free(VcxQp *qp);
void vcx_roce_qp_err(VcxState *s, VcxQp *qp);
/* roce/vcx-roce-mcg.c: a UD message to a multicast GID, copied to the port's members */
bool vcx_roce_mcg_loopback(VcxState *s, VcxQp *qp, VcxReq *rq, bool wire);

/* vcx-flush.c */
uint64_t vcx_sq_off(VcxQp *qp, uint16_t index);
void vcx_qp_catas(VcxState *s, VcxQp *qp, const char *why);
bool vcx_flush_qp(VcxState *s, VcxQp *qp, VcxBudget *b);
void vcx_err_watch_cb(void *opaque);
void vcx_err_watch_run(VcxState *s, VcxBudget *b);
void vcx_err_unwatch(VcxState *s, VcxQp *qp);

#endif
