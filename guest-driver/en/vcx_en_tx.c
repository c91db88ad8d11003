// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: transmit (PRM "Send Queue", "Ethernet Segment"; mlx5e's en_tx.c).
 *
 * An skb becomes one send WQE: a control segment (SEND, or LSO for a GSO packet; a CQE
 * requested), an Ethernet segment (checksum flags; inline headers only for LSO: the
 * capabilities report wqe_inline_mode "not required") and one data segment per DMA
 * mapping (the linear part after any inline headers, then each page fragment), all with
 * the PA mkey as lkey. A WQE never wraps around the end of the
 * ring: the WQEBBs left before the end are filled with NOP WQEs first, as mlx5e does at
 * the edge of its fragmented work queues.
 *
 * Doorbell: the doorbell record (send counter at dbr+4) and then the first 8 bytes of
 * the last control segment to the BlueFlame register, deferred while the stack says
 * more is coming (xmit_more). Completions free every WQE up to the one a CQE names.
 * An error CQE moves the SQ to ERR (the rest are flushed): the queue stops and the
 * channels are reopened from a work item.
 */
#include <linux/dma-mapping.h>
#include <linux/if_vlan.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/tcp.h>

#include "vcx_en.h"

/* ------------------------------------------------------------------------------------
 * The SQ (PRM "Send Queue" objects: CREATE_SQ, MODIFY_SQ, DESTROY_SQ)
 */
static int vcx_en_modify_sq(struct vcx_en_priv *priv, u32 sqn, u8 cur, u8 next)
{
	u8 in[VCX_MODIFY_SQ_IN_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_MODIFY_SQ);
	vcx_set(in, VCX_MODIFY_SQ_IN_SQ_STATE, cur);
	vcx_set(in, VCX_MODIFY_SQ_IN_SQN, sqn);
	vcx_set((in + VCX_MODIFY_SQ_IN_CTX_AT), VCX_SQC_STATE, next);
	return vcx_cmd_exec(priv->vdev, in, sizeof(in), out, sizeof(out));
}

int vcx_en_create_sq(struct vcx_en_priv *priv, struct vcx_en_channel *ch)
{
	struct vcx_en_sq *sq = &ch->sq;
	struct vcx_dev *vdev = priv->vdev;
	struct device *dev = vcx_dev(vdev);
	size_t size = (size_t)VCX_EN_SQ_SIZE * VCX_SEND_WQEBB;
	size_t npages = DIV_ROUND_UP(size, VCX_PAGE_SIZE);
	size_t inlen = VCX_CREATE_SQ_IN_LEN + npages * VCX_PAS_SIZE;
	u8 out[VCX_OBJ_CMD_LEN] = {};
	u8 *in, *sqc;
	int err;

	sq->stats = &priv->tx_stats[ch->ix];
	sq->txq = netdev_get_tx_queue(priv->netdev, ch->ix);
	sq->info = kvcalloc(VCX_EN_SQ_SIZE, sizeof(*sq->info), GFP_KERNEL);
	if (!sq->info)
		return -ENOMEM;
	sq->buf = dma_alloc_coherent(dev, size, &sq->dma, GFP_KERNEL);
	sq->db = dma_alloc_coherent(dev, cache_line_size(), &sq->db_dma, GFP_KERNEL);
	in = kvzalloc(inlen, GFP_KERNEL);
	if (!sq->buf || !sq->db || !in) {
		err = -ENOMEM;
		goto out;
	}
	/* The kernel UAR's BlueFlame registers, spread over the channels as mlx5e's bfregs. */
	sq->bf = vdev->uar + vcx_uar_bf_offset(ch->ix % VCX_UAR_BFREGS_PER_PAGE, 0);
	sq->bf_offset = 0;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_SQ);
	sqc = in + VCX_CREATE_SQ_IN_CTX_AT;
	vcx_set(sqc, VCX_SQC_FLUSH_IN_ERROR_EN, 1);
	vcx_set(sqc, VCX_SQC_STATE, VCX_SQC_STATE_RST);
	vcx_set(sqc, VCX_SQC_CQN, sq->cq.cqn);
	vcx_set(sqc, VCX_SQC_TIS_LST_SZ, 1);
	vcx_set(sqc, VCX_SQC_TIS_NUM_0, priv->tisn);
	vcx_en_fill_wq(sqc + VCX_SQC_WQ_AT, priv->pdn, vdev->uar_index, sq->db_dma,
		       VCX_SEND_WQEBB_SHIFT, VCX_EN_LOG_SQ_SIZE, sq->dma, npages);
	err = vcx_cmd_exec(vdev, in, inlen, out, sizeof(out));
	if (err)
		goto out;
	sq->sqn = vcx_get(out, VCX_CREATE_SQ_OUT_SQN);
	sq->created = true;
	err = vcx_en_modify_sq(priv, sq->sqn, VCX_SQC_STATE_RST, VCX_SQC_STATE_RDY);
out:
	kvfree(in);
	return err;
}

void vcx_en_destroy_sq(struct vcx_en_priv *priv, struct vcx_en_sq *sq)
{
	struct device *dev = vcx_dev(priv->vdev);

	if (sq->created)
		vcx_en_destroy_obj(priv->vdev, VCX_CMD_OP_DESTROY_SQ, sq->sqn);
	sq->created = false;
	if (sq->info)
		vcx_en_sq_free_all(priv, sq);
	if (sq->buf)
		dma_free_coherent(dev, (size_t)VCX_EN_SQ_SIZE * VCX_SEND_WQEBB, sq->buf, sq->dma);
	if (sq->db)
		dma_free_coherent(dev, cache_line_size(), sq->db, sq->db_dma);
	kvfree(sq->info);
	sq->info = NULL;
	sq->buf = NULL;
	sq->db = NULL;
}


/* ------------------------------------------------------------------------------------
 * Transmit
 */
static inline u16 vcx_en_sq_room(struct vcx_en_sq *sq)
{
	return VCX_EN_SQ_SIZE - (u16)(sq->pc - READ_ONCE(sq->cc));
}

static void vcx_en_tx_unmap(struct device *dev, struct vcx_en_tx_info *info)
{
	int i;

	for (i = 0; i < info->num_dma; i++) {
		if (info->dma[i].page)
			dma_unmap_page(dev, info->dma[i].addr, info->dma[i].len, DMA_TO_DEVICE);
		else
			dma_unmap_single(dev, info->dma[i].addr, info->dma[i].len,
					 DMA_TO_DEVICE);
	}
	info->num_dma = 0;
}

static void vcx_en_sq_ring(struct vcx_en_sq *sq, void *ctrl)
{
	/* WQEs before the record, the record before the doorbell. */
	dma_wmb();
	WRITE_ONCE(sq->db[VCX_QP_DBR_SEND / 4], cpu_to_be32(sq->pc & VCX_WQE_INDEX_MASK));
	wmb();
	__raw_writeq(*(u64 *)ctrl, sq->bf + sq->bf_offset);
	sq->bf_offset ^= VCX_UAR_BF_BUF_SIZE;
	sq->db_pending = NULL;
}

/* NOP WQEs of one WQEBB up to the end of the ring; no CQE: the next WQE's frees them. */
static void *vcx_en_sq_pad(struct vcx_en_sq *sq, u16 n)
{
	void *wqe = NULL;

	while (n--) {
		u16 pi = sq->pc & (VCX_EN_SQ_SIZE - 1);
		struct vcx_en_tx_info *info = &sq->info[pi];

		wqe = sq->buf + (size_t)pi * VCX_SEND_WQEBB;
		memset(wqe, 0, VCX_WQE_CTRL_SIZE);
		vcx_wqe_ctrl_set(wqe, VCX_OPCODE_NOP, 0, sq->pc, sq->sqn, 1, 0, 0);
		info->skb = NULL;
		info->num_wqebbs = 1;
		info->num_dma = 0;
		info->bytes = 0;
		sq->pc++;
	}
	return wqe;
}

/*
 * What the device's LSO parses (vcx_en_xmit): Ethernet with at most one 802.1Q tag, then
 * IPv4, or IPv6 with TCP as the next header. GSO packets of any other shape are segmented
 * by the stack.
 */
static bool vcx_en_lso_parsable(struct sk_buff *skb)
{
	int l2 = skb_network_offset(skb);

	if (skb_vlan_tag_present(skb)) {
		if (l2 != ETH_HLEN)
			return false;	/* the tag goes in after the MACs (vcx_en_xmit) */
	} else if (l2 != ETH_HLEN &&
		   !(l2 == VLAN_ETH_HLEN && eth_hdr(skb)->h_proto == htons(ETH_P_8021Q))) {
		return false;
	}
	if (skb_shinfo(skb)->gso_type & SKB_GSO_TCPV6)
		return skb_network_header_len(skb) == sizeof(struct ipv6hdr) &&
		       ipv6_hdr(skb)->nexthdr == IPPROTO_TCP;
	return skb_shinfo(skb)->gso_type & SKB_GSO_TCPV4;
}

netdev_features_t vcx_en_features_check(struct sk_buff *skb, struct net_device *ndev,
					netdev_features_t features)
{
	features = vlan_features_check(skb, features);
	if (skb_is_gso(skb) && !vcx_en_lso_parsable(skb))
		features &= ~NETIF_F_GSO_MASK;
	return features;
}

netdev_tx_t vcx_en_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);
	struct device *dev = vcx_dev(priv->vdev);
	u16 qid = skb_get_queue_mapping(skb);
	struct vcx_en_tx_info *info;
	struct vcx_en_channel *ch;
	struct vcx_en_sq *sq;
	u8 *wqe, *eseg, *dseg, hdr[VCX_EN_TX_MAX_INLINE];
	u16 pi, nwqebbs, contig, segs = 1, mss = 0;
	unsigned int i, ds, nfrags, ihs = 0, inl = 0, num_bytes;
	u8 cs_flags = 0, opcode = VCX_OPCODE_SEND;
	bool ring;

	if (unlikely(qid >= priv->open_channels)) {
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	ch = &priv->channels[qid];
	sq = &ch->sq;
	/*
	 * LSO (PRM "Ethernet Segment": mss, inline headers): the L2 to TCP headers go inline
	 * in the Ethernet segment, the device repeats them before every mss bytes of payload
	 * and fixes their lengths, IDs, sequence numbers and checksums, as mlx5e's LSO WQEs.
	 */
	if (skb_is_gso(skb)) {
		ihs = skb_tcp_all_headers(skb);
		if (unlikely(ihs + (skb_vlan_tag_present(skb) ? VLAN_HLEN : 0) >
			     VCX_EN_TX_MAX_INLINE || !pskb_may_pull(skb, ihs))) {
			netdev_warn_once(ndev, "GSO packet with %u bytes of headers: dropped\n", ihs);
			goto err_free;
		}
		opcode = VCX_OPCODE_LSO;
		mss = skb_shinfo(skb)->gso_size;
		segs = skb_shinfo(skb)->gso_segs;
		/* The inline headers, with a VLAN tag from the skb after the MACs: an LSO WQE
		 * cannot also ask for insertion (the fields share the Ethernet segment). */
		inl = ihs;
		if (skb_vlan_tag_present(skb)) {
			__be16 tag[2] = { skb->vlan_proto, htons(skb_vlan_tag_get(skb)) };

			memcpy(hdr, skb->data, 2 * ETH_ALEN);
			memcpy(hdr + 2 * ETH_ALEN, tag, VLAN_HLEN);
			memcpy(hdr + 2 * ETH_ALEN + VLAN_HLEN, skb->data + 2 * ETH_ALEN,
			       ihs - 2 * ETH_ALEN);
			inl += VLAN_HLEN;
			sq->stats->vlan++;
		} else {
			memcpy(hdr, skb->data, ihs);
		}
	}
	nfrags = skb_shinfo(skb)->nr_frags;
	ds = 2 + (skb_headlen(skb) > ihs ? 1 : 0) + nfrags;
	if (inl > 2)
		ds += DIV_ROUND_UP(inl - 2, VCX_WQE_DS);
	nwqebbs = DIV_ROUND_UP(ds * VCX_WQE_DS, VCX_SEND_WQEBB);

	pi = sq->pc & (VCX_EN_SQ_SIZE - 1);
	contig = VCX_EN_SQ_SIZE - pi;
	if (unlikely(contig < nwqebbs)) {
		vcx_en_sq_pad(sq, contig);
		pi = 0;
	}
	wqe = sq->buf + (size_t)pi * VCX_SEND_WQEBB;
	info = &sq->info[pi];
	info->num_dma = 0;

	/* Ethernet segment: checksum offload of the IP header and of TCP/UDP. */
	eseg = wqe + VCX_WQE_CTRL_SIZE;
	memset(eseg, 0, VCX_ETH_SEG_SIZE);
	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		cs_flags = VCX_ETH_CS_L3 | VCX_ETH_CS_L4;
		sq->stats->csum_partial++;
	} else {
		sq->stats->csum_none++;
	}
	vcx_set(eseg, VCX_ETH_SEG_CS_FLAGS, cs_flags);
	dseg = eseg + VCX_ETH_SEG_SIZE;
	if (inl) {
		/* the first 2 header bytes in the segment, the rest in the 16-byte units after */
		vcx_set(eseg, VCX_ETH_SEG_MSS, mss);
		vcx_set(eseg, VCX_ETH_SEG_INLINE_HDR_SZ, inl);
		memcpy(eseg + VCX_ETH_SEG_INLINE_HDR_AT, hdr, 2);
		memcpy(dseg, hdr + 2, inl - 2);
		dseg += ALIGN(inl - 2, VCX_WQE_DS);
	} else if (skb_vlan_tag_present(skb)) {
		/* the device puts the tag after the MACs (wqe_vlan_insert, HW_VLAN_*_TX) */
		vcx_set(eseg, VCX_ETH_SEG_INSERT_TYPE, VCX_ETH_INSERT_VLAN |
			(skb->vlan_proto == htons(ETH_P_8021AD) ? VCX_ETH_INSERT_SVLAN : 0));
		vcx_set(eseg, VCX_ETH_SEG_INSERT_VLAN_TCI, skb_vlan_tag_get(skb));
		sq->stats->vlan++;
	}

	if (skb_headlen(skb) > ihs) {
		u32 len = skb_headlen(skb) - ihs;
		dma_addr_t addr = dma_map_single(dev, skb->data + ihs, len, DMA_TO_DEVICE);

		if (unlikely(dma_mapping_error(dev, addr)))
			goto err_drop;
		info->dma[info->num_dma++] = (struct vcx_en_tx_dma){ addr, len, false };
		vcx_wqe_data_seg_set(dseg, len, priv->mkey, addr);
		dseg += VCX_WQE_DATA_SEG_SIZE;
	}
	for (i = 0; i < nfrags; i++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];
		u32 len = skb_frag_size(frag);
		dma_addr_t addr = skb_frag_dma_map(dev, frag, 0, len, DMA_TO_DEVICE);

		if (unlikely(dma_mapping_error(dev, addr)))
			goto err_drop;
		info->dma[info->num_dma++] = (struct vcx_en_tx_dma){ addr, len, true };
		vcx_wqe_data_seg_set(dseg, len, priv->mkey, addr);
		dseg += VCX_WQE_DATA_SEG_SIZE;
	}

	vcx_wqe_ctrl_set(wqe, opcode, 0, sq->pc, sq->sqn, ds, VCX_WQE_CE_CQE, 0);
	/* What goes on the wire: every segment carries the headers (mlx5e's num_bytes). */
	num_bytes = skb->len + (segs - 1) * ihs;
	info->skb = skb;
	info->num_wqebbs = nwqebbs;
	info->bytes = num_bytes;
	sq->pc += nwqebbs;

	u64_stats_update_begin(&sq->stats->syncp);
	sq->stats->packets += segs;
	sq->stats->bytes += num_bytes;
	if (ihs) {
		sq->stats->tso_packets++;
		sq->stats->tso_bytes += skb->len - ihs;
	}
	u64_stats_update_end(&sq->stats->syncp);
	if (unlikely(skb_shinfo(skb)->tx_flags & SKBTX_HW_TSTAMP) &&
	    READ_ONCE(priv->tx_tstamp) == HWTSTAMP_TX_ON)
		skb_shinfo(skb)->tx_flags |= SKBTX_IN_PROGRESS;
	skb_tx_timestamp(skb);

	ring = __netdev_tx_sent_queue(sq->txq, num_bytes, netdev_xmit_more());
	if (unlikely(vcx_en_sq_room(sq) < VCX_EN_SQ_STOP_ROOM)) {
		netif_tx_stop_queue(sq->txq);
		sq->stats->stopped++;
		/* Completions may have freed room meanwhile (see vcx_en_poll_tx). */
		smp_mb();
		if (vcx_en_sq_room(sq) >= VCX_EN_SQ_STOP_ROOM && !READ_ONCE(sq->error))
			netif_tx_start_queue(sq->txq);
		ring = true;
	}
	if (ring)
		vcx_en_sq_ring(sq, wqe);
	else
		sq->db_pending = wqe;
	return NETDEV_TX_OK;

err_drop:
	vcx_en_tx_unmap(dev, info);
err_free:
	sq->stats->dropped++;
	dev_kfree_skb_any(skb);
	/* WQEs deferred by xmit_more before this one are rung now if nothing follows; NOP
	 * pads posted above need no doorbell of their own (the next WQE's covers them). */
	if (!netdev_xmit_more() && sq->db_pending)
		vcx_en_sq_ring(sq, sq->db_pending);
	return NETDEV_TX_OK;
}

static const char *vcx_en_cqe_synd_str(u8 synd)
{
	switch (synd) {
	case VCX_CQE_SYND_LOCAL_LENGTH_ERR:	return "local length error";
	case VCX_CQE_SYND_LOCAL_QP_OP_ERR:	return "local QP operation error";
	case VCX_CQE_SYND_LOCAL_PROT_ERR:	return "local protection error";
	case VCX_CQE_SYND_WR_FLUSH_ERR:		return "flushed";
	default:				return "error";
	}
}

/* Completions of the channel's SQ; true when the budget ran out with CQEs left. */
bool vcx_en_poll_tx(struct vcx_en_channel *ch, int budget)
{
	struct vcx_en_priv *priv = ch->priv;
	struct device *dev = vcx_dev(priv->vdev);
	struct vcx_en_sq *sq = &ch->sq;
	struct vcx_en_cq *cq = &sq->cq;
	unsigned int pkts = 0, bytes = 0;
	int n = 0;
	u8 *cqe;

	while (n < budget && (cqe = vcx_en_cq_next(cq))) {
		u8 opcode = vcx_cqe_opcode(cqe);
		u16 last = vcx_get(cqe, VCX_CQE_WQE_COUNTER) & (VCX_EN_SQ_SIZE - 1);
		bool done = false;

		cq->cons_index++;
		n++;
		if (unlikely(opcode == VCX_CQE_REQ_ERR)) {
			u8 synd = vcx_get(cqe, VCX_CQE_SYNDROME);

			if (synd != VCX_CQE_SYND_WR_FLUSH_ERR && net_ratelimit())
				netdev_err(priv->netdev, "SQ 0x%x: error CQE, syndrome 0x%x (%s), WQE %u\n",
					   sq->sqn, synd, vcx_en_cqe_synd_str(synd), last);
			if (!sq->error) {
				WRITE_ONCE(sq->error, true);
				netif_tx_stop_queue(sq->txq);
				queue_work(system_long_wq, &priv->reset_work);
			}
		}
		while (!done && sq->cc != sq->pc) {
			u16 ci = sq->cc & (VCX_EN_SQ_SIZE - 1);
			struct vcx_en_tx_info *info = &sq->info[ci];

			done = ci == last;
			if (info->skb) {
				vcx_en_tx_unmap(dev, info);
				pkts++;
				bytes += info->bytes;
				if (unlikely(opcode == VCX_CQE_REQ_ERR && done))
					sq->stats->dropped++;
				else if (done)	/* the CQE names this packet's WQE */
					vcx_en_tx_tstamp(priv, cqe, info->skb);
				napi_consume_skb(info->skb, budget);
				info->skb = NULL;
			}
			WRITE_ONCE(sq->cc, sq->cc + max_t(u16, info->num_wqebbs, 1));
		}
	}
	if (!n)
		return false;
	WRITE_ONCE(cq->db[VCX_CQ_DBR_SET_CI / 4], cpu_to_be32(cq->cons_index & VCX_CQ_CI_MASK));
	netdev_tx_completed_queue(sq->txq, pkts, bytes);
	/* Pairs with the barrier in vcx_en_xmit after it stopped the queue. */
	smp_mb();
	if (netif_tx_queue_stopped(sq->txq) && !sq->error &&
	    vcx_en_sq_room(sq) >= VCX_EN_SQ_STOP_ROOM) {
		netif_tx_wake_queue(sq->txq);
		sq->stats->wake++;
	}
	return n == budget;
}

/* After DESTROY_SQ: the skbs of WQEs that never completed. */
void vcx_en_sq_free_all(struct vcx_en_priv *priv, struct vcx_en_sq *sq)
{
	struct device *dev = vcx_dev(priv->vdev);

	while (sq->cc != sq->pc) {
		struct vcx_en_tx_info *info = &sq->info[sq->cc & (VCX_EN_SQ_SIZE - 1)];

		if (info->skb) {
			vcx_en_tx_unmap(dev, info);
			dev_kfree_skb_any(info->skb);
			info->skb = NULL;
			sq->stats->dropped++;
		}
		sq->cc += max_t(u16, info->num_wqebbs, 1);
	}
}
