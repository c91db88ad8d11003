/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx device interface: RDMA object commands (PRM "Memory Keys", "Completion Queues",
 * "Queue Pairs", "Shared Receive Queues", "Receive Memory Pools").
 *
 * Input and output layouts of ALLOC/DEALLOC_PD, CREATE/QUERY/DESTROY_MKEY,
 * CREATE/DESTROY/QUERY/MODIFY_CQ, CREATE_QP and the QP state transitions, QUERY_QP,
 * DESTROY_QP, CREATE/DESTROY/QUERY_SRQ, ARM_RQ, ALLOC/DEALLOC_XRCD,
 * CREATE/DESTROY/QUERY/ARM_XRC_SRQ and CREATE/MODIFY/QUERY/DESTROY_RMP, with their
 * contexts (mkc, cqc, qpc, ads, srqc, xrc_srqc, rmpc, wq) and the QP/SRQ/CQ event data.
 * Opcodes and statuses are in prm-cmd.h; data-path formats in prm-wqe.h.
 *
 * VCX_FLD(bit offset from the start of the structure, width), as mlx5_ifc.h counts them;
 * nested structures list their fields relative to their own start and the enclosing
 * layout gives their byte offset (the _AT constants).
 */
#ifndef VCX_PRM_OBJ_H
#define VCX_PRM_OBJ_H

#include "prm.h"

/* The object number every create returns and every destroy/query takes: dw2 [23:0]. */
#define VCX_OBJ_NUMBER			VCX_FLD(0x48, 24)
#define VCX_OBJ_CMD_LEN			0x10u	/* commands carrying only a number */
#define VCX_OBJ_PAS_AT			0x110u	/* byte offset of PAS / MTT lists */

/* ---------------------------------------------------------------------------------------
 * PD: ALLOC_PD (out pd) / DEALLOC_PD (in pd)
 */
#define VCX_ALLOC_PD_OUT_PD		VCX_FLD(0x48, 24)
#define VCX_DEALLOC_PD_IN_PD		VCX_FLD(0x48, 24)

/* ---------------------------------------------------------------------------------------
 * MKEY: CREATE_MKEY / QUERY_MKEY / DESTROY_MKEY and the memory key context (mkc, 64 B)
 */
#define VCX_CREATE_MKEY_IN_PG_ACCESS	VCX_FLD(0x60, 1)
#define VCX_CREATE_MKEY_IN_UMEM_VALID	VCX_FLD(0x61, 1)
#define VCX_CREATE_MKEY_IN_MKC_AT	0x10u
#define VCX_CREATE_MKEY_IN_XLT_ACTUAL	VCX_FLD(0x300, 32)	/* octwords present */
#define VCX_CREATE_MKEY_IN_MTT_AT	0x110u
#define VCX_CREATE_MKEY_IN_LEN		0x110u	/* plus the translation list */
#define VCX_CREATE_MKEY_OUT_MKEY_INDEX	VCX_FLD(0x48, 24)
#define VCX_CREATE_MKEY_OUT_LEN		0x10u
#define VCX_QUERY_MKEY_IN_MKEY_INDEX	VCX_FLD(0x48, 24)
#define VCX_QUERY_MKEY_IN_PG_ACCESS	VCX_FLD(0x60, 1)
#define VCX_QUERY_MKEY_OUT_MKC_AT	0x10u
#define VCX_QUERY_MKEY_OUT_MTT_AT	0x110u	/* first 4 translation entries (32 B) */
#define VCX_QUERY_MKEY_OUT_LEN		0x130u
#define VCX_DESTROY_MKEY_IN_MKEY_INDEX	VCX_FLD(0x48, 24)

#define VCX_MKC_SIZE			0x40u
#define VCX_MKC_FREE			VCX_FLD(0x001, 1)
#define VCX_MKC_ACCESS_MODE_4_2		VCX_FLD(0x003, 3)
#define VCX_MKC_RELAXED_ORDERING_WRITE	VCX_FLD(0x00d, 1)
#define VCX_MKC_UMR_EN			VCX_FLD(0x010, 1)
#define VCX_MKC_A			VCX_FLD(0x011, 1)
#define VCX_MKC_RW			VCX_FLD(0x012, 1)
#define VCX_MKC_RR			VCX_FLD(0x013, 1)
#define VCX_MKC_LW			VCX_FLD(0x014, 1)
#define VCX_MKC_LR			VCX_FLD(0x015, 1)
#define VCX_MKC_ACCESS_MODE_1_0		VCX_FLD(0x016, 2)
#define VCX_MKC_MA_TRANSLATION_MODE	VCX_FLD(0x01a, 2)
#define VCX_MKC_QPN			VCX_FLD(0x020, 24)
#define VCX_MKC_MKEY_7_0		VCX_FLD(0x038, 8)
#define VCX_MKC_LENGTH64		VCX_FLD(0x060, 1)
#define VCX_MKC_BSF_EN			VCX_FLD(0x061, 1)
#define VCX_MKC_SYNC_UMR		VCX_FLD(0x062, 1)
#define VCX_MKC_EN_RINVAL		VCX_FLD(0x067, 1)
#define VCX_MKC_PD			VCX_FLD(0x068, 24)
#define VCX_MKC_START_ADDR		VCX_FLD(0x080, 64)
#define VCX_MKC_LEN			VCX_FLD(0x0c0, 64)
#define VCX_MKC_BSF_OCTWORD_SIZE	VCX_FLD(0x100, 32)
#define VCX_MKC_TRANSLATIONS_OCTWORD_SIZE VCX_FLD(0x1a0, 32)
#define VCX_MKC_RELAXED_ORDERING_READ	VCX_FLD(0x1d9, 1)
#define VCX_MKC_LOG_PAGE_SIZE		VCX_FLD(0x1da, 6)	/* full log2, e.g. 12 */

#define VCX_MKC_ACCESS_MODE_PA		0x0
#define VCX_MKC_ACCESS_MODE_MTT		0x1
#define VCX_MKC_ACCESS_MODE_KLM		0x2
#define VCX_MKC_QPN_UNBOUND		0xffffffu
#define VCX_MTT_SIZE			8u	/* two MTT entries per 16-byte octword */
#define VCX_MKEY_INDEX(key)		((key) >> 8)
#define VCX_MKEY(index, key_7_0)	((uint32_t)(index) << 8 | (key_7_0))

/* ---------------------------------------------------------------------------------------
 * CQ: CREATE_CQ / DESTROY_CQ / QUERY_CQ / MODIFY_CQ and the CQ context (cqc, 64 B)
 */
#define VCX_CREATE_CQ_IN_CQC_AT		0x10u
#define VCX_CREATE_CQ_IN_UMEM_VALID	VCX_FLD(0x2e0, 1)
#define VCX_CREATE_CQ_IN_PAS_AT		0x110u
#define VCX_CREATE_CQ_IN_LEN		0x110u	/* plus 8 bytes per PAS entry */
#define VCX_CREATE_CQ_OUT_CQN		VCX_FLD(0x48, 24)
#define VCX_QUERY_CQ_OUT_CQC_AT		0x10u
#define VCX_QUERY_CQ_OUT_PAS_AT		0x110u
#define VCX_QUERY_CQ_OUT_LEN		0x110u	/* the PAS list follows if room is given */
#define VCX_MODIFY_CQ_IN_CQN		VCX_FLD(0x48, 24)
#define VCX_MODIFY_CQ_IN_FIELD_SELECT	VCX_FLD(0x60, 32)
#define VCX_MODIFY_CQ_IN_CQC_AT		0x10u
#define VCX_MODIFY_CQ_IN_UMEM_VALID	VCX_FLD(0x2e0, 1)
#define VCX_MODIFY_CQ_IN_PAS_AT		0x110u	/* resize: PAS of the new ring */
#define VCX_MODIFY_CQ_IN_LEN		0x110u	/* plus 8 bytes per PAS entry (resize) */
#define VCX_MODIFY_CQ_OP_MOD_MODIFY	0x0
#define VCX_MODIFY_CQ_OP_MOD_RESIZE	0x1
/* modify_field_select (op_mod 0) */
#define VCX_CQ_MODIFY_PERIOD		(1u << 0)
#define VCX_CQ_MODIFY_COUNT		(1u << 1)
#define VCX_CQ_MODIFY_OVERRUN		(1u << 2)
#define VCX_CQ_MODIFY_PERIOD_MODE	(1u << 4)
/* resize_field_select (op_mod 1): the same dword, other meanings */
#define VCX_CQ_RESIZE_LOG_SIZE		(1u << 0)
#define VCX_CQ_RESIZE_PAGE_OFFSET	(1u << 1)
#define VCX_CQ_RESIZE_LOG_PAGE_SIZE	(1u << 2)

#define VCX_CQC_SIZE			0x40u
#define VCX_CQC_STATUS			VCX_FLD(0x000, 4)
#define VCX_CQC_DBR_UMEM_VALID		VCX_FLD(0x006, 1)
#define VCX_CQC_CQE_SZ			VCX_FLD(0x008, 3)
#define VCX_CQC_CC			VCX_FLD(0x00b, 1)
#define VCX_CQC_SCQE_BREAK_MODERATION	VCX_FLD(0x00d, 1)
#define VCX_CQC_OI			VCX_FLD(0x00e, 1)
#define VCX_CQC_CQ_PERIOD_MODE		VCX_FLD(0x00f, 2)
#define VCX_CQ_PERIOD_MODE_UPON_EVENT	0	/* the period runs from the last event */
#define VCX_CQ_PERIOD_MODE_UPON_CQE	1	/* ... from the first CQE after it */
#define VCX_CQ_MAX_PERIOD		0xfffu	/* cq_period is 12 bits, in us */
#define VCX_CQC_CQE_COMP_EN		VCX_FLD(0x011, 1)
#define VCX_CQC_MINI_CQE_RES_FORMAT	VCX_FLD(0x012, 2)
#define VCX_CQC_ST			VCX_FLD(0x014, 4)
#define VCX_CQC_PAGE_OFFSET		VCX_FLD(0x054, 6)
#define VCX_CQC_LOG_CQ_SIZE		VCX_FLD(0x063, 5)
#define VCX_CQC_UAR_PAGE		VCX_FLD(0x068, 24)
#define VCX_CQC_CQ_PERIOD		VCX_FLD(0x084, 12)
#define VCX_CQC_CQ_MAX_COUNT		VCX_FLD(0x090, 16)
#define VCX_CQC_C_EQN			VCX_FLD(0x0a0, 32)
#define VCX_CQC_LOG_PAGE_SIZE		VCX_FLD(0x0c3, 5)
#define VCX_CQC_LAST_NOTIFIED_INDEX	VCX_FLD(0x108, 24)
#define VCX_CQC_LAST_SOLICIT_INDEX	VCX_FLD(0x128, 24)
#define VCX_CQC_CONSUMER_COUNTER	VCX_FLD(0x148, 24)
#define VCX_CQC_PRODUCER_COUNTER	VCX_FLD(0x168, 24)
#define VCX_CQC_DBR_ADDR		VCX_FLD(0x1c0, 64)

#define VCX_CQC_STATUS_OK		0x0
#define VCX_CQC_STATUS_OVERFLOW		0x9
#define VCX_CQC_STATUS_WRITE_FAIL	0xa
#define VCX_CQC_CQE_SZ_64		0x0
#define VCX_CQC_CQE_SZ_128		0x1
#define VCX_CQ_STATE_SOLICITED_ARMED	0x6
#define VCX_CQ_STATE_ARMED		0x9
#define VCX_CQ_STATE_FIRED		0xa

/* CQ error event (type 0x04), relative to the EQE like the VCX_EQE_* of prm-cmd.h */
#define VCX_EQE_CQ_ERR_CQN		VCX_FLD(0x108, 24)	/* EQE byte 0x20 */
#define VCX_EQE_CQ_ERR_SYNDROME		VCX_FLD(0x158, 8)	/* EQE byte 0x2b */
#define VCX_CQ_ERR_SYND_OVERRUN		0x1
#define VCX_CQ_ERR_SYND_ACCESS_VIOLATION	0x2

/* QP / SRQ events (types 0x05, 0x10-0x14), relative to the EQE */
#define VCX_EQE_QP_SRQ_TYPE		VCX_FLD(0x1a0, 8)	/* EQE byte 0x34 */
#define VCX_EQE_QP_SRQ_NUMBER		VCX_FLD(0x1c8, 24)	/* EQE byte 0x38 */
#define VCX_EVENT_QUEUE_TYPE_QP		0
#define VCX_EVENT_QUEUE_TYPE_RQ		1
#define VCX_EVENT_QUEUE_TYPE_SQ		2

/* ---------------------------------------------------------------------------------------
 * QP: CREATE_QP, the state transitions, QUERY_QP, 2ERR/2RST/DESTROY_QP
 */
#define VCX_CREATE_QP_IN_QPC_EXT	VCX_FLD(0x40, 1)
#define VCX_CREATE_QP_IN_INPUT_QPN	VCX_FLD(0x48, 24)
#define VCX_QP_IN_OPT_PARAM_MASK	VCX_FLD(0x80, 32)	/* create and transitions */
#define VCX_QP_IN_ECE			VCX_FLD(0xa0, 32)
#define VCX_QP_IN_QPC_AT		0x18u
#define VCX_CREATE_QP_IN_WQ_UMEM_VALID	VCX_FLD(0x860, 1)
#define VCX_CREATE_QP_IN_PAS_AT		0x110u
#define VCX_CREATE_QP_IN_LEN		0x110u	/* plus 8 bytes per PAS entry */
#define VCX_CREATE_QP_OUT_QPN		VCX_FLD(0x48, 24)
#define VCX_MODIFY_QP_IN_QPN		VCX_FLD(0x48, 24)
#define VCX_MODIFY_QP_IN_LEN		0x110u	/* RST2INIT ... RTS2RTS, INIT2INIT */
#define VCX_QUERY_QP_OUT_OPT_PARAM_MASK	VCX_FLD(0x80, 32)
#define VCX_QUERY_QP_OUT_QPC_AT		0x18u
#define VCX_QUERY_QP_OUT_PAS_AT		0x110u
#define VCX_QUERY_QP_OUT_LEN		0x110u

#define VCX_QPC_SIZE			0xe8u
#define VCX_QPC_STATE			VCX_FLD(0x000, 4)
#define VCX_QPC_LAG_TX_PORT_AFFINITY	VCX_FLD(0x004, 4)
#define VCX_QPC_ST			VCX_FLD(0x008, 8)
#define VCX_QPC_PM_STATE		VCX_FLD(0x013, 2)
#define VCX_QPC_OFFLOAD_TYPE		VCX_FLD(0x018, 4)
#define VCX_QPC_END_PADDING_MODE	VCX_FLD(0x01c, 2)
#define VCX_QPC_WQ_SIGNATURE		VCX_FLD(0x020, 1)
#define VCX_QPC_BLOCK_LB_MC		VCX_FLD(0x021, 1)
#define VCX_QPC_ATOMIC_LIKE_WRITE_EN	VCX_FLD(0x022, 1)
#define VCX_QPC_PD			VCX_FLD(0x028, 24)
#define VCX_QPC_MTU			VCX_FLD(0x040, 3)
#define VCX_QPC_LOG_MSG_MAX		VCX_FLD(0x043, 5)
#define VCX_QPC_LOG_RQ_SIZE		VCX_FLD(0x049, 4)
#define VCX_QPC_LOG_RQ_STRIDE		VCX_FLD(0x04d, 3)
#define VCX_QPC_NO_SQ			VCX_FLD(0x050, 1)
#define VCX_QPC_LOG_SQ_SIZE		VCX_FLD(0x051, 4)
#define VCX_QPC_RETRY_MODE		VCX_FLD(0x056, 2)
#define VCX_QPC_TS_FORMAT		VCX_FLD(0x058, 2)
#define VCX_QPC_RLKY			VCX_FLD(0x05b, 1)
#define VCX_QPC_ULP_STATELESS_OFFLOAD	VCX_FLD(0x05c, 4)
#define VCX_QPC_COUNTER_SET_ID		VCX_FLD(0x060, 8)
#define VCX_QPC_UAR_PAGE		VCX_FLD(0x068, 24)
#define VCX_QPC_USER_INDEX		VCX_FLD(0x088, 24)
#define VCX_QPC_LOG_PAGE_SIZE		VCX_FLD(0x0a3, 5)
#define VCX_QPC_REMOTE_QPN		VCX_FLD(0x0a8, 24)
#define VCX_QPC_PRI_PATH_AT		0x18u	/* ads, 44 bytes */
#define VCX_QPC_SEC_PATH_AT		0x44u
#define VCX_QPC_LOG_ACK_REQ_FREQ	VCX_FLD(0x380, 4)
#define VCX_QPC_LOG_SRA_MAX		VCX_FLD(0x388, 3)
#define VCX_QPC_RETRY_COUNT		VCX_FLD(0x38d, 3)
#define VCX_QPC_RNR_RETRY		VCX_FLD(0x390, 3)
#define VCX_QPC_FRE			VCX_FLD(0x394, 1)
#define VCX_QPC_CUR_RNR_RETRY		VCX_FLD(0x395, 3)
#define VCX_QPC_CUR_RETRY_COUNT		VCX_FLD(0x398, 3)
#define VCX_QPC_NEXT_SEND_PSN		VCX_FLD(0x3c8, 24)
#define VCX_QPC_CQN_SND			VCX_FLD(0x3e8, 24)
#define VCX_QPC_DETH_SQPN		VCX_FLD(0x408, 24)
#define VCX_QPC_LAST_ACKED_PSN		VCX_FLD(0x448, 24)
#define VCX_QPC_SSN			VCX_FLD(0x468, 24)
#define VCX_QPC_LOG_RRA_MAX		VCX_FLD(0x488, 3)
#define VCX_QPC_ATOMIC_MODE		VCX_FLD(0x48c, 4)
#define VCX_QPC_RRE			VCX_FLD(0x490, 1)
#define VCX_QPC_RWE			VCX_FLD(0x491, 1)
#define VCX_QPC_RAE			VCX_FLD(0x492, 1)
#define VCX_QPC_PAGE_OFFSET		VCX_FLD(0x494, 6)
#define VCX_QPC_CD_SLAVE_RECEIVE	VCX_FLD(0x49d, 1)
#define VCX_QPC_CD_SLAVE_SEND		VCX_FLD(0x49e, 1)
#define VCX_QPC_CD_MASTER		VCX_FLD(0x49f, 1)
#define VCX_QPC_MIN_RNR_NAK		VCX_FLD(0x4a3, 5)
#define VCX_QPC_NEXT_RCV_PSN		VCX_FLD(0x4a8, 24)
#define VCX_QPC_XRCD			VCX_FLD(0x4c8, 24)
#define VCX_QPC_CQN_RCV			VCX_FLD(0x4e8, 24)
#define VCX_QPC_DBR_ADDR		VCX_FLD(0x500, 64)
#define VCX_QPC_Q_KEY			VCX_FLD(0x540, 32)
#define VCX_QPC_RQ_TYPE			VCX_FLD(0x565, 3)
#define VCX_QPC_SRQN_RMPN_XRQN		VCX_FLD(0x568, 24)
#define VCX_QPC_RMSN			VCX_FLD(0x588, 24)
#define VCX_QPC_HW_SQ_WQEBB_COUNTER	VCX_FLD(0x5a0, 16)
#define VCX_QPC_SW_SQ_WQEBB_COUNTER	VCX_FLD(0x5b0, 16)
#define VCX_QPC_HW_RQ_COUNTER		VCX_FLD(0x5c0, 32)
#define VCX_QPC_SW_RQ_COUNTER		VCX_FLD(0x5e0, 32)
#define VCX_QPC_CS_REQ			VCX_FLD(0x630, 8)
#define VCX_QPC_CS_RES			VCX_FLD(0x638, 8)
#define VCX_QPC_DBR_UMEM_VALID		VCX_FLD(0x683, 1)

/* qpc.state */
#define VCX_QP_STATE_RST		0x0
#define VCX_QP_STATE_INIT		0x1
#define VCX_QP_STATE_RTR		0x2
#define VCX_QP_STATE_RTS		0x3
#define VCX_QP_STATE_SQER		0x4
#define VCX_QP_STATE_ERR		0x6
#define VCX_QP_STATE_SQD		0x7
/* qpc.st */
#define VCX_QP_ST_RC			0x0
#define VCX_QP_ST_UC			0x1
#define VCX_QP_ST_UD			0x2
#define VCX_QP_ST_XRC			0x3
#define VCX_QP_ST_DCI			0x5
#define VCX_QP_ST_QP0			0x7
#define VCX_QP_ST_QP1			0x8
#define VCX_QP_ST_RAW_ETHERTYPE		0x9
#define VCX_QP_ST_REG_UMR		0xc
/* qpc.rq_type */
#define VCX_QP_RQ_TYPE_REGULAR		0x0
#define VCX_QP_RQ_TYPE_SRQ		0x1
#define VCX_QP_RQ_TYPE_CRQ		0x2
#define VCX_QP_RQ_TYPE_ZERO_SIZE	0x3
/* qpc.atomic_mode (responder atomics; mlx5 MLX5_ATOMIC_MODE_*) */
#define VCX_QP_ATOMIC_MODE_IB_COMP	0x1
/* qpc.pm_state */
#define VCX_QP_PM_MIGRATED		0x3
/* qpc.mtu: 256 << (mtu - 1) bytes */
#define VCX_QP_MTU_256			1
#define VCX_QP_MTU_4096			5

/* opt_param_mask bits */
#define VCX_QP_OPTPAR_ALT_ADDR_PATH	(1u << 0)
#define VCX_QP_OPTPAR_RRE		(1u << 1)
#define VCX_QP_OPTPAR_RAE		(1u << 2)
#define VCX_QP_OPTPAR_RWE		(1u << 3)
#define VCX_QP_OPTPAR_PKEY_INDEX	(1u << 4)
#define VCX_QP_OPTPAR_Q_KEY		(1u << 5)
#define VCX_QP_OPTPAR_RNR_TIMEOUT	(1u << 6)
#define VCX_QP_OPTPAR_PRIMARY_ADDR_PATH	(1u << 7)
#define VCX_QP_OPTPAR_SRA_MAX		(1u << 8)
#define VCX_QP_OPTPAR_RRA_MAX		(1u << 9)
#define VCX_QP_OPTPAR_PM_STATE		(1u << 10)
#define VCX_QP_OPTPAR_RETRY_COUNT	(1u << 12)
#define VCX_QP_OPTPAR_RNR_RETRY		(1u << 13)
#define VCX_QP_OPTPAR_ACK_TIMEOUT	(1u << 14)
#define VCX_QP_OPTPAR_LAG_TX_AFF	(1u << 15)
#define VCX_QP_OPTPAR_PRI_PORT		(1u << 16)
#define VCX_QP_OPTPAR_SRQN		(1u << 18)
#define VCX_QP_OPTPAR_CQN_RCV		(1u << 19)
#define VCX_QP_OPTPAR_COUNTER_SET_ID	(1u << 25)

/* Address path (ads, 44 B), relative to its start (qpc + VCX_QPC_PRI_PATH_AT). */
#define VCX_ADS_SIZE			0x2cu
#define VCX_ADS_FL			VCX_FLD(0x000, 1)
#define VCX_ADS_FREE_AR			VCX_FLD(0x001, 1)
#define VCX_ADS_PKEY_INDEX		VCX_FLD(0x010, 16)
#define VCX_ADS_GRH			VCX_FLD(0x028, 1)
#define VCX_ADS_MLID			VCX_FLD(0x029, 7)
#define VCX_ADS_RLID			VCX_FLD(0x030, 16)
#define VCX_ADS_ACK_TIMEOUT		VCX_FLD(0x040, 5)
#define VCX_ADS_SRC_ADDR_INDEX		VCX_FLD(0x048, 8)
#define VCX_ADS_STAT_RATE		VCX_FLD(0x054, 4)
#define VCX_ADS_HOP_LIMIT		VCX_FLD(0x058, 8)
#define VCX_ADS_TCLASS			VCX_FLD(0x064, 8)
#define VCX_ADS_FLOW_LABEL		VCX_FLD(0x06c, 20)
#define VCX_ADS_RGID_RIP		VCX_FLD(0x080, 128)	/* byte 0x10, 16 bytes */
#define VCX_ADS_F_DSCP			VCX_FLD(0x104, 1)
#define VCX_ADS_F_ECN			VCX_FLD(0x105, 1)
#define VCX_ADS_F_ETH_PRIO		VCX_FLD(0x107, 1)
#define VCX_ADS_ECN			VCX_FLD(0x108, 2)
#define VCX_ADS_DSCP			VCX_FLD(0x10a, 6)
#define VCX_ADS_UDP_SPORT		VCX_FLD(0x110, 16)
#define VCX_ADS_DEI_CFI			VCX_FLD(0x120, 1)
#define VCX_ADS_ETH_PRIO		VCX_FLD(0x121, 3)
#define VCX_ADS_SL			VCX_FLD(0x124, 4)
#define VCX_ADS_VHCA_PORT_NUM		VCX_FLD(0x128, 8)
#define VCX_ADS_RMAC_47_32		VCX_FLD(0x130, 16)
#define VCX_ADS_RMAC_31_0		VCX_FLD(0x140, 32)

/* ---------------------------------------------------------------------------------------
 * SRQ (ISSI 0): CREATE_SRQ / DESTROY_SRQ / QUERY_SRQ / ARM_RQ and the SRQ context (srqc)
 */
#define VCX_CREATE_SRQ_IN_SRQC_AT	0x10u
#define VCX_CREATE_SRQ_IN_PAS_AT	0x110u
#define VCX_CREATE_SRQ_IN_LEN		0x110u	/* plus 8 bytes per PAS entry */
#define VCX_CREATE_SRQ_OUT_SRQN		VCX_FLD(0x48, 24)
#define VCX_QUERY_SRQ_OUT_SRQC_AT	0x10u
#define VCX_QUERY_SRQ_OUT_PAS_AT	0x110u
#define VCX_QUERY_SRQ_OUT_LEN		0x110u
#define VCX_ARM_RQ_IN_SRQ_NUMBER	VCX_FLD(0x48, 24)
#define VCX_ARM_RQ_IN_LWM		VCX_FLD(0x70, 16)
#define VCX_ARM_RQ_OP_MOD_RQ		0x0
#define VCX_ARM_RQ_OP_MOD_SRQ		0x1

#define VCX_SRQC_SIZE			0x40u
#define VCX_SRQC_STATE			VCX_FLD(0x000, 4)
#define VCX_SRQC_LOG_SRQ_SIZE		VCX_FLD(0x004, 4)
#define VCX_SRQC_WQ_SIGNATURE		VCX_FLD(0x020, 1)
#define VCX_SRQC_CONT_SRQ		VCX_FLD(0x021, 1)
#define VCX_SRQC_RLKY			VCX_FLD(0x023, 1)
#define VCX_SRQC_LOG_RQ_STRIDE		VCX_FLD(0x025, 3)	/* log2(WQE bytes) - 4 */
#define VCX_SRQC_XRCD			VCX_FLD(0x028, 24)
#define VCX_SRQC_PAGE_OFFSET		VCX_FLD(0x040, 6)
#define VCX_SRQC_CQN			VCX_FLD(0x048, 24)
#define VCX_SRQC_LOG_PAGE_SIZE		VCX_FLD(0x082, 6)
#define VCX_SRQC_PD			VCX_FLD(0x0c8, 24)
#define VCX_SRQC_LWM			VCX_FLD(0x0e0, 16)
#define VCX_SRQC_WQE_CNT		VCX_FLD(0x0f0, 16)
#define VCX_SRQC_DBR_ADDR		VCX_FLD(0x140, 64)
#define VCX_SRQC_STATE_GOOD		0x0
#define VCX_SRQC_STATE_ERROR		0x1

/* ---------------------------------------------------------------------------------------
 * XRC domains: ALLOC_XRCD (out xrcd) / DEALLOC_XRCD (in xrcd)
 */
#define VCX_ALLOC_XRCD_OUT_XRCD		VCX_FLD(0x48, 24)
#define VCX_DEALLOC_XRCD_IN_XRCD	VCX_FLD(0x48, 24)

/* ---------------------------------------------------------------------------------------
 * Multicast groups: ATTACH_TO_MCG / DETACH_FROM_MCG (attach_to_mcg_in, detach_from_mcg_in:
 * the same layout). Output: status and syndrome only.
 */
#define VCX_MCG_IN_QPN			VCX_FLD(0x48, 24)
#define VCX_MCG_IN_GID			VCX_FLD(0x80, 128)	/* multicast_gid, 16 bytes */
#define VCX_MCG_IN_LEN			0x20u

/* ---------------------------------------------------------------------------------------
 * XRC SRQ (PRM "XRC SRQ"): CREATE_XRC_SRQ / DESTROY_XRC_SRQ / QUERY_XRC_SRQ / ARM_XRC_SRQ
 * and the XRC SRQ context (xrc_srqc, 64 B). Its receive WQEs are SRQ WQEs (prm-wqe.h).
 */
#define VCX_CREATE_XRC_SRQ_IN_CTX	0x10u	/* byte offset of xrc_srqc */
#define VCX_CREATE_XRC_SRQ_IN_UMEM_VALID	VCX_FLD(0x2e0, 1)
#define VCX_CREATE_XRC_SRQ_IN_PAS	0x110u
#define VCX_CREATE_XRC_SRQ_IN_LEN	0x110u	/* plus 8 bytes per PAS entry */
#define VCX_CREATE_XRC_SRQ_OUT_SRQN	VCX_FLD(0x48, 24)
#define VCX_XRC_SRQ_IN_SRQN		VCX_FLD(0x48, 24)	/* destroy, query, arm */
#define VCX_ARM_XRC_SRQ_IN_LWM		VCX_FLD(0x70, 16)
#define VCX_ARM_XRC_SRQ_OP_MOD_XRC_SRQ	0x1
#define VCX_QUERY_XRC_SRQ_OUT_CTX	0x10u
#define VCX_QUERY_XRC_SRQ_OUT_PAS	0x110u
#define VCX_QUERY_XRC_SRQ_OUT_LEN	0x110u	/* the PAS list follows if room is given */

#define VCX_XRC_SRQC_STATE		VCX_FLD(0x000, 4)	/* VCX_SRQC_STATE_* */
#define VCX_XRC_SRQC_LOG_SIZE		VCX_FLD(0x004, 4)
#define VCX_XRC_SRQC_WQ_SIGNATURE	VCX_FLD(0x020, 1)
#define VCX_XRC_SRQC_CONT_SRQ		VCX_FLD(0x021, 1)
#define VCX_XRC_SRQC_RLKY		VCX_FLD(0x023, 1)
#define VCX_XRC_SRQC_BASIC_CYCLIC	VCX_FLD(0x024, 1)
#define VCX_XRC_SRQC_LOG_RQ_STRIDE	VCX_FLD(0x025, 3)	/* log2(WQE bytes) - 4 */
#define VCX_XRC_SRQC_XRCD		VCX_FLD(0x028, 24)
#define VCX_XRC_SRQC_PAGE_OFFSET	VCX_FLD(0x040, 6)
#define VCX_XRC_SRQC_DBR_UMEM_VALID	VCX_FLD(0x047, 1)
#define VCX_XRC_SRQC_CQN		VCX_FLD(0x048, 24)
#define VCX_XRC_SRQC_UIDX_EQ_SRQN	VCX_FLD(0x080, 1)
#define VCX_XRC_SRQC_LOG_PAGE_SIZE	VCX_FLD(0x082, 6)
#define VCX_XRC_SRQC_USER_INDEX		VCX_FLD(0x088, 24)
#define VCX_XRC_SRQC_PD			VCX_FLD(0x0c8, 24)
#define VCX_XRC_SRQC_LWM		VCX_FLD(0x0e0, 16)
#define VCX_XRC_SRQC_WQE_CNT		VCX_FLD(0x0f0, 16)
#define VCX_XRC_SRQC_DBR_ADDR		VCX_FLD(0x140, 64)	/* bits 1:0 reserved */

/* ---------------------------------------------------------------------------------------
 * RMP (ISSI 1): CREATE_RMP / MODIFY_RMP / QUERY_RMP / DESTROY_RMP, rmpc and wq
 */
#define VCX_CREATE_RMP_IN_RMPC_AT	0x20u
#define VCX_CREATE_RMP_IN_LEN		0x110u	/* plus 8 bytes per PAS entry */
#define VCX_CREATE_RMP_OUT_RMPN		VCX_FLD(0x48, 24)
#define VCX_MODIFY_RMP_IN_RMP_STATE	VCX_FLD(0x40, 4)
#define VCX_MODIFY_RMP_IN_RMPN		VCX_FLD(0x48, 24)
#define VCX_MODIFY_RMP_IN_BITMASK	VCX_FLD(0x80, 64)
#define VCX_MODIFY_RMP_IN_BITMASK_LWM	VCX_FLD(0xbf, 1)
#define VCX_MODIFY_RMP_IN_RMPC_AT	0x20u
#define VCX_MODIFY_RMP_IN_LEN		0x110u
#define VCX_QUERY_RMP_OUT_RMPC_AT	0x20u
#define VCX_QUERY_RMP_OUT_LEN		0x110u	/* the PAS list follows if room is given */

#define VCX_RMPC_STATE			VCX_FLD(0x008, 4)
#define VCX_RMPC_BASIC_CYCLIC_RCV_WQE	VCX_FLD(0x020, 1)
#define VCX_RMPC_WQ_AT			0x30u
#define VCX_RMPC_STATE_RDY		0x1
#define VCX_RMPC_STATE_ERR		0x3

#define VCX_WQ_WQ_TYPE			VCX_FLD(0x000, 4)
#define VCX_WQ_WQ_SIGNATURE		VCX_FLD(0x004, 1)
#define VCX_WQ_END_PADDING_MODE		VCX_FLD(0x005, 2)
#define VCX_WQ_END_PAD_MODE_ALIGN	1u	/* end_padding_mode: pad to a cache line */
#define VCX_WQ_CD_SLAVE			VCX_FLD(0x007, 1)
#define VCX_WQ_PAGE_OFFSET		VCX_FLD(0x02b, 5)
#define VCX_WQ_LWM			VCX_FLD(0x030, 16)
#define VCX_WQ_PD			VCX_FLD(0x048, 24)
#define VCX_WQ_UAR_PAGE			VCX_FLD(0x068, 24)
#define VCX_WQ_DBR_ADDR			VCX_FLD(0x080, 64)
#define VCX_WQ_HW_COUNTER		VCX_FLD(0x0c0, 32)
#define VCX_WQ_SW_COUNTER		VCX_FLD(0x0e0, 32)
#define VCX_WQ_LOG_WQ_STRIDE		VCX_FLD(0x10c, 4)	/* full log2 of bytes */
#define VCX_WQ_LOG_WQ_PG_SZ		VCX_FLD(0x113, 5)
#define VCX_WQ_LOG_WQ_SZ		VCX_FLD(0x11b, 5)
#define VCX_WQ_DBR_UMEM_VALID		VCX_FLD(0x120, 1)
#define VCX_WQ_WQ_UMEM_VALID		VCX_FLD(0x121, 1)
#define VCX_WQ_PAS_AT			0xc0u
#define VCX_WQ_TYPE_LINKED_LIST		0x0

#endif /* VCX_PRM_OBJ_H */
