/*
 * vcx: the Ethernet port and its vport: ACCESS_REG (PAOS, PFCC, PMTU, PTYS,
 * HOST_ENDIANNESS, NODE_DESC; PPCNT in nic/vcx-nic-pcnt.c), QUERY_VPORT_STATE, QUERY_HCA_VPORT_PKEY, QUERY/MODIFY_NIC_VPORT_CONTEXT and
 * port change events.
 *
 * The port is operationally up when the carrier is present (the "link" property, which
 * the monitor can change at run time) and the driver has not set it administratively down
 * through PAOS. Every change of the operational state posts a port change EQE (type 0x09,
 * sub_type 4 active / 1 down, port number in bits 7:4 of EQE byte 0x28) to the EQ
 * subscribed to port change events, if any.
 *
 * The port reports one Ethernet speed, 100GBASE-CR4. PMTU and the vport MTU count bytes
 * of the frame including its L2 headers, as the mlx5 "hardware MTU" does.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "vcx-cmd.h"
#include "vcx/prm-nic.h"
#include "trace.h"

#define VCX_ETH_PROTO_CAP       (1u << VCX_ETH_LINK_100GBASE_CR4)
/* NODE_DESC after a reset; a driver may write its own (mlx5_ib reads it at probe) */
#define VCX_NODE_DESC_DEFAULT   "vcx virtual ConnectX-class HCA"

enum {
    SYND_REG_ID = 1,
    SYND_REG_IN_LEN,
    SYND_REG_OUT_LEN,
    SYND_LOCAL_PORT,
    SYND_PAOS_ADMIN,
    SYND_PMTU_RANGE,
    SYND_PTYS_PROTO,
    SYND_PTYS_ADMIN,
    SYND_HOST_ENDIANNESS,
    SYND_REG_READ_ONLY,
    SYND_OTHER_VPORT,
    SYND_FIELD_SELECT,
    SYND_VPORT_MTU,
    SYND_VPORT_MAC,
    SYND_ALLOWED_LIST,
    SYND_PKEY_PORT,
    SYND_PKEY_INDEX,
    SYND_PKEY_OUT_LEN,
    SYND_PFCC_PAUSE,
};

void vcx_port_reset(VcxState *s)
{
    VcxPort *p = &s->port;
    bool link = p->link_up;

    memset(p, 0, sizeof(*p));
    vcx_pcnt_reset(s);
    p->link_up = link;
    p->admin_status = VCX_PORT_STATUS_UP;
    p->oper_up = vcx_port_oper_up(s);
    p->admin_mtu = VCX_MAX_MTU;
    p->eth_proto_admin = VCX_ETH_PROTO_CAP;
    p->vport_mtu = VCX_MAX_MTU;
    memcpy(p->mac, s->conf.macaddr.a, sizeof(p->mac));
    pstrcpy(p->node_desc, sizeof(p->node_desc), VCX_NODE_DESC_DEFAULT);
}

/*
 * Carrier: the "link" property, and with a netdev the link of the NIC's net client, which
 * set_link on the backend (it sets the NIC peer's link too) or on the NIC id changes.
 */
bool vcx_port_oper_up(VcxState *s)
{
    return s->port.link_up && (!s->nic || !qemu_get_queue(s->nic)->link_down) &&
           s->port.admin_status == VCX_PORT_STATUS_UP;
}

/* Report a change of the operational state to the driver. */
static void vcx_port_update(VcxState *s)
{
    bool up = vcx_port_oper_up(s);
    uint8_t data[12] = { 0 };

    if (up == s->port.oper_up) {
        return;
    }
    s->port.oper_up = up;
    if (!up) {
        vcx_pcnt_link_down(s);
    }
    trace_vcx_port_change(up);
    data[VCX_FLD_BYTE(VCX_EQE_PORT_CHANGE_PORT) - VCX_FLD_BYTE(VCX_EQE_DATA)] =
        VCX_PORT_NUM << 4;
    if (!vcx_eq_post_event(s, VCX_EVENT_TYPE_PORT_CHANGE,
                           up ? VCX_PORT_CHANGE_SUBTYPE_ACTIVE :
                                VCX_PORT_CHANGE_SUBTYPE_DOWN,
                           data, sizeof(data))) {
        trace_vcx_event_unsubscribed(VCX_EVENT_TYPE_PORT_CHANGE);
    }
}

void vcx_port_set_link(VcxState *s, bool up)
{
    s->port.link_up = up;
    vcx_port_update(s);
}

/* The netdev's link changed (set_link): a port change event if the carrier did. */
void vcx_port_link_changed(VcxState *s)
{
    vcx_port_update(s);
}

/*
 * ACCESS_REG
 */

typedef struct VcxReg {
    uint16_t id;
    const char *name;
    uint32_t len;
    uint8_t (*read)(VcxState *s, VcxCmd *cmd, const uint8_t *in, uint8_t *out);
    uint8_t (*write)(VcxState *s, VcxCmd *cmd, const uint8_t *in, uint8_t *out);
} VcxReg;

static uint8_t vcx_reg_check_port(VcxCmd *cmd, const uint8_t *in, struct vcx_fld fld)
{
    if (vcx_get(in, fld) != VCX_PORT_NUM) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_LOCAL_PORT,
                            "local_port %u, the device has port %u only",
                            vcx_get(in, fld), VCX_PORT_NUM);
    }
    return VCX_CMD_STAT_OK;
}

static uint8_t vcx_reg_paos_read(VcxState *s, VcxCmd *cmd, const uint8_t *in,
                                 uint8_t *out)
{
    uint8_t status = vcx_reg_check_port(cmd, in, VCX_PAOS_LOCAL_PORT);

    if (status) {
        return status;
    }
    vcx_set(out, VCX_PAOS_LOCAL_PORT, VCX_PORT_NUM);
    vcx_set(out, VCX_PAOS_ADMIN_STATUS, s->port.admin_status);
    vcx_set(out, VCX_PAOS_OPER_STATUS,
            vcx_port_oper_up(s) ? VCX_PORT_STATUS_UP : VCX_PORT_STATUS_DOWN);
    vcx_set(out, VCX_PAOS_E, s->port.paos_e);
    return VCX_CMD_STAT_OK;
}

static uint8_t vcx_reg_paos_write(VcxState *s, VcxCmd *cmd, const uint8_t *in,
                                  uint8_t *out)
{
    uint8_t status = vcx_reg_check_port(cmd, in, VCX_PAOS_LOCAL_PORT);
    uint32_t admin = vcx_get(in, VCX_PAOS_ADMIN_STATUS);

    if (status) {
        return status;
    }
    if (vcx_get(in, VCX_PAOS_ASE) &&
        admin != VCX_PORT_STATUS_UP && admin != VCX_PORT_STATUS_DOWN) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PAOS_ADMIN,
                            "PAOS admin_status %u: only up (1) and down (2)", admin);
    }
    if (vcx_get(in, VCX_PAOS_EE)) {
        s->port.paos_e = vcx_get(in, VCX_PAOS_E);
    }
    if (vcx_get(in, VCX_PAOS_ASE)) {
        s->port.admin_status = admin;
        vcx_port_update(s);
    }
    return vcx_reg_paos_read(s, cmd, in, out);
}

/*
 * PFCC: the port neither sends nor honours pause frames, global (802.3x) or per priority
 * (PFC): a read reports them all off and no stall watermarks; a write that enables any
 * of them is refused, one that enables nothing is taken (as mlx5e's pause off).
 */
static uint8_t vcx_reg_pfcc_read(VcxState *s, VcxCmd *cmd, const uint8_t *in,
                                 uint8_t *out)
{
    uint8_t status = vcx_reg_check_port(cmd, in, VCX_PFCC_LOCAL_PORT);

    if (status) {
        return status;
    }
    vcx_set(out, VCX_PFCC_LOCAL_PORT, VCX_PORT_NUM);
    return VCX_CMD_STAT_OK;
}

static uint8_t vcx_reg_pfcc_write(VcxState *s, VcxCmd *cmd, const uint8_t *in,
                                  uint8_t *out)
{
    uint8_t status = vcx_reg_check_port(cmd, in, VCX_PFCC_LOCAL_PORT);

    if (status) {
        return status;
    }
    if (vcx_get(in, VCX_PFCC_PPTX) || vcx_get(in, VCX_PFCC_PPRX) ||
        vcx_get(in, VCX_PFCC_APTX) || vcx_get(in, VCX_PFCC_APRX) ||
        vcx_get(in, VCX_PFCC_PFCTX) || vcx_get(in, VCX_PFCC_PFCRX) ||
        vcx_get(in, VCX_PFCC_DEVICE_STALL_MINOR_WATERMARK) ||
        vcx_get(in, VCX_PFCC_DEVICE_STALL_CRITICAL_WATERMARK)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PFCC_PAUSE,
                            "PFCC: the port has no pause or PFC (pptx %u pprx %u pfctx "
                            "0x%x pfcrx 0x%x) and no stall watermarks",
                            vcx_get(in, VCX_PFCC_PPTX), vcx_get(in, VCX_PFCC_PPRX),
                            vcx_get(in, VCX_PFCC_PFCTX), vcx_get(in, VCX_PFCC_PFCRX));
    }
    return vcx_reg_pfcc_read(s, cmd, in, out);
}

static uint8_t vcx_reg_pmtu_read(VcxState *s, VcxCmd *cmd, const uint8_t *in,
                                 uint8_t *out)
{
    uint8_t status = vcx_reg_check_port(cmd, in, VCX_PMTU_LOCAL_PORT);

    if (status) {
        return status;
    }
    vcx_set(out, VCX_PMTU_LOCAL_PORT, VCX_PORT_NUM);
    vcx_set(out, VCX_PMTU_MAX_MTU, VCX_MAX_MTU);
    vcx_set(out, VCX_PMTU_ADMIN_MTU, s->port.admin_mtu);
    vcx_set(out, VCX_PMTU_OPER_MTU, s->port.admin_mtu);
    return VCX_CMD_STAT_OK;
}

static uint8_t vcx_reg_pmtu_write(VcxState *s, VcxCmd *cmd, const uint8_t *in,
                                  uint8_t *out)
{
    uint8_t status = vcx_reg_check_port(cmd, in, VCX_PMTU_LOCAL_PORT);
    uint32_t mtu = vcx_get(in, VCX_PMTU_ADMIN_MTU);

    if (status) {
        return status;
    }
    if (mtu < VCX_MIN_MTU || mtu > VCX_MAX_MTU) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PMTU_RANGE,
                            "PMTU admin_mtu %u outside [%u, %u]", mtu, VCX_MIN_MTU,
                            VCX_MAX_MTU);
    }
    s->port.admin_mtu = mtu;
    return vcx_reg_pmtu_read(s, cmd, in, out);
}

static uint8_t vcx_reg_ptys_check(VcxCmd *cmd, const uint8_t *in)
{
    uint8_t status = vcx_reg_check_port(cmd, in, VCX_PTYS_LOCAL_PORT);

    if (status) {
        return status;
    }
    if (vcx_get(in, VCX_PTYS_PROTO_MASK) != VCX_PTYS_PROTO_ETH) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PTYS_PROTO,
                            "PTYS proto_mask 0x%x: the port is Ethernet only (0x%x)",
                            vcx_get(in, VCX_PTYS_PROTO_MASK), VCX_PTYS_PROTO_ETH);
    }
    return VCX_CMD_STAT_OK;
}

static uint8_t vcx_reg_ptys_read(VcxState *s, VcxCmd *cmd, const uint8_t *in,
                                 uint8_t *out)
{
    uint8_t status = vcx_reg_ptys_check(cmd, in);

    if (status) {
        return status;
    }
    vcx_set(out, VCX_PTYS_LOCAL_PORT, VCX_PORT_NUM);
    vcx_set(out, VCX_PTYS_PROTO_MASK, VCX_PTYS_PROTO_ETH);
    vcx_set(out, VCX_PTYS_AN_DISABLE_ADMIN, s->port.an_disable_admin);
    vcx_set(out, VCX_PTYS_AN_DISABLE_CAP, 1);
    vcx_set(out, VCX_PTYS_ETH_PROTO_CAP, VCX_ETH_PROTO_CAP);
    vcx_set(out, VCX_PTYS_ETH_PROTO_ADMIN, s->port.eth_proto_admin);
    vcx_set(out, VCX_PTYS_ETH_PROTO_OPER,
            vcx_port_oper_up(s) ? s->port.eth_proto_admin : 0);
    return VCX_CMD_STAT_OK;
}

static uint8_t vcx_reg_ptys_write(VcxState *s, VcxCmd *cmd, const uint8_t *in,
                                  uint8_t *out)
{
    uint8_t status = vcx_reg_ptys_check(cmd, in);
    uint32_t admin = vcx_get(in, VCX_PTYS_ETH_PROTO_ADMIN);

    if (status) {
        return status;
    }
    if (!admin || (admin & ~VCX_ETH_PROTO_CAP) ||
        vcx_get(in, VCX_PTYS_EXT_ETH_PROTO_ADMIN)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PTYS_ADMIN,
                            "PTYS eth_proto_admin 0x%x ext 0x%x, capability 0x%x",
                            admin, vcx_get(in, VCX_PTYS_EXT_ETH_PROTO_ADMIN),
                            VCX_ETH_PROTO_CAP);
    }
    s->port.eth_proto_admin = admin;
    s->port.an_disable_admin = vcx_get(in, VCX_PTYS_AN_DISABLE_ADMIN);
    return vcx_reg_ptys_read(s, cmd, in, out);
}

static uint8_t vcx_reg_he_read(VcxState *s, VcxCmd *cmd, const uint8_t *in, uint8_t *out)
{
    vcx_set(out, VCX_HOST_ENDIANNESS_HE, s->port.host_endianness);
    return VCX_CMD_STAT_OK;
}

static uint8_t vcx_reg_he_write(VcxState *s, VcxCmd *cmd, const uint8_t *in, uint8_t *out)
{
    uint32_t he = vcx_get(in, VCX_HOST_ENDIANNESS_HE);

    if (he != 0 && he != 0x80) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_HOST_ENDIANNESS,
                            "HOST_ENDIANNESS he 0x%x: 0 (little) or 0x80 (big)", he);
    }
    s->port.host_endianness = he;
    return vcx_reg_he_read(s, cmd, in, out);
}

static uint8_t vcx_reg_node_desc_read(VcxState *s, VcxCmd *cmd, const uint8_t *in,
                                      uint8_t *out)
{
    memcpy(out, s->port.node_desc, VCX_REG_NODE_DESC_LEN);
    return VCX_CMD_STAT_OK;
}

/* Any 64 bytes: the description is the driver's to set; the last byte stays a NUL. */
static uint8_t vcx_reg_node_desc_write(VcxState *s, VcxCmd *cmd, const uint8_t *in,
                                       uint8_t *out)
{
    memcpy(s->port.node_desc, in, VCX_REG_NODE_DESC_LEN - 1);
    s->port.node_desc[VCX_REG_NODE_DESC_LEN - 1] = 0;
    return vcx_reg_node_desc_read(s, cmd, in, out);
}

static const VcxReg vcx_regs[] = {
    { VCX_REG_PMTU, "PMTU", VCX_REG_PMTU_LEN, vcx_reg_pmtu_read, vcx_reg_pmtu_write },
    { VCX_REG_PTYS, "PTYS", VCX_REG_PTYS_LEN, vcx_reg_ptys_read, vcx_reg_ptys_write },
    { VCX_REG_PAOS, "PAOS", VCX_REG_PAOS_LEN, vcx_reg_paos_read, vcx_reg_paos_write },
    { VCX_REG_PFCC, "PFCC", VCX_REG_PFCC_LEN, vcx_reg_pfcc_read, vcx_reg_pfcc_write },
    { VCX_REG_PPCNT, "PPCNT", VCX_REG_PPCNT_LEN, vcx_reg_ppcnt_read, vcx_reg_ppcnt_write },
    { VCX_REG_HOST_ENDIANNESS, "HOST_ENDIANNESS", VCX_REG_HOST_ENDIANNESS_LEN,
      vcx_reg_he_read, vcx_reg_he_write },
    { VCX_REG_NODE_DESC, "NODE_DESC", VCX_REG_NODE_DESC_LEN, vcx_reg_node_desc_read,
      vcx_reg_node_desc_write },
};

uint8_t vcx_cmd_access_reg(VcxState *s, VcxCmd *cmd)
{
    uint32_t id = vcx_get(cmd->in, VCX_ACCESS_REG_IN_REGISTER_ID);
    bool write = cmd->op_mod == VCX_ACCESS_REG_OP_MOD_WRITE;
    const VcxReg *reg = NULL;

    for (size_t i = 0; i < ARRAY_SIZE(vcx_regs); i++) {
        if (vcx_regs[i].id == id) {
            reg = &vcx_regs[i];
        }
    }
    if (!reg) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_REG_ID,
                            "register 0x%04x not implemented", id);
    }
    if (cmd->in_len < VCX_ACCESS_REG_HDR_LEN + reg->len) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_INPUT_LEN, SYND_REG_IN_LEN,
                            "%s: input length %u < %u", reg->name, cmd->in_len,
                            VCX_ACCESS_REG_HDR_LEN + reg->len);
    }
    if (cmd->out_len < VCX_ACCESS_REG_HDR_LEN + reg->len) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_OUTPUT_LEN, SYND_REG_OUT_LEN,
                            "%s: output length %u < %u", reg->name, cmd->out_len,
                            VCX_ACCESS_REG_HDR_LEN + reg->len);
    }
    trace_vcx_access_reg(reg->name, id, write);
    return (write ? reg->write : reg->read)(s, cmd,
                                            vcx_cptr(cmd->in, VCX_ACCESS_REG_IN_DATA),
                                            vcx_ptr(cmd->out, VCX_ACCESS_REG_OUT_DATA));
}

/*
 * Vport
 */

/* The device has no eswitch: only the function's own vport (0) can be addressed. */
static uint8_t vcx_vport_check(VcxCmd *cmd, struct vcx_fld other, struct vcx_fld number)
{
    if (vcx_get(cmd->in, other) || vcx_get(cmd->in, number)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_OTHER_VPORT,
                            "other_vport %u vport_number %u: no eswitch",
                            vcx_get(cmd->in, other), vcx_get(cmd->in, number));
    }
    return VCX_CMD_STAT_OK;
}

/*
 * The P_Key table of the RoCE port: entry 0 is the default full-member P_Key 0xffff (the
 * one rdma_cm looks up on Ethernet ports), the other entries of the 128 that cap
 * pkey_table_size 0 gives are empty (0). mlx5_ib asks for entry 0 through this command on
 * an Ethernet port as on an IB one.
 */
uint8_t vcx_cmd_query_hca_vport_pkey(VcxState *s, VcxCmd *cmd)
{
    uint32_t port = vcx_get(cmd->in, VCX_QUERY_HCA_VPORT_PKEY_IN_PORT_NUM);
    uint32_t index = vcx_get(cmd->in, VCX_QUERY_HCA_VPORT_PKEY_IN_PKEY_INDEX);
    uint32_t n = index == VCX_PKEY_INDEX_ALL ? VCX_PKEY_TABLE_LEN : 1;
    uint32_t need = VCX_QUERY_HCA_VPORT_PKEY_OUT_PKEY_AT + 4 * n;
    uint8_t status = vcx_vport_check(cmd, VCX_QUERY_HCA_VPORT_PKEY_IN_OTHER_VPORT,
                                     VCX_QUERY_HCA_VPORT_PKEY_IN_VPORT_NUMBER);

    if (status) {
        return status;
    }
    if (port > 1) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PKEY_PORT,
                            "port_num %u: one port", port);
    }
    if (n == 1 && index >= VCX_PKEY_TABLE_LEN) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_PKEY_INDEX,
                            "pkey_index %u: the table has %u entries", index,
                            VCX_PKEY_TABLE_LEN);
    }
    if (cmd->out_len < need) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_OUTPUT_LEN, SYND_PKEY_OUT_LEN,
                            "output length %u < %u for %u entries", cmd->out_len, need, n);
    }
    if (n > 1 || index == 0) {
        vcx_be32_store(cmd->out + VCX_QUERY_HCA_VPORT_PKEY_OUT_PKEY_AT, VCX_PKEY_DEFAULT);
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_vport_state(VcxState *s, VcxCmd *cmd)
{
    uint8_t status = vcx_vport_check(cmd, VCX_QUERY_VPORT_STATE_IN_OTHER_VPORT,
                                     VCX_QUERY_VPORT_STATE_IN_VPORT_NUMBER);

    if (status) {
        return status;
    }
    vcx_set(cmd->out, VCX_QUERY_VPORT_STATE_OUT_ADMIN_STATE, VCX_VPORT_ADMIN_STATE_AUTO);
    vcx_set(cmd->out, VCX_QUERY_VPORT_STATE_OUT_STATE,
            vcx_port_oper_up(s) ? VCX_VPORT_STATE_UP : VCX_VPORT_STATE_DOWN);
    return VCX_CMD_STAT_OK;
}

/* EUI-64 from the MAC: the node, port and system image GUIDs of the one port. */
static uint64_t vcx_port_guid(VcxState *s)
{
    const uint8_t *m = s->conf.macaddr.a;

    return (uint64_t)(m[0] ^ 0x02) << 56 | (uint64_t)m[1] << 48 | (uint64_t)m[2] << 40 |
           0xfffeull << 24 | (uint64_t)m[3] << 16 | (uint64_t)m[4] << 8 | m[5];
}

uint8_t vcx_cmd_query_nic_vport_context(VcxState *s, VcxCmd *cmd)
{
    uint8_t *ctx = vcx_ptr(cmd->out, VCX_QUERY_NIC_VPORT_CTX_OUT_CTX);
    uint32_t list = vcx_get(cmd->in, VCX_QUERY_NIC_VPORT_CTX_IN_ALLOWED_LIST_TYPE);
    uint8_t status = vcx_vport_check(cmd, VCX_QUERY_NIC_VPORT_CTX_IN_OTHER_VPORT,
                                     VCX_QUERY_NIC_VPORT_CTX_IN_VPORT_NUMBER);
    const uint8_t *mac = s->port.mac;

    if (status) {
        return status;
    }
    /* Address lists: unicast 0, multicast 1, VLAN 2 (nic/vcx-nic-vport.c). */
    if (list > 2) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_ALLOWED_LIST,
                            "allowed_list_type %u", list);
    }
    vcx_set(ctx, VCX_NIC_VPORT_CTX_ROCE_EN, s->port.roce_en);
    vcx_set(ctx, VCX_NIC_VPORT_CTX_MTU, s->port.vport_mtu);
    vcx_set64(ctx, VCX_NIC_VPORT_CTX_SYSTEM_IMAGE_GUID, vcx_port_guid(s));
    vcx_set64(ctx, VCX_NIC_VPORT_CTX_PORT_GUID, vcx_port_guid(s));
    vcx_set64(ctx, VCX_NIC_VPORT_CTX_NODE_GUID, vcx_port_guid(s));
    vcx_set(ctx, VCX_NIC_VPORT_CTX_ALLOWED_LIST_TYPE, list);
    vcx_set(ctx, VCX_NIC_VPORT_CTX_MAC_47_32, mac[0] << 8 | mac[1]);
    vcx_set(ctx, VCX_NIC_VPORT_CTX_MAC_31_0,
            (uint32_t)mac[2] << 24 | mac[3] << 16 | mac[4] << 8 | mac[5]);
    vcx_nic_lists_query(s, cmd, ctx, list, VCX_FLD_BYTE(VCX_QUERY_NIC_VPORT_CTX_OUT_CTX) +
                                           VCX_NIC_VPORT_CTX_LIST_AT);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_modify_nic_vport_context(VcxState *s, VcxCmd *cmd)
{
    const uint32_t supported = VCX_NIC_VPORT_FS_ROCE_EN | VCX_NIC_VPORT_FS_MTU |
                               VCX_NIC_VPORT_FS_PERMANENT_ADDRESS |
                               VCX_NIC_VPORT_FS_ADDRESSES_LIST | VCX_NIC_VPORT_FS_PROMISC;
    const uint32_t list_at = VCX_FLD_BYTE(VCX_MODIFY_NIC_VPORT_CTX_IN_CTX) +
                             VCX_NIC_VPORT_CTX_LIST_AT;
    const uint8_t *ctx = vcx_cptr(cmd->in, VCX_MODIFY_NIC_VPORT_CTX_IN_CTX);
    uint32_t fs = vcx_get(cmd->in, VCX_MODIFY_NIC_VPORT_CTX_IN_FIELD_SELECT);
    uint8_t status = vcx_vport_check(cmd, VCX_MODIFY_NIC_VPORT_CTX_IN_OTHER_VPORT,
                                     VCX_MODIFY_NIC_VPORT_CTX_IN_VPORT_NUMBER);
    uint32_t mtu = vcx_get(ctx, VCX_NIC_VPORT_CTX_MTU);
    uint32_t mac_hi = vcx_get(ctx, VCX_NIC_VPORT_CTX_MAC_47_32);
    uint32_t mac_lo = vcx_get(ctx, VCX_NIC_VPORT_CTX_MAC_31_0);

    if (status) {
        return status;
    }
    if (fs & ~supported) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_FIELD_SELECT,
                            "field_select 0x%x: only roce_en, addresses_list, "
                            "permanent_address, promisc and mtu (0x%x) can be modified", fs,
                            supported);
    }
    if ((fs & VCX_NIC_VPORT_FS_MTU) && (mtu < VCX_MIN_MTU || mtu > VCX_MAX_MTU)) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_VPORT_MTU,
                            "mtu %u outside [%u, %u]", mtu, VCX_MIN_MTU, VCX_MAX_MTU);
    }
    if ((fs & VCX_NIC_VPORT_FS_PERMANENT_ADDRESS) &&
        ((mac_hi & 0x0100) || (!mac_hi && !mac_lo))) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_VPORT_MAC,
                            "permanent_address %04x%08x is not a unicast address",
                            mac_hi, mac_lo);
    }
    status = vcx_nic_lists_check(s, cmd, ctx, fs, list_at);
    if (status) {
        return status;
    }
    vcx_nic_lists_apply(s, cmd, ctx, fs, list_at);
    if (fs & VCX_NIC_VPORT_FS_ROCE_EN) {
        s->port.roce_en = vcx_get(ctx, VCX_NIC_VPORT_CTX_ROCE_EN);
    }
    if (fs & VCX_NIC_VPORT_FS_MTU) {
        s->port.vport_mtu = mtu;
    }
    if (fs & VCX_NIC_VPORT_FS_PERMANENT_ADDRESS) {
        s->port.mac[0] = mac_hi >> 8;
        s->port.mac[1] = mac_hi;
        s->port.mac[2] = mac_lo >> 24;
        s->port.mac[3] = mac_lo >> 16;
        s->port.mac[4] = mac_lo >> 8;
        s->port.mac[5] = mac_lo;
    }
    trace_vcx_vport_modify(fs, s->port.roce_en, s->port.vport_mtu);
    return VCX_CMD_STAT_OK;
}
