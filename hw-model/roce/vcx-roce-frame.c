/*
 * vcx: RoCEv2 frames (IBTA vol 1 Annex A17): the headers each BTH opcode carries, a
 * frame built from a packet and its wire address, the ICRC, and a received frame parsed
 * and checked.
 *
 * Frame: Ethernet, with an IEEE 802.1Q tag when the source GID entry has a VLAN (its
 * VID, PCP = the RC/UC path's eth_prio or the UD address vector's SL, DEI 0; a received
 * frame may carry one tag, whose VID is not checked), IPv4 (IHL 5, DF, TTL = hop limit,
 * DSCP/ECN = traffic class, header checksum) or IPv6 (traffic class, flow label, hop
 * limit), UDP (destination port 4791, checksum 0), BTH, the extension headers in IBTA
 * order (DETH, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH), the payload,
 * the pad to 4 bytes and the 4-byte ICRC. XRC (transport 0xa0, IBTA annex A14) has the
 * RC operations; its requests carry the XRCETH (the XRC SRQ at the target), its answers
 * do not.
 *
 * ICRC (Annex A17.3.3): CRC-32 (zlib's crc32(), the IEEE 802.3 polynomial with its
 * initial and final inversion) over 8 bytes of 0xff standing for the masked LRH, then
 * the IP header with the varying fields set to all ones (IPv4: type of service, TTL and
 * header checksum; IPv6: traffic class, flow label and hop limit), the UDP header with
 * its checksum set to all ones, the BTH with its reserved byte (resv8a, byte 4) set to
 * all ones, then everything after the BTH up to and including the pad. The 32-bit value
 * is stored least significant byte first. Linux's Soft-RoCE computes the same value
 * (its CRC runs from the CRC of the 8 masked LRH bytes) and stores it the same way.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include <zlib.h>
#include "vcx-roce.h"
#include "../nic/vcx-nic.h"
#include "hw/vcx/trace.h"

/* IBTA table 38 (RC, UC, UD columns): what each operation carries. */
static const uint32_t vcx_roce_ops[32] = {
#define S_ (VCX_OPF_SEND | VCX_OPF_PAYLOAD | VCX_OPF_RC | VCX_OPF_UC)
#define W_ (VCX_OPF_WRITE | VCX_OPF_PAYLOAD | VCX_OPF_RC | VCX_OPF_UC)
#define R_ (VCX_OPF_READ_RESP | VCX_OPF_PAYLOAD | VCX_OPF_RC)
    [IB_OP_SEND_FIRST] = S_ | VCX_OPF_FIRST,
    [IB_OP_SEND_MIDDLE] = S_,
    [IB_OP_SEND_LAST] = S_ | VCX_OPF_LAST,
    [IB_OP_SEND_LAST_IMM] = S_ | VCX_OPF_LAST | VCX_OPF_IMM,
    [IB_OP_SEND_ONLY] = S_ | VCX_OPF_FIRST | VCX_OPF_LAST | VCX_OPF_UD,
    [IB_OP_SEND_ONLY_IMM] = S_ | VCX_OPF_FIRST | VCX_OPF_LAST | VCX_OPF_IMM | VCX_OPF_UD,
    [IB_OP_WRITE_FIRST] = W_ | VCX_OPF_FIRST | VCX_OPF_RETH,
    [IB_OP_WRITE_MIDDLE] = W_,
    [IB_OP_WRITE_LAST] = W_ | VCX_OPF_LAST,
    [IB_OP_WRITE_LAST_IMM] = W_ | VCX_OPF_LAST | VCX_OPF_IMM,
    [IB_OP_WRITE_ONLY] = W_ | VCX_OPF_FIRST | VCX_OPF_LAST | VCX_OPF_RETH,
    [IB_OP_WRITE_ONLY_IMM] = W_ | VCX_OPF_FIRST | VCX_OPF_LAST | VCX_OPF_RETH | VCX_OPF_IMM,
    [IB_OP_READ_REQUEST] = VCX_OPF_READ_REQ | VCX_OPF_RETH | VCX_OPF_FIRST | VCX_OPF_LAST |
                           VCX_OPF_RC,
    [IB_OP_READ_RESP_FIRST] = R_ | VCX_OPF_FIRST | VCX_OPF_AETH,
    [IB_OP_READ_RESP_MIDDLE] = R_,
    [IB_OP_READ_RESP_LAST] = R_ | VCX_OPF_LAST | VCX_OPF_AETH,
    [IB_OP_READ_RESP_ONLY] = R_ | VCX_OPF_FIRST | VCX_OPF_LAST | VCX_OPF_AETH,
    [IB_OP_ACKNOWLEDGE] = VCX_OPF_ACK | VCX_OPF_AETH | VCX_OPF_FIRST | VCX_OPF_LAST |
                          VCX_OPF_RC,
    [IB_OP_ATOMIC_ACK] = VCX_OPF_ACK | VCX_OPF_AETH | VCX_OPF_ATOMICACK | VCX_OPF_FIRST |
                         VCX_OPF_LAST | VCX_OPF_RC,
    [IB_OP_COMPARE_SWAP] = VCX_OPF_ATOMIC_REQ | VCX_OPF_ATOMIC | VCX_OPF_FIRST |
                           VCX_OPF_LAST | VCX_OPF_RC,
    [IB_OP_FETCH_ADD] = VCX_OPF_ATOMIC_REQ | VCX_OPF_ATOMIC | VCX_OPF_FIRST |
                        VCX_OPF_LAST | VCX_OPF_RC,
    [IB_OP_SEND_LAST_INV] = (S_ & ~VCX_OPF_UC) | VCX_OPF_LAST | VCX_OPF_IETH,
    [IB_OP_SEND_ONLY_INV] = (S_ & ~VCX_OPF_UC) | VCX_OPF_FIRST | VCX_OPF_LAST |
                            VCX_OPF_IETH,
#undef S_
#undef W_
#undef R_
};

/* The flags of a BTH opcode, 0 for one not valid (unknown, or not of its transport). */
uint32_t vcx_roce_op_flags(uint8_t opcode)
{
    uint32_t f = vcx_roce_ops[opcode & IB_OP_MASK];

    switch (opcode & ~IB_OP_MASK) {
    case IB_TRANSPORT_RC:
        return (f & VCX_OPF_RC) ? f : 0;
    case IB_TRANSPORT_UC:
        return (f & VCX_OPF_UC) ? f : 0;
    case IB_TRANSPORT_UD:
        return (f & VCX_OPF_UD) ? f | VCX_OPF_DETH : 0;
    case IB_TRANSPORT_XRC:
        if (!(f & VCX_OPF_RC)) {
            return 0;
        }
        return (f & (VCX_OPF_ACK | VCX_OPF_READ_RESP)) ? f : f | VCX_OPF_XRCETH;
    default:
        return 0;
    }
}

/* BTH plus the extension headers of an opcode's flags. */
uint32_t vcx_roce_hdr_len(uint32_t flags)
{
    return VCX_BTH_LEN + (flags & VCX_OPF_DETH ? VCX_DETH_LEN : 0) +
           (flags & VCX_OPF_XRCETH ? VCX_XRCETH_LEN : 0) +
           (flags & VCX_OPF_RETH ? VCX_RETH_LEN : 0) +
           (flags & VCX_OPF_ATOMIC ? VCX_ATOMICETH_LEN : 0) +
           (flags & VCX_OPF_AETH ? VCX_AETH_LEN : 0) +
           (flags & VCX_OPF_ATOMICACK ? VCX_ATOMICACK_LEN : 0) +
           (flags & VCX_OPF_IMM ? VCX_IMM_LEN : 0) +
           (flags & VCX_OPF_IETH ? VCX_IETH_LEN : 0);
}

static void vcx_put24(uint8_t *p, uint32_t v)
{
    p[0] = v >> 16;
    p[1] = v >> 8;
    p[2] = v;
}

static uint32_t vcx_get24(const uint8_t *p)
{
    return p[0] << 16 | p[1] << 8 | p[2];
}

static uint16_t vcx_ip_csum(const uint8_t *p, uint32_t len)
{
    uint32_t sum = 0;

    for (uint32_t i = 0; i + 1 < len; i += 2) {
        sum += lduw_be_p(p + i);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return sum;
}

/*
 * The ICRC of a frame whose IP header starts at ip (ipv4 or not) and whose BTH starts at
 * bth, covering up to end (the pad included, the ICRC excluded).
 */
static uint32_t vcx_roce_icrc(const uint8_t *ip, bool ipv4, const uint8_t *bth,
                              const uint8_t *end)
{
    static const uint8_t lrh[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    uint8_t m[VCX_IP6_HLEN + VCX_UDP_HLEN + VCX_BTH_LEN];
    uint32_t iph = ipv4 ? VCX_IP4_HLEN : VCX_IP6_HLEN;
    uint32_t n = iph + VCX_UDP_HLEN + VCX_BTH_LEN;
    uLong crc;

    memcpy(m, ip, n);
    if (ipv4) {
        m[1] = 0xff;                    /* type of service */
        m[8] = 0xff;                    /* TTL */
        m[10] = m[11] = 0xff;           /* header checksum */
    } else {
        m[0] |= 0x0f;                   /* traffic class ... */
        m[1] = m[2] = m[3] = 0xff;      /* ... and flow label */
        m[7] = 0xff;                    /* hop limit */
    }
    m[iph + 6] = m[iph + 7] = 0xff;     /* UDP checksum */
    m[iph + VCX_UDP_HLEN + 4] = 0xff;   /* BTH resv8a */
    crc = crc32(0, lrh, sizeof(lrh));
    crc = crc32(crc, m, n);
    crc = crc32(crc, bth + VCX_BTH_LEN, end - bth - VCX_BTH_LEN);
    return crc;
}

/*
 * Seal a frame vcx_roce_build made without its ICRC: compute the ICRC into its last 4
 * bytes (the NIC's header parse finds its IP header and UDP header, the BTH after it).
 */
void vcx_roce_icrc_seal(uint8_t *f, uint32_t len)
{
    VcxNicHdrs h;

    vcx_nic_parse_hdrs(f, len, &h);
    stl_le_p(f + len - VCX_ICRC_LEN, vcx_roce_icrc(f + h.l3, h.ipv == 4,
                                                   f + h.l4 + VCX_UDP_HLEN,
                                                   f + len - VCX_ICRC_LEN));
}

/*
 * The bytes of a frame around its BTH, extension headers and payload: Ethernet (and its
 * 802.1Q tag), IPv4 or IPv6, UDP and the ICRC.
 */
uint32_t vcx_roce_frame_outer(bool vlan, bool ipv4)
{
    return VCX_ETH_HLEN + (vlan ? VCX_VLAN_HLEN : 0) +
           (ipv4 ? VCX_IP4_HLEN : VCX_IP6_HLEN) + VCX_UDP_HLEN + VCX_ICRC_LEN;
}

/* The same for a frame from the port's GID table entry index (none: IPv6, untagged). */
uint32_t vcx_roce_frame_outer_gid(VcxState *s, uint32_t index)
{
    const uint8_t *gid = vcx_gid_entry(s, index);
    uint16_t tci;

    return gid ? vcx_roce_frame_outer(vcx_gid_vlan_tci(gid, 0, &tci),
                                      vcx_get(gid, VCX_GID_L3_TYPE) == VCX_GID_L3_IPV4) :
                 vcx_roce_frame_outer(false, false);
}

/*
 * The length of the frame vcx_roce_build() makes for a packet of this opcode and
 * payload (padded to 4 bytes) with outer bytes around it. The vport counters count it
 * so (no FCS).
 */
uint32_t vcx_roce_frame_len(uint32_t outer, uint8_t opcode, uint32_t len)
{
    return outer + vcx_roce_hdr_len(vcx_roce_op_flags(opcode)) + ROUND_UP(len, 4);
}

/*
 * Build the frame of packet p to a into f (VCX_ROCE_FRAME_MAX bytes); its length. With
 * icrc false the ICRC field is left 0, for a frame that stays in the device
 * (vcx_roce_send): vcx_roce_icrc_seal computes it if the frame is to be seen after all.
 */
uint32_t vcx_roce_build(uint8_t *f, const VcxWireAddr *a, const VcxRocePkt *p, bool icrc)
{
    uint32_t flags = vcx_roce_op_flags(p->opcode);
    uint32_t pad = (4 - (p->len & 3)) & 3;
    uint32_t l4len = VCX_UDP_HLEN + vcx_roce_hdr_len(flags) + p->len + pad + VCX_ICRC_LEN;
    uint8_t *ip = f + VCX_ETH_HLEN + (a->vlan ? VCX_VLAN_HLEN : 0), *udp, *b, *h;

    memcpy(f, a->dmac, 6);
    memcpy(f + 6, a->smac, 6);
    if (a->vlan) {
        stw_be_p(f + 12, 0x8100);
        stw_be_p(f + 14, a->vlan_tci);
    }
    stw_be_p(ip - 2, a->ipv4 ? 0x0800 : 0x86dd);
    if (a->ipv4) {
        ip[0] = 0x45;
        ip[1] = a->tclass;
        stw_be_p(ip + 2, VCX_IP4_HLEN + l4len);
        stw_be_p(ip + 4, 0);
        stw_be_p(ip + 6, 0x4000);       /* DF */
        ip[8] = a->hop_limit;
        ip[9] = 17;
        stw_be_p(ip + 10, 0);
        memcpy(ip + 12, a->sip + 12, 4);
        memcpy(ip + 16, a->dip + 12, 4);
        stw_be_p(ip + 10, ~vcx_ip_csum(ip, VCX_IP4_HLEN) & 0xffff);
        udp = ip + VCX_IP4_HLEN;
    } else {
        stl_be_p(ip, 6u << 28 | (uint32_t)a->tclass << 20 | (a->flow_label & 0xfffff));
        stw_be_p(ip + 4, l4len);
        ip[6] = 17;
        ip[7] = a->hop_limit;
        memcpy(ip + 8, a->sip, 16);
        memcpy(ip + 24, a->dip, 16);
        udp = ip + VCX_IP6_HLEN;
    }
    stw_be_p(udp, a->sport);
    stw_be_p(udp + 2, VCX_ROCE_PORT);
    stw_be_p(udp + 4, l4len);
    stw_be_p(udp + 6, 0);               /* RoCEv2 sends no UDP checksum */

    b = udp + VCX_UDP_HLEN;
    b[0] = p->opcode;
    b[1] = (p->se ? 0x80 : 0) | pad << 4;       /* MigReq 0, TVer 0 */
    stw_be_p(b + 2, p->pkey);
    b[4] = 0;
    vcx_put24(b + 5, p->dqpn);
    b[8] = p->ackreq ? 0x80 : 0;
    vcx_put24(b + 9, p->psn);
    h = b + VCX_BTH_LEN;
    if (flags & VCX_OPF_DETH) {
        stl_be_p(h, p->qkey);
        stl_be_p(h + 4, p->sqpn & 0xffffff);
        h += VCX_DETH_LEN;
    }
    if (flags & VCX_OPF_XRCETH) {
        stl_be_p(h, p->xrc_srqn & 0xffffff);
        h += VCX_XRCETH_LEN;
    }
    if (flags & VCX_OPF_RETH) {
        stq_be_p(h, p->va);
        stl_be_p(h + 8, p->rkey);
        stl_be_p(h + 12, p->dma_len);
        h += VCX_RETH_LEN;
    }
    if (flags & VCX_OPF_ATOMIC) {
        stq_be_p(h, p->va);
        stl_be_p(h + 8, p->rkey);
        stq_be_p(h + 12, p->swap_add);
        stq_be_p(h + 20, p->compare);
        h += VCX_ATOMICETH_LEN;
    }
    if (flags & VCX_OPF_AETH) {
        h[0] = p->aeth_synd;
        vcx_put24(h + 1, p->msn);
        h += VCX_AETH_LEN;
    }
    if (flags & VCX_OPF_ATOMICACK) {
        stq_be_p(h, p->orig);
        h += VCX_ATOMICACK_LEN;
    }
    if (flags & (VCX_OPF_IMM | VCX_OPF_IETH)) {
        stl_be_p(h, p->imm);
        h += 4;
    }
    if (p->len) {
        memcpy(h, p->payload, p->len);
        h += p->len;
    }
    memset(h, 0, pad);
    h += pad;
    stl_le_p(h, icrc ? vcx_roce_icrc(ip, a->ipv4, b, h) : 0);
    return h + VCX_ICRC_LEN - f;
}

/*
 * Parse and check a received RoCEv2 frame: false (counted, traced) if it is malformed,
 * fails its ICRC, has a BTH version other than 0, another P_Key or an opcode not valid
 * for its transport. The payload points into f.
 */
bool vcx_roce_parse(VcxState *s, const uint8_t *f, uint32_t len, bool icrc, VcxRocePkt *p)
{
    VcxRoceStats *st = &vcx_roce(s)->st;
    uint32_t off = VCX_ETH_HLEN, end, l4, hl, pad;
    const uint8_t *ip, *b, *h;
    const char *why = NULL;
    uint16_t type;

    memset(p, 0, sizeof(*p));
    if (len < VCX_ETH_HLEN) {
        why = "runt";
        goto malformed;
    }
    type = lduw_be_p(f + 12);
    if (type == 0x8100 && len >= VCX_ETH_HLEN + VCX_VLAN_HLEN) {
        p->vlan = true;
        p->vlan_tci = lduw_be_p(f + 14);
        type = lduw_be_p(f + 16);
        off = VCX_ETH_HLEN + VCX_VLAN_HLEN;
    }
    ip = f + off;
    if (type == 0x0800) {
        uint32_t tot;

        if (len < off + VCX_IP4_HLEN || ip[0] != 0x45) {
            why = "IPv4 header short or with options";
            goto malformed;
        }
        tot = lduw_be_p(ip + 2);
        if (tot < VCX_IP4_HLEN || tot > len - off || vcx_ip_csum(ip, VCX_IP4_HLEN) != 0xffff ||
            (lduw_be_p(ip + 6) & 0x3fff) || ip[9] != 17) {
            why = "IPv4 length, checksum, fragment or protocol";
            goto malformed;
        }
        p->ipv4 = true;
        p->tclass = ip[1];
        p->hop_limit = ip[8];
        memset(p->sgid, 0, 10);
        p->sgid[10] = p->sgid[11] = 0xff;
        memcpy(p->dgid, p->sgid, 12);
        memcpy(p->sgid + 12, ip + 12, 4);
        memcpy(p->dgid + 12, ip + 16, 4);
        l4 = off + VCX_IP4_HLEN;
        end = off + tot;
    } else if (type == 0x86dd) {
        uint32_t pl;

        if (len < off + VCX_IP6_HLEN || (ip[0] >> 4) != 6) {
            why = "IPv6 header short";
            goto malformed;
        }
        pl = lduw_be_p(ip + 4);
        if (pl > len - off - VCX_IP6_HLEN || ip[6] != 17) {
            why = "IPv6 length or next header";
            goto malformed;
        }
        p->tclass = ldl_be_p(ip) >> 20;
        p->flow_label = ldl_be_p(ip) & 0xfffff;
        p->hop_limit = ip[7];
        memcpy(p->sgid, ip + 8, 16);
        memcpy(p->dgid, ip + 24, 16);
        l4 = off + VCX_IP6_HLEN;
        end = l4 + pl;
    } else {
        why = "not IP";
        goto malformed;
    }
    if (end - l4 < VCX_UDP_HLEN + VCX_BTH_LEN + VCX_ICRC_LEN ||
        lduw_be_p(f + l4 + 4) != end - l4 || lduw_be_p(f + l4 + 2) != VCX_ROCE_PORT) {
        why = "UDP length";
        goto malformed;
    }
    b = f + l4 + VCX_UDP_HLEN;
    p->opcode = b[0];
    p->flags = vcx_roce_op_flags(p->opcode);
    hl = vcx_roce_hdr_len(p->flags);
    pad = (b[1] >> 4) & 3;
    if (b + hl + pad + VCX_ICRC_LEN > f + end) {
        why = "headers, pad and ICRC longer than the packet";
        goto malformed;
    }
    if (icrc && ldl_le_p(f + end - VCX_ICRC_LEN) != vcx_roce_icrc(ip, p->ipv4, b,
                                                                  f + end - VCX_ICRC_LEN)) {
        st->icrc_err++;
        trace_vcx_roce_rx_drop(p->opcode, vcx_get24(b + 5), "ICRC");
        return false;
    }
    if (b[1] & 0x0f) {
        st->bad_tver++;
        trace_vcx_roce_rx_drop(p->opcode, vcx_get24(b + 5), "BTH TVer not 0");
        return false;
    }
    if (!p->flags) {
        st->bad_opcode++;
        trace_vcx_roce_rx_drop(p->opcode, vcx_get24(b + 5), "opcode not valid");
        return false;
    }
    p->pkey = lduw_be_p(b + 2);
    if ((p->pkey & 0x7fff) != (VCX_DEFAULT_PKEY & 0x7fff)) {
        st->bad_pkey++;
        trace_vcx_roce_rx_drop(p->opcode, vcx_get24(b + 5), "P_Key");
        return false;
    }
    p->se = b[0 + 1] & 0x80;
    p->pad = pad;
    p->dqpn = vcx_get24(b + 5);
    p->ackreq = b[8] & 0x80;
    p->psn = vcx_get24(b + 9);
    p->len = end - VCX_ICRC_LEN - pad - (l4 + VCX_UDP_HLEN + hl);
    if (!(p->flags & VCX_OPF_PAYLOAD) && (p->len || pad)) {
        why = "payload on an opcode without one";
        goto malformed;
    }
    h = b + VCX_BTH_LEN;
    if (p->flags & VCX_OPF_DETH) {
        p->qkey = ldl_be_p(h);
        p->sqpn = ldl_be_p(h + 4) & 0xffffff;
        h += VCX_DETH_LEN;
    }
    if (p->flags & VCX_OPF_XRCETH) {
        p->xrc_srqn = ldl_be_p(h) & 0xffffff;
        h += VCX_XRCETH_LEN;
    }
    if (p->flags & VCX_OPF_RETH) {
        p->va = ldq_be_p(h);
        p->rkey = ldl_be_p(h + 8);
        p->dma_len = ldl_be_p(h + 12);
        h += VCX_RETH_LEN;
    }
    if (p->flags & VCX_OPF_ATOMIC) {
        p->va = ldq_be_p(h);
        p->rkey = ldl_be_p(h + 8);
        p->swap_add = ldq_be_p(h + 12);
        p->compare = ldq_be_p(h + 20);
        h += VCX_ATOMICETH_LEN;
    }
    if (p->flags & VCX_OPF_AETH) {
        p->aeth_synd = h[0];
        p->msn = vcx_get24(h + 1);
        h += VCX_AETH_LEN;
    }
    if (p->flags & VCX_OPF_ATOMICACK) {
        p->orig = ldq_be_p(h);
        h += VCX_ATOMICACK_LEN;
    }
    if (p->flags & (VCX_OPF_IMM | VCX_OPF_IETH)) {
        p->imm = ldl_be_p(h);
        h += 4;
    }
    p->payload = h;
    return true;

malformed:
    st->malformed++;
    trace_vcx_roce_rx_drop(len >= 14 ? f[12] : 0, 0, why);
    return false;
}

/*
 * UDP source port when the path gives none: from the flow label, or one made of the two
 * QP numbers, folded into 0xc000-0xffff (as Linux's ib_core derives it for ConnectX).
 */
uint16_t vcx_roce_sport(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn)
{
    uint32_t fl = flow_label & 0xfffff;

    if (!fl) {
        uint64_t v = (uint64_t)lqpn * rqpn;

        v ^= v >> 20;
        v ^= v >> 40;
        fl = v & 0xfffff;
    }
    return ((fl & 0x3fff) ^ ((fl & 0xfc000) >> 14)) | 0xc000;
}

/* Source MAC, IP and VLAN from a GID entry; prio is the tag's PCP. */
static void vcx_roce_addr_src(const uint8_t *gid, uint8_t prio, VcxWireAddr *a)
{
    if (!gid) {
        return;
    }
    memcpy(a->sip, gid + VCX_FLD_BYTE(VCX_GID_L3_ADDRESS), 16);
    memcpy(a->smac, gid + VCX_FLD_BYTE(VCX_GID_MAC_47_32), 6);
    a->ipv4 = vcx_get(gid, VCX_GID_L3_TYPE) == VCX_GID_L3_IPV4;
    a->vlan = vcx_gid_vlan_tci(gid, prio, &a->vlan_tci);
}

/* An RC/UC QP's wire address: its primary path and the path's source GID entry. */
void vcx_roce_addr_path(VcxState *s, VcxQp *qp, VcxWireAddr *a)
{
    const uint8_t *path = qp->qpc + VCX_QPC_PRI_PATH_AT;
    uint16_t sport = vcx_get(path, VCX_ADS_UDP_SPORT);

    memset(a, 0, sizeof(*a));
    vcx_roce_addr_src(vcx_gid_entry(s, vcx_get(path, VCX_ADS_SRC_ADDR_INDEX)),
                      vcx_get(path, VCX_ADS_ETH_PRIO), a);
    memcpy(a->dip, path + VCX_FLD_BYTE(VCX_ADS_RGID_RIP), 16);
    memcpy(a->dmac, path + VCX_FLD_BYTE(VCX_ADS_RMAC_47_32), 6);
    a->tclass = vcx_get(path, VCX_ADS_TCLASS);
    a->hop_limit = vcx_get(path, VCX_ADS_HOP_LIMIT);
    a->flow_label = vcx_get(path, VCX_ADS_FLOW_LABEL);
    a->sport = sport ? sport : vcx_roce_sport(a->flow_label, qp->qpn, qp->remote_qpn);
}

/* A UD WQE's wire address: its address vector and the source GID entry it names. */
bool vcx_roce_addr_av(VcxState *s, VcxQp *qp, const uint8_t *av, const uint8_t *sgid,
                      VcxWireAddr *a)
{
    uint16_t sport = vcx_get(av, VCX_WQE_AV_RLID_UDP_SPORT);

    memset(a, 0, sizeof(*a));
    vcx_roce_addr_src(sgid, vcx_get(av, VCX_WQE_AV_SL_ROCE), a);
    memcpy(a->dip, av + VCX_FLD_BYTE(VCX_WQE_AV_RGID), 16);
    memcpy(a->dmac, av + VCX_FLD_BYTE(VCX_WQE_AV_RMAC), 6);
    if (vcx_gid_is_mcast(a->dip)) {
        vcx_gid_mcast_mac(a->dip, a->dmac);     /* a group: its IP multicast MAC */
    }
    a->tclass = vcx_get(av, VCX_WQE_AV_TCLASS);
    a->hop_limit = vcx_get(av, VCX_WQE_AV_HOP_LIMIT);
    a->flow_label = vcx_get(av, VCX_WQE_AV_FLOW_LABEL);
    a->sport = sport ? sport : vcx_roce_sport(a->flow_label, vcx_qp_wire_qpn(qp),
                                              vcx_get(av, VCX_WQE_AV_DQPN));
    return sgid != NULL;
}
