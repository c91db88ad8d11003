/*
 * vcx: Ethernet receive queues: CREATE/MODIFY/QUERY/DESTROY_RQ (PRM "Receive Queue").
 *
 * An RQ is a cyclic ring of receive WQEs of 2^log_wq_stride bytes, each 1..32 data
 * segments (a shorter list ends with a segment of lkey 0x100); the driver posts by
 * raising the 16-bit counter in dword 0 of the doorbell record, which the device reads
 * when a frame arrives. A TIR (directly) or an RQT names the RQs frames go to. The RQ
 * may count into a Q counter (counter_set_id, changeable with MODIFY_RQ's
 * modify_bitmask). An RQ moved to ERR with flush_in_error_en completes the receive WQEs
 * posted with WR_FLUSH_ERR CQEs (vcx-nic-rx.c), as a QP's RQ does. vsd 0 turns VLAN
 * stripping on (vcx-nic-rx.c); MODIFY_RQ changes it and the counter set. No FCS scatter,
 * no RMP (mem_rq_type 0), no delay drop, no hairpin, no striding RQ.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/vcx/trace.h"
#include "vcx-nic.h"

enum {
    SYND_RQ_BASE = 0x50,
    SYND_RQ_STATE = 0x60,
    SYND_RQ_UNSUPPORTED,
    SYND_RQ_RESERVED,           /* was vsd 0, refused before VLAN stripping */
    SYND_RQ_COUNTER,
    SYND_RQ_NONE,
    SYND_RQ_CUR_STATE,
    SYND_RQ_TRANSITION,
    SYND_RQ_BITMASK,
    SYND_RQ_BUSY,
};

static uint8_t vcx_rq_counter(VcxState *s, VcxCmd *cmd, uint32_t id, VcxQCounter **qc)
{
    *qc = NULL;
    if (id) {
        *qc = vcx_qc_get(s, id);
        if (!*qc) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQ_COUNTER,
                                "counter_set_id %u is not allocated", id);
        }
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_create_rq(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *rqc = cmd->in + VCX_CREATE_RQ_IN_CTX_AT;
    uint32_t ts = vcx_get(rqc, VCX_RQC_TS_FORMAT);
    VcxQCounter *qc;
    VcxNicWq *wq;
    uint8_t status;

    if (vcx_get(rqc, VCX_RQC_STATE) != VCX_RQC_STATE_RST) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQ_STATE,
                            "rqc.state %u: an RQ is created in RST (0)",
                            vcx_get(rqc, VCX_RQC_STATE));
    }
    if (vcx_get(rqc, VCX_RQC_RLKY) || vcx_get(rqc, VCX_RQC_DELAY_DROP_EN) ||
        vcx_get(rqc, VCX_RQC_SCATTER_FCS) || vcx_get(rqc, VCX_RQC_HAIRPIN) ||
        vcx_get(rqc, VCX_RQC_MEM_RQ_TYPE) != VCX_RQC_MEM_RQ_TYPE_INLINE ||
        vcx_get(rqc, VCX_RQC_USER_INDEX) || vcx_get(rqc, VCX_RQC_RMPN) ||
        ts > VCX_SQC_TS_FORMAT_DEFAULT) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQ_UNSUPPORTED,
                            "rqc asks for what the device does not do (delay drop, FCS "
                            "scatter, hairpin, RMP, user index, ts_format %u)", ts);
    }
    status = vcx_rq_counter(s, cmd, vcx_get(rqc, VCX_RQC_COUNTER_SET_ID), &qc);
    if (status) {
        return status;
    }
    wq = g_new0(VcxNicWq, 1);
    status = vcx_nic_wq_parse(s, cmd, wq, rqc,
                              VCX_CREATE_RQ_IN_CTX_AT + VCX_RQC_WQ_AT + VCX_WQ_PAS_AT,
                              SYND_RQ_BASE);
    if (!status) {
        status = vcx_nic_wq_insert(s, cmd, wq, SYND_RQ_BASE + 8);
    }
    if (status) {
        vcx_qbuf_free(&wq->buf);
        g_free(wq);
        return status;
    }
    memcpy(wq->ctx, rqc, sizeof(wq->ctx));
    wq->state = VCX_RQC_STATE_RST;
    wq->flush_in_error = vcx_get(rqc, VCX_RQC_FLUSH_IN_ERROR_EN);
    wq->vsd = vcx_get(rqc, VCX_RQC_VSD);
    wq->counter_set_id = qc ? qc->id : 0;
    wq->qc = qc;
    if (qc) {
        qc->refs++;
    }
    vcx_set(cmd->out, VCX_CREATE_RQ_OUT_RQN, wq->num);
    trace_vcx_nic_wq("RQ", "create", wq->num, wq->state);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_modify_rq(VcxState *s, VcxCmd *cmd)
{
    uint32_t rqn = vcx_get(cmd->in, VCX_MODIFY_RQ_IN_RQN);
    uint32_t cur = vcx_get(cmd->in, VCX_MODIFY_RQ_IN_RQ_STATE);
    const uint8_t *rqc = cmd->in + VCX_MODIFY_RQ_IN_CTX_AT;
    uint32_t next = vcx_get(rqc, VCX_RQC_STATE);
    uint64_t mask = vcx_get64(cmd->in, VCX_MODIFY_RQ_IN_MODIFY_BITMASK);
    const uint64_t known = VCX_MODIFY_RQ_BITMASK_VSD | VCX_MODIFY_RQ_BITMASK_COUNTER_SET_ID;
    VcxNicWq *rq = vcx_rq_get(s, rqn);
    VcxQCounter *qc = NULL;
    uint8_t status;

    if (!rq) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQ_NONE, "no RQ 0x%x", rqn);
    }
    if (mask & ~known) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQ_BITMASK,
                            "modify_bitmask 0x%" PRIx64 ": only vsd and counter_set_id "
                            "(0x%" PRIx64 ")", mask, known);
    }
    if (mask & VCX_MODIFY_RQ_BITMASK_COUNTER_SET_ID) {
        status = vcx_rq_counter(s, cmd, vcx_get(rqc, VCX_RQC_COUNTER_SET_ID), &qc);
        if (status) {
            return status;
        }
    }
    status = vcx_nic_wq_transition(cmd, rq, cur, next, SYND_RQ_CUR_STATE,
                                   SYND_RQ_TRANSITION);
    if (status) {
        return status;
    }
    if (mask & VCX_MODIFY_RQ_BITMASK_COUNTER_SET_ID) {
        if (rq->qc) {
            rq->qc->refs--;
        }
        rq->qc = qc;
        rq->counter_set_id = qc ? qc->id : 0;
        if (qc) {
            qc->refs++;
        }
        vcx_set(rq->ctx, VCX_RQC_COUNTER_SET_ID, rq->counter_set_id);
    }
    if (mask & VCX_MODIFY_RQ_BITMASK_VSD) {
        rq->vsd = vcx_get(rqc, VCX_RQC_VSD);
        vcx_set(rq->ctx, VCX_RQC_VSD, rq->vsd);
    }
    rq->state = next;
    if (next == VCX_RQC_STATE_RST) {
        rq->ci = 0;
        rq->flushing = false;
        rq->gen = ++vcx_nic(s)->wq_gen;
    } else if (next == VCX_RQC_STATE_ERR && cur != VCX_RQC_STATE_ERR && rq->flush_in_error) {
        rq->flushing = true;            /* the executor flushes the posted WQEs */
        vcx_nic_wq_kick(s, rq);
    }
    trace_vcx_nic_wq("RQ", "modify", rqn, next);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_rq(VcxState *s, VcxCmd *cmd)
{
    uint32_t rqn = vcx_get(cmd->in, VCX_OBJ_NUMBER);
    VcxNicWq *rq = vcx_rq_get(s, rqn);

    if (!rq) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQ_NONE, "no RQ 0x%x", rqn);
    }
    return vcx_nic_wq_query(cmd, rq);
}

uint8_t vcx_cmd_destroy_rq(VcxState *s, VcxCmd *cmd)
{
    uint32_t rqn = vcx_get(cmd->in, VCX_OBJ_NUMBER);
    VcxNicWq *rq = vcx_rq_get(s, rqn);

    if (!rq) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQ_NONE, "no RQ 0x%x", rqn);
    }
    if (rq->refs) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_RQ_BUSY,
                            "RQ 0x%x still named by %u RQTs and TIRs", rqn, rq->refs);
    }
    trace_vcx_nic_wq("RQ", "destroy", rqn, rq->state);
    vcx_nic_wq_free(s, rq);
    return VCX_CMD_STAT_OK;
}
