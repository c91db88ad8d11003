/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vcx: driver-private state and the interfaces between the driver's files.
 *
 *   vcx_main.c       PCI probe/remove/shutdown/reset, load and unload orchestration
 *   vcx_cmdq.c       command queue: entries, mailboxes, polling and event completion,
 *                    timeouts, delivery status and command status -> errno
 *   vcx_fw.c         firmware commands of the bring-up: ENABLE/DISABLE_HCA, ISSI,
 *                    capabilities, INIT/TEARDOWN_HCA, adapter, UAR
 *   vcx_pagealloc.c  firmware pages: boot/init supply, page request events, reclaim
 *   vcx_eq.c         MSI-X vectors, control and completion EQs, EQE dispatch, doorbells
 *   vcx_health.c     health buffer polling, fatal error state
 *   en/vcx_en_*.c    the port's Ethernet netdev (mlx5e-like): see en/vcx_en.h
 *   vcx_ib.c ...     RDMA verbs: see vcx_verbs.h
 */
#ifndef VCX_H
#define VCX_H

#include <linux/completion.h>
#include <linux/interrupt.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/semaphore.h>
#include <linux/ptp_clock_kernel.h>
#include <linux/spinlock.h>
#include <linux/timecounter.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "vcx_hw.h"

#define VCX_DRV_NAME "vcx"

/* ------------------------------------------------------------------------------------
 * Command queue (vcx_cmdq.c)
 */
struct vcx_cmd_mbox {
	struct vcx_cmd_mbox *next;
	void *buf;			/* VCX_MBOX_SIZE bytes from the mailbox pool */
	dma_addr_t dma;
};

enum vcx_cmd_ent_state {
	VCX_CMD_ENT_FREE,
	VCX_CMD_ENT_INFLIGHT,		/* owned by the device, a caller waits */
	VCX_CMD_ENT_DONE,		/* completion seen (EQE), caller not yet back */
	VCX_CMD_ENT_STALE,		/* caller gave up (timeout, error state); the device
					 * may still own it: not reused until it is given back */
};

struct vcx_cmd_ent {
	u8 idx;
	u8 token;
	u16 opcode;
	enum vcx_cmd_ent_state state;
	int forced_err;			/* set when the error state aborts the command */
	struct completion done;
	struct vcx_cmd_mbox *in_mb;
	struct vcx_cmd_mbox *out_mb;
};

enum vcx_cmd_mode {
	VCX_CMD_MODE_POLLING,
	VCX_CMD_MODE_EVENTS,
};

struct vcx_cmdq {
	void *buf;			/* one 4 KiB DMA-coherent page */
	dma_addr_t dma;
	u8 log_size;
	u8 log_stride;
	u8 max_reg_cmds;		/* entries 0..max_reg_cmds-1; the last one is for pages */
	u8 token;
	enum vcx_cmd_mode mode;
	unsigned long timeout;		/* jiffies */
	struct dma_pool *mbox_pool;
	spinlock_t lock;		/* entry states, busy bitmap, token */
	unsigned long busy;		/* bitmap of entries in use (incl. stale) */
	struct semaphore sem;		/* free regular entries */
	struct semaphore pages_sem;	/* the page-management entry */
	struct vcx_cmd_ent ent[VCX_CMDQ_MAX_ENTRIES];
};

/* ------------------------------------------------------------------------------------
 * Event queues (vcx_eq.c)
 */
struct vcx_dev;

struct vcx_eq {
	struct vcx_dev *vdev;
	void *buf;
	dma_addr_t dma;
	size_t size;			/* bytes */
	u8 log_nent;
	u8 eqn;
	u16 vecidx;			/* MSI-X vector */
	u32 cons_index;
	bool created;			/* exists on the device */
	bool irq_requested;
	char irq_name[32];
	unsigned long events;		/* EQEs consumed, for debugging */
};

/* ------------------------------------------------------------------------------------
 * Firmware pages (vcx_pagealloc.c)
 */
struct vcx_pages {
	struct xarray pages;		/* device address >> 12 -> struct vcx_fw_page */
	u32 given;			/* pages the device holds from us */
	struct workqueue_struct *wq;	/* page request events */
	bool accept_requests;
};

/* ------------------------------------------------------------------------------------
 * Health (vcx_health.c)
 */
struct vcx_health {
	struct timer_list timer;
	bool polling;
	u32 prev_counter;
	unsigned int miss_count;
	bool stuck_reported;
};

enum vcx_dev_state {
	VCX_DEV_STATE_UP,
	VCX_DEV_STATE_INTERNAL_ERROR,	/* fatal firmware error: commands fail with -EIO */
};

struct vcx_caps {
	u8 general[VCX_HCA_CAP_SIZE];	/* current values after INIT_HCA */
	u8 roce[VCX_HCA_CAP_SIZE];
	u8 eth[VCX_HCA_CAP_SIZE];	/* ETHERNET_OFFLOADS, with eth_net_offloads */
};

/* The internal timer as a PTP clock (vcx_clock.c). */
struct vcx_clock {
	struct vcx_dev *vdev;
	spinlock_t lock;		/* the timecounter and the multiplier */
	struct cyclecounter cycles;
	struct timecounter tc;
	u32 nominal_mult;
	struct delayed_work overflow;
	unsigned long overflow_period;	/* jiffies */
	struct ptp_clock_info info;
	struct ptp_clock *ptp;		/* NULL: no clock (device_frequency_khz 0) */
};

struct vcx_dev {
	struct pci_dev *pdev;
	void __iomem *iseg;		/* BAR0 offset 0: the initialization segment */
	u16 fw_major, fw_minor, fw_subminor;
	u16 cmdif_rev;
	bool embedded_cpu;

	enum vcx_dev_state state;
	struct mutex load_lock;		/* load/unload vs reset_prepare/reset_done */
	bool loaded;			/* the function is up (vcx_load succeeded) */

	struct vcx_cmdq cmd;
	struct vcx_health health;
	struct vcx_pages pages;
	struct vcx_caps caps;
	u16 issi;
	bool hca_enabled;
	bool hca_initialized;
	char board_id[VCX_ADAPTER_PSID_LEN + 1];

	/* Kernel UAR: EQ doorbells. */
	u32 uar_index;
	bool uar_allocated;
	void __iomem *uar;

	/* Interrupts and EQs. */
	int num_vectors;
	struct vcx_eq ctrl_eq;		/* vector 0: commands, page requests, async events */
	struct vcx_eq *comp_eqs;	/* vectors 1..num_comp_eqs */
	int num_comp_eqs;

	/* RDMA (vcx_ib.c): objects by number for EQE dispatch (IRQ-safe xarrays), and the
	 * ib_device while registered (ib_lock: port events vs registration). */
	struct xarray cq_table;
	struct xarray qp_table;
	struct xarray srq_table;
	struct vcx_ib_dev *ib;
	spinlock_t ib_lock;

	/* The port's netdev (en/): created before the ib_device, removed after it; read
	 * under ib_lock by port events. Its CQs by number for completion EQEs. */
	struct net_device *netdev;
	struct xarray en_cq_table;

	struct vcx_clock clock;
};

static inline struct device *vcx_dev(struct vcx_dev *vdev)
{
	return &vdev->pdev->dev;
}

static inline u32 vcx_iseg_read(struct vcx_dev *vdev, u32 offset)
{
	return ioread32be(vdev->iseg + offset);
}

static inline void vcx_iseg_write(struct vcx_dev *vdev, u32 offset, u32 value)
{
	iowrite32be(value, vdev->iseg + offset);
}

static inline bool vcx_in_error(struct vcx_dev *vdev)
{
	return READ_ONCE(vdev->state) == VCX_DEV_STATE_INTERNAL_ERROR;
}

/* vcx_cmdq.c */
int vcx_cmdq_init(struct vcx_dev *vdev);
void vcx_cmdq_cleanup(struct vcx_dev *vdev);
void vcx_cmd_use_events(struct vcx_dev *vdev);
void vcx_cmd_use_polling(struct vcx_dev *vdev);
void vcx_cmd_comp_handler(struct vcx_dev *vdev, u32 vector);
void vcx_cmd_trigger_completions(struct vcx_dev *vdev);
int vcx_cmd_exec(struct vcx_dev *vdev, const void *in, unsigned int inlen, void *out,
		 unsigned int outlen);
const char *vcx_cmd_opcode_str(u16 opcode);

/*
 * vcx_cq.c, for the RDMA and the Ethernet CQs alike (mlx5_core_modify_cq_moderation and
 * mlx5e_modify_cq_moderation): period_mode VCX_CQ_PERIOD_MODE_*, or VCX_CQ_PERIOD_MODE_KEEP.
 */
#define VCX_CQ_PERIOD_MODE_KEEP	(-1)
int vcx_cq_modify_moderation(struct vcx_dev *vdev, u32 cqn, u16 cq_count, u16 cq_period,
			     int period_mode);

/* vcx_fw.c */
int vcx_wait_fw_init(struct vcx_dev *vdev, unsigned int timeout_ms);
int vcx_fw_enable_hca(struct vcx_dev *vdev);
int vcx_fw_disable_hca(struct vcx_dev *vdev);
int vcx_fw_set_issi(struct vcx_dev *vdev);
int vcx_fw_set_host_endianness(struct vcx_dev *vdev);
int vcx_fw_set_hca_caps(struct vcx_dev *vdev);
int vcx_fw_init_hca(struct vcx_dev *vdev);
int vcx_fw_teardown_hca(struct vcx_dev *vdev);
int vcx_fw_query_caps(struct vcx_dev *vdev);
int vcx_fw_query_adapter(struct vcx_dev *vdev);
int vcx_fw_alloc_uar(struct vcx_dev *vdev);
void vcx_fw_dealloc_uar(struct vcx_dev *vdev);
int vcx_query_ppcnt(struct vcx_dev *vdev, u32 grp, u8 *reg);
u8 *vcx_query_vport_counter(struct vcx_dev *vdev);

/* One traffic_counter (packets, octets) of the vport counter set at byte offset at. */
static inline u64 vcx_vport_cnt(const u8 *out, u32 at, bool octets)
{
	return vcx_get64(out + at, octets ? VCX_TRAFFIC_CNT_OCTETS : VCX_TRAFFIC_CNT_PACKETS);
}

/* vcx_clock.c */
void vcx_clock_init(struct vcx_dev *vdev);
void vcx_clock_cleanup(struct vcx_dev *vdev);
bool vcx_clock_ready(struct vcx_dev *vdev);
u64 vcx_clock_read_timer(struct vcx_dev *vdev);
ktime_t vcx_clock_cqe_time(struct vcx_dev *vdev, u64 timestamp);
int vcx_clock_index(struct vcx_dev *vdev);

/* vcx_pagealloc.c */
int vcx_pagealloc_init(struct vcx_dev *vdev);
void vcx_pagealloc_cleanup(struct vcx_dev *vdev);
int vcx_satisfy_startup_pages(struct vcx_dev *vdev, bool boot);
void vcx_page_request(struct vcx_dev *vdev, u16 func_id, s32 npages);
void vcx_pagealloc_stop(struct vcx_dev *vdev);
int vcx_reclaim_startup_pages(struct vcx_dev *vdev);

/* vcx_eq.c */
int vcx_eq_table_create(struct vcx_dev *vdev);
void vcx_eq_table_destroy(struct vcx_dev *vdev);

/* en/vcx_en_main.c */
int vcx_en_add(struct vcx_dev *vdev);
void vcx_en_remove(struct vcx_dev *vdev);
void vcx_en_port_event(struct vcx_dev *vdev, bool up);
bool vcx_en_cq_event(struct vcx_dev *vdev, u32 cqn);
int vcx_en_query_vport_state(struct vcx_dev *vdev, u8 *state);
int vcx_en_query_mac(struct vcx_dev *vdev, u8 *mac);

/* vcx_ib.c */
int vcx_ib_add(struct vcx_dev *vdev);
void vcx_ib_remove(struct vcx_dev *vdev);
void vcx_ib_async_event(struct vcx_dev *vdev, const u8 *eqe);
void vcx_ib_fatal(struct vcx_dev *vdev);

/* vcx_cq.c */
void vcx_cq_event(struct vcx_dev *vdev, u32 cqn);
unsigned int vcx_cq_kick_all(struct vcx_dev *vdev);

/* vcx_health.c */
void vcx_health_start(struct vcx_dev *vdev);
void vcx_health_stop(struct vcx_dev *vdev);
bool vcx_health_check(struct vcx_dev *vdev);
void vcx_enter_error_state(struct vcx_dev *vdev, const char *reason);
void vcx_health_print(struct vcx_dev *vdev);

#endif /* VCX_H */
