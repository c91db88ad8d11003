/*
 * vcx: the RoCEv2 wire engine (IBTA vol 1 ch 9, Annex A17), the transport engine's
 * path to QPs on other hosts. Files:
 *   vcx-roce-frame.c  header layouts, frame build, ICRC, receive parse and checks;
 *   vcx-roce-req.c    requester: a message cut into packets, ACK/NAK, retransmission,
 *                     READ responses and atomic ACKs arriving;
 *   vcx-roce-resp.c   responder: request packets arriving, PSN checks, ACK/NAK, READ
 *                     responses, the atomic replay cache;
 *   vcx-roce-dev.c    device part: routing, transmit, receive dispatch, coalesced ACKs,
 *                     the executor's RoCE work, counters and the wire-fault property.
 * A QP's traffic goes here when the port has a netdev and the destination GID is not
 * one of the port's own, or always with the loopback-frames property (vcx_roce_route);
 * otherwise the loopback engine moves the message whole.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_VCX_ROCE_H
#define HW_VCX_ROCE_H

#include "../vcx-xport.h"

/* Header sizes (IBTA 5.2 / 9.2 .. 9.4, RFC 791, RFC 8200, RFC 768). */
#define VCX_ETH_HLEN            14u
#define VCX_VLAN_HLEN           4u      /* IEEE 802.1Q tag: TPID 0x8100, PCP, DEI, VID */
#define VCX_IP4_HLEN            20u
#define VCX_IP6_HLEN            40u
#define VCX_UDP_HLEN            8u
#define VCX_BTH_LEN             12u
#define VCX_RETH_LEN            16u
#define VCX_AETH_LEN            4u
#define VCX_DETH_LEN            8u
#define VCX_IMM_LEN             4u
#define VCX_IETH_LEN            4u
#define VCX_XRCETH_LEN          4u      /* XRC requests: 8 reserved bits, XRC SRQ number */
#define VCX_ATOMICETH_LEN       28u
#define VCX_ATOMICACK_LEN       8u
#define VCX_ICRC_LEN            4u
#define VCX_ROCE_HDR_MAX        (VCX_ETH_HLEN + VCX_VLAN_HLEN + VCX_IP6_HLEN + \
                                 VCX_UDP_HLEN + VCX_BTH_LEN + VCX_XRCETH_LEN + \
                                 VCX_ATOMICETH_LEN)
#define VCX_ROCE_FRAME_MAX      (VCX_ROCE_HDR_MAX + 4096 + 3 + VCX_ICRC_LEN)
#define VCX_ROCE_PORT           4791

/* BTH opcode operations (bits 4:0), IBTA table 38 */
enum {
    IB_OP_SEND_FIRST = 0x00, IB_OP_SEND_MIDDLE = 0x01, IB_OP_SEND_LAST = 0x02,
    IB_OP_SEND_LAST_IMM = 0x03,
    IB_OP_WRITE_FIRST = 0x06, IB_OP_WRITE_MIDDLE = 0x07, IB_OP_WRITE_LAST = 0x08,
    IB_OP_WRITE_LAST_IMM = 0x09,
    IB_OP_READ_RESP_FIRST = 0x0d, IB_OP_READ_RESP_MIDDLE = 0x0e,
    IB_OP_READ_RESP_LAST = 0x0f, IB_OP_READ_RESP_ONLY = 0x10,
    IB_OP_ACKNOWLEDGE = 0x11, IB_OP_ATOMIC_ACK = 0x12,
    IB_OP_SEND_LAST_INV = 0x16,
};

/* What an opcode carries (the table in vcx-roce-frame.c). */
enum {
    VCX_OPF_RETH = 1 << 0,
    VCX_OPF_AETH = 1 << 1,
    VCX_OPF_DETH = 1 << 2,
    VCX_OPF_IMM = 1 << 3,
    VCX_OPF_IETH = 1 << 4,
    VCX_OPF_ATOMIC = 1 << 5,
    VCX_OPF_ATOMICACK = 1 << 6,
    VCX_OPF_PAYLOAD = 1 << 7,
    VCX_OPF_FIRST = 1 << 8,     /* starts a message */
    VCX_OPF_LAST = 1 << 9,      /* ends a message */
    VCX_OPF_SEND = 1 << 10,
    VCX_OPF_WRITE = 1 << 11,
    VCX_OPF_READ_REQ = 1 << 12,
    VCX_OPF_READ_RESP = 1 << 13,
    VCX_OPF_ACK = 1 << 14,      /* ACKNOWLEDGE / ATOMIC_ACKNOWLEDGE */
    VCX_OPF_ATOMIC_REQ = 1 << 15,
    VCX_OPF_RC = 1 << 16,       /* valid on RC */
    VCX_OPF_UC = 1 << 17,       /* valid on UC */
    VCX_OPF_UD = 1 << 18,       /* valid on UD */
    VCX_OPF_XRCETH = 1 << 19,   /* XRC request: XRCETH after the BTH (IBTA annex A14) */
};

/* AETH syndrome (IBTA 9.7.5.1.1, table 43). */
#define VCX_AETH_ACK            0x1f    /* ACK, credit count "invalid": no credits */
#define VCX_AETH_RNR            0x20    /* RNR NAK: | timer */
#define VCX_AETH_NAK_SEQ        0x60
#define VCX_AETH_NAK_INV_REQ    0x61
#define VCX_AETH_NAK_REM_ACCESS 0x62
#define VCX_AETH_NAK_REM_OP     0x63

/* One packet, decoded (receive) or to build (send). */
typedef struct VcxRocePkt {
    uint8_t opcode;
    bool se, ackreq;
    uint8_t pad;
    uint16_t pkey;
    uint32_t dqpn;
    uint32_t psn;
    uint32_t flags;             /* VCX_OPF_* of the opcode */
    /* extension headers */
    uint64_t va;                /* RETH / AtomicETH */
    uint32_t rkey, dma_len;
    uint8_t aeth_synd;
    uint32_t msn;
    uint32_t qkey, sqpn;        /* DETH */
    uint32_t xrc_srqn;          /* XRCETH */
    uint32_t imm;               /* ImmDt / IETH */
    uint64_t swap_add, compare; /* AtomicETH */
    uint64_t orig;              /* AtomicAckETH */
    /* payload */
    const uint8_t *payload;
    uint32_t len;
    /* 802.1Q tag and IP of a received packet */
    bool vlan;
    uint16_t vlan_tci;          /* PCP (15:13), DEI, VID (11:0) */
    bool ipv4;
    uint8_t sgid[16], dgid[16];
    uint8_t tclass, hop_limit;
    uint32_t flow_label;
} VcxRocePkt;

/* Device-wide counters (the state property). */
typedef struct VcxRoceStats {
    uint64_t tx_pkts, tx_bytes, rx_pkts, rx_bytes;
    uint64_t icrc_err, malformed, bad_tver, bad_pkey, bad_qp, bad_opcode, qkey_err;
    uint64_t out_of_sequence, duplicate_request, packet_seq_err, implied_nak_seq_err;
    uint64_t local_ack_timeout_err, rnr_nak_retry_err, rnr_nak_sent, rnr_nak_rcvd;
    uint64_t nak_sent, acks_sent, retransmits, out_of_buffer, uc_msg_dropped;
    uint64_t req_transport_retries_exceeded, req_rnr_retries_exceeded;
    uint64_t fault_drop, fault_dup, fault_reorder, fault_corrupt;
} VcxRoceStats;

/* The wire-fault property (vcx-roce-dev.c). */
typedef struct VcxRoceFault {
    double drop, dup, reorder, corrupt;
    uint64_t seed;
    uint64_t rng;
    bool tx, rx;
} VcxRoceFault;

#define VCX_ROCE_LIST_MAX       64u

typedef struct VcxRoceQpRef {
    uint32_t qpn;
    uint64_t gen;
} VcxRoceQpRef;

/* A UD multicast group of the port (vcx-roce-mcg.c): in use while nqps > 0. */
typedef struct VcxMcg {
    uint8_t gid[16];
    uint32_t nqps;
    uint32_t qpn[VCX_MAX_QP_MCG];
} VcxMcg;

typedef struct VcxRoceDev {
    VcxRoceStats st;
    VcxMcg mcg[1u << VCX_LOG_MAX_MCG];
    /* QPs with a coalesced ACK to send, QPs with READ responses to send */
    VcxRoceQpRef acks[VCX_ROCE_LIST_MAX];
    uint32_t nacks;
    VcxRoceQpRef reads[VCX_ROCE_LIST_MAX];
    uint32_t nreads;
    /* a frame held back by the reorder fault, per direction */
    uint8_t *held_tx, *held_rx;
    uint32_t held_tx_len, held_rx_len;
} VcxRoceDev;

static inline VcxRoceDev *vcx_roce(VcxState *s)
{
    return s->objs->roce;
}

/* vcx-roce-frame.c */
/* The BTH transport of a reliable QP's packets: XRC for XRC QPs, RC otherwise. */
static inline uint8_t vcx_roce_rc_transport(const VcxQp *qp)
{
    return qp->st == VCX_QP_ST_XRC ? IB_TRANSPORT_XRC : IB_TRANSPORT_RC;
}

/* Packet i of the n READ responses of a READ of transport t (its BTH transport bits). */
static inline uint8_t vcx_roce_read_resp_op(uint8_t t, uint32_t i, uint32_t n)
{
    return (t & ~IB_OP_MASK) | (n == 1 ? IB_OP_READ_RESP_ONLY :
                                i == 0 ? IB_OP_READ_RESP_FIRST :
                                i + 1 == n ? IB_OP_READ_RESP_LAST : IB_OP_READ_RESP_MIDDLE);
}

uint32_t vcx_roce_op_flags(uint8_t opcode);
uint32_t vcx_roce_hdr_len(uint32_t flags);
uint32_t vcx_roce_frame_outer(bool vlan, bool ipv4);
uint32_t vcx_roce_frame_outer_gid(VcxState *s, uint32_t index);
uint32_t vcx_roce_frame_len(uint32_t outer, uint8_t opcode, uint32_t len);
uint32_t vcx_roce_build(uint8_t *f, const VcxWireAddr *a, const VcxRocePkt *p, bool icrc);
void vcx_roce_icrc_seal(uint8_t *f, uint32_t len);
/* icrc false: a frame that never left the device, built without its ICRC */
bool vcx_roce_parse(VcxState *s, const uint8_t *f, uint32_t len, bool icrc, VcxRocePkt *p);
void vcx_roce_addr_path(VcxState *s, VcxQp *qp, VcxWireAddr *a);
bool vcx_roce_addr_av(VcxState *s, VcxQp *qp, const uint8_t *av, const uint8_t *sgid,
                      VcxWireAddr *a);
uint16_t vcx_roce_sport(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn);

/* vcx-roce-dev.c */
void vcx_roce_send(VcxState *s, const VcxWireAddr *a, const VcxRocePkt *p);
void vcx_roce_queue_ack(VcxState *s, VcxQp *qp);
void vcx_roce_queue_read(VcxState *s, VcxQp *qp);
void vcx_roce_send_aeth(VcxState *s, VcxQp *qp, uint8_t synd, uint32_t psn);

/* vcx-roce-req.c */
void vcx_roce_req_rx(VcxState *s, VcxQp *qp, const VcxRocePkt *p);
void vcx_roce_req_err(VcxQp *qp);
/* (vcx_roce_req_start and vcx_roce_req_run are declared in vcx-xport.h) */

/* vcx-roce-resp.c */
void vcx_roce_resp_rx(VcxState *s, VcxQp *qp, const VcxRocePkt *p);
bool vcx_roce_read_run(VcxState *s, VcxQp *qp, VcxBudget *b);

/* vcx-roce-mcg.c */
bool vcx_roce_mcg_rx(VcxState *s, const VcxRocePkt *p);
void vcx_roce_mcg_reset(VcxState *s);

#endif
