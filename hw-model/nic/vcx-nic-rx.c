/*
 * vcx: the Ethernet receive path: frames from the netdev and the loopback path, the
 * embedded switch's vport filter, steering, RSS and delivery into RQs (PRM "Receive
 * Queue", "Completion Queue Entry Format").
 *
 * Frames are copied into a bounded queue (VCX_NIC_RXQ_FRAMES frames, VCX_NIC_RXQ_BYTES
 * bytes); when it is full the netdev's receive callback returns 0 and QEMU's net layer
 * keeps the frames until the executor has drained some (qemu_flush_queued_packets).
 * RoCEv2 frames the port sends to itself with the loopback-frames property
 * (vcx_nic_loopback_roce) join the same queue, up to VCX_NIC_RXQ_LB_FRAMES /
 * VCX_NIC_RXQ_LB_BYTES, and skip the vport checks: they never crossed the MAC.
 * The executor then takes each frame in turn, within its run's budget:
 *   - RoCEv2 (UDP destination port 4791 to an address of the port's GID table): for the
 *     RDMA engine's wire path (hw-model/roce/vcx-roce-dev.c, vcx_roce_rx); one it
 *     drops before any QP (malformed, ICRC, no such QP) is counted in roce_rx_drop;
 *   - longer than the vport MTU + 18: received_errors, dropped;
 *   - vport filter (what the eswitch delivers to the function's NIC RX root): the
 *     permanent MAC or an address of the unicast list, broadcast, a multicast address of
 *     the multicast list, or any frame the promiscuous modes let in; others dropped;
 *   - the NIC RX root flow table (vcx-nic-ft.c) chooses a TIR or drops;
 *   - TIR: a looped-back frame of the TIR's own transport domain is dropped when the TIR
 *     blocks self loopback of its kind (unicast / multicast); a direct TIR names its RQ,
 *     an indirect one an RQT entry, chosen by the Toeplitz hash of the fields its selector
 *     names (a frame without them hashes to 0);
 *   - RQ: not RDY, dropped; no receive WQE posted (its doorbell record counter equals
 *     what was consumed), dropped and counted in the RQ's Q counter (out_of_buffer), with
 *     nothing written; a WQE too short for the frame is consumed with an error CQE
 *     (RESP_ERR, LOCAL_LENGTH_ERR) and the frame dropped; a memory key fault likewise
 *     with LOCAL_PROT_ERR. The RQ stays RDY in both cases.
 * An RQ with VLAN stripping on (vsd 0) takes an outer C-VLAN tag out of the frame.
 * The receive CQE (RESP_SEND) carries the byte count, the WQE counter, the flow tag, the
 * L3/L4 header types, L2_OK/L3_OK/L4_OK, the ones' complement sum from the IP header
 * (check_sum, vcx_rx_csums), the stripped tag (cvlan present, vlan_info) and the RSS
 * hash and its type.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/bswap.h"
#include "net/net.h"
#include "hw/vcx/trace.h"
#include "vcx-nic.h"

/* Toeplitz hash (Microsoft RSS): the 32-bit window of the key at each input bit. */
uint32_t vcx_toeplitz(const uint8_t *key, uint32_t key_len, const uint8_t *in,
                      uint32_t len)
{
    uint32_t hash = 0, win = vcx_be32_load(key);

    for (uint32_t i = 0; i < len; i++) {
        for (int b = 7; b >= 0; b--) {
            uint32_t bit = i * 8 + (7 - b) + 32;        /* key bit entering the window */

            if (in[i] & (1u << b)) {
                hash ^= win;
            }
            win <<= 1;
            if (bit / 8 < key_len && (key[bit / 8] & (0x80 >> (bit % 8)))) {
                win |= 1;
            }
        }
    }
    return hash;
}

/* What the headers of a frame say, for RSS, RoCE detection and the CQE. */
typedef struct VcxRxHdr {
    uint32_t l2;                /* the L2 header's length: 14, or 18 with a VLAN tag */
    uint32_t l3;                /* offset of the IP header, 0: none */
    uint32_t l4;                /* offset of the TCP/UDP header, 0: none */
    uint8_t ipv;                /* 4, 6 or 0 */
    uint8_t proto;
    bool frag;                  /* an IPv4 fragment: no L4 header */
    uint32_t l3_len;            /* IPv4 header length (IHL * 4), 40 for IPv6 */
    uint32_t l4_len;            /* the IP packet's bytes after l3_len */
} VcxRxHdr;

/*
 * The receive side's view of the outer headers: only IP headers whose lengths fit the
 * frame count (a truncated packet is L2 only). Their checksums are left to
 * vcx_rx_csums, for the frames that reach an RQ: RoCE frames go to the packet
 * engine, which checks what IBTA asks of them, and a dropped frame needs no CQE.
 */
static void vcx_rx_parse(const uint8_t *f, uint32_t len, VcxRxHdr *h)
{
    VcxNicHdrs p;

    memset(h, 0, sizeof(*h));
    vcx_nic_parse_hdrs(f, len, &p);
    h->l2 = p.l2;
    if (p.ipv == 4) {
        if (!p.l3_len || p.ip_len < p.l3_len || p.ip_len > len - p.l3) {
            return;
        }
        h->l4_len = p.ip_len - p.l3_len;
    } else if (p.ipv == 6) {
        if (p.ip_len > len - p.l3 - 40) {
            return;
        }
        h->l4_len = p.ip_len;
    } else {
        return;
    }
    h->l3 = p.l3;
    h->l3_len = p.l3_len;
    h->ipv = p.ipv;
    h->proto = p.proto;
    h->frag = p.frag;
    h->l4 = p.l4;
    if (!h->l4 || (h->proto != VCX_IPPROTO_TCP && h->proto != VCX_IPPROTO_UDP) ||
        h->l4_len < (h->proto == VCX_IPPROTO_TCP ? 20u : 8u)) {
        h->l4 = 0;
    }
}

/*
 * The CQE's check_sum, l3_ok and l4_ok (PRM "CQE format"), each byte summed once: the IP
 * header's and the L4 segment's own sums are parts of check_sum.
 * check_sum is the ones' complement sum of the bytes from the IP header to the end of
 * the frame, as ConnectX reports it: a VLAN tag left in the frame is not covered, nor is
 * the padding of a frame of at most 60 bytes after its IP packet (the mlx5e driver adds
 * both itself for CHECKSUM_COMPLETE). A frame without a usable IP header is summed from
 * the end of its L2 header. The IP header starts at an even offset and is a multiple of
 * 4 long, so the parts meet at even offsets, but for the bytes after an odd-length L4
 * segment: a run that starts at an odd offset sums to the byte swap of its sum from an
 * even one (RFC 1071, 2.(B)).
 */
static uint16_t vcx_rx_csums(const uint8_t *f, uint32_t len, const VcxRxHdr *h,
                             bool *l3_ok, bool *l4_ok)
{
    uint32_t pseudo = 0, l3sum = 0, l4sum, l4end, end = len;
    uint16_t tail;

    *l3_ok = *l4_ok = false;
    if (!h->l3) {
        return vcx_csum_fold(vcx_csum_add(0, f + h->l2, len - h->l2));
    }
    if (len <= VCX_NIC_MIN_FRAME) {
        end = h->l3 + h->l3_len + h->l4_len;    /* the pad after the IP packet */
    }
    if (h->ipv == 4) {
        l3sum = vcx_csum_add(0, f + h->l3, h->l3_len);
        *l3_ok = vcx_csum_fold(l3sum) == 0xffff;
        pseudo = vcx_csum_add(0, f + h->l3 + 12, 8);
    } else {
        *l3_ok = true;
        pseudo = vcx_csum_add(0, f + h->l3 + 8, 32);
    }
    if (!h->l4) {
        return vcx_csum_fold(vcx_csum_add(0, f + h->l3, end - h->l3));
    }
    l4sum = vcx_csum_add(0, f + h->l4, h->l4_len);
    if (h->proto == VCX_IPPROTO_UDP && h->ipv == 4 && !(f[h->l4 + 6] | f[h->l4 + 7])) {
        *l4_ok = true;                  /* UDP over IPv4 without a checksum */
    } else {
        *l4_ok = vcx_csum_fold(pseudo + h->proto + h->l4_len + l4sum) == 0xffff;
    }
    l4end = h->l4 + h->l4_len;
    tail = vcx_csum_fold(vcx_csum_add(0, f + l4end, end - l4end));
    if (h->l4_len & 1) {
        tail = bswap16(tail);
    }
    if (h->ipv == 4) {
        /* the IPv4 header is summed above; IPv6's 40 bytes and extensions are not */
        return vcx_csum_fold(l3sum + vcx_csum_add(0, f + h->l3 + h->l3_len,
                                                  h->l4 - h->l3 - h->l3_len) +
                             l4sum + tail);
    }
    return vcx_csum_fold(vcx_csum_add(0, f + h->l3, h->l4 - h->l3) + l4sum + tail);
}

/*
 * RoCEv2: UDP to port 4791 at one of the port's GID addresses, or at a multicast group
 * a QP of the port is attached to (to the group's MAC: roce/vcx-roce-mcg.c).
 */
static bool vcx_rx_is_roce(VcxState *s, const uint8_t *f, const VcxRxHdr *h)
{
    uint8_t dgid[16] = { [10] = 0xff, [11] = 0xff };

    if (!h->l4 || h->proto != 17 ||
        (f[h->l4 + 2] << 8 | f[h->l4 + 3]) != VCX_ROCE_UDP_PORT) {
        return false;
    }
    if (h->ipv == 4) {
        memcpy(dgid + 12, f + h->l3 + 16, 4);
    } else {
        memcpy(dgid, f + h->l3 + 24, 16);
    }
    if (vcx_roce_mcg_wants(s, f, dgid)) {
        return true;
    }
    for (uint32_t i = 0; i < VCX_GID_TABLE_SIZE; i++) {
        const uint8_t *e = vcx_gid_entry(s, i);
        const uint8_t *a;

        if (!e) {
            continue;
        }
        a = e + VCX_FLD_BYTE(VCX_GID_L3_ADDRESS);
        if (h->ipv == 4 ? !memcmp(a + 12, f + h->l3 + 16, 4) :
            !memcmp(a, f + h->l3 + 24, 16)) {
            return true;
        }
    }
    return false;
}

/* The eswitch's vport filter: true if the frame is for this function. */
static bool vcx_rx_vport_accepts(VcxState *s, const uint8_t *f)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    VcxNic *n = vcx_nic(s);

    if (n->promisc_all || !memcmp(f, bcast, 6)) {
        return true;
    }
    if (f[0] & 1) {
        if (n->promisc_mc) {
            return true;
        }
        for (uint32_t i = 0; i < n->nmc; i++) {
            if (!memcmp(f, n->mc[i], 6)) {
                return true;
            }
        }
        return false;
    }
    if (n->promisc_uc || !memcmp(f, s->port.mac, 6)) {
        return true;
    }
    for (uint32_t i = 0; i < n->nuc; i++) {
        if (!memcmp(f, n->uc[i], 6)) {
            return true;
        }
    }
    return false;
}

/*
 * RSS: the RQT entry of a hashing TIR; *hash and *htype for the CQE. Toeplitz with the
 * TIR's key, or inverted XOR8 (the PRM names it without its bit order: this one
 * complements the XOR of the input bytes, so its values may differ from a board's).
 * A symmetric TIR hashes the smaller address (and port) of the pair first, so both
 * directions of a flow get one hash. ConnectX's own symmetric function is not in the
 * PRM: its values may differ from this one's, its property (one hash per flow) is kept.
 */
static uint32_t vcx_rx_rss(const VcxTir *tir, const uint8_t *f, const VcxRxHdr *h,
                           uint32_t *hash, uint8_t *htype)
{
    bool want_ip = tir->fields & (VCX_HASH_FIELD_SEL_SRC_IP | VCX_HASH_FIELD_SEL_DST_IP);
    bool want_l4 = tir->fields & (VCX_HASH_FIELD_SEL_L4_SPORT | VCX_HASH_FIELD_SEL_L4_DPORT);
    bool want_spi = tir->fields & VCX_HASH_FIELD_SEL_IPSEC_SPI;
    uint8_t in[40];
    uint32_t n = 0, alen, spi_at = 0;
    const uint8_t *src, *dst, *sport, *dport;

    *hash = 0;
    *htype = 0;
    if (!tir->fields || !h->ipv ||
        h->ipv != (tir->l3_type == VCX_L3_PROT_TYPE_IPV4 ? 4 : 6)) {
        return 0;
    }
    if (want_l4 && (!h->l4 || h->proto != (tir->l4_type == VCX_L4_PROT_TYPE_TCP ? 6 : 17))) {
        return 0;
    }
    if (want_spi) {
        /* the SPI: the first word of an ESP header, the second of an AH header */
        spi_at = h->proto == VCX_IPPROTO_ESP ? 0 : h->proto == VCX_IPPROTO_AH ? 4 : UINT32_MAX;
        if (spi_at == UINT32_MAX || h->frag || h->l4_len < spi_at + 4) {
            return 0;
        }
        spi_at += h->l3 + h->l3_len;
    }
    alen = h->ipv == 4 ? 4 : 16;
    src = f + h->l3 + (h->ipv == 4 ? 12 : 8);
    dst = src + alen;
    sport = f + h->l4;
    dport = f + h->l4 + 2;
    if (tir->symmetric && memcmp(src, dst, alen) > 0) {
        const uint8_t *t = src;

        src = dst;
        dst = t;
    }
    if (tir->symmetric && want_l4 && memcmp(sport, dport, 2) > 0) {
        const uint8_t *t = sport;

        sport = dport;
        dport = t;
    }
    if (tir->fields & VCX_HASH_FIELD_SEL_SRC_IP) {
        memcpy(in + n, src, alen);
        n += alen;
    }
    if (tir->fields & VCX_HASH_FIELD_SEL_DST_IP) {
        memcpy(in + n, dst, alen);
        n += alen;
    }
    if (tir->fields & VCX_HASH_FIELD_SEL_L4_SPORT) {
        memcpy(in + n, sport, 2);
        n += 2;
    }
    if (tir->fields & VCX_HASH_FIELD_SEL_L4_DPORT) {
        memcpy(in + n, dport, 2);
        n += 2;
    }
    if (want_spi) {
        memcpy(in + n, f + spi_at, 4);
        n += 4;
    }
    if (tir->hash_fn == VCX_RX_HASH_FN_TOEPLITZ) {
        *hash = vcx_toeplitz(tir->key, sizeof(tir->key), in, n);
    } else {
        uint8_t x = 0;                  /* inverted XOR8: the bytes' XOR, complemented */

        for (uint32_t i = 0; i < n; i++) {
            x ^= in[i];
        }
        *hash = (uint8_t)~x;
    }
    if (want_ip) {
        *htype |= (h->ipv == 4 ? VCX_CQE_RSS_IPV4 : VCX_CQE_RSS_IPV6) <<
                  VCX_CQE_RSS_HTYPE_IP_SHIFT;
    }
    if (want_l4 || want_spi) {
        *htype |= (want_spi ? VCX_CQE_RSS_L4_IPSEC :
                   h->proto == 6 ? VCX_CQE_RSS_L4_TCP : VCX_CQE_RSS_L4_UDP) <<
                  VCX_CQE_RSS_HTYPE_L4_SHIFT;
    }
    return *hash;
}

static void vcx_rx_drop(VcxState *s, const char *why, uint32_t len)
{
    vcx_nic(s)->st.nic_rx_drop++;
    trace_vcx_nic_rx_drop(len, why);
}

static void vcx_rx_cqe_err(VcxState *s, VcxNicWq *rq, uint8_t synd, uint16_t index)
{
    uint8_t cqe[VCX_CQE_SIZE] = { 0 };

    vcx_set(cqe, VCX_CQE_SYNDROME, synd);
    vcx_set(cqe, VCX_CQE_QPN, rq->num);
    vcx_set(cqe, VCX_CQE_WQE_COUNTER, index);
    cqe[VCX_CQE_OP_OWN_BYTE] = VCX_CQE_RESP_ERR << 4;
    vcx_cq_post(s, rq->cq, cqe, false);
}

/* Scatter the frame into the RQ's next WQE and complete it. */
static void vcx_rx_deliver(VcxState *s, VcxNicWq *rq, const uint8_t *f, uint32_t len,
                           const VcxRxHdr *h, uint32_t flow_tag, uint32_t hash,
                           uint8_t htype)
{
    uint32_t stride = 1u << rq->log_stride, nseg = stride / VCX_WQE_DATA_SEG_SIZE;
    uint32_t size = 1u << rq->log_wq_sz, posted, room = 0, done = 0;
    uint16_t index = rq->ci;
    uint8_t wqe[1u << VCX_NIC_RQ_LOG_STRIDE_MAX];
    uint8_t cqe[VCX_CQE_SIZE] = { 0 };
    const char *why = NULL;
    uint8_t hds = VCX_CQE_L2_OK, l3t = 0, l4t = 0;
    bool l3_ok, l4_ok, stripped = false;
    uint16_t check_sum, tci = 0;
    VcxRxHdr sh;

    if (rq->state != VCX_RQC_STATE_RDY) {
        vcx_rx_drop(s, "RQ not ready", len);
        return;
    }
    /*
     * VLAN stripping (RQ context vsd 0): an outer C-VLAN tag leaves the frame and goes
     * to the CQE (cvlan present, vlan_info); an S-VLAN tag stays, as it does on ConnectX.
     */
    if (!rq->vsd && h->l2 == 18 && lduw_be_p(f + 12) == VCX_ETHERTYPE_VLAN) {
        uint8_t *sf = vcx_nic(s)->rx_frame;

        tci = lduw_be_p(f + 14);
        memcpy(sf, f, 12);
        memcpy(sf + 12, f + 16, len - 16);
        f = sf;
        len -= 4;
        vcx_rx_parse(f, len, &sh);
        h = &sh;
        stripped = true;
    }
    if (vcx_dbr_read(s, rq->dbr_addr + VCX_NIC_RQ_DBR_RECV, &posted) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: RQ 0x%x doorbell record at 0x%" PRIx64
                      " not readable: frame dropped\n", rq->num, rq->dbr_addr);
        trace_vcx_err_nic_rq(rq->num, "doorbell record not readable");
        vcx_rx_drop(s, "RQ doorbell record not readable", len);
        return;
    }
    if ((uint16_t)posted == rq->ci) {
        if (rq->qc) {
            rq->qc->out_of_buffer++;
        }
        vcx_rx_drop(s, "no receive WQE (out of buffer)", len);
        return;
    }
    if (vcx_qbuf_read(s, &rq->buf, (uint64_t)(rq->ci & (size - 1)) << rq->log_stride,
                      wqe, stride) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: RQ 0x%x WQE 0x%x not readable\n", rq->num,
                      index);
        trace_vcx_err_nic_rq(rq->num, "WQE not readable");
        vcx_rx_cqe_err(s, rq, VCX_CQE_SYND_LOCAL_PROT_ERR, index);
        rq->ci++;
        vcx_rx_drop(s, "receive WQE not readable", len);
        return;
    }
    for (uint32_t i = 0; i < nseg; i++) {
        const uint8_t *d = wqe + i * VCX_WQE_DATA_SEG_SIZE;

        if (vcx_get(d, VCX_WQE_DATA_LKEY) == VCX_INVALID_LKEY) {
            break;
        }
        room += vcx_get(d, VCX_WQE_DATA_BYTE_COUNT) & 0x7fffffffu;
    }
    if (room < len) {
        qemu_log_mask(LOG_GUEST_ERROR, "vcx: RQ 0x%x WQE 0x%x holds %u bytes, frame of %u: "
                      "error CQE\n", rq->num, index, room, len);
        trace_vcx_err_nic_rq(rq->num, "receive WQE too short");
        vcx_rx_cqe_err(s, rq, VCX_CQE_SYND_LOCAL_LENGTH_ERR, index);
        rq->ci++;
        vcx_rx_drop(s, "receive WQE too short", len);
        return;
    }
    for (uint32_t i = 0; i < nseg && done < len; i++) {
        const uint8_t *d = wqe + i * VCX_WQE_DATA_SEG_SIZE;
        uint32_t bc = vcx_get(d, VCX_WQE_DATA_BYTE_COUNT) & 0x7fffffffu;
        uint32_t lkey = vcx_get(d, VCX_WQE_DATA_LKEY);
        uint64_t va = vcx_get64(d, VCX_WQE_DATA_ADDR);
        uint32_t n = MIN(bc, len - done);
        VcxMkey *mk;

        if (!n) {
            continue;
        }
        mk = vcx_mkey_check(s, lkey, rq->pdn, rq->num, va, n, VCX_ACC_LOCAL_WRITE, &why);
        if (!mk || vcx_mkey_rw(s, mk, va, (uint8_t *)f + done, n, true) != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "vcx: RQ 0x%x WQE 0x%x key 0x%x va 0x%" PRIx64
                          ": %s: error CQE\n", rq->num, index, lkey, va,
                          why ? why : "scatter DMA failed");
            trace_vcx_err_nic_rq(rq->num, why ? why : "scatter DMA failed");
            vcx_rx_cqe_err(s, rq, VCX_CQE_SYND_LOCAL_PROT_ERR, index);
            rq->ci++;
            vcx_rx_drop(s, "receive key fault", len);
            return;
        }
        done += n;
    }
    check_sum = vcx_rx_csums(f, len, h, &l3_ok, &l4_ok);
    if (h->ipv) {
        l3t = h->ipv == 4 ? VCX_CQE_L3_HDR_IPV4 : VCX_CQE_L3_HDR_IPV6;
        hds |= l3_ok ? VCX_CQE_L3_OK : 0;
    }
    if (h->l4) {
        l4t = h->proto == 6 ? VCX_CQE_L4_HDR_TCP : VCX_CQE_L4_HDR_UDP;
        hds |= l4_ok ? VCX_CQE_L4_OK : 0;
    }
    vcx_set(cqe, VCX_CQE_RSS_HASH_RESULT, hash);
    vcx_set(cqe, VCX_CQE_RSS_HASH_TYPE, htype);
    vcx_set(cqe, VCX_CQE_CHECK_SUM, check_sum);
    vcx_set(cqe, VCX_CQE_HDS_IP_EXT, hds);
    vcx_set(cqe, VCX_CQE_L4_HDR_TYPE, l4t);
    vcx_set(cqe, VCX_CQE_L3_HDR_TYPE, l3t);
    if (stripped) {
        vcx_set(cqe, VCX_CQE_VLAN_PRESENT, 1);
        vcx_set(cqe, VCX_CQE_VLAN_INFO, tci);
    }
    vcx_set(cqe, VCX_CQE_BYTE_CNT, len);
    vcx_set(cqe, VCX_CQE_FLOW_TAG, flow_tag);
    vcx_set(cqe, VCX_CQE_WQE_COUNTER, index);
    cqe[VCX_CQE_OP_OWN_BYTE] = VCX_CQE_RESP_SEND << 4;
    rq->ci++;
    vcx_nic(s)->st.nic_rx++;
    trace_vcx_nic_rx(rq->num, index, len, flow_tag, hash);
    vcx_cq_post(s, rq->cq, cqe, false);
}

/* To the RDMA engine's wire path (hw-model/roce/); what it drops is counted here. */
static void vcx_rx_roce(VcxState *s, const uint8_t *f, uint32_t len, bool sealed)
{
    if (!vcx_roce_rx(s, f, len, sealed)) {
        vcx_nic(s)->st.roce_rx_drop++;
    }
}

static void vcx_rx_frame(VcxState *s, const VcxFrame *fr)
{
    VcxNic *n = vcx_nic(s);
    const uint8_t *f = fr->data;
    uint32_t len = fr->len, tirn, flow_tag = 0, hash = 0, rqn;
    uint8_t set[VCX_MATCH_SET_SIZE], htype = 0;
    VcxRxHdr h;
    VcxTir *tir;

    if (s->hca_state != VCX_HCA_INITIALIZED || vcx_fw_dead(s)) {
        vcx_rx_drop(s, "function not initialized", len);
        return;
    }
    if (!vcx_port_oper_up(s)) {
        vcx_rx_drop(s, "port down", len);       /* no carrier: nothing is received */
        return;
    }
    if (fr->roce_lb) {
        /* never crossed the MAC: no vport MTU; RoCE for a QP of the port or nothing */
        vcx_rx_parse(f, len, &h);
        if (!vcx_rx_is_roce(s, f, &h)) {
            vcx_rx_drop(s, "looped RoCE frame for no QP of the port", len);
            return;
        }
        vcx_rx_roce(s, f, len, fr->roce_sealed);
        return;
    }
    if (len < 14 || len > (uint32_t)s->port.vport_mtu + 18) {
        n->st.rx_err_pkts++;
        n->st.rx_err_bytes += len;
        vcx_rx_drop(s, len < 14 ? "runt frame" : "longer than the vport MTU", len);
        return;
    }
    vcx_rx_parse(f, len, &h);
    if (vcx_rx_is_roce(s, f, &h)) {
        vcx_rx_roce(s, f, len, true);
        return;
    }
    if (!vcx_rx_vport_accepts(s, f)) {
        vcx_rx_drop(s, "not for this vport", len);
        return;
    }
    vcx_nic_count_rx(s, f, len);
    vcx_ft_match_set(f, len, set);
    tirn = vcx_ft_steer(s, set, &flow_tag);
    tir = vcx_tir_get(s, tirn);
    if (!tir) {
        vcx_rx_drop(s, "steering dropped it", len);
        return;
    }
    if (fr->tdn && fr->tdn == tir->tdn &&
        (tir->self_lb_block & ((f[0] & 1) ? VCX_TIRC_SELF_LB_BLOCK_MULTICAST :
                                            VCX_TIRC_SELF_LB_BLOCK_UNICAST))) {
        vcx_rx_drop(s, "self loopback blocked by the TIR", len);
        return;
    }
    if (tir->disp_type == VCX_TIRC_DISP_TYPE_DIRECT) {
        rqn = tir->inline_rqn;
    } else {
        VcxRqt *rqt = vcx_rqt_get(s, tir->rqtn);
        uint32_t i = 0;

        if (!rqt || !rqt->size) {
            vcx_rx_drop(s, "TIR without an RQT", len);
            return;
        }
        if (tir->hash_fn != VCX_RX_HASH_FN_NONE) {
            i = vcx_rx_rss(tir, f, &h, &hash, &htype) % rqt->size;
        }
        rqn = rqt->rqn[i];
    }
    if (!vcx_rq_get(s, rqn)) {
        vcx_rx_drop(s, "RQ gone", len);
        return;
    }
    vcx_rx_deliver(s, vcx_rq_get(s, rqn), f, len, &h, flow_tag, hash, htype);
}

/* An RQ in ERR: every WQE posted completes with WR_FLUSH_ERR, within the budget. */
bool vcx_nic_rq_flush(VcxState *s, VcxNicWq *rq, VcxBudget *b)
{
    uint32_t posted;
    uint16_t left;

    if (rq->state != VCX_RQC_STATE_ERR || !rq->flushing) {
        return false;
    }
    if (vcx_dbr_read(s, rq->dbr_addr + VCX_NIC_RQ_DBR_RECV, &posted) != MEMTX_OK) {
        trace_vcx_err_nic_rq(rq->num, "doorbell record not readable: no flush");
        rq->flushing = false;
        return false;
    }
    left = MIN((uint16_t)((uint16_t)posted - rq->ci), 1u << rq->log_wq_sz);
    while (left--) {
        if (!b->wqes) {
            return true;
        }
        b->wqes--;
        vcx_rx_cqe_err(s, rq, VCX_CQE_SYND_WR_FLUSH_ERR, rq->ci);
        rq->ci++;
    }
    rq->flushing = false;
    return false;
}

/*
 * The receive queue of frames
 */

static bool vcx_rxq_room(VcxNic *n, size_t size)
{
    return n->rxq_frames < VCX_NIC_RXQ_FRAMES && n->rxq_bytes + size <= VCX_NIC_RXQ_BYTES;
}

static void vcx_rxq_push(VcxState *s, const uint8_t *buf, uint32_t len, uint32_t tdn,
                         bool roce_lb, bool roce_sealed)
{
    VcxNic *n = vcx_nic(s);
    VcxFrame *fr = g_malloc(sizeof(*fr) + len);

    fr->tdn = tdn;
    fr->roce_lb = roce_lb;
    fr->roce_sealed = roce_sealed;
    fr->len = len;
    memcpy(fr->data, buf, len);
    QSIMPLEQ_INSERT_TAIL(&n->rxq, fr, link);
    n->rxq_frames++;
    n->rxq_bytes += len;
    if (!s->objs->in_run) {
        /* inside a run the run's end does it: no wake-up of the main loop per frame */
        qemu_bh_schedule(s->objs->bh);
    }
}

/*
 * The net layer queues frames for us while this says no (the backend stops reading): the
 * executor flushes that queue once it has made room (vcx_nic_rx_run), which restarts it.
 */
bool vcx_nic_can_receive(VcxState *s)
{
    VcxNic *n = vcx_nic(s);

    if (vcx_rxq_room(n, VCX_NIC_MAX_FRAME)) {
        return true;
    }
    n->rx_blocked = true;
    return false;
}

/* The netdev's receive callback: copy only; the executor does the rest. */
ssize_t vcx_nic_receive(VcxState *s, const uint8_t *buf, size_t size)
{
    VcxNic *n = vcx_nic(s);

    if (vcx_fw_dead(s)) {
        /* dead firmware runs no executor to drain the queue: drop rather than hold */
        vcx_pcnt_rx(s, buf, size, size < 14 ? VCX_PCNT_RX_RUNT :
                                  size > VCX_NIC_MAX_FRAME + 4 ? VCX_PCNT_RX_TOO_LONG :
                                  VCX_PCNT_RX_DISCARD);
        n->st.nic_rx_drop++;
        trace_vcx_nic_rx_drop(size, "firmware dead");
        return size;
    }
    if (size > VCX_NIC_MAX_FRAME + 4 || size < 14) {
        vcx_pcnt_rx(s, buf, size, size < 14 ? VCX_PCNT_RX_RUNT : VCX_PCNT_RX_TOO_LONG);
        n->st.rx_err_pkts++;
        n->st.rx_err_bytes += size;
        n->st.nic_rx_drop++;
        trace_vcx_nic_rx_drop(size, size < 14 ? "runt frame" : "longer than any MTU");
        return size;
    }
    if (!vcx_rxq_room(n, size)) {
        n->rx_blocked = true;
        return 0;               /* not received yet: the net layer holds it */
    }
    vcx_pcnt_rx(s, buf, size, VCX_PCNT_RX_OK);
    vcx_rxq_push(s, buf, size, 0, false, true);
    return size;
}

/* A frame the port sends to itself, tagged with the sending transport domain. */
void vcx_nic_loopback(VcxState *s, const uint8_t *frame, uint32_t len, uint32_t tdn)
{
    if (!vcx_rxq_room(vcx_nic(s), len)) {
        vcx_rx_drop(s, "loopback: receive queue full", len);
        return;
    }
    vcx_rxq_push(s, frame, len, tdn, false, true);
}

/*
 * A RoCEv2 frame the port sends to itself or to a group (loopback-frames); sealed false:
 * built without its ICRC (vcx_roce_send).
 */
void vcx_nic_loopback_roce(VcxState *s, const uint8_t *frame, uint32_t len, bool sealed)
{
    VcxNic *n = vcx_nic(s);

    if (n->rxq_frames >= VCX_NIC_RXQ_LB_FRAMES || n->rxq_bytes + len > VCX_NIC_RXQ_LB_BYTES) {
        vcx_rx_drop(s, "RoCE loopback: receive queue full", len);
        return;
    }
    vcx_rxq_push(s, frame, len, 0, true, sealed);
}

void vcx_nic_rxq_drop_all(VcxState *s)
{
    VcxNic *n = vcx_nic(s);
    VcxFrame *fr;

    while ((fr = QSIMPLEQ_FIRST(&n->rxq))) {
        QSIMPLEQ_REMOVE_HEAD(&n->rxq, link);
        g_free(fr);
    }
    n->rxq_frames = 0;
    n->rxq_bytes = 0;
}

bool vcx_nic_rx_run(VcxState *s, VcxBudget *b)
{
    VcxNic *n = vcx_nic(s);
    VcxFrame *fr;

    while (b->wqes && b->bytes && !s->reset_pending && (fr = QSIMPLEQ_FIRST(&n->rxq))) {
        QSIMPLEQ_REMOVE_HEAD(&n->rxq, link);
        n->rxq_frames--;
        n->rxq_bytes -= fr->len;
        b->wqes--;
        b->bytes -= MIN(b->bytes, fr->len);
        vcx_rx_frame(s, fr);
        g_free(fr);
    }
    vcx_roce_rx_end(s);                 /* the ACKs of the frames just taken */
    if (n->rx_blocked && s->nic && vcx_rxq_room(n, VCX_NIC_MAX_FRAME)) {
        n->rx_blocked = false;
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
    }
    return !QSIMPLEQ_EMPTY(&n->rxq);
}
