/*
 * vcx: steering of a received frame through the NIC RX flow tables (PRM "Flow Table"):
 * the frame's outer-header match set and the lookup from the root table to a TIR.
 *
 * The frame's match set is built once (vcx_ft_match_set, the fte_match_set_lyr_2_4
 * layout); in each table, groups are tried in order of their first index, and in a group
 * the frame's value masked by the group's criteria is looked up in the hash of its
 * entries' values (vcx-nic-ft.c keeps it: among equal values the entry with the lowest
 * index). A match forwards to a TIR (the end), to a table of a higher level, or drops; a
 * miss forwards to the table's miss table or drops. Levels only increase along a path,
 * so a frame visits at most max_ft_level + 1 tables.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "hw/vcx/trace.h"
#include "vcx-nic.h"

#define VCX_FT_MAX_HOPS         (VCX_NIC_MAX_FT_LEVEL + 1)

/* Parse the frame's outer headers into an fte_match_set_lyr_2_4 (64 bytes). */
void vcx_ft_match_set(const uint8_t *f, uint32_t len, uint8_t *set)
{
    VcxNicHdrs h;

    memset(set, 0, VCX_MATCH_SET_SIZE);
    if (len < 14) {
        return;
    }
    vcx_nic_parse_hdrs(f, len, &h);
    vcx_set(set, VCX_MATCH_DMAC_47_16, vcx_be32_load(f));
    vcx_set(set, VCX_MATCH_DMAC_15_0, f[4] << 8 | f[5]);
    vcx_set(set, VCX_MATCH_SMAC_47_16, vcx_be32_load(f + 6));
    vcx_set(set, VCX_MATCH_SMAC_15_0, f[10] << 8 | f[11]);
    if (h.vlan) {
        /* the first tag's kind and fields, seen before any RQ strips it */
        vcx_set(set, h.svlan ? VCX_MATCH_SVLAN_TAG : VCX_MATCH_CVLAN_TAG, 1);
        vcx_set(set, VCX_MATCH_FIRST_PRIO, h.tci >> 13);
        vcx_set(set, VCX_MATCH_FIRST_CFI, (h.tci >> 12) & 1);
        vcx_set(set, VCX_MATCH_FIRST_VID, h.tci & 0xfff);
    }
    vcx_set(set, VCX_MATCH_ETHERTYPE, h.ethertype);
    if (h.ipv == 4) {
        vcx_set(set, VCX_MATCH_IP_VERSION, 4);
        vcx_set(set, VCX_MATCH_IP_PROTOCOL, h.proto);
        vcx_set(set, VCX_MATCH_FRAG, h.frag);
        memcpy(set + VCX_MATCH_SRC_IP_AT + 12, f + h.l3 + 12, 4);
        memcpy(set + VCX_MATCH_DST_IP_AT + 12, f + h.l3 + 16, 4);
    } else if (h.ipv == 6) {
        vcx_set(set, VCX_MATCH_IP_VERSION, 6);
        vcx_set(set, VCX_MATCH_IP_PROTOCOL, h.proto);
        memcpy(set + VCX_MATCH_SRC_IP_AT, f + h.l3 + 8, 16);
        memcpy(set + VCX_MATCH_DST_IP_AT, f + h.l3 + 24, 16);
    }
    if (h.l4 && len >= h.l4 + 4) {
        uint16_t sp = f[h.l4] << 8 | f[h.l4 + 1], dp = f[h.l4 + 2] << 8 | f[h.l4 + 3];

        if (h.proto == VCX_IPPROTO_TCP) {
            vcx_set(set, VCX_MATCH_TCP_SPORT, sp);
            vcx_set(set, VCX_MATCH_TCP_DPORT, dp);
        } else if (h.proto == VCX_IPPROTO_UDP) {
            vcx_set(set, VCX_MATCH_UDP_SPORT, sp);
            vcx_set(set, VCX_MATCH_UDP_DPORT, dp);
        }
    }
}

static VcxFte *vcx_ft_match(VcxFt *ft, const uint8_t *set)
{
    uint8_t key[VCX_MATCH_SET_SIZE];

    for (uint32_t i = 0; i < ft->ngroups; i++) {
        VcxFg *fg = ft->groups[i];
        VcxFte *fte;

        if (!fg->nftes) {
            continue;
        }
        vcx_ft_mask(key, set, fg->mask);
        fte = g_hash_table_lookup(fg->by_value, key);
        if (fte) {
            return fte;
        }
    }
    return NULL;
}

uint32_t vcx_ft_steer(VcxState *s, const uint8_t *set, uint32_t *flow_tag)
{
    VcxFt *ft = vcx_ft_get(s, vcx_nic(s)->root);

    for (uint32_t hop = 0; ft && hop < VCX_FT_MAX_HOPS; hop++) {
        VcxFte *fte = vcx_ft_match(ft, set);
        uint32_t id;

        if (!fte) {
            if (ft->miss_action != VCX_FT_MISS_ACTION_FWD) {
                trace_vcx_nic_steer(ft->id, UINT32_MAX, "miss: drop");
                return 0;
            }
            id = ft->miss_id;
        } else if (fte->action == VCX_FLOW_ACTION_DROP) {
            trace_vcx_nic_steer(ft->id, fte->index, "drop");
            return 0;
        } else if (fte->dest_type == VCX_FLOW_DEST_TYPE_TIR) {
            trace_vcx_nic_steer(ft->id, fte->index, "TIR");
            *flow_tag = fte->flow_tag;
            return fte->dest_id;
        } else {
            id = fte->dest_id;
        }
        ft = vcx_ft_get(s, id);
    }
    return 0;
}
