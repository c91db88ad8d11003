// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx.ko Ethernet: completion event moderation of the port netdev's CQs, static and
 * adaptive (the kernel's net DIM library), as mlx5e does it (en_dim.c, en_main.c).
 *
 * Defaults, chosen when the netdev is created (mlx5e_build_nic_params):
 * - Adaptive moderation on for RX and TX when the device can change a CQ's moderation and
 *   period mode on the fly (caps cq_moderation and cq_period_mode_modify).
 * - RX counts its period from the first CQE after an event when the device can
 *   (cap cq_period_start_from_cqe), else from the last event; TX from the last event.
 * - The starting values: DIM's default profile for the mode (lib/dim), or without DIM the
 *   static 16 us / 32 CQEs (RX from a CQE: 3 us / 32).
 *
 * Under DIM each CQ carries a struct dim. The channel's NAPI poll, once it completed and
 * before it re-arms the CQ, hands DIM a sample (completion events, packets and bytes of
 * the ring); when DIM picks another profile its work item sets the CQ's period, count and
 * mode with MODIFY_CQ. ethtool -C changes everything live with MODIFY_CQ (no channel
 * reopen), as mlx5e does since 6.12.
 */
#include "vcx_en.h"

/* lib/dim's default profile index in either mode (private to lib/dim in Linux 6.1). */
#define VCX_EN_DIM_DEF_PROFILE	1

struct vcx_en_coal vcx_en_default_coal(bool tx, bool dim, u8 mode)
{
	struct vcx_en_coal c = { .mode = mode };
	struct dim_cq_moder m;

	if (dim) {
		m = tx ? net_dim_get_def_tx_moderation(mode) : net_dim_get_def_rx_moderation(mode);
		c.usecs = m.usec;
		c.frames = m.pkts;
		return c;
	}
	c.usecs = !tx && mode == VCX_CQ_PERIOD_MODE_UPON_CQE ? VCX_EN_RX_COAL_USECS_FROM_CQE :
							      VCX_EN_COAL_USECS;
	c.frames = VCX_EN_COAL_FRAMES;
	return c;
}

void vcx_en_moderation_defaults(struct vcx_en_priv *priv)
{
	struct vcx_dev *vdev = priv->vdev;
	bool dim;
	u8 rx_mode;

	if (!vcx_get(vdev->caps.general, VCX_CAP_GEN_CQ_MODERATION))
		return;		/* all 0: an event per CQE */
	dim = vcx_get(vdev->caps.general, VCX_CAP_GEN_CQ_PERIOD_MODE_MODIFY);
	rx_mode = vcx_get(vdev->caps.general, VCX_CAP_GEN_CQ_PERIOD_START_FROM_CQE) ?
		  VCX_CQ_PERIOD_MODE_UPON_CQE : VCX_CQ_PERIOD_MODE_UPON_EVENT;
	priv->rx_dim = dim;
	priv->tx_dim = dim;
	priv->rx_coal = vcx_en_default_coal(false, dim, rx_mode);
	priv->tx_coal = vcx_en_default_coal(true, dim, VCX_CQ_PERIOD_MODE_UPON_EVENT);
}

/* DIM chose a profile: the CQ takes it (mlx5e_rx_dim_work, mlx5e_tx_dim_work). */
static void vcx_en_dim_work(struct work_struct *work)
{
	struct dim *dim = container_of(work, struct dim, work);
	struct vcx_en_cq *cq = dim->priv;
	struct vcx_en_priv *priv = cq->ch->priv;
	struct dim_cq_moder m;
	int err;

	m = cq->tx ? net_dim_get_tx_moderation(dim->mode, dim->profile_ix) :
		     net_dim_get_rx_moderation(dim->mode, dim->profile_ix);
	err = vcx_cq_modify_moderation(priv->vdev, cq->cqn, m.pkts, m.usec, dim->mode);
	if (err)
		netdev_warn_once(priv->netdev, "adaptive moderation of CQ 0x%x failed (%d)\n",
				 cq->cqn, err);
	dim->state = DIM_START_MEASURE;
}

/* At CQ creation, so that a CQ that never ran DIM can be stopped all the same. */
void vcx_en_dim_init(struct vcx_en_cq *cq)
{
	memset(&cq->dim, 0, sizeof(cq->dim));
	INIT_WORK(&cq->dim.work, vcx_en_dim_work);
	cq->dim.priv = cq;
	cq->dim_on = false;
}

/*
 * The CQ runs DIM from the default profile, in MODE: the caller has set the CQ to that
 * profile (at CREATE_CQ or by MODIFY_CQ). NAPI must not see dim_on before the state.
 */
void vcx_en_dim_start(struct vcx_en_cq *cq, u8 mode)
{
	struct dim *d = &cq->dim;

	/* A fresh measurement, as from mlx5e's zeroed allocation; the work item stays. */
	memset(&d->prev_stats, 0, sizeof(d->prev_stats));
	memset(&d->start_sample, 0, sizeof(d->start_sample));
	memset(&d->measuring_sample, 0, sizeof(d->measuring_sample));
	d->tune_state = 0;
	d->steps_right = 0;
	d->steps_left = 0;
	d->tired = 0;
	d->mode = mode;
	d->profile_ix = VCX_EN_DIM_DEF_PROFILE;
	d->state = DIM_START_MEASURE;
	smp_store_release(&cq->dim_on, true);
}

/*
 * No sample after this, and no profile change running or pending. NAPI_OFF: the channel's
 * NAPI is disabled (closing), so no poll can be inside net_dim(); else wait for one.
 */
void vcx_en_dim_stop(struct vcx_en_cq *cq, bool napi_off)
{
	if (!cq->dim.priv)
		return;		/* never created */
	if (READ_ONCE(cq->dim_on)) {
		WRITE_ONCE(cq->dim_on, false);
		if (!napi_off)
			synchronize_net();
	}
	cancel_work_sync(&cq->dim.work);
}

/* NAPI completed: DIM's sample for the CQ about to be re-armed (mlx5e_handle_rx_dim). */
void vcx_en_dim_sample(struct vcx_en_cq *cq, struct vcx_en_ring_stats *stats)
{
	struct dim_sample sample;

	if (!smp_load_acquire(&cq->dim_on))
		return;
	dim_update_sample(cq->event_ctr, stats->packets, stats->bytes, &sample);
	net_dim(&cq->dim, sample);
}

/*
 * The open channels' CQs of one kind take priv's moderation now: DIM stops, MODIFY_CQ sets
 * the values and the period mode, and DIM starts again if it is on (state_lock held).
 */
int vcx_en_apply_moderation(struct vcx_en_priv *priv, bool tx)
{
	const struct vcx_en_coal *c = tx ? &priv->tx_coal : &priv->rx_coal;
	bool dim = tx ? priv->tx_dim : priv->rx_dim;
	int i, err = 0;

	for (i = 0; i < priv->open_channels && !err; i++) {
		struct vcx_en_channel *ch = &priv->channels[i];
		struct vcx_en_cq *cq = tx ? &ch->sq.cq : &ch->rq.cq;

		if (!cq->created)
			continue;
		vcx_en_dim_stop(cq, false);
		err = vcx_cq_modify_moderation(priv->vdev, cq->cqn, c->frames, c->usecs, c->mode);
		if (!err && dim)
			vcx_en_dim_start(cq, c->mode);
	}
	return err;
}
