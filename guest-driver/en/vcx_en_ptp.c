// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: hardware timestamps of the port's netdev, as mlx5e gives them: every CQE carries
 * the device's internal timer, converted to time of the device's PTP clock
 * (vcx_clock.c). SIOCSHWTSTAMP turns them on: transmit on or off (a packet asking for
 * one, SKBTX_HW_TSTAMP, gets its send CQE's time), receive none or all (every packet
 * gets its CQE's time). `ethtool -T` names the clock. Without a clock (device_frequency_khz
 * 0) only software timestamps are offered and SIOCSHWTSTAMP fails with EOPNOTSUPP.
 */
#include <linux/ethtool.h>
#include <linux/uaccess.h>

#include "vcx_en.h"

static int vcx_en_hwtstamp_set(struct vcx_en_priv *priv, struct ifreq *ifr)
{
	struct hwtstamp_config cfg;

	if (!vcx_clock_ready(priv->vdev))
		return -EOPNOTSUPP;
	if (copy_from_user(&cfg, ifr->ifr_data, sizeof(cfg)))
		return -EFAULT;
	if (cfg.flags)
		return -EINVAL;
	if (cfg.tx_type != HWTSTAMP_TX_OFF && cfg.tx_type != HWTSTAMP_TX_ON)
		return -ERANGE;
	/* Every received packet is stamped: any filter but none becomes "all", as mlx5e. */
	if (cfg.rx_filter != HWTSTAMP_FILTER_NONE)
		cfg.rx_filter = HWTSTAMP_FILTER_ALL;
	WRITE_ONCE(priv->tx_tstamp, cfg.tx_type);
	WRITE_ONCE(priv->rx_tstamp, cfg.rx_filter);
	return copy_to_user(ifr->ifr_data, &cfg, sizeof(cfg)) ? -EFAULT : 0;
}

int vcx_en_hwtstamp_ioctl(struct net_device *ndev, struct ifreq *ifr, int cmd)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);
	struct hwtstamp_config cfg = {};

	switch (cmd) {
	case SIOCSHWTSTAMP:
		return vcx_en_hwtstamp_set(priv, ifr);
	case SIOCGHWTSTAMP:
		if (!vcx_clock_ready(priv->vdev))
			return -EOPNOTSUPP;
		cfg.tx_type = READ_ONCE(priv->tx_tstamp);
		cfg.rx_filter = READ_ONCE(priv->rx_tstamp);
		return copy_to_user(ifr->ifr_data, &cfg, sizeof(cfg)) ? -EFAULT : 0;
	default:
		return -EOPNOTSUPP;
	}
}

int vcx_en_get_ts_info(struct net_device *ndev, struct vcx_ethtool_ts_info *info)
{
	struct vcx_en_priv *priv = vcx_en_priv(ndev);

	info->so_timestamping = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE |
				SOF_TIMESTAMPING_SOFTWARE;
	info->phc_index = vcx_clock_index(priv->vdev);
	if (info->phc_index < 0)
		return 0;
	info->so_timestamping |= SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE |
				 SOF_TIMESTAMPING_RAW_HARDWARE;
	info->tx_types = BIT(HWTSTAMP_TX_OFF) | BIT(HWTSTAMP_TX_ON);
	info->rx_filters = BIT(HWTSTAMP_FILTER_NONE) | BIT(HWTSTAMP_FILTER_ALL);
	return 0;
}

/* A packet's CQE time: a received one's in the skb, a sent one's to its socket. */
void vcx_en_set_tstamp(struct vcx_en_priv *priv, const u8 *cqe, struct sk_buff *skb,
		       bool tx)
{
	struct skb_shared_hwtstamps hwts = {
		.hwtstamp = vcx_clock_cqe_time(priv->vdev, vcx_get64(cqe, VCX_CQE_TIMESTAMP)),
	};

	if (tx)
		skb_tstamp_tx(skb, &hwts);
	else
		*skb_hwtstamps(skb) = hwts;
}
