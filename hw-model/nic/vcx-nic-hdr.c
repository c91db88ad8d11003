/*
 * vcx: the outer headers of an Ethernet frame as the NIC parses them, once for the send
 * path's checksum offload and LSO, the receive path's checks and RSS, and steering's
 * match set; and the checksum offload itself (PRM "Ethernet Segment", cs_flags).
 *
 * What the device parses: Ethernet II with at most one VLAN tag (an 802.1Q C-tag, TPID
 * 0x8100, or an 802.1ad S-tag, 0x88a8; a second tag makes the frame L2 only), then IPv4
 * (any IHL of 5 or more that fits the frame; a fragment has no L4 header) or IPv6 (the
 * fixed header only: the next-header field is taken as the L4 protocol and extension
 * headers are not walked; vcx.ko's ndo_features_check keeps such packets away from LSO),
 * then TCP or UDP by protocol number. Anything else is L2 only. Every read stays within the
 * frame's length.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "vcx-nic.h"

void vcx_nic_parse_hdrs(const uint8_t *f, uint32_t len, VcxNicHdrs *h)
{
    uint32_t l3 = 14;                   /* destination, source, EtherType */
    uint16_t type;

    memset(h, 0, sizeof(*h));
    if (len < l3) {
        return;
    }
    type = lduw_be_p(f + 12);
    if ((type == VCX_ETHERTYPE_VLAN || type == VCX_ETHERTYPE_SVLAN) && len >= l3 + 4) {
        h->vlan = true;
        h->svlan = type == VCX_ETHERTYPE_SVLAN;
        h->tci = lduw_be_p(f + 14);
        type = lduw_be_p(f + 16);
        l3 += 4;
    }
    h->l2 = l3;
    h->ethertype = type;
    if (type == VCX_ETHERTYPE_IPV4 && len >= l3 + 20 && (f[l3] >> 4) == 4) {
        uint32_t ihl = (f[l3] & 0xf) * 4;

        h->ipv = 4;
        h->l3 = l3;
        h->proto = f[l3 + 9];
        h->ip_len = lduw_be_p(f + l3 + 2);
        h->frag = (lduw_be_p(f + l3 + 6) & 0x3fff) != 0;
        if (ihl >= 20 && len >= l3 + ihl) {
            h->l3_len = ihl;
            h->l4 = h->frag ? 0 : l3 + ihl;
        }
    } else if (type == VCX_ETHERTYPE_IPV6 && len >= l3 + 40 && (f[l3] >> 4) == 6) {
        h->ipv = 6;
        h->l3 = l3;
        h->l3_len = 40;
        h->proto = f[l3 + 6];
        h->ip_len = lduw_be_p(f + l3 + 4);
        h->l4 = l3 + 40;
    }
}

/*
 * The L3 (IPv4 header) and L4 (TCP/UDP over IPv4 or IPv6) checksums cs_flags asks for,
 * computed from scratch over the headers h describes: whatever the checksum field held
 * (the stack leaves a pseudo-header sum or 0) is ignored. The IP length fields are read
 * from the frame, so LSO can rewrite them per segment and reuse one parse. Frames that
 * are not IPv4/IPv6 with TCP or UDP are left as they are, as hardware leaves what it
 * cannot parse.
 */
void vcx_nic_csum_fill(uint8_t *f, uint32_t len, const VcxNicHdrs *h, uint8_t cs_flags)
{
    uint32_t l3 = h->l3, l4 = h->l4, l4_len, sum;

    if (h->ipv == 4) {
        uint32_t tot = lduw_be_p(f + l3 + 2);

        if (!h->l3_len) {
            return;                     /* IHL under 5 or past the frame */
        }
        if (cs_flags & VCX_ETH_CS_L3) {
            f[l3 + 10] = f[l3 + 11] = 0;
            stw_be_p(f + l3 + 10, ~vcx_csum_fold(vcx_csum_add(0, f + l3, h->l3_len)));
        }
        if (!l4 || tot < h->l3_len) {
            return;                     /* a fragment: no L4 header to complete */
        }
        l4_len = MIN(tot, len - l3) - h->l3_len;
        sum = vcx_csum_add(0, f + l3 + 12, 8);
    } else if (h->ipv == 6) {
        l4_len = MIN((uint32_t)lduw_be_p(f + l3 + 4), len - l4);
        sum = vcx_csum_add(0, f + l3 + 8, 32);
    } else {
        return;
    }
    if (!(cs_flags & VCX_ETH_CS_L4)) {
        return;
    }
    if (h->proto == VCX_IPPROTO_TCP && l4_len >= 20) {
        f[l4 + 16] = f[l4 + 17] = 0;
        sum += VCX_IPPROTO_TCP + l4_len;
        stw_be_p(f + l4 + 16, ~vcx_csum_fold(vcx_csum_add(sum, f + l4, l4_len)));
    } else if (h->proto == VCX_IPPROTO_UDP && l4_len >= 8) {
        uint16_t c;

        f[l4 + 6] = f[l4 + 7] = 0;
        sum += VCX_IPPROTO_UDP + l4_len;
        c = ~vcx_csum_fold(vcx_csum_add(sum, f + l4, l4_len));
        stw_be_p(f + l4 + 6, c ? c : 0xffff);   /* UDP: 0 means "no checksum" */
    }
}

void vcx_nic_csum_offload(uint8_t *f, uint32_t len, uint8_t cs_flags)
{
    VcxNicHdrs h;

    vcx_nic_parse_hdrs(f, len, &h);
    vcx_nic_csum_fill(f, len, &h, cs_flags);
}
