/*
 * vcx: RDMA objects (PD, XRCD, MKEY, CQ, QP, SRQ/RMP/XRC SRQ) and the transport engine,
 * shared by vcx-obj.c (tables, command table, reset), vcx-pd.c, vcx-mkey.c, vcx-cq.c,
 * vcx-qp.c, vcx-srq.c, vcx-xrc.c and the transport engine (vcx-xport.c, vcx-resp.c,
 * vcx-flush.c).
 *
 * Object numbers index fixed-size tables (VcxObjTable); every object that names another
 * (a QP its CQs, SRQ and PD; an MKEY its PD; ...) holds a reference counted in the
 * target, so a destroy while in use is refused with BAD_RES_STATE as firmware does.
 * MKEYs and peer QPs are not counted: the transport engine holds them by number (and a
 * QP also by incarnation, gen) across its runs and checks them again as it goes, so they
 * may be destroyed at any time (vcx-xport.c). Neither are the XRC SRQs an XRC target's
 * messages name: the engine holds them by number and incarnation too.
 *
 * Guest queue memory (CQ rings, QP and SRQ buffers) is described by a VcxQBuf: PAS pages
 * plus an offset; every access goes through vcx_qbuf_read/write, which bound the offset
 * and split at page boundaries.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_VCX_VCX_OBJ_H
#define HW_VCX_VCX_OBJ_H

#include "qemu/queue.h"
#include "vcx-cmd.h"
#include "vcx/prm-obj.h"
#include "vcx/prm-nic.h"
#include "vcx/prm-wqe.h"

/* Limits reported in the capabilities (vcx-cmd-hca.c uses the same constants). */
#define VCX_LOG_MAX_PD          16
#define VCX_LOG_MAX_XRCD        16
#define VCX_LOG_MAX_MKEY        16
#define VCX_LOG_MAX_KLM_LIST    9       /* entries a fast registration loads: MTT or KLM */
#define VCX_LOG_MAX_CQ          12
#define VCX_LOG_MAX_CQ_SZ       22
#define VCX_LOG_MAX_QP          12
#define VCX_LOG_MAX_QP_SZ       15
#define VCX_LOG_MAX_SRQ         12
#define VCX_LOG_MAX_SRQ_SZ      15
#define VCX_LOG_MAX_MSG         30
/* UD multicast groups of the port (roce/vcx-roce-mcg.c) and the QPs each can hold */
#define VCX_LOG_MAX_MCG         6
#define VCX_MAX_QP_MCG          16
/* MR/MW length limit: 2^64, as ConnectX boards report (a PA key with length64 spans it) */
#define VCX_LOG_MAX_MRW_SZ      64
#define VCX_LOG_MAX_RA          4       /* log_max_ra_req_qp / log_max_ra_res_qp */
#define VCX_MAX_WQE_SZ_SQ       1024    /* bytes: 16 WQEBBs */
#define VCX_MAX_WQE_SZ_RQ       512     /* bytes: 32 data segments */
#define VCX_MAX_MTT             (1u << 20)      /* translation entries per MKEY */
#define VCX_MAX_QUEUE_PAS       (1u << 16)      /* PAS entries per queue */
#define VCX_FIRST_QPN           8       /* 0 and 1 are the special QPs */
#define VCX_MAX_SGE             64      /* data segments one WQE can carry */

typedef struct VcxObjTable {
    void **slot;
    uint32_t size;              /* numbers 0..size-1 */
    uint32_t first;             /* lowest number handed out */
    uint32_t next;              /* where the search for a free number starts */
    uint32_t count;
} VcxObjTable;

/* Free every object still in a table (each free function takes the object's type). */
#define VCX_OBJ_TABLE_DRAIN(s, table, free_fn)                      \
    do {                                                            \
        for (uint32_t i_ = 0; i_ < (table)->size; i_++) {           \
            if ((table)->slot[i_]) {                                \
                free_fn((s), (table)->slot[i_]);                    \
            }                                                       \
        }                                                           \
        (table)->next = (table)->first;                             \
    } while (0)

/* Guest memory of a queue: PAS pages of 2^page_shift bytes, starting offset bytes in. */
typedef struct VcxQBuf {
    uint32_t npas;
    uint64_t *pas;
    uint8_t page_shift;
    uint32_t offset;
    uint64_t size;              /* bytes of the queue after offset */
} VcxQBuf;

typedef struct VcxPd {
    uint32_t pdn;
    uint32_t refs;              /* MKEYs, QPs and SRQs of this PD */
} VcxPd;

/* An XRC domain (vcx-xrc.c): a number XRC SRQs and XRC QPs name. */
typedef struct VcxXrcd {
    uint32_t xrcdn;
    uint32_t refs;              /* SRQs and QPs naming it */
} VcxXrcd;

/*
 * One KLM entry of an indirect key: byte_count bytes at addr through key mkey, holding
 * the key's bytes from offset off (the entries before it summed).
 */
typedef struct VcxKlm {
    uint32_t mkey;
    uint32_t bcount;
    uint64_t addr;
    uint64_t off;
} VcxKlm;

typedef struct VcxMkey {
    uint32_t index;
    uint8_t key;                /* mkey_7_0 */
    uint8_t access_mode;
    bool free;
    bool umr_en;
    bool lr, lw, rr, rw, a;
    bool length64;
    bool en_rinval;
    uint32_t qpn;
    uint32_t pdn;
    uint64_t start;
    uint64_t len;
    uint8_t log_page_size;
    uint32_t xlt_octwords;      /* translations_octword_size */
    uint32_t nmtt;
    uint64_t *mtt;
    /* memory window (access mode KLM): [start, start + len) maps to mw_addr in mw_mkey */
    uint32_t mw_mkey;
    uint64_t mw_addr;
    /*
     * indirect MR (access mode KLM, fast-registered): [start, start + len) runs through
     * the nklm entries in order (vcx_klm_reg)
     */
    bool indirect;
    uint32_t nklm;
    VcxKlm *klm;
} VcxMkey;

typedef struct VcxCq {
    uint32_t cqn;
    uint8_t log_size;
    uint8_t cqe_sz;
    uint8_t status;             /* VCX_CQC_STATUS_* */
    uint8_t st;                 /* VCX_CQ_STATE_* (armed, solicited armed, fired) */
    bool oi;
    uint8_t arm_sn;
    uint8_t period_mode;        /* moderation (vcx-cq.c): VCX_CQ_PERIOD_MODE_* */
    uint16_t cq_period;         /* us, 0: no timer */
    uint16_t cq_max_count;      /* CQEs, 0: no count */
    uint32_t mod_count;         /* CQEs written while armed since the last event */
    int64_t mod_start_ns;       /* the period's start: the last event, or the first CQE */
    QEMUTimer *mod_timer;       /* the period's end: the event is due (vcx_cq_mod_cb) */
    bool mod_due;               /* on objs->modq, for the executor */
    QTAILQ_ENTRY(VcxCq) mod_link;
    VcxState *s;
    uint32_t uar_page;
    uint32_t c_eqn;
    uint64_t dbr_addr;
    uint32_t prod;              /* 24-bit producer counter */
    uint32_t cons;              /* last consumer counter seen (doorbell record / arm) */
    uint32_t last_notified;
    uint32_t last_solicit;
    uint32_t refs;              /* QPs using it */
    VcxQBuf buf;
} VcxCq;

typedef struct VcxSrq {
    uint32_t srqn;
    bool rmp;                   /* created by CREATE_RMP ... */
    bool xrc;                   /* ... or by CREATE_XRC_SRQ (else CREATE_SRQ) */
    bool error;
    uint64_t gen;               /* incarnation, for messages that name it by number */
    uint8_t log_size;
    uint8_t log_stride;         /* full log2 of the WQE size */
    uint8_t log_page_size;      /* log2(page size) - 12 */
    uint8_t page_offset;        /* 64-byte units */
    bool basic_cyclic;
    uint32_t pdn;
    uint32_t xrcd;              /* non-zero: an XRC SRQ of that domain, holding it ... */
    uint32_t cqn;               /* ... and this CQ, where its receives complete */
    uint32_t user_index;        /* CREATE_XRC_SRQ: stored, unused (cqe_version 0) */
    uint32_t uar_page;
    uint16_t lwm;               /* 0: limit event disarmed */
    uint64_t dbr_addr;
    uint16_t head;              /* index of the next WQE to consume */
    uint16_t consumed;          /* WQEs consumed, compared with the doorbell record */
    uint16_t counter;           /* the doorbell record's counter as last read */
    uint32_t refs;              /* QPs attached */
    VcxQBuf buf;
} VcxSrq;

/* Execution state of a QP (requester and responder halves), private to the engine (vcx-xport.h). */
typedef struct VcxXportQp VcxXportQp;

typedef struct VcxQp VcxQp;

struct VcxQp {
    uint32_t qpn;
    uint8_t qpc[VCX_QPC_SIZE];  /* context as the driver set it (QUERY_QP starts here) */
    /* decoded from qpc by vcx_qp_decode() */
    uint8_t st;
    uint8_t state;
    uint32_t pdn;
    uint8_t mtu;
    uint8_t log_msg_max;
    uint8_t log_rq_size, log_rq_stride, log_sq_size;
    bool no_sq;
    uint8_t rq_type;
    uint32_t srqn;
    uint32_t cqn_snd, cqn_rcv;
    uint32_t uar_page;
    uint64_t dbr_addr;
    uint32_t q_key;
    uint32_t remote_qpn;
    bool rre, rwe, rae;
    uint8_t retry_count, rnr_retry, min_rnr_nak;
    uint8_t log_sra_max, log_rra_max;
    /* objects held */
    VcxPd *pd;
    VcxXrcd *xrcd;              /* XRC QPs: the domain named (a target's SRQs are its) */
    VcxCq *scq, *rcq;
    VcxSrq *srq;
    VcxQBuf buf;
    uint32_t sq_offset;         /* bytes: the RQ comes first */
    /* execution state */
    uint32_t sq_psn;            /* next PSN the requester sends */
    uint32_t rq_psn;            /* next PSN the responder expects */
    uint32_t msn;
    uint16_t sq_ci;             /* next SQ WQEBB to execute */
    uint16_t sq_pi;             /* last producer counter read */
    uint16_t rq_ci;             /* RQ WQEs consumed */
    uint16_t rq_pi;             /* the receive counter of the doorbell record as last read */
    uint8_t rnr_left;           /* RNR retries left for the WQE at sq_ci */
    uint8_t retry_left;
    bool rnr_wait;              /* SQ stalled until the RNR timer fires */
    bool ack_wait;              /* loopback: that wait is a local ACK timeout (counted) */
    bool kicked;                /* on the executor's run queue */
    bool err_watched;           /* on the ERR watch list (vcx_xport_err_watch) */
    bool comm_est;              /* Communication Established posted since INIT2RTR */
    uint64_t gen;               /* incarnation: new at CREATE_QP and at every 2RST_QP */
    VcxXportQp *xs;             /* WQE in execution, message arriving (vcx-xport.c) */
    QTAILQ_ENTRY(VcxQp) run_link;
    QTAILQ_ENTRY(VcxQp) err_link;
    QEMUTimer *rnr_timer;
    int64_t timer_due;          /* when rnr_timer's wait ends (vcx_qp_timer_arm) */
    VcxState *s;
};

/* The Ethernet NIC objects and data path (hw-model/nic/vcx-nic.h). */
typedef struct VcxNic VcxNic;

/* What one executor run may still do (vcx-xport.h explains the values). */
typedef struct VcxBudget {
    uint32_t wqes;              /* WQEs (or received frames) the run may still handle */
    uint64_t bytes;             /* payload bytes it may still move */
    uint64_t tail;              /* bytes added by tail allowances (VCX_XPORT_TAIL_BYTES) */
} VcxBudget;

typedef struct VcxObjects {
    VcxObjTable pds, mkeys, cqs, qps, srqs, xrcds;
    QTAILQ_HEAD(, VcxQp) runq;  /* QPs with work for the executor */
    QEMUBH *bh;                 /* the executor: one guarded bottom half (vcx-xport.c) */
    uint64_t runs;              /* executor runs since the device was created */
    bool in_run;                /* a run or a doorbell slice is executing: it schedules
                                 * the bottom half at its end if work remains */
    uint64_t qp_gen;            /* last QP incarnation handed out */
    uint64_t xfer_seq;          /* last message number handed out */
    QTAILQ_HEAD(, VcxQp) errq;  /* QPs in ERR whose receive counter is watched */
    uint32_t err_count;
    QEMUTimer *err_timer;
    int64_t err_interval;       /* ns until the next look at errq */
    bool err_due;               /* the watch's timer fired: the executor looks at errq */
    QTAILQ_HEAD(, VcxCq) modq;  /* CQs whose moderation period ended (vcx_cq_mod_run) */
    VcxQp *qp1;                 /* the port's GSI QP (st QP1): at most one */
    uint64_t qp1_sent;          /* datagrams QP1 sent / delivered to it (state property) */
    uint64_t qp1_received;
    VcxNic *nic;                /* Ethernet NIC objects (hw-model/nic/) */
    struct VcxRoceDev *roce;    /* RoCEv2 wire engine (hw-model/roce/) */
} VcxObjects;

static inline VcxObjects *vcx_objs(VcxState *s)
{
    return s->objs;
}

/* vcx-obj.c: tables, queue buffers, command table, lifecycle */
/* A table of numbers first..size-1, all free. */
void vcx_obj_table_init(VcxObjTable *t, uint32_t size, uint32_t first);
void *vcx_obj_get(VcxObjTable *t, uint32_t n);
bool vcx_obj_alloc(VcxObjTable *t, void *obj, uint32_t *n);
void vcx_obj_remove(VcxObjTable *t, uint32_t n);
uint8_t vcx_qbuf_parse(VcxCmd *cmd, VcxQBuf *b, const uint8_t *pas, uint32_t pas_room,
                       uint8_t log_page_size, uint32_t page_offset, uint64_t size,
                       uint16_t synd_len, uint16_t synd_align);
void vcx_qbuf_free(VcxQBuf *b);
MemTxResult vcx_qbuf_read(VcxState *s, const VcxQBuf *b, uint64_t off, void *buf,
                          uint32_t len);
MemTxResult vcx_qbuf_write(VcxState *s, const VcxQBuf *b, uint64_t off, const void *buf,
                           uint32_t len);
uint32_t vcx_qbuf_query_pas(const VcxQBuf *b, uint8_t *out, uint32_t room_bytes);
MemTxResult vcx_dbr_read(VcxState *s, uint64_t addr, uint32_t *val);
VcxPd *vcx_pd_get(VcxState *s, uint32_t pdn);
VcxCq *vcx_cq_get(VcxState *s, uint32_t cqn);
VcxQp *vcx_qp_get(VcxState *s, uint32_t qpn);
VcxSrq *vcx_srq_get(VcxState *s, uint32_t srqn);
VcxMkey *vcx_mkey_get(VcxState *s, uint32_t key);
VcxXrcd *vcx_xrcd_get(VcxState *s, uint32_t xrcdn);

/* vcx-pd.c */
uint8_t vcx_cmd_alloc_pd(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_dealloc_pd(VcxState *s, VcxCmd *cmd);
void vcx_pd_free(VcxState *s, VcxPd *pd);

/* vcx-mkey.c */
uint8_t vcx_cmd_create_mkey(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_mkey(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_mkey(VcxState *s, VcxCmd *cmd);
void vcx_mkey_free(VcxState *s, VcxMkey *mk);
/* Access rights asked of an MKEY by the transport engine. */
#define VCX_ACC_LOCAL_READ      (1u << 0)
#define VCX_ACC_LOCAL_WRITE     (1u << 1)
#define VCX_ACC_REMOTE_READ     (1u << 2)
#define VCX_ACC_REMOTE_WRITE    (1u << 3)
#define VCX_ACC_REMOTE_ATOMIC   (1u << 4)
/* pdn for a check of a privileged REG_UMR QP's own data segments: a key of any PD */
#define VCX_PDN_ANY             UINT32_MAX
VcxMkey *vcx_mkey_check(VcxState *s, uint32_t key, uint32_t pdn, uint32_t qpn,
                        uint64_t va, uint64_t len, uint32_t access, const char **why);
/*
 * Execute a UMR WQE of a QP of pdn/qpn; 0 or the error CQE syndrome. A privileged
 * (REG_UMR) QP may modify a key of any PD and move it to another PD.
 */
uint8_t vcx_mkey_umr(VcxState *s, uint32_t pdn, uint32_t qpn, bool privileged,
                     const uint8_t *wqe, uint32_t end, const char **why);
MemTxResult vcx_mkey_rw(VcxState *s, VcxMkey *mk, uint64_t va, void *buf, uint32_t len,
                        bool write);
/* Zero-copy: map key bytes that are guest RAM in place (NULL: use vcx_mkey_rw). */
void *vcx_mkey_map(VcxState *s, VcxMkey *mk, uint64_t va, uint32_t len, bool write,
                   uint32_t *n);
void vcx_mkey_unmap(VcxState *s, void *p, uint32_t n, bool write, uint32_t done);

/* vcx-cq.c */
uint8_t vcx_cmd_create_cq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_cq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_cq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_modify_cq(VcxState *s, VcxCmd *cmd);
void vcx_cq_free(VcxState *s, VcxCq *cq);
void vcx_cq_doorbell(VcxState *s, uint32_t uar, uint64_t value);
/* Write one 64-byte CQE (owner bit and op_own filled here); false if it was dropped. */
bool vcx_cq_post(VcxState *s, VcxCq *cq, uint8_t *cqe, bool solicited);
/* The executor's part of CQ moderation: the events whose period ended. */
void vcx_cq_mod_run(VcxState *s);

/* vcx-qp.c */
uint8_t vcx_cmd_create_qp(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_modify_qp(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_2err_qp(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_2rst_qp(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_qp(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_qp(VcxState *s, VcxCmd *cmd);
void vcx_qp_free(VcxState *s, VcxQp *qp);
void vcx_qp_to_err(VcxState *s, VcxQp *qp);
/*
 * QP1 (General Services Interface, IBTA 13.4.6.3): a UD-like QP the driver creates with
 * st QP1. CREATE_QP gives it an ordinary number (the one commands, doorbells and CQEs
 * use), but on the wire it is QP 1: its datagrams carry source QPN 1, and datagrams to
 * destination QPN 1 reach it, with the well-known GSI Q_Key.
 */
#define VCX_GSI_WIRE_QPN        1u
#define VCX_GSI_QKEY            0x80010000u     /* IBTA: the Q_Key of QP1 */
#define VCX_DEFAULT_PKEY        0xffffu         /* the port's one P_Key (BTH P_Key) */
static inline bool vcx_qp_is_dgram(const VcxQp *qp)
{
    return qp->st == VCX_QP_ST_UD || qp->st == VCX_QP_ST_QP1;
}
uint32_t vcx_qp_wire_qpn(const VcxQp *qp);
VcxQp *vcx_qp_by_wire_qpn(VcxState *s, uint32_t dqpn);

/* vcx-srq.c */
typedef struct VcxSrqParams {
    uint32_t log_size, log_stride, log_page, page_offset, pdn, lwm, xrcd, cqn, uar;
    uint32_t user_index;
    uint64_t dbr;
    const uint8_t *pas;
    uint32_t pas_room;
} VcxSrqParams;
/*
 * Where the fields of an SRQ context sit: srqc (ISSI 0 CREATE_SRQ) and xrc_srqc
 * (CREATE_XRC_SRQ) carry the same fields at different offsets, so one parser and one
 * QUERY writer serve both, each given its layout.
 */
typedef struct VcxSrqcLayout {
    struct vcx_fld state, log_size, log_stride, xrcd, page_offset, cqn, log_page_size;
    struct vcx_fld pd, lwm, wqe_cnt, dbr;
    struct vcx_fld user_index;  /* width 0: not in this layout */
} VcxSrqcLayout;
void vcx_srqc_parse(const VcxSrqcLayout *l, const uint8_t *c, VcxSrqParams *p);
void vcx_srqc_query(VcxState *s, const VcxSrqcLayout *l, VcxSrq *srq, uint8_t *c);
/* Checks and creation common to CREATE_SRQ, CREATE_RMP and CREATE_XRC_SRQ. */
uint8_t vcx_srq_create(VcxState *s, VcxCmd *cmd, const VcxSrqParams *p, bool rmp, bool xrc,
                       uint32_t *srqn);
uint8_t vcx_srq_set_lwm(VcxCmd *cmd, VcxSrq *srq, uint32_t lwm);
uint16_t vcx_srq_sw_counter(VcxState *s, VcxSrq *srq);
uint8_t vcx_cmd_create_srq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_srq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_srq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_arm_rq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_create_rmp(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_modify_rmp(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_rmp(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_rmp(VcxState *s, VcxCmd *cmd);
void vcx_srq_free(VcxState *s, VcxSrq *srq);
/* Take the next WQE of an SRQ: 1 taken, 0 none posted, -1 SRQ in error. */
int vcx_srq_pop(VcxState *s, VcxSrq *srq, uint8_t *wqe, uint16_t *index);
void vcx_qp_srq_event(VcxState *s, uint8_t type, uint32_t number, uint8_t queue_type);
void vcx_qp_comm_est(VcxState *s, VcxQp *qp);

/* vcx-xrc.c: XRC domains, XRC SRQs, the XRC checks of CREATE_QP and of the responder */
uint8_t vcx_cmd_alloc_xrcd(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_dealloc_xrcd(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_create_xrc_srq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_destroy_xrc_srq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_query_xrc_srq(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_arm_xrc_srq(VcxState *s, VcxCmd *cmd);
void vcx_xrcd_free(VcxState *s, VcxXrcd *x);
/* CREATE_QP of st XRC: the initiator / target rules; *xrcd is the domain to hold. */
uint8_t vcx_xrc_qp_check(VcxState *s, VcxCmd *cmd, const uint8_t *qpc, VcxXrcd **xrcd);
static inline bool vcx_qp_is_xrc_tgt(const VcxQp *qp)
{
    return qp->st == VCX_QP_ST_XRC && qp->no_sq;
}

/* A reliable requester: an RC QP or an XRC initiator (its window, its answers). */
static inline bool vcx_qp_is_rc_requester(const VcxQp *qp)
{
    return qp->st == VCX_QP_ST_RC || (qp->st == VCX_QP_ST_XRC && !qp->no_sq);
}
/* The SRQ an XRC target serves a message naming srqn with; NULL and why if none. */
VcxSrq *vcx_xrc_target_srq(VcxState *s, VcxQp *qp, uint32_t srqn, const char **why);
/* An XRC target refuses a message (invalid XRCETH / XRC domain violation): to ERR. */
void vcx_xrc_invalid_request(VcxState *s, VcxQp *qp, uint32_t srqn, const char *why);

/* the Ethernet NIC (hw-model/nic/vcx-nic.c): objects, commands, its part of a run */
void vcx_nic_init(VcxState *s);
void vcx_nic_reset(VcxState *s);
void vcx_nic_free(VcxState *s);
uint32_t vcx_nic_count(VcxState *s);
bool vcx_nic_uar_in_use(VcxState *s, uint32_t uar);
/* SQ doorbell for a number in the NIC WQ range (0x1000..0x1fff) */
void vcx_nic_doorbell(VcxState *s, uint32_t uar, uint32_t sqn, uint64_t value);
/* One run's NIC work (SQs, received frames); true if work is left. */
bool vcx_nic_run(VcxState *s, VcxBudget *b);
/*
 * The RDMA fields of a Q counter (QUERY_Q_COUNTER), counted for the QPs whose
 * counter_set_id names it (nic/vcx-nic-counters.c): the requests and retransmission
 * fields, then the enhanced error fields (cap enhanced_error_q_counters), the error
 * CQEs and the error NAKs of each side.
 */
typedef enum VcxQcRdma {
    VCX_QC_RX_WRITE_REQUESTS,
    VCX_QC_RX_READ_REQUESTS,
    VCX_QC_RX_ATOMIC_REQUESTS,
    VCX_QC_OUT_OF_BUFFER,
    VCX_QC_OUT_OF_SEQUENCE,
    VCX_QC_DUPLICATE_REQUEST,
    VCX_QC_RNR_NAK_RETRY_ERR,
    VCX_QC_PACKET_SEQ_ERR,
    VCX_QC_IMPLIED_NAK_SEQ_ERR,
    VCX_QC_LOCAL_ACK_TIMEOUT_ERR,
    VCX_QC_RESP_LOCAL_LENGTH_ERROR,
    VCX_QC_RESP_CQE_ERROR,
    VCX_QC_REQ_CQE_ERROR,
    VCX_QC_REQ_REMOTE_INVALID_REQUEST,
    VCX_QC_REQ_REMOTE_ACCESS_ERRORS,
    VCX_QC_RESP_REMOTE_ACCESS_ERRORS,
    VCX_QC_RESP_CQE_FLUSH_ERROR,
    VCX_QC_REQ_CQE_FLUSH_ERROR,
    VCX_QC_REQ_TRANSPORT_RETRIES_EXCEEDED,
    VCX_QC_REQ_RNR_RETRIES_EXCEEDED,
    VCX_QC_REQ_LOCAL_LENGTH_ERROR,
    VCX_QC_RESP_LOCAL_QP_ERROR,
    VCX_QC_LOCAL_OPERATION_ERROR,
    VCX_QC_RESP_LOCAL_PROTECTION,
    VCX_QC_REQ_LOCAL_PROTECTION,
    VCX_QC_REQ_MW_BINDING,
    VCX_QC_REQ_BAD_RESPONSE,
    VCX_QC_RESP_REMOTE_INVALID_REQUEST,
    VCX_QC_REQ_REMOTE_OPERATION_ERRORS,
    VCX_QC_CQ_OVERFLOW,
    VCX_QC_RDMA_N,
} VcxQcRdma;
/* n more of a QP's events in the Q counter counter_set_id (0, or freed: nothing). */
void vcx_qc_count(VcxState *s, uint32_t counter_set_id, VcxQcRdma field, uint32_t n);
/* A Q counter of that number is allocated (QP contexts may name only those, or 0). */
bool vcx_qc_allocated(VcxState *s, uint32_t counter_set_id);

/* roce/vcx-roce-dev.c: the RoCEv2 wire engine */
void vcx_roce_init(VcxState *s);
void vcx_roce_reset(VcxState *s);
void vcx_roce_fini(VcxState *s);
char *vcx_roce_state(VcxState *s);
bool vcx_roce_rx(VcxState *s, const uint8_t *f, uint32_t len, bool sealed);
void vcx_roce_rx_end(VcxState *s);
void vcx_roce_run_end(VcxState *s);
bool vcx_roce_pending(VcxState *s);
bool vcx_roce_reads_pending(VcxState *s);
bool vcx_roce_run(VcxState *s, VcxBudget *b);
void vcx_roce_fault_prop_init(VcxState *s);
void vcx_roce_fault_prop_fini(VcxState *s);
/* roce/vcx-roce-mcg.c: UD multicast groups */
uint8_t vcx_cmd_attach_to_mcg(VcxState *s, VcxCmd *cmd);
uint8_t vcx_cmd_detach_from_mcg(VcxState *s, VcxCmd *cmd);
void vcx_roce_mcg_qp_gone(VcxState *s, uint32_t qpn);
bool vcx_roce_mcg_wants(VcxState *s, const uint8_t *dmac, const uint8_t *dgid);
bool vcx_roce_mcg_find_any(VcxState *s, const uint8_t *gid);
uint32_t vcx_roce_mcg_count(VcxState *s);
bool vcx_gid_is_mcast(const uint8_t *gid);
void vcx_gid_mcast_mac(const uint8_t *gid, uint8_t *mac);
bool vcx_nic_pending(VcxState *s);
bool vcx_nic_rx_pending(VcxState *s);
bool vcx_nic_rx_run(VcxState *s, VcxBudget *b);
char *vcx_nic_state(VcxState *s);

/* the transport engine: vcx-xport.c, vcx-resp.c, vcx-flush.c */
void vcx_xport_sq_doorbell(VcxState *s, uint32_t uar, uint32_t offset, uint64_t value,
                           unsigned size);
/* Queue the QP for the executor (SQ doorbell, RTS, RNR/ACK timer, ERR): never runs it. */
void vcx_xport_kick(VcxState *s, VcxQp *qp);
/* The QP entered ERR: its flush is queued, a receive WQE in use is flushed now. */
void vcx_xport_qp_err(VcxState *s, VcxQp *qp);
bool vcx_xport_qp_fault(VcxState *s, uint32_t qpn);
uint32_t vcx_xport_queued(VcxState *s);
void vcx_xport_init(VcxState *s);
void vcx_xport_fini(VcxState *s);
void vcx_xport_qp_init(VcxState *s, VcxQp *qp);
void vcx_xport_qp_fini(VcxState *s, VcxQp *qp);

#endif /* HW_VCX_VCX_OBJ_H */
