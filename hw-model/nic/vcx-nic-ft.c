/*
 * vcx: NIC RX flow tables (PRM "Flow Table"): SET_FLOW_TABLE_ROOT,
 * CREATE/DESTROY/QUERY_FLOW_TABLE, CREATE/DESTROY/QUERY_FLOW_GROUP,
 * SET/QUERY/DELETE_FLOW_TABLE_ENTRY, and the lookup a received frame goes through.
 *
 * A table (level 0..max_ft_level, 2^log_size entries) holds groups, each a range of entry
 * indexes sharing one match criteria mask over the outer headers (fte_match_set_lyr_2_4:
 * DMAC, SMAC, ethertype, the first VLAN tag's kind (cvlan_tag, svlan_tag) and its
 * first_prio, first_cfi and first_vid, IP version, IP protocol, IPv4/IPv6 source and
 * destination, TCP and UDP ports; any other criteria bit is refused). An entry's match
 * value is kept masked by its group's criteria, as hardware ignores the other bits.
 * Entries are kept only where set (a table may have 2^16 slots). An entry forwards to one
 * destination (a TIR, or a table of a higher level) or drops; the flow tag goes into the
 * receive CQE. A table's miss either drops (default) or forwards to a table of a higher
 * level. Only NIC RX tables exist (table_type 0); the NIC TX, FDB and RDMA tables are not
 * implemented (their ft_support caps are 0).
 *
 * Each group keeps a hash of its entries' masked values (the entry with the lowest index
 * for equal values), which the lookup of a received frame uses (vcx-nic-steer.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/vcx/trace.h"
#include "vcx-nic.h"

enum {
    SYND_FT_TYPE = 0x90,
    SYND_FT_VPORT,
    SYND_FT_FULL,
    SYND_FT_NONE,
    SYND_FT_BUSY,
    SYND_FT_LEVEL,
    SYND_FT_SIZE,
    SYND_FT_MISS,
    SYND_FT_UNSUPPORTED,
    SYND_FT_GROUPS,
    SYND_ROOT_UNSUPPORTED = 0xa0,
    SYND_FG_RANGE = 0xb0,
    SYND_FG_OVERLAP,
    SYND_FG_FULL,
    SYND_FG_CRITERIA,
    SYND_FG_UNSUPPORTED,
    SYND_FG_NONE,
    SYND_FG_BUSY,
    SYND_FTE_INDEX = 0xc0,
    SYND_FTE_GROUP,
    SYND_FTE_EXISTS,
    SYND_FTE_NONE,
    SYND_FTE_ACTION,
    SYND_FTE_DEST_COUNT,
    SYND_FTE_DEST_TYPE,
    SYND_FTE_DEST_TIR,
    SYND_FTE_DEST_FT,
    SYND_FTE_LEN,
    SYND_FTE_MODIFY_MASK,
    SYND_FTE_UNSUPPORTED,
    SYND_FTE_FULL,
};

/* Criteria bits the device can match (fte_match_set_lyr_2_4 of the outer headers). */
static void vcx_ft_supported_mask(uint8_t *m)
{
    memset(m, 0, VCX_MATCH_SET_SIZE);
    vcx_set(m, VCX_MATCH_SMAC_47_16, 0xffffffff);
    vcx_set(m, VCX_MATCH_SMAC_15_0, 0xffff);
    vcx_set(m, VCX_MATCH_ETHERTYPE, 0xffff);
    vcx_set(m, VCX_MATCH_DMAC_47_16, 0xffffffff);
    vcx_set(m, VCX_MATCH_DMAC_15_0, 0xffff);
    vcx_set(m, VCX_MATCH_CVLAN_TAG, 1);
    vcx_set(m, VCX_MATCH_SVLAN_TAG, 1);
    vcx_set(m, VCX_MATCH_FIRST_PRIO, 0x7);
    vcx_set(m, VCX_MATCH_FIRST_CFI, 1);
    vcx_set(m, VCX_MATCH_FIRST_VID, 0xfff);
    vcx_set(m, VCX_MATCH_IP_PROTOCOL, 0xff);
    vcx_set(m, VCX_MATCH_IP_VERSION, 0xf);
    vcx_set(m, VCX_MATCH_TCP_SPORT, 0xffff);
    vcx_set(m, VCX_MATCH_TCP_DPORT, 0xffff);
    vcx_set(m, VCX_MATCH_UDP_SPORT, 0xffff);
    vcx_set(m, VCX_MATCH_UDP_DPORT, 0xffff);
    memset(m + VCX_MATCH_SRC_IP_AT, 0xff, VCX_MATCH_IP_LEN);
    memset(m + VCX_MATCH_DST_IP_AT, 0xff, VCX_MATCH_IP_LEN);
}

static guint vcx_ft_value_hash(gconstpointer p)
{
    const uint8_t *b = p;
    uint32_t h = 2166136261u;

    for (uint32_t i = 0; i < VCX_MATCH_SET_SIZE; i++) {
        h = (h ^ b[i]) * 16777619u;
    }
    return h;
}

static gboolean vcx_ft_value_equal(gconstpointer a, gconstpointer b)
{
    return !memcmp(a, b, VCX_MATCH_SET_SIZE);
}

/* Checks every flow table command shares: NIC RX, this function's vport. */
static uint8_t vcx_ft_cmd_check(VcxCmd *cmd)
{
    uint32_t type = vcx_get(cmd->in, VCX_FT_IN_TABLE_TYPE);

    if (type != VCX_FLOW_TABLE_TYPE_NIC_RX) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FT_TYPE,
                            "table_type %u: only NIC RX (0) tables", type);
    }
    return vcx_nic_vport_check(cmd, VCX_FT_IN_OTHER_VPORT, VCX_FT_IN_VPORT_NUMBER,
                               SYND_FT_VPORT);
}

static uint8_t vcx_ft_lookup(VcxState *s, VcxCmd *cmd, VcxFt **ft)
{
    uint32_t id = vcx_get(cmd->in, VCX_FT_IN_TABLE_ID);
    uint8_t status = vcx_ft_cmd_check(cmd);

    if (status) {
        return status;
    }
    *ft = vcx_ft_get(s, id);
    if (!*ft) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FT_NONE,
                            "no flow table 0x%x", id);
    }
    return VCX_CMD_STAT_OK;
}

/*
 * Tables
 */

uint8_t vcx_cmd_create_ft(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *ftc = cmd->in + VCX_CREATE_FT_IN_CTX_AT;
    uint32_t level = vcx_get(ftc, VCX_FTC_LEVEL);
    uint32_t log_size = vcx_get(ftc, VCX_FTC_LOG_SIZE);
    uint32_t miss = vcx_get(ftc, VCX_FTC_TABLE_MISS_ACTION);
    uint32_t miss_id = vcx_get(ftc, VCX_FTC_TABLE_MISS_ID);
    uint8_t status = vcx_ft_cmd_check(cmd);
    VcxFt *ft, *next = NULL;

    if (status) {
        return status;
    }
    if (vcx_get(ftc, VCX_FTC_REFORMAT_EN) || vcx_get(ftc, VCX_FTC_DECAP_EN) ||
        vcx_get(ftc, VCX_FTC_SW_OWNER) || vcx_get(ftc, VCX_FTC_TERMINATION_TABLE) ||
        vcx_get(ftc, VCX_FTC_RTC_VALID) || vcx_get(ftc, VCX_FTC_LAG_MASTER_NEXT_TABLE_ID)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FT_UNSUPPORTED,
                            "reformat / decap / sw_owner / termination / LAG not supported");
    }
    if (level > VCX_NIC_MAX_FT_LEVEL) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FT_LEVEL,
                            "level %u > max_ft_level %u", level, VCX_NIC_MAX_FT_LEVEL);
    }
    if (log_size > VCX_NIC_LOG_MAX_FT_SIZE) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FT_SIZE,
                            "log_size %u > log_max_ft_size %u", log_size,
                            VCX_NIC_LOG_MAX_FT_SIZE);
    }
    if (miss == VCX_FT_MISS_ACTION_FWD) {
        next = vcx_ft_get(s, miss_id);
        if (!next || next->level <= level) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FT_MISS,
                                "table_miss_id 0x%x: %s", miss_id,
                                next ? "not at a higher level" : "no such table");
        }
    } else if (miss != VCX_FT_MISS_ACTION_DEF) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FT_MISS,
                            "table_miss_action %u: default (0) or forward (1)", miss);
    }
    ft = g_new0(VcxFt, 1);
    if (!vcx_obj_alloc(&vcx_nic(s)->fts, ft, &ft->id)) {
        g_free(ft);
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_FT_FULL,
                            "all %u flow tables in use", (1u << VCX_NIC_LOG_MAX_FT) - 1);
    }
    ft->level = level;
    ft->log_size = log_size;
    ft->miss_action = miss;
    ft->miss_id = next ? miss_id : 0;
    ft->ftes = g_hash_table_new(g_direct_hash, g_direct_equal);
    ft->next_group_id = 1;
    if (next) {
        next->refs++;
    }
    vcx_set(cmd->out, VCX_CREATE_FT_OUT_TABLE_ID, ft->id);
    trace_vcx_nic_obj("flow table", "create", ft->id);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_ft(VcxState *s, VcxCmd *cmd)
{
    uint8_t *ftc = cmd->out + VCX_QUERY_FT_OUT_CTX_AT;
    VcxFt *ft;
    uint8_t status = vcx_ft_lookup(s, cmd, &ft);

    if (status) {
        return status;
    }
    vcx_set(ftc, VCX_FTC_LEVEL, ft->level);
    vcx_set(ftc, VCX_FTC_LOG_SIZE, ft->log_size);
    vcx_set(ftc, VCX_FTC_TABLE_MISS_ACTION, ft->miss_action);
    vcx_set(ftc, VCX_FTC_TABLE_MISS_ID, ft->miss_id);
    return VCX_CMD_STAT_OK;
}

static void vcx_fte_free(VcxState *s, VcxFt *ft, VcxFte *fte);
static void vcx_fg_free(VcxState *s, VcxFt *ft, VcxFg *fg);

void vcx_ft_free(VcxState *s, VcxFt *ft)
{
    VcxNic *n = vcx_nic(s);
    VcxFt *next = vcx_ft_get(s, ft->miss_id);
    GList *all = g_hash_table_get_values(ft->ftes);

    for (GList *l = all; l; l = l->next) {
        vcx_fte_free(s, ft, l->data);
    }
    g_list_free(all);
    while (ft->ngroups) {
        vcx_fg_free(s, ft, ft->groups[ft->ngroups - 1]);
    }
    if (next && ft->miss_action == VCX_FT_MISS_ACTION_FWD) {
        next->refs--;
    }
    if (n->root == ft->id) {
        n->root = 0;
    }
    vcx_obj_remove(&n->fts, ft->id);
    g_hash_table_destroy(ft->ftes);
    g_free(ft);
}

uint8_t vcx_cmd_destroy_ft(VcxState *s, VcxCmd *cmd)
{
    VcxFt *ft;
    uint32_t users;
    uint8_t status = vcx_ft_lookup(s, cmd, &ft);

    if (status) {
        return status;
    }
    /*
     * The root may go: the NIC RX then has no root and drops what it receives, as after
     * SET_FLOW_TABLE_ROOT op_mod 1. mlx5_core destroys the last table of its root
     * namespace without disconnecting it first (fs_core.c update_root_ft_destroy), which
     * ConnectX firmware accepts. A table other tables or entries lead to may not.
     */
    users = ft->refs - (vcx_nic(s)->root == ft->id);
    if (users) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_FT_BUSY,
                            "flow table 0x%x is a destination (%u users)", ft->id, users);
    }
    if (ft->ngroups) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_FT_GROUPS,
                            "flow table 0x%x still has %u groups", ft->id, ft->ngroups);
    }
    trace_vcx_nic_obj("flow table", "destroy", ft->id);
    vcx_ft_free(s, ft);
    return VCX_CMD_STAT_OK;
}

/* op_mod 0 connects table_id as the NIC RX root, op_mod 1 disconnects the root. */
uint8_t vcx_cmd_set_ft_root(VcxState *s, VcxCmd *cmd)
{
    VcxNic *n = vcx_nic(s);
    uint32_t id = vcx_get(cmd->in, VCX_SET_FT_ROOT_IN_TABLE_ID);
    VcxFt *old = vcx_ft_get(s, n->root);
    VcxFt *ft = NULL;
    uint8_t status = vcx_ft_cmd_check(cmd);

    if (status) {
        return status;
    }
    if (vcx_get(cmd->in, VCX_SET_FT_ROOT_IN_UNDERLAY_QPN) ||
        vcx_get(cmd->in, VCX_SET_FT_ROOT_IN_TABLE_OF_OTHER_VPORT)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_ROOT_UNSUPPORTED,
                            "underlay_qpn / table_of_other_vport: not supported");
    }
    if (cmd->op_mod == 0) {
        ft = vcx_ft_get(s, id);
        if (!ft) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FT_NONE,
                                "no flow table 0x%x", id);
        }
        ft->refs++;
    }
    if (old) {
        old->refs--;
    }
    n->root = ft ? ft->id : 0;
    trace_vcx_nic_obj("flow table", "root", n->root);
    return VCX_CMD_STAT_OK;
}

/*
 * Groups
 */

static VcxFg *vcx_fg_find(VcxFt *ft, uint32_t id)
{
    for (uint32_t i = 0; i < ft->ngroups; i++) {
        if (ft->groups[i]->id == id) {
            return ft->groups[i];
        }
    }
    return NULL;
}

static VcxFg *vcx_fg_of_index(VcxFt *ft, uint32_t index)
{
    for (uint32_t i = 0; i < ft->ngroups; i++) {
        if (index >= ft->groups[i]->start && index <= ft->groups[i]->end) {
            return ft->groups[i];
        }
    }
    return NULL;
}

uint8_t vcx_cmd_create_fg(VcxState *s, VcxCmd *cmd)
{
    uint32_t start = vcx_get(cmd->in, VCX_FG_START_FLOW_INDEX);
    uint32_t end = vcx_get(cmd->in, VCX_FG_END_FLOW_INDEX);
    uint32_t en = vcx_get(cmd->in, VCX_FG_MATCH_CRITERIA_ENABLE);
    const uint8_t *crit = cmd->in + VCX_FG_MATCH_CRITERIA_AT + VCX_FTE_MATCH_OUTER_AT;
    uint8_t ok[VCX_MATCH_SET_SIZE];
    uint32_t pos;
    VcxFg *fg;
    VcxFt *ft;
    uint8_t status = vcx_ft_lookup(s, cmd, &ft);

    if (status) {
        return status;
    }
    if (vcx_get(cmd->in, VCX_FG_GROUP_TYPE) || vcx_get(cmd->in, VCX_FG_MATCH_DEFINER_ID)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FG_UNSUPPORTED,
                            "group_type %u match_definer_id %u: no definers",
                            vcx_get(cmd->in, VCX_FG_GROUP_TYPE),
                            vcx_get(cmd->in, VCX_FG_MATCH_DEFINER_ID));
    }
    if (start > end || end >= (1u << ft->log_size)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FG_RANGE,
                            "flow indexes %u..%u outside the table's %u entries", start,
                            end, 1u << ft->log_size);
    }
    for (uint32_t i = 0; i < ft->ngroups; i++) {
        if (start <= ft->groups[i]->end && end >= ft->groups[i]->start) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FG_OVERLAP,
                                "flow indexes %u..%u overlap group %u (%u..%u)", start,
                                end, ft->groups[i]->id, ft->groups[i]->start,
                                ft->groups[i]->end);
        }
    }
    if (ft->ngroups == VCX_NIC_MAX_FG) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_FG_FULL,
                            "flow table 0x%x has %u groups already", ft->id,
                            VCX_NIC_MAX_FG);
    }
    if (en & ~VCX_MATCH_CRITERIA_OUTER) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FG_CRITERIA,
                            "match_criteria_enable 0x%x: outer headers (bit 0) only", en);
    }
    vcx_ft_supported_mask(ok);
    for (uint32_t i = 0; en && i < VCX_MATCH_SET_SIZE; i++) {
        if (crit[i] & ~ok[i]) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FG_CRITERIA,
                                "outer header criteria byte 0x%x = 0x%02x matches a field "
                                "the device cannot match", i, crit[i]);
        }
    }
    fg = g_new0(VcxFg, 1);
    fg->id = ft->next_group_id++;
    fg->start = start;
    fg->end = end;
    fg->criteria_enable = en;
    if (en) {
        memcpy(fg->mask, crit, VCX_MATCH_SET_SIZE);
    }
    fg->by_value = g_hash_table_new(vcx_ft_value_hash, vcx_ft_value_equal);
    for (pos = 0; pos < ft->ngroups && ft->groups[pos]->start < start; pos++) {
        /* groups stay in order of their first index */
    }
    memmove(&ft->groups[pos + 1], &ft->groups[pos],
            (ft->ngroups - pos) * sizeof(ft->groups[0]));
    ft->groups[pos] = fg;
    ft->ngroups++;
    vcx_nic(s)->nfg++;
    vcx_set(cmd->out, VCX_CREATE_FG_OUT_GROUP_ID, fg->id);
    trace_vcx_nic_fg(ft->id, fg->id, start, end);
    return VCX_CMD_STAT_OK;
}

static void vcx_fg_free(VcxState *s, VcxFt *ft, VcxFg *fg)
{
    uint32_t i;

    for (i = 0; i < ft->ngroups && ft->groups[i] != fg; i++) {
    }
    memmove(&ft->groups[i], &ft->groups[i + 1],
            (ft->ngroups - i - 1) * sizeof(ft->groups[0]));
    ft->ngroups--;
    vcx_nic(s)->nfg--;
    g_hash_table_destroy(fg->by_value);
    g_free(fg);
}

/* The flow table the command names and its group id_fld names. */
static uint8_t vcx_fg_lookup(VcxState *s, VcxCmd *cmd, struct vcx_fld id_fld, VcxFt **ft,
                             VcxFg **fg)
{
    uint32_t id = vcx_get(cmd->in, id_fld);
    uint8_t status = vcx_ft_lookup(s, cmd, ft);

    if (status) {
        return status;
    }
    *fg = vcx_fg_find(*ft, id);
    if (!*fg) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FG_NONE,
                            "flow table 0x%x has no group %u", (*ft)->id, id);
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_destroy_fg(VcxState *s, VcxCmd *cmd)
{
    uint32_t id = vcx_get(cmd->in, VCX_DESTROY_FG_IN_GROUP_ID);
    VcxFg *fg;
    VcxFt *ft;
    uint8_t status = vcx_fg_lookup(s, cmd, VCX_DESTROY_FG_IN_GROUP_ID, &ft, &fg);

    if (status) {
        return status;
    }
    if (fg->nftes) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_FG_BUSY,
                            "group %u of flow table 0x%x still has %u entries", id,
                            ft->id, fg->nftes);
    }
    vcx_fg_free(s, ft, fg);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_fg(VcxState *s, VcxCmd *cmd)
{
    VcxFg *fg;
    VcxFt *ft;
    uint8_t status = vcx_fg_lookup(s, cmd, VCX_QUERY_FG_IN_GROUP_ID, &ft, &fg);

    if (status) {
        return status;
    }
    vcx_set(cmd->out, VCX_QUERY_FG_OUT_START_FLOW_INDEX, fg->start);
    vcx_set(cmd->out, VCX_QUERY_FG_OUT_END_FLOW_INDEX, fg->end);
    vcx_set(cmd->out, VCX_QUERY_FG_OUT_MATCH_CRITERIA_ENABLE, fg->criteria_enable);
    memcpy(cmd->out + VCX_QUERY_FG_OUT_MATCH_CRITERIA_AT + VCX_FTE_MATCH_OUTER_AT,
           fg->mask, VCX_MATCH_SET_SIZE);
    return VCX_CMD_STAT_OK;
}

/*
 * Entries
 */

static VcxFte *vcx_fte_at(VcxFt *ft, uint32_t index)
{
    return g_hash_table_lookup(ft->ftes, GUINT_TO_POINTER(index));
}

/*
 * Entries of a group with equal masked values form a chain in index order, whose head
 * (the lowest index, the one a frame matches) the group's hash names: adding or removing
 * an entry costs the length of its value's chain, not the group's size.
 */
static void vcx_fg_link(VcxFg *fg, VcxFte *fte)
{
    VcxFte *head = g_hash_table_lookup(fg->by_value, fte->value), **pp = &head;

    while (*pp && (*pp)->index < fte->index) {
        pp = &(*pp)->next_same;
    }
    fte->next_same = *pp;
    *pp = fte;
    g_hash_table_replace(fg->by_value, head->value, head);
}

static void vcx_fg_unlink(VcxFg *fg, VcxFte *fte)
{
    VcxFte *head = g_hash_table_lookup(fg->by_value, fte->value), **pp = &head;

    while (*pp && *pp != fte) {
        pp = &(*pp)->next_same;
    }
    if (*pp) {
        *pp = fte->next_same;
    }
    g_hash_table_remove(fg->by_value, fte->value);
    if (head) {
        g_hash_table_insert(fg->by_value, head->value, head);
    }
    fte->next_same = NULL;
}

static void vcx_fte_unref_dest(VcxState *s, VcxFte *fte)
{
    if (!(fte->action & VCX_FLOW_ACTION_FWD_DEST)) {
        return;
    }
    if (fte->dest_type == VCX_FLOW_DEST_TYPE_TIR) {
        VcxTir *tir = vcx_tir_get(s, fte->dest_id);

        if (tir) {
            tir->refs--;
        }
    } else {
        VcxFt *t = vcx_ft_get(s, fte->dest_id);

        if (t) {
            t->refs--;
        }
    }
}

static void vcx_fte_free(VcxState *s, VcxFt *ft, VcxFte *fte)
{
    VcxFg *fg = vcx_fg_of_index(ft, fte->index);

    vcx_fte_unref_dest(s, fte);
    g_hash_table_remove(ft->ftes, GUINT_TO_POINTER(fte->index));
    if (fg) {
        vcx_fg_unlink(fg, fte);
        fg->nftes--;
    }
    ft->nftes--;
    vcx_nic(s)->nfte--;
    g_free(fte);
}

/* Action and destination of a flow_context; references taken by the caller. */
static uint8_t vcx_fte_check(VcxState *s, VcxCmd *cmd, VcxFt *ft, const uint8_t *fc,
                             uint16_t *action, uint8_t *dtype, uint32_t *did)
{
    uint32_t act = vcx_get(fc, VCX_FTE_ACTION);
    uint32_t ndest = vcx_get(fc, VCX_FTE_DESTINATION_LIST_SIZE);
    uint32_t dest_at = VCX_SET_FTE_IN_CTX_AT + VCX_FTE_DEST_AT;
    const uint8_t *d = cmd->in + dest_at;

    if (act != VCX_FLOW_ACTION_FWD_DEST && act != VCX_FLOW_ACTION_DROP) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_ACTION,
                            "action 0x%x: forward (0x4) or drop (0x2) only; no counters, "
                            "encapsulation, header rewrite or VLAN actions", act);
    }
    if (vcx_get(fc, VCX_FTE_EXTENDED_DESTINATION) || vcx_get(fc, VCX_FTE_FLOW_SOURCE) ||
        vcx_get(fc, VCX_FTE_FLOW_COUNTER_LIST_SIZE)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_UNSUPPORTED,
                            "extended_destination / flow_source / counters not supported");
    }
    if (act == VCX_FLOW_ACTION_DROP ? ndest != 0 : ndest != 1) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_DEST_COUNT,
                            "destination_list_size %u with action 0x%x: one destination "
                            "to forward (log_max_destination 0), none to drop", ndest, act);
    }
    *action = act;
    *dtype = 0;
    *did = 0;
    if (act == VCX_FLOW_ACTION_DROP) {
        return VCX_CMD_STAT_OK;
    }
    if (cmd->in_len < dest_at + VCX_DEST_SIZE) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_INPUT_LEN, SYND_FTE_LEN,
                            "input of %u bytes has no room for the destination at 0x%x",
                            cmd->in_len, dest_at);
    }
    *dtype = vcx_get(d, VCX_DEST_TYPE);
    *did = vcx_get(d, VCX_DEST_ID);
    if (*dtype == VCX_FLOW_DEST_TYPE_TIR) {
        if (!vcx_tir_get(s, *did)) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_DEST_TIR,
                                "destination TIR 0x%x does not exist", *did);
        }
    } else if (*dtype == VCX_FLOW_DEST_TYPE_FLOW_TABLE) {
        VcxFt *t = vcx_ft_get(s, *did);

        if (!t || t->level <= ft->level) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_DEST_FT,
                                "destination flow table 0x%x: %s", *did,
                                t ? "not at a higher level" : "no such table");
        }
    } else {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_DEST_TYPE,
                            "destination_type 0x%x: TIR (2) or flow table (1) only",
                            *dtype);
    }
    return VCX_CMD_STAT_OK;
}

static void vcx_fte_ref_dest(VcxState *s, VcxFte *fte)
{
    if (!(fte->action & VCX_FLOW_ACTION_FWD_DEST)) {
        return;
    }
    if (fte->dest_type == VCX_FLOW_DEST_TYPE_TIR) {
        vcx_tir_get(s, fte->dest_id)->refs++;
    } else {
        vcx_ft_get(s, fte->dest_id)->refs++;
    }
}

uint8_t vcx_cmd_set_fte(VcxState *s, VcxCmd *cmd)
{
    uint32_t index = vcx_get(cmd->in, VCX_SET_FTE_IN_FLOW_INDEX);
    const uint8_t *fc = cmd->in + VCX_SET_FTE_IN_CTX_AT;
    uint32_t gid = vcx_get(fc, VCX_FTE_GROUP_ID);
    uint32_t mask = vcx_get(cmd->in, VCX_SET_FTE_IN_MODIFY_ENABLE_MASK);
    uint16_t action = 0;
    uint8_t dtype = 0;
    uint32_t did = 0;
    VcxFte *fte;
    VcxFg *fg;
    VcxFt *ft;
    uint8_t status = vcx_ft_lookup(s, cmd, &ft);

    if (status) {
        return status;
    }
    if (index >= (1u << ft->log_size)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_INDEX,
                            "flow_index %u outside the table's %u entries", index,
                            1u << ft->log_size);
    }
    fg = vcx_fg_of_index(ft, index);
    if (!fg || fg->id != gid) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_GROUP,
                            "flow_index %u is %s, flow_context names group %u", index,
                            fg ? "in another group" : "in no group", gid);
    }
    if (vcx_get(cmd->in, VCX_SET_FTE_IN_IGNORE_FLOW_LEVEL)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_UNSUPPORTED,
                            "ignore_flow_level not supported");
    }
    fte = vcx_fte_at(ft, index);
    if (cmd->op_mod == VCX_SET_FTE_OP_MOD_CREATE && fte) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_FTE_EXISTS,
                            "flow_index %u of table 0x%x is in use", index, ft->id);
    }
    if (cmd->op_mod == VCX_SET_FTE_OP_MOD_CREATE && vcx_nic(s)->nfte >= VCX_NIC_MAX_FTES) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_EXCEED_LIM, SYND_FTE_FULL,
                            "all %u flow table entries of the device in use",
                            VCX_NIC_MAX_FTES);
    }
    if (cmd->op_mod == VCX_SET_FTE_OP_MOD_MODIFY) {
        const uint32_t known = VCX_SET_FTE_MODIFY_ACTION | VCX_SET_FTE_MODIFY_FLOW_TAG |
                               VCX_SET_FTE_MODIFY_DESTINATION;

        if (!fte) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_NONE,
                                "flow_index %u of table 0x%x is empty", index, ft->id);
        }
        if (mask & ~known) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_MODIFY_MASK,
                                "modify_enable_mask 0x%x: action, flow tag and "
                                "destinations (0x%x) only", mask, known);
        }
    }
    status = vcx_fte_check(s, cmd, ft, fc, &action, &dtype, &did);
    if (status) {
        return status;
    }
    if (cmd->op_mod == VCX_SET_FTE_OP_MOD_MODIFY) {
        vcx_fte_unref_dest(s, fte);
        if (mask & (VCX_SET_FTE_MODIFY_ACTION | VCX_SET_FTE_MODIFY_DESTINATION)) {
            fte->action = action;
            fte->dest_type = dtype;
            fte->dest_id = did;
        }
        if (mask & VCX_SET_FTE_MODIFY_FLOW_TAG) {
            fte->flow_tag = vcx_get(fc, VCX_FTE_FLOW_TAG);
        }
        vcx_fte_ref_dest(s, fte);
        vcx_set(fte->ctx, VCX_FTE_ACTION, fte->action);
        vcx_set(fte->ctx, VCX_FTE_FLOW_TAG, fte->flow_tag);
        vcx_set(fte->ctx, VCX_FTE_DESTINATION_LIST_SIZE,
                fte->action == VCX_FLOW_ACTION_FWD_DEST);
        return VCX_CMD_STAT_OK;
    }
    fte = g_new0(VcxFte, 1);
    fte->index = index;
    fte->group_id = gid;
    fte->flow_tag = vcx_get(fc, VCX_FTE_FLOW_TAG);
    fte->action = action;
    fte->dest_type = dtype;
    fte->dest_id = did;
    memcpy(fte->ctx, fc, sizeof(fte->ctx));
    vcx_ft_mask(fte->value, fc + VCX_FTE_MATCH_VALUE_AT + VCX_FTE_MATCH_OUTER_AT,
                fg->mask);
    memcpy(fte->ctx + VCX_FTE_MATCH_VALUE_AT + VCX_FTE_MATCH_OUTER_AT, fte->value,
           VCX_MATCH_SET_SIZE);
    vcx_fte_ref_dest(s, fte);
    g_hash_table_insert(ft->ftes, GUINT_TO_POINTER(index), fte);
    ft->nftes++;
    fg->nftes++;
    vcx_nic(s)->nfte++;
    vcx_fg_link(fg, fte);
    trace_vcx_nic_fte(ft->id, index, action, dtype, did);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_fte(VcxState *s, VcxCmd *cmd)
{
    uint32_t index = vcx_get(cmd->in, VCX_QUERY_FTE_IN_FLOW_INDEX);
    uint8_t *fc = cmd->out + VCX_QUERY_FTE_OUT_CTX_AT;
    VcxFte *fte;
    VcxFt *ft;
    uint8_t status = vcx_ft_lookup(s, cmd, &ft);

    if (status) {
        return status;
    }
    fte = vcx_fte_at(ft, index);
    if (!fte) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_NONE,
                            "flow_index %u of table 0x%x is empty", index, ft->id);
    }
    memcpy(fc, fte->ctx, sizeof(fte->ctx));
    if (fte->action == VCX_FLOW_ACTION_FWD_DEST &&
        cmd->out_len >= VCX_QUERY_FTE_OUT_LEN + VCX_DEST_SIZE) {
        vcx_set(fc + VCX_FTE_DEST_AT, VCX_DEST_TYPE, fte->dest_type);
        vcx_set(fc + VCX_FTE_DEST_AT, VCX_DEST_ID, fte->dest_id);
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_delete_fte(VcxState *s, VcxCmd *cmd)
{
    uint32_t index = vcx_get(cmd->in, VCX_DELETE_FTE_IN_FLOW_INDEX);
    VcxFte *fte;
    VcxFt *ft;
    uint8_t status = vcx_ft_lookup(s, cmd, &ft);

    if (status) {
        return status;
    }
    fte = vcx_fte_at(ft, index);
    if (!fte) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FTE_NONE,
                            "flow_index %u of table 0x%x is empty", index, ft->id);
    }
    trace_vcx_nic_fte(ft->id, index, 0, 0, 0);
    vcx_fte_free(s, ft, fte);
    return VCX_CMD_STAT_OK;
}
