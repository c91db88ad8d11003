/*
 * vcx: RoCE address (GID) table: QUERY_ROCE_ADDRESS and SET_ROCE_ADDRESS.
 *
 * The table has VCX_GID_TABLE_SIZE entries (RoCE cap roce_address_table_size), each the
 * 32-byte roce_addr_layout as the driver wrote it: the GID (source_l3_address), VLAN,
 * source MAC, roce_l3_type and roce_version. An entry is valid when its GID is not all
 * zeros; writing a zero GID deletes the entry (it then reads back as all zeros), which is
 * what mlx5_ib's del_gid sends. The device speaks RoCEv2 only (RoCE cap roce_version =
 * v2), so a valid entry must say roce_version 2.
 *
 * The transport engine takes a message's source GID from the entry named by the QP's
 * address path (src_addr_index, checked when the path is applied) or a UD WQE's address
 * vector (sgid_index, checked per WQE). The table belongs to the port: it is dropped at
 * reset and by DISABLE_HCA, and survives TEARDOWN_HCA.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/log.h"
#include "vcx-cmd.h"
#include "trace.h"

enum {
    SYND_GID_INDEX = 1,
    SYND_GID_PORT,
    SYND_GID_VERSION,
    SYND_GID_L3_TYPE,
};

void vcx_gid_reset(VcxState *s)
{
    memset(s->port.gid, 0, sizeof(s->port.gid));
    s->port.num_gids = 0;
}

static bool vcx_gid_valid(const uint8_t *entry)
{
    return !buffer_is_zero(entry + VCX_FLD_BYTE(VCX_GID_L3_ADDRESS), 16);
}

/* The valid entry at index, or NULL. */
const uint8_t *vcx_gid_entry(VcxState *s, uint32_t index)
{
    if (index >= VCX_GID_TABLE_SIZE || !vcx_gid_valid(s->port.gid[index])) {
        return NULL;
    }
    return s->port.gid[index];
}

/* Both commands: an index inside the table, port 1 (0 when num_vhca_ports is 0). */
static uint8_t vcx_gid_check(VcxCmd *cmd, uint32_t *index)
{
    uint32_t port = vcx_get(cmd->in, VCX_ROCE_ADDRESS_IN_VHCA_PORT_NUM);

    *index = vcx_get(cmd->in, VCX_ROCE_ADDRESS_IN_INDEX);
    if (*index >= VCX_GID_TABLE_SIZE) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_GID_INDEX,
                            "roce_address_index %u beyond the table (%u entries)",
                            *index, VCX_GID_TABLE_SIZE);
    }
    if (port > VCX_PORT_NUM) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_GID_PORT,
                            "vhca_port_num %u: the device has port 1 only", port);
    }
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_query_roce_address(VcxState *s, VcxCmd *cmd)
{
    uint32_t index;
    uint8_t status = vcx_gid_check(cmd, &index);

    if (status) {
        return status;
    }
    memcpy(vcx_ptr(cmd->out, VCX_QUERY_ROCE_ADDRESS_OUT_ENTRY), s->port.gid[index],
           VCX_GID_ENTRY_SIZE);
    return VCX_CMD_STAT_OK;
}

uint8_t vcx_cmd_set_roce_address(VcxState *s, VcxCmd *cmd)
{
    const uint8_t *e = vcx_cptr(cmd->in, VCX_SET_ROCE_ADDRESS_IN_ENTRY);
    uint8_t *slot;
    bool was_valid;
    uint32_t index, vlan;
    uint8_t status = vcx_gid_check(cmd, &index);

    if (status) {
        return status;
    }
    slot = s->port.gid[index];
    was_valid = vcx_gid_valid(slot);
    if (!vcx_gid_valid(e)) {
        /* A zero GID deletes, whatever version and type came with it. */
        memset(slot, 0, VCX_GID_ENTRY_SIZE);
        s->port.num_gids -= was_valid;
        trace_vcx_gid_delete(index, s->port.num_gids);
        return VCX_CMD_STAT_OK;
    }
    if (vcx_get(e, VCX_GID_VERSION) != VCX_GID_VERSION_2) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_GID_VERSION,
                            "roce_version %u: only RoCEv2 (%u) is supported",
                            vcx_get(e, VCX_GID_VERSION), VCX_GID_VERSION_2);
    }
    if (vcx_get(e, VCX_GID_L3_TYPE) > VCX_GID_L3_IPV6) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_GID_L3_TYPE,
                            "roce_l3_type %u not IPv4 (0) or IPv6 (1)",
                            vcx_get(e, VCX_GID_L3_TYPE));
    }
    memcpy(slot, e, VCX_GID_ENTRY_SIZE);
    s->port.num_gids += !was_valid;
    vlan = vcx_get(e, VCX_GID_VLAN_VALID) ? vcx_get(e, VCX_GID_VLAN_ID) : 0xffff;
    trace_vcx_gid_set(index, vcx_get(e, VCX_GID_VERSION), vcx_get(e, VCX_GID_L3_TYPE),
                      vlan, s->port.num_gids);
    return VCX_CMD_STAT_OK;
}
