/*
 * vcx: HCA lifecycle commands: ENABLE_HCA, DISABLE_HCA, QUERY_ISSI, SET_ISSI,
 * QUERY_HCA_CAP, SET_HCA_CAP, INIT_HCA, TEARDOWN_HCA and QUERY_ADAPTER.
 *
 * Function state follows firmware: DISABLED --ENABLE_HCA--> ENABLED --INIT_HCA-->
 * INITIALIZED --TEARDOWN_HCA--> ENABLED --DISABLE_HCA--> DISABLED. The command table in
 * vcx-cmdq.c says in which states each command is accepted (BAD_SYS_STATE otherwise).
 *
 * Capabilities: the device reports five pages, GENERAL (type 0), ETHERNET_OFFLOADS (type
 * 1, GENERAL eth_net_offloads = 1), ATOMIC (type 3, GENERAL atomic = 1), ROCE (type 4)
 * and FLOW_TABLE (type 7, GENERAL nic_flow_table = 1; the NIC of hw-model/nic/). SET_HCA_CAP
 * takes GENERAL, ATOMIC and ROCE only. Every other capability type is refused with BAD_PARAM
 * rather than answered with a zeroed page: Linux only asks for a type when a GENERAL bit
 * announces it, and all such bits are 0, so a query for another type is a driver bug
 * worth reporting. Values describe only what the device implements (the RDMA object
 * limits come from vcx-obj.h); features that are not there (KLM/indirect UMR, masked
 * atomics, DC, ...) report 0. ATOMIC: 8-byte compare-swap and fetch-add on RC and XRC
 * QPs, in big-endian (mode 0, the PRM default) or host byte order (mode 1, which the driver
 * selects with SET_HCA_CAP; MAX reports 1 as the highest mode accepted). SET_HCA_CAP
 * changes only the fields listed in vcx_cap_settable, each bounded by its MAX value; the
 * driver sends a modified copy of CUR, so other fields are read-only and left as they
 * are.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/log.h"
#include "vcx-cmd.h"
#include "vcx-obj.h"
#include "nic/vcx-nic.h"
#include "trace.h"

/* Per-check syndromes (low half of VCX_SYND). */
enum {
    SYND_FUNCTION_ID = 1,
    SYND_EMBEDDED_CPU,
    SYND_PAGES_HELD,
    SYND_ISSI_UNSUPPORTED,
    SYND_CAP_TYPE,
    SYND_CAP_FIELD,
    SYND_CAP_RESERVED,
    SYND_PAGES_MISSING,
    SYND_SW_OWNER_ID,
    SYND_SW_VHCA_ID,
    SYND_TEARDOWN_PROFILE,
    SYND_TEARDOWN_OBJECTS,
    SYND_OTHER_FUNCTION,
};

const char *vcx_hca_state_name(VcxHcaState st)
{
    switch (st) {
    case VCX_HCA_DISABLED:      return "disabled";
    case VCX_HCA_ENABLED:       return "enabled";
    case VCX_HCA_INITIALIZED:   return "initialized";
    }
    return "?";
}

static void vcx_hca_set_state(VcxState *s, VcxHcaState st)
{
    trace_vcx_hca_state(vcx_hca_state_name(s->hca_state), vcx_hca_state_name(st));
    s->hca_state = st;
}

/*
 * Capabilities
 */

typedef struct VcxCapValue {
    VcxCapSlot slot;
    struct vcx_fld fld;
    uint32_t max;
    uint32_t cur;
} VcxCapValue;

#define GEN(f, m, c)  { VCX_CAP_SLOT_GENERAL, VCX_CAP_GEN_##f, (m), (c) }
#define ROCE(f, m, c) { VCX_CAP_SLOT_ROCE, VCX_CAP_ROCE_##f, (m), (c) }
#define ATOM(f, m, c) { VCX_CAP_SLOT_ATOMIC, VCX_CAP_ATOMIC_##f, (m), (c) }

/* Every non-zero capability the device reports; all other fields are 0. */
static const VcxCapValue vcx_cap_values[] = {
    GEN(LOG_MAX_EQ_SZ, VCX_LOG_MAX_EQ_SZ, VCX_LOG_MAX_EQ_SZ),
    GEN(LOG_MAX_EQ, VCX_LOG_MAX_EQ, VCX_LOG_MAX_EQ),
    GEN(MAX_NUM_EQS, VCX_MAX_EQS, VCX_MAX_EQS),
    GEN(PORT_TYPE, VCX_CAP_PORT_TYPE_ETH, VCX_CAP_PORT_TYPE_ETH),
    GEN(NUM_PORTS, 1, 1),
    GEN(NATIVE_PORT_NUM, VCX_PORT_NUM, VCX_PORT_NUM),
    GEN(ROCE, 1, 1),
    GEN(ROCE_RW_SUPPORTED, 1, 1),
    GEN(CMDIF_CHECKSUM, VCX_CAP_CMDIF_CHECKSUM_ENABLED, VCX_CAP_CMDIF_CHECKSUM_DISABLED),
    GEN(LOG_PG_SZ, VCX_PAGE_SHIFT, VCX_PAGE_SHIFT),
    GEN(NUM_OF_UARS_PER_PAGE, 1, 1),
    /* the internal timer (vcx-iseg.c) in kHz; it stamps CQEs but error and resize CQEs */
    GEN(DEVICE_FREQUENCY_KHZ, VCX_TIMER_KHZ, VCX_TIMER_KHZ),
    /* RDMA objects and transport (vcx-obj.h) */
    GEN(LOG_MAX_PD, VCX_LOG_MAX_PD, VCX_LOG_MAX_PD),
    GEN(LOG_MAX_MKEY, VCX_LOG_MAX_MKEY, VCX_LOG_MAX_MKEY),
    GEN(LOG_MAX_CQ, VCX_LOG_MAX_CQ, VCX_LOG_MAX_CQ),
    GEN(LOG_MAX_CQ_SZ, VCX_LOG_MAX_CQ_SZ, VCX_LOG_MAX_CQ_SZ),
    GEN(LOG_MAX_QP, VCX_LOG_MAX_QP, VCX_LOG_MAX_QP),
    GEN(LOG_MAX_QP_SZ, VCX_LOG_MAX_QP_SZ, VCX_LOG_MAX_QP_SZ),
    GEN(LOG_MAX_SRQ, VCX_LOG_MAX_SRQ, VCX_LOG_MAX_SRQ),
    GEN(LOG_MAX_SRQ_SZ, VCX_LOG_MAX_SRQ_SZ, VCX_LOG_MAX_SRQ_SZ),
    GEN(LOG_MAX_RMP, VCX_LOG_MAX_SRQ, VCX_LOG_MAX_SRQ),
    GEN(LOG_MAX_WQ_SZ, VCX_LOG_MAX_SRQ_SZ, VCX_LOG_MAX_SRQ_SZ),
    GEN(LOG_MAX_MSG, VCX_LOG_MAX_MSG, VCX_LOG_MAX_MSG),
    GEN(LOG_MAX_MRW_SZ, VCX_LOG_MAX_MRW_SZ, VCX_LOG_MAX_MRW_SZ),
    GEN(LOG_MAX_RA_REQ_QP, VCX_LOG_MAX_RA, VCX_LOG_MAX_RA),
    GEN(LOG_MAX_RA_RES_QP, VCX_LOG_MAX_RA, VCX_LOG_MAX_RA),
    GEN(MAX_WQE_SZ_SQ, VCX_MAX_WQE_SZ_SQ, VCX_MAX_WQE_SZ_SQ),
    GEN(MAX_WQE_SZ_RQ, VCX_MAX_WQE_SZ_RQ, VCX_MAX_WQE_SZ_RQ),
    GEN(LOG_BF_REG_SIZE, VCX_UAR_LOG_BF_REG_SIZE, VCX_UAR_LOG_BF_REG_SIZE),
    GEN(RC, 1, 1),
    GEN(UC, 1, 1),
    GEN(UD, 1, 1),
    /* XRC domains, XRC SRQs and XRC QPs (vcx-xrc.c); XRC SRQs obey the SRQ limits */
    GEN(XRC, 1, 1),
    GEN(LOG_MAX_XRCD, VCX_LOG_MAX_XRCD, VCX_LOG_MAX_XRCD),
    GEN(ATOMIC, 1, 1),
    /* UD multicast groups: ATTACH_TO_MCG / DETACH_FROM_MCG (roce/vcx-roce-mcg.c) */
    GEN(LOG_MAX_MCG, VCX_LOG_MAX_MCG, VCX_LOG_MAX_MCG),
    GEN(MAX_QP_MCG, VCX_MAX_QP_MCG, VCX_MAX_QP_MCG),
    /*
     * MODIFY_CQ resize, and event moderation by count and period (vcx-cq.c), the period
     * counted from the last event or from the first CQE after it, either chosen at
     * CREATE_CQ or changed by MODIFY_CQ. scqe_break_moderation stays 0: CREATE_CQ
     * refuses scqe_break_moderation_en.
     */
    GEN(CQ_RESIZE, 1, 1),
    GEN(CQ_MODERATION, 1, 1),
    GEN(CQ_PERIOD_MODE_MODIFY, 1, 1),
    GEN(CQ_PERIOD_START_FROM_CQE, 1, 1),
    /* UMR WQEs (vcx-mkey.c): MTT translations loaded at any octoword offset */
    GEN(UMR_EXTENDED_TRANSLATION_OFFSET, 1, 1),
    /*
     * The longest list a fast registration loads, 2^9 entries: a KLM key's size; mlx5_ib
     * reports 2^this as max_fast_reg_page_list_len (0 would mean one page per FRWR MR).
     */
    GEN(LOG_MAX_KLM_LIST_SIZE, VCX_LOG_MAX_KLM_LIST, VCX_LOG_MAX_KLM_LIST),
    /* memory windows: KLM keys bound by UMR WQEs, invalidation (vcx-mkey.c) */
    GEN(IMAICL, 1, 1),
    /* the Ethernet NIC (nic/vcx-nic.h); its two pages are set by vcx_caps_init_nic */
    GEN(ETH_NET_OFFLOADS, 1, 1),
    GEN(NIC_FLOW_TABLE, 1, 1),
    GEN(LOG_MAX_TRANSPORT_DOMAIN, VCX_NIC_LOG_MAX_TD, VCX_NIC_LOG_MAX_TD),
    GEN(LOG_MAX_TIS, VCX_NIC_LOG_MAX_TIS, VCX_NIC_LOG_MAX_TIS),
    GEN(LOG_MAX_TIR, VCX_NIC_LOG_MAX_TIR, VCX_NIC_LOG_MAX_TIR),
    GEN(LOG_MAX_RQT, VCX_NIC_LOG_MAX_RQT, VCX_NIC_LOG_MAX_RQT),
    GEN(LOG_MAX_RQT_SIZE, VCX_NIC_LOG_MAX_RQT_SIZE, VCX_NIC_LOG_MAX_RQT_SIZE),
    GEN(LOG_MAX_RQ, VCX_NIC_LOG_MAX_WQ, VCX_NIC_LOG_MAX_WQ),
    GEN(LOG_MAX_SQ, VCX_NIC_LOG_MAX_WQ, VCX_NIC_LOG_MAX_WQ),
    GEN(MAX_QP_CNT, VCX_NIC_MAX_QCOUNTERS, VCX_NIC_MAX_QCOUNTERS),
    GEN(MODIFY_RQ_COUNTER_SET_ID, 1, 1),
    /* a QP's counter_set_id changed in RTS (opt_param COUNTER_SET_ID, vcx-qp.c) */
    GEN(RTS2RTS_QP_COUNTERS_SET_ID, 1, 1),
    /* the RDMA fields of the Q counters the transport engines count (vcx-resp.c, roce/);
     * enhanced_error_q_counters: every field of mlx5_ib's extended error group, the error
     * CQEs and error NAKs of both sides (vcx_req_fail, vcx_post_resp_err, vcx-flush.c,
     * the remote access NAKs of vcx-resp.c and roce/vcx-roce-resp.c) */
    GEN(OUT_OF_SEQ_CNT, 1, 1),
    /* QUERY_VPORT_COUNTER (nic/vcx-nic-counters.c), its ib counters the RoCE frames */
    GEN(VPORT_COUNTERS, 1, 1),
    GEN(RETRANSMISSION_Q_COUNTERS, 1, 1),
    GEN(ENHANCED_ERROR_Q_COUNTERS, 1, 1),
    GEN(LOG_MAX_CURRENT_UC_LIST, VCX_NIC_LOG_UC_LIST, VCX_NIC_LOG_UC_LIST),
    GEN(LOG_MAX_CURRENT_MC_LIST, VCX_NIC_LOG_MC_LIST, VCX_NIC_LOG_MC_LIST),
    GEN(LOG_MAX_VLAN_LIST, VCX_NIC_LOG_VLAN_LIST, VCX_NIC_LOG_VLAN_LIST),
    /* what vcx-xport.c executes: 8-byte CS and FA on RC and XRC QPs, no DC */
    ATOM(REQ_8B_ENDIANNESS_MODE, VCX_ATOMIC_REQ_MODE_HOST, VCX_ATOMIC_REQ_MODE_BE),
    ATOM(SUPPORTED_REQ_8B_ENDIANNESS_MODE_1, 1, 1),
    ATOM(OPERATIONS, VCX_ATOMIC_OP_CMP_SWAP | VCX_ATOMIC_OP_FETCH_ADD,
         VCX_ATOMIC_OP_CMP_SWAP | VCX_ATOMIC_OP_FETCH_ADD),
    ATOM(SIZE_QP, VCX_ATOMIC_SIZE_8B, VCX_ATOMIC_SIZE_8B),
    ROCE(L3_TYPE, VCX_ROCE_L3_TYPE_IPV4 | VCX_ROCE_L3_TYPE_IPV6,
         VCX_ROCE_L3_TYPE_IPV4 | VCX_ROCE_L3_TYPE_IPV6),
    ROCE(VERSION, VCX_ROCE_VERSION_2, VCX_ROCE_VERSION_2),
    ROCE(R_ROCE_DEST_UDP_PORT, VCX_ROCE_V2_UDP_DPORT, VCX_ROCE_V2_UDP_DPORT),
    ROCE(R_ROCE_MAX_SRC_UDP_PORT, 0xffff, 0xffff),
    ROCE(R_ROCE_MIN_SRC_UDP_PORT, 0xc000, 0xc000),
    ROCE(ADDRESS_TABLE_SIZE, VCX_GID_TABLE_SIZE, VCX_GID_TABLE_SIZE),
};

typedef struct VcxCapSettable {
    VcxCapSlot slot;
    const char *name;
    struct vcx_fld fld;
} VcxCapSettable;

#define SET_GEN(f)  { VCX_CAP_SLOT_GENERAL, #f, VCX_CAP_GEN_##f }
#define SET_ROCE(f) { VCX_CAP_SLOT_ROCE, #f, VCX_CAP_ROCE_##f }
#define SET_ATOM(f) { VCX_CAP_SLOT_ATOMIC, #f, VCX_CAP_ATOMIC_##f }

/* Fields SET_HCA_CAP may change, each to at most its MAX value. */
static const VcxCapSettable vcx_cap_settable[] = {
    SET_GEN(CMDIF_CHECKSUM),
    SET_GEN(LOG_MAX_QP),
    SET_GEN(PKEY_TABLE_SIZE),
    SET_GEN(LOG_UAR_PAGE_SZ),
    SET_GEN(UAR_4K),
    SET_GEN(CACHE_LINE_128BYTE),
    SET_GEN(ROCE),
    SET_GEN(DCT),
    SET_GEN(RELEASE_ALL_PAGES),
    SET_GEN(NUM_VHCA_PORTS),
    SET_ROCE(SW_R_ROCE_SRC_UDP_PORT),
    SET_ROCE(QP_TS_FORMAT),
    SET_ATOM(REQ_8B_ENDIANNESS_MODE),
};

#undef GEN
#undef ROCE
#undef ATOM
#undef SET_GEN
#undef SET_ROCE
#undef SET_ATOM

/* A field of the NIC RX flow_table_prop_layout, or of its ft_field_support set. */
static void vcx_cap_ft_rx(uint8_t *ft, struct vcx_fld f, uint32_t v)
{
    vcx_set(ft + VCX_CAP_FT_NIC_RX_AT, f, v);
}

static void vcx_cap_ft_field(uint8_t *ft, struct vcx_fld f)
{
    /* matched with any mask: both the field and its bitmask are supported */
    vcx_set(ft + VCX_CAP_FT_NIC_RX_AT + VCX_CAP_FT_FIELD_SUPPORT_AT, f, 1);
    vcx_set(ft + VCX_CAP_FT_NIC_RX_AT + VCX_CAP_FT_FIELD_BITMASK_SUPPORT_AT, f, 1);
}

/*
 * ETHERNET_OFFLOADS: TX L3/L4 checksums and the RX checksum flags, TCP LSO of up to
 * 2^16 bytes (vcx-nic-tx.c), RSS over an RQT of up to 2^8 entries, headers inline at any
 * size (inline mode "not required"), self loopback blocking per TIR, C-VLAN stripping
 * per RQ (vlan_cap) and VLAN insertion by the send WQE (wqe_vlan_insert); no LRO,
 * tunnels or multi-packet WQEs.
 * FLOW_TABLE: NIC RX tables only (vcx-nic-ft.c), matching the outer-header fields set in
 * ft_field_support; the NIC TX and RDMA tables report ft_support 0.
 */
static void vcx_caps_init_nic(uint8_t *eth, uint8_t *ft)
{
    vcx_set(eth, VCX_CAP_ETH_CSUM_CAP, 1);
    vcx_set(eth, VCX_CAP_ETH_VLAN_CAP, 1);
    vcx_set(eth, VCX_CAP_ETH_WQE_VLAN_INSERT, 1);
    vcx_set(eth, VCX_CAP_ETH_MAX_LSO_CAP, VCX_NIC_LOG_MAX_LSO);
    vcx_set(eth, VCX_CAP_ETH_SELF_LB_EN_MODIFIABLE, 1);
    vcx_set(eth, VCX_CAP_ETH_WQE_INLINE_MODE, VCX_CAP_ETH_INLINE_MODE_NOT_REQUIRED);
    vcx_set(eth, VCX_CAP_ETH_RSS_IND_TBL_CAP, VCX_NIC_RSS_LOG_TBL);
    vcx_cap_ft_rx(ft, VCX_CAP_FT_FT_SUPPORT, 1);
    vcx_cap_ft_rx(ft, VCX_CAP_FT_FLOW_MODIFY_EN, 1);
    vcx_cap_ft_rx(ft, VCX_CAP_FT_MODIFY_ROOT, 1);
    vcx_cap_ft_rx(ft, VCX_CAP_FT_LOG_MAX_FT_SIZE, VCX_NIC_LOG_MAX_FT_SIZE);
    vcx_cap_ft_rx(ft, VCX_CAP_FT_MAX_FT_LEVEL, VCX_NIC_MAX_FT_LEVEL);
    vcx_cap_ft_rx(ft, VCX_CAP_FT_LOG_MAX_FT_NUM, VCX_NIC_LOG_MAX_FT);
    vcx_cap_ft_rx(ft, VCX_CAP_FT_LOG_MAX_DESTINATION, 0);
    vcx_cap_ft_rx(ft, VCX_CAP_FT_LOG_MAX_FLOW, VCX_NIC_LOG_MAX_FT_SIZE);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_DMAC);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_SMAC);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_ETHER_TYPE);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_FIRST_PRIO);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_FIRST_CFI);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_FIRST_VID);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_IP_VERSION);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_SIP);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_DIP);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_IP_PROTOCOL);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_UDP_SPORT);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_UDP_DPORT);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_TCP_SPORT);
    vcx_cap_ft_field(ft, VCX_FT_FIELD_OUTER_TCP_DPORT);
}

/* MAX pages are fixed; CUR pages return to their defaults at every reset. */
void vcx_caps_init(VcxState *s)
{
    memset(s->cap_max, 0, sizeof(s->cap_max));
    memset(s->cap_cur, 0, sizeof(s->cap_cur));
    for (size_t i = 0; i < ARRAY_SIZE(vcx_cap_values); i++) {
        const VcxCapValue *v = &vcx_cap_values[i];

        vcx_set(s->cap_max[v->slot], v->fld, v->max);
        vcx_set(s->cap_cur[v->slot], v->fld, v->cur);
    }
    vcx_caps_init_nic(s->cap_max[VCX_CAP_SLOT_ETH], s->cap_max[VCX_CAP_SLOT_FT]);
    vcx_caps_init_nic(s->cap_cur[VCX_CAP_SLOT_ETH], s->cap_cur[VCX_CAP_SLOT_FT]);
}

static bool vcx_cap_slot(uint16_t type, VcxCapSlot *slot)
{
    switch (type) {
    case VCX_HCA_CAP_TYPE_GENERAL:
        *slot = VCX_CAP_SLOT_GENERAL;
        return true;
    case VCX_HCA_CAP_TYPE_ROCE:
        *slot = VCX_CAP_SLOT_ROCE;
        return true;
    case VCX_HCA_CAP_TYPE_ATOMIC:
        *slot = VCX_CAP_SLOT_ATOMIC;
        return true;
    case VCX_HCA_CAP_TYPE_ETH_OFFLOADS:
        *slot = VCX_CAP_SLOT_ETH;
        return true;
    case VCX_HCA_CAP_TYPE_FLOW_TABLE:
        *slot = VCX_CAP_SLOT_FT;
        return true;
    default:
        return false;
    }
}

/*
 * Byte order of the 8-byte values an atomic reads and writes (the responder's memory and
 * the original value returned to the requester): big-endian in mode 0; in mode 1 the
 * host's order, little-endian unless the HOST_ENDIANNESS register says big-endian.
 */
bool vcx_atomic_big_endian(VcxState *s)
{
    if (vcx_get(s->cap_cur[VCX_CAP_SLOT_ATOMIC], VCX_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE) ==
        VCX_ATOMIC_REQ_MODE_BE) {
        return true;
    }
    return s->port.host_endianness == VCX_HOST_ENDIANNESS_BIG;
}

/* Both cap commands address this function only (no VFs, no embedded CPU functions). */
static uint8_t vcx_cap_check_function(VcxCmd *cmd)
{
    if (vcx_get(cmd->in, VCX_HCA_CAP_IN_OTHER_FUNCTION) ||
        vcx_get(cmd->in, VCX_HCA_CAP_IN_FUNCTION_ID)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_OTHER_FUNCTION,
                            "other_function %u function_id %u: no other functions",
                            vcx_get(cmd->in, VCX_HCA_CAP_IN_OTHER_FUNCTION),
                            vcx_get(cmd->in, VCX_HCA_CAP_IN_FUNCTION_ID));
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_hca_cap(VcxState *s, VcxCmd *cmd)
{
    uint16_t type = cmd->op_mod >> 1;
    bool cur = cmd->op_mod & VCX_HCA_CAP_OP_MOD_CUR;
    VcxCapSlot slot;
    uint8_t status = vcx_cap_check_function(cmd);

    if (status) {
        return status;
    }
    if (!vcx_cap_slot(type, &slot)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CAP_TYPE,
                            "capability type 0x%x not supported", type);
    }
    memcpy(vcx_ptr(cmd->out, VCX_HCA_CAP_CAPABILITY),
           cur ? s->cap_cur[slot] : s->cap_max[slot], VCX_HCA_CAP_SIZE);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_set_hca_cap(VcxState *s, VcxCmd *cmd)
{
    uint16_t type = cmd->op_mod >> 1;
    const uint8_t *cap = vcx_cptr(cmd->in, VCX_HCA_CAP_CAPABILITY);
    VcxCapSlot slot;
    uint8_t status = vcx_cap_check_function(cmd);

    if (status) {
        return status;
    }
    if (!vcx_cap_slot(type, &slot)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CAP_TYPE,
                            "capability type 0x%x not supported", type);
    }

    /* Validate every settable field first so a refused command changes nothing. */
    for (size_t i = 0; i < ARRAY_SIZE(vcx_cap_settable); i++) {
        const VcxCapSettable *f = &vcx_cap_settable[i];
        uint32_t v, max;

        if (f->slot != slot) {
            continue;
        }
        v = vcx_get(cap, f->fld);
        max = vcx_get(s->cap_max[slot], f->fld);
        if (v > max || (f->fld.bit == VCX_CAP_GEN_CMDIF_CHECKSUM.bit &&
                        slot == VCX_CAP_SLOT_GENERAL && v == 2)) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_CAP_FIELD,
                                "%s = %u, device supports at most %u", f->name, v, max);
        }
    }
    for (size_t i = 0; i < ARRAY_SIZE(vcx_cap_settable); i++) {
        const VcxCapSettable *f = &vcx_cap_settable[i];

        if (f->slot == slot) {
            vcx_set(s->cap_cur[slot], f->fld, vcx_get(cap, f->fld));
        }
    }
    for (uint32_t off = 0; off < VCX_HCA_CAP_SIZE; off += 4) {
        uint32_t want = vcx_be32_load(cap + off);
        uint32_t have = vcx_be32_load(s->cap_cur[slot] + off);

        if (want != have) {
            trace_vcx_cap_read_only(type, off, want, have);
        }
    }
    trace_vcx_cap_set(type, vcx_get(s->cap_cur[VCX_CAP_SLOT_GENERAL],
                                    VCX_CAP_GEN_CMDIF_CHECKSUM),
                      vcx_get(s->cap_cur[VCX_CAP_SLOT_ATOMIC],
                              VCX_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE));
    return VCX_CMD_STAT_OK;
}

/*
 * Lifecycle
 */

/* ENABLE_HCA, DISABLE_HCA: this function only; the device has no embedded CPU. */
static uint8_t vcx_hca_check_function(VcxCmd *cmd)
{
    if (vcx_get(cmd->in, VCX_ENABLE_HCA_IN_FUNCTION_ID)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FUNCTION_ID,
                            "function_id %u: no other functions",
                            vcx_get(cmd->in, VCX_ENABLE_HCA_IN_FUNCTION_ID));
    }
    if (vcx_get(cmd->in, VCX_ENABLE_HCA_IN_EMBEDDED_CPU)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_EMBEDDED_CPU,
                            "embedded_cpu_function set: no embedded CPU");
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_enable_hca(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = vcx_hca_check_function(cmd);

    if (status) {
        return status;
    }
    vcx_hca_set_state(s, VCX_HCA_ENABLED);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_disable_hca(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = vcx_hca_check_function(cmd);

    if (status) {
        return status;
    }
    if (vcx_pages_held(s)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_PAGES_HELD,
                            "%u pages still held; take them back first",
                            vcx_pages_held(s));
    }
    /*
     * A disabled function forgets what the driver negotiated, and a run-time page
     * request belonged to the function that ran: the next one starts from its boot,
     * init and regular demand.
     */
    s->issi = 0;
    s->pages.runtime_request = 0;
    vcx_caps_init(s);
    vcx_gid_reset(s);
    vcx_hca_set_state(s, VCX_HCA_DISABLED);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_issi(VcxState *s, VcxCmd *cmd)
{
    vcx_set(cmd->out, VCX_QUERY_ISSI_OUT_CURRENT_ISSI, s->issi);
    vcx_set(cmd->out, VCX_QUERY_ISSI_OUT_SUPPORTED_DW0, (1u << 0) | (1u << 1));
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_set_issi(VcxState *s, VcxCmd *cmd)
{
    uint32_t issi = vcx_get(cmd->in, VCX_SET_ISSI_IN_CURRENT_ISSI);

    if (issi > 1) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_ISSI_UNSUPPORTED,
                            "ISSI %u not supported (0 and 1 are)", issi);
    }
    s->issi = issi;
    trace_vcx_issi(issi);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_init_hca(VcxState *s, VcxCmd *cmd)
{
    if (cmd->in_len >= VCX_INIT_HCA_IN_LEN) {
        const uint8_t *owner = vcx_cptr(cmd->in, VCX_INIT_HCA_IN_SW_OWNER_ID);

        if (!buffer_is_zero(owner, 16)) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SW_OWNER_ID,
                                "sw_owner_id set but cap sw_owner_id is 0");
        }
    }
    if (vcx_get(cmd->in, VCX_INIT_HCA_IN_SW_VHCA_ID)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_SW_VHCA_ID,
                            "sw_vhca_id %u set but not supported",
                            vcx_get(cmd->in, VCX_INIT_HCA_IN_SW_VHCA_ID));
    }
    if (!vcx_pages_cover_init(s)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_PAGES_MISSING,
                            "boot and init pages not all given (%u held, %u needed)",
                            vcx_pages_held(s),
                            s->params.boot_pages + s->params.init_pages);
    }
    vcx_hca_set_state(s, VCX_HCA_INITIALIZED);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_teardown_hca(VcxState *s, VcxCmd *cmd)
{
    uint32_t profile = vcx_get(cmd->in, VCX_TEARDOWN_HCA_IN_PROFILE);

    switch (profile) {
    case VCX_TEARDOWN_PROFILE_GRACEFUL:
        if (vcx_obj_count(s)) {     /* RDMA objects (vcx-obj.c) */
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_TEARDOWN_OBJECTS,
                                "graceful teardown with %u RDMA objects alive",
                                vcx_obj_count(s));
        }
        if (s->num_eqs || s->num_uars) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_RES_STATE, SYND_TEARDOWN_OBJECTS,
                                "graceful teardown with %u EQs and %u UARs alive",
                                s->num_eqs, s->num_uars);
        }
        break;
    case VCX_TEARDOWN_PROFILE_FORCE_CLOSE:
        /* Force close drops every object; the pages stay until the driver takes them. */
        vcx_obj_reset(s);
        vcx_eq_reset(s);
        vcx_uar_reset(s);
        vcx_set(cmd->out, VCX_TEARDOWN_HCA_OUT_STATE, 0);
        break;
    default:
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_TEARDOWN_PROFILE,
                            "teardown profile %u not supported (fast_teardown = 0)",
                            profile);
    }
    vcx_hca_set_state(s, VCX_HCA_ENABLED);
    return VCX_CMD_STAT_OK;
}

/*
 * The adapter reports the PCI vendor as VSD vendor, the IEEE OUI of its identity
 * (Mellanox's when it presents a ConnectX-5, QEMU's otherwise) and a PSID board id.
 */
uint8_t vcx_cmd_query_adapter(VcxState *s, VcxCmd *cmd)
{
    uint8_t *blk = vcx_ptr(cmd->out, VCX_QUERY_ADAPTER_OUT_PARAMS);
    static const char psid[VCX_ADAPTER_PSID_LEN] = "VCX0000000001";

    vcx_set(blk, VCX_ADAPTER_IEEE_VENDOR_ID, s->params.cx5_id ? 0x0002c9 : 0x525400);
    vcx_set(blk, VCX_ADAPTER_VSD_VENDOR_ID,
            s->params.cx5_id ? VCX_MLX_PCI_VENDOR_ID : VCX_PCI_VENDOR_ID);
    memcpy(vcx_ptr(blk, VCX_ADAPTER_PSID), psid, sizeof(psid));
    return VCX_CMD_STAT_OK;
}
