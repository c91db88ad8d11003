/*
 * vcx: queue pairs (PRM "Queue Pair"): CREATE_QP, the state transitions RST2INIT,
 * INIT2INIT, INIT2RTR, RTR2RTS, RTS2RTS, 2ERR and 2RST, QUERY_QP and DESTROY_QP.
 *
 * Transport types RC, UC, UD, XRC (initiator and target, vcx-xrc.c: transitions and
 * attributes as RC) and QP1 (the GSI QP: one per port, UD-like; its wire
 * number is 1, see vcx_qp_wire_qpn()), and REG_UMR: the send-only QP a kernel driver
 * keeps to post UMR WQEs that change any memory key (mlx5_ib's UMR QP for rereg), which
 * takes no context fields but port, P_Key index, MTU and message size in its transitions
 * and executes nothing but UMR and NOP. The QP buffer holds the receive queue (regular RQ only)
 * at offset 0 and the send queue (2^log_sq_size 64-byte WQEBBs) right after it, in one
 * PAS list; the 8-byte doorbell record holds the RQ and SQ producer counters.
 * rq_type selects the receive side: regular RQ, SRQ/RMP (srqn_rmpn_xrqn) or none. As
 * mlx5_ib fills srqn_rmpn_xrqn even without an SRQ, it is only looked at for rq_type 1.
 *
 * The device keeps the context bytes as the driver gave them (qp->qpc) and decodes what
 * it uses from there. A transition applies, on a copy, the fields the PRM makes part of
 * that transition, then those whose opt_param_mask bit is set; a bit not defined for the
 * transition and QP type is refused (BAD_PARAM), as is a transition from a state other
 * than its source (BAD_QP_STATE). The copy is validated before it replaces the context,
 * so a refused transition changes nothing.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "vcx-obj.h"
#include "trace.h"

enum {
    SYND_QP_UMEM = 1,
    SYND_QP_INPUT_QPN,
    SYND_QP_ST,
    SYND_QP_PD,
    SYND_QP_UAR,
    SYND_QP_CQN_SND,
    SYND_QP_CQN_RCV,
    SYND_QP_RQ_TYPE,
    SYND_QP_SRQN,
    SYND_QP_RQ_SIZE,
    SYND_QP_SQ_SIZE,
    SYND_QP_LOG_PAGE_SIZE,
    SYND_QP_DBR_ALIGN,
    SYND_QP_UNSUPPORTED,
    SYND_QP_PAS_SHORT,
    SYND_QP_PAS_ALIGN,
    SYND_QP_LIMIT,
    SYND_QP_NONE,
    SYND_QP_STATE,
    SYND_QP_OPT_PARAM,
    SYND_QP_MTU,
    SYND_QP_MSG_MAX,
    SYND_QP_RA_MAX,
    SYND_QP_PORT,
    SYND_QP_PKEY,
    SYND_QP_SRC_ADDR_INDEX,
    SYND_QP_QP1_EXISTS,
    SYND_QP_COUNTER_SET_ID,
};

#define QPS(x)          (1u << VCX_QP_STATE_##x)
#define ST_RC           (1u << VCX_QP_ST_RC)
#define ST_UC           (1u << VCX_QP_ST_UC)
#define ST_UD           (1u << VCX_QP_ST_UD)
#define ST_QP1          (1u << VCX_QP_ST_QP1)
#define ST_REG_UMR      (1u << VCX_QP_ST_REG_UMR)
#define ST_XRC          (1u << VCX_QP_ST_XRC)
#define ST_DGRAM        (ST_UD | ST_QP1)
#define ST_RCX          (ST_RC | ST_XRC)        /* reliable connected: RC and XRC */
#define ST_ALL          (ST_RC | ST_UC | ST_UD | ST_QP1 | ST_REG_UMR | ST_XRC)

/* Transitions that carry a context. */
enum {
    T_RST2INIT = 1 << 0,
    T_INIT2INIT = 1 << 1,
    T_INIT2RTR = 1 << 2,
    T_RTR2RTS = 1 << 3,
    T_RTS2RTS = 1 << 4,
};

typedef struct VcxQpTrans {
    uint16_t opcode;
    uint32_t from;              /* bit per state */
    uint8_t to;
    uint8_t t;
} VcxQpTrans;

static const VcxQpTrans vcx_qp_trans[] = {
    { VCX_CMD_OP_RST2INIT_QP, QPS(RST), VCX_QP_STATE_INIT, T_RST2INIT },
    { VCX_CMD_OP_INIT2INIT_QP, QPS(INIT), VCX_QP_STATE_INIT, T_INIT2INIT },
    { VCX_CMD_OP_INIT2RTR_QP, QPS(INIT), VCX_QP_STATE_RTR, T_INIT2RTR },
    { VCX_CMD_OP_RTR2RTS_QP, QPS(RTR), VCX_QP_STATE_RTS, T_RTR2RTS },
    { VCX_CMD_OP_RTS2RTS_QP, QPS(RTS), VCX_QP_STATE_RTS, T_RTS2RTS },
};

/*
 * Context fields a transition applies: always (req) or when opt_param_mask has opt_bit
 * (opt), for the QP types in sts. A field with len != 0 is a byte range (address path).
 */
typedef struct VcxQpParam {
    const char *name;
    struct vcx_fld fld;         /* relative to the qpc, or to the primary path if ads */
    bool ads;
    uint16_t len;               /* byte range at fld.bit / 8 instead of a field */
    uint8_t req;
    uint8_t opt;
    uint32_t opt_bit;
    uint32_t sts;               /* bit per service type (st) */
} VcxQpParam;

#define P(n, f, r, o, b, st)   { n, f, false, 0, r, o, b, st }
#define PA(n, f, r, o, b, st)  { n, f, true, 0, r, o, b, st }
#define OPT_LATER   (T_INIT2INIT | T_INIT2RTR | T_RTR2RTS | T_RTS2RTS)

static const VcxQpParam vcx_qp_params[] = {
    PA("pkey_index", VCX_ADS_PKEY_INDEX, T_RST2INIT, T_INIT2INIT | T_INIT2RTR | T_RTS2RTS,
       VCX_QP_OPTPAR_PKEY_INDEX, ST_ALL),
    PA("vhca_port_num", VCX_ADS_VHCA_PORT_NUM, T_RST2INIT, T_INIT2INIT | T_INIT2RTR,
       VCX_QP_OPTPAR_PRI_PORT, ST_ALL),
    P("q_key", VCX_QPC_Q_KEY, T_RST2INIT, OPT_LATER, VCX_QP_OPTPAR_Q_KEY, ST_DGRAM),
    P("rre", VCX_QPC_RRE, T_RST2INIT, OPT_LATER, VCX_QP_OPTPAR_RRE, ST_RCX),
    P("rwe", VCX_QPC_RWE, T_RST2INIT, OPT_LATER, VCX_QP_OPTPAR_RWE, ST_RCX | ST_UC),
    P("rae", VCX_QPC_RAE, T_RST2INIT, OPT_LATER, VCX_QP_OPTPAR_RAE, ST_RCX),
    P("counter_set_id", VCX_QPC_COUNTER_SET_ID, T_RST2INIT, OPT_LATER,
      VCX_QP_OPTPAR_COUNTER_SET_ID, ST_ALL),
    { "primary_address_path", VCX_FLD(0, 0), true, VCX_ADS_SIZE, T_INIT2RTR,
      T_RTR2RTS | T_RTS2RTS, VCX_QP_OPTPAR_PRIMARY_ADDR_PATH, ST_RCX | ST_UC },
    P("mtu", VCX_QPC_MTU, T_INIT2RTR, 0, 0, ST_ALL),
    P("log_msg_max", VCX_QPC_LOG_MSG_MAX, T_INIT2RTR, 0, 0, ST_ALL),
    P("remote_qpn", VCX_QPC_REMOTE_QPN, T_INIT2RTR, 0, 0, ST_RCX | ST_UC),
    P("next_rcv_psn", VCX_QPC_NEXT_RCV_PSN, T_INIT2RTR, 0, 0, ST_RCX | ST_UC),
    P("log_rra_max", VCX_QPC_LOG_RRA_MAX, T_INIT2RTR, T_RTR2RTS | T_RTS2RTS,
      VCX_QP_OPTPAR_RRA_MAX, ST_RCX),
    P("atomic_mode", VCX_QPC_ATOMIC_MODE, T_INIT2RTR, 0, 0, ST_RCX),
    P("min_rnr_nak", VCX_QPC_MIN_RNR_NAK, T_INIT2RTR, T_RTR2RTS | T_RTS2RTS,
      VCX_QP_OPTPAR_RNR_TIMEOUT, ST_RCX),
    P("next_send_psn", VCX_QPC_NEXT_SEND_PSN, T_RTR2RTS, 0, 0, ST_ALL),
    P("log_sra_max", VCX_QPC_LOG_SRA_MAX, T_RTR2RTS, T_RTS2RTS, VCX_QP_OPTPAR_SRA_MAX,
      ST_RCX),
    P("retry_count", VCX_QPC_RETRY_COUNT, T_RTR2RTS, T_RTS2RTS, VCX_QP_OPTPAR_RETRY_COUNT,
      ST_RCX),
    P("rnr_retry", VCX_QPC_RNR_RETRY, T_RTR2RTS, T_RTS2RTS, VCX_QP_OPTPAR_RNR_RETRY,
      ST_RCX),
    PA("ack_timeout", VCX_ADS_ACK_TIMEOUT, T_RTR2RTS, T_RTS2RTS, VCX_QP_OPTPAR_ACK_TIMEOUT,
       ST_RCX),
    P("pm_state", VCX_QPC_PM_STATE, 0, T_RTR2RTS | T_RTS2RTS, VCX_QP_OPTPAR_PM_STATE,
      ST_RCX | ST_UC),
};

#undef P
#undef PA

static void vcx_qp_decode(VcxQp *qp)
{
    const uint8_t *c = qp->qpc;

    qp->st = vcx_get(c, VCX_QPC_ST);
    qp->state = vcx_get(c, VCX_QPC_STATE);
    qp->pdn = vcx_get(c, VCX_QPC_PD);
    qp->mtu = vcx_get(c, VCX_QPC_MTU);
    qp->log_msg_max = vcx_get(c, VCX_QPC_LOG_MSG_MAX);
    qp->log_rq_size = vcx_get(c, VCX_QPC_LOG_RQ_SIZE);
    qp->log_rq_stride = vcx_get(c, VCX_QPC_LOG_RQ_STRIDE);
    qp->log_sq_size = vcx_get(c, VCX_QPC_LOG_SQ_SIZE);
    qp->no_sq = vcx_get(c, VCX_QPC_NO_SQ);
    qp->rq_type = vcx_get(c, VCX_QPC_RQ_TYPE);
    qp->srqn = vcx_get(c, VCX_QPC_SRQN_RMPN_XRQN);
    qp->cqn_snd = vcx_get(c, VCX_QPC_CQN_SND);
    qp->cqn_rcv = vcx_get(c, VCX_QPC_CQN_RCV);
    qp->uar_page = vcx_get(c, VCX_QPC_UAR_PAGE);
    qp->dbr_addr = vcx_get64(c, VCX_QPC_DBR_ADDR);
    /* QP1 sends and accepts the well-known GSI Q_Key whatever the context holds */
    qp->q_key = qp->st == VCX_QP_ST_QP1 ? VCX_GSI_QKEY : vcx_get(c, VCX_QPC_Q_KEY);
    qp->remote_qpn = vcx_get(c, VCX_QPC_REMOTE_QPN);
    qp->rre = vcx_get(c, VCX_QPC_RRE);
    qp->rwe = vcx_get(c, VCX_QPC_RWE);
    qp->rae = vcx_get(c, VCX_QPC_RAE);
    qp->retry_count = vcx_get(c, VCX_QPC_RETRY_COUNT);
    qp->rnr_retry = vcx_get(c, VCX_QPC_RNR_RETRY);
    qp->min_rnr_nak = vcx_get(c, VCX_QPC_MIN_RNR_NAK);
    qp->log_sra_max = vcx_get(c, VCX_QPC_LOG_SRA_MAX);
    qp->log_rra_max = vcx_get(c, VCX_QPC_LOG_RRA_MAX);
}

static uint32_t vcx_qp_rq_bytes(const uint8_t *qpc)
{
    if (vcx_get(qpc, VCX_QPC_RQ_TYPE) != VCX_QP_RQ_TYPE_REGULAR) {
        return 0;
    }
    return (VCX_RQ_STRIDE_MIN << vcx_get(qpc, VCX_QPC_LOG_RQ_STRIDE)) <<
           vcx_get(qpc, VCX_QPC_LOG_RQ_SIZE);
}

uint8_t vcx_cmd_create_qp(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *qpc = cmd->in + VCX_QP_IN_QPC_AT;
    uint32_t st = vcx_get(qpc, VCX_QPC_ST);
    uint32_t pdn = vcx_get(qpc, VCX_QPC_PD);
    uint32_t uar = vcx_get(qpc, VCX_QPC_UAR_PAGE);
    uint32_t rq_type = vcx_get(qpc, VCX_QPC_RQ_TYPE);
    uint32_t srqn = vcx_get(qpc, VCX_QPC_SRQN_RMPN_XRQN);
    bool no_sq = vcx_get(qpc, VCX_QPC_NO_SQ);
    uint32_t log_page = vcx_get(qpc, VCX_QPC_LOG_PAGE_SIZE);
    uint64_t dbr = vcx_get64(qpc, VCX_QPC_DBR_ADDR);
    uint32_t rq_stride = VCX_RQ_STRIDE_MIN << vcx_get(qpc, VCX_QPC_LOG_RQ_STRIDE);
    VcxPd *pd = vcx_pd_get(s, pdn);
    VcxCq *scq = vcx_cq_get(s, vcx_get(qpc, VCX_QPC_CQN_SND));
    VcxCq *rcq = vcx_cq_get(s, vcx_get(qpc, VCX_QPC_CQN_RCV));
    VcxSrq *srq = NULL;
    VcxXrcd *xrcd = NULL;
    uint32_t rq_bytes, sq_bytes;
    VcxQBuf buf = { 0 };
    uint8_t status;
    VcxQp *qp;

    if (vcx_get(cmd->in, VCX_CREATE_QP_IN_WQ_UMEM_VALID) ||
        vcx_get(qpc, VCX_QPC_DBR_UMEM_VALID) || vcx_get(cmd->in, VCX_CREATE_QP_IN_QPC_EXT)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_UMEM,
                            "umem / qpc_ext not supported");
    }
    if (vcx_get(cmd->in, VCX_CREATE_QP_IN_INPUT_QPN)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_INPUT_QPN,
                            "input_qpn 0x%x: choosing the QPN not supported",
                            vcx_get(cmd->in, VCX_CREATE_QP_IN_INPUT_QPN));
    }
    if (st != VCX_QP_ST_RC && st != VCX_QP_ST_UC && st != VCX_QP_ST_UD &&
        st != VCX_QP_ST_QP1 && st != VCX_QP_ST_REG_UMR && st != VCX_QP_ST_XRC) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_ST,
                            "st 0x%x not supported (RC, UC, UD, XRC, QP1 and REG_UMR are)",
                            st);
    }
    if (st == VCX_QP_ST_REG_UMR && (rq_type != VCX_QP_RQ_TYPE_ZERO_SIZE || no_sq)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_RQ_TYPE,
                            "a REG_UMR QP has a send queue and no receive queue");
    }
    /* The port has one GSI QP; the first holds it until DESTROY_QP. */
    if (st == VCX_QP_ST_QP1 && s->objs->qp1) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_RES_BUSY, SYND_QP_QP1_EXISTS,
                            "QP1 of port 1 already exists (QP 0x%x)", s->objs->qp1->qpn);
    }
    /* mlx5_ib's UMR QP has no PD: a privileged REG_UMR QP may have pd 0 (none) */
    if (!pd && !(st == VCX_QP_ST_REG_UMR && pdn == 0)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_PD,
                            "pd 0x%x not allocated", pdn);
    }
    /* an XRC target rings no doorbell: mlx5_ib leaves its uar_page 0 */
    if (!(st == VCX_QP_ST_XRC && no_sq) && !vcx_uar_allocated(s, uar)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_UAR,
                            "uar_page %u not allocated", uar);
    }
    if (!no_sq && !scq) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_CQN_SND,
                            "cqn_snd 0x%x does not exist", vcx_get(qpc, VCX_QPC_CQN_SND));
    }
    if (rq_type != VCX_QP_RQ_TYPE_REGULAR && rq_type != VCX_QP_RQ_TYPE_SRQ &&
        rq_type != VCX_QP_RQ_TYPE_ZERO_SIZE) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_RQ_TYPE,
                            "rq_type %u not supported", rq_type);
    }
    if (st == VCX_QP_ST_XRC) {
        status = vcx_xrc_qp_check(s, cmd, qpc, &xrcd);
        if (status) {
            return status;
        }
    } else if (rq_type != VCX_QP_RQ_TYPE_ZERO_SIZE && !rcq) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_CQN_RCV,
                            "cqn_rcv 0x%x does not exist", vcx_get(qpc, VCX_QPC_CQN_RCV));
    }
    if (rq_type == VCX_QP_RQ_TYPE_SRQ) {
        srq = vcx_srq_get(s, srqn);
        if (!srq) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_SRQN,
                                "srqn_rmpn_xrqn 0x%x does not exist", srqn);
        }
    }
    if (rq_type == VCX_QP_RQ_TYPE_REGULAR &&
        (vcx_get(qpc, VCX_QPC_LOG_RQ_SIZE) > VCX_LOG_MAX_QP_SZ ||
         rq_stride > VCX_MAX_WQE_SZ_RQ)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_RQ_SIZE,
                            "log_rq_size %u / RQ stride %u beyond 2^%u / %u",
                            vcx_get(qpc, VCX_QPC_LOG_RQ_SIZE), rq_stride,
                            VCX_LOG_MAX_QP_SZ, VCX_MAX_WQE_SZ_RQ);
    }
    if (!no_sq && vcx_get(qpc, VCX_QPC_LOG_SQ_SIZE) > VCX_LOG_MAX_QP_SZ) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_SQ_SIZE,
                            "log_sq_size %u > %u", vcx_get(qpc, VCX_QPC_LOG_SQ_SIZE),
                            VCX_LOG_MAX_QP_SZ);
    }
    if (log_page > VCX_MAX_LOG_PAGE_SIZE) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_LOG_PAGE_SIZE,
                            "log_page_size %u > %u", log_page, VCX_MAX_LOG_PAGE_SIZE);
    }
    if (dbr & (VCX_DBR_ALIGN - 1)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_DBR_ALIGN,
                            "dbr_addr 0x%" PRIx64 " not 8-byte aligned", dbr);
    }
    if (vcx_get(qpc, VCX_QPC_WQ_SIGNATURE) || vcx_get(qpc, VCX_QPC_OFFLOAD_TYPE) ||
        vcx_get(qpc, VCX_QPC_CD_MASTER) || vcx_get(qpc, VCX_QPC_CD_SLAVE_SEND) ||
        vcx_get(qpc, VCX_QPC_CD_SLAVE_RECEIVE) || vcx_get(qpc, VCX_QPC_CS_REQ) ||
        vcx_get(qpc, VCX_QPC_CS_RES) || vcx_get(qpc, VCX_QPC_DETH_SQPN) ||
        vcx_get(qpc, VCX_QPC_BLOCK_LB_MC)) {
        /*
         * deth_sqpn: a UD QP sending as QP1 needs cap set_deth_sqpn, which reads 0;
         * block_lb_mc: multicast always loops back to local members (cap block_lb_mc 0)
         */
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_UNSUPPORTED,
                            "wq_signature, offloads, cross-channel, scatter-to-CQE, "
                            "deth_sqpn and block_lb_mc not supported");
    }
    rq_bytes = vcx_qp_rq_bytes(qpc);
    sq_bytes = no_sq ? 0 : VCX_SEND_WQEBB << vcx_get(qpc, VCX_QPC_LOG_SQ_SIZE);
    status = vcx_qbuf_parse(cmd, &buf, cmd->in + VCX_CREATE_QP_IN_PAS_AT,
                            cmd->in_len - VCX_CREATE_QP_IN_PAS_AT, log_page,
                            vcx_get(qpc, VCX_QPC_PAGE_OFFSET),
                            (uint64_t)rq_bytes + sq_bytes, SYND_QP_PAS_SHORT,
                            SYND_QP_PAS_ALIGN);
    if (status) {
        return status;
    }
    qp = g_new0(VcxQp, 1);
    if (!vcx_obj_alloc(&s->objs->qps, qp, &qp->qpn)) {
        vcx_qbuf_free(&buf);
        g_free(qp);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_QP_LIMIT,
                            "all QPs in use");
    }
    memcpy(qp->qpc, qpc, VCX_QPC_SIZE);
    vcx_set(qp->qpc, VCX_QPC_STATE, VCX_QP_STATE_RST);
    vcx_qp_decode(qp);
    qp->buf = buf;
    qp->sq_offset = rq_bytes;
    qp->pd = pd;
    if (pd) {
        pd->refs++;
    }
    if (!no_sq) {
        qp->scq = scq;
        scq->refs++;
    }
    if (rq_type != VCX_QP_RQ_TYPE_ZERO_SIZE || (st == VCX_QP_ST_XRC && rcq)) {
        /* an XRC QP holds every CQ it names; a target's receives use its SRQs' CQs */
        qp->rcq = rcq;
        if (rcq) {
            rcq->refs++;
        }
    }
    if (st == VCX_QP_ST_XRC && no_sq && scq) {
        qp->scq = scq;
        scq->refs++;
    }
    if (xrcd) {
        qp->xrcd = xrcd;
        xrcd->refs++;
    }
    if (srq) {
        qp->srq = srq;
        srq->refs++;
    }
    if (st == VCX_QP_ST_QP1) {
        s->objs->qp1 = qp;
    }
    vcx_xport_qp_init(s, qp);
    vcx_set(cmd->out, VCX_CREATE_QP_OUT_QPN, qp->qpn);
    trace_vcx_qp_create(qp->qpn, st, rq_type, qp->log_rq_size, qp->log_sq_size,
                        qp->cqn_snd, qp->cqn_rcv, rq_type == VCX_QP_RQ_TYPE_SRQ ? srqn : 0);
    if (st == VCX_QP_ST_XRC) {
        trace_vcx_xrc_qp(qp->qpn, no_sq ? "target" : "initiator", xrcd ? xrcd->xrcdn : 0);
    }
    return VCX_CMD_STAT_OK;
}

static VcxQp *vcx_qp_lookup_cmd(VcxState *s, VcxCmd *cmd, uint8_t *status)
{
    uint32_t qpn = vcx_get(cmd->in, VCX_OBJ_NUMBER);
    VcxQp *qp = vcx_qp_get(s, qpn);

    if (!qp) {
        *status = vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_QP_NONE,
                               "QP 0x%x does not exist", qpn);
    }
    return qp;
}

static const char *vcx_qp_state_name(uint8_t st)
{
    static const char *const names[] = {
        [VCX_QP_STATE_RST] = "RST", [VCX_QP_STATE_INIT] = "INIT",
        [VCX_QP_STATE_RTR] = "RTR", [VCX_QP_STATE_RTS] = "RTS",
        [VCX_QP_STATE_SQER] = "SQER", [5] = "?", [VCX_QP_STATE_ERR] = "ERR",
        [VCX_QP_STATE_SQD] = "SQD",
    };

    return st < ARRAY_SIZE(names) ? names[st] : "?";
}

static void vcx_qp_set_state(VcxQp *qp, uint8_t state)
{
    trace_vcx_qp_state(qp->qpn, vcx_qp_state_name(qp->state), vcx_qp_state_name(state));
    vcx_set(qp->qpc, VCX_QPC_STATE, state);
    qp->state = state;
}

/* Check the staged context of a transition. */
static uint8_t vcx_qp_validate(VcxCmd *cmd, const uint8_t *c, uint8_t t)
{
    const uint8_t *ads = c + VCX_QPC_PRI_PATH_AT;
    uint32_t mtu = vcx_get(c, VCX_QPC_MTU);

    if ((t & (T_INIT2RTR | T_RTR2RTS | T_RTS2RTS)) &&
        (mtu < VCX_QP_MTU_256 || mtu > VCX_QP_MTU_4096)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_MTU,
                            "mtu %u not in 1 (256) .. 5 (4096)", mtu);
    }
    if (vcx_get(c, VCX_QPC_LOG_MSG_MAX) > VCX_LOG_MAX_MSG) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_MSG_MAX,
                            "log_msg_max %u > %u", vcx_get(c, VCX_QPC_LOG_MSG_MAX),
                            VCX_LOG_MAX_MSG);
    }
    if (vcx_get(c, VCX_QPC_LOG_SRA_MAX) > VCX_LOG_MAX_RA ||
        vcx_get(c, VCX_QPC_LOG_RRA_MAX) > VCX_LOG_MAX_RA) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_RA_MAX,
                            "log_sra_max %u / log_rra_max %u > %u",
                            vcx_get(c, VCX_QPC_LOG_SRA_MAX),
                            vcx_get(c, VCX_QPC_LOG_RRA_MAX), VCX_LOG_MAX_RA);
    }
    if (vcx_get(ads, VCX_ADS_VHCA_PORT_NUM) > VCX_PORT_NUM) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_PORT,
                            "vhca_port_num %u: the device has port 1 only",
                            vcx_get(ads, VCX_ADS_VHCA_PORT_NUM));
    }
    if (vcx_get(ads, VCX_ADS_PKEY_INDEX)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_PKEY,
                            "pkey_index %u: the P_Key table has one entry",
                            vcx_get(ads, VCX_ADS_PKEY_INDEX));
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_modify_qp(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxQp *qp = vcx_qp_lookup_cmd(s, cmd, &status);
    const uint8_t *in = cmd->in + VCX_QP_IN_QPC_AT;
    uint32_t mask = vcx_get(cmd->in, VCX_QP_IN_OPT_PARAM_MASK);
    const VcxQpTrans *tr = NULL;
    uint8_t staged[VCX_QPC_SIZE];
    uint32_t allowed = 0;

    if (!qp) {
        return status;
    }
    for (size_t i = 0; i < ARRAY_SIZE(vcx_qp_trans); i++) {
        if (vcx_qp_trans[i].opcode == cmd->opcode) {
            tr = &vcx_qp_trans[i];
        }
    }
    assert(tr);
    if (!(tr->from & (1u << qp->state))) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_QP_STATE, SYND_QP_STATE,
                            "QP 0x%x is in %s", qp->qpn, vcx_qp_state_name(qp->state));
    }
    for (size_t i = 0; i < ARRAY_SIZE(vcx_qp_params); i++) {
        const VcxQpParam *p = &vcx_qp_params[i];

        if ((p->sts & (1u << qp->st)) && (p->opt & tr->t)) {
            allowed |= p->opt_bit;
        }
    }
    if (mask & ~allowed) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_OPT_PARAM,
                            "opt_param_mask 0x%x: bits 0x%x not valid here", mask,
                            mask & ~allowed);
    }
    memcpy(staged, qp->qpc, sizeof(staged));
    for (size_t i = 0; i < ARRAY_SIZE(vcx_qp_params); i++) {
        const VcxQpParam *p = &vcx_qp_params[i];
        uint32_t base = p->ads ? VCX_QPC_PRI_PATH_AT : 0;

        if (!(p->sts & (1u << qp->st)) ||
            !((p->req & tr->t) || ((p->opt & tr->t) && (mask & p->opt_bit)))) {
            continue;
        }
        if (p->len) {
            memcpy(staged + base, in + base, p->len);
        } else {
            vcx_set(staged + base, p->fld, vcx_get(in + base, p->fld));
        }
    }
    status = vcx_qp_validate(cmd, staged, tr->t);
    if (status) {
        return status;
    }
    /* An RC/UC/XRC path applied here must name a valid RoCE address (GID table entry). */
    if ((qp->st == VCX_QP_ST_RC || qp->st == VCX_QP_ST_UC || qp->st == VCX_QP_ST_XRC) &&
        (tr->t == T_INIT2RTR || (mask & VCX_QP_OPTPAR_PRIMARY_ADDR_PATH))) {
        uint32_t sidx = vcx_get(staged + VCX_QPC_PRI_PATH_AT, VCX_ADS_SRC_ADDR_INDEX);

        if (!vcx_gid_entry(s, sidx)) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_SRC_ADDR_INDEX,
                                "src_addr_index %u names no RoCE address", sidx);
        }
    }
    /* A context may name no Q counter (0) or an allocated one (the RQs' rule, vcx-nic-rq.c). */
    if ((tr->t == T_RST2INIT || (mask & VCX_QP_OPTPAR_COUNTER_SET_ID)) &&
        vcx_get(staged, VCX_QPC_COUNTER_SET_ID) &&
        !vcx_qc_allocated(s, vcx_get(staged, VCX_QPC_COUNTER_SET_ID))) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_QP_COUNTER_SET_ID,
                            "counter_set_id %u is not allocated",
                            vcx_get(staged, VCX_QPC_COUNTER_SET_ID));
    }
    memcpy(qp->qpc, staged, sizeof(staged));
    vcx_qp_decode(qp);
    switch (tr->t) {
    case T_RST2INIT:
        qp->sq_ci = qp->sq_pi = qp->rq_ci = qp->rq_pi = 0;
        qp->msn = 0;
        break;
    case T_INIT2RTR:
        qp->rq_psn = vcx_get(qp->qpc, VCX_QPC_NEXT_RCV_PSN);
        qp->comm_est = false;
        break;
    case T_RTR2RTS:
        qp->sq_psn = vcx_get(qp->qpc, VCX_QPC_NEXT_SEND_PSN);
        break;
    }
    qp->rnr_left = qp->rnr_retry;
    qp->retry_left = qp->retry_count;
    vcx_qp_set_state(qp, tr->to);
    if (qp->state == VCX_QP_STATE_RTS) {
        /* WQEs posted before RTS start now (queued for the executor, not run here). */
        vcx_xport_kick(s, qp);
    }
    return VCX_CMD_STAT_OK;
}

/*
 * The QP enters ERR: outstanding work is flushed (by the executor, vcx_xport_qp_err());
 * an SRQ user reports its last WQE.
 */
void vcx_qp_to_err(VcxState *s, VcxQp *qp)
{
    if (qp->state == VCX_QP_STATE_ERR) {
        return;
    }
    vcx_qp_set_state(qp, VCX_QP_STATE_ERR);
    if (qp->srq || vcx_qp_is_xrc_tgt(qp)) {
        /* an XRC target receives through SRQs only: it is an SRQ-attached QP */
        vcx_qp_srq_event(s, VCX_EVENT_TYPE_SRQ_LAST_WQE, qp->qpn, VCX_EVENT_QUEUE_TYPE_QP);
    }
    vcx_xport_qp_err(s, qp);
}

uint8_t vcx_cmd_2err_qp(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxQp *qp = vcx_qp_lookup_cmd(s, cmd, &status);

    if (!qp) {
        return status;
    }
    vcx_qp_to_err(s, qp);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_2rst_qp(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxQp *qp = vcx_qp_lookup_cmd(s, cmd, &status);

    if (!qp) {
        return status;
    }
    /*
     * A new incarnation (qp->gen): the WQE it was executing is dropped without a CQE, and
     * a message another QP is sending to it is lost to that sender (vcx_xfer_run).
     */
    vcx_xport_qp_fini(s, qp);
    vcx_xport_qp_init(s, qp);
    qp->sq_ci = qp->sq_pi = qp->rq_ci = qp->rq_pi = 0;
    vcx_qp_set_state(qp, VCX_QP_STATE_RST);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_qp(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxQp *qp = vcx_qp_lookup_cmd(s, cmd, &status);
    uint8_t *c = cmd->out + VCX_QUERY_QP_OUT_QPC_AT;
    uint32_t dbr[2] = { 0, 0 };

    if (!qp) {
        return status;
    }
    vcx_dbr_read(s, qp->dbr_addr + VCX_QP_DBR_RECV, &dbr[0]);
    vcx_dbr_read(s, qp->dbr_addr + VCX_QP_DBR_SEND, &dbr[1]);
    memcpy(c, qp->qpc, VCX_QPC_SIZE);
    vcx_set(c, VCX_QPC_NEXT_SEND_PSN, qp->sq_psn);
    vcx_set(c, VCX_QPC_NEXT_RCV_PSN, qp->rq_psn);
    vcx_set(c, VCX_QPC_HW_SQ_WQEBB_COUNTER, qp->sq_ci);
    vcx_set(c, VCX_QPC_SW_SQ_WQEBB_COUNTER, dbr[1] & VCX_WQE_INDEX_MASK);
    vcx_set(c, VCX_QPC_HW_RQ_COUNTER, qp->rq_ci);
    vcx_set(c, VCX_QPC_SW_RQ_COUNTER, dbr[0] & VCX_WQE_INDEX_MASK);
    vcx_set(c, VCX_QPC_CUR_RNR_RETRY, qp->rnr_left);
    vcx_set(c, VCX_QPC_CUR_RETRY_COUNT, qp->retry_left);
    vcx_qbuf_query_pas(&qp->buf, cmd->out + VCX_QUERY_QP_OUT_PAS_AT,
                       cmd->out_len - VCX_QUERY_QP_OUT_PAS_AT);
    return VCX_CMD_STAT_OK;
}

/*
 * Wire QP numbers. QP1 keeps the number CREATE_QP gave it for commands, doorbells and
 * CQEs; the transport sees it as QP 1 only, so its own number reaches no QP.
 */
uint32_t vcx_qp_wire_qpn(const VcxQp *qp)
{
    return qp->st == VCX_QP_ST_QP1 ? VCX_GSI_WIRE_QPN : qp->qpn;
}

VcxQp *vcx_qp_by_wire_qpn(VcxState *s, uint32_t dqpn)
{
    VcxQp *qp;

    if (dqpn == VCX_GSI_WIRE_QPN) {
        return s->objs->qp1;
    }
    qp = vcx_qp_get(s, dqpn);
    return qp && qp->st != VCX_QP_ST_QP1 ? qp : NULL;
}

void vcx_qp_free(VcxState *s, VcxQp *qp)
{
    if (s->objs->qp1 == qp) {
        s->objs->qp1 = NULL;
    }
    vcx_xport_qp_fini(s, qp);
    vcx_roce_mcg_qp_gone(s, qp->qpn);   /* no group keeps a destroyed QP */
    if (qp->pd) {
        qp->pd->refs--;
    }
    if (qp->scq) {
        qp->scq->refs--;
    }
    if (qp->rcq) {
        qp->rcq->refs--;
    }
    if (qp->srq) {
        qp->srq->refs--;
    }
    if (qp->xrcd) {
        qp->xrcd->refs--;
    }
    vcx_obj_remove(&s->objs->qps, qp->qpn);
    vcx_qbuf_free(&qp->buf);
    g_free(qp);
}

uint8_t vcx_cmd_destroy_qp(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxQp *qp = vcx_qp_lookup_cmd(s, cmd, &status);

    if (!qp) {
        return status;
    }
    trace_vcx_qp_destroy(qp->qpn);
    vcx_qp_free(s, qp);
    return VCX_CMD_STAT_OK;
}
