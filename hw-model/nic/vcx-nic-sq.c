/*
 * vcx: Ethernet send queues: CREATE/MODIFY/QUERY/DESTROY_SQ (PRM "Send Queue"), and the
 * work queue (wq) checks SQs and RQs share.
 *
 * An SQ is a cyclic ring of 64-byte WQEBBs on one TIS or none (tis_lst_sz 0: mlx5e's
 * internal control SQs; its frames have no transport domain), completing on one CQ; its
 * doorbell record's second dword holds the producer counter, rung through the UAR
 * BlueFlame register as for a QP. States RST -> RDY -> ERR as in sqc.state: MODIFY_SQ
 * moves RST->RDY, RDY->RDY, RDY/ERR->ERR and any state to RST, and the current state in
 * the input (sq_state) must be the SQ's. An SQ entering ERR with flush_in_error_en set
 * completes the WQEs still posted with WR_FLUSH_ERR CQEs (vcx-nic-tx.c). Back to RST,
 * its counters restart at 0. What the device does not implement is refused: multi-packet
 * WQEs, SWP, hairpin, UMR, TLS, rate limits, QoS groups, user indexes, more than one TIS,
 * timestamps other than free running, strides other than 64 bytes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/vcx/trace.h"
#include "vcx-nic.h"

/* Syndromes of the wq checks: synd_base + these (SQ 0x30.., RQ 0x50..). */
enum {
    WQ_SYND_TYPE = 0,
    WQ_SYND_UNSUPPORTED,
    WQ_SYND_SIZE,
    WQ_SYND_STRIDE,
    WQ_SYND_PD,
    WQ_SYND_CQ,
    WQ_SYND_PAS_LEN,
    WQ_SYND_PAS_ALIGN,
    WQ_SYND_FULL,
};

enum {
    SYND_SQ_BASE = 0x30,
    SYND_SQ_STATE = 0x40,
    SYND_SQ_UNSUPPORTED,
    SYND_SQ_TIS,
    SYND_SQ_UAR,
    SYND_SQ_NONE,
    SYND_SQ_CUR_STATE,
    SYND_SQ_TRANSITION,
    SYND_SQ_BITMASK,
};

uint8_t vcx_nic_wq_parse(VcxState *s, VcxCmd *cmd, VcxNicWq *wq, const uint8_t *wqc,
                         uint32_t pas_at, uint16_t synd_base)
{
    const uint8_t *w = wqc + VCX_SQC_WQ_AT;
    uint32_t type = vcx_get(w, VCX_WQ_WQ_TYPE);
    uint32_t log_sz = vcx_get(w, VCX_WQ_LOG_WQ_SZ);
    uint32_t stride = vcx_get(w, VCX_WQ_LOG_WQ_STRIDE);
    uint32_t pdn = vcx_get(w, VCX_WQ_PD);
    uint32_t cqn = vcx_get(wqc, VCX_SQC_CQN);       /* same offset in rqc */

    if (type != VCX_WQ_TYPE_CYCLIC) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, synd_base + WQ_SYND_TYPE,
                            "wq_type %u: only cyclic (1)", type);
    }
    /*
     * end_padding_mode 1 (an RQ's scatter may be padded up to a cache line) lets the
     * device write past the frame within the WQE's buffers; it writes nothing there, which
     * the mode allows. Mode 2 and SQs with a mode are refused.
     */
    if (vcx_get(w, VCX_WQ_WQ_SIGNATURE) || vcx_get(w, VCX_WQ_CD_SLAVE) ||
        vcx_get(w, VCX_WQ_END_PADDING_MODE) > (wq->is_sq ? 0 : VCX_WQ_END_PAD_MODE_ALIGN) ||
        vcx_get(w, VCX_WQ_DBR_UMEM_VALID) || vcx_get(w, VCX_WQ_WQ_UMEM_VALID)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, synd_base + WQ_SYND_UNSUPPORTED,
                            "wq_signature / cd_slave / end_padding_mode %u / umem not "
                            "supported", vcx_get(w, VCX_WQ_END_PADDING_MODE));
    }
    if (log_sz > VCX_NIC_LOG_MAX_WQ_SZ) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, synd_base + WQ_SYND_SIZE,
                            "log_wq_sz %u > log_max_wq_sz %u", log_sz,
                            VCX_NIC_LOG_MAX_WQ_SZ);
    }
    if (wq->is_sq ? stride != VCX_NIC_SQ_LOG_STRIDE :
        stride < VCX_NIC_RQ_LOG_STRIDE_MIN || stride > VCX_NIC_RQ_LOG_STRIDE_MAX) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, synd_base + WQ_SYND_STRIDE,
                            "log_wq_stride %u: an %s WQE is %s", stride,
                            wq->is_sq ? "SQ" : "RQ",
                            wq->is_sq ? "64 bytes (6)" : "1..32 data segments (4..9)");
    }
    /*
     * An RQ may have no PD (pd 0, which ALLOC_PD never returns): mlx5e's drop RQ, which
     * steering points at while no channel is open, has none and gets no WQEs. Any WQE
     * posted to it fails its memory key check (no key is of PD 0).
     */
    wq->pd = pdn || wq->is_sq ? vcx_pd_get(s, pdn) : NULL;
    if (!wq->pd && (pdn || wq->is_sq)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, synd_base + WQ_SYND_PD,
                            "pd 0x%x does not exist", pdn);
    }
    wq->cq = vcx_cq_get(s, cqn);
    if (!wq->cq) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, synd_base + WQ_SYND_CQ,
                            "cqn 0x%x does not exist", cqn);
    }
    wq->pdn = pdn;
    wq->cqn = cqn;
    wq->log_wq_sz = log_sz;
    wq->log_stride = stride;
    wq->dbr_addr = vcx_get64(w, VCX_WQ_DBR_ADDR);
    return vcx_qbuf_parse(cmd, &wq->buf, cmd->in + pas_at,
                          cmd->in_len > pas_at ? cmd->in_len - pas_at : 0,
                          vcx_get(w, VCX_WQ_LOG_WQ_PG_SZ), vcx_get(w, VCX_WQ_PAGE_OFFSET),
                          1ull << (log_sz + stride), synd_base + WQ_SYND_PAS_LEN,
                          synd_base + WQ_SYND_PAS_ALIGN);
}

/* Hold what the WQ names and give it a number; the caller has parsed it. */
uint8_t vcx_nic_wq_insert(VcxState *s, VcxCmd *cmd, VcxNicWq *wq, uint16_t synd)
{
    VcxNic *n = vcx_nic(s);

    if (!vcx_obj_alloc(&n->wqs, wq, &wq->num)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, synd,
                            "all %u SQ and RQ numbers in use",
                            VCX_NIC_WQ_NUM_END - VCX_NIC_WQ_NUM_BASE);
    }
    wq->gen = ++n->wq_gen;
    wq->cq->refs++;
    if (wq->pd) {
        wq->pd->refs++;
    }
    if (wq->is_sq) {
        n->nsq++;
    } else {
        n->nrq++;
    }
    return VCX_CMD_STAT_OK;
}

/*
 * QUERY_SQ / QUERY_RQ: the context and wq as created, with the state and hw_counter (WQEs
 * or WQEBBs consumed), then the PAS as far as the output reaches. sqc and rqc put the
 * state, the wq and the PAS at the same offsets (prm-nic.h), and so do their QUERY outputs.
 */
QEMU_BUILD_BUG_ON(VCX_SQC_WQ_AT != VCX_RQC_WQ_AT ||
                  VCX_QUERY_SQ_OUT_CTX_AT != VCX_QUERY_RQ_OUT_CTX_AT ||
                  VCX_QUERY_SQ_OUT_LEN != VCX_QUERY_RQ_OUT_LEN);

uint8_t vcx_nic_wq_query(VcxCmd *cmd, VcxNicWq *wq)
{
    uint8_t *ctx = cmd->out + VCX_QUERY_SQ_OUT_CTX_AT;

    memcpy(ctx, wq->ctx, sizeof(wq->ctx));
    vcx_set(ctx, VCX_SQC_STATE, wq->state);
    vcx_set(ctx + VCX_SQC_WQ_AT, VCX_WQ_HW_COUNTER, wq->ci);
    vcx_qbuf_query_pas(&wq->buf, cmd->out + VCX_QUERY_SQ_OUT_LEN,
                       cmd->out_len - VCX_QUERY_SQ_OUT_LEN);
    return VCX_CMD_STAT_OK;
}

void vcx_nic_wq_free(VcxState *s, VcxNicWq *wq)
{
    VcxNic *n = vcx_nic(s);

    if (wq->kicked) {
        QTAILQ_REMOVE(&n->runq, wq, run_link);
        wq->kicked = false;
    }
    wq->cq->refs--;
    if (wq->pd) {
        wq->pd->refs--;
    }
    if (wq->tis) {
        wq->tis->refs--;
    }
    if (wq->qc) {
        wq->qc->refs--;
    }
    if (wq->is_sq) {
        n->nsq--;
    } else {
        n->nrq--;
    }
    vcx_obj_remove(&n->wqs, wq->num);
    vcx_qbuf_free(&wq->buf);
    g_free(wq);
}

uint8_t vcx_cmd_create_sq(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *sqc = cmd->in + VCX_CREATE_SQ_IN_CTX_AT;
    const uint8_t *w = sqc + VCX_SQC_WQ_AT;
    uint32_t tisn = vcx_get(sqc, VCX_SQC_TIS_NUM_0);
    uint32_t uar = vcx_get(w, VCX_WQ_UAR_PAGE);
    uint32_t ts = vcx_get(sqc, VCX_SQC_TS_FORMAT);
    bool has_tis = vcx_get(sqc, VCX_SQC_TIS_LST_SZ);
    VcxTis *tis = has_tis ? vcx_tis_get(s, tisn) : NULL;
    VcxNicWq *wq;
    uint8_t status;

    if (vcx_get(sqc, VCX_SQC_STATE) != VCX_SQC_STATE_RST) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SQ_STATE,
                            "sqc.state %u: an SQ is created in RST (0)",
                            vcx_get(sqc, VCX_SQC_STATE));
    }
    if (vcx_get(sqc, VCX_SQC_RLKY) || vcx_get(sqc, VCX_SQC_CD_MASTER) ||
        vcx_get(sqc, VCX_SQC_FRE) || vcx_get(sqc, VCX_SQC_ALLOW_MULTI_PKT_SEND_WQE) ||
        vcx_get(sqc, VCX_SQC_MIN_WQE_INLINE_MODE) || vcx_get(sqc, VCX_SQC_REG_UMR) ||
        vcx_get(sqc, VCX_SQC_ALLOW_SWP) || vcx_get(sqc, VCX_SQC_HAIRPIN) ||
        vcx_get(sqc, VCX_SQC_NON_WIRE) || vcx_get(sqc, VCX_SQC_USER_INDEX) ||
        vcx_get(sqc, VCX_SQC_PACKET_PACING_RATE_LIMIT_INDEX) ||
        vcx_get(sqc, VCX_SQC_QOS_QUEUE_GROUP_ID) ||
        vcx_get(sqc, VCX_SQC_TS_CQE_TO_DEST_CQN) || vcx_get(sqc, VCX_SQC_TIS_LST_SZ) > 1 ||
        ts > VCX_SQC_TS_FORMAT_DEFAULT) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SQ_UNSUPPORTED,
                            "sqc asks for what the device does not do (multi-packet WQE, "
                            "inline mode, UMR, SWP, hairpin, user index, rate limit, QoS "
                            "group, tis_lst_sz %u, ts_format %u)",
                            vcx_get(sqc, VCX_SQC_TIS_LST_SZ), ts);
    }
    if (has_tis && !tis) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SQ_TIS,
                            "tis_num_0 0x%x does not exist", tisn);
    }
    if (!vcx_uar_allocated(s, uar)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SQ_UAR,
                            "uar_page %u is not allocated", uar);
    }
    wq = g_new0(VcxNicWq, 1);
    wq->is_sq = true;
    status = vcx_nic_wq_parse(s, cmd, wq, sqc,
                              VCX_CREATE_SQ_IN_CTX_AT + VCX_SQC_WQ_AT + VCX_WQ_PAS_AT,
                              SYND_SQ_BASE);
    if (!status) {
        status = vcx_nic_wq_insert(s, cmd, wq, SYND_SQ_BASE + WQ_SYND_FULL);
    }
    if (status) {
        vcx_qbuf_free(&wq->buf);
        g_free(wq);
        return status;
    }
    memcpy(wq->ctx, sqc, sizeof(wq->ctx));
    wq->state = VCX_SQC_STATE_RST;
    wq->flush_in_error = vcx_get(sqc, VCX_SQC_FLUSH_IN_ERROR_EN);
    wq->tisn = has_tis ? tisn : 0;
    wq->tis = tis;
    if (tis) {
        tis->refs++;
    }
    vcx_set(cmd->out, VCX_CREATE_SQ_OUT_SQN, wq->num);
    trace_vcx_nic_wq("SQ", "create", wq->num, wq->state);
    return VCX_CMD_STAT_OK;
}

/* MODIFY_SQ / MODIFY_RQ state rules (sqc and rqc states have the same values). */
uint8_t vcx_nic_wq_transition(VcxCmd *cmd, VcxNicWq *wq, uint32_t cur, uint32_t next,
                              uint16_t synd_cur, uint16_t synd_next)
{
    bool ok;

    if (cur != wq->state) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, synd_cur,
                            "%s 0x%x: current state %u given, it is in %u",
                            wq->is_sq ? "SQ" : "RQ", wq->num, cur, wq->state);
    }
    switch (next) {
    case VCX_SQC_STATE_RST:
        ok = true;
        break;
    case VCX_SQC_STATE_RDY:
        ok = cur == VCX_SQC_STATE_RST || cur == VCX_SQC_STATE_RDY;
        break;
    case VCX_SQC_STATE_ERR:
        ok = cur == VCX_SQC_STATE_RDY || cur == VCX_SQC_STATE_ERR;
        break;
    default:
        ok = false;
    }
    if (!ok) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, synd_next,
                            "%s 0x%x: no transition %u -> %u", wq->is_sq ? "SQ" : "RQ",
                            wq->num, cur, next);
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_modify_sq(VcxState *s, VcxCmd *cmd)
{
    uint32_t sqn = vcx_get(cmd->in, VCX_MODIFY_SQ_IN_SQN);
    uint32_t cur = vcx_get(cmd->in, VCX_MODIFY_SQ_IN_SQ_STATE);
    const uint8_t *sqc = cmd->in + VCX_MODIFY_SQ_IN_CTX_AT;
    uint32_t next = vcx_get(sqc, VCX_SQC_STATE);
    VcxNicWq *sq = vcx_sq_get(s, sqn);
    uint8_t status;

    if (!sq) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SQ_NONE, "no SQ 0x%x", sqn);
    }
    if (vcx_get64(cmd->in, VCX_MODIFY_SQ_IN_MODIFY_BITMASK)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SQ_BITMASK,
                            "modify_bitmask 0x%" PRIx64 ": no rate limit or QoS group",
                            vcx_get64(cmd->in, VCX_MODIFY_SQ_IN_MODIFY_BITMASK));
    }
    status = vcx_nic_wq_transition(cmd, sq, cur, next, SYND_SQ_CUR_STATE,
                                   SYND_SQ_TRANSITION);
    if (status) {
        return status;
    }
    sq->state = next;
    if (next == VCX_SQC_STATE_RST) {
        sq->ci = 0;
        sq->pi = 0;
        sq->flushing = false;
        sq->gen = ++vcx_nic(s)->wq_gen;
    } else if (next == VCX_SQC_STATE_ERR && cur != VCX_SQC_STATE_ERR) {
        /* the WQEs posted complete flushed, by the executor */
        sq->flushing = sq->flush_in_error;
        vcx_nic_wq_kick(s, sq);
    }
    /* RDY: nothing runs until the next doorbell, which brings the producer counter */
    trace_vcx_nic_wq("SQ", "modify", sqn, next);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_sq(VcxState *s, VcxCmd *cmd)
{
    uint32_t sqn = vcx_get(cmd->in, VCX_OBJ_NUMBER);
    VcxNicWq *sq = vcx_sq_get(s, sqn);

    if (!sq) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SQ_NONE, "no SQ 0x%x", sqn);
    }
    return vcx_nic_wq_query(cmd, sq);
}

uint8_t vcx_cmd_destroy_sq(VcxState *s, VcxCmd *cmd)
{
    uint32_t sqn = vcx_get(cmd->in, VCX_OBJ_NUMBER);
    VcxNicWq *sq = vcx_sq_get(s, sqn);

    if (!sq) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SQ_NONE, "no SQ 0x%x", sqn);
    }
    trace_vcx_nic_wq("SQ", "destroy", sqn, sq->state);
    vcx_nic_wq_free(s, sq);
    return VCX_CMD_STAT_OK;
}
