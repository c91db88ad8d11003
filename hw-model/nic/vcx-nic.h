/*
 * vcx: the Ethernet NIC objects and data path (PRM "Ethernet Offloads", "Transport
 * Objects", "Flow Table"), shared by the files of hw-model/nic/:
 *   vcx-nic.c           state, lifecycle, command table, the executor hook
 *   vcx-nic-td-tis.c    transport domains and TISes
 *   vcx-nic-sq.c        send queues (commands)
 *   vcx-nic-rq.c        receive queues (commands)
 *   vcx-nic-tir-rqt.c   TIRs and RQTs
 *   vcx-nic-ft.c        NIC RX flow tables, groups and entries (commands)
 *   vcx-nic-steer.c     a received frame's lookup through them
 *   vcx-nic-hdr.c       a frame's outer headers parsed, checksum offload
 *   vcx-nic-tx.c        SQ execution: Ethernet send WQEs to frames, checksum offload
 *   vcx-nic-rx.c        frames in: the receive queue, eswitch filter, steering, RSS, RQs
 *   vcx-nic-counters.c  Q counters and the vport counters
 *   vcx-nic-vport.c     the vport's address lists and promiscuous modes
 *
 * Lifetimes follow the RDMA objects (vcx-obj.h): every object that names another holds
 * a reference, so a destroy while in use is BAD_RES_STATE. The executor (vcx-xport.c's
 * guarded bottom half) runs NIC work between commands, never inside one; what it keeps
 * across runs is an SQ on the run queue (removed at destroy) and frames in the receive
 * queue (bytes plus the sending transport domain by number), never a pointer to another
 * object. Frames are looked up afresh (flow tables, TIR, RQT, RQ by number) when
 * processed.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_VCX_NIC_H
#define HW_VCX_NIC_H

#include "qemu/queue.h"
#include "qemu/units.h"
#include "hw/vcx/vcx-obj.h"

/* Limits (capabilities report the same values). */
#define VCX_NIC_LOG_MAX_TD      8
#define VCX_NIC_LOG_MAX_TIS     8
#define VCX_NIC_LOG_MAX_TIR     8
#define VCX_NIC_LOG_MAX_RQT     8
#define VCX_NIC_LOG_MAX_RQT_SIZE 8
#define VCX_NIC_LOG_MAX_WQ      12      /* log_max_sq / log_max_rq */
#define VCX_NIC_LOG_MAX_WQ_SZ   15
#define VCX_NIC_LOG_MAX_FT      8       /* log_max_ft_num */
#define VCX_NIC_LOG_MAX_FT_SIZE 16      /* mlx5e's L2 table has 2^15 + 2 entries */
#define VCX_NIC_MAX_FTES        (1u << 16)      /* entries alive in all tables together */
/*
 * NIC RX max_ft_level: ConnectX reports 64. mlx5_core's steering tree places its anchor
 * and offload namespaces at levels 58 and up (fs_core.c: the ethtool, bypass and kernel
 * priorities come first), and skips a priority whose minimum level is above the cap, so
 * a device with fewer levels fails the stock driver's flow steering init. A frame still
 * visits at most max_ft_level + 1 tables (levels only increase along its path).
 */
#define VCX_NIC_MAX_FT_LEVEL    64
#define VCX_NIC_MAX_FG          64      /* groups in one table */
#define VCX_NIC_MAX_QCOUNTERS   8       /* max_qp_cnt */
#define VCX_NIC_LOG_UC_LIST     6
#define VCX_NIC_LOG_MC_LIST     6
#define VCX_NIC_LOG_VLAN_LIST   6
#define VCX_NIC_RSS_LOG_TBL     8       /* rss_ind_tbl_cap */
/* Receive queue of frames from the netdev and the loopback path. */
#define VCX_NIC_RXQ_FRAMES      256
#define VCX_NIC_RXQ_BYTES       (4 * MiB)
/*
 * RoCEv2 frames the port sends to itself (loopback-frames) may fill the queue further:
 * one executor run sends at most VCX_XPORT_RUN_BYTES of payload, so four times the
 * queue leaves room for several runs before a looped frame is dropped (and retransmitted
 * as on a congested wire).
 */
#define VCX_NIC_RXQ_LB_FRAMES   (4 * VCX_NIC_RXQ_FRAMES)
#define VCX_NIC_RXQ_LB_BYTES    (4 * VCX_NIC_RXQ_BYTES)
#define VCX_NIC_MAX_FRAME       (VCX_MAX_MTU + 18)      /* 14 + 4 (VLAN) */
#define VCX_NIC_MIN_FRAME       60
/* LSO: a message of at most 2^16 bytes, headers included (max_lso_cap), the most an IPv4
 * total length can describe and Linux's GSO size without BIG TCP */
#define VCX_NIC_LOG_MAX_LSO     16
#define VCX_TCP_FIN             0x01    /* TCP header flags (RFC 9293, 3.1) */
#define VCX_TCP_PSH             0x08
#define VCX_TCP_CWR             0x80
#define VCX_ROCE_UDP_PORT       4791
#define VCX_ETHERTYPE_IPV4      0x0800
#define VCX_ETHERTYPE_VLAN      0x8100  /* IEEE 802.1Q C-tag */
#define VCX_ETHERTYPE_SVLAN     0x88a8  /* IEEE 802.1ad S-tag */
#define VCX_NIC_VLAN_HLEN       4u      /* a tag: TPID, PCP, CFI/DEI, VID */
#define VCX_ETHERTYPE_IPV6      0x86dd
#define VCX_IPPROTO_TCP         6
#define VCX_IPPROTO_UDP         17
#define VCX_IPPROTO_ESP         50
#define VCX_IPPROTO_AH          51

typedef struct VcxTd {
    uint32_t tdn;
    uint32_t refs;              /* TISes and TIRs */
} VcxTd;

typedef struct VcxTis {
    uint32_t tisn;
    uint8_t prio;
    uint32_t tdn;
    uint32_t refs;              /* SQs */
    VcxTd *td;
} VcxTis;

typedef struct VcxQCounter {
    uint32_t id;
    uint32_t refs;              /* RQs */
    uint32_t out_of_buffer;     /* RQs' (and RDMA receives', VCX_QC_OUT_OF_BUFFER) */
    uint32_t rdma[VCX_QC_RDMA_N];       /* the QPs' (vcx_qc_count) */
} VcxQCounter;

/* An SQ or an RQ: both live in the WQ number space 0x1000..0x1fff. */
typedef struct VcxNicWq {
    uint32_t num;
    bool is_sq;
    uint8_t state;              /* VCX_SQC_STATE_* = VCX_RQC_STATE_* */
    bool flush_in_error;
    uint8_t ctx[VCX_SQC_WQ_AT + VCX_WQ_PAS_AT];    /* sqc/rqc + wq as created, for QUERY */
    uint32_t cqn, pdn;
    uint64_t dbr_addr;
    uint8_t log_wq_sz;
    uint8_t log_stride;
    uint16_t ci;                /* SQ: next WQEBB; RQ: WQEs consumed */
    uint64_t gen;
    VcxCq *cq;
    VcxPd *pd;
    VcxQBuf buf;
    /* SQ */
    uint32_t tisn;
    VcxTis *tis;
    uint16_t pi;                /* last producer counter read */
    uint32_t allow;             /* WQEBBs the SQ may still run since its last doorbell */
    bool kicked;
    bool flushing;              /* in ERR with WQEs to flush */
    QTAILQ_ENTRY(VcxNicWq) run_link;
    /* RQ */
    bool vsd;
    uint32_t counter_set_id;
    VcxQCounter *qc;
    uint32_t refs;              /* RQTs and direct TIRs */
} VcxNicWq;

typedef struct VcxRqt {
    uint32_t rqtn;
    uint32_t max_size;
    uint32_t size;
    uint32_t *rqn;              /* size entries, each holding a reference on its RQ */
    uint32_t refs;              /* TIRs */
} VcxRqt;

typedef struct VcxTir {
    uint32_t tirn;
    uint8_t ctx[VCX_TIRC_SIZE]; /* as created / modified, for QUERY */
    uint8_t disp_type;
    uint32_t inline_rqn;
    uint32_t rqtn;
    uint8_t hash_fn;
    bool symmetric;             /* rx_hash_symmetric */
    uint8_t self_lb_block;
    uint32_t tdn;
    uint8_t key[VCX_TIRC_TOEPLITZ_KEY_LEN];
    uint8_t l3_type, l4_type;
    uint32_t fields;            /* VCX_HASH_FIELD_SEL_* of the outer selector */
    uint32_t refs;              /* FTEs */
} VcxTir;

typedef struct VcxFte {
    uint32_t index;
    uint32_t group_id;
    uint32_t flow_tag;
    uint16_t action;
    uint8_t dest_type;
    uint32_t dest_id;
    uint8_t value[VCX_MATCH_SET_SIZE];     /* outer headers, masked by the group */
    uint8_t ctx[VCX_FTE_CTX_SIZE];         /* flow_context as set, for QUERY */
    struct VcxFte *next_same;   /* the next higher index with the same value in the group */
} VcxFte;

typedef struct VcxFg {
    uint32_t id;
    uint32_t start, end;
    uint8_t criteria_enable;
    uint8_t mask[VCX_MATCH_SET_SIZE];
    uint32_t nftes;
    GHashTable *by_value;       /* masked value -> FTE with the lowest index, whose
                                 * next_same chain holds the others in index order */
} VcxFg;

typedef struct VcxFt {
    uint32_t id;
    uint8_t level;
    uint8_t log_size;
    uint8_t miss_action;
    uint32_t miss_id;
    uint32_t refs;              /* FTEs forwarding here, tables missing here, the root */
    VcxFg *groups[VCX_NIC_MAX_FG];      /* by start index */
    uint32_t ngroups;
    uint32_t next_group_id;
    GHashTable *ftes;           /* flow index -> VcxFte: only the entries set */
    uint32_t nftes;
} VcxFt;

/* A frame waiting for the executor (from the netdev or looped back). */
typedef struct VcxFrame {
    QSIMPLEQ_ENTRY(VcxFrame) link;
    uint32_t tdn;               /* sending transport domain (loopback), 0 from the wire */
    bool roce_lb;               /* a RoCEv2 frame of the port to itself (loopback-frames) */
    bool roce_sealed;           /* with its ICRC: from the wire, or built with it */
    uint32_t len;
    uint8_t data[];
} VcxFrame;

/* Vport counters (QUERY_VPORT_COUNTER traffic_counter pairs) and the state property's. */
typedef struct VcxNicStats {
    uint64_t rx_uc_pkts, rx_uc_bytes, rx_mc_pkts, rx_mc_bytes, rx_bc_pkts, rx_bc_bytes;
    uint64_t tx_uc_pkts, tx_uc_bytes, tx_mc_pkts, tx_mc_bytes, tx_bc_pkts, tx_bc_bytes;
    uint64_t rx_err_pkts, rx_err_bytes, tx_err_pkts, tx_err_bytes;
    uint64_t lb_pkts, lb_bytes;
    /* RoCE frames of the RDMA engine (the vport counters' "ib" set), to or from the wire
     * or looped; a message the loopback engine moves whole is no frame and counts nothing */
    uint64_t rx_ib_uc_pkts, rx_ib_uc_bytes, rx_ib_mc_pkts, rx_ib_mc_bytes;
    uint64_t tx_ib_uc_pkts, tx_ib_uc_bytes, tx_ib_mc_pkts, tx_ib_mc_bytes;
    /* since creation, never cleared */
    uint64_t nic_tx, nic_rx, nic_rx_drop, roce_rx_drop;
} VcxNicStats;

struct VcxNic {
    VcxObjTable tds, tises, tirs, rqts, fts, qcs, wqs;
    uint32_t nsq, nrq, nfg, nfte;
    uint32_t root;              /* NIC RX root table id, 0: none */
    QTAILQ_HEAD(, VcxNicWq) runq;       /* SQs with work for the executor */
    QSIMPLEQ_HEAD(, VcxFrame) rxq;
    uint32_t rxq_frames;
    uint64_t rxq_bytes;
    bool rx_blocked;            /* receive returned 0: flush the backend when drained */
    uint64_t wq_gen;
    /* vport context lists and promiscuous modes */
    uint8_t uc[1 << VCX_NIC_LOG_UC_LIST][6];
    uint32_t nuc;
    uint8_t mc[1 << VCX_NIC_LOG_MC_LIST][6];
    uint32_t nmc;
    uint16_t vlans[1 << VCX_NIC_LOG_VLAN_LIST];   /* recorded and reported only */
    uint32_t nvlans;
    bool promisc_uc, promisc_mc, promisc_all;
    VcxNicStats st;
    uint8_t frame[VCX_NIC_MAX_FRAME];   /* the frame a send WQE builds */
    uint8_t rx_frame[VCX_NIC_MAX_FRAME]; /* a received frame with its VLAN tag stripped */
};

static inline VcxNic *vcx_nic(VcxState *s)
{
    return s->objs->nic;
}

/* vcx-nic.c */
VcxTd *vcx_td_get(VcxState *s, uint32_t tdn);
VcxTis *vcx_tis_get(VcxState *s, uint32_t tisn);
VcxTir *vcx_tir_get(VcxState *s, uint32_t tirn);
VcxRqt *vcx_rqt_get(VcxState *s, uint32_t rqtn);
VcxFt *vcx_ft_get(VcxState *s, uint32_t id);
VcxQCounter *vcx_qc_get(VcxState *s, uint32_t id);
VcxNicWq *vcx_sq_get(VcxState *s, uint32_t sqn);
VcxNicWq *vcx_rq_get(VcxState *s, uint32_t rqn);
/* The vport's own checks shared by the NIC commands (no eswitch: vport 0 only). */
uint8_t vcx_nic_vport_check(VcxCmd *cmd, struct vcx_fld other, struct vcx_fld number,
                            uint16_t synd);

/* vcx-nic-td-tis.c */
uint8_t vcx_cmd_alloc_td(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_dealloc_td(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_create_tis(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_modify_tis(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_tis(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_tis(VcxState *s, VcxCmd *cmd);
void vcx_td_free(VcxState *s, VcxTd *td);
void vcx_tis_free(VcxState *s, VcxTis *tis);

/* vcx-nic-sq.c / vcx-nic-rq.c */
uint8_t vcx_cmd_create_sq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_modify_sq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_sq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_sq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_create_rq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_modify_rq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_rq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_rq(VcxState *s, VcxCmd *cmd);
void vcx_nic_wq_free(VcxState *s, VcxNicWq *wq);
uint8_t vcx_nic_wq_query(VcxCmd *cmd, VcxNicWq *wq);
uint8_t vcx_nic_wq_insert(VcxState *s, VcxCmd *cmd, VcxNicWq *wq, uint16_t synd);
uint8_t vcx_nic_wq_transition(VcxCmd *cmd, VcxNicWq *wq, uint32_t cur, uint32_t next,
                              uint16_t synd_cur, uint16_t synd_next);
/* wq checks common to SQ and RQ creation; fills the WQ's buffer and doorbell */
uint8_t vcx_nic_wq_parse(VcxState *s, VcxCmd *cmd, VcxNicWq *wq, const uint8_t *wqc,
                         uint32_t pas_at, uint16_t synd_base);

/* vcx-nic-tir-rqt.c */
uint8_t vcx_cmd_create_tir(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_modify_tir(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_tir(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_tir(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_create_rqt(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_modify_rqt(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_rqt(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_rqt(VcxState *s, VcxCmd *cmd);
void vcx_tir_free(VcxState *s, VcxTir *tir);
void vcx_rqt_free(VcxState *s, VcxRqt *rqt);

/* vcx-nic-ft.c */
uint8_t vcx_cmd_set_ft_root(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_create_ft(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_ft(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_ft(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_create_fg(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_fg(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_fg(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_set_fte(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_fte(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_delete_fte(VcxState *s, VcxCmd *cmd);
void vcx_ft_free(VcxState *s, VcxFt *ft);
static inline void vcx_ft_mask(uint8_t *out, const uint8_t *v, const uint8_t *mask)
{
    for (uint32_t i = 0; i < VCX_MATCH_SET_SIZE; i++) {
        out[i] = v[i] & mask[i];
    }
}

/* vcx-nic-steer.c */
/* The outer-header match set of a frame (fte_match_set_lyr_2_4 layout). */
void vcx_ft_match_set(const uint8_t *frame, uint32_t len, uint8_t *set);
/* Steering from the root: the TIR (0 dropped) and the FTE's flow tag. */
uint32_t vcx_ft_steer(VcxState *s, const uint8_t *set, uint32_t *flow_tag);

/* vcx-nic-hdr.c */
/*
 * A frame's outer headers (vcx-nic-hdr.c says what is parsed). Offsets are from the
 * frame's start; a field the frame does not have is 0.
 */
typedef struct VcxNicHdrs {
    uint16_t ethertype;         /* after the VLAN tag, when there is one */
    bool vlan;                  /* one outer tag: C-VLAN (0x8100) or S-VLAN (0x88a8) */
    bool svlan;                 /* the tag is an S-VLAN tag */
    uint16_t tci;               /* the tag's PCP (15:13), CFI/DEI (12), VID (11:0) */
    uint32_t l2;                /* the L2 header's length: 14, or 18 with a tag */
    uint8_t ipv;                /* 4, 6 or 0 (neither, or too short) */
    bool frag;                  /* IPv4: more fragments or a fragment offset */
    uint8_t proto;              /* IPv4 protocol, IPv6 next header */
    uint32_t l3;                /* the IP header */
    uint32_t l3_len;            /* IPv4 IHL * 4 when at least 20 and within the frame; 40 */
    uint32_t ip_len;            /* IPv4 total length, IPv6 payload length, as written */
    uint32_t l4;                /* the TCP/UDP header: not for fragments or a bad IHL */
} VcxNicHdrs;
void vcx_nic_parse_hdrs(const uint8_t *frame, uint32_t len, VcxNicHdrs *h);
void vcx_nic_csum_fill(uint8_t *frame, uint32_t len, const VcxNicHdrs *h, uint8_t cs_flags);
void vcx_nic_csum_offload(uint8_t *frame, uint32_t len, uint8_t cs_flags);

/* vcx-nic-tx.c */
void vcx_nic_wq_kick(VcxState *s, VcxNicWq *sq);
bool vcx_nic_tx_run(VcxState *s, VcxBudget *b);

/*
 * Ones' complement sums (RFC 1071), for the checksum offload of the send path and the
 * checks and check_sum of the receive path: add bytes as big-endian 16-bit words (an odd
 * last byte is the high half), then fold the carries.
 */
static inline uint32_t vcx_csum_add(uint32_t sum, const uint8_t *p, uint32_t len)
{
    for (uint32_t i = 0; i + 1 < len; i += 2) {
        sum += p[i] << 8 | p[i + 1];
    }
    if (len & 1) {
        sum += p[len - 1] << 8;
    }
    return sum;
}

static inline uint16_t vcx_csum_fold(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return sum;
}

/* vcx-nic-rx.c */
ssize_t vcx_nic_receive(VcxState *s, const uint8_t *buf, size_t size);
bool vcx_nic_can_receive(VcxState *s);
bool vcx_nic_rq_flush(VcxState *s, VcxNicWq *rq, VcxBudget *b);
void vcx_nic_loopback(VcxState *s, const uint8_t *frame, uint32_t len, uint32_t tdn);
void vcx_nic_loopback_roce(VcxState *s, const uint8_t *frame, uint32_t len, bool sealed);
void vcx_nic_rxq_drop_all(VcxState *s);
uint32_t vcx_toeplitz(const uint8_t *key, uint32_t key_len, const uint8_t *in,
                      uint32_t len);

/* vcx-nic-counters.c */
uint8_t vcx_cmd_alloc_q_counter(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_dealloc_q_counter(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_q_counter(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_vport_counter(VcxState *s, VcxCmd *cmd);
void vcx_qc_free(VcxState *s, VcxQCounter *qc);
void vcx_nic_count_rx(VcxState *s, const uint8_t *frame, uint32_t len);
void vcx_nic_count_tx(VcxState *s, const uint8_t *frame, uint32_t len);
void vcx_nic_count_roce(VcxState *s, const uint8_t *frame, uint32_t len, bool tx);
void vcx_nic_count_roce_n(VcxState *s, bool group, uint64_t pkts, uint64_t octets, bool tx);
void vcx_nic_count_roce_looped(VcxState *s, uint64_t pkts, uint64_t octets);

#endif
