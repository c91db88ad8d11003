/*
 * vcx: transport domains (ALLOC/DEALLOC_TRANSPORT_DOMAIN) and TISes
 * (CREATE/MODIFY/QUERY/DESTROY_TIS), PRM "Transport Interface Send".
 *
 * A transport domain groups the TISes and TIRs of one driver instance: a frame sent
 * through a TIS of domain D and looped back inside the port is not delivered to a TIR of
 * D that blocks self loopback (tirc.self_lb_block). A TIS carries the priority of the
 * SQs on it; there is no LAG and no TLS (tls_en, strict_lag_tx_port_affinity refused).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/vcx/trace.h"
#include "vcx-nic.h"

enum {
    SYND_TD_FULL = 0x10,
    SYND_TD_NONE,
    SYND_TD_BUSY,
    SYND_TIS_FULL = 0x20,
    SYND_TIS_NONE,
    SYND_TIS_BUSY,
    SYND_TIS_TD,
    SYND_TIS_UNSUPPORTED,
    SYND_TIS_BITMASK,
};

uint8_t vcx_cmd_alloc_td(VcxState *s, VcxCmd *cmd)
{
    VcxTd *td = g_new0(VcxTd, 1);

    if (!vcx_obj_alloc(&vcx_nic(s)->tds, td, &td->tdn)) {
        g_free(td);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_TD_FULL,
                            "all %u transport domains in use",
                            (1u << VCX_NIC_LOG_MAX_TD) - 1);
    }
    vcx_set(cmd->out, VCX_ALLOC_TD_OUT_TD, td->tdn);
    trace_vcx_nic_obj("TD", "alloc", td->tdn);
    return VCX_CMD_STAT_OK;
}

void vcx_td_free(VcxState *s, VcxTd *td)
{
    vcx_obj_remove(&vcx_nic(s)->tds, td->tdn);
    g_free(td);
}

uint8_t vcx_cmd_dealloc_td(VcxState *s, VcxCmd *cmd)
{
    uint32_t tdn = vcx_get(cmd->in, VCX_DEALLOC_TD_IN_TD);
    VcxTd *td = vcx_td_get(s, tdn);

    if (!td) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TD_NONE,
                            "no transport domain 0x%x", tdn);
    }
    if (td->refs) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_TD_BUSY,
                            "transport domain 0x%x still used by %u TISes and TIRs", tdn,
                            td->refs);
    }
    trace_vcx_nic_obj("TD", "dealloc", tdn);
    vcx_td_free(s, td);
    return VCX_CMD_STAT_OK;
}

/* tisc fields the device implements: prio and transport_domain; the rest must be 0. */
static uint8_t vcx_tisc_check(VcxCmd *cmd, const uint8_t *tisc)
{
    if (vcx_get(tisc, VCX_TISC_TLS_EN) || vcx_get(tisc, VCX_TISC_STRICT_LAG_TX_PORT_AFFINITY) ||
        vcx_get(tisc, VCX_TISC_LAG_TX_PORT_AFFINITY) || vcx_get(tisc, VCX_TISC_UNDERLAY_QPN)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIS_UNSUPPORTED,
                            "tls_en %u strict_lag %u lag_tx_port_affinity %u "
                            "underlay_qpn 0x%x: no TLS, LAG or IPoIB underlay",
                            vcx_get(tisc, VCX_TISC_TLS_EN),
                            vcx_get(tisc, VCX_TISC_STRICT_LAG_TX_PORT_AFFINITY),
                            vcx_get(tisc, VCX_TISC_LAG_TX_PORT_AFFINITY),
                            vcx_get(tisc, VCX_TISC_UNDERLAY_QPN));
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_create_tis(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *tisc = cmd->in + VCX_CREATE_TIS_IN_CTX_AT;
    uint32_t tdn = vcx_get(tisc, VCX_TISC_TRANSPORT_DOMAIN);
    VcxTd *td = vcx_td_get(s, tdn);
    uint8_t status = vcx_tisc_check(cmd, tisc);
    VcxTis *tis;

    if (status) {
        return status;
    }
    if (!td) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIS_TD,
                            "transport_domain 0x%x does not exist", tdn);
    }
    tis = g_new0(VcxTis, 1);
    if (!vcx_obj_alloc(&vcx_nic(s)->tises, tis, &tis->tisn)) {
        g_free(tis);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_TIS_FULL,
                            "all %u TISes in use", (1u << VCX_NIC_LOG_MAX_TIS) - 1);
    }
    tis->prio = vcx_get(tisc, VCX_TISC_PRIO);
    tis->tdn = tdn;
    tis->td = td;
    td->refs++;
    vcx_set(cmd->out, VCX_CREATE_TIS_OUT_TISN, tis->tisn);
    trace_vcx_nic_obj("TIS", "create", tis->tisn);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_modify_tis(VcxState *s, VcxCmd *cmd)
{
    uint32_t tisn = vcx_get(cmd->in, VCX_MODIFY_TIS_IN_TISN);
    const uint8_t *tisc = cmd->in + VCX_MODIFY_TIS_IN_CTX_AT;
    VcxTis *tis = vcx_tis_get(s, tisn);

    if (!tis) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIS_NONE, "no TIS 0x%x",
                            tisn);
    }
    if (vcx_get(cmd->in, VCX_MODIFY_TIS_IN_BITMASK_LAG_TX_PORT_AFFINITY) ||
        vcx_get(cmd->in, VCX_MODIFY_TIS_IN_BITMASK_STRICT_LAG)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIS_BITMASK,
                            "bitmask selects LAG fields: no LAG");
    }
    if (vcx_get(cmd->in, VCX_MODIFY_TIS_IN_BITMASK_PRIO)) {
        tis->prio = vcx_get(tisc, VCX_TISC_PRIO);
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_tis(VcxState *s, VcxCmd *cmd)
{
    uint32_t tisn = vcx_get(cmd->in, VCX_OBJ_NUMBER);
    VcxTis *tis = vcx_tis_get(s, tisn);
    uint8_t *tisc = cmd->out + VCX_QUERY_TIS_OUT_CTX_AT;

    if (!tis) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIS_NONE, "no TIS 0x%x",
                            tisn);
    }
    vcx_set(tisc, VCX_TISC_PRIO, tis->prio);
    vcx_set(tisc, VCX_TISC_TRANSPORT_DOMAIN, tis->tdn);
    return VCX_CMD_STAT_OK;
}

void vcx_tis_free(VcxState *s, VcxTis *tis)
{
    tis->td->refs--;
    vcx_obj_remove(&vcx_nic(s)->tises, tis->tisn);
    g_free(tis);
}

uint8_t vcx_cmd_destroy_tis(VcxState *s, VcxCmd *cmd)
{
    uint32_t tisn = vcx_get(cmd->in, VCX_OBJ_NUMBER);
    VcxTis *tis = vcx_tis_get(s, tisn);

    if (!tis) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIS_NONE, "no TIS 0x%x",
                            tisn);
    }
    if (tis->refs) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_TIS_BUSY,
                            "TIS 0x%x still used by %u SQs", tisn, tis->refs);
    }
    trace_vcx_nic_obj("TIS", "destroy", tisn);
    vcx_tis_free(s, tis);
    return VCX_CMD_STAT_OK;
}
