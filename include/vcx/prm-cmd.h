/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx device interface: the command interface (PRM "Command Interface").
 *
 * Opcodes, statuses, op_mods and field descriptors of every layout the device honours:
 * the command queue entry, the mailbox block, the generic command header, each command's
 * input and output, the EQ context and EQE, the HCA capability pages, the access registers
 * and the NIC vport context. Offsets restate the ConnectX PRM (as mirrored by mlx5_ifc.h):
 * VCX_FLD(bit offset from the start of the structure, width); see include/vcx/prm.h.
 *
 * Shared by the QEMU device, the kernel driver and userspace tools: constants only.
 */
#ifndef VCX_PRM_CMD_H
#define VCX_PRM_CMD_H

#include "prm.h"

/* ---------------------------------------------------------------------------------------
 * Command queue entry (64 bytes, in host memory at the address given in the init segment)
 */
#define VCX_CMDQ_ENT_SIZE		64u
#define VCX_CMDQ_INLINE_SIZE		16u	/* inline input and inline output */
#define VCX_CMDQ_TYPE_PCIE		0x7	/* the only transport type */
#define VCX_CMDQ_ENT_PTR_ALIGN		512u	/* first mailbox pointers: bits 8:0 are zero */

#define VCX_CMDQ_ENT_TYPE		VCX_FLD(0x000, 8)
#define VCX_CMDQ_ENT_IN_LEN		VCX_FLD(0x020, 32)
#define VCX_CMDQ_ENT_IN_PTR		VCX_FLD(0x040, 64)
#define VCX_CMDQ_ENT_IN_INLINE		VCX_FLD(0x080, 128)	/* byte 0x10 */
#define VCX_CMDQ_ENT_OUT_INLINE		VCX_FLD(0x100, 128)	/* byte 0x20 */
#define VCX_CMDQ_ENT_OUT_PTR		VCX_FLD(0x180, 64)
#define VCX_CMDQ_ENT_OUT_LEN		VCX_FLD(0x1c0, 32)
#define VCX_CMDQ_ENT_TOKEN		VCX_FLD(0x1e0, 8)
#define VCX_CMDQ_ENT_SIGNATURE		VCX_FLD(0x1e8, 8)
#define VCX_CMDQ_ENT_STATUS		VCX_FLD(0x1f8, 7)	/* delivery status */
#define VCX_CMDQ_ENT_OWNERSHIP		VCX_FLD(0x1ff, 1)	/* 1: owned by the device */
#define VCX_CMDQ_ENT_STATUS_OWN_BYTE	0x3f

/* Delivery status (entry byte 0x3F bits 7:1): non-zero means "not executed". */
#define VCX_CMD_DELIV_OK		0x00
#define VCX_CMD_DELIV_SIGNATURE_ERR	0x01
#define VCX_CMD_DELIV_TOKEN_ERR		0x02
#define VCX_CMD_DELIV_BAD_BLOCK_NUM	0x03
#define VCX_CMD_DELIV_OUT_PTR_ALIGN_ERR	0x04
#define VCX_CMD_DELIV_IN_PTR_ALIGN_ERR	0x05
#define VCX_CMD_DELIV_FW_ERR		0x06
#define VCX_CMD_DELIV_IN_LENGTH_ERR	0x07
#define VCX_CMD_DELIV_OUT_LENGTH_ERR	0x08
#define VCX_CMD_DELIV_RES_FLD_NOT_CLR	0x09
#define VCX_CMD_DELIV_BAD_DESC		0x10

/* ---------------------------------------------------------------------------------------
 * Mailbox block (576 bytes; 512 data bytes carry command bytes 16.. in order)
 */
#define VCX_MBOX_SIZE			0x240u
#define VCX_MBOX_DATA_SIZE		0x200u
#define VCX_MBOX_ALIGN			1024u	/* next pointers: bits 9:0 are zero */

#define VCX_MBOX_DATA			VCX_FLD(0x0000, 4096)
#define VCX_MBOX_NEXT_PTR		VCX_FLD(0x1180, 64)	/* byte 0x230 */
#define VCX_MBOX_BLOCK_NUM		VCX_FLD(0x11c0, 32)	/* byte 0x238 */
#define VCX_MBOX_TOKEN			VCX_FLD(0x11e8, 8)	/* byte 0x23d */
#define VCX_MBOX_CTRL_SIGNATURE		VCX_FLD(0x11f0, 8)	/* byte 0x23e */
#define VCX_MBOX_SIGNATURE		VCX_FLD(0x11f8, 8)	/* byte 0x23f */
/*
 * Signatures (only when cmdif_checksum is enabled): the XOR of the entry's 64 bytes, of
 * mailbox bytes 0x200..0x23e (control) and of mailbox bytes 0x000..0x23f (block) is 0xff.
 */
#define VCX_MBOX_CTRL_SIG_START		0x200u
#define VCX_MBOX_CTRL_SIG_LEN		0x3fu
#define VCX_SIG_GOOD			0xff

/* ---------------------------------------------------------------------------------------
 * Generic command header (first 16 bytes of every input and output)
 */
#define VCX_CMD_HDR_SIZE		16u
#define VCX_CMD_IN_OPCODE		VCX_FLD(0x00, 16)
#define VCX_CMD_IN_UID			VCX_FLD(0x10, 16)
#define VCX_CMD_IN_OP_MOD		VCX_FLD(0x30, 16)
#define VCX_CMD_OUT_STATUS		VCX_FLD(0x00, 8)
#define VCX_CMD_OUT_SYNDROME		VCX_FLD(0x20, 32)

/* Command status (output byte 0); the syndrome (dword 1) identifies the exact check. */
#define VCX_CMD_STAT_OK			0x00
#define VCX_CMD_STAT_INT_ERR		0x01
#define VCX_CMD_STAT_BAD_OP		0x02
#define VCX_CMD_STAT_BAD_PARAM		0x03
#define VCX_CMD_STAT_BAD_SYS_STATE	0x04
#define VCX_CMD_STAT_BAD_RES		0x05
#define VCX_CMD_STAT_RES_BUSY		0x06
#define VCX_CMD_STAT_NOT_READY		0x07
#define VCX_CMD_STAT_EXCEED_LIM		0x08
#define VCX_CMD_STAT_BAD_RES_STATE	0x09
#define VCX_CMD_STAT_BAD_INDEX		0x0a
#define VCX_CMD_STAT_NO_RES		0x0f
#define VCX_CMD_STAT_BAD_QP_STATE	0x10
#define VCX_CMD_STAT_BAD_PKT		0x30
#define VCX_CMD_STAT_BAD_SIZE		0x40
#define VCX_CMD_STAT_BAD_INPUT_LEN	0x50
#define VCX_CMD_STAT_BAD_OUTPUT_LEN	0x51

/* ---------------------------------------------------------------------------------------
 * Opcodes
 */
#define VCX_CMD_OP_QUERY_HCA_CAP		0x100
#define VCX_CMD_OP_QUERY_ADAPTER		0x101
#define VCX_CMD_OP_INIT_HCA			0x102
#define VCX_CMD_OP_TEARDOWN_HCA			0x103
#define VCX_CMD_OP_ENABLE_HCA			0x104
#define VCX_CMD_OP_DISABLE_HCA			0x105
#define VCX_CMD_OP_QUERY_PAGES			0x107
#define VCX_CMD_OP_MANAGE_PAGES			0x108
#define VCX_CMD_OP_SET_HCA_CAP			0x109
#define VCX_CMD_OP_QUERY_ISSI			0x10a
#define VCX_CMD_OP_SET_ISSI			0x10b
#define VCX_CMD_OP_SET_DRIVER_VERSION		0x10d
#define VCX_CMD_OP_CREATE_MKEY			0x200
#define VCX_CMD_OP_QUERY_MKEY			0x201
#define VCX_CMD_OP_DESTROY_MKEY			0x202
#define VCX_CMD_OP_QUERY_SPECIAL_CONTEXTS	0x203
#define VCX_CMD_OP_CREATE_EQ			0x301
#define VCX_CMD_OP_DESTROY_EQ			0x302
#define VCX_CMD_OP_QUERY_EQ			0x303
#define VCX_CMD_OP_GEN_EQE			0x304
#define VCX_CMD_OP_CREATE_CQ			0x400
#define VCX_CMD_OP_DESTROY_CQ			0x401
#define VCX_CMD_OP_QUERY_CQ			0x402
#define VCX_CMD_OP_MODIFY_CQ			0x403
#define VCX_CMD_OP_CREATE_QP			0x500
#define VCX_CMD_OP_DESTROY_QP			0x501
#define VCX_CMD_OP_RST2INIT_QP			0x502
#define VCX_CMD_OP_INIT2RTR_QP			0x503
#define VCX_CMD_OP_RTR2RTS_QP			0x504
#define VCX_CMD_OP_RTS2RTS_QP			0x505
#define VCX_CMD_OP_SQERR2RTS_QP			0x506
#define VCX_CMD_OP_2ERR_QP			0x507
#define VCX_CMD_OP_2RST_QP			0x50a
#define VCX_CMD_OP_QUERY_QP			0x50b
#define VCX_CMD_OP_SQD_RTS_QP			0x50c
#define VCX_CMD_OP_INIT2INIT_QP			0x50e
#define VCX_CMD_OP_CREATE_SRQ			0x700
#define VCX_CMD_OP_DESTROY_SRQ			0x701
#define VCX_CMD_OP_QUERY_SRQ			0x702
#define VCX_CMD_OP_ARM_RQ			0x703
#define VCX_CMD_OP_CREATE_XRC_SRQ		0x705
#define VCX_CMD_OP_DESTROY_XRC_SRQ		0x706
#define VCX_CMD_OP_QUERY_XRC_SRQ		0x707
#define VCX_CMD_OP_ARM_XRC_SRQ			0x708
#define VCX_CMD_OP_QUERY_VPORT_STATE		0x750
#define VCX_CMD_OP_MODIFY_VPORT_STATE		0x751
#define VCX_CMD_OP_QUERY_NIC_VPORT_CONTEXT	0x754
#define VCX_CMD_OP_MODIFY_NIC_VPORT_CONTEXT	0x755
#define VCX_CMD_OP_QUERY_ROCE_ADDRESS		0x760
#define VCX_CMD_OP_SET_ROCE_ADDRESS		0x761
#define VCX_CMD_OP_QUERY_HCA_VPORT_PKEY		0x765
#define VCX_CMD_OP_QUERY_VPORT_COUNTER		0x770
#define VCX_CMD_OP_ALLOC_Q_COUNTER		0x771
#define VCX_CMD_OP_DEALLOC_Q_COUNTER		0x772
#define VCX_CMD_OP_QUERY_Q_COUNTER		0x773
#define VCX_CMD_OP_ALLOC_PD			0x800
#define VCX_CMD_OP_DEALLOC_PD			0x801
#define VCX_CMD_OP_ALLOC_UAR			0x802
#define VCX_CMD_OP_DEALLOC_UAR			0x803
#define VCX_CMD_OP_ACCESS_REG			0x805
#define VCX_CMD_OP_ATTACH_TO_MCG		0x806
#define VCX_CMD_OP_DETACH_FROM_MCG		0x807
#define VCX_CMD_OP_NOP				0x80d
#define VCX_CMD_OP_ALLOC_XRCD			0x80e
#define VCX_CMD_OP_DEALLOC_XRCD			0x80f
#define VCX_CMD_OP_CREATE_RMP			0x90c
#define VCX_CMD_OP_MODIFY_RMP			0x90d
#define VCX_CMD_OP_DESTROY_RMP			0x90e
#define VCX_CMD_OP_QUERY_RMP			0x90f

/* ---------------------------------------------------------------------------------------
 * HCA lifecycle: ENABLE_HCA / DISABLE_HCA / INIT_HCA / TEARDOWN_HCA
 */
#define VCX_ENABLE_HCA_IN_EMBEDDED_CPU	VCX_FLD(0x40, 1)
#define VCX_ENABLE_HCA_IN_FUNCTION_ID	VCX_FLD(0x50, 16)
#define VCX_ENABLE_HCA_IN_LEN		0x10u
#define VCX_ENABLE_HCA_OUT_LEN		0x0cu	/* status, syndrome, one reserved dword */
/* DISABLE_HCA has the same input layout. */
#define VCX_DISABLE_HCA_IN_EMBEDDED_CPU	VCX_FLD(0x40, 1)
#define VCX_DISABLE_HCA_IN_FUNCTION_ID	VCX_FLD(0x50, 16)
#define VCX_DISABLE_HCA_IN_LEN		0x10u
#define VCX_DISABLE_HCA_OUT_LEN		0x0cu

#define VCX_INIT_HCA_IN_SW_VHCA_ID	VCX_FLD(0x62, 14)
#define VCX_INIT_HCA_IN_SW_OWNER_ID	VCX_FLD(0x80, 128)
#define VCX_INIT_HCA_IN_LEN		0x20u
#define VCX_INIT_HCA_IN_MIN_LEN		0x10u	/* older drivers send the 16-byte form */
#define VCX_INIT_HCA_OUT_LEN		0x10u

#define VCX_TEARDOWN_HCA_IN_PROFILE	VCX_FLD(0x50, 16)
#define VCX_TEARDOWN_HCA_OUT_STATE	VCX_FLD(0x7f, 1)	/* force close: 0 ok, 1 fail */
#define VCX_TEARDOWN_HCA_IN_LEN		0x10u
#define VCX_TEARDOWN_HCA_OUT_LEN	0x10u
#define VCX_TEARDOWN_PROFILE_GRACEFUL	0x0
#define VCX_TEARDOWN_PROFILE_FORCE_CLOSE	0x1
#define VCX_TEARDOWN_PROFILE_PREPARE_FAST	0x2

/* ---------------------------------------------------------------------------------------
 * ISSI
 */
#define VCX_QUERY_ISSI_OUT_CURRENT_ISSI	VCX_FLD(0x050, 16)
#define VCX_QUERY_ISSI_OUT_SUPPORTED_DW0	VCX_FLD(0x360, 32)	/* bit n: ISSI n */
#define VCX_ISSI_0			(1u << 0)	/* supported_issi_dw0 bits */
#define VCX_ISSI_1			(1u << 1)
#define VCX_QUERY_ISSI_IN_LEN		0x10u
#define VCX_QUERY_ISSI_OUT_LEN		0x70u
#define VCX_SET_ISSI_IN_CURRENT_ISSI	VCX_FLD(0x050, 16)
#define VCX_SET_ISSI_IN_LEN		0x10u
#define VCX_SET_ISSI_OUT_LEN		0x10u

/* ---------------------------------------------------------------------------------------
 * Pages: QUERY_PAGES / MANAGE_PAGES, 8-byte page address (PAS) entries
 */
#define VCX_PAGE_SHIFT			12
#define VCX_PAGE_SIZE			(1u << VCX_PAGE_SHIFT)
#define VCX_PAS_SIZE			8u

#define VCX_QUERY_PAGES_OP_MOD_BOOT	0x1
#define VCX_QUERY_PAGES_OP_MOD_INIT	0x2
#define VCX_QUERY_PAGES_OP_MOD_REGULAR	0x3
#define VCX_QUERY_PAGES_IN_EMBEDDED_CPU	VCX_FLD(0x40, 1)
#define VCX_QUERY_PAGES_IN_FUNCTION_ID	VCX_FLD(0x50, 16)
#define VCX_QUERY_PAGES_OUT_EMBEDDED_CPU	VCX_FLD(0x40, 1)
#define VCX_QUERY_PAGES_OUT_FUNCTION_ID	VCX_FLD(0x50, 16)
#define VCX_QUERY_PAGES_OUT_NUM_PAGES	VCX_FLD(0x60, 32)	/* signed */
#define VCX_QUERY_PAGES_IN_LEN		0x10u
#define VCX_QUERY_PAGES_OUT_LEN		0x10u

#define VCX_MANAGE_PAGES_OP_MOD_ALLOC_FAIL	0x0
#define VCX_MANAGE_PAGES_OP_MOD_GIVE	0x1
#define VCX_MANAGE_PAGES_OP_MOD_TAKE	0x2
#define VCX_MANAGE_PAGES_IN_EMBEDDED_CPU	VCX_FLD(0x40, 1)
#define VCX_MANAGE_PAGES_IN_FUNCTION_ID	VCX_FLD(0x50, 16)
#define VCX_MANAGE_PAGES_IN_NUM_ENTRIES	VCX_FLD(0x60, 32)
#define VCX_MANAGE_PAGES_IN_PAS		VCX_FLD(0x80, 0)	/* byte 0x10: PAS array */
#define VCX_MANAGE_PAGES_OUT_NUM_ENTRIES	VCX_FLD(0x40, 32)
#define VCX_MANAGE_PAGES_OUT_PAS	VCX_FLD(0x80, 0)	/* byte 0x10: PAS array */
#define VCX_MANAGE_PAGES_IN_LEN		0x10u	/* plus 8 bytes per PAS entry given */
#define VCX_MANAGE_PAGES_OUT_LEN	0x10u	/* plus 8 bytes per PAS entry taken */

/* ---------------------------------------------------------------------------------------
 * Capabilities: QUERY_HCA_CAP / SET_HCA_CAP (op_mod = cap_type << 1 | mode)
 */
#define VCX_HCA_CAP_OP_MOD_MAX		0x0
#define VCX_HCA_CAP_OP_MOD_CUR		0x1
#define VCX_HCA_CAP_OP_MOD(type, mode)	((type) << 1 | (mode))
#define VCX_HCA_CAP_TYPE_GENERAL	0x00
#define VCX_HCA_CAP_TYPE_ETH_OFFLOADS	0x01
#define VCX_HCA_CAP_TYPE_ODP		0x02
#define VCX_HCA_CAP_TYPE_ATOMIC		0x03
#define VCX_HCA_CAP_TYPE_ROCE		0x04
#define VCX_HCA_CAP_TYPE_GENERAL_2	0x20

#define VCX_HCA_CAP_IN_OTHER_FUNCTION	VCX_FLD(0x40, 1)
#define VCX_HCA_CAP_IN_FUNCTION_ID	VCX_FLD(0x50, 16)
#define VCX_HCA_CAP_CAPABILITY		VCX_FLD(0x80, 32768)	/* byte 0x10, 4 KiB union */
#define VCX_HCA_CAP_SIZE		0x1000u
#define VCX_QUERY_HCA_CAP_IN_LEN	0x10u
#define VCX_QUERY_HCA_CAP_OUT_LEN	0x1010u
#define VCX_SET_HCA_CAP_IN_LEN		0x1010u
#define VCX_SET_HCA_CAP_OUT_LEN		0x10u

/* General device capabilities (cmd_hca_cap), relative to the capability page. */
#define VCX_CAP_GEN_PAGE_REQUEST_DISABLE	VCX_FLD(0x006, 1)
#define VCX_CAP_GEN_HCA_CAP_2		VCX_FLD(0x020, 1)
#define VCX_CAP_GEN_VHCA_ID		VCX_FLD(0x030, 16)
#define VCX_CAP_GEN_LOG_MAX_SRQ_SZ	VCX_FLD(0x080, 8)
#define VCX_CAP_GEN_LOG_MAX_QP_SZ	VCX_FLD(0x088, 8)
#define VCX_CAP_GEN_LOG_MAX_QP		VCX_FLD(0x09b, 5)
#define VCX_CAP_GEN_LOG_MAX_SRQ		VCX_FLD(0x0ab, 5)
#define VCX_CAP_GEN_LOG_MAX_CQ_SZ	VCX_FLD(0x0c8, 8)
#define VCX_CAP_GEN_LOG_MAX_CQ		VCX_FLD(0x0db, 5)
#define VCX_CAP_GEN_LOG_MAX_EQ_SZ	VCX_FLD(0x0e0, 8)
#define VCX_CAP_GEN_LOG_MAX_MKEY	VCX_FLD(0x0ea, 6)
#define VCX_CAP_GEN_FAST_TEARDOWN	VCX_FLD(0x0fb, 1)
#define VCX_CAP_GEN_LOG_MAX_EQ		VCX_FLD(0x0fc, 4)
#define VCX_CAP_GEN_LOG_MAX_MRW_SZ	VCX_FLD(0x109, 7)
#define VCX_CAP_GEN_FORCE_TEARDOWN	VCX_FLD(0x110, 1)
#define VCX_CAP_GEN_UMR_EXTENDED_TRANSLATION_OFFSET	VCX_FLD(0x118, 1)
#define VCX_CAP_GEN_LOG_MAX_KLM_LIST_SIZE	VCX_FLD(0x11a, 6)	/* fast-registration list entries */
#define VCX_CAP_GEN_IMAICL		VCX_FLD(0x231, 1)	/* memory windows (KLM windows, bind UMR, invalidation) */
#define VCX_CAP_GEN_RELEASE_ALL_PAGES	VCX_FLD(0x145, 1)
#define VCX_CAP_GEN_LOG_MAX_RA_REQ_QP	VCX_FLD(0x14a, 6)
#define VCX_CAP_GEN_LOG_MAX_RA_RES_QP	VCX_FLD(0x15a, 6)
#define VCX_CAP_GEN_CACHE_LINE_128BYTE	VCX_FLD(0x164, 1)
#define VCX_CAP_GEN_RTS2RTS_QP_COUNTERS_SET_ID	VCX_FLD(0x169, 1)	/* RTS2RTS takes counter_set_id */
#define VCX_CAP_GEN_GID_TABLE_SIZE	VCX_FLD(0x170, 16)
#define VCX_CAP_GEN_OUT_OF_SEQ_CNT	VCX_FLD(0x180, 1)	/* Q counter out_of_sequence */
#define VCX_CAP_GEN_RETRANSMISSION_Q_COUNTERS	VCX_FLD(0x182, 1)	/* duplicate_request .. local_ack_timeout_err */
#define VCX_CAP_GEN_MAX_QP_CNT		VCX_FLD(0x186, 10)
#define VCX_CAP_GEN_ENHANCED_ERROR_Q_COUNTERS	VCX_FLD(0x1b1, 1)	/* the Q counters' CQE error fields */
#define VCX_CAP_GEN_ROCE_ACCL		VCX_FLD(0x149, 1)	/* the Q counters' roce_adp_retrans .. */
#define VCX_CAP_GEN_PKEY_TABLE_SIZE	VCX_FLD(0x190, 16)
#define VCX_CAP_GEN_VPORT_GROUP_MANAGER	VCX_FLD(0x1a0, 1)
#define VCX_CAP_GEN_IB_VIRT		VCX_FLD(0x1a2, 1)
#define VCX_CAP_GEN_ETH_VIRT		VCX_FLD(0x1a3, 1)
#define VCX_CAP_GEN_NIC_FLOW_TABLE	VCX_FLD(0x1a6, 1)
#define VCX_CAP_GEN_ESWITCH_MANAGER	VCX_FLD(0x1a7, 1)
#define VCX_CAP_GEN_MCAM_REG		VCX_FLD(0x1a9, 1)
#define VCX_CAP_GEN_PCAM_REG		VCX_FLD(0x1aa, 1)
#define VCX_CAP_GEN_LOCAL_CA_ACK_DELAY	VCX_FLD(0x1ab, 5)
#define VCX_CAP_GEN_PORT_TYPE		VCX_FLD(0x1b6, 2)
#define VCX_CAP_GEN_NUM_PORTS		VCX_FLD(0x1b8, 8)
#define VCX_CAP_GEN_LOG_MAX_MSG		VCX_FLD(0x1c3, 5)
#define VCX_CAP_GEN_CQE_VERSION		VCX_FLD(0x1fc, 4)
#define VCX_CAP_GEN_UMR_MODIFY_ENTITY_SIZE_DISABLED	VCX_FLD(0x207, 1)
#define VCX_CAP_GEN_UMR_MODIFY_ATOMIC_DISABLED	VCX_FLD(0x208, 1)
#define VCX_CAP_GEN_CMDIF_CHECKSUM	VCX_FLD(0x210, 2)
#define VCX_CAP_GEN_DCT			VCX_FLD(0x21a, 1)
#define VCX_CAP_GEN_QOS			VCX_FLD(0x21b, 1)
#define VCX_CAP_GEN_ETH_NET_OFFLOADS	VCX_FLD(0x21c, 1)
#define VCX_CAP_GEN_ROCE		VCX_FLD(0x21d, 1)
#define VCX_CAP_GEN_ATOMIC		VCX_FLD(0x21e, 1)
#define VCX_CAP_GEN_CQ_OI		VCX_FLD(0x220, 1)
#define VCX_CAP_GEN_CQ_RESIZE		VCX_FLD(0x221, 1)
#define VCX_CAP_GEN_CQ_MODERATION	VCX_FLD(0x222, 1)
#define VCX_CAP_GEN_CQ_PERIOD_MODE_MODIFY	VCX_FLD(0x223, 1)
#define VCX_CAP_GEN_PG			VCX_FLD(0x227, 1)
#define VCX_CAP_GEN_BLOCK_LB_MC		VCX_FLD(0x228, 1)
#define VCX_CAP_GEN_SCQE_BREAK_MODERATION	VCX_FLD(0x22a, 1)
#define VCX_CAP_GEN_CQ_PERIOD_START_FROM_CQE	VCX_FLD(0x22b, 1)
#define VCX_CAP_GEN_XRC			VCX_FLD(0x23c, 1)
#define VCX_CAP_GEN_UD			VCX_FLD(0x23d, 1)
#define VCX_CAP_GEN_UC			VCX_FLD(0x23e, 1)
#define VCX_CAP_GEN_RC			VCX_FLD(0x23f, 1)
#define VCX_CAP_GEN_UAR_4K		VCX_FLD(0x240, 1)
#define VCX_CAP_GEN_UAR_SZ		VCX_FLD(0x24a, 6)
#define VCX_CAP_GEN_LOG_PG_SZ		VCX_FLD(0x258, 8)
#define VCX_CAP_GEN_BF			VCX_FLD(0x260, 1)
#define VCX_CAP_GEN_DRIVER_VERSION	VCX_FLD(0x261, 1)
#define VCX_CAP_GEN_LOG_BF_REG_SIZE	VCX_FLD(0x26b, 5)
#define VCX_CAP_GEN_MAX_WQE_SZ_SQ	VCX_FLD(0x290, 16)
#define VCX_CAP_GEN_MAX_WQE_SZ_RQ	VCX_FLD(0x2b0, 16)
#define VCX_CAP_GEN_MAX_QP_MCG		VCX_FLD(0x2e7, 25)
#define VCX_CAP_GEN_LOG_MAX_MCG		VCX_FLD(0x318, 8)
#define VCX_CAP_GEN_LOG_MAX_TRANSPORT_DOMAIN	VCX_FLD(0x323, 5)
#define VCX_CAP_GEN_LOG_MAX_PD		VCX_FLD(0x32b, 5)
#define VCX_CAP_GEN_LOG_MAX_XRCD	VCX_FLD(0x33b, 5)
#define VCX_CAP_GEN_LOG_MAX_RMP		VCX_FLD(0x383, 5)
#define VCX_CAP_GEN_ROCE_RW_SUPPORTED	VCX_FLD(0x3a1, 1)
#define VCX_CAP_GEN_LOG_MAX_WQ_SZ	VCX_FLD(0x3db, 5)
#define VCX_CAP_GEN_DISABLE_LOCAL_LB_UC	VCX_FLD(0x3e1, 1)
#define VCX_CAP_GEN_DISABLE_LOCAL_LB_MC	VCX_FLD(0x3e2, 1)
#define VCX_CAP_GEN_GENERAL_OBJ_TYPES	VCX_FLD(0x400, 64)
#define VCX_CAP_GEN_LOG_MAX_UCTX	VCX_FLD(0x463, 5)
#define VCX_CAP_GEN_MAX_NUM_EQS		VCX_FLD(0x470, 16)
#define VCX_CAP_GEN_LOG_UAR_PAGE_SZ	VCX_FLD(0x490, 16)
#define VCX_CAP_GEN_DEVICE_FREQUENCY_KHZ	VCX_FLD(0x4e0, 32)
#define VCX_CAP_GEN_NUM_OF_UARS_PER_PAGE	VCX_FLD(0x520, 32)
#define VCX_CAP_GEN_NATIVE_PORT_NUM	VCX_FLD(0x608, 8)
#define VCX_CAP_GEN_NUM_VHCA_PORTS	VCX_FLD(0x610, 8)

#define VCX_CAP_PORT_TYPE_IB		0x0
#define VCX_CAP_PORT_TYPE_ETH		0x1
#define VCX_CAP_CMDIF_CHECKSUM_DISABLED	0x0
#define VCX_CAP_CMDIF_CHECKSUM_INITIAL	0x1
#define VCX_CAP_CMDIF_CHECKSUM_ENABLED	0x3

/* RoCE capabilities (roce_cap), relative to the capability page. */
#define VCX_CAP_ROCE_SW_R_ROCE_SRC_UDP_PORT	VCX_FLD(0x004, 1)
#define VCX_CAP_ROCE_QP_TS_FORMAT	VCX_FLD(0x01e, 2)
#define VCX_CAP_ROCE_L3_TYPE		VCX_FLD(0x08c, 4)	/* bit1 IPv4, bit2 IPv6 */
#define VCX_CAP_ROCE_VERSION		VCX_FLD(0x098, 8)	/* bit0 v1, bit2 v2 */
#define VCX_CAP_ROCE_R_ROCE_DEST_UDP_PORT	VCX_FLD(0x0b0, 16)
#define VCX_CAP_ROCE_R_ROCE_MAX_SRC_UDP_PORT	VCX_FLD(0x0c0, 16)
#define VCX_CAP_ROCE_R_ROCE_MIN_SRC_UDP_PORT	VCX_FLD(0x0d0, 16)
#define VCX_CAP_ROCE_ADDRESS_TABLE_SIZE	VCX_FLD(0x0f0, 16)
#define VCX_ROCE_L3_TYPE_IPV4		(1u << 1)
#define VCX_ROCE_L3_TYPE_IPV6		(1u << 2)
#define VCX_ROCE_VERSION_1		(1u << 0)
#define VCX_ROCE_VERSION_2		(1u << 2)
#define VCX_ROCE_V2_UDP_DPORT		4791

/*
 * Atomic capabilities (atomic_caps), relative to the capability page. The requester's
 * 8-byte endianness mode says in which byte order the responder's memory and the
 * returned original value are: 0 big-endian (the default), 1 host order; a driver sets 1
 * with SET_HCA_CAP when supported_atomic_req_8B_endianness_mode_1 is 1.
 */
#define VCX_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE	VCX_FLD(0x040, 2)
#define VCX_CAP_ATOMIC_SUPPORTED_REQ_8B_ENDIANNESS_MODE_1	VCX_FLD(0x046, 1)
#define VCX_CAP_ATOMIC_OPERATIONS	VCX_FLD(0x090, 16)
#define VCX_CAP_ATOMIC_SIZE_QP		VCX_FLD(0x0b0, 16)
#define VCX_CAP_ATOMIC_SIZE_DC		VCX_FLD(0x0d0, 16)
#define VCX_ATOMIC_REQ_MODE_BE		0x0
#define VCX_ATOMIC_REQ_MODE_HOST	0x1
#define VCX_ATOMIC_OP_CMP_SWAP		(1u << 0)	/* atomic_operations bits */
#define VCX_ATOMIC_OP_FETCH_ADD		(1u << 1)
#define VCX_ATOMIC_OP_MASKED_CMP_SWAP	(1u << 2)
#define VCX_ATOMIC_OP_MASKED_FETCH_ADD	(1u << 3)
#define VCX_ATOMIC_SIZE_8B		(1u << 3)	/* atomic_size_*: bit n = 2^n bytes */

/* ---------------------------------------------------------------------------------------
 * QUERY_ADAPTER
 */
#define VCX_QUERY_ADAPTER_OUT_PARAMS	VCX_FLD(0x080, 2048)	/* byte 0x10 */
#define VCX_QUERY_ADAPTER_IN_LEN	0x10u
#define VCX_QUERY_ADAPTER_OUT_LEN	0x110u
/* query_adapter_param_block, relative to VCX_QUERY_ADAPTER_OUT_PARAMS */
#define VCX_ADAPTER_IEEE_VENDOR_ID	VCX_FLD(0x0c8, 24)
#define VCX_ADAPTER_VSD_VENDOR_ID	VCX_FLD(0x0f0, 16)
#define VCX_ADAPTER_VSD			VCX_FLD(0x100, 1664)	/* 208 bytes */
#define VCX_ADAPTER_PSID		VCX_FLD(0x780, 128)	/* 16 bytes, board id */
#define VCX_ADAPTER_PSID_LEN		16u

/* ---------------------------------------------------------------------------------------
 * ACCESS_REG (op_mod 0 write, 1 read) and the registers the device implements
 */
#define VCX_ACCESS_REG_OP_MOD_WRITE	0x0
#define VCX_ACCESS_REG_OP_MOD_READ	0x1
#define VCX_ACCESS_REG_IN_REGISTER_ID	VCX_FLD(0x50, 16)
#define VCX_ACCESS_REG_IN_ARGUMENT	VCX_FLD(0x60, 32)
#define VCX_ACCESS_REG_IN_DATA		VCX_FLD(0x80, 0)	/* byte 0x10 */
#define VCX_ACCESS_REG_OUT_DATA		VCX_FLD(0x80, 0)	/* byte 0x10 */
#define VCX_ACCESS_REG_HDR_LEN		0x10u

#define VCX_REG_PMTU			0x5003
#define VCX_REG_PTYS			0x5004
#define VCX_REG_PAOS			0x5006
#define VCX_REG_PFCC			0x5007
#define VCX_REG_PPCNT			0x5008
#define VCX_REG_HOST_ENDIANNESS		0x7004
#define VCX_REG_NODE_DESC		0x6001
#define VCX_REG_DTOR			0xc00e

/* NODE_DESC: the node description, 64 bytes of ASCII padded with NULs (IBTA NodeDescription) */
#define VCX_REG_NODE_DESC_LEN		0x40u

/* PAOS: port administrative and operational status (16 bytes) */
#define VCX_REG_PAOS_LEN		0x10u
#define VCX_PAOS_SWID			VCX_FLD(0x00, 8)
#define VCX_PAOS_LOCAL_PORT		VCX_FLD(0x08, 8)
#define VCX_PAOS_ADMIN_STATUS		VCX_FLD(0x14, 4)
#define VCX_PAOS_OPER_STATUS		VCX_FLD(0x1c, 4)
#define VCX_PAOS_ASE			VCX_FLD(0x20, 1)	/* admin status write enable */
#define VCX_PAOS_EE			VCX_FLD(0x21, 1)	/* event (e) write enable */
#define VCX_PAOS_E			VCX_FLD(0x3e, 2)	/* event generation */
#define VCX_PORT_STATUS_UP		1
#define VCX_PORT_STATUS_DOWN		2
#define VCX_PORT_STATUS_UP_ONCE		3
#define VCX_PORT_STATUS_DISABLED	4

/* PFCC: port flow control configuration (32 bytes): global pause and per-priority PFC */
#define VCX_REG_PFCC_LEN		0x20u
#define VCX_PFCC_LOCAL_PORT		VCX_FLD(0x08, 8)
#define VCX_PFCC_PPAN_MASK_N		VCX_FLD(0x1b, 1)
#define VCX_PFCC_MINOR_STALL_MASK	VCX_FLD(0x1c, 1)
#define VCX_PFCC_CRITICAL_STALL_MASK	VCX_FLD(0x1d, 1)
#define VCX_PFCC_PPAN			VCX_FLD(0x20, 4)
#define VCX_PFCC_PRIO_MASK_TX		VCX_FLD(0x28, 8)
#define VCX_PFCC_PRIO_MASK_RX		VCX_FLD(0x38, 8)
#define VCX_PFCC_PPTX			VCX_FLD(0x40, 1)
#define VCX_PFCC_APTX			VCX_FLD(0x41, 1)
#define VCX_PFCC_PPTX_MASK_N		VCX_FLD(0x42, 1)
#define VCX_PFCC_PFCTX			VCX_FLD(0x48, 8)
#define VCX_PFCC_PPRX			VCX_FLD(0x60, 1)
#define VCX_PFCC_APRX			VCX_FLD(0x61, 1)
#define VCX_PFCC_PPRX_MASK_N		VCX_FLD(0x62, 1)
#define VCX_PFCC_PFCRX			VCX_FLD(0x68, 8)
#define VCX_PFCC_DEVICE_STALL_MINOR_WATERMARK	VCX_FLD(0x80, 16)
#define VCX_PFCC_DEVICE_STALL_CRITICAL_WATERMARK	VCX_FLD(0x90, 16)

/*
 * PPCNT: port performance counters (256 bytes). A query names a counter group (grp) and,
 * for the per-priority group, a priority (prio_tc); the counter set from byte 8 holds
 * that group's counters as 64-bit big-endian values (high dword first), in the group's
 * order; the physical layer group ends with two 32-bit event counts. clr clears the
 * group's counters (Set and Query).
 */
#define VCX_REG_PPCNT_LEN		0x100u
#define VCX_PPCNT_SWID			VCX_FLD(0x00, 8)
#define VCX_PPCNT_LOCAL_PORT		VCX_FLD(0x08, 8)
#define VCX_PPCNT_PNAT			VCX_FLD(0x10, 2)
#define VCX_PPCNT_GRP			VCX_FLD(0x1a, 6)
#define VCX_PPCNT_CLR			VCX_FLD(0x20, 1)
#define VCX_PPCNT_PLANE_IND		VCX_FLD(0x34, 4)
#define VCX_PPCNT_PRIO_TC		VCX_FLD(0x3b, 5)
#define VCX_PPCNT_COUNTER_SET		0x08u	/* byte offset of the counter set */
#define VCX_PPCNT_GRP_IEEE_802_3	0x00
#define VCX_PPCNT_GRP_RFC_2863		0x01
#define VCX_PPCNT_GRP_RFC_2819		0x02
#define VCX_PPCNT_GRP_PER_PRIO		0x10
#define VCX_PPCNT_GRP_PHYS_LAYER	0x12
#define VCX_PPCNT_GRP_IB_PORT		0x20	/* InfiniBand port counters (IBTA PortCounters) */
/* the IB port counters group: narrow counters at these places of the counter set */
#define VCX_PPCNT_IB_SYMBOL_ERRORS		VCX_FLD(0x00, 16)
#define VCX_PPCNT_IB_LINK_ERROR_RECOVERY	VCX_FLD(0x10, 8)
#define VCX_PPCNT_IB_LINK_DOWNED		VCX_FLD(0x18, 8)
#define VCX_PPCNT_IB_PORT_RCV_ERRORS		VCX_FLD(0x20, 16)
#define VCX_PPCNT_IB_RCV_REMPHYS_ERRORS		VCX_FLD(0x30, 16)
#define VCX_PPCNT_IB_RCV_SWITCH_RELAY_ERRORS	VCX_FLD(0x40, 16)
#define VCX_PPCNT_IB_XMIT_DISCARDS		VCX_FLD(0x50, 16)
#define VCX_PPCNT_IB_XMIT_CONSTRAINT_ERRORS	VCX_FLD(0x60, 8)
#define VCX_PPCNT_IB_RCV_CONSTRAINT_ERRORS	VCX_FLD(0x68, 8)
#define VCX_PPCNT_IB_LINK_OVERRUN_ERRORS	VCX_FLD(0x78, 8)	/* local link 7:4, overrun 3:0 */
#define VCX_PPCNT_IB_VL15_DROPPED		VCX_FLD(0x90, 16)
#define VCX_PPCNT_IB_XMIT_WAIT			VCX_FLD(0x120, 32)
/* 64-bit counters: their index in the counter set (byte 8 * index), by group */
#define VCX_PPCNT_802_3_FRAMES_TX	0	/* a_frames_transmitted_ok */
#define VCX_PPCNT_802_3_FRAMES_RX	1	/* a_frames_received_ok */
#define VCX_PPCNT_802_3_FCS_ERRORS	2	/* a_frame_check_sequence_errors */
#define VCX_PPCNT_802_3_ALIGN_ERRORS	3	/* a_alignment_errors */
#define VCX_PPCNT_802_3_OCTETS_TX	4	/* a_octets_transmitted_ok */
#define VCX_PPCNT_802_3_OCTETS_RX	5	/* a_octets_received_ok */
#define VCX_PPCNT_802_3_MC_TX		6	/* a_multicast_frames_xmitted_ok */
#define VCX_PPCNT_802_3_BC_TX		7	/* a_broadcast_frames_xmitted_ok */
#define VCX_PPCNT_802_3_MC_RX		8	/* a_multicast_frames_received_ok */
#define VCX_PPCNT_802_3_BC_RX		9	/* a_broadcast_frames_received_ok */
#define VCX_PPCNT_802_3_TOO_LONG	12	/* a_frame_too_long_errors */
#define VCX_PPCNT_2863_IN_OCTETS	0
#define VCX_PPCNT_2863_IN_UCAST		1
#define VCX_PPCNT_2863_IN_DISCARDS	2
#define VCX_PPCNT_2863_IN_ERRORS	3
#define VCX_PPCNT_2863_OUT_OCTETS	5
#define VCX_PPCNT_2863_OUT_UCAST	6
#define VCX_PPCNT_2863_IN_MC		9
#define VCX_PPCNT_2863_IN_BC		10
#define VCX_PPCNT_2863_OUT_MC		11
#define VCX_PPCNT_2863_OUT_BC		12
#define VCX_PPCNT_2819_DROP_EVENTS	0
#define VCX_PPCNT_2819_OCTETS		1
#define VCX_PPCNT_2819_PKTS		2
#define VCX_PPCNT_2819_BC		3
#define VCX_PPCNT_2819_MC		4
#define VCX_PPCNT_2819_UNDERSIZE	6
#define VCX_PPCNT_2819_OVERSIZE		7
#define VCX_PPCNT_2819_FRAGMENTS	8
#define VCX_PPCNT_2819_JABBERS		9
#define VCX_PPCNT_2819_PKTS64		11	/* then 65-127 ... 8192-10239: 10 bins */
#define VCX_PPCNT_2819_BINS		10
#define VCX_PPCNT_PRIO_RX_OCTETS	0
#define VCX_PPCNT_PRIO_RX_FRAMES	4
#define VCX_PPCNT_PRIO_TX_OCTETS	5
#define VCX_PPCNT_PRIO_TX_FRAMES	9
#define VCX_PPCNT_PRIO_RX_DISCARDS	15
#define VCX_PPCNT_PHYS_TIME_SINCE_CLEAR	0	/* ms */
/* the physical layer group's 32-bit counts, byte offsets in the counter set */
#define VCX_PPCNT_PHYS_LINK_DOWN_EVENTS	0xc0u
#define VCX_PPCNT_PHYS_RECOVERY_EVENTS	0xc4u

/* PMTU: port MTU, bytes (16 bytes) */
#define VCX_REG_PMTU_LEN		0x10u
#define VCX_PMTU_LOCAL_PORT		VCX_FLD(0x08, 8)
#define VCX_PMTU_MAX_MTU		VCX_FLD(0x20, 16)
#define VCX_PMTU_ADMIN_MTU		VCX_FLD(0x40, 16)
#define VCX_PMTU_OPER_MTU		VCX_FLD(0x60, 16)

/* PTYS: port type and speed (64 bytes) */
#define VCX_REG_PTYS_LEN		0x40u
#define VCX_PTYS_AN_DISABLE_ADMIN	VCX_FLD(0x001, 1)
#define VCX_PTYS_AN_DISABLE_CAP		VCX_FLD(0x002, 1)
#define VCX_PTYS_LOCAL_PORT		VCX_FLD(0x008, 8)
#define VCX_PTYS_PROTO_MASK		VCX_FLD(0x01d, 3)
#define VCX_PTYS_AN_STATUS		VCX_FLD(0x020, 4)
#define VCX_PTYS_EXT_ETH_PROTO_CAP	VCX_FLD(0x040, 32)
#define VCX_PTYS_ETH_PROTO_CAP		VCX_FLD(0x060, 32)
#define VCX_PTYS_IB_LINK_WIDTH_CAP	VCX_FLD(0x080, 16)
#define VCX_PTYS_IB_PROTO_CAP		VCX_FLD(0x090, 16)
#define VCX_PTYS_EXT_ETH_PROTO_ADMIN	VCX_FLD(0x0a0, 32)
#define VCX_PTYS_ETH_PROTO_ADMIN	VCX_FLD(0x0c0, 32)
#define VCX_PTYS_IB_LINK_WIDTH_ADMIN	VCX_FLD(0x0e0, 16)
#define VCX_PTYS_IB_PROTO_ADMIN		VCX_FLD(0x0f0, 16)
#define VCX_PTYS_EXT_ETH_PROTO_OPER	VCX_FLD(0x100, 32)
#define VCX_PTYS_ETH_PROTO_OPER		VCX_FLD(0x120, 32)
#define VCX_PTYS_IB_LINK_WIDTH_OPER	VCX_FLD(0x140, 16)
#define VCX_PTYS_IB_PROTO_OPER		VCX_FLD(0x150, 16)
#define VCX_PTYS_CONNECTOR_TYPE		VCX_FLD(0x17c, 4)
#define VCX_PTYS_ETH_PROTO_LP_ADVERTISE	VCX_FLD(0x180, 32)
#define VCX_PTYS_PROTO_IB		(1u << 0)
#define VCX_PTYS_PROTO_ETH		(1u << 2)
/* eth_proto_* bits (legacy Ethernet protocols; bit numbers, as mlx5e_link_mode) */
#define VCX_ETH_LINK_10GBASE_KR		4
#define VCX_ETH_LINK_40GBASE_CR4	6
#define VCX_ETH_LINK_40GBASE_KR4	7
#define VCX_ETH_LINK_10GBASE_CR		12
#define VCX_ETH_LINK_10GBASE_SR		13
#define VCX_ETH_LINK_10GBASE_ER		14
#define VCX_ETH_LINK_40GBASE_SR4	15
#define VCX_ETH_LINK_40GBASE_LR4	16
#define VCX_ETH_LINK_100GBASE_CR4	20
#define VCX_ETH_LINK_100GBASE_SR4	21
#define VCX_ETH_LINK_100GBASE_KR4	22
#define VCX_ETH_LINK_100GBASE_LR4	23
#define VCX_ETH_LINK_25GBASE_CR		27
#define VCX_ETH_LINK_25GBASE_KR		28
#define VCX_ETH_LINK_25GBASE_SR		29

/* HOST_ENDIANNESS (16 bytes): byte 0 is 0 for a little-endian host, 0x80 for big-endian */
#define VCX_REG_HOST_ENDIANNESS_LEN	0x10u
#define VCX_HOST_ENDIANNESS_HE		VCX_FLD(0x00, 8)
#define VCX_HOST_ENDIANNESS_LITTLE	0x00
#define VCX_HOST_ENDIANNESS_BIG		0x80

/* ---------------------------------------------------------------------------------------
 * Vport: QUERY_VPORT_STATE, QUERY/MODIFY_NIC_VPORT_CONTEXT
 */
#define VCX_VPORT_OP_MOD_VNIC_VPORT	0x0
#define VCX_QUERY_VPORT_STATE_IN_OTHER_VPORT	VCX_FLD(0x40, 1)
#define VCX_QUERY_VPORT_STATE_IN_VPORT_NUMBER	VCX_FLD(0x50, 16)
#define VCX_QUERY_VPORT_STATE_OUT_ADMIN_STATE	VCX_FLD(0x78, 4)
#define VCX_QUERY_VPORT_STATE_OUT_STATE	VCX_FLD(0x7c, 4)
#define VCX_QUERY_VPORT_STATE_IN_LEN	0x10u
#define VCX_QUERY_VPORT_STATE_OUT_LEN	0x10u
#define VCX_VPORT_STATE_DOWN		0x0
#define VCX_VPORT_STATE_UP		0x1
#define VCX_VPORT_ADMIN_STATE_DOWN	0x0
#define VCX_VPORT_ADMIN_STATE_UP	0x1
#define VCX_VPORT_ADMIN_STATE_AUTO	0x2

/*
 * QUERY_HCA_VPORT_PKEY: pkey_index, or 0xffff for the whole table; the output is the
 * 16-byte header, then one dword per entry with the P_Key in its low 16 bits.
 */
#define VCX_QUERY_HCA_VPORT_PKEY_IN_OTHER_VPORT		VCX_FLD(0x40, 1)
#define VCX_QUERY_HCA_VPORT_PKEY_IN_PORT_NUM		VCX_FLD(0x4c, 4)
#define VCX_QUERY_HCA_VPORT_PKEY_IN_VPORT_NUMBER	VCX_FLD(0x50, 16)
#define VCX_QUERY_HCA_VPORT_PKEY_IN_PKEY_INDEX		VCX_FLD(0x70, 16)
#define VCX_QUERY_HCA_VPORT_PKEY_OUT_PKEY_AT		0x10u	/* entry i: byte 0x10 + 4 * i */
#define VCX_QUERY_HCA_VPORT_PKEY_IN_LEN		0x10u
#define VCX_QUERY_HCA_VPORT_PKEY_OUT_LEN	0x14u	/* one entry */
#define VCX_PKEY_INDEX_ALL			0xffffu
#define VCX_PKEY_TABLE_LEN			128u	/* cap pkey_table_size 0 */
#define VCX_PKEY_DEFAULT			0xffffu	/* full-member default P_Key */

#define VCX_QUERY_NIC_VPORT_CTX_IN_OTHER_VPORT	VCX_FLD(0x40, 1)
#define VCX_QUERY_NIC_VPORT_CTX_IN_VPORT_NUMBER	VCX_FLD(0x50, 16)
#define VCX_QUERY_NIC_VPORT_CTX_IN_ALLOWED_LIST_TYPE	VCX_FLD(0x65, 3)
#define VCX_QUERY_NIC_VPORT_CTX_OUT_CTX	VCX_FLD(0x80, 2048)	/* byte 0x10 */
#define VCX_QUERY_NIC_VPORT_CTX_IN_LEN	0x10u
#define VCX_QUERY_NIC_VPORT_CTX_OUT_LEN	0x110u

#define VCX_MODIFY_NIC_VPORT_CTX_IN_OTHER_VPORT	VCX_FLD(0x40, 1)
#define VCX_MODIFY_NIC_VPORT_CTX_IN_VPORT_NUMBER	VCX_FLD(0x50, 16)
#define VCX_MODIFY_NIC_VPORT_CTX_IN_FIELD_SELECT	VCX_FLD(0x60, 32)
#define VCX_MODIFY_NIC_VPORT_CTX_IN_CTX	VCX_FLD(0x800, 2048)	/* byte 0x100 */
#define VCX_MODIFY_NIC_VPORT_CTX_IN_LEN	0x200u
#define VCX_MODIFY_NIC_VPORT_CTX_OUT_LEN	0x10u
/* field_select bits (dword 3 of MODIFY_NIC_VPORT_CONTEXT) */
#define VCX_NIC_VPORT_FS_ROCE_EN		(1u << 1)
#define VCX_NIC_VPORT_FS_ADDRESSES_LIST		(1u << 2)
#define VCX_NIC_VPORT_FS_PERMANENT_ADDRESS	(1u << 3)
#define VCX_NIC_VPORT_FS_PROMISC		(1u << 4)
#define VCX_NIC_VPORT_FS_CHANGE_EVENT		(1u << 5)
#define VCX_NIC_VPORT_FS_MTU			(1u << 6)
#define VCX_NIC_VPORT_FS_MIN_INLINE		(1u << 7)
#define VCX_NIC_VPORT_FS_PORT_GUID		(1u << 8)
#define VCX_NIC_VPORT_FS_NODE_GUID		(1u << 9)
#define VCX_NIC_VPORT_FS_DISABLE_MC_LOCAL_LB	(1u << 10)
#define VCX_NIC_VPORT_FS_DISABLE_UC_LOCAL_LB	(1u << 11)
#define VCX_NIC_VPORT_FS_AFFILIATION		(1u << 13)

/* nic_vport_context (256 bytes) */
#define VCX_NIC_VPORT_CTX_SIZE		0x100u
#define VCX_NIC_VPORT_CTX_MIN_WQE_INLINE_MODE	VCX_FLD(0x005, 3)
#define VCX_NIC_VPORT_CTX_DISABLE_MC_LOCAL_LB	VCX_FLD(0x01d, 1)
#define VCX_NIC_VPORT_CTX_DISABLE_UC_LOCAL_LB	VCX_FLD(0x01e, 1)
#define VCX_NIC_VPORT_CTX_ROCE_EN	VCX_FLD(0x01f, 1)
#define VCX_NIC_VPORT_CTX_ARM_CHANGE_EVENT	VCX_FLD(0x020, 1)
#define VCX_NIC_VPORT_CTX_MTU		VCX_FLD(0x130, 16)
#define VCX_NIC_VPORT_CTX_SYSTEM_IMAGE_GUID	VCX_FLD(0x140, 64)
#define VCX_NIC_VPORT_CTX_PORT_GUID	VCX_FLD(0x180, 64)
#define VCX_NIC_VPORT_CTX_NODE_GUID	VCX_FLD(0x1c0, 64)
#define VCX_NIC_VPORT_CTX_QKEY_VIOLATION_COUNTER	VCX_FLD(0x340, 16)
#define VCX_NIC_VPORT_CTX_PROMISC_UC	VCX_FLD(0x780, 1)
#define VCX_NIC_VPORT_CTX_PROMISC_MC	VCX_FLD(0x781, 1)
#define VCX_NIC_VPORT_CTX_PROMISC_ALL	VCX_FLD(0x782, 1)
#define VCX_NIC_VPORT_CTX_ALLOWED_LIST_TYPE	VCX_FLD(0x785, 3)
#define VCX_NIC_VPORT_CTX_ALLOWED_LIST_SIZE	VCX_FLD(0x794, 12)
/* permanent_address: 8-byte mac_address_layout, the MAC in its last 6 bytes (0xf6..0xfb) */
#define VCX_NIC_VPORT_CTX_PERMANENT_ADDRESS	VCX_FLD(0x7a0, 64)
#define VCX_NIC_VPORT_CTX_MAC_47_32	VCX_FLD(0x7b0, 16)
#define VCX_NIC_VPORT_CTX_MAC_31_0	VCX_FLD(0x7c0, 32)

/* ---------------------------------------------------------------------------------------
 * RoCE address (GID) table: QUERY_ROCE_ADDRESS / SET_ROCE_ADDRESS
 * Both inputs start with roce_address_index and vhca_port_num; the 32-byte entry
 * (roce_addr_layout) follows the 16-byte header of SET's input and of QUERY's output.
 */
#define VCX_ROCE_ADDRESS_IN_INDEX	VCX_FLD(0x40, 16)
#define VCX_ROCE_ADDRESS_IN_VHCA_PORT_NUM	VCX_FLD(0x5c, 4)
#define VCX_SET_ROCE_ADDRESS_IN_ENTRY	VCX_FLD(0x80, 256)	/* byte 0x10, 32 bytes */
#define VCX_QUERY_ROCE_ADDRESS_OUT_ENTRY	VCX_FLD(0x80, 256)
#define VCX_QUERY_ROCE_ADDRESS_IN_LEN	0x10u
#define VCX_QUERY_ROCE_ADDRESS_OUT_LEN	0x30u
#define VCX_SET_ROCE_ADDRESS_IN_LEN	0x30u
#define VCX_SET_ROCE_ADDRESS_OUT_LEN	0x10u

/* roce_addr_layout (32 bytes) */
#define VCX_GID_ENTRY_SIZE		0x20u
#define VCX_GID_L3_ADDRESS		VCX_FLD(0x00, 128)	/* the GID, 16 bytes */
#define VCX_GID_VLAN_VALID		VCX_FLD(0x83, 1)
#define VCX_GID_VLAN_ID			VCX_FLD(0x84, 12)
#define VCX_GID_MAC_47_32		VCX_FLD(0x90, 16)
#define VCX_GID_MAC_31_0		VCX_FLD(0xa0, 32)
#define VCX_GID_L3_TYPE			VCX_FLD(0xd4, 4)
#define VCX_GID_VERSION			VCX_FLD(0xd8, 8)
#define VCX_GID_L3_IPV4			0x0	/* roce_l3_type values */
#define VCX_GID_L3_IPV6			0x1
#define VCX_GID_VERSION_1		0x0	/* roce_version values */
#define VCX_GID_VERSION_2		0x2

/* ---------------------------------------------------------------------------------------
 * UAR: ALLOC_UAR / DEALLOC_UAR; doorbell offsets within a 4 KiB UAR page
 */
#define VCX_ALLOC_UAR_OUT_UAR		VCX_FLD(0x48, 24)
#define VCX_ALLOC_UAR_IN_LEN		0x10u
#define VCX_ALLOC_UAR_OUT_LEN		0x10u
#define VCX_DEALLOC_UAR_IN_UAR		VCX_FLD(0x48, 24)
#define VCX_DEALLOC_UAR_IN_LEN		0x10u
#define VCX_DEALLOC_UAR_OUT_LEN		0x10u

/* Also in prm-wqe.h: the definitions must stay token-identical. */
#define VCX_UAR_CQ_DOORBELL		0x020u
#define VCX_UAR_EQ_DOORBELL_ARM		0x040u	/* be32: eqn [31:24], consumer index [23:0] */
#define VCX_UAR_EQ_DOORBELL_NOARM	0x048u
#define VCX_UAR_BF_OFFSET		0x800u
#define VCX_UAR_EQ_DB_EQN_SHIFT		24
#define VCX_UAR_EQ_DB_CI_MASK		0x00ffffffu

/* ---------------------------------------------------------------------------------------
 * EQ: CREATE_EQ / DESTROY_EQ / QUERY_EQ, EQ context, EQE
 */
#define VCX_CREATE_EQ_IN_EQC		VCX_FLD(0x080, 512)	/* byte 0x10 */
#define VCX_CREATE_EQ_IN_EVENT_BITMASK	VCX_FLD(0x2c0, 64)	/* byte 0x58: word 0 of 4 */
#define VCX_CREATE_EQ_IN_PAS		VCX_FLD(0x880, 0)	/* byte 0x110 */
#define VCX_CREATE_EQ_OUT_EQN		VCX_FLD(0x058, 8)
#define VCX_CREATE_EQ_IN_LEN		0x110u	/* plus 8 bytes per PAS entry */
#define VCX_CREATE_EQ_OUT_LEN		0x10u
#define VCX_DESTROY_EQ_IN_EQN		VCX_FLD(0x058, 8)
#define VCX_DESTROY_EQ_IN_LEN		0x10u
#define VCX_DESTROY_EQ_OUT_LEN		0x10u
#define VCX_QUERY_EQ_IN_EQN		VCX_FLD(0x058, 8)
#define VCX_QUERY_EQ_OUT_EQC		VCX_FLD(0x080, 512)	/* byte 0x10 */
#define VCX_QUERY_EQ_OUT_EVENT_BITMASK	VCX_FLD(0x2c0, 64)	/* byte 0x58 */
#define VCX_QUERY_EQ_OUT_PAS		VCX_FLD(0x880, 0)	/* byte 0x110 */
#define VCX_QUERY_EQ_IN_LEN		0x10u
#define VCX_QUERY_EQ_OUT_LEN		0x110u	/* the PAS list follows if room is given */

/* eqc (64 bytes) */
#define VCX_EQC_SIZE			0x40u
#define VCX_EQC_STATUS			VCX_FLD(0x000, 4)
#define VCX_EQC_EC			VCX_FLD(0x00d, 1)
#define VCX_EQC_OI			VCX_FLD(0x00e, 1)
#define VCX_EQC_ST			VCX_FLD(0x014, 4)
#define VCX_EQC_PAGE_OFFSET		VCX_FLD(0x054, 6)	/* 64-byte units */
#define VCX_EQC_LOG_EQ_SIZE		VCX_FLD(0x063, 5)
#define VCX_EQC_UAR_PAGE		VCX_FLD(0x068, 24)
#define VCX_EQC_INTR			VCX_FLD(0x0b4, 12)
#define VCX_EQC_LOG_PAGE_SIZE		VCX_FLD(0x0c3, 5)	/* log2(page size) - 12 */
#define VCX_EQC_CONSUMER_COUNTER	VCX_FLD(0x148, 24)
#define VCX_EQC_PRODUCER_COUNTER	VCX_FLD(0x168, 24)
#define VCX_EQC_STATUS_OK		0x0
#define VCX_EQC_STATUS_EQ_WRITE_FAILURE	0xa
#define VCX_EQ_STATE_ARMED		0x9
#define VCX_EQ_STATE_FIRED		0xa
#define VCX_EQ_STATE_ALWAYS_ARMED	0xb

/* EQE (64 bytes). Owner bit = (producer index >> log_eq_size) & 1. */
#define VCX_EQE_SIZE			64u
#define VCX_EQE_TYPE			VCX_FLD(0x008, 8)
#define VCX_EQE_SUB_TYPE		VCX_FLD(0x018, 8)
#define VCX_EQE_DATA			VCX_FLD(0x100, 224)	/* byte 0x20, 28 bytes */
#define VCX_EQE_SIGNATURE		VCX_FLD(0x1f0, 8)
#define VCX_EQE_OWNER			VCX_FLD(0x1ff, 1)
/* command completion: bitmask of completed command queue entries */
#define VCX_EQE_CMD_VECTOR		VCX_FLD(0x100, 32)
/* page request */
#define VCX_EQE_PAGE_REQ_EC_FUNCTION	VCX_FLD(0x100, 16)
#define VCX_EQE_PAGE_REQ_FUNCTION_ID	VCX_FLD(0x110, 16)
#define VCX_EQE_PAGE_REQ_NUM_PAGES	VCX_FLD(0x120, 32)	/* signed */
/* port change: port number in bits 7:4 of byte 0x28 */
#define VCX_EQE_PORT_CHANGE_PORT	VCX_FLD(0x140, 4)
/* completion (for later use by CQs) */
#define VCX_EQE_COMP_CQN		VCX_FLD(0x1c8, 24)

/* Event types (bit n of the EQ's event bitmask subscribes type n). */
#define VCX_EVENT_TYPE_COMP		0x00
#define VCX_EVENT_TYPE_PATH_MIG		0x01
#define VCX_EVENT_TYPE_COMM_EST		0x02
#define VCX_EVENT_TYPE_SQ_DRAINED	0x03
#define VCX_EVENT_TYPE_CQ_ERROR		0x04
#define VCX_EVENT_TYPE_WQ_CATAS_ERROR	0x05
#define VCX_EVENT_TYPE_PATH_MIG_FAILED	0x07
#define VCX_EVENT_TYPE_INTERNAL_ERROR	0x08
#define VCX_EVENT_TYPE_PORT_CHANGE	0x09
#define VCX_EVENT_TYPE_CMD		0x0a
#define VCX_EVENT_TYPE_PAGE_REQUEST	0x0b
#define VCX_EVENT_TYPE_NIC_VPORT_CHANGE	0x0d
#define VCX_EVENT_TYPE_WQ_INVAL_REQ_ERROR	0x10
#define VCX_EVENT_TYPE_WQ_ACCESS_ERROR	0x11
#define VCX_EVENT_TYPE_SRQ_CATAS_ERROR	0x12
#define VCX_EVENT_TYPE_SRQ_LAST_WQE	0x13
#define VCX_EVENT_TYPE_SRQ_RQ_LIMIT	0x14

#define VCX_PORT_CHANGE_SUBTYPE_DOWN	0x1
#define VCX_PORT_CHANGE_SUBTYPE_ACTIVE	0x4

#endif /* VCX_PRM_CMD_H */
