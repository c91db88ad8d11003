/*
 * vcx: the NIC vport's address lists and promiscuous modes, the parts of
 * QUERY/MODIFY_NIC_VPORT_CONTEXT the embedded switch's vport filter uses
 * (vcx-nic-rx.c). vcx-port.c handles the rest of the context and calls in here.
 *
 * MODIFY with field_select.addresses_list replaces the unicast (allowed_list_type 0),
 * multicast (1) or VLAN (2) list with allowed_list_size entries (up to
 * 2^log_max_current_uc_list / _mc_list / log_max_vlan_list = 64), given after the context
 * as 8-byte mac_address_layout or vlan_layout entries; unicast entries must be unicast
 * addresses, multicast entries multicast ones. field_select.promisc sets promisc_uc,
 * promisc_mc and promisc_all. QUERY returns the list its input's allowed_list_type names,
 * as far as the output has room, and the promiscuous modes.
 *
 * The MAC lists decide which frames the vport filter passes (vcx-nic-rx.c), as the
 * e-switch forwards to a vport by them. The VLAN list is recorded and reported but
 * filters nothing: mlx5e writes only its active VLANs there, also with rx-vlan-filter
 * off, when every tag must still come in; a function's VLAN filtering is its own flow
 * tables (mlx5e's VLAN table).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/vcx/trace.h"
#include "vcx-nic.h"

/* Syndromes continue vcx-port.c's (SYND_ALLOWED_LIST is 15 there). */
enum {
    SYND_LIST_TYPE = 0x20,
    SYND_LIST_SIZE,
    SYND_LIST_LEN,
    SYND_LIST_ADDR,
};

static void vcx_mac_of(const uint8_t *e, uint8_t *mac)
{
    uint32_t hi = vcx_get(e, VCX_MAC_LAYOUT_47_32), lo = vcx_get(e, VCX_MAC_LAYOUT_31_0);

    mac[0] = hi >> 8;
    mac[1] = hi;
    vcx_be32_store(mac + 2, lo);
}

uint8_t vcx_nic_lists_check(VcxState *s, VcxCmd *cmd, const uint8_t *ctx, uint32_t fs,
                           uint32_t list_at)
{
    uint32_t type = vcx_get(ctx, VCX_NIC_VPORT_CTX_ALLOWED_LIST_TYPE);
    uint32_t n = vcx_get(ctx, VCX_NIC_VPORT_CTX_ALLOWED_LIST_SIZE);
    uint32_t max;

    if (!(fs & VCX_NIC_VPORT_FS_ADDRESSES_LIST)) {
        return VCX_CMD_STAT_OK;
    }
    if (type != VCX_NVPRT_LIST_TYPE_UC && type != VCX_NVPRT_LIST_TYPE_MC &&
        type != VCX_NVPRT_LIST_TYPE_VLAN) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_LIST_TYPE,
                            "allowed_list_type %u: unicast (0), multicast (1) or VLAN (2) "
                            "lists only", type);
    }
    max = 1u << (type == VCX_NVPRT_LIST_TYPE_UC ? VCX_NIC_LOG_UC_LIST :
                 type == VCX_NVPRT_LIST_TYPE_MC ? VCX_NIC_LOG_MC_LIST :
                 VCX_NIC_LOG_VLAN_LIST);
    if (n > max) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_LIST_SIZE,
                            "allowed_list_size %u > %u", n, max);
    }
    if (cmd->in_len < list_at || (cmd->in_len - list_at) / VCX_MAC_LAYOUT_SIZE < n) {
        return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_INPUT_LEN, SYND_LIST_LEN,
                            "%u list entries announced, input of %u bytes", n,
                            cmd->in_len);
    }
    for (uint32_t i = 0; i < n && type != VCX_NVPRT_LIST_TYPE_VLAN; i++) {
        uint8_t mac[6];

        vcx_mac_of(cmd->in + list_at + i * VCX_MAC_LAYOUT_SIZE, mac);
        if ((type == VCX_NVPRT_LIST_TYPE_MC) != (mac[0] & 1)) {
            return vcx_cmd_fail(cmd, VCX_CMD_STAT_BAD_PARAM, SYND_LIST_ADDR,
                                "entry %u %02x:%02x:%02x:%02x:%02x:%02x is not a %s "
                                "address", i, mac[0], mac[1], mac[2], mac[3], mac[4],
                                mac[5], type == VCX_NVPRT_LIST_TYPE_MC ? "multicast" :
                                "unicast");
        }
    }
    return VCX_CMD_STAT_OK;
}

void vcx_nic_lists_apply(VcxState *s, VcxCmd *cmd, const uint8_t *ctx, uint32_t fs,
                         uint32_t list_at)
{
    VcxNic *n = vcx_nic(s);

    if (fs & VCX_NIC_VPORT_FS_ADDRESSES_LIST) {
        uint32_t type = vcx_get(ctx, VCX_NIC_VPORT_CTX_ALLOWED_LIST_TYPE);
        uint32_t cnt = vcx_get(ctx, VCX_NIC_VPORT_CTX_ALLOWED_LIST_SIZE);

        for (uint32_t i = 0; i < cnt; i++) {
            const uint8_t *e = cmd->in + list_at + i * VCX_MAC_LAYOUT_SIZE;

            if (type == VCX_NVPRT_LIST_TYPE_VLAN) {
                n->vlans[i] = vcx_get(e, VCX_VLAN_LAYOUT_VLAN);
            } else {
                vcx_mac_of(e, type == VCX_NVPRT_LIST_TYPE_MC ? n->mc[i] : n->uc[i]);
            }
        }
        switch (type) {
        case VCX_NVPRT_LIST_TYPE_VLAN:
            n->nvlans = cnt;
            trace_vcx_nic_obj("vport VLAN list", "set", cnt);
            break;
        case VCX_NVPRT_LIST_TYPE_MC:
            n->nmc = cnt;
            trace_vcx_nic_obj("vport multicast list", "set", cnt);
            break;
        default:
            n->nuc = cnt;
            trace_vcx_nic_obj("vport unicast list", "set", cnt);
        }
    }
    if (fs & VCX_NIC_VPORT_FS_PROMISC) {
        n->promisc_uc = vcx_get(ctx, VCX_NIC_VPORT_CTX_PROMISC_UC);
        n->promisc_mc = vcx_get(ctx, VCX_NIC_VPORT_CTX_PROMISC_MC);
        n->promisc_all = vcx_get(ctx, VCX_NIC_VPORT_CTX_PROMISC_ALL);
        trace_vcx_nic_obj("vport promiscuous modes", "set",
                          n->promisc_uc | n->promisc_mc << 1 | n->promisc_all << 2);
    }
}

void vcx_nic_lists_query(VcxState *s, VcxCmd *cmd, uint8_t *ctx, uint32_t type,
                         uint32_t list_at)
{
    VcxNic *n = vcx_nic(s);
    uint32_t cnt = type == VCX_NVPRT_LIST_TYPE_UC ? n->nuc :
                   type == VCX_NVPRT_LIST_TYPE_MC ? n->nmc :
                   type == VCX_NVPRT_LIST_TYPE_VLAN ? n->nvlans : 0;
    uint32_t room = cmd->out_len > list_at ?
                    (cmd->out_len - list_at) / VCX_MAC_LAYOUT_SIZE : 0;

    vcx_set(ctx, VCX_NIC_VPORT_CTX_PROMISC_UC, n->promisc_uc);
    vcx_set(ctx, VCX_NIC_VPORT_CTX_PROMISC_MC, n->promisc_mc);
    vcx_set(ctx, VCX_NIC_VPORT_CTX_PROMISC_ALL, n->promisc_all);
    cnt = MIN(cnt, room);
    vcx_set(ctx, VCX_NIC_VPORT_CTX_ALLOWED_LIST_SIZE, cnt);
    for (uint32_t i = 0; i < cnt; i++) {
        const uint8_t *m = type == VCX_NVPRT_LIST_TYPE_UC ? n->uc[i] : n->mc[i];
        uint8_t *e = cmd->out + list_at + i * VCX_MAC_LAYOUT_SIZE;

        if (type == VCX_NVPRT_LIST_TYPE_VLAN) {
            vcx_set(e, VCX_VLAN_LAYOUT_VLAN, n->vlans[i]);
            continue;
        }
        vcx_set(e, VCX_MAC_LAYOUT_47_32, m[0] << 8 | m[1]);
        vcx_set(e, VCX_MAC_LAYOUT_31_0, vcx_be32_load(m + 2));
    }
}
