/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vcx: the one hardware header of the driver.
 *
 * The device interface proper (init segment, command layouts, EQEs) lives in the shared
 * PRM headers under include/vcx/; this file adds the few driver-side constants those
 * headers do not carry (driver policy values such as queue sizes and timeouts, and PRM
 * fields the shared headers lack), each restating the ConnectX PRM / mlx5 driver facts.
 */
#ifndef VCX_HW_H
#define VCX_HW_H

#include <linux/bits.h>

#include "vcx/prm-iseg.h"
#include "vcx/prm.h"
#include "vcx/prm-cmd.h"
#include "vcx/prm-obj.h"

/* Init segment 0x1fc: [23] embedded_cpu (PRM "Initialization Segment"). */
#define VCX_ISEG_EMBEDDED_CPU_BIT	BIT(23)

/* Health buffer 0x38 (rfr_severity): [31] rfr, [27] valid, [26:24] severity. */
#define VCX_HEALTH_SEVERITY_VALID	BIT(27)
#define VCX_HEALTH_SEVERITY_SHIFT	24
#define VCX_HEALTH_SEVERITY_MASK	0x7u
/* Syslog-style severities, as the health buffer reports them. */
#define VCX_HEALTH_SEVERITY_CRIT	2
/* Health buffer 0x3c: [31:24] irisc_index, [23:16] synd, [15:0] ext_synd. */
#define VCX_HEALTH_SYND_SHIFT		16
#define VCX_HEALTH_SYND_MASK		0xffu
#define VCX_HEALTH_EXT_SYND_MASK	0xffffu
/* Other health syndromes of the PRM "Health Buffer" table. */
#define VCX_HEALTH_SYND_MULT_BIT_ERR	0x02	/* multi-bit ECC error */
#define VCX_HEALTH_SYND_ECC_ERR		0x03	/* uncorrectable ECC error */
#define VCX_HEALTH_SYND_RAM_PARITY_ERR	0x04
#define VCX_HEALTH_SYND_ICM_ERR		0x05	/* ICM fetch PCI error */
#define VCX_HEALTH_SYND_HW_UNRECOVERABLE	0x06
#define VCX_HEALTH_SYND_RESET_STALL	0x0a	/* HW reset stall */

/* Command queue: at most 32 entries (one doorbell bit each). */
#define VCX_CMDQ_MAX_ENTRIES		32
#define VCX_CMDQ_PAGE_SIZE		4096u

/* Default timeouts (ms), as mlx5_core's software defaults. */
#define VCX_CMD_TIMEOUT_MS		60000
#define VCX_FW_PRE_INIT_TIMEOUT_MS	120000
#define VCX_FW_INIT_TIMEOUT_MS		2000
#define VCX_HEALTH_POLL_MS		2000
#define VCX_PAGE_RECLAIM_TIMEOUT_MS	5000
#define VCX_HEALTH_MAX_MISSES		3

/* EQ sizes: entries asked for plus the 128-entry spare budget (consumer index is
 * published at least every VCX_EQ_CI_UPDATE_BATCH EQEs). */
#define VCX_EQ_SPARE_ENTRIES		128
#define VCX_EQ_CI_UPDATE_BATCH		128
#define VCX_CTRL_EQ_ENTRIES		(256 + VCX_EQ_SPARE_ENTRIES)
#define VCX_COMP_EQ_ENTRIES		(1024 + VCX_EQ_SPARE_ENTRIES)
/* EQ numbers firmware keeps for itself when max_num_eqs is 0 (log_max_eq form). */
#define VCX_FW_RESERVED_EQS		16

/* MANAGE_PAGES: page addresses per command (8 bytes each; a few mailboxes). */
#define VCX_MAX_PAGES_PER_CMD		512u

/* QUERY_ISSI supported_issi bits we understand. */
#define VCX_ISSI_0			BIT(0)
#define VCX_ISSI_1			BIT(1)

/* SET_HCA_CAP policy (mlx5_core's profile): log_max_qp at most 18. */
#define VCX_PROF_LOG_MAX_QP		18

/* Driver policy */
#define VCX_IB_PORT			1
#define VCX_UCTX_DEFAULT_UARS		1
#define VCX_UCTX_MAX_UARS		16

#endif /* VCX_HW_H */
