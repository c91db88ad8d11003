/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vcx: driver policy of vcx.ko, and the shared device interface it is built on.
 *
 * Every hardware layout and constant (init segment, health buffer, command layouts,
 * capabilities, object contexts, EQEs, WQEs and CQEs) comes from the PRM headers under
 * include/vcx/, which the QEMU device and the rdma-core provider compile too: a PRM
 * field or value the driver needs and they lack is added there, never here. This file
 * keeps only what is the driver's own choice: queue sizes, timeouts, the SET_HCA_CAP
 * profile and the like, each following mlx5_core's defaults where it has one.
 */
#ifndef VCX_HW_H
#define VCX_HW_H

#include "vcx/prm-iseg.h"
#include "vcx/prm.h"
#include "vcx/prm-cmd.h"
#include "vcx/prm-obj.h"
#include "vcx/prm-nic.h"

/* Command queue the driver sets up: at most 32 entries (one doorbell bit each), all in
 * one 4 KiB page. */
#define VCX_CMDQ_MAX_ENTRIES		32
#define VCX_CMDQ_PAGE_SIZE		4096u

/* Default timeouts (ms), as mlx5_core's software defaults. */
#define VCX_CMD_TIMEOUT_MS		60000
#define VCX_FW_PRE_INIT_TIMEOUT_MS	120000
#define VCX_FW_INIT_TIMEOUT_MS		2000
#define VCX_HEALTH_POLL_MS		2000
#define VCX_PAGE_RECLAIM_TIMEOUT_MS	5000
#define VCX_HEALTH_MAX_MISSES		3

/* EQ sizes: entries asked for plus the 128-entry spare budget (the consumer index is
 * published at least every VCX_EQ_POLLING_BUDGET EQEs, once per interrupt). */
#define VCX_EQ_SPARE_ENTRIES		128
#define VCX_EQ_POLLING_BUDGET		128
#define VCX_CTRL_EQ_ENTRIES		(256 + VCX_EQ_SPARE_ENTRIES)
#define VCX_COMP_EQ_ENTRIES		(1024 + VCX_EQ_SPARE_ENTRIES)
/* EQ numbers firmware keeps for itself when max_num_eqs is 0 (log_max_eq form). */
#define VCX_FW_RESERVED_EQS		16

/* MANAGE_PAGES: page addresses per command (8 bytes each; a few mailboxes). */
#define VCX_MAX_PAGES_PER_CMD		512u

/* SET_HCA_CAP policy (mlx5_core's profile): log_max_qp at most 18. */
#define VCX_PROF_LOG_MAX_QP		18

/* Verbs: the one RoCE port, UARs per user context. */
#define VCX_IB_PORT			1
#define VCX_UCTX_DEFAULT_UARS		1
#define VCX_UCTX_MAX_UARS		16

#endif /* VCX_HW_H */
