// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: receive (PRM "Receive Queue", "Completion Queue Entry"; mlx5e's en_rx.c for a
 * cyclic RQ without striding).
 *
 * Each RQ WQE is a scatter list of whole pages, as many as a frame of MTU + 22 bytes
 * needs; the stride is rounded up to a power of two and unused entries end the list
 * with the invalid lkey, as mlx5e's cyclic RQ does. The device completes WQEs in order;
 * the CQE gives the WQE's index (wqe_counter), the byte count, the L3/L4 header types,
 * the checksum verdict and the RSS hash.
 *
 * A frame of up to VCX_EN_RX_COPYBREAK bytes is copied into a fresh skb and its page
 * stays in the ring; a larger one gets its headers copied into the skb's linear part
 * and its pages attached as fragments, and the WQE gets new pages when it is posted
 * again. The receive counter in the doorbell record (dbr+0) is the number of WQEs
 * posted; refill happens at the end of each NAPI poll.
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>

#include "vcx_en.h"

/* log2 of the WQE stride for an MTU, and the pages each WQE holds. */
u32 vcx_en_rq_log_stride(int mtu, u32 *nsegs)
{
	u32 n = DIV_ROUND_UP(mtu + VCX_EN_HW_MTU_EXTRA, PAGE_SIZE);

	n = clamp_t(u32, n, 1, VCX_EN_RX_MAX_SEGS);
	*nsegs = n;
	return ilog2(roundup_pow_of_two(n) * VCX_WQE_DATA_SEG_SIZE);
}

static int vcx_en_rx_post_one(struct vcx_en_priv *priv, struct vcx_en_rq *rq, u16 ix,
			      gfp_t gfp)
{
	struct device *dev = vcx_dev(priv->vdev);
	struct vcx_en_rx_buf *buf = &rq->bufs[ix];
	u8 *wqe = rq->buf + ((size_t)ix << rq->log_stride);
	u32 slots = BIT(rq->log_stride) / VCX_WQE_DATA_SEG_SIZE;
	u32 s;

	for (s = 0; s < rq->nsegs; s++) {
		if (!buf->page[s]) {
			struct page *page = alloc_page(gfp | __GFP_NOWARN);
			dma_addr_t dma;

			if (!page)
				return -ENOMEM;
			dma = dma_map_page(dev, page, 0, PAGE_SIZE, DMA_FROM_DEVICE);
			if (dma_mapping_error(dev, dma)) {
				__free_page(page);
				return -ENOMEM;
			}
			buf->page[s] = page;
			buf->dma[s] = dma;
		}
		vcx_wqe_data_seg_set(wqe + s * VCX_WQE_DATA_SEG_SIZE, PAGE_SIZE, priv->mkey,
				     buf->dma[s]);
	}
	for (; s < slots; s++)
		vcx_wqe_data_seg_set_end(wqe + s * VCX_WQE_DATA_SEG_SIZE);
	return 0;
}

/* Post WQEs until the ring is full or pages run out; then the receive counter. */
int vcx_en_rq_fill(struct vcx_en_priv *priv, struct vcx_en_rq *rq, gfp_t gfp)
{
	u16 posted = 0;
	int err = 0;

	while ((u16)(rq->pc - rq->cc) < VCX_EN_RQ_SIZE) {
		err = vcx_en_rx_post_one(priv, rq, rq->pc & (VCX_EN_RQ_SIZE - 1), gfp);
		if (err) {
			rq->stats->alloc_fail++;
			break;
		}
		rq->pc++;
		posted++;
	}
	if (posted) {
		/* The WQEs before the counter that hands them over. */
		dma_wmb();
		WRITE_ONCE(rq->db[VCX_QP_DBR_RECV / 4], cpu_to_be32(rq->pc & VCX_WQE_INDEX_MASK));
	}
	/* Only an empty ring is an error: a partly filled one is refilled at the next poll. */
	return rq->pc == rq->cc ? err : 0;
}

/* After DESTROY_RQ: every page the ring still holds. */
void vcx_en_rq_free_all(struct vcx_en_priv *priv, struct vcx_en_rq *rq)
{
	struct device *dev = vcx_dev(priv->vdev);
	u32 i, s;

	for (i = 0; i < VCX_EN_RQ_SIZE; i++) {
		for (s = 0; s < VCX_EN_RX_MAX_SEGS; s++) {
			if (!rq->bufs[i].page[s])
				continue;
			dma_unmap_page(dev, rq->bufs[i].dma[s], PAGE_SIZE, DMA_FROM_DEVICE);
			__free_page(rq->bufs[i].page[s]);
			rq->bufs[i].page[s] = NULL;
		}
	}
}

static struct sk_buff *vcx_en_rx_skb(struct vcx_en_channel *ch, struct vcx_en_rq *rq,
				     struct vcx_en_rx_buf *buf, u32 len)
{
	struct net_device *ndev = ch->priv->netdev;
	struct device *dev = vcx_dev(ch->priv->vdev);
	u32 first = min_t(u32, len, PAGE_SIZE);
	u32 headlen, off, s, left;
	struct sk_buff *skb;
	void *va;

	dma_sync_single_for_cpu(dev, buf->dma[0], first, DMA_FROM_DEVICE);
	va = page_address(buf->page[0]);
	if (len <= VCX_EN_RX_COPYBREAK) {
		skb = napi_alloc_skb(&ch->napi, len);
		if (skb)
			skb_put_data(skb, va, len);
		dma_sync_single_for_device(dev, buf->dma[0], first, DMA_FROM_DEVICE);
		return skb;
	}
	skb = napi_alloc_skb(&ch->napi, VCX_EN_RX_COPYBREAK);
	if (!skb) {
		dma_sync_single_for_device(dev, buf->dma[0], first, DMA_FROM_DEVICE);
		return NULL;
	}
	headlen = eth_get_headlen(ndev, va, min_t(u32, first, VCX_EN_RX_COPYBREAK));
	skb_put_data(skb, va, headlen);
	/* The rest of the frame: its pages become the skb's fragments. */
	left = len - headlen;
	off = headlen;
	for (s = 0; s < rq->nsegs && left; s++) {
		u32 seglen = min_t(u32, PAGE_SIZE - off, left);

		if (!seglen) {
			dma_sync_single_for_device(dev, buf->dma[s], PAGE_SIZE, DMA_FROM_DEVICE);
			off = 0;
			continue;
		}
		dma_unmap_page(dev, buf->dma[s], PAGE_SIZE, DMA_FROM_DEVICE);
		skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, buf->page[s], off, seglen,
				PAGE_SIZE);
		buf->page[s] = NULL;
		left -= seglen;
		off = 0;
	}
	return skb;
}

/* Checksum verdict and RSS hash of the CQE (mlx5e_handle_csum, mlx5e_skb_set_hash). */
static void vcx_en_rx_offloads(struct vcx_en_rq *rq, struct net_device *ndev,
			       const u8 *cqe, struct sk_buff *skb)
{
	u8 l4 = vcx_get(cqe, VCX_CQE_L4_HDR_TYPE);
	u8 l3 = vcx_get(cqe, VCX_CQE_L3_HDR_TYPE);
	u8 ok = vcx_get(cqe, VCX_CQE_HDS_IP_EXT);
	bool l4_known = l4 == VCX_CQE_L4_HDR_TCP || l4 == VCX_CQE_L4_HDR_UDP ||
			l4 == VCX_CQE_L4_HDR_TCP_ACK_NO_DATA ||
			l4 == VCX_CQE_L4_HDR_TCP_ACK_AND_DATA;

	if ((ndev->features & NETIF_F_RXCSUM) && l4_known &&
	    (ok & VCX_CQE_L3_OK) && (ok & VCX_CQE_L4_OK)) {
		skb->ip_summed = CHECKSUM_UNNECESSARY;
		rq->stats->csum_partial++;
	} else {
		skb_checksum_none_assert(skb);
		rq->stats->csum_none++;
	}
	if (ndev->features & NETIF_F_RXHASH) {
		u32 hash = vcx_get(cqe, VCX_CQE_RSS_HASH_RESULT);

		if (vcx_get(cqe, VCX_CQE_RSS_HASH_TYPE))
			skb_set_hash(skb, hash, l4_known ? PKT_HASH_TYPE_L4 :
				     l3 ? PKT_HASH_TYPE_L3 : PKT_HASH_TYPE_NONE);
	}
}

int vcx_en_poll_rx(struct vcx_en_channel *ch, int budget)
{
	struct vcx_en_priv *priv = ch->priv;
	struct net_device *ndev = priv->netdev;
	struct vcx_en_rq *rq = &ch->rq;
	struct vcx_en_cq *cq = &rq->cq;
	u64 pkts = 0, bytes = 0;
	int work = 0;
	u8 *cqe;

	while (work < budget && (cqe = vcx_en_cq_next(cq))) {
		u8 opcode = vcx_cqe_opcode(cqe);
		u16 ix = vcx_get(cqe, VCX_CQE_WQE_COUNTER) & (VCX_EN_RQ_SIZE - 1);
		u32 len = vcx_get(cqe, VCX_CQE_BYTE_CNT);
		struct sk_buff *skb;

		cq->cons_index++;
		work++;
		/* WQEs complete in order: this one and any before it are consumed. */
		rq->cc += (u16)(ix - (rq->cc & (VCX_EN_RQ_SIZE - 1))) & (VCX_EN_RQ_SIZE - 1);
		rq->cc++;
		if (unlikely(opcode != VCX_CQE_RESP_SEND)) {
			u8 synd = opcode == VCX_CQE_RESP_ERR ? vcx_get(cqe, VCX_CQE_SYNDROME) : 0;

			if (synd != VCX_CQE_SYND_WR_FLUSH_ERR)
				netdev_dbg(ndev, "RQ 0x%x: CQE opcode 0x%x, syndrome 0x%x\n",
					   rq->rqn, opcode, synd);
			rq->stats->dropped++;
			continue;
		}
		if (unlikely(len > rq->nsegs * PAGE_SIZE)) {
			rq->stats->dropped++;
			continue;
		}
		skb = vcx_en_rx_skb(ch, rq, &rq->bufs[ix], len);
		if (unlikely(!skb)) {
			rq->stats->dropped++;
			continue;
		}
		vcx_en_rx_offloads(rq, ndev, cqe, skb);
		vcx_en_rx_tstamp(ch->priv, cqe, skb);
		if (vcx_get(cqe, VCX_CQE_VLAN_PRESENT)) {	/* the tag the RQ stripped */
			__vlan_hwaccel_put_tag(skb, htons(ETH_P_8021Q),
					       vcx_get(cqe, VCX_CQE_VLAN_INFO));
			rq->stats->vlan++;
		}
		skb_record_rx_queue(skb, ch->ix);
		skb->protocol = eth_type_trans(skb, ndev);
		pkts++;
		bytes += len;
		napi_gro_receive(&ch->napi, skb);
	}
	if (work) {
		WRITE_ONCE(cq->db[VCX_CQ_DBR_SET_CI / 4],
			   cpu_to_be32(cq->cons_index & VCX_CQ_CI_MASK));
		u64_stats_update_begin(&rq->stats->syncp);
		rq->stats->packets += pkts;
		rq->stats->bytes += bytes;
		u64_stats_update_end(&rq->stats->syncp);
	}
	vcx_en_rq_fill(priv, rq, GFP_ATOMIC);
	/* Out of pages with an empty ring: poll again rather than wait for a frame. */
	if (rq->pc == rq->cc)
		return budget;
	return work;
}

/* ------------------------------------------------------------------------------------
 * The RQ (CREATE_RQ, MODIFY_RQ, DESTROY_RQ)
 */
/* A state change; with vsd >= 0 also VLAN stripping off (1) or on (0). */
static int vcx_en_modify_rq(struct vcx_en_priv *priv, u32 rqn, u8 cur, u8 next, int vsd)
{
	u8 in[VCX_MODIFY_RQ_IN_LEN] = {};
	u8 out[VCX_OBJ_CMD_LEN] = {};
	u8 *rqc = in + VCX_MODIFY_RQ_IN_CTX_AT;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_MODIFY_RQ);
	vcx_set(in, VCX_MODIFY_RQ_IN_RQ_STATE, cur);
	vcx_set(in, VCX_MODIFY_RQ_IN_RQN, rqn);
	vcx_set(rqc, VCX_RQC_STATE, next);
	if (vsd >= 0) {
		vcx_set64(in, VCX_MODIFY_RQ_IN_MODIFY_BITMASK, VCX_MODIFY_RQ_BITMASK_VSD);
		vcx_set(rqc, VCX_RQC_VSD, vsd);
	}
	return vcx_cmd_exec(priv->vdev, in, sizeof(in), out, sizeof(out));
}

/* rxvlan on or off for a ready RQ (mlx5e's set_feature_rx_vlan). */
int vcx_en_rq_set_vlan_strip(struct vcx_en_priv *priv, struct vcx_en_rq *rq, bool strip)
{
	return vcx_en_modify_rq(priv, rq->rqn, VCX_RQC_STATE_RDY, VCX_RQC_STATE_RDY, !strip);
}

int vcx_en_create_rq(struct vcx_en_priv *priv, struct vcx_en_channel *ch)
{
	struct vcx_en_rq *rq = &ch->rq;
	struct vcx_dev *vdev = priv->vdev;
	struct device *dev = vcx_dev(vdev);
	u8 out[VCX_OBJ_CMD_LEN] = {};
	size_t npages, inlen;
	u8 *in, *rqc;
	int err;

	rq->stats = &priv->rx_stats[ch->ix];
	rq->log_stride = vcx_en_rq_log_stride(priv->netdev->mtu, &rq->nsegs);
	rq->size = max_t(size_t, (size_t)VCX_EN_RQ_SIZE << rq->log_stride, VCX_PAGE_SIZE);
	npages = DIV_ROUND_UP(rq->size, VCX_PAGE_SIZE);
	inlen = VCX_CREATE_RQ_IN_LEN + npages * VCX_PAS_SIZE;
	rq->bufs = kvcalloc(VCX_EN_RQ_SIZE, sizeof(*rq->bufs), GFP_KERNEL);
	if (!rq->bufs)
		return -ENOMEM;
	rq->buf = dma_alloc_coherent(dev, rq->size, &rq->dma, GFP_KERNEL);
	rq->db = dma_alloc_coherent(dev, cache_line_size(), &rq->db_dma, GFP_KERNEL);
	in = kvzalloc(inlen, GFP_KERNEL);
	if (!rq->buf || !rq->db || !in) {
		err = -ENOMEM;
		goto out;
	}
	rq->db[0] = 0;

	vcx_set(in, VCX_CMD_IN_OPCODE, VCX_CMD_OP_CREATE_RQ);
	rqc = in + VCX_CREATE_RQ_IN_CTX_AT;
	/* VLAN stripping as the rxvlan feature says (offered only with vlan_cap) */
	vcx_set(rqc, VCX_RQC_VSD, !(priv->netdev->features & NETIF_F_HW_VLAN_CTAG_RX));
	vcx_set(rqc, VCX_RQC_MEM_RQ_TYPE, VCX_RQC_MEM_RQ_TYPE_INLINE);
	vcx_set(rqc, VCX_RQC_STATE, VCX_RQC_STATE_RST);
	vcx_set(rqc, VCX_RQC_FLUSH_IN_ERROR_EN, 1);
	vcx_set(rqc, VCX_RQC_CQN, rq->cq.cqn);
	vcx_set(rqc, VCX_RQC_COUNTER_SET_ID, priv->q_counter);
	vcx_en_fill_wq(rqc + VCX_RQC_WQ_AT, priv->pdn, vdev->uar_index, rq->db_dma,
		       rq->log_stride, VCX_EN_LOG_RQ_SIZE, rq->dma, npages);
	err = vcx_cmd_exec(vdev, in, inlen, out, sizeof(out));
	if (err)
		goto out;
	rq->rqn = vcx_get(out, VCX_CREATE_RQ_OUT_RQN);
	rq->created = true;
	/* Post the ring before RDY: a frame arriving then finds its WQEs. */
	err = vcx_en_rq_fill(priv, rq, GFP_KERNEL);
	if (err)
		goto out;
	err = vcx_en_modify_rq(priv, rq->rqn, VCX_RQC_STATE_RST, VCX_RQC_STATE_RDY, -1);
out:
	kvfree(in);
	return err;
}

void vcx_en_destroy_rq(struct vcx_en_priv *priv, struct vcx_en_rq *rq)
{
	struct device *dev = vcx_dev(priv->vdev);

	if (rq->created)
		vcx_en_destroy_obj(priv->vdev, VCX_CMD_OP_DESTROY_RQ, rq->rqn);
	rq->created = false;
	if (rq->bufs)
		vcx_en_rq_free_all(priv, rq);
	if (rq->buf)
		dma_free_coherent(dev, rq->size, rq->buf, rq->dma);
	if (rq->db)
		dma_free_coherent(dev, cache_line_size(), rq->db, rq->db_dma);
	kvfree(rq->bufs);
	rq->bufs = NULL;
	rq->buf = NULL;
	rq->db = NULL;
}

