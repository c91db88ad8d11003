/*
 * vcx: TIRs (CREATE/MODIFY/QUERY/DESTROY_TIR) and RQTs (CREATE/MODIFY/QUERY/DESTROY_RQT),
 * PRM "Transport Interface Receive" and "RQ Table".
 *
 * A TIR is where steering delivers a frame: directly to one RQ (disp_type 0,
 * inline_rqn), or indirectly through an RQT (disp_type 1) whose entry is chosen by the
 * Toeplitz hash (rx_hash_fn 2), or the inverted XOR8 (1), of the fields the outer
 * selector names: source and destination IPv4/IPv6 address, TCP/UDP ports and the IPsec
 * SPI (ESP or AH), in that order, with the TIR's 40-byte key (vcx-nic-rx.c). Without
 * hashing an indirect TIR delivers to the RQT's first entry. rx_hash_symmetric makes both
 * directions of a flow hash alike (vcx_rx_rss). No LRO (packet_merge_mask 0), no TLS, no
 * tunnel offloads, no inner selector. self_lb_block bit 0 (unicast) and bit 1
 * (multicast) keep frames sent by a TIS of the TIR's own transport domain and looped back
 * inside the port away from it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/vcx/trace.h"
#include "vcx-nic.h"

enum {
    SYND_RQT_FULL = 0x70,
    SYND_RQT_NONE,
    SYND_RQT_BUSY,
    SYND_RQT_SIZE,
    SYND_RQT_LEN,
    SYND_RQT_RQ,
    SYND_RQT_TYPE,
    SYND_RQT_BITMASK,
    SYND_TIR_FULL = 0x80,
    SYND_TIR_NONE,
    SYND_TIR_BUSY,
    SYND_TIR_DISP,
    SYND_TIR_UNSUPPORTED,
    SYND_TIR_TD,
    SYND_TIR_RQ,
    SYND_TIR_RQT,
    SYND_TIR_HASH_FN,
    SYND_TIR_FIELDS,
    SYND_TIR_POW2,
    SYND_TIR_BITMASK,
};

/*
 * RQT
 */

/* The rq_num list of an input: n entries, each an RQ; references taken on success. */
static uint8_t vcx_rqt_list(VcxState *s, VcxCmd *cmd, uint32_t at, uint32_t n,
                            uint32_t **list)
{
    uint32_t *l;

    if (cmd->in_len < at || (cmd->in_len - at) / VCX_RQT_ENTRY_SIZE < n) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_INPUT_LEN, SYND_RQT_LEN,
                            "%u rq_num entries announced, the input holds %u", n,
                            cmd->in_len > at ? (cmd->in_len - at) / VCX_RQT_ENTRY_SIZE : 0);
    }
    l = g_new(uint32_t, n);
    for (uint32_t i = 0; i < n; i++) {
        l[i] = vcx_get(cmd->in + at + i * VCX_RQT_ENTRY_SIZE, VCX_RQT_RQN);
        if (!vcx_rq_get(s, l[i])) {
            uint32_t bad = l[i];

            g_free(l);
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQT_RQ,
                                "rq_num[%u] 0x%x is not an RQ", i, bad);
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        vcx_rq_get(s, l[i])->refs++;
    }
    *list = l;
    return VCX_CMD_STAT_OK;
}

static void vcx_rqt_unref(VcxState *s, VcxRqt *rqt)
{
    for (uint32_t i = 0; i < rqt->size; i++) {
        VcxNicWq *rq = vcx_rq_get(s, rqt->rqn[i]);

        if (rq) {
            rq->refs--;
        }
    }
    g_free(rqt->rqn);
    rqt->rqn = NULL;
    rqt->size = 0;
}

static uint8_t vcx_rqtc_check(VcxCmd *cmd, const uint8_t *rqtc, uint32_t max)
{
    uint32_t size = vcx_get(rqtc, VCX_RQTC_RQT_ACTUAL_SIZE);

    if (vcx_get(rqtc, VCX_RQTC_LIST_Q_TYPE) || vcx_get(rqtc, VCX_RQTC_RQ_VHCA_ID_FORMAT)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQT_TYPE,
                            "list_q_type %u rq_vhca_id_format %u: RQs of this function only",
                            vcx_get(rqtc, VCX_RQTC_LIST_Q_TYPE),
                            vcx_get(rqtc, VCX_RQTC_RQ_VHCA_ID_FORMAT));
    }
    if (!max || max > (1u << VCX_NIC_LOG_MAX_RQT_SIZE) || !size || size > max) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQT_SIZE,
                            "rqt_max_size %u rqt_actual_size %u: 1 <= actual <= max <= %u",
                            max, size, 1u << VCX_NIC_LOG_MAX_RQT_SIZE);
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_create_rqt(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *rqtc = cmd->in + VCX_CREATE_RQT_IN_CTX_AT;
    uint32_t max = vcx_get(rqtc, VCX_RQTC_RQT_MAX_SIZE);
    uint32_t size = vcx_get(rqtc, VCX_RQTC_RQT_ACTUAL_SIZE);
    uint8_t status = vcx_rqtc_check(cmd, rqtc, max);
    uint32_t *list;
    VcxRqt *rqt;

    if (status) {
        return status;
    }
    status = vcx_rqt_list(s, cmd, VCX_CREATE_RQT_IN_CTX_AT + VCX_RQTC_RQ_NUM_AT, size,
                          &list);
    if (status) {
        return status;
    }
    rqt = g_new0(VcxRqt, 1);
    rqt->rqn = list;
    rqt->size = size;
    rqt->max_size = max;
    if (!vcx_obj_alloc(&vcx_nic(s)->rqts, rqt, &rqt->rqtn)) {
        vcx_rqt_unref(s, rqt);
        g_free(rqt);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_RQT_FULL,
                            "all %u RQTs in use", (1u << VCX_NIC_LOG_MAX_RQT) - 1);
    }
    vcx_set(cmd->out, VCX_CREATE_RQT_OUT_RQTN, rqt->rqtn);
    trace_vcx_nic_obj("RQT", "create", rqt->rqtn);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_modify_rqt(VcxState *s, VcxCmd *cmd)
{
    uint32_t rqtn = vcx_get(cmd->in, VCX_MODIFY_RQT_IN_RQTN);
    const uint8_t *rqtc = cmd->in + VCX_MODIFY_RQT_IN_CTX_AT;
    uint32_t size = vcx_get(rqtc, VCX_RQTC_RQT_ACTUAL_SIZE);
    VcxRqt *rqt = vcx_rqt_get(s, rqtn);
    uint32_t *list;
    uint8_t status;

    if (!rqt) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQT_NONE, "no RQT 0x%x",
                            rqtn);
    }
    if (!vcx_get(cmd->in, VCX_MODIFY_RQT_IN_BITMASK_RQN_LIST)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQT_BITMASK,
                            "bitmask.rqn_list 0: nothing else can be modified");
    }
    status = vcx_rqtc_check(cmd, rqtc, rqt->max_size);
    if (!status) {
        status = vcx_rqt_list(s, cmd, VCX_MODIFY_RQT_IN_CTX_AT + VCX_RQTC_RQ_NUM_AT, size,
                              &list);
    }
    if (status) {
        return status;
    }
    vcx_rqt_unref(s, rqt);
    rqt->rqn = list;
    rqt->size = size;
    trace_vcx_nic_obj("RQT", "modify", rqtn);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_rqt(VcxState *s, VcxCmd *cmd)
{
    uint32_t rqtn = vcx_get(cmd->in, VCX_OBJ_NUMBER);
    VcxRqt *rqt = vcx_rqt_get(s, rqtn);
    uint8_t *rqtc = cmd->out + VCX_QUERY_RQT_OUT_CTX_AT;
    uint32_t room;

    if (!rqt) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQT_NONE, "no RQT 0x%x",
                            rqtn);
    }
    vcx_set(rqtc, VCX_RQTC_RQT_MAX_SIZE, rqt->max_size);
    vcx_set(rqtc, VCX_RQTC_RQT_ACTUAL_SIZE, rqt->size);
    room = (cmd->out_len - VCX_QUERY_RQT_OUT_LEN) / VCX_RQT_ENTRY_SIZE;
    for (uint32_t i = 0; i < MIN(room, rqt->size); i++) {
        vcx_set(rqtc + VCX_RQTC_RQ_NUM_AT + i * VCX_RQT_ENTRY_SIZE, VCX_RQT_RQN,
                rqt->rqn[i]);
    }
    return VCX_CMD_STAT_OK;
}

void vcx_rqt_free(VcxState *s, VcxRqt *rqt)
{
    vcx_rqt_unref(s, rqt);
    vcx_obj_remove(&vcx_nic(s)->rqts, rqt->rqtn);
    g_free(rqt);
}

uint8_t vcx_cmd_destroy_rqt(VcxState *s, VcxCmd *cmd)
{
    uint32_t rqtn = vcx_get(cmd->in, VCX_OBJ_NUMBER);
    VcxRqt *rqt = vcx_rqt_get(s, rqtn);

    if (!rqt) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_RQT_NONE, "no RQT 0x%x",
                            rqtn);
    }
    if (rqt->refs) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_RQT_BUSY,
                            "RQT 0x%x still used by %u TIRs", rqtn, rqt->refs);
    }
    trace_vcx_nic_obj("RQT", "destroy", rqtn);
    vcx_rqt_free(s, rqt);
    return VCX_CMD_STAT_OK;
}

/*
 * TIR
 */

/* The hash part of a tirc: function, key and the outer selector. */
static uint8_t vcx_tir_hash_check(VcxState *s, VcxCmd *cmd, const uint8_t *tirc,
                                  uint32_t disp, uint32_t rqtn)
{
    uint32_t fn = vcx_get(tirc, VCX_TIRC_RX_HASH_FN);
    const uint8_t *sel = tirc + VCX_TIRC_HASH_OUTER_AT;
    const uint8_t *inner = tirc + VCX_TIRC_HASH_INNER_AT;
    uint32_t fields = vcx_get(sel, VCX_HASH_SEL_SELECTED_FIELDS);
    const uint32_t known = VCX_HASH_FIELD_SEL_SRC_IP | VCX_HASH_FIELD_SEL_DST_IP |
                           VCX_HASH_FIELD_SEL_L4_SPORT | VCX_HASH_FIELD_SEL_L4_DPORT |
                           VCX_HASH_FIELD_SEL_IPSEC_SPI;
    VcxRqt *rqt;

    if (fn != VCX_RX_HASH_FN_NONE &&
        (fn > VCX_RX_HASH_FN_TOEPLITZ || disp != VCX_TIRC_DISP_TYPE_INDIRECT)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIR_HASH_FN,
                            "rx_hash_fn %u with disp_type %u: inverted XOR8 (1) or "
                            "Toeplitz (2) on an indirect TIR only", fn, disp);
    }
    if (vcx_be32_load(inner) || (fields & ~known)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIR_FIELDS,
                            "inner selector 0x%08x, selected_fields 0x%x: outer IP "
                            "addresses and L4 ports (0x%x) only", vcx_be32_load(inner),
                            fields, known);
    }
    rqt = vcx_rqt_get(s, rqtn);
    if (fn != VCX_RX_HASH_FN_NONE && rqt && (rqt->size & (rqt->size - 1))) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIR_POW2,
                            "RQT 0x%x has %u entries: a hashing TIR needs a power of two",
                            rqtn, rqt->size);
    }
    return VCX_CMD_STAT_OK;
}

static void vcx_tir_set_hash(VcxTir *tir, const uint8_t *tirc)
{
    const uint8_t *sel = tirc + VCX_TIRC_HASH_OUTER_AT;

    tir->hash_fn = vcx_get(tirc, VCX_TIRC_RX_HASH_FN);
    tir->symmetric = vcx_get(tirc, VCX_TIRC_RX_HASH_SYMMETRIC);
    memcpy(tir->key, vcx_cptr(tirc, VCX_TIRC_RX_HASH_TOEPLITZ_KEY), sizeof(tir->key));
    tir->l3_type = vcx_get(sel, VCX_HASH_SEL_L3_PROT_TYPE);
    tir->l4_type = vcx_get(sel, VCX_HASH_SEL_L4_PROT_TYPE);
    tir->fields = vcx_get(sel, VCX_HASH_SEL_SELECTED_FIELDS);
}

uint8_t vcx_cmd_create_tir(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *tirc = cmd->in + VCX_CREATE_TIR_IN_CTX_AT;
    uint32_t disp = vcx_get(tirc, VCX_TIRC_DISP_TYPE);
    uint32_t tdn = vcx_get(tirc, VCX_TIRC_TRANSPORT_DOMAIN);
    uint32_t rqn = vcx_get(tirc, VCX_TIRC_INLINE_RQN);
    uint32_t rqtn = vcx_get(tirc, VCX_TIRC_INDIRECT_TABLE);
    VcxTd *td = vcx_td_get(s, tdn);
    VcxNicWq *rq = NULL;
    VcxRqt *rqt = NULL;
    VcxTir *tir;
    uint8_t status;

    if (disp > VCX_TIRC_DISP_TYPE_INDIRECT) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIR_DISP,
                            "disp_type %u: direct (0) or indirect (1)", disp);
    }
    if (vcx_get(tirc, VCX_TIRC_TLS_EN) || vcx_get(tirc, VCX_TIRC_PACKET_MERGE_MASK) ||
        vcx_get(tirc, VCX_TIRC_TUNNELED_OFFLOAD_EN)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIR_UNSUPPORTED,
                            "tls_en %u packet_merge_mask %u tunneled_offload_en %u: no "
                            "TLS, LRO or tunnel offloads", vcx_get(tirc, VCX_TIRC_TLS_EN),
                            vcx_get(tirc, VCX_TIRC_PACKET_MERGE_MASK),
                            vcx_get(tirc, VCX_TIRC_TUNNELED_OFFLOAD_EN));
    }
    if (!td) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIR_TD,
                            "transport_domain 0x%x does not exist", tdn);
    }
    if (disp == VCX_TIRC_DISP_TYPE_DIRECT) {
        rq = vcx_rq_get(s, rqn);
        if (!rq) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIR_RQ,
                                "inline_rqn 0x%x is not an RQ", rqn);
        }
    } else {
        rqt = vcx_rqt_get(s, rqtn);
        if (!rqt) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIR_RQT,
                                "indirect_table 0x%x is not an RQT", rqtn);
        }
    }
    status = vcx_tir_hash_check(s, cmd, tirc, disp, rqtn);
    if (status) {
        return status;
    }
    tir = g_new0(VcxTir, 1);
    if (!vcx_obj_alloc(&vcx_nic(s)->tirs, tir, &tir->tirn)) {
        g_free(tir);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_TIR_FULL,
                            "all %u TIRs in use", (1u << VCX_NIC_LOG_MAX_TIR) - 1);
    }
    memcpy(tir->ctx, tirc, sizeof(tir->ctx));
    tir->disp_type = disp;
    tir->tdn = tdn;
    tir->self_lb_block = vcx_get(tirc, VCX_TIRC_SELF_LB_BLOCK);
    vcx_tir_set_hash(tir, tirc);
    td->refs++;
    if (rq) {
        tir->inline_rqn = rqn;
        rq->refs++;
    } else {
        tir->rqtn = rqtn;
        rqt->refs++;
    }
    vcx_set(cmd->out, VCX_CREATE_TIR_OUT_TIRN, tir->tirn);
    trace_vcx_nic_obj("TIR", "create", tir->tirn);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_modify_tir(VcxState *s, VcxCmd *cmd)
{
    uint32_t tirn = vcx_get(cmd->in, VCX_MODIFY_TIR_IN_TIRN);
    const uint8_t *tirc = cmd->in + VCX_MODIFY_TIR_IN_CTX_AT;
    bool lb = vcx_get(cmd->in, VCX_MODIFY_TIR_IN_BITMASK_SELF_LB_EN);
    bool hash = vcx_get(cmd->in, VCX_MODIFY_TIR_IN_BITMASK_HASH);
    VcxTir *tir = vcx_tir_get(s, tirn);
    uint8_t status;

    if (!tir) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIR_NONE, "no TIR 0x%x",
                            tirn);
    }
    if (vcx_get(cmd->in, VCX_MODIFY_TIR_IN_BITMASK_PACKET_MERGE) &&
        vcx_get(tirc, VCX_TIRC_PACKET_MERGE_MASK)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIR_UNSUPPORTED,
                            "packet_merge_mask %u: no LRO",
                            vcx_get(tirc, VCX_TIRC_PACKET_MERGE_MASK));
    }
    if (hash) {
        status = vcx_tir_hash_check(s, cmd, tirc, tir->disp_type, tir->rqtn);
        if (status) {
            return status;
        }
        vcx_tir_set_hash(tir, tirc);
        memcpy(tir->ctx + VCX_FLD_BYTE(VCX_TIRC_RX_HASH_TOEPLITZ_KEY),
               vcx_cptr(tirc, VCX_TIRC_RX_HASH_TOEPLITZ_KEY),
               VCX_TIRC_HASH_INNER_AT - VCX_FLD_BYTE(VCX_TIRC_RX_HASH_TOEPLITZ_KEY));
        vcx_set(tir->ctx, VCX_TIRC_RX_HASH_FN, tir->hash_fn);
    }
    if (lb) {
        tir->self_lb_block = vcx_get(tirc, VCX_TIRC_SELF_LB_BLOCK);
        vcx_set(tir->ctx, VCX_TIRC_SELF_LB_BLOCK, tir->self_lb_block);
    }
    trace_vcx_nic_obj("TIR", "modify", tirn);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_tir(VcxState *s, VcxCmd *cmd)
{
    uint32_t tirn = vcx_get(cmd->in, VCX_OBJ_NUMBER);
    VcxTir *tir = vcx_tir_get(s, tirn);

    if (!tir) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIR_NONE, "no TIR 0x%x",
                            tirn);
    }
    memcpy(cmd->out + VCX_QUERY_TIR_OUT_CTX_AT, tir->ctx, sizeof(tir->ctx));
    return VCX_CMD_STAT_OK;
}

void vcx_tir_free(VcxState *s, VcxTir *tir)
{
    VcxTd *td = vcx_td_get(s, tir->tdn);

    if (td) {
        td->refs--;
    }
    if (tir->disp_type == VCX_TIRC_DISP_TYPE_DIRECT) {
        VcxNicWq *rq = vcx_rq_get(s, tir->inline_rqn);

        if (rq) {
            rq->refs--;
        }
    } else {
        VcxRqt *rqt = vcx_rqt_get(s, tir->rqtn);

        if (rqt) {
            rqt->refs--;
        }
    }
    vcx_obj_remove(&vcx_nic(s)->tirs, tir->tirn);
    g_free(tir);
}

uint8_t vcx_cmd_destroy_tir(VcxState *s, VcxCmd *cmd)
{
    uint32_t tirn = vcx_get(cmd->in, VCX_OBJ_NUMBER);
    VcxTir *tir = vcx_tir_get(s, tirn);

    if (!tir) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TIR_NONE, "no TIR 0x%x",
                            tirn);
    }
    if (tir->refs) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_TIR_BUSY,
                            "TIR 0x%x still a destination of %u flow table entries", tirn,
                            tir->refs);
    }
    trace_vcx_nic_obj("TIR", "destroy", tirn);
    vcx_tir_free(s, tir);
    return VCX_CMD_STAT_OK;
}
