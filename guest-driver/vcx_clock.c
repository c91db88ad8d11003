// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: the device's internal timer as a PTP hardware clock, and the conversion of CQE
 * timestamps to time, as mlx5_core's clock does for a ConnectX in free-running mode.
 *
 * The timer (init segment 0x1000 high, 0x1004 low) counts at device_frequency_khz. A
 * timecounter over its low 41 bits turns counts into nanoseconds; adjfine changes the
 * multiplier, adjtime and settime move the timecounter: the timer itself is never set
 * (no MTUTC), so all adjustment is in software, as mlx5 does without real-time mode. A
 * delayed work reads the timer well within the counter's wrap. A device reporting 0 kHz
 * has no clock: no PHC, and timestamps are not offered (vcx_clock_ready false).
 */
#include <linux/clocksource.h>
#include <linux/math64.h>
#include <linux/ptp_clock_kernel.h>
#include <linux/timecounter.h>

#include "vcx.h"

#define VCX_CLOCK_MASK_BITS	41	/* as mlx5: wraps in about 36 min at 1 GHz */
#define VCX_CLOCK_SHIFT		23
#define VCX_CLOCK_MAX_ADJ_PPB	50000000

/* The timer, read high, low, high so that a carry between the reads is seen. */
u64 vcx_clock_read_timer(struct vcx_dev *vdev)
{
	u32 hi, lo, hi2;

	hi = vcx_iseg_read(vdev, VCX_ISEG_INTERNAL_TIMER_H);
	lo = vcx_iseg_read(vdev, VCX_ISEG_INTERNAL_TIMER_L);
	hi2 = vcx_iseg_read(vdev, VCX_ISEG_INTERNAL_TIMER_H);
	if (hi != hi2) {
		hi = hi2;
		lo = vcx_iseg_read(vdev, VCX_ISEG_INTERNAL_TIMER_L);
	}
	return (u64)hi << 32 | lo;
}

static u64 vcx_clock_cc_read(const struct cyclecounter *cc)
{
	struct vcx_clock *clock = container_of(cc, struct vcx_clock, cycles);

	return vcx_clock_read_timer(clock->vdev) & cc->mask;
}

bool vcx_clock_ready(struct vcx_dev *vdev)
{
	return vdev->clock.ptp != NULL;
}

/* A CQE's 64-bit timestamp as time of the PHC. */
ktime_t vcx_clock_cqe_time(struct vcx_dev *vdev, u64 timestamp)
{
	struct vcx_clock *clock = &vdev->clock;
	unsigned long flags;
	u64 ns;

	spin_lock_irqsave(&clock->lock, flags);
	ns = timecounter_cyc2time(&clock->tc, timestamp & clock->cycles.mask);
	spin_unlock_irqrestore(&clock->lock, flags);
	return ns_to_ktime(ns);
}

static int vcx_ptp_gettimex(struct ptp_clock_info *info, struct timespec64 *ts,
			    struct ptp_system_timestamp *sts)
{
	struct vcx_clock *clock = container_of(info, struct vcx_clock, info);
	unsigned long flags;
	u64 ns;

	spin_lock_irqsave(&clock->lock, flags);
	ptp_read_system_prets(sts);
	ns = timecounter_read(&clock->tc);
	ptp_read_system_postts(sts);
	spin_unlock_irqrestore(&clock->lock, flags);
	*ts = ns_to_timespec64(ns);
	return 0;
}

static int vcx_ptp_settime(struct ptp_clock_info *info, const struct timespec64 *ts)
{
	struct vcx_clock *clock = container_of(info, struct vcx_clock, info);
	unsigned long flags;

	spin_lock_irqsave(&clock->lock, flags);
	timecounter_init(&clock->tc, &clock->cycles, timespec64_to_ns(ts));
	spin_unlock_irqrestore(&clock->lock, flags);
	return 0;
}

static int vcx_ptp_adjtime(struct ptp_clock_info *info, s64 delta)
{
	struct vcx_clock *clock = container_of(info, struct vcx_clock, info);
	unsigned long flags;

	spin_lock_irqsave(&clock->lock, flags);
	timecounter_adjtime(&clock->tc, delta);
	spin_unlock_irqrestore(&clock->lock, flags);
	return 0;
}

/* scaled_ppm: parts per million with a 16-bit fraction (ptp_clock_info.adjfine) */
static int vcx_ptp_adjfine(struct ptp_clock_info *info, long scaled_ppm)
{
	struct vcx_clock *clock = container_of(info, struct vcx_clock, info);
	u64 diff = div64_u64((u64)clock->nominal_mult * abs(scaled_ppm), 1000000ULL << 16);
	unsigned long flags;

	spin_lock_irqsave(&clock->lock, flags);
	timecounter_read(&clock->tc);	/* the time so far at the old rate */
	clock->cycles.mult = scaled_ppm < 0 ? clock->nominal_mult - diff :
					      clock->nominal_mult + diff;
	spin_unlock_irqrestore(&clock->lock, flags);
	return 0;
}

static int vcx_ptp_enable(struct ptp_clock_info *info, struct ptp_clock_request *rq,
			  int on)
{
	return -EOPNOTSUPP;	/* no pins, no periodic output, no external timestamps */
}

static void vcx_clock_overflow_work(struct work_struct *work)
{
	struct vcx_clock *clock = container_of(work, struct vcx_clock, overflow.work);
	unsigned long flags;

	spin_lock_irqsave(&clock->lock, flags);
	timecounter_read(&clock->tc);
	spin_unlock_irqrestore(&clock->lock, flags);
	schedule_delayed_work(&clock->overflow, clock->overflow_period);
}

void vcx_clock_init(struct vcx_dev *vdev)
{
	struct vcx_clock *clock = &vdev->clock;
	u32 khz = vcx_get(vdev->caps.general, VCX_CAP_GEN_DEVICE_FREQUENCY_KHZ);
	u64 overflow_cycles, ns;

	memset(clock, 0, sizeof(*clock));
	clock->vdev = vdev;
	if (!khz) {
		dev_info(vcx_dev(vdev), "device_frequency_khz is 0: no hardware clock\n");
		return;
	}
	spin_lock_init(&clock->lock);
	clock->cycles.read = vcx_clock_cc_read;
	clock->cycles.mask = CLOCKSOURCE_MASK(VCX_CLOCK_MASK_BITS);
	clock->cycles.shift = VCX_CLOCK_SHIFT;
	clock->cycles.mult = clocksource_khz2mult(khz, VCX_CLOCK_SHIFT);
	clock->nominal_mult = clock->cycles.mult;
	timecounter_init(&clock->tc, &clock->cycles, ktime_to_ns(ktime_get_real()));

	/* read well before the counter wraps: at most a third of its span, as mlx5 */
	overflow_cycles = min(div64_u64(~0ULL >> 1, clock->cycles.mult),
			      div_u64(clock->cycles.mask, 3));
	ns = cyclecounter_cyc2ns(&clock->cycles, overflow_cycles, 0, &(u64){ 0 });
	clock->overflow_period = max(1UL, nsecs_to_jiffies(ns));
	INIT_DELAYED_WORK(&clock->overflow, vcx_clock_overflow_work);

	clock->info = (struct ptp_clock_info){
		.owner = THIS_MODULE,
		.name = "vcx_ptp",
		.max_adj = VCX_CLOCK_MAX_ADJ_PPB,
		.adjfine = vcx_ptp_adjfine,
		.adjtime = vcx_ptp_adjtime,
		.gettimex64 = vcx_ptp_gettimex,
		.settime64 = vcx_ptp_settime,
		.enable = vcx_ptp_enable,
	};
	clock->ptp = ptp_clock_register(&clock->info, vcx_dev(vdev));
	if (IS_ERR_OR_NULL(clock->ptp)) {
		dev_warn(vcx_dev(vdev), "no PTP clock (%d)\n", PTR_ERR_OR_ZERO(clock->ptp));
		clock->ptp = NULL;
		return;
	}
	schedule_delayed_work(&clock->overflow, clock->overflow_period);
}

void vcx_clock_cleanup(struct vcx_dev *vdev)
{
	struct vcx_clock *clock = &vdev->clock;

	if (!clock->ptp)
		return;
	cancel_delayed_work_sync(&clock->overflow);
	ptp_clock_unregister(clock->ptp);
	clock->ptp = NULL;
}

int vcx_clock_index(struct vcx_dev *vdev)
{
	return vdev->clock.ptp ? ptp_clock_index(vdev->clock.ptp) : -1;
}
