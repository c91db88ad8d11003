/*
 * vcx: eXtended Reliable Connected transport (IBTA 11.2.7 / annex A14, PRM "XRC Domain",
 * "XRC SRQ"): XRC domains (ALLOC_XRCD, DEALLOC_XRCD), XRC SRQs (CREATE_XRC_SRQ,
 * DESTROY_XRC_SRQ, QUERY_XRC_SRQ, ARM_XRC_SRQ), the XRC rules of CREATE_QP (qpc.st XRC)
 * and the target side's choice of the SRQ a message names.
 *
 * An XRC domain is a number. An XRC SRQ is an SRQ (vcx-srq.c: the same object, number
 * space, linked-list WQEs, limit event and error state) that belongs to a domain and
 * completes its receives on its own CQ; it also has the ISSI 0 form CREATE_SRQ with a
 * non-zero srqc.xrcd. Each family of commands (SRQ, RMP, XRC SRQ) refuses the numbers of
 * the others with BAD_RES_STATE, as firmware keeps them apart.
 *
 * XRC QPs have qpc.st XRC. An initiator (no_sq 0) has a send queue as an RC QP and no
 * receive queue; each of its send WQEs carries the XRC segment (prm-wqe.h) naming the
 * XRC SRQ at the far end. A target (no_sq 1) has neither queue of its own: it names a
 * domain, and a message for it (vcx-xport.c) is served by the SRQ the message names,
 * which must be an XRC SRQ of that domain and not in error; otherwise the message is an
 * invalid request (IBTA: invalid XRCETH / XRC domain violation): nothing is consumed,
 * the requester gets an Invalid Request NAK, the target goes to ERR. Receives complete
 * on that SRQ's CQ, and memory keys of WRITE/READ/ATOMIC are checked against that SRQ's
 * PD (IBTA 11.2.7: the XRC responder uses the PD of the XRC SRQ).
 *
 * Lifetimes: an XRC SRQ holds its domain, CQ and PD; a QP holds the domain it names. A
 * target does not hold the SRQs its messages name (any SRQ of its domain, by number),
 * so the engine names them by number and incarnation (srq->gen) across runs and looks
 * again before it writes a CQE (vcx-resp.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "vcx-obj.h"
#include "trace.h"

enum {
    SYND_XRCD_LIMIT = 1,
    SYND_XRCD_NONE,
    SYND_XRCD_IN_USE,
    SYND_XRC_SRQ_UNSUPPORTED,
    SYND_XRC_SRQ_NONE,
    SYND_XRC_SRQ_IN_USE,
};

/* CREATE_QP syndromes of the XRC checks: above those of vcx-qp.c. */
enum {
    SYND_XRC_QP_RQ_TYPE = 0x40,
    SYND_XRC_QP_XRCD,
    SYND_XRC_QP_CQN,
};

VcxXrcd *vcx_xrcd_get(VcxState *s, uint32_t xrcdn)
{
    return vcx_obj_get(&s->objs->xrcds, xrcdn);
}

/*
 * XRC domains
 */

uint8_t vcx_cmd_alloc_xrcd(VcxState *s, VcxCmd *cmd)
{
    VcxXrcd *x = g_new0(VcxXrcd, 1);

    if (!vcx_obj_alloc(&s->objs->xrcds, x, &x->xrcdn)) {
        g_free(x);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_XRCD_LIMIT,
                            "all %u XRC domains in use", s->objs->xrcds.size - 1);
    }
    vcx_set(cmd->out, VCX_ALLOC_XRCD_OUT_XRCD, x->xrcdn);
    trace_vcx_xrcd_alloc(x->xrcdn);
    return VCX_CMD_STAT_OK;
}

void vcx_xrcd_free(VcxState *s, VcxXrcd *x)
{
    vcx_obj_remove(&s->objs->xrcds, x->xrcdn);
    g_free(x);
}

uint8_t vcx_cmd_dealloc_xrcd(VcxState *s, VcxCmd *cmd)
{
    uint32_t n = vcx_get(cmd->in, VCX_DEALLOC_XRCD_IN_XRCD);
    VcxXrcd *x = vcx_xrcd_get(s, n);

    if (!x) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_XRCD_NONE,
                            "XRCD 0x%x not allocated", n);
    }
    if (x->refs) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_XRCD_IN_USE,
                            "XRCD 0x%x still named by %u SRQs and QPs", n, x->refs);
    }
    trace_vcx_xrcd_dealloc(n);
    vcx_xrcd_free(s, x);
    return VCX_CMD_STAT_OK;
}

/*
 * XRC SRQs (ISSI 1 commands, also accepted at ISSI 0: they have no ISSI 0 twin but the
 * CREATE_SRQ form)
 */

static const VcxSrqcLayout vcx_xrc_srqc_layout = {
    .state = VCX_XRC_SRQC_STATE, .log_size = VCX_XRC_SRQC_LOG_SIZE,
    .log_stride = VCX_XRC_SRQC_LOG_RQ_STRIDE, .xrcd = VCX_XRC_SRQC_XRCD,
    .page_offset = VCX_XRC_SRQC_PAGE_OFFSET, .cqn = VCX_XRC_SRQC_CQN,
    .log_page_size = VCX_XRC_SRQC_LOG_PAGE_SIZE, .pd = VCX_XRC_SRQC_PD,
    .lwm = VCX_XRC_SRQC_LWM, .wqe_cnt = VCX_XRC_SRQC_WQE_CNT,
    .dbr = VCX_XRC_SRQC_DBR_ADDR, .user_index = VCX_XRC_SRQC_USER_INDEX,
};

uint8_t vcx_cmd_create_xrc_srq(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *c = cmd->in + VCX_CREATE_XRC_SRQ_IN_CTX;
    VcxSrqParams p = {
        .pas = cmd->in + VCX_CREATE_XRC_SRQ_IN_PAS,
        .pas_room = cmd->in_len - VCX_CREATE_XRC_SRQ_IN_PAS,
    };
    uint32_t srqn;
    uint8_t status;

    vcx_srqc_parse(&vcx_xrc_srqc_layout, c, &p);
    /* db_record_addr_l bits 1:0 are reserved: not part of the address */
    p.dbr &= ~3ull;
    if (vcx_get(c, VCX_XRC_SRQC_WQ_SIGNATURE) || vcx_get(c, VCX_XRC_SRQC_CONT_SRQ) ||
        vcx_get(c, VCX_XRC_SRQC_RLKY) || vcx_get(c, VCX_XRC_SRQC_BASIC_CYCLIC) ||
        vcx_get(c, VCX_XRC_SRQC_DBR_UMEM_VALID) ||
        vcx_get(cmd->in, VCX_CREATE_XRC_SRQ_IN_UMEM_VALID) ||
        vcx_get(c, VCX_XRC_SRQC_UIDX_EQ_SRQN)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_XRC_SRQ_UNSUPPORTED,
                            "wq_signature, cont_srq, rlky, basic_cyclic_rcv_wqe, umem and "
                            "user_index_equal_xrc_srqn not supported");
    }
    /* xrcd and cqn must exist: checked with the SRQ's other fields */
    status = vcx_srq_create(s, cmd, &p, false, true, &srqn);
    if (status == VCX_CMD_STAT_OK) {
        vcx_set(cmd->out, VCX_CREATE_XRC_SRQ_OUT_SRQN, srqn);
    }
    return status;
}

static VcxSrq *vcx_xrc_srq_lookup_cmd(VcxState *s, VcxCmd *cmd, uint8_t *status)
{
    uint32_t n = vcx_get(cmd->in, VCX_XRC_SRQ_IN_SRQN);
    VcxSrq *srq = vcx_srq_get(s, n);

    if (!srq || !srq->xrc) {
        *status = vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_XRC_SRQ_NONE,
                               "XRC SRQ 0x%x does not exist%s", n,
                               srq ? " (the number is an SRQ or RMP)" : "");
        return NULL;
    }
    return srq;
}

uint8_t vcx_cmd_destroy_xrc_srq(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxSrq *srq = vcx_xrc_srq_lookup_cmd(s, cmd, &status);

    if (!srq) {
        return status;
    }
    if (srq->refs) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_XRC_SRQ_IN_USE,
                            "XRC SRQ 0x%x still used by %u QPs", srq->srqn, srq->refs);
    }
    trace_vcx_xrc_srq_destroy(srq->srqn);
    vcx_srq_free(s, srq);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_xrc_srq(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxSrq *srq = vcx_xrc_srq_lookup_cmd(s, cmd, &status);
    uint8_t *c = cmd->out + VCX_QUERY_XRC_SRQ_OUT_CTX;

    if (!srq) {
        return status;
    }
    vcx_srqc_query(s, &vcx_xrc_srqc_layout, srq, c);
    vcx_qbuf_query_pas(&srq->buf, cmd->out + VCX_QUERY_XRC_SRQ_OUT_PAS,
                       cmd->out_len - VCX_QUERY_XRC_SRQ_OUT_PAS);
    return VCX_CMD_STAT_OK;
}

/* op_mod 1 (XRC SRQ) only: the command table refuses others with BAD_PARAM. */
uint8_t vcx_cmd_arm_xrc_srq(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxSrq *srq = vcx_xrc_srq_lookup_cmd(s, cmd, &status);

    if (!srq) {
        return status;
    }
    return vcx_srq_set_lwm(cmd, srq, vcx_get(cmd->in, VCX_ARM_XRC_SRQ_IN_LWM));
}

/*
 * XRC QPs
 */

/*
 * CREATE_QP with st XRC, after the checks common to all QPs. Initiator (no_sq 0): a send
 * queue as RC (its cqn_snd checked by CREATE_QP), no receive queue (rq_type 3), cqn_rcv
 * 0 or an existing CQ, xrcd 0 or an existing domain. Target (no_sq 1): rq_type 3, or 1
 * with an existing SRQ (what mlx5_ib passes; XRC traffic ignores it), an existing domain,
 * CQ numbers 0 or existing.
 */
uint8_t vcx_xrc_qp_check(VcxState *s, VcxCmd *cmd, const uint8_t *qpc, VcxXrcd **xrcd)
{
    bool target = vcx_get(qpc, VCX_QPC_NO_SQ);
    uint32_t rq_type = vcx_get(qpc, VCX_QPC_RQ_TYPE);
    uint32_t xrcdn = vcx_get(qpc, VCX_QPC_XRCD);
    uint32_t cqn_snd = vcx_get(qpc, VCX_QPC_CQN_SND);
    uint32_t cqn_rcv = vcx_get(qpc, VCX_QPC_CQN_RCV);
    VcxXrcd *x = vcx_xrcd_get(s, xrcdn);

    if (rq_type != VCX_QP_RQ_TYPE_ZERO_SIZE && (!target || rq_type != VCX_QP_RQ_TYPE_SRQ)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_XRC_QP_RQ_TYPE,
                            "rq_type %u: an XRC %s has no receive queue (rq_type 3%s)",
                            rq_type, target ? "target" : "initiator",
                            target ? ", or 1 with an SRQ" : "");
    }
    if (!x && (target || xrcdn)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_XRC_QP_XRCD,
                            "xrcd 0x%x not allocated", xrcdn);
    }
    if ((cqn_rcv && !vcx_cq_get(s, cqn_rcv)) || (cqn_snd && !vcx_cq_get(s, cqn_snd))) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_XRC_QP_CQN,
                            "cqn_snd 0x%x / cqn_rcv 0x%x: a CQ that does not exist",
                            cqn_snd, cqn_rcv);
    }
    *xrcd = x;
    return VCX_CMD_STAT_OK;
}

VcxSrq *vcx_xrc_target_srq(VcxState *s, VcxQp *qp, uint32_t srqn, const char **why)
{
    VcxSrq *srq = vcx_srq_get(s, srqn);

    if (!srq) {
        *why = "no SRQ of that number";
    } else if (!srq->xrcd) {
        *why = "not an XRC SRQ";
    } else if (!qp->xrcd || srq->xrcd != qp->xrcd->xrcdn) {
        *why = "XRC SRQ of another XRC domain";
    } else if (srq->error) {
        *why = "XRC SRQ in error";
    } else {
        trace_vcx_xrc_recv(qp->qpn, srqn, srq->cqn, srq->pdn);
        return srq;
    }
    return NULL;
}

/*
 * The responder's invalid request (IBTA 9.7.5.2.3 / 9.9.2): the target QP reports the
 * invalid request local WQ error (event 0x10) and goes to ERR; the caller NAKs.
 */
void vcx_xrc_invalid_request(VcxState *s, VcxQp *qp, uint32_t srqn, const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR, "vcx: XRC target QP 0x%x: message names XRC SRQ 0x%x: "
                  "%s: invalid request, QP goes to error\n", qp->qpn, srqn, why);
    trace_vcx_err_xrc(qp->qpn, srqn, why);
    vcx_qp_srq_event(s, VCX_EVENT_TYPE_WQ_INVAL_REQ_ERROR, qp->qpn,
                     VCX_EVENT_QUEUE_TYPE_QP);
    vcx_qp_to_err(s, qp);
}
