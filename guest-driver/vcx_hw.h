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

/* ------------------------------------------------------------------------------------
 * Object commands for RDMA verbs (PRM "Command Reference"; layouts of mlx5_ifc.h). The
 * shared header include/vcx/prm-obj.h is being written; until it lands these are the
 * driver's copies. Field offsets: VCX_FLD(bit from the start of the structure, width).
 */

/* Input/output lengths. Commands with a PAS/MTT list carry it at byte 0x110. */
#define VCX_CMD_SMALL_LEN		0x10u	/* header-only layouts */
#define VCX_CMD_PAS_OFFSET		0x110u
#define VCX_CREATE_RMP_PAS_OFFSET	0x110u	/* ctx (0x20) + wq (0x30) + pas (0xc0) */
#define VCX_QUERY_QP_OUT_LEN		0x110u	/* without the PAS list */
#define VCX_QUERY_SRQ_OUT_LEN		0x110u
#define VCX_QUERY_RMP_OUT_LEN		0x110u
#define VCX_MODIFY_RMP_IN_LEN		0x110u
#define VCX_SET_ROCE_ADDRESS_IN_LEN	0x30u

/* Common "object number" field at dword 2 (PD, CQN, QPN, SRQN, RMPN, MKEY index). */
#define VCX_OBJ_IN_NUM			VCX_FLD(0x048, 24)
#define VCX_OBJ_OUT_NUM			VCX_FLD(0x048, 24)

/* ALLOC_PD / DEALLOC_PD */
#define VCX_ALLOC_PD_OUT_PD		VCX_FLD(0x048, 24)

/* CREATE_MKEY: mkc at byte 0x10, MTT list at byte 0x110 */
#define VCX_CREATE_MKEY_IN_MKC		VCX_FLD(0x080, 512)
#define VCX_CREATE_MKEY_IN_TRANSLATIONS_OCTWORD_ACTUAL_SIZE	VCX_FLD(0x300, 32)
#define VCX_CREATE_MKEY_OUT_MKEY_INDEX	VCX_FLD(0x048, 24)
#define VCX_MKC_FREE			VCX_FLD(0x001, 1)
#define VCX_MKC_ACCESS_MODE_4_2		VCX_FLD(0x003, 3)
#define VCX_MKC_UMR_EN			VCX_FLD(0x010, 1)
#define VCX_MKC_A			VCX_FLD(0x011, 1)
#define VCX_MKC_RW			VCX_FLD(0x012, 1)
#define VCX_MKC_RR			VCX_FLD(0x013, 1)
#define VCX_MKC_LW			VCX_FLD(0x014, 1)
#define VCX_MKC_LR			VCX_FLD(0x015, 1)
#define VCX_MKC_ACCESS_MODE_1_0		VCX_FLD(0x016, 2)
#define VCX_MKC_QPN			VCX_FLD(0x020, 24)
#define VCX_MKC_MKEY_7_0		VCX_FLD(0x038, 8)
#define VCX_MKC_LENGTH64		VCX_FLD(0x060, 1)
#define VCX_MKC_EN_RINVAL		VCX_FLD(0x067, 1)
#define VCX_MKC_PD			VCX_FLD(0x068, 24)
#define VCX_MKC_START_ADDR		VCX_FLD(0x080, 64)
#define VCX_MKC_LEN			VCX_FLD(0x0c0, 64)
#define VCX_MKC_TRANSLATIONS_OCTWORD_SIZE	VCX_FLD(0x1a0, 32)
#define VCX_MKC_LOG_PAGE_SIZE		VCX_FLD(0x1da, 6)	/* absolute log2 */
#define VCX_MKC_ACCESS_MODE_PA		0x0
#define VCX_MKC_ACCESS_MODE_MTT		0x1
#define VCX_MKC_QPN_ANY			0xffffffu
#define VCX_MTT_SIZE			8u	/* two per octword */

/* CREATE_CQ: cqc at byte 0x10, PAS at byte 0x110 */
#define VCX_CREATE_CQ_IN_CQC		VCX_FLD(0x080, 512)
#define VCX_CREATE_CQ_OUT_CQN		VCX_FLD(0x048, 24)
#define VCX_CQC_CQE_SZ			VCX_FLD(0x008, 3)	/* 0: 64 bytes */
#define VCX_CQC_OI			VCX_FLD(0x00e, 1)
#define VCX_CQC_PAGE_OFFSET		VCX_FLD(0x054, 6)
#define VCX_CQC_LOG_CQ_SIZE		VCX_FLD(0x063, 5)
#define VCX_CQC_UAR_PAGE		VCX_FLD(0x068, 24)
#define VCX_CQC_C_EQN			VCX_FLD(0x0a0, 32)
#define VCX_CQC_LOG_PAGE_SIZE		VCX_FLD(0x0c3, 5)	/* log2(page) - 12 */
#define VCX_CQC_DBR_ADDR		VCX_FLD(0x1c0, 64)
/* MODIFY_CQ op_mod 1 (resize): cqn, resize_field_select, cqc at 0x10, PAS at 0x110 */
#define VCX_MODIFY_CQ_IN_CQN		VCX_FLD(0x048, 24)
#define VCX_MODIFY_CQ_IN_FIELD_SELECT	VCX_FLD(0x060, 32)
#define VCX_MODIFY_CQ_IN_CQC		VCX_FLD(0x080, 512)
#define VCX_MODIFY_CQ_OP_MOD_RESIZE	0x1
#define VCX_CQ_RESIZE_LOG_SIZE		(1u << 0)
#define VCX_CQ_RESIZE_PAGE_OFFSET	(1u << 1)
#define VCX_CQ_RESIZE_LOG_PAGE_SIZE	(1u << 2)

/* QP commands: CREATE_QP and the transitions carry opt_param_mask and a qpc */
#define VCX_QP_IN_QPN			VCX_FLD(0x048, 24)
#define VCX_QP_IN_OPT_PARAM_MASK	VCX_FLD(0x080, 32)
#define VCX_QP_IN_QPC			VCX_FLD(0x0c0, 1856)	/* byte 0x18 */
#define VCX_QP_MOD_IN_LEN		0x110u
#define VCX_CREATE_QP_IN_LEN		0x110u	/* plus the PAS list */
#define VCX_CREATE_QP_OUT_QPN		VCX_FLD(0x048, 24)
#define VCX_QUERY_QP_OUT_QPC		VCX_FLD(0x0c0, 1856)

#define VCX_QPC_STATE			VCX_FLD(0x000, 4)
#define VCX_QPC_ST			VCX_FLD(0x008, 8)
#define VCX_QPC_PM_STATE		VCX_FLD(0x013, 2)
#define VCX_QPC_PD			VCX_FLD(0x028, 24)
#define VCX_QPC_MTU			VCX_FLD(0x040, 3)
#define VCX_QPC_LOG_MSG_MAX		VCX_FLD(0x043, 5)
#define VCX_QPC_LOG_RQ_SIZE		VCX_FLD(0x049, 4)
#define VCX_QPC_LOG_RQ_STRIDE		VCX_FLD(0x04d, 3)
#define VCX_QPC_NO_SQ			VCX_FLD(0x050, 1)
#define VCX_QPC_LOG_SQ_SIZE		VCX_FLD(0x051, 4)
#define VCX_QPC_UAR_PAGE		VCX_FLD(0x068, 24)
#define VCX_QPC_LOG_PAGE_SIZE		VCX_FLD(0x0a3, 5)	/* log2(page) - 12 */
#define VCX_QPC_REMOTE_QPN		VCX_FLD(0x0a8, 24)
#define VCX_QPC_PRI_PATH		VCX_FLD(0x0c0, 352)	/* byte 0x18: ads */
#define VCX_QPC_LOG_SRA_MAX		VCX_FLD(0x388, 3)
#define VCX_QPC_RETRY_COUNT		VCX_FLD(0x38d, 3)
#define VCX_QPC_RNR_RETRY		VCX_FLD(0x390, 3)
#define VCX_QPC_NEXT_SEND_PSN		VCX_FLD(0x3c8, 24)
#define VCX_QPC_CQN_SND			VCX_FLD(0x3e8, 24)
#define VCX_QPC_LOG_RRA_MAX		VCX_FLD(0x488, 3)
#define VCX_QPC_ATOMIC_MODE		VCX_FLD(0x48c, 4)
#define VCX_QPC_RRE			VCX_FLD(0x490, 1)
#define VCX_QPC_RWE			VCX_FLD(0x491, 1)
#define VCX_QPC_RAE			VCX_FLD(0x492, 1)
#define VCX_QPC_PAGE_OFFSET		VCX_FLD(0x494, 6)
#define VCX_QPC_MIN_RNR_NAK		VCX_FLD(0x4a3, 5)
#define VCX_QPC_NEXT_RCV_PSN		VCX_FLD(0x4a8, 24)
#define VCX_QPC_CQN_RCV			VCX_FLD(0x4e8, 24)
#define VCX_QPC_DBR_ADDR		VCX_FLD(0x500, 64)
#define VCX_QPC_Q_KEY			VCX_FLD(0x540, 32)
#define VCX_QPC_RQ_TYPE			VCX_FLD(0x565, 3)
#define VCX_QPC_SRQN_RMPN		VCX_FLD(0x568, 24)

/* Address path (ads), relative to VCX_QPC_PRI_PATH */
#define VCX_ADS_PKEY_INDEX		VCX_FLD(0x010, 16)
#define VCX_ADS_GRH			VCX_FLD(0x028, 1)
#define VCX_ADS_ACK_TIMEOUT		VCX_FLD(0x040, 5)
#define VCX_ADS_SRC_ADDR_INDEX		VCX_FLD(0x048, 8)
#define VCX_ADS_STAT_RATE		VCX_FLD(0x054, 4)
#define VCX_ADS_HOP_LIMIT		VCX_FLD(0x058, 8)
#define VCX_ADS_TCLASS			VCX_FLD(0x064, 8)
#define VCX_ADS_FLOW_LABEL		VCX_FLD(0x06c, 20)
#define VCX_ADS_RGID_RIP		VCX_FLD(0x080, 128)	/* byte 0x10, 16 bytes */
#define VCX_ADS_DSCP			VCX_FLD(0x10a, 6)
#define VCX_ADS_UDP_SPORT		VCX_FLD(0x110, 16)
#define VCX_ADS_ETH_PRIO		VCX_FLD(0x121, 3)
#define VCX_ADS_SL			VCX_FLD(0x124, 4)
#define VCX_ADS_VHCA_PORT_NUM		VCX_FLD(0x128, 8)
#define VCX_ADS_RMAC_47_32		VCX_FLD(0x130, 16)
#define VCX_ADS_RMAC_31_0		VCX_FLD(0x140, 32)

/* qpc values */
#define VCX_QP_ST_RC			0x0
#define VCX_QP_ST_UC			0x1
#define VCX_QP_ST_UD			0x2
#define VCX_QP_ST_QP1			0x8	/* the GSI QP */
#define VCX_QP_ST_REG_UMR		0xc	/* the driver's own UMR QP */
#define VCX_QP_PM_MIGRATED		0x3
#define VCX_QP_STATE_RST		0x0
#define VCX_QP_STATE_INIT		0x1
#define VCX_QP_STATE_RTR		0x2
#define VCX_QP_STATE_RTS		0x3
#define VCX_QP_STATE_SQER		0x4
#define VCX_QP_STATE_SQD		0x7
#define VCX_QP_STATE_ERR		0x6
#define VCX_QP_STATE_SUSPENDED		0x9
#define VCX_RQ_TYPE_REGULAR		0x0
#define VCX_RQ_TYPE_SRQ			0x1
#define VCX_RQ_TYPE_ZERO_LEN		0x3
#define VCX_ATOMIC_MODE_IB_COMP		0x1

/* opt_param_mask bits (mlx5 MLX5_QP_OPTPAR_*) */
#define VCX_QP_OPTPAR_ALT_ADDR_PATH	BIT(0)
#define VCX_QP_OPTPAR_RRE		BIT(1)
#define VCX_QP_OPTPAR_RAE		BIT(2)
#define VCX_QP_OPTPAR_RWE		BIT(3)
#define VCX_QP_OPTPAR_PKEY_INDEX	BIT(4)
#define VCX_QP_OPTPAR_Q_KEY		BIT(5)
#define VCX_QP_OPTPAR_RNR_TIMEOUT	BIT(6)
#define VCX_QP_OPTPAR_PRIMARY_ADDR_PATH	BIT(7)
#define VCX_QP_OPTPAR_SRA_MAX		BIT(8)
#define VCX_QP_OPTPAR_RRA_MAX		BIT(9)
#define VCX_QP_OPTPAR_PM_STATE		BIT(10)
#define VCX_QP_OPTPAR_RETRY_COUNT	BIT(12)
#define VCX_QP_OPTPAR_RNR_RETRY		BIT(13)
#define VCX_QP_OPTPAR_ACK_TIMEOUT	BIT(14)
#define VCX_QP_OPTPAR_PRI_PORT		BIT(16)

/* CREATE_SRQ (ISSI 0): srqc at byte 0x10, PAS at byte 0x110 */
#define VCX_CREATE_SRQ_IN_SRQC		VCX_FLD(0x080, 512)
#define VCX_QUERY_SRQ_OUT_SRQC		VCX_FLD(0x080, 512)
#define VCX_CREATE_SRQ_IN_LEN		0x110u
#define VCX_SRQC_STATE			VCX_FLD(0x000, 4)
#define VCX_SRQC_LOG_SRQ_SIZE		VCX_FLD(0x004, 4)
#define VCX_SRQC_LOG_RQ_STRIDE		VCX_FLD(0x025, 3)	/* log2(stride) - 4 */
#define VCX_SRQC_PAGE_OFFSET		VCX_FLD(0x040, 6)
#define VCX_SRQC_CQN			VCX_FLD(0x048, 24)
#define VCX_SRQC_LOG_PAGE_SIZE		VCX_FLD(0x082, 6)	/* log2(page) - 12 */
#define VCX_SRQC_PD			VCX_FLD(0x0c8, 24)
#define VCX_SRQC_LWM			VCX_FLD(0x0e0, 16)
#define VCX_SRQC_WQE_CNT		VCX_FLD(0x0f0, 16)
#define VCX_SRQC_DBR_ADDR		VCX_FLD(0x140, 64)
#define VCX_SRQC_STATE_GOOD		0x0
#define VCX_SRQC_STATE_ERROR		0x1

/* ARM_RQ (ISSI 0 SRQ limit) */
#define VCX_ARM_RQ_IN_SRQ_NUMBER	VCX_FLD(0x048, 24)
#define VCX_ARM_RQ_IN_LWM		VCX_FLD(0x070, 16)
#define VCX_ARM_RQ_OP_MOD_SRQ		0x1

/* CREATE_RMP / MODIFY_RMP / QUERY_RMP (ISSI 1): rmpc at byte 0x20, its wq at rmpc 0x30 */
#define VCX_CREATE_RMP_IN_CTX		VCX_FLD(0x100, 1984)
#define VCX_CREATE_RMP_IN_LEN		0x110u
#define VCX_MODIFY_RMP_IN_RMP_STATE	VCX_FLD(0x040, 4)
#define VCX_MODIFY_RMP_IN_RMPN		VCX_FLD(0x048, 24)
#define VCX_MODIFY_RMP_IN_BITMASK_LWM	VCX_FLD(0x0bf, 1)
#define VCX_MODIFY_RMP_IN_CTX		VCX_FLD(0x100, 1984)
#define VCX_QUERY_RMP_OUT_CTX		VCX_FLD(0x100, 1984)
#define VCX_RMPC_STATE			VCX_FLD(0x008, 4)
#define VCX_RMPC_WQ			VCX_FLD(0x180, 1600)	/* byte 0x30 */
#define VCX_RMPC_STATE_RDY		0x1
#define VCX_RMPC_STATE_ERR		0x3
#define VCX_WQ_WQ_TYPE			VCX_FLD(0x000, 4)	/* 0: linked list */
#define VCX_WQ_PAGE_OFFSET		VCX_FLD(0x02b, 5)
#define VCX_WQ_LWM			VCX_FLD(0x030, 16)
#define VCX_WQ_PD			VCX_FLD(0x048, 24)
#define VCX_WQ_DBR_ADDR			VCX_FLD(0x080, 64)
#define VCX_WQ_HW_COUNTER		VCX_FLD(0x0c0, 32)
#define VCX_WQ_SW_COUNTER		VCX_FLD(0x0e0, 32)
#define VCX_WQ_LOG_WQ_STRIDE		VCX_FLD(0x10c, 4)	/* log2(stride) */
#define VCX_WQ_LOG_WQ_PG_SZ		VCX_FLD(0x113, 5)	/* log2(page) - 12 */
#define VCX_WQ_LOG_WQ_SZ		VCX_FLD(0x11b, 5)
#define VCX_WQ_TYPE_LINKED_LIST		0x0

/* SET_ROCE_ADDRESS: roce_addr_layout at byte 0x10 */
#define VCX_SET_ROCE_ADDR_IN_INDEX	VCX_FLD(0x040, 16)
#define VCX_SET_ROCE_ADDR_IN_VHCA_PORT	VCX_FLD(0x05c, 4)
#define VCX_SET_ROCE_ADDR_IN_ADDR	VCX_FLD(0x080, 256)
#define VCX_ROCE_ADDR_L3_ADDRESS	VCX_FLD(0x000, 128)	/* 16 bytes */
#define VCX_ROCE_ADDR_VLAN_VALID	VCX_FLD(0x083, 1)
#define VCX_ROCE_ADDR_VLAN_ID		VCX_FLD(0x084, 12)
#define VCX_ROCE_ADDR_MAC_47_32		VCX_FLD(0x090, 16)
#define VCX_ROCE_ADDR_MAC_31_0		VCX_FLD(0x0a0, 32)
#define VCX_ROCE_ADDR_L3_TYPE		VCX_FLD(0x0d4, 4)
#define VCX_ROCE_ADDR_VERSION		VCX_FLD(0x0d8, 8)
#define VCX_ROCE_ADDR_L3_IPV4		0x0
#define VCX_ROCE_ADDR_L3_IPV6		0x1
#define VCX_ROCE_VERSION_1_0		0x0
#define VCX_ROCE_VERSION_2_0		0x2

/* EQE data of QP/SRQ events (qp_srq: type, number) and CQ errors (cqn) */
#define VCX_EQE_QP_SRQ_TYPE		VCX_FLD(0x1a0, 8)
#define VCX_EQE_QP_SRQ_NUM		VCX_FLD(0x1c8, 24)
#define VCX_EQE_CQ_ERR_CQN		VCX_FLD(0x108, 24)
#define VCX_EQE_CQ_ERR_SYNDROME		VCX_FLD(0x158, 8)
#define VCX_EVENT_QUEUE_TYPE_QP		0x0

/* Capabilities the shared header lacks */
#define VCX_CAP_GEN_LOG_MAX_KLM_LIST_SIZE	VCX_FLD(0x11a, 6)
#define VCX_CAP_GEN_UMR_FENCE		VCX_FLD(0x20a, 2)
#define VCX_CAP_GEN_UMR_PTR_RLKY	VCX_FLD(0x230, 1)
#define VCX_CAP_GEN_SQ_TS_FORMAT	VCX_FLD(0x440, 2)
#define VCX_CAP_GEN_RQ_TS_FORMAT	VCX_FLD(0x442, 2)

/* Driver policy */
#define VCX_IB_PORT			1
#define VCX_UCTX_DEFAULT_UARS		1
#define VCX_UCTX_MAX_UARS		16
#define VCX_SEND_WQE_MAX_INLINE		0u	/* kernel QPs: no inline data */

#endif /* VCX_HW_H */
