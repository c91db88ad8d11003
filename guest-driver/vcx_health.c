// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx: firmware health (PRM "Health Buffer", init segment health counter).
 *
 * Every 2 s a timer reads the health counter and the health buffer, as mlx5_core's
 * poll_health() does:
 *  - fw_ver reading all ones means the device has gone from the bus: fatal;
 *  - a health syndrome with the reset-firmware-required bit, or reported valid with a
 *    severity of critical or worse, is a fatal firmware error;
 *  - a counter that has not moved for three polls is reported once (firmware may be
 *    stuck), without changing state.
 *
 * A fatal error puts the function in the error state: it is reported once with the
 * syndrome, ext_synd and firmware version, commands in flight are completed with -EIO
 * and new ones fail at once with -EIO. The driver stays bound; unbinding it (or a PCI
 * function reset, which runs reset_prepare/reset_done) tears everything down without
 * waiting for firmware. Recovery is by function reset: see docs/driver.md.
 */
#include <linux/jiffies.h>
#include <linux/timer.h>

#include "vcx.h"

static const char *vcx_health_synd_str(u8 synd)
{
	switch (synd) {
	case VCX_HEALTH_SYND_FW_ERR:		return "firmware internal error";
	case VCX_HEALTH_SYND_IRISC_ERR:		return "iRISC not responding";
	case VCX_HEALTH_SYND_HW_INTERNAL_ERR:	return "hardware internal error";
	case VCX_HEALTH_SYND_CRC_ERR:		return "firmware CRC error";
	case VCX_HEALTH_SYND_ICM_FETCH_PCI_ERR:	return "ICM fetch PCI error";
	case VCX_HEALTH_SYND_ICM_PAGE_ERR:	return "ICM page error";
	case VCX_HEALTH_SYND_ASYNC_EQ_OVERRUN:	return "async EQ buffer overrun";
	case VCX_HEALTH_SYND_EQ_IN_ERR:		return "EQ error";
	case VCX_HEALTH_SYND_EQ_INV:		return "invalid EQ referenced";
	case VCX_HEALTH_SYND_FFSER_ERR:		return "FFSER error";
	case VCX_HEALTH_SYND_HIGH_TEMP_ERR:	return "high temperature";
	case VCX_HEALTH_SYND_ICM_PCI_POISONED:	return "ICM PCI poisoned error";
	default:				return "unrecognized error";
	}
}

static u32 vcx_health_read(struct vcx_dev *vdev, u32 offset)
{
	return vcx_iseg_read(vdev, VCX_ISEG_HEALTH + offset);
}

/* The firmware revision, as mlx5_core prints it: from the init segment, read now. */
static void vcx_health_fw_rev(struct vcx_dev *vdev, u32 *maj, u32 *min, u32 *sub)
{
	u32 rev = vcx_iseg_read(vdev, VCX_ISEG_FW_REV);
	u32 cmdif = vcx_iseg_read(vdev, VCX_ISEG_CMDIF_REV_FW_SUB);

	*maj = rev & 0xffff;
	*min = rev >> 16;
	*sub = cmdif & 0xffff;
}

/* The health buffer, as one report. */
void vcx_health_print(struct vcx_dev *vdev)
{
	u32 sev = vcx_health_read(vdev, VCX_HEALTH_RFR_SEVERITY);
	u32 irisc = vcx_health_read(vdev, VCX_HEALTH_IRISC_SYND_EXT);
	u8 synd = (irisc >> VCX_HEALTH_SYND_SHIFT) & VCX_HEALTH_SYND_MASK;
	u32 maj, min, sub;

	vcx_health_fw_rev(vdev, &maj, &min, &sub);
	dev_err(vcx_dev(vdev),
		"health: syndrome 0x%02x (%s), ext_synd 0x%04x, irisc_index %u, severity %u%s, rfr %u, fw_ver %u.%u.%u (health buffer 0x%08x), hw_id 0x%08x, assert_exit_ptr 0x%08x, assert_callra 0x%08x, time %u\n",
		synd, vcx_health_synd_str(synd), irisc & VCX_HEALTH_EXT_SYND_MASK, irisc >> 24,
		(sev >> VCX_HEALTH_SEVERITY_SHIFT) & VCX_HEALTH_SEVERITY_MASK,
		sev & VCX_HEALTH_SEVERITY_VALID ? "" : " (not valid)",
		!!(sev & VCX_HEALTH_RFR_BIT), maj, min, sub,
		vcx_health_read(vdev, VCX_HEALTH_FW_VER),
		vcx_health_read(vdev, VCX_HEALTH_HW_ID),
		vcx_health_read(vdev, VCX_HEALTH_ASSERT_EXIT_PTR),
		vcx_health_read(vdev, VCX_HEALTH_ASSERT_CALLRA),
		vcx_health_read(vdev, VCX_HEALTH_TIME));
}

/*
 * Enter the error state once: commands in flight complete with -EIO, later ones fail at
 * once; kernel verbs consumers are woken to collect their flush completions and get
 * IB_EVENT_DEVICE_FATAL (vcx_ib_fatal). Safe from the timer and from process context:
 * everything below takes IRQ-safe spinlocks only.
 */
void vcx_enter_error_state(struct vcx_dev *vdev, const char *reason)
{
	if (cmpxchg(&vdev->state, VCX_DEV_STATE_UP, VCX_DEV_STATE_INTERNAL_ERROR) !=
	    VCX_DEV_STATE_UP)
		return;
	dev_err(vcx_dev(vdev), "device is in error state (%s): commands fail until the function is reset\n",
		reason);
	vcx_cmd_trigger_completions(vdev);
	vcx_ib_fatal(vdev);
}

/* A fatal condition, or NULL. */
static const char *vcx_health_check_fatal(struct vcx_dev *vdev, u8 *synd, u16 *ext_synd)
{
	u32 sev, irisc;

	if (vcx_health_read(vdev, VCX_HEALTH_FW_VER) == 0xffffffff)
		return "device not responding on PCI";
	irisc = vcx_health_read(vdev, VCX_HEALTH_IRISC_SYND_EXT);
	*synd = (irisc >> VCX_HEALTH_SYND_SHIFT) & VCX_HEALTH_SYND_MASK;
	*ext_synd = irisc & VCX_HEALTH_EXT_SYND_MASK;
	if (!*synd)
		return NULL;
	sev = vcx_health_read(vdev, VCX_HEALTH_RFR_SEVERITY);
	if (sev & VCX_HEALTH_RFR_BIT)
		return "firmware requests a reset";
	if ((sev & VCX_HEALTH_SEVERITY_VALID) &&
	    ((sev >> VCX_HEALTH_SEVERITY_SHIFT) & VCX_HEALTH_SEVERITY_MASK) <=
	    VCX_HEALTH_SEVERITY_CRIT)
		return "critical firmware error";
	return NULL;
}

/*
 * One health check: a fatal condition is reported and enters the error state (true);
 * a stuck counter is reported once.
 */
bool vcx_health_check(struct vcx_dev *vdev)
{
	struct vcx_health *health = &vdev->health;
	const char *fatal;
	u16 ext_synd = 0;
	u8 synd = 0;
	u32 count;

	if (vcx_in_error(vdev))
		return true;	/* reported once; nothing more to watch */

	fatal = vcx_health_check_fatal(vdev, &synd, &ext_synd);
	if (fatal) {
		bool gone = vcx_health_read(vdev, VCX_HEALTH_FW_VER) == 0xffffffff;
		u32 maj, min, sub;

		if (gone) {
			maj = vdev->fw_major;
			min = vdev->fw_minor;
			sub = vdev->fw_subminor;
		} else {
			vcx_health_fw_rev(vdev, &maj, &min, &sub);
		}
		dev_err(vcx_dev(vdev),
			"firmware fatal error: syndrome 0x%02x (%s), ext_synd 0x%04x, fw_ver %u.%u.%u: %s\n",
			synd, vcx_health_synd_str(synd), ext_synd, maj, min, sub, fatal);
		if (!gone)
			vcx_health_print(vdev);
		vcx_enter_error_state(vdev, fatal);
		return true;
	}

	count = vcx_iseg_read(vdev, VCX_ISEG_HEALTH_COUNTER) & VCX_ISEG_HEALTH_COUNTER_MASK;
	if (count == health->prev_counter) {
		if (++health->miss_count >= VCX_HEALTH_MAX_MISSES && !health->stuck_reported) {
			dev_err(vcx_dev(vdev),
				"health counter stuck at 0x%06x for %u polls: device health compromised\n",
				count, health->miss_count);
			vcx_health_print(vdev);
			health->stuck_reported = true;
		}
	} else {
		if (health->stuck_reported)
			dev_info(vcx_dev(vdev), "health counter moves again\n");
		health->miss_count = 0;
		health->stuck_reported = false;
	}
	health->prev_counter = count;
	return false;
}

static void vcx_health_poll(struct timer_list *t)
{
	struct vcx_dev *vdev = from_timer(vdev, t, health.timer);

	if (vcx_health_check(vdev))
		return;
	mod_timer(&vdev->health.timer,
		  round_jiffies(jiffies + msecs_to_jiffies(VCX_HEALTH_POLL_MS)));
}

void vcx_health_start(struct vcx_dev *vdev)
{
	struct vcx_health *health = &vdev->health;

	health->prev_counter = vcx_iseg_read(vdev, VCX_ISEG_HEALTH_COUNTER) &
			       VCX_ISEG_HEALTH_COUNTER_MASK;
	health->miss_count = 0;
	health->stuck_reported = false;
	timer_setup(&health->timer, vcx_health_poll, 0);
	mod_timer(&health->timer, round_jiffies(jiffies + msecs_to_jiffies(VCX_HEALTH_POLL_MS)));
	health->polling = true;
}

void vcx_health_stop(struct vcx_dev *vdev)
{
	struct vcx_health *health = &vdev->health;

	if (!health->polling)
		return;
	del_timer_sync(&health->timer);
	health->polling = false;
}
