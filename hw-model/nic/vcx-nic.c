/*
 * vcx: the Ethernet NIC: object tables, lifecycle, the NIC command table and its part of
 * the executor's run (vcx-nic.h has the overview).
 *
 * Numbering: transport domains, TISes, TIRs, RQTs, flow tables and Q counters have small
 * tables of their own, numbers from 1. SQs and RQs share one table over 0x1000..0x1fff,
 * a range of the QP number space that QPs (8..4095) never use, so the send doorbell,
 * which names its queue by number, reaches an SQ as it reaches a QP.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "net/net.h"
#include "hw/vcx/trace.h"
#include "vcx-nic.h"

#define OPM(n)          (1u << (n))
#define CMD(op, fn, in, out, opm) \
    { VCX_CMD_OP_##op, #op, (in), (out), (opm), VCX_HCA_INITIALIZED, \
      VCX_HCA_INITIALIZED, fn }

static const VcxCmdDesc vcx_nic_cmd_table[] = {
    CMD(ALLOC_TRANSPORT_DOMAIN, vcx_cmd_alloc_td, VCX_ALLOC_TD_IN_LEN, VCX_OBJ_CMD_LEN,
        OPM(0)),
    CMD(DEALLOC_TRANSPORT_DOMAIN, vcx_cmd_dealloc_td, VCX_DEALLOC_TD_IN_LEN,
        VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(CREATE_TIS, vcx_cmd_create_tis, VCX_CREATE_TIS_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(MODIFY_TIS, vcx_cmd_modify_tis, VCX_MODIFY_TIS_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(QUERY_TIS, vcx_cmd_query_tis, VCX_OBJ_CMD_LEN, VCX_QUERY_TIS_OUT_LEN, OPM(0)),
    CMD(DESTROY_TIS, vcx_cmd_destroy_tis, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(CREATE_SQ, vcx_cmd_create_sq, VCX_CREATE_SQ_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(MODIFY_SQ, vcx_cmd_modify_sq, VCX_MODIFY_SQ_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(QUERY_SQ, vcx_cmd_query_sq, VCX_OBJ_CMD_LEN, VCX_QUERY_SQ_OUT_LEN, OPM(0)),
    CMD(DESTROY_SQ, vcx_cmd_destroy_sq, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(CREATE_RQ, vcx_cmd_create_rq, VCX_CREATE_RQ_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(MODIFY_RQ, vcx_cmd_modify_rq, VCX_MODIFY_RQ_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(QUERY_RQ, vcx_cmd_query_rq, VCX_OBJ_CMD_LEN, VCX_QUERY_RQ_OUT_LEN, OPM(0)),
    CMD(DESTROY_RQ, vcx_cmd_destroy_rq, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(CREATE_RQT, vcx_cmd_create_rqt, VCX_CREATE_RQT_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(MODIFY_RQT, vcx_cmd_modify_rqt, VCX_MODIFY_RQT_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(QUERY_RQT, vcx_cmd_query_rqt, VCX_OBJ_CMD_LEN, VCX_QUERY_RQT_OUT_LEN, OPM(0)),
    CMD(DESTROY_RQT, vcx_cmd_destroy_rqt, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(CREATE_TIR, vcx_cmd_create_tir, VCX_CREATE_TIR_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(MODIFY_TIR, vcx_cmd_modify_tir, VCX_MODIFY_TIR_IN_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(QUERY_TIR, vcx_cmd_query_tir, VCX_OBJ_CMD_LEN, VCX_QUERY_TIR_OUT_LEN, OPM(0)),
    CMD(DESTROY_TIR, vcx_cmd_destroy_tir, VCX_OBJ_CMD_LEN, VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(SET_FLOW_TABLE_ROOT, vcx_cmd_set_ft_root, VCX_SET_FT_ROOT_IN_LEN, VCX_OBJ_CMD_LEN,
        OPM(0) | OPM(1)),
    CMD(CREATE_FLOW_TABLE, vcx_cmd_create_ft, VCX_CREATE_FT_IN_LEN, VCX_CREATE_FT_OUT_LEN,
        OPM(0)),
    CMD(DESTROY_FLOW_TABLE, vcx_cmd_destroy_ft, VCX_DESTROY_FT_IN_LEN, VCX_OBJ_CMD_LEN,
        OPM(0)),
    CMD(QUERY_FLOW_TABLE, vcx_cmd_query_ft, VCX_QUERY_FT_IN_LEN, VCX_QUERY_FT_OUT_LEN,
        OPM(0)),
    CMD(CREATE_FLOW_GROUP, vcx_cmd_create_fg, VCX_CREATE_FG_IN_LEN, VCX_OBJ_CMD_LEN,
        OPM(0)),
    CMD(DESTROY_FLOW_GROUP, vcx_cmd_destroy_fg, VCX_DESTROY_FG_IN_LEN, VCX_OBJ_CMD_LEN,
        OPM(0)),
    CMD(QUERY_FLOW_GROUP, vcx_cmd_query_fg, VCX_QUERY_FG_IN_LEN, VCX_QUERY_FG_OUT_LEN,
        OPM(0)),
    CMD(SET_FLOW_TABLE_ENTRY, vcx_cmd_set_fte, VCX_SET_FTE_IN_LEN, VCX_OBJ_CMD_LEN,
        OPM(0) | OPM(1)),
    CMD(QUERY_FLOW_TABLE_ENTRY, vcx_cmd_query_fte, VCX_QUERY_FTE_IN_LEN,
        VCX_QUERY_FTE_OUT_LEN, OPM(0)),
    CMD(DELETE_FLOW_TABLE_ENTRY, vcx_cmd_delete_fte, VCX_DELETE_FTE_IN_LEN,
        VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(ALLOC_Q_COUNTER, vcx_cmd_alloc_q_counter, VCX_ALLOC_Q_COUNTER_IN_LEN,
        VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(DEALLOC_Q_COUNTER, vcx_cmd_dealloc_q_counter, VCX_DEALLOC_Q_COUNTER_IN_LEN,
        VCX_OBJ_CMD_LEN, OPM(0)),
    CMD(QUERY_Q_COUNTER, vcx_cmd_query_q_counter, VCX_QUERY_Q_COUNTER_IN_LEN,
        VCX_QUERY_Q_COUNTER_OUT_LEN, OPM(0)),
    CMD(QUERY_VPORT_COUNTER, vcx_cmd_query_vport_counter, VCX_QUERY_VPORT_COUNTER_IN_LEN,
        VCX_QUERY_VPORT_COUNTER_OUT_LEN, OPM(0)),
};

#undef CMD
#undef OPM

const VcxCmdDesc *vcx_nic_cmd_lookup(uint16_t opcode)
{
    for (size_t i = 0; i < ARRAY_SIZE(vcx_nic_cmd_table); i++) {
        if (vcx_nic_cmd_table[i].opcode == opcode) {
            return &vcx_nic_cmd_table[i];
        }
    }
    return NULL;
}

uint8_t vcx_nic_vport_check(VcxCmd *cmd, struct vcx_fld other, struct vcx_fld number,
                            uint16_t synd)
{
    if (vcx_get(cmd->in, other) || vcx_get(cmd->in, number)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, synd,
                            "other_vport %u vport_number %u: no eswitch",
                            vcx_get(cmd->in, other), vcx_get(cmd->in, number));
    }
    return VCX_CMD_STAT_OK;
}

/*
 * Tables
 */

VcxTd *vcx_td_get(VcxState *s, uint32_t tdn)
{
    return vcx_obj_get(&vcx_nic(s)->tds, tdn);
}

VcxTis *vcx_tis_get(VcxState *s, uint32_t tisn)
{
    return vcx_obj_get(&vcx_nic(s)->tises, tisn);
}

VcxTir *vcx_tir_get(VcxState *s, uint32_t tirn)
{
    return vcx_obj_get(&vcx_nic(s)->tirs, tirn);
}

VcxRqt *vcx_rqt_get(VcxState *s, uint32_t rqtn)
{
    return vcx_obj_get(&vcx_nic(s)->rqts, rqtn);
}

VcxFt *vcx_ft_get(VcxState *s, uint32_t id)
{
    return vcx_obj_get(&vcx_nic(s)->fts, id);
}

VcxQCounter *vcx_qc_get(VcxState *s, uint32_t id)
{
    return vcx_obj_get(&vcx_nic(s)->qcs, id);
}

VcxNicWq *vcx_sq_get(VcxState *s, uint32_t sqn)
{
    VcxNicWq *wq = vcx_obj_get(&vcx_nic(s)->wqs, sqn);

    return wq && wq->is_sq ? wq : NULL;
}

VcxNicWq *vcx_rq_get(VcxState *s, uint32_t rqn)
{
    VcxNicWq *wq = vcx_obj_get(&vcx_nic(s)->wqs, rqn);

    return wq && !wq->is_sq ? wq : NULL;
}

/*
 * Lifecycle
 */

void vcx_nic_init(VcxState *s)
{
    VcxNic *n = g_new0(VcxNic, 1);

    vcx_obj_table_init(&n->tds, 1u << VCX_NIC_LOG_MAX_TD, 1);
    vcx_obj_table_init(&n->tises, 1u << VCX_NIC_LOG_MAX_TIS, 1);
    vcx_obj_table_init(&n->tirs, 1u << VCX_NIC_LOG_MAX_TIR, 1);
    vcx_obj_table_init(&n->rqts, 1u << VCX_NIC_LOG_MAX_RQT, 1);
    vcx_obj_table_init(&n->fts, 1u << VCX_NIC_LOG_MAX_FT, 1);
    vcx_obj_table_init(&n->qcs, VCX_NIC_MAX_QCOUNTERS + 1, 1);
    vcx_obj_table_init(&n->wqs, VCX_NIC_WQ_NUM_END, VCX_NIC_WQ_NUM_BASE);
    QTAILQ_INIT(&n->runq);
    QSIMPLEQ_INIT(&n->rxq);
    s->objs->nic = n;
}

/*
 * Every NIC object goes, users before what they use; frames waiting are dropped. Called
 * by vcx_obj_reset (reset, FLR, TEARDOWN force close), which never runs inside the
 * executor: nothing is in use.
 */
void vcx_nic_reset(VcxState *s)
{
    VcxNic *n = s->objs ? s->objs->nic : NULL;

    if (!n) {
        return;
    }
    n->root = 0;
    VCX_OBJ_TABLE_DRAIN(s, &n->fts, vcx_ft_free);
    VCX_OBJ_TABLE_DRAIN(s, &n->tirs, vcx_tir_free);
    VCX_OBJ_TABLE_DRAIN(s, &n->rqts, vcx_rqt_free);
    VCX_OBJ_TABLE_DRAIN(s, &n->wqs, vcx_nic_wq_free);
    VCX_OBJ_TABLE_DRAIN(s, &n->tises, vcx_tis_free);
    VCX_OBJ_TABLE_DRAIN(s, &n->tds, vcx_td_free);
    VCX_OBJ_TABLE_DRAIN(s, &n->qcs, vcx_qc_free);
    vcx_nic_rxq_drop_all(s);
    if (n->rx_blocked && s->nic) {
        /* the netdev held frames for us: take them again (the receive path drops them) */
        n->rx_blocked = false;
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
    }
    n->nuc = n->nmc = n->nvlans = 0;
    n->promisc_uc = n->promisc_mc = n->promisc_all = false;
    memset(&n->st, 0, offsetof(VcxNicStats, nic_tx));
}

void vcx_nic_free(VcxState *s)
{
    VcxNic *n = s->objs ? s->objs->nic : NULL;

    if (!n) {
        return;
    }
    vcx_nic_reset(s);
    g_free(n->tds.slot);
    g_free(n->tises.slot);
    g_free(n->tirs.slot);
    g_free(n->rqts.slot);
    g_free(n->fts.slot);
    g_free(n->qcs.slot);
    g_free(n->wqs.slot);
    g_free(n);
    s->objs->nic = NULL;
}

uint32_t vcx_nic_count(VcxState *s)
{
    VcxNic *n = s->objs ? s->objs->nic : NULL;

    return n ? n->tds.count + n->tises.count + n->tirs.count + n->rqts.count +
               n->fts.count + n->nfg + n->nfte + n->qcs.count + n->wqs.count : 0;
}

/* An SQ rings the doorbell of the UAR page it was created on. */
bool vcx_nic_uar_in_use(VcxState *s, uint32_t uar)
{
    VcxNic *n = vcx_nic(s);

    for (uint32_t i = n->wqs.first; i < n->wqs.size; i++) {
        VcxNicWq *wq = n->wqs.slot[i];

        if (wq && wq->is_sq && vcx_get(wq->ctx + VCX_SQC_WQ_AT, VCX_WQ_UAR_PAGE) == uar) {
            return true;
        }
    }
    return false;
}

char *vcx_nic_state(VcxState *s)
{
    VcxNic *n = vcx_nic(s);

    return g_strdup_printf("tds=%u tises=%u tirs=%u rqts=%u sqs=%u rqs=%u fts=%u fgs=%u "
                           "ftes=%u qcounters=%u nic_tx=%" PRIu64 " nic_rx=%" PRIu64
                           " nic_rx_drop=%" PRIu64 " roce_rx_drop=%" PRIu64,
                           n->tds.count, n->tises.count, n->tirs.count, n->rqts.count,
                           n->nsq, n->nrq, n->fts.count, n->nfg, n->nfte, n->qcs.count,
                           n->st.nic_tx, n->st.nic_rx, n->st.nic_rx_drop,
                           n->st.roce_rx_drop);
}

/*
 * The executor's NIC part: SQs with posted WQEs, then frames waiting. With RDMA work
 * queued too the NIC takes at most half the run, so neither side starves the other.
 */
bool vcx_nic_pending(VcxState *s)
{
    VcxNic *n = vcx_nic(s);

    return !QTAILQ_EMPTY(&n->runq) || !QSIMPLEQ_EMPTY(&n->rxq);
}

/* Frames wait in the receive queue (from the netdev, or looped). */
bool vcx_nic_rx_pending(VcxState *s)
{
    return !QSIMPLEQ_EMPTY(&vcx_nic(s)->rxq);
}

bool vcx_nic_run(VcxState *s, VcxBudget *b)
{
    bool more;

    more = vcx_nic_tx_run(s, b);
    more |= vcx_nic_rx_run(s, b);
    return more;
}
