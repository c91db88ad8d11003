/*
 * vcx: the RoCEv2 wire engine's per-QP state, part of the transport engine's VcxXportQp
 * (vcx-xport.h). Everything here is plain data: other QPs are named by number and
 * incarnation, never by pointer (the engine's overview, top of vcx-xport.c).
 *
 * The requester keeps one message in flight per QP (the SQ waits for its ACK before the
 * next WQE starts). The state is keyed by PSN (first PSN, packets sent, packets
 * acknowledged), so a window of several outstanding messages can replace the single
 * VcxWireReq by a ring of them without changing the packet or ACK handling.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_VCX_ROCE_QP_H
#define HW_VCX_ROCE_QP_H

/* Wire addressing of one destination: Ethernet, IP and UDP fields of the frames. */
typedef struct VcxWireAddr {
    uint8_t dmac[6];
    uint8_t smac[6];
    bool ipv4;
    uint8_t sip[16];            /* GIDs; IPv4 in bytes 12..15 */
    uint8_t dip[16];
    uint8_t tclass;
    uint8_t hop_limit;
    uint32_t flow_label;
    uint16_t sport;
} VcxWireAddr;

typedef enum VcxWireReqState {
    VCX_WREQ_IDLE,              /* no wire message */
    VCX_WREQ_SEND,              /* packets from 'next' still to send */
    VCX_WREQ_WAIT,              /* all sent: waiting for the ACK (or the ACK timeout) */
    VCX_WREQ_RNR,               /* RNR NAK: waiting for the RNR timer */
    VCX_WREQ_DONE,              /* the answer is in the VcxReq's ack */
} VcxWireReqState;

/* The requester's message on the wire. */
typedef struct VcxWireReq {
    uint8_t state;              /* VcxWireReqState */
    bool reliable;              /* RC: ACKs expected */
    bool read;                  /* RDMA READ: responses carry the data */
    bool atomic;
    bool reissued;              /* READ: re-requested from 'acked', until data resumes */
    uint32_t mtu;
    uint32_t first_psn;         /* PSN of the message's first packet */
    uint32_t npkts;             /* PSNs the message spans (READ: its responses) */
    uint32_t next;              /* index of the next packet to send */
    uint32_t acked;             /* packets acknowledged (READ: responses placed) */
    uint32_t req_from;          /* READ: the response index the last request asked from */
    VcxWireAddr addr;
} VcxWireReq;

/* One READ or atomic request the responder accepted: its replay entry (IBTA 9.7.5.1.6). */
typedef struct VcxWireRdEntry {
    bool valid;
    bool atomic;
    bool answered;              /* READ: its responses were sent once (the chain skips it) */
    uint32_t psn;               /* first PSN of the request */
    uint32_t npkts;             /* PSNs its responses take */
    uint64_t va;
    uint32_t rkey;
    uint32_t len;
    uint32_t pdn;
    uint64_t orig;              /* atomic: the original value it returned */
} VcxWireRdEntry;

#define VCX_WIRE_RD_MAX         16u     /* replay entries (2^log_rra_max, capped) */

/* The responder's side of the wire. */
typedef struct VcxWireResp {
    bool in_msg;                /* a SEND or WRITE between FIRST and LAST */
    bool write;                 /* ... a WRITE (else a SEND into the held receive WQE) */
    bool nak_sent;              /* one PSN sequence NAK per gap */
    bool ack_due;               /* an AckReq packet waits for its (coalesced) ACK */
    bool ack_queued;            /* on the device's list of ACKs to send */
    uint32_t ack_psn;
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
