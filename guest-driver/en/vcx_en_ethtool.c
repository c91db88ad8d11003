// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: ethtool operations of the port netdev (a small part of mlx5e's en_ethtool.c):
 * -i (driver, firmware, bus), -S (per-ring software counters, the vport counters of
 * QUERY_VPORT_COUNTER, out_of_buffer of the RQs' Q counter and the port's counters at
 * the MAC from PPCNT, named as mlx5e names them: *_phy), the standard IEEE 802.3 MAC
 * and RMON groups (ethtool -S --groups eth-mac rmon, from PPCNT too), -l/-L (combined
 * channels, at most one per completion EQ), -g (fixed ring sizes; -G is not offered) and
 * -c/-C (static completion moderation, rx/tx usecs and frames, with the device's
 * cq_moderation cap; no adaptive moderation).
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>

#include "vcx_en.h"

/* Device counters, refreshed by ethtool -S (and read by ndo_get_stats64). */
int vcx_en_query_vport_counters(struct vcx_en_priv *priv)
{
	struct vcx_dev *vdev = priv->vdev;
	struct vcx_en_vport_stats *v = &priv->vport;
	u8 qin[VCX_QUERY_Q_COUNTER_IN_LEN] = {};
	u8 qout[VCX_QUERY_Q_COUNTER_OUT_LEN] = {};
	u8 *out = vcx_query_vport_counter(vdev);
	int err = out ? 0 : -EIO;

	if (out) {
#define VPORT_CNT(at, octets) vcx_vport_cnt(out, VCX_VPORT_CNT_##at##_AT, octets)
		v->rx_errors = VPORT_CNT(RECEIVED_ERRORS, false);
		v->tx_errors = VPORT_CNT(TRANSMIT_ERRORS, false);
		v->rx_broadcast_packets = VPORT_CNT(RX_ETH_BROADCAST, false);
		v->rx_broadcast_bytes = VPORT_CNT(RX_ETH_BROADCAST, true);
		v->tx_broadcast_packets = VPORT_CNT(TX_ETH_BROADCAST, false);
		v->tx_broadcast_bytes = VPORT_CNT(TX_ETH_BROADCAST, true);
		v->rx_unicast_packets = VPORT_CNT(RX_ETH_UNICAST, false);
		v->rx_unicast_bytes = VPORT_CNT(RX_ETH_UNICAST, true);
		v->tx_unicast_packets = VPORT_CNT(TX_ETH_UNICAST, false);
		v->tx_unicast_bytes = VPORT_CNT(TX_ETH_UNICAST, true);
		v->rx_multicast_packets = VPORT_CNT(RX_ETH_MULTICAST, false);
		v->rx_multicast_bytes = VPORT_CNT(RX_ETH_MULTICAST, true);
		v->tx_multicast_packets = VPORT_CNT(TX_ETH_MULTICAST, false);
		v->tx_multicast_bytes = VPORT_CNT(TX_ETH_MULTICAST, true);
#undef VPORT_CNT
	}
	kfree(out);
	if (err || !priv->q_counter)
		return err;
	vcx_set(qin, VCX_CMD_IN_OPCODE, VCX_CMD_OP_QUERY_Q_COUNTER);
	vcx_set(qin, VCX_QUERY_Q_COUNTER_IN_COUNTER_SET_ID, priv->q_counter);
	err = vcx_cmd_exec(vdev, qin, sizeof(qin), qout, sizeof(qout));
	if (!err)
		v->rx_out_of_buffer = vcx_get(qout, VCX_QUERY_Q_COUNTER_OUT_OUT_OF_BUFFER);
	return err;
}

/* Counter i (a 64-bit value) of a PPCNT counter set. */
static u64 vcx_en_ppcnt_ctr(const u8 *reg, u32 i)
{
	return vcx_get64(reg + VCX_PPCNT_COUNTER_SET + 8 * i, VCX_FLD(0, 64));
}

/* The port's counters in ethtool -S, with mlx5e's names. */
static const struct {
	const char *name;
	u8 grp;
	u8 ctr;
} vcx_en_phy_stats[] = {
	{ "rx_packets_phy", VCX_PPCNT_GRP_IEEE_802_3, VCX_PPCNT_802_3_FRAMES_RX },
	{ "rx_crc_errors_phy", VCX_PPCNT_GRP_IEEE_802_3, VCX_PPCNT_802_3_FCS_ERRORS },
	{ "rx_bytes_phy", VCX_PPCNT_GRP_IEEE_802_3, VCX_PPCNT_802_3_OCTETS_RX },
	{ "tx_packets_phy", VCX_PPCNT_GRP_IEEE_802_3, VCX_PPCNT_802_3_FRAMES_TX },
	{ "tx_bytes_phy", VCX_PPCNT_GRP_IEEE_802_3, VCX_PPCNT_802_3_OCTETS_TX },
	{ "rx_multicast_phy", VCX_PPCNT_GRP_IEEE_802_3, VCX_PPCNT_802_3_MC_RX },
	{ "tx_multicast_phy", VCX_PPCNT_GRP_IEEE_802_3, VCX_PPCNT_802_3_MC_TX },
	{ "rx_broadcast_phy", VCX_PPCNT_GRP_IEEE_802_3, VCX_PPCNT_802_3_BC_RX },
	{ "tx_broadcast_phy", VCX_PPCNT_GRP_IEEE_802_3, VCX_PPCNT_802_3_BC_TX },
	{ "rx_oversize_pkts_phy", VCX_PPCNT_GRP_IEEE_802_3, VCX_PPCNT_802_3_TOO_LONG },
	{ "rx_discards_phy", VCX_PPCNT_GRP_RFC_2863, VCX_PPCNT_2863_IN_DISCARDS },
	{ "rx_undersize_pkts_phy", VCX_PPCNT_GRP_RFC_2819, VCX_PPCNT_2819_UNDERSIZE },
	{ "rx_64_bytes_phy", VCX_PPCNT_GRP_RFC_2819, VCX_PPCNT_2819_PKTS64 },
	{ "rx_65_to_127_bytes_phy", VCX_PPCNT_GRP_RFC_2819, VCX_PPCNT_2819_PKTS64 + 1 },
	{ "rx_128_to_255_bytes_phy", VCX_PPCNT_GRP_RFC_2819, VCX_PPCNT_2819_PKTS64 + 2 },
	{ "rx_256_to_511_bytes_phy", VCX_PPCNT_GRP_RFC_2819, VCX_PPCNT_2819_PKTS64 + 3 },
	{ "rx_512_to_1023_bytes_phy", VCX_PPCNT_GRP_RFC_2819, VCX_PPCNT_2819_PKTS64 + 4 },
	{ "rx_1024_to_1518_bytes_phy", VCX_PPCNT_GRP_RFC_2819, VCX_PPCNT_2819_PKTS64 + 5 },
	{ "rx_1519_to_2047_bytes_phy", VCX_PPCNT_GRP_RFC_2819, VCX_PPCNT_2819_PKTS64 + 6 },
	{ "rx_2048_to_4095_bytes_phy", VCX_PPCNT_GRP_RFC_2819, VCX_PPCNT_2819_PKTS64 + 7 },
	{ "rx_4096_to_8191_bytes_phy", VCX_PPCNT_GRP_RFC_2819, VCX_PPCNT_2819_PKTS64 + 8 },
	{ "rx_8192_to_10239_bytes_phy", VCX_PPCNT_GRP_RFC_2819, VCX_PPCNT_2819_PKTS64 + 9 },
};

#define VCX_EN_NUM_PHY_STATS	(ARRAY_SIZE(vcx_en_phy_stats) + 1)	/* + link_down_events_phy */

static const u8 vcx_en_phy_groups[] = {
	VCX_PPCNT_GRP_IEEE_802_3, VCX_PPCNT_GRP_RFC_2863, VCX_PPCNT_GRP_RFC_2819,
	VCX_PPCNT_GRP_PHYS_LAYER,
};

/* The groups above, read into regs (one 256-byte register each, in that order). */
static int vcx_en_query_phy(struct vcx_en_priv *priv, u8 *regs)
{
	int i, err;

	for (i = 0; i < ARRAY_SIZE(vcx_en_phy_groups); i++) {
		err = vcx_query_ppcnt(priv->vdev, vcx_en_phy_groups[i],
				      regs + i * VCX_REG_PPCNT_LEN);
		if (err)
			return err;
	}
	return 0;
}

static const u8 *vcx_en_phy_reg(const u8 *regs, u8 grp)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(vcx_en_phy_groups) - 1; i++)
		if (vcx_en_phy_groups[i] == grp)
			break;
	return regs + i * VCX_REG_PPCNT_LEN;
}

/* ethtool -S: the *_phy values, then link_down_events_phy; zeros if PPCNT failed. */
static u64 *vcx_en_fill_phy(struct vcx_en_priv *priv, u64 *data)
{
	u8 *regs = kcalloc(ARRAY_SIZE(vcx_en_phy_groups), VCX_REG_PPCNT_LEN, GFP_KERNEL);
	int i;

	if (regs && vcx_en_query_phy(priv, regs)) {
		netdev_warn_once(priv->netdev, "reading the port counters (PPCNT) failed\n");
		memset(regs, 0, ARRAY_SIZE(vcx_en_phy_groups) * VCX_REG_PPCNT_LEN);
	}
	for (i = 0; i < ARRAY_SIZE(vcx_en_phy_stats); i++)
		*data++ = regs ? vcx_en_ppcnt_ctr(vcx_en_phy_reg(regs, vcx_en_phy_stats[i].grp),
						  vcx_en_phy_stats[i].ctr) : 0;
	*data++ = regs ? vcx_get(vcx_en_phy_reg(regs, VCX_PPCNT_GRP_PHYS_LAYER) +
				 VCX_PPCNT_COUNTER_SET + VCX_PPCNT_PHYS_LINK_DOWN_EVENTS,
				 VCX_FLD(0, 32)) : 0;
	kfree(regs);
	return data;
}

/* One PPCNT group in a new buffer (kfree it), or NULL: the stats are left unset. */
static u8 *vcx_en_read_ppcnt(struct net_device *ndev, u32 grp)
{
	u8 *reg = kzalloc(VCX_REG_PPCNT_LEN, GFP_KERNEL);

	if (reg && vcx_query_ppcnt(vcx_en_priv(ndev)->vdev, grp, reg)) {
		kfree(reg);
		return NULL;
	}
	return reg;
}

static void vcx_en_get_eth_mac_stats(struct net_device *ndev,
				     struct ethtool_eth_mac_stats *mac)
{
	u8 *reg = vcx_en_read_ppcnt(ndev, VCX_PPCNT_GRP_IEEE_802_3);

	if (!reg)
		return;
	mac->FramesTransmittedOK = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_802_3_FRAMES_TX);
	mac->FramesReceivedOK = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_802_3_FRAMES_RX);
	mac->OctetsTransmittedOK = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_802_3_OCTETS_TX);
	mac->OctetsReceivedOK = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_802_3_OCTETS_RX);
	mac->MulticastFramesXmittedOK = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_802_3_MC_TX);
	mac->BroadcastFramesXmittedOK = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_802_3_BC_TX);
	mac->MulticastFramesReceivedOK = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_802_3_MC_RX);
	mac->BroadcastFramesReceivedOK = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_802_3_BC_RX);
	mac->FrameTooLongErrors = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_802_3_TOO_LONG);
	mac->FrameCheckSequenceErrors = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_802_3_FCS_ERRORS);
	mac->AlignmentErrors = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_802_3_ALIGN_ERRORS);
	kfree(reg);
}

/* The RFC 2819 bins of PPCNT, FCS included. */
static const struct ethtool_rmon_hist_range vcx_en_rmon_ranges[] = {
	{ 0, 64 }, { 65, 127 }, { 128, 255 }, { 256, 511 }, { 512, 1023 }, { 1024, 1518 },
	{ 1519, 2047 }, { 2048, 4095 }, { 4096, 8191 }, { 8192, 10239 }, {}
};

static void vcx_en_get_rmon_stats(struct net_device *ndev, struct ethtool_rmon_stats *rmon,
				  const struct ethtool_rmon_hist_range **ranges)
{
	u8 *reg = vcx_en_read_ppcnt(ndev, VCX_PPCNT_GRP_RFC_2819);
	int i;

	if (!reg)
		return;
	rmon->undersize_pkts = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_2819_UNDERSIZE);
	rmon->oversize_pkts = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_2819_OVERSIZE);
	rmon->fragments = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_2819_FRAGMENTS);
	rmon->jabbers = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_2819_JABBERS);
	for (i = 0; i < VCX_PPCNT_2819_BINS; i++)
		rmon->hist[i] = vcx_en_ppcnt_ctr(reg, VCX_PPCNT_2819_PKTS64 + i);
	*ranges = vcx_en_rmon_ranges;
	kfree(reg);
}

static void vcx_en_get_drvinfo(struct net_device *ndev, struct ethtool_drvinfo *info)
{
	struct vcx_dev *vdev = vcx_en_priv(ndev)->vdev;

	strscpy(info->driver, VCX_DRV_NAME, sizeof(info->driver));
	snprintf(info->fw_version, sizeof(info->fw_version), "%u.%u.%u (%s)", vdev->fw_major,
		 vdev->fw_minor, vdev->fw_subminor, vdev->board_id);
	strscpy(info->bus_info, pci_name(vdev->pdev), sizeof(info->bus_info));
}

/* Per-ring counters: "<ring><n>_<name>". */
static const char * const vcx_en_tx_stat_names[] = {
	"packets", "bytes", "dropped", "csum_partial", "csum_none", "stopped", "wake",
	"tso_packets", "tso_bytes", "added_vlan_packets",
};

static const char * const vcx_en_rx_stat_names[] = {
	"packets", "bytes", "dropped", "csum_unnecessary", "csum_none", "alloc_fail",
	"removed_vlan_packets",
};

static const char * const vcx_en_vport_stat_names[] = {
	"rx_vport_unicast_packets", "rx_vport_unicast_bytes",
	"tx_vport_unicast_packets", "tx_vport_unicast_bytes",
	"rx_vport_multicast_packets", "rx_vport_multicast_bytes",
	"tx_vport_multicast_packets", "tx_vport_multicast_bytes",
	"rx_vport_broadcast_packets", "rx_vport_broadcast_bytes",
	"tx_vport_broadcast_packets", "tx_vport_broadcast_bytes",
	"rx_vport_errors", "tx_vport_errors", "rx_out_of_buffer",
};

#define VCX_EN_NUM_TX_STATS	ARRAY_SIZE(vcx_en_tx_stat_names)
#define VCX_EN_NUM_RX_STATS	ARRAY_SIZE(vcx_en_rx_stat_names)
#define VCX_EN_NUM_VPORT_STATS	ARRAY_SIZE(vcx_en_vport_stat_names)

static int vcx_en_get_sset_count(struct net_device *ndev, int sset)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);

	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return 4 + VCX_EN_NUM_VPORT_STATS + VCX_EN_NUM_PHY_STATS +
	       priv->max_channels * (VCX_EN_NUM_TX_STATS + VCX_EN_NUM_RX_STATS);
}

static void vcx_en_get_strings(struct net_device *ndev, u32 sset, u8 *data)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);
	int i, j;

	if (sset != ETH_SS_STATS)
		return;
	ethtool_sprintf(&data, "%s", "rx_packets");
	ethtool_sprintf(&data, "%s", "rx_bytes");
	ethtool_sprintf(&data, "%s", "tx_packets");
	ethtool_sprintf(&data, "%s", "tx_bytes");
	for (i = 0; i < VCX_EN_NUM_VPORT_STATS; i++)
		ethtool_sprintf(&data, "%s", vcx_en_vport_stat_names[i]);
	for (i = 0; i < ARRAY_SIZE(vcx_en_phy_stats); i++)
		ethtool_sprintf(&data, "%s", vcx_en_phy_stats[i].name);
	ethtool_sprintf(&data, "%s", "link_down_events_phy");
	for (i = 0; i < priv->max_channels; i++) {
		for (j = 0; j < VCX_EN_NUM_RX_STATS; j++)
			ethtool_sprintf(&data, "rx%d_%s", i, vcx_en_rx_stat_names[j]);
		for (j = 0; j < VCX_EN_NUM_TX_STATS; j++)
			ethtool_sprintf(&data, "tx%d_%s", i, vcx_en_tx_stat_names[j]);
	}
}

static void vcx_en_get_ethtool_stats(struct net_device *ndev, struct ethtool_stats *stats,
				     u64 *data)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);
	struct vcx_en_vport_stats *v = &priv->vport;
	struct vcx_en_ring_stats s;
	u64 *sums = data;
	int i;

	if (vcx_en_query_vport_counters(priv))
		netdev_warn_once(ndev, "reading the vport counters failed\n");
	data += 4;
	*data++ = v->rx_unicast_packets;
	*data++ = v->rx_unicast_bytes;
	*data++ = v->tx_unicast_packets;
	*data++ = v->tx_unicast_bytes;
	*data++ = v->rx_multicast_packets;
	*data++ = v->rx_multicast_bytes;
	*data++ = v->tx_multicast_packets;
	*data++ = v->tx_multicast_bytes;
	*data++ = v->rx_broadcast_packets;
	*data++ = v->rx_broadcast_bytes;
	*data++ = v->tx_broadcast_packets;
	*data++ = v->tx_broadcast_bytes;
	*data++ = v->rx_errors;
	*data++ = v->tx_errors;
	*data++ = v->rx_out_of_buffer;
	data = vcx_en_fill_phy(priv, data);
	sums[0] = sums[1] = sums[2] = sums[3] = 0;
	for (i = 0; i < priv->max_channels; i++) {
		vcx_en_ring_stats_read(&priv->rx_stats[i], &s);
		sums[0] += s.packets;
		sums[1] += s.bytes;
		*data++ = s.packets;
		*data++ = s.bytes;
		*data++ = s.dropped;
		*data++ = s.csum_partial;
		*data++ = s.csum_none;
		*data++ = s.alloc_fail;
		*data++ = s.vlan;
		vcx_en_ring_stats_read(&priv->tx_stats[i], &s);
		sums[2] += s.packets;
		sums[3] += s.bytes;
		*data++ = s.packets;
		*data++ = s.bytes;
		*data++ = s.dropped;
		*data++ = s.csum_partial;
		*data++ = s.csum_none;
		*data++ = s.stopped;
		*data++ = s.wake;
		*data++ = s.tso_packets;
		*data++ = s.tso_bytes;
		*data++ = s.vlan;
	}
}

static void vcx_en_get_channels(struct net_device *ndev, struct ethtool_channels *ch)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);

	ch->max_combined = priv->max_channels;
	ch->combined_count = priv->num_channels;
}

static int vcx_en_set_channels(struct net_device *ndev, struct ethtool_channels *ch)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);

	if (ch->rx_count || ch->tx_count || ch->other_count)
		return -EINVAL;
	if (!ch->combined_count || ch->combined_count > priv->max_channels)
		return -EINVAL;
	if (ch->combined_count == priv->num_channels)
		return 0;
	return vcx_en_reopen(priv, ch->combined_count, 0);
}

static void vcx_en_get_ringparam(struct net_device *ndev, struct ethtool_ringparam *ring,
				 struct kernel_ethtool_ringparam *kring,
				 struct netlink_ext_ack *extack)
{
	ring->rx_max_pending = VCX_EN_RQ_SIZE;
	ring->tx_max_pending = VCX_EN_SQ_SIZE;
	ring->rx_pending = VCX_EN_RQ_SIZE;
	ring->tx_pending = VCX_EN_SQ_SIZE;
}

static int vcx_en_get_coalesce(struct net_device *ndev, struct ethtool_coalesce *c,
				struct kernel_ethtool_coalesce *kc,
				struct netlink_ext_ack *extack)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);

	if (!vcx_get(priv->vdev->caps.general, VCX_CAP_GEN_CQ_MODERATION)) {
		NL_SET_ERR_MSG_MOD(extack, "the device has no CQ moderation (cap cq_moderation)");
		return -EOPNOTSUPP;
	}
	c->rx_coalesce_usecs = priv->rx_coal.usecs;
	c->rx_max_coalesced_frames = priv->rx_coal.frames;
	c->tx_coalesce_usecs = priv->tx_coal.usecs;
	c->tx_max_coalesced_frames = priv->tx_coal.frames;
	c->use_adaptive_rx_coalesce = priv->rx_dim;
	c->use_adaptive_tx_coalesce = priv->tx_dim;
	kc->use_cqe_mode_rx = priv->rx_coal.mode == VCX_CQ_PERIOD_MODE_UPON_CQE;
	kc->use_cqe_mode_tx = priv->tx_coal.mode == VCX_CQ_PERIOD_MODE_UPON_CQE;
	return 0;
}

static bool vcx_en_coal_eq(const struct vcx_en_coal *a, const struct vcx_en_coal *b)
{
	return a->usecs == b->usecs && a->frames == b->frames && a->mode == b->mode;
}

/*
 * One direction's new moderation. A change of adaptive mode or period mode starts from
 * the defaults for the new modes (as mlx5e), unless usecs or frames were given in the
 * same command with DIM off, which then apply. Under DIM the values are DIM's: new ones
 * are refused (mlx5e ignores them silently).
 */
static int vcx_en_coal_next(bool tx, bool dim, bool cqe_mode, u32 usecs, u32 frames,
			    bool cur_dim, const struct vcx_en_coal *cur, struct vcx_en_coal *next,
			    struct netlink_ext_ack *extack)
{
	u8 mode = cqe_mode ? VCX_CQ_PERIOD_MODE_UPON_CQE : VCX_CQ_PERIOD_MODE_UPON_EVENT;
	bool given = usecs != cur->usecs || frames != cur->frames;

	if (dim && given) {
		if (tx)
			NL_SET_ERR_MSG_MOD(extack, "adaptive-tx sets tx-usecs/frames: turn it off first");
		else
			NL_SET_ERR_MSG_MOD(extack, "adaptive-rx sets rx-usecs/frames: turn it off first");
		return -EINVAL;
	}
	if (dim != cur_dim || mode != cur->mode) {
		*next = vcx_en_default_coal(tx, dim, mode);
		if (!given)
			return 0;
	}
	next->usecs = usecs;
	next->frames = frames;
	next->mode = mode;
	return 0;
}

/*
 * As mlx5e_ethtool_set_coalesce (Linux 6.12): the caps cq_moderation and
 * cq_period_mode_modify (else EOPNOTSUPP); periods up to 4095 us and counts up to 65535
 * (the cqc fields, else ERANGE); the CQE-based period mode with cap
 * cq_period_start_from_cqe (else EOPNOTSUPP); adaptive moderation on or off per direction.
 * The open channels' CQs take the change at once (MODIFY_CQ), later ones at creation.
 */
static int vcx_en_set_coalesce(struct net_device *ndev, struct ethtool_coalesce *c,
				struct kernel_ethtool_coalesce *kc,
				struct netlink_ext_ack *extack)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);
	const u8 *caps = priv->vdev->caps.general;
	bool rx_dim = c->use_adaptive_rx_coalesce, tx_dim = c->use_adaptive_tx_coalesce;
	struct vcx_en_coal rx, tx;
	bool rx_change, tx_change;
	int err;

	if (!vcx_get(caps, VCX_CAP_GEN_CQ_MODERATION) ||
	    !vcx_get(caps, VCX_CAP_GEN_CQ_PERIOD_MODE_MODIFY)) {
		NL_SET_ERR_MSG_MOD(extack, "the device cannot change CQ moderation (caps cq_moderation, cq_period_mode_modify)");
		return -EOPNOTSUPP;
	}
	if (c->rx_coalesce_usecs > VCX_CQ_MAX_PERIOD || c->tx_coalesce_usecs > VCX_CQ_MAX_PERIOD) {
		NL_SET_ERR_MSG_MOD(extack, "coalesce usecs are at most 4095");
		return -ERANGE;
	}
	if (c->rx_max_coalesced_frames > U16_MAX || c->tx_max_coalesced_frames > U16_MAX) {
		NL_SET_ERR_MSG_MOD(extack, "coalesced frames are at most 65535");
		return -ERANGE;
	}
	if ((kc->use_cqe_mode_rx || kc->use_cqe_mode_tx) &&
	    !vcx_get(caps, VCX_CAP_GEN_CQ_PERIOD_START_FROM_CQE)) {
		NL_SET_ERR_MSG_MOD(extack, "cqe-mode-rx/tx: the device counts periods from events only (cap cq_period_start_from_cqe)");
		return -EOPNOTSUPP;
	}
	mutex_lock(&priv->state_lock);
	rx = priv->rx_coal;
	tx = priv->tx_coal;
	err = vcx_en_coal_next(false, rx_dim, kc->use_cqe_mode_rx, c->rx_coalesce_usecs,
			       c->rx_max_coalesced_frames, priv->rx_dim, &priv->rx_coal, &rx,
			       extack);
	if (!err)
		err = vcx_en_coal_next(true, tx_dim, kc->use_cqe_mode_tx, c->tx_coalesce_usecs,
				       c->tx_max_coalesced_frames, priv->tx_dim, &priv->tx_coal,
				       &tx, extack);
	if (err)
		goto out;
	rx_change = rx_dim != priv->rx_dim || !vcx_en_coal_eq(&rx, &priv->rx_coal);
	tx_change = tx_dim != priv->tx_dim || !vcx_en_coal_eq(&tx, &priv->tx_coal);
	priv->rx_coal = rx;
	priv->rx_dim = rx_dim;
	priv->tx_coal = tx;
	priv->tx_dim = tx_dim;
	if (rx_change)
		err = vcx_en_apply_moderation(priv, false);
	if (!err && tx_change)
		err = vcx_en_apply_moderation(priv, true);
out:
	mutex_unlock(&priv->state_lock);
	return err;
}

static u32 vcx_en_get_msglevel(struct net_device *ndev)
{
	return vcx_en_priv(ndev)->msg_enable;
}

static void vcx_en_set_msglevel(struct net_device *ndev, u32 val)
{
	vcx_en_priv(ndev)->msg_enable = val;
}

const struct ethtool_ops vcx_en_ethtool_ops = {
	.supported_coalesce_params = ETHTOOL_COALESCE_USECS | ETHTOOL_COALESCE_MAX_FRAMES |
				     ETHTOOL_COALESCE_USE_ADAPTIVE | ETHTOOL_COALESCE_USE_CQE,
	.get_drvinfo = vcx_en_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_strings = vcx_en_get_strings,
	.get_sset_count = vcx_en_get_sset_count,
	.get_ethtool_stats = vcx_en_get_ethtool_stats,
	.get_eth_mac_stats = vcx_en_get_eth_mac_stats,
	.get_rmon_stats = vcx_en_get_rmon_stats,
	.get_channels = vcx_en_get_channels,
	.set_channels = vcx_en_set_channels,
	.get_ringparam = vcx_en_get_ringparam,
	.get_coalesce = vcx_en_get_coalesce,
	.set_coalesce = vcx_en_set_coalesce,
	.get_msglevel = vcx_en_get_msglevel,
	.set_msglevel = vcx_en_set_msglevel,
	.get_ts_info = vcx_en_get_ts_info,
};

/* The address holder (no Ethernet offloads): only what identifies it. */
const struct ethtool_ops vcx_en_holder_ethtool_ops = {
	.get_drvinfo = vcx_en_get_drvinfo,
	.get_link = ethtool_op_get_link,
};
