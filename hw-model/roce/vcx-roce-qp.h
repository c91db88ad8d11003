/*
 * vcx: the RoCEv2 wire engine's per-QP state, part of the transport engine's VcxXportQp
 * (vcx-xport.h). Everything here is plain data: other QPs are named by number and
 * incarnation, never by pointer (the engine's overview, top of vcx-xport.c).
 *
 * The RC requester keeps a window of messages in flight (VcxWireWin); UC and UD send one
 * WQE's packets at a time and complete it once they are sent (VcxWireReq).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_VCX_ROCE_QP_H
#define HW_VCX_ROCE_QP_H

/* Wire addressing of one destination: Ethernet, IP and UDP fields of the frames. */
typedef struct VcxWireAddr {
    uint8_t dmac[6];
    uint8_t smac[6];
    bool vlan;                  /* the source GID entry's VLAN: frames carry a tag */
    uint16_t vlan_tci;          /* PCP (the path's eth_prio / the AV's SL), VID */
    bool ipv4;
    uint8_t sip[16];            /* GIDs; IPv4 in bytes 12..15 */
    uint8_t dip[16];
    uint8_t tclass;
    uint8_t hop_limit;
    uint32_t flow_label;
    uint16_t sport;
} VcxWireAddr;

/* A UC or UD message on the wire: its packets, sent under the executor's budget. */
typedef struct VcxWireReq {
    bool sending;               /* packets from 'next' still to send */
    uint32_t mtu;
    uint32_t first_psn;         /* PSN of the message's first packet */
    uint32_t npkts;
    uint32_t next;              /* index of the next packet to send */
    VcxWireAddr addr;
} VcxWireReq;

/*
 * The RC requester's window (IBTA 9.7.1: PSNs in order, several requests outstanding).
 * Limits: VCX_WIRE_WIN_MSGS WQEs outstanding, packets sent at most VCX_WIRE_WIN_PSNS
 * PSNs past the first unacknowledged one (as Soft-RoCE's 128 unacknowledged PSNs; here
 * 256, a 64 KiB message at MTU 256), and RDMA READs and atomics outstanding at most
 * 2^log_sra_max (max_rd_atomic). A WQE is named by its SQ position and decoded again
 * from the SQ when its packets are sent again: the SQ keeps a WQE until its CQE, as on a
 * ConnectX, so the window holds no copy of the guest's WQEs.
 */
#define VCX_WIRE_WIN_MSGS       64u
#define VCX_WIRE_WIN_PSNS       256u

typedef enum VcxWireKind {
    VCX_WMSG_DATA,              /* SEND or RDMA WRITE: done when ACKed */
    VCX_WMSG_READ,              /* done when its last response is placed */
    VCX_WMSG_ATOMIC,            /* done at its ATOMIC_ACKNOWLEDGE */
    VCX_WMSG_LOCAL,             /* UMR or NOP, executed when it started: no PSN */
} VcxWireKind;

/* One WQE in the window, in SQ order. */
typedef struct VcxWireMsg {
    uint16_t index;             /* SQ position: its CQE's wqe_counter */
    uint8_t nbb;                /* WQEBBs it takes */
    uint8_t opcode;             /* WQE opcode, for its CQE */
    uint8_t fm_ce_se;
    uint8_t kind;               /* VcxWireKind */
    uint8_t synd;               /* LOCAL: its error CQE syndrome, 0 if it succeeded */
    const char *why;            /* LOCAL: why it failed (a string constant) */
    uint32_t byte_cnt;
    uint32_t first_psn;
    uint32_t npkts;             /* PSNs it spans (READ: its responses; LOCAL: 0) */
} VcxWireMsg;

typedef struct VcxWireWin {
    VcxWireMsg msg[VCX_WIRE_WIN_MSGS];
    uint32_t head;              /* ring slot of the oldest WQE (the one at sq_ci) */
    uint32_t n;                 /* WQEs in the window */
    uint16_t sq_next;           /* SQ position of the next WQE to start */
    uint32_t acked;             /* PSNs of the oldest acknowledged (READ: responses placed) */
    uint32_t tx;                /* the WQE being sent, counted from head ... */
    uint32_t tx_pkt;            /* ... and its next packet (READ: the response asked from) */
    uint32_t psn_hi;            /* the PSN after the highest sent: answers are below it */
    uint32_t rd_out;            /* READs and atomics in the window */
    bool rnr;                   /* waiting for the RNR timer; nothing is sent meanwhile */
    uint32_t rnr_psn;           /* ... the PSN the RNR NAK named */
    bool timer;                 /* the QP's timer runs for the window (ACK or RNR) */
    bool reissued;              /* a READ at head asked again, until its data resumes */
    uint32_t req_from;          /* READ at head: the response the last request asked from */
    bool tq_valid;              /* tq holds the WQE at msg[head + tx] */
    bool hq_valid;              /* the QP's VcxReq holds the WQE at msg[head] */
    VcxWireAddr addr;
    struct VcxReq *tq;          /* the WQE whose packets are sent (vcx-xport.h) */
} VcxWireWin;

/* One READ or atomic request the responder accepted: its replay entry (IBTA 9.7.5.1.6). */
typedef struct VcxWireRdEntry {
    bool valid;
    bool atomic;
    bool answered;              /* its responses were all sent (the chain skips it) */
    bool sent;                  /* ... at least once: no longer counts against rra_max */
    uint32_t psn;               /* first PSN of the request */
    uint32_t npkts;             /* PSNs its responses take */
    uint64_t va;
    uint32_t rkey;
    uint32_t len;
    uint32_t pdn;
    uint64_t orig;              /* atomic: the original value it returned */
    /* READ: where its (next) answer starts: the request, or a duplicate of it */
    uint32_t rp_psn;
    uint64_t rp_va;
    uint32_t rp_rkey;
    uint32_t rp_len;
    uint32_t rp_npkts;
} VcxWireRdEntry;

/*
 * Replay entries kept: the last 16 READs and atomics, at least the 2^log_rra_max
 * (max_dest_rd_atomic, at most 16: VCX_LOG_MAX_RA) IBTA 9.7.5.1.6 asks for.
 */
#define VCX_WIRE_RD_MAX         16u

/* The responder's side of the wire. */
typedef struct VcxWireResp {
    bool in_msg;                /* a SEND or WRITE between FIRST and LAST */
    bool write;                 /* ... a WRITE (else a SEND into the held receive WQE) */
    bool nak_sent;              /* one PSN sequence NAK per gap */
    bool ack_due;               /* an AckReq packet waits for its (coalesced) ACK */
    bool ack_queued;            /* on the device's list of ACKs to send */
    uint32_t ack_psn;
    bool nak_due;               /* an RNR or sequence NAK held behind READ responses */
    uint8_t nak_synd;
    uint32_t nak_psn;
    uint64_t off;               /* payload bytes of the message placed so far */
    uint64_t wr_va;             /* WRITE: the RETH */
    uint32_t wr_rkey;
    uint32_t wr_len;
    uint32_t pdn;
    uint16_t index;             /* SEND: the receive WQE held */
    uint8_t first_op;           /* opcode of the message's FIRST/ONLY packet */
    /* READ and atomic replay cache, and the response being sent */
    VcxWireRdEntry rd[VCX_WIRE_RD_MAX];
    uint32_t rd_head;
    bool rd_active;             /* a READ response in progress ... */
    bool rd_queued;             /* ... and the QP on the device's response list */
    uint32_t rd_slot;           /* the replay entry it answers */
    uint32_t j_psn;             /* the request answered: its PSN, address, length */
    uint64_t j_va;
    uint32_t j_rkey;
    uint32_t j_len;
    uint32_t j_pdn;
    uint32_t j_npkts;
    uint32_t j_next;            /* index of the next response packet */
} VcxWireResp;

#endif
