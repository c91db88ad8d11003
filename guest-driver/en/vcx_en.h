/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vcx: the port's Ethernet netdev (vcxN), built like mlx5e on the ConnectX NIC objects.
 *
 *   vcx_en_main.c     netdev creation and removal (before the ib_device, after it), the
 *                     address holder, probe-time objects (TD, PD, PA mkey, TIS, Q
 *                     counter), CQs, channels and NAPI, open/stop, MTU, carrier, stats64
 *   vcx_en_tx.c       the SQ object; start_xmit: skb -> send WQE (control, Ethernet,
 *                     data segments), doorbell, TX completions
 *   vcx_en_rx.c       the RQ object; WQEs of page-backed data segments, RX completions
 *   vcx_en_fs.c       RQT and TIRs; steering: flow tables (L2 and TTC), groups, entries,
 *                     the NIC RX root, rx_mode -> L2 entries and the vport's lists/promisc
 *   vcx_en_ethtool.c  ethtool -i, -S, -l/-L, -g
 *
 * The same code drives a ConnectX board: every layout comes from include/vcx/.
 */
#ifndef VCX_EN_H
#define VCX_EN_H

#include <linux/dim.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_vlan.h>
#include <linux/net_tstamp.h>
#include <linux/netdevice.h>
#include <linux/u64_stats_sync.h>
#include <linux/version.h>

#include "vcx.h"
#include "vcx/prm-wqe.h"
#include "vcx/prm-nic.h"

/* Ring sizes (mlx5e's defaults for a 1500-byte MTU): 1024 WQEBBs per SQ, 1024 WQEs per
 * RQ, CQs as large as the queue they complete. */
#define VCX_EN_LOG_SQ_SIZE	10
#define VCX_EN_LOG_RQ_SIZE	10
#define VCX_EN_SQ_SIZE		(1u << VCX_EN_LOG_SQ_SIZE)
#define VCX_EN_RQ_SIZE		(1u << VCX_EN_LOG_RQ_SIZE)

/* The "hardware MTU" PMTU and the vport context count: the L2 header, one VLAN tag and
 * the FCS on top of the IP MTU (mlx5e's MLX5E_SW2HW_MTU). */
#define VCX_EN_HW_MTU_EXTRA	(ETH_HLEN + VLAN_HLEN + ETH_FCS_LEN)

/* RX: the bytes of a frame copied into the skb's linear part; smaller frames are copied
 * whole and their pages stay in the ring. */
#define VCX_EN_RX_COPYBREAK	256u
#define VCX_EN_RX_MAX_SEGS	4u	/* pages per RQ WQE: 9216-byte frames with 4 KiB pages */

/* TX: a WQE is a control and an Ethernet segment (with an LSO's headers inline, at most
 * VCX_EN_TX_MAX_INLINE bytes) plus one data segment per DMA mapping; the queue stops
 * while fewer WQEBBs than the largest WQE and a ring-end NOP pad remain. */
#define VCX_EN_TX_MAX_INLINE	256u
#define VCX_EN_TX_MAX_DS	(2 + VCX_EN_TX_MAX_INLINE / VCX_WQE_DS + 1 + MAX_SKB_FRAGS)
#define VCX_EN_TX_MAX_WQEBBS	DIV_ROUND_UP(VCX_EN_TX_MAX_DS * VCX_WQE_DS, VCX_SEND_WQEBB)
#define VCX_EN_SQ_STOP_ROOM	(2 * VCX_EN_TX_MAX_WQEBBS)

#define VCX_EN_TX_NAPI_BUDGET	256

/* Traffic types of the TTC table, one TIR each (mlx5's enum mlx5_traffic_types). */
enum vcx_en_tt {
	VCX_EN_TT_IPV4_TCP,
	VCX_EN_TT_IPV6_TCP,
	VCX_EN_TT_IPV4_UDP,
	VCX_EN_TT_IPV6_UDP,
	VCX_EN_TT_IPV4,
	VCX_EN_TT_IPV6,
	VCX_EN_TT_ANY,
	VCX_EN_NUM_TT,
};

#define VCX_EN_RQT_SIZE		256u	/* indirection table entries (power of two) */
#define VCX_EN_RSS_KEY_SIZE	40u

struct vcx_en_cq {
	void *buf;
	dma_addr_t dma;
	size_t size;
	u32 log_nent;
	u32 cqn;
	u32 cons_index;
	u32 arm_sn;
	__be32 *db;			/* set_ci, arm */
	dma_addr_t db_dma;
	struct vcx_en_channel *ch;
	bool created;
	bool tx;			/* the SQ's CQ, else the RQ's */
	u16 event_ctr;			/* completion events, DIM's sample */
	bool dim_on;			/* adaptive moderation runs (vcx_en_dim.c) */
	struct dim dim;
};

/*
 * Completion event moderation of a CQ kind (ethtool -c/-C), with the device's
 * cq_moderation cap: cq_period in us, cq_max_count and the period mode
 * (VCX_CQ_PERIOD_MODE_*: counted from the last event or from the first CQE after it).
 * Under adaptive moderation (DIM) these are its starting profile. The defaults are
 * mlx5e's (vcx_en_dim.c).
 */
struct vcx_en_coal {
	u16 usecs;
	u16 frames;
	u8 mode;
};

#define VCX_EN_COAL_USECS		16
#define VCX_EN_COAL_FRAMES		32
#define VCX_EN_RX_COAL_USECS_FROM_CQE	3

struct vcx_en_tx_dma {
	dma_addr_t addr;
	u32 len;
	bool page;			/* dma_map_page (a fragment), else dma_map_single */
};

/* Per-WQEBB bookkeeping: set at the index of a WQE's first WQEBB. */
struct vcx_en_tx_info {
	struct sk_buff *skb;
	u16 num_wqebbs;
	u16 num_dma;
	u32 bytes;
	struct vcx_en_tx_dma dma[1 + MAX_SKB_FRAGS];
};

struct vcx_en_ring_stats {
	u64 packets;
	u64 bytes;
	u64 dropped;			/* TX: error completions, unmappable skbs; RX: error CQEs */
	u64 csum_partial;		/* TX: checksum offloaded; RX: CHECKSUM_UNNECESSARY */
	u64 csum_none;
	u64 stopped;			/* TX: queue stopped for room */
	u64 wake;
	u64 alloc_fail;			/* RX: page allocation failed, WQE not reposted */
	u64 tso_packets;		/* TX: LSO WQEs, and their payload bytes */
	u64 tso_bytes;
	u64 vlan;			/* TX: tags added; RX: tags the RQ stripped */
	struct u64_stats_sync syncp;
};

struct vcx_en_sq {
	void *buf;			/* VCX_EN_SQ_SIZE WQEBBs, coherent */
	dma_addr_t dma;
	__be32 *db;			/* doorbell record: dbr+4 = send counter */
	dma_addr_t db_dma;
	u32 sqn;
	u16 pc;				/* producer counter, WQEBBs */
	u16 cc;				/* consumer counter, WQEBBs */
	void __iomem *bf;		/* BlueFlame register of the kernel UAR */
	u32 bf_offset;
	void *db_pending;		/* last control segment not yet rung (xmit_more) */
	struct vcx_en_tx_info *info;
	struct netdev_queue *txq;
	struct vcx_en_cq cq;
	struct vcx_en_ring_stats *stats;	/* priv->tx_stats[ix]: outlives the SQ */
	bool created;
	bool error;			/* an error CQE came: the channels are reopened */
};

struct vcx_en_rx_buf {
	struct page *page[VCX_EN_RX_MAX_SEGS];
	dma_addr_t dma[VCX_EN_RX_MAX_SEGS];
};

struct vcx_en_rq {
	void *buf;			/* VCX_EN_RQ_SIZE WQEs of 'stride' bytes, coherent */
	dma_addr_t dma;
	size_t size;
	__be32 *db;			/* doorbell record: dbr+0 = receive counter */
	dma_addr_t db_dma;
	u32 rqn;
	u32 log_stride;
	u32 nsegs;			/* pages per WQE actually used */
	u16 pc;				/* WQEs posted */
	u16 cc;				/* WQEs completed */
	struct vcx_en_rx_buf *bufs;
	struct vcx_en_cq cq;
	struct vcx_en_ring_stats *stats;	/* priv->rx_stats[ix] */
	bool created;
};

struct vcx_en_priv;

struct vcx_en_channel {
	struct vcx_en_priv *priv;
	struct napi_struct napi;
	int ix;
	int cpu;
	u32 eqn;
	struct vcx_en_sq sq;
	struct vcx_en_rq rq;
};

/* A flow table with the groups the driver created in it. */
struct vcx_en_ft {
	u32 id;
	u32 level;
	u32 log_size;
	u32 group_id[4];
	u32 num_groups;
	bool created;
};

/* One L2 table entry: a destination MAC (the own MAC, the UC/MC lists, broadcast). */
struct vcx_en_l2_entry {
	u8 mac[ETH_ALEN];
	u32 index;			/* flow index in the L2 table */
};

#define VCX_EN_L2_LOG_SIZE	8
#define VCX_EN_L2_PROMISC_IX	0
#define VCX_EN_L2_ALLMULTI_IX	1
#define VCX_EN_L2_DMAC_FIRST	2
#define VCX_EN_L2_MAX_DMAC	((1u << VCX_EN_L2_LOG_SIZE) - VCX_EN_L2_DMAC_FIRST)
#define VCX_EN_VPORT_LIST_MAX	64	/* log_max_current_uc_list / mc_list 6 */

struct vcx_en_fs {
	struct vcx_en_ft l2;		/* level 0, the NIC RX root */
	struct vcx_en_ft ttc;		/* level 1: ethertype + ip_protocol -> TIRs */
	bool root_set;
	bool promisc_fte;
	bool allmulti_fte;
	struct vcx_en_l2_entry *dmac;	/* VCX_EN_L2_MAX_DMAC entries in the table */
	u32 num_dmac;
	bool vport_promisc_uc, vport_promisc_mc, vport_promisc_all;
	struct work_struct rx_mode_work;
};

struct vcx_en_vport_stats {
	u64 rx_unicast_packets, rx_unicast_bytes;
	u64 rx_multicast_packets, rx_multicast_bytes;
	u64 rx_broadcast_packets, rx_broadcast_bytes;
	u64 tx_unicast_packets, tx_unicast_bytes;
	u64 tx_multicast_packets, tx_multicast_bytes;
	u64 tx_broadcast_packets, tx_broadcast_bytes;
	u64 rx_errors, tx_errors;
	u64 rx_out_of_buffer;
};

struct vcx_en_priv {
	struct vcx_dev *vdev;
	struct net_device *netdev;
	struct mutex state_lock;	/* channels: open/close/reopen, MTU, channel count */
	bool opened;

	u32 tdn;
	u32 pdn;
	u32 mkey;			/* PA mkey over all memory, local read/write (lkey) */
	u32 tisn;
	u32 q_counter;			/* 0: none */
	bool td_alloc, pd_alloc, mkey_alloc, tis_alloc;

	int num_channels;		/* configured (ethtool -L) */
	int max_channels;
	struct vcx_en_channel *channels;	/* num_channels of them while open */
	int open_channels;

	u32 rqtn;
	bool rqt_created;
	u32 tirn[VCX_EN_NUM_TT];
	bool tir_created[VCX_EN_NUM_TT];
	u8 rss_key[VCX_EN_RSS_KEY_SIZE];

	struct vcx_en_fs fs;
	struct work_struct reset_work;	/* an SQ error or a TX timeout: reopen the channels */
	struct work_struct carrier_work;

	/* Per channel index up to max_channels, kept while the netdev exists (as mlx5e's
	 * channel_stats): ndo_get_stats64 reads them in any context, and the counters of a
	 * channel that was closed never go back. */
	struct vcx_en_ring_stats *tx_stats;
	struct vcx_en_ring_stats *rx_stats;
	struct vcx_en_vport_stats vport;
	u32 msg_enable;
	struct vcx_en_coal rx_coal, tx_coal;	/* all 0 without the cap */
	bool rx_dim, tx_dim;		/* adaptive moderation (ethtool -C adaptive-rx/tx) */
	/* hardware timestamps (SIOCSHWTSTAMP): HWTSTAMP_TX_OFF/ON, HWTSTAMP_FILTER_NONE/ALL */
	int tx_tstamp, rx_tstamp;
};

/* vcx_en_ptp.c: hardware timestamps from CQEs, on the device's PTP clock */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define vcx_ethtool_ts_info kernel_ethtool_ts_info
#else
#define vcx_ethtool_ts_info ethtool_ts_info
#endif
int vcx_en_hwtstamp_ioctl(struct net_device *ndev, struct ifreq *ifr, int cmd);
int vcx_en_get_ts_info(struct net_device *ndev, struct vcx_ethtool_ts_info *info);
void vcx_en_set_tstamp(struct vcx_en_priv *priv, const u8 *cqe, struct sk_buff *skb,
		       bool tx);

/*
 * The per-packet checks stay inline on the RX and TX completion paths: with timestamps
 * off (the common case) a packet costs one load and no call.
 */
static inline void vcx_en_rx_tstamp(struct vcx_en_priv *priv, const u8 *cqe,
				    struct sk_buff *skb)
{
	if (unlikely(READ_ONCE(priv->rx_tstamp) != HWTSTAMP_FILTER_NONE))
		vcx_en_set_tstamp(priv, cqe, skb, false);
}

/* The send CQE of a packet that asked for a hardware timestamp (SKBTX_IN_PROGRESS). */
static inline void vcx_en_tx_tstamp(struct vcx_en_priv *priv, const u8 *cqe,
				    struct sk_buff *skb)
{
	if (unlikely(skb_shinfo(skb)->tx_flags & SKBTX_IN_PROGRESS))
		vcx_en_set_tstamp(priv, cqe, skb, true);
}

static inline struct vcx_en_priv *vcx_en_priv(struct net_device *ndev)
{
	return netdev_priv(ndev);
}

/* vcx_en_main.c */
void vcx_en_destroy_obj(struct vcx_dev *vdev, u16 opcode, u32 num);
void vcx_en_fill_wq(u8 *wq, u32 pdn, u32 uar, dma_addr_t db, u32 log_stride, u32 log_sz,
		    dma_addr_t buf, size_t npages);
int vcx_en_create_cq(struct vcx_en_priv *priv, struct vcx_en_channel *ch,
		     struct vcx_en_cq *cq, u32 log_nent, const struct vcx_en_coal *coal);
void vcx_en_destroy_cq(struct vcx_en_priv *priv, struct vcx_en_cq *cq);
int vcx_en_add(struct vcx_dev *vdev);
void vcx_en_remove(struct vcx_dev *vdev);
void vcx_en_port_event(struct vcx_dev *vdev, bool up);
bool vcx_en_cq_event(struct vcx_dev *vdev, u32 cqn);
int vcx_en_query_vport_state(struct vcx_dev *vdev, u8 *state);
int vcx_en_query_mac(struct vcx_dev *vdev, u8 *mac);
int vcx_en_reopen(struct vcx_en_priv *priv, int num_channels, int mtu);
int vcx_en_query_vport_counters(struct vcx_en_priv *priv);
void vcx_en_ring_stats_read(struct vcx_en_ring_stats *s, struct vcx_en_ring_stats *out);
void vcx_en_cq_arm(struct vcx_en_priv *priv, struct vcx_en_cq *cq);
u8 *vcx_en_cq_next(struct vcx_en_cq *cq);

/* vcx_en_tx.c */
int vcx_en_create_sq(struct vcx_en_priv *priv, struct vcx_en_channel *ch);
void vcx_en_destroy_sq(struct vcx_en_priv *priv, struct vcx_en_sq *sq);
netdev_tx_t vcx_en_xmit(struct sk_buff *skb, struct net_device *ndev);
netdev_features_t vcx_en_features_check(struct sk_buff *skb, struct net_device *ndev,
					netdev_features_t features);
bool vcx_en_poll_tx(struct vcx_en_channel *ch, int budget);
void vcx_en_sq_free_all(struct vcx_en_priv *priv, struct vcx_en_sq *sq);

/* vcx_en_rx.c */
int vcx_en_create_rq(struct vcx_en_priv *priv, struct vcx_en_channel *ch);
void vcx_en_destroy_rq(struct vcx_en_priv *priv, struct vcx_en_rq *rq);
int vcx_en_rq_set_vlan_strip(struct vcx_en_priv *priv, struct vcx_en_rq *rq, bool strip);
u32 vcx_en_rq_log_stride(int mtu, u32 *nsegs);
int vcx_en_rq_fill(struct vcx_en_priv *priv, struct vcx_en_rq *rq, gfp_t gfp);
void vcx_en_rq_free_all(struct vcx_en_priv *priv, struct vcx_en_rq *rq);
int vcx_en_poll_rx(struct vcx_en_channel *ch, int budget);

/* vcx_en_fs.c */
int vcx_en_create_rqt(struct vcx_en_priv *priv);
int vcx_en_create_tir(struct vcx_en_priv *priv, enum vcx_en_tt tt);
void vcx_en_destroy_tirs_rqt(struct vcx_en_priv *priv);
int vcx_en_fs_create(struct vcx_en_priv *priv);
void vcx_en_fs_destroy(struct vcx_en_priv *priv);
void vcx_en_set_rx_mode(struct net_device *ndev);
void vcx_en_rx_mode_work(struct work_struct *work);

/* vcx_en_dim.c */
void vcx_en_moderation_defaults(struct vcx_en_priv *priv);
struct vcx_en_coal vcx_en_default_coal(bool tx, bool dim, u8 mode);
void vcx_en_dim_init(struct vcx_en_cq *cq);
void vcx_en_dim_start(struct vcx_en_cq *cq, u8 mode);
void vcx_en_dim_stop(struct vcx_en_cq *cq, bool napi_off);
void vcx_en_dim_sample(struct vcx_en_cq *cq, struct vcx_en_ring_stats *stats);
int vcx_en_apply_moderation(struct vcx_en_priv *priv, bool tx);

/* vcx_en_ethtool.c */
extern const struct ethtool_ops vcx_en_ethtool_ops;
extern const struct ethtool_ops vcx_en_holder_ethtool_ops;

#endif /* VCX_EN_H */
