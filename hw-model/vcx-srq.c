/*
 * vcx: shared receive queues. ISSI 0 commands CREATE_SRQ, DESTROY_SRQ, QUERY_SRQ and
 * ARM_RQ (srqc); ISSI 1 commands CREATE_RMP, MODIFY_RMP, QUERY_RMP and DESTROY_RMP
 * (rmpc + wq). Both create the same object in one number space (srqn_rmpn_xrqn), so a QP
 * names either; each family only destroys, queries and arms its own kind. XRC SRQs
 * (vcx-xrc.c) share the number space too. CREATE_SRQ with a non-zero srqc.xrcd makes
 * the ISSI 0 form of an XRC SRQ: xrcd and cqn must exist and are held (vcx_srq_create);
 * with xrcd 0 both are stored only, as a basic SRQ completes on its QPs' CQs.
 *
 * WQEs (PRM "SRQ WQE"): 2^log_size WQEs of 2^log_stride bytes, each starting with a
 * 16-byte next segment whose next_wqe_index links the list, then data segments ended by
 * INVALID_LKEY or by the stride. Software's only signal of new WQEs is the 16-bit running
 * counter in the 4-byte doorbell record; the device consumes WQEs while that counter is
 * ahead of its own consumed count, starting at WQE 0 and following next_wqe_index, and
 * reports the consumed WQE's index in the CQE (wqe_counter) with the SRQ number (srqn).
 *
 * Limit: when a consumption leaves fewer than lwm posted-but-unconsumed WQEs, the device
 * reports SRQ_RQ_LIMIT (event 0x14) once and disarms (lwm becomes 0, as QUERY shows);
 * ARM_RQ (op_mod 1) or MODIFY_RMP (bitmask.lwm) re-arms it. An unreadable doorbell record
 * or WQE puts the SRQ in error and reports SRQ_CATAS_ERROR (event 0x12).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "vcx-obj.h"
#include "trace.h"

enum {
    SYND_SRQ_UMEM = 1,
    SYND_SRQ_LOG_SIZE,
    SYND_SRQ_STRIDE,
    SYND_SRQ_UNSUPPORTED,
    SYND_SRQ_PD,
    SYND_SRQ_LOG_PAGE_SIZE,
    SYND_SRQ_DBR_ALIGN,
    SYND_SRQ_PAS_SHORT,
    SYND_SRQ_PAS_ALIGN,
    SYND_SRQ_LIMIT,
    SYND_SRQ_NONE,
    SYND_SRQ_IN_USE,
    SYND_SRQ_LWM,
    SYND_SRQ_STATE,
    SYND_SRQ_WQ_TYPE,
    SYND_SRQ_BITMASK,
    SYND_SRQ_XRCD,
    SYND_SRQ_CQN,
};

#define VCX_SRQ_MIN_LOG_STRIDE  5       /* next segment and one data segment */
#define VCX_SRQ_MAX_LOG_STRIDE  9       /* max_wqe_sz_rq */

/*
 * An XRC SRQ (CREATE_XRC_SRQ, or CREATE_SRQ with a non-zero xrcd) belongs to an XRC domain
 * and completes its receives on its own CQ, as XRC target QPs have no receive queue of
 * their own (IBTA 11.2.7 / PRM "XRC SRQ"): both must exist and are held while it lives.
 */
uint8_t vcx_srq_create(VcxState *s, VcxCmd *cmd, const VcxSrqParams *p, bool rmp, bool xrc,
                       uint32_t *srqn)
{
    VcxPd *pd = vcx_pd_get(s, p->pdn);
    bool in_domain = xrc || p->xrcd;
    VcxXrcd *xrcd = in_domain ? vcx_xrcd_get(s, p->xrcd) : NULL;
    VcxCq *cq = in_domain ? vcx_cq_get(s, p->cqn) : NULL;
    VcxQBuf buf = { 0 };
    uint8_t status;
    VcxSrq *srq;

    if (p->log_size > VCX_LOG_MAX_SRQ_SZ) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_LOG_SIZE,
                            "log size %u > log_max_srq_sz %u", p->log_size,
                            VCX_LOG_MAX_SRQ_SZ);
    }
    if (p->log_stride < VCX_SRQ_MIN_LOG_STRIDE || p->log_stride > VCX_SRQ_MAX_LOG_STRIDE) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_STRIDE,
                            "WQE stride 2^%u outside [2^%u, 2^%u]", p->log_stride,
                            VCX_SRQ_MIN_LOG_STRIDE, VCX_SRQ_MAX_LOG_STRIDE);
    }
    if (!pd) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_PD,
                            "pd 0x%x not allocated", p->pdn);
    }
    if (in_domain && !xrcd) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_XRCD,
                            "xrcd 0x%x not allocated", p->xrcd);
    }
    if (in_domain && !cq) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_CQN,
                            "cqn 0x%x of an XRC SRQ does not exist", p->cqn);
    }
    if (p->log_page > VCX_MAX_LOG_PAGE_SIZE) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_LOG_PAGE_SIZE,
                            "log_page_size %u > %u", p->log_page, VCX_MAX_LOG_PAGE_SIZE);
    }
    if (p->dbr & (VCX_DBR_ALIGN - 1)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_DBR_ALIGN,
                            "dbr_addr 0x%" PRIx64 " not 8-byte aligned", p->dbr);
    }
    if (p->lwm > (1u << p->log_size)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_LWM,
                            "lwm %u > %u WQEs", p->lwm, 1u << p->log_size);
    }
    status = vcx_qbuf_parse(cmd, &buf, p->pas, p->pas_room, p->log_page, p->page_offset,
                            (uint64_t)1 << (p->log_stride + p->log_size),
                            SYND_SRQ_PAS_SHORT, SYND_SRQ_PAS_ALIGN);
    if (status) {
        return status;
    }
    srq = g_new0(VcxSrq, 1);
    if (!vcx_obj_alloc(&s->objs->srqs, srq, &srq->srqn)) {
        vcx_qbuf_free(&buf);
        g_free(srq);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_SRQ_LIMIT,
                            "all SRQs in use");
    }
    srq->rmp = rmp;
    srq->xrc = xrc;
    srq->gen = ++s->objs->qp_gen;
    srq->user_index = p->user_index;
    srq->log_size = p->log_size;
    srq->log_stride = p->log_stride;
    srq->log_page_size = p->log_page;
    srq->page_offset = p->page_offset;
    srq->pdn = p->pdn;
    srq->xrcd = p->xrcd;
    srq->cqn = p->cqn;
    srq->uar_page = p->uar;
    srq->lwm = p->lwm;
    srq->dbr_addr = p->dbr;
    srq->buf = buf;
    pd->refs++;
    if (xrcd) {
        xrcd->refs++;
        cq->refs++;
    }
    *srqn = srq->srqn;
    trace_vcx_srq_create(srq->srqn, rmp, p->log_size, p->log_stride, p->lwm);
    if (in_domain) {
        trace_vcx_xrc_srq_create(srq->srqn, xrc, p->xrcd, p->cqn, p->pdn);
    }
    return VCX_CMD_STAT_OK;
}

void vcx_srq_free(VcxState *s, VcxSrq *srq)
{
    VcxPd *pd = vcx_pd_get(s, srq->pdn);
    VcxXrcd *xrcd = srq->xrcd ? vcx_xrcd_get(s, srq->xrcd) : NULL;
    VcxCq *cq = xrcd ? vcx_cq_get(s, srq->cqn) : NULL;

    if (pd) {
        pd->refs--;
    }
    if (xrcd) {
        xrcd->refs--;
    }
    if (cq) {
        cq->refs--;
    }
    vcx_obj_remove(&s->objs->srqs, srq->srqn);
    vcx_qbuf_free(&srq->buf);
    g_free(srq);
}

static VcxSrq *vcx_srq_lookup_cmd(VcxState *s, VcxCmd *cmd, uint32_t n, bool rmp,
                                  uint8_t *status)
{
    VcxSrq *srq = vcx_srq_get(s, n);

    if (!srq || srq->rmp != rmp || srq->xrc) {
        *status = vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_SRQ_NONE,
                               "%s 0x%x does not exist", rmp ? "RMP" : "SRQ", n);
        return NULL;
    }
    return srq;
}

static uint8_t vcx_srq_destroy(VcxState *s, VcxCmd *cmd, bool rmp)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxSrq *srq = vcx_srq_lookup_cmd(s, cmd, vcx_get(cmd->in, VCX_OBJ_NUMBER), rmp,
                                     &status);

    if (!srq) {
        return status;
    }
    if (srq->refs) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_SRQ_IN_USE,
                            "0x%x still used by %u QPs", srq->srqn, srq->refs);
    }
    trace_vcx_srq_destroy(srq->srqn);
    vcx_srq_free(s, srq);
    return VCX_CMD_STAT_OK;
}

uint16_t vcx_srq_sw_counter(VcxState *s, VcxSrq *srq)
{
    uint32_t v = 0;

    vcx_dbr_read(s, srq->dbr_addr + VCX_SRQ_DBR_COUNTER, &v);
    return v & VCX_WQE_INDEX_MASK;
}

/*
 * ISSI 0: CREATE_SRQ / DESTROY_SRQ / QUERY_SRQ / ARM_RQ
 */

static const VcxSrqcLayout vcx_srqc_layout = {
    .state = VCX_SRQC_STATE, .log_size = VCX_SRQC_LOG_SRQ_SIZE,
    .log_stride = VCX_SRQC_LOG_RQ_STRIDE, .xrcd = VCX_SRQC_XRCD,
    .page_offset = VCX_SRQC_PAGE_OFFSET, .cqn = VCX_SRQC_CQN,
    .log_page_size = VCX_SRQC_LOG_PAGE_SIZE, .pd = VCX_SRQC_PD, .lwm = VCX_SRQC_LWM,
    .wqe_cnt = VCX_SRQC_WQE_CNT, .dbr = VCX_SRQC_DBR_ADDR,
};

/* The fields of an SRQ context, as CREATE_SRQ and CREATE_XRC_SRQ give them. */
void vcx_srqc_parse(const VcxSrqcLayout *l, const uint8_t *c, VcxSrqParams *p)
{
    p->log_size = vcx_get(c, l->log_size);
    p->log_stride = vcx_get(c, l->log_stride) + 4;
    p->log_page = vcx_get(c, l->log_page_size);
    p->page_offset = vcx_get(c, l->page_offset);
    p->pdn = vcx_get(c, l->pd);
    p->lwm = vcx_get(c, l->lwm);
    p->xrcd = vcx_get(c, l->xrcd);
    p->cqn = vcx_get(c, l->cqn);
    p->user_index = l->user_index.width ? vcx_get(c, l->user_index) : 0;
    p->dbr = vcx_get64(c, l->dbr);
}

/* QUERY_SRQ / QUERY_XRC_SRQ: the context as created, with state and the WQE count. */
void vcx_srqc_query(VcxState *s, const VcxSrqcLayout *l, VcxSrq *srq, uint8_t *c)
{
    vcx_set(c, l->state, srq->error ? VCX_SRQC_STATE_ERROR : VCX_SRQC_STATE_GOOD);
    vcx_set(c, l->log_size, srq->log_size);
    vcx_set(c, l->log_stride, srq->log_stride - 4);
    vcx_set(c, l->xrcd, srq->xrcd);
    vcx_set(c, l->page_offset, srq->page_offset);
    vcx_set(c, l->cqn, srq->cqn);
    vcx_set(c, l->log_page_size, srq->log_page_size);
    if (l->user_index.width) {
        vcx_set(c, l->user_index, srq->user_index);
    }
    vcx_set(c, l->pd, srq->pdn);
    vcx_set(c, l->lwm, srq->lwm);
    vcx_set(c, l->wqe_cnt, (vcx_srq_sw_counter(s, srq) - srq->consumed) &
                           VCX_WQE_INDEX_MASK);
    vcx_set64(c, l->dbr, srq->dbr_addr);
}

uint8_t vcx_cmd_create_srq(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *c = cmd->in + VCX_CREATE_SRQ_IN_SRQC_AT;
    VcxSrqParams p = {
        .pas = cmd->in + VCX_CREATE_SRQ_IN_PAS_AT,
        .pas_room = cmd->in_len - VCX_CREATE_SRQ_IN_PAS_AT,
    };
    uint32_t srqn;
    uint8_t status;

    vcx_srqc_parse(&vcx_srqc_layout, c, &p);
    if (vcx_get(c, VCX_SRQC_WQ_SIGNATURE) || vcx_get(c, VCX_SRQC_CONT_SRQ)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_UNSUPPORTED,
                            "wq_signature / cont_srq not supported");
    }
    status = vcx_srq_create(s, cmd, &p, false, false, &srqn);
    if (status == VCX_CMD_STAT_OK) {
        vcx_set(cmd->out, VCX_CREATE_SRQ_OUT_SRQN, srqn);
    }
    return status;
}

uint8_t vcx_cmd_destroy_srq(VcxState *s, VcxCmd *cmd)
{
    return vcx_srq_destroy(s, cmd, false);
}

uint8_t vcx_cmd_query_srq(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxSrq *srq = vcx_srq_lookup_cmd(s, cmd, vcx_get(cmd->in, VCX_OBJ_NUMBER), false,
                                     &status);
    uint8_t *c = cmd->out + VCX_QUERY_SRQ_OUT_SRQC_AT;

    if (!srq) {
        return status;
    }
    vcx_srqc_query(s, &vcx_srqc_layout, srq, c);
    vcx_qbuf_query_pas(&srq->buf, cmd->out + VCX_QUERY_SRQ_OUT_PAS_AT,
                       cmd->out_len - VCX_QUERY_SRQ_OUT_PAS_AT);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_srq_set_lwm(VcxCmd *cmd, VcxSrq *srq, uint32_t lwm)
{
    if (lwm > (1u << srq->log_size)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_LWM,
                            "lwm %u > %u WQEs", lwm, 1u << srq->log_size);
    }
    srq->lwm = lwm;
    trace_vcx_srq_arm(srq->srqn, lwm);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_arm_rq(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxSrq *srq = vcx_srq_lookup_cmd(s, cmd, vcx_get(cmd->in, VCX_ARM_RQ_IN_SRQ_NUMBER),
                                     false, &status);

    if (!srq) {
        return status;
    }
    return vcx_srq_set_lwm(cmd, srq, vcx_get(cmd->in, VCX_ARM_RQ_IN_LWM));
}

/*
 * ISSI 1: CREATE_RMP / MODIFY_RMP / QUERY_RMP / DESTROY_RMP
 */

uint8_t vcx_cmd_create_rmp(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *rmpc = cmd->in + VCX_CREATE_RMP_IN_RMPC_AT;
    const uint8_t *wq = rmpc + VCX_RMPC_WQ_AT;
    uint32_t pas_at = VCX_CREATE_RMP_IN_RMPC_AT + VCX_RMPC_WQ_AT + VCX_WQ_PAS_AT;
    VcxSrqParams p = {
        .log_size = vcx_get(wq, VCX_WQ_LOG_WQ_SZ),
        .log_stride = vcx_get(wq, VCX_WQ_LOG_WQ_STRIDE),
        .log_page = vcx_get(wq, VCX_WQ_LOG_WQ_PG_SZ),
        .page_offset = vcx_get(wq, VCX_WQ_PAGE_OFFSET),
        .pdn = vcx_get(wq, VCX_WQ_PD),
        .lwm = vcx_get(wq, VCX_WQ_LWM),
        .uar = vcx_get(wq, VCX_WQ_UAR_PAGE),
        .dbr = vcx_get64(wq, VCX_WQ_DBR_ADDR),
        .pas = cmd->in + pas_at,
        .pas_room = cmd->in_len - pas_at,
    };
    uint32_t rmpn;
    uint8_t status;

    if (vcx_get(wq, VCX_WQ_DBR_UMEM_VALID) || vcx_get(wq, VCX_WQ_WQ_UMEM_VALID)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_UMEM,
                            "umem not supported");
    }
    if (vcx_get(rmpc, VCX_RMPC_STATE) != VCX_RMPC_STATE_RDY) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_STATE,
                            "rmpc.state %u: an RMP is created ready (1)",
                            vcx_get(rmpc, VCX_RMPC_STATE));
    }
    if (vcx_get(wq, VCX_WQ_WQ_TYPE) != VCX_WQ_TYPE_LINKED_LIST ||
        vcx_get(rmpc, VCX_RMPC_BASIC_CYCLIC_RCV_WQE)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_WQ_TYPE,
                            "wq_type %u / basic_cyclic_rcv_wqe %u: only linked-list "
                            "WQEs are supported", vcx_get(wq, VCX_WQ_WQ_TYPE),
                            vcx_get(rmpc, VCX_RMPC_BASIC_CYCLIC_RCV_WQE));
    }
    if (vcx_get(wq, VCX_WQ_WQ_SIGNATURE) || vcx_get(wq, VCX_WQ_CD_SLAVE)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_UNSUPPORTED,
                            "wq_signature / cd_slave not supported");
    }
    status = vcx_srq_create(s, cmd, &p, true, false, &rmpn);
    if (status == VCX_CMD_STAT_OK) {
        vcx_set(cmd->out, VCX_CREATE_RMP_OUT_RMPN, rmpn);
    }
    return status;
}

uint8_t vcx_cmd_modify_rmp(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxSrq *srq = vcx_srq_lookup_cmd(s, cmd, vcx_get(cmd->in, VCX_MODIFY_RMP_IN_RMPN), true,
                                     &status);
    const uint8_t *rmpc = cmd->in + VCX_MODIFY_RMP_IN_RMPC_AT;
    uint64_t bitmask = vcx_get64(cmd->in, VCX_MODIFY_RMP_IN_BITMASK);
    uint32_t cur = vcx_get(cmd->in, VCX_MODIFY_RMP_IN_RMP_STATE);
    uint32_t want = vcx_get(rmpc, VCX_RMPC_STATE);
    uint32_t have = srq ? (srq->error ? VCX_RMPC_STATE_ERR : VCX_RMPC_STATE_RDY) : 0;

    if (!srq) {
        return status;
    }
    if (cur != have || want != VCX_RMPC_STATE_RDY || have != VCX_RMPC_STATE_RDY) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_SRQ_STATE,
                            "rmp_state %u -> %u, RMP is %u: only RDY -> RDY", cur, want,
                            have);
    }
    if (bitmask & ~1ull) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SRQ_BITMASK,
                            "bitmask 0x%" PRIx64 ": only lwm can be modified", bitmask);
    }
    if (bitmask & 1) {
        return vcx_srq_set_lwm(cmd, srq, vcx_get(rmpc + VCX_RMPC_WQ_AT, VCX_WQ_LWM));
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_rmp(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = VCX_CMD_STAT_OK;
    VcxSrq *srq = vcx_srq_lookup_cmd(s, cmd, vcx_get(cmd->in, VCX_OBJ_NUMBER), true,
                                     &status);
    uint8_t *rmpc = cmd->out + VCX_QUERY_RMP_OUT_RMPC_AT;
    uint8_t *wq = rmpc + VCX_RMPC_WQ_AT;
    uint32_t pas_at = VCX_QUERY_RMP_OUT_RMPC_AT + VCX_RMPC_WQ_AT + VCX_WQ_PAS_AT;

    if (!srq) {
        return status;
    }
    vcx_set(rmpc, VCX_RMPC_STATE, srq->error ? VCX_RMPC_STATE_ERR : VCX_RMPC_STATE_RDY);
    vcx_set(wq, VCX_WQ_WQ_TYPE, VCX_WQ_TYPE_LINKED_LIST);
    vcx_set(wq, VCX_WQ_PAGE_OFFSET, srq->page_offset);
    vcx_set(wq, VCX_WQ_LWM, srq->lwm);
    vcx_set(wq, VCX_WQ_PD, srq->pdn);
    vcx_set(wq, VCX_WQ_UAR_PAGE, srq->uar_page);
    vcx_set64(wq, VCX_WQ_DBR_ADDR, srq->dbr_addr);
    vcx_set(wq, VCX_WQ_HW_COUNTER, srq->consumed);
    vcx_set(wq, VCX_WQ_SW_COUNTER, vcx_srq_sw_counter(s, srq));
    vcx_set(wq, VCX_WQ_LOG_WQ_STRIDE, srq->log_stride);
    vcx_set(wq, VCX_WQ_LOG_WQ_PG_SZ, srq->log_page_size);
    vcx_set(wq, VCX_WQ_LOG_WQ_SZ, srq->log_size);
    vcx_qbuf_query_pas(&srq->buf, cmd->out + pas_at, cmd->out_len - pas_at);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_destroy_rmp(VcxState *s, VcxCmd *cmd)
{
    return vcx_srq_destroy(s, cmd, true);
}

/*
 * Data path
 */

void vcx_qp_srq_event(VcxState *s, uint8_t type, uint32_t number, uint8_t queue_type)
{
    uint8_t eqe[VCX_EQE_SIZE] = { 0 };

    vcx_set(eqe, VCX_EQE_QP_SRQ_TYPE, queue_type);
    vcx_set(eqe, VCX_EQE_QP_SRQ_NUMBER, number);
    trace_vcx_qp_srq_event(type, number);
    vcx_eq_post_event(s, type, 0, vcx_cptr(eqe, VCX_EQE_DATA), VCX_EQE_DATA.width / 8);
}

/*
 * Communication Established (IBTA 11.6.3.1, PRM event 0x02): the first packet a
 * connected QP accepts while in RTR, once per INIT2RTR. The connection manager of the
 * passive side takes it as the connection's establishment when the RTU MAD is late or
 * lost (ib_cm's notify path), so a ULP on it does not wait for a retransmitted REP.
 */
void vcx_qp_comm_est(VcxState *s, VcxQp *qp)
{
    if (qp->state != VCX_QP_STATE_RTR || qp->comm_est || vcx_qp_is_dgram(qp)) {
        return;
    }
    qp->comm_est = true;
    vcx_qp_srq_event(s, VCX_EVENT_TYPE_COMM_EST, qp->qpn, VCX_EVENT_QUEUE_TYPE_QP);
}

static void vcx_srq_catas(VcxState *s, VcxSrq *srq, const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR, "vcx: SRQ 0x%x: %s: SRQ goes to error\n", srq->srqn,
                  why);
    trace_vcx_err_srq(srq->srqn, why);
    srq->error = true;
    vcx_qp_srq_event(s, VCX_EVENT_TYPE_SRQ_CATAS_ERROR, srq->srqn, VCX_EVENT_QUEUE_TYPE_RQ);
}

int vcx_srq_pop(VcxState *s, VcxSrq *srq, uint8_t *wqe, uint16_t *index)
{
    uint32_t stride = 1u << srq->log_stride;
    uint32_t counter;
    uint16_t avail;

    if (srq->error) {
        return -1;
    }
    /*
     * The doorbell record is read again only when the WQEs it last announced are used
     * up, or when the limit is armed and this pop could cross it (the event must see
     * what software has posted since).
     */
    avail = (srq->counter - srq->consumed) & VCX_WQE_INDEX_MASK;
    if (!avail || (srq->lwm && avail <= srq->lwm)) {
        if (vcx_dbr_read(s, srq->dbr_addr + VCX_SRQ_DBR_COUNTER, &counter) != MEMTX_OK) {
            vcx_srq_catas(s, srq, "doorbell record not readable");
            return -1;
        }
        srq->counter = counter & VCX_WQE_INDEX_MASK;
        avail = (srq->counter - srq->consumed) & VCX_WQE_INDEX_MASK;
        if (!avail) {
            return 0;
        }
        if (avail > (1u << srq->log_size)) {
            qemu_log_mask(LOG_GUEST_ERROR, "vcx: SRQ 0x%x doorbell counter 0x%x is %u "
                          "WQEs ahead of the %u the SRQ holds\n", srq->srqn, counter,
                          avail, 1u << srq->log_size);
            trace_vcx_err_srq(srq->srqn, "counter beyond the queue size");
        }
    }
    if (vcx_qbuf_read(s, &srq->buf, (uint64_t)srq->head * stride, wqe, stride) !=
        MEMTX_OK) {
        vcx_srq_catas(s, srq, "WQE not readable");
        return -1;
    }
    *index = srq->head;
    srq->head = vcx_srq_next_get(wqe);
    srq->consumed++;
    avail--;
    trace_vcx_srq_pop(srq->srqn, *index, srq->head, avail);
    if (srq->lwm && avail < srq->lwm) {
        srq->lwm = 0;
        vcx_qp_srq_event(s, VCX_EVENT_TYPE_SRQ_RQ_LIMIT, srq->srqn, VCX_EVENT_QUEUE_TYPE_RQ);
    }
    return 1;
}
