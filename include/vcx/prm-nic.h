/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vcx device interface: the Ethernet NIC (PRM "Ethernet Offloads", "Transport Objects",
 * "Flow Table", "Counters").
 *
 * Opcodes and layouts of ALLOC/DEALLOC_TRANSPORT_DOMAIN, CREATE/MODIFY/QUERY/DESTROY of
 * TIS, SQ, RQ, RQT and TIR, SET_FLOW_TABLE_ROOT, CREATE/DESTROY/QUERY_FLOW_TABLE,
 * CREATE/DESTROY/QUERY_FLOW_GROUP, SET/QUERY/DELETE_FLOW_TABLE_ENTRY, the Q counters and
 * QUERY_VPORT_COUNTER; the contexts (sqc, rqc, tisc, tirc, rqtc, flow_table_context,
 * flow_context, fte_match_set_lyr_2_4, dest_format_struct); the NIC vport address lists; the
 * ETHERNET_OFFLOADS and FLOW_TABLE capability pages and the general capability fields of
 * the NIC; the Ethernet segment of a send WQE and the Ethernet fields of the CQE.
 * The work queue context (wq) these embed is in prm-obj.h; the control and data segments
 * and the CQE base layout in prm-wqe.h.
 *
 * VCX_FLD(bit offset from the start of the structure, width), as mlx5_ifc.h counts them;
 * nested structures list their fields relative to their own start and the enclosing
 * layout gives their byte offset (the _AT constants). tests/qtest/test_nic_prm_header.py
 * checks every field here against the kernel's mlx5_ifc.h.
 */
#ifndef VCX_PRM_NIC_H
#define VCX_PRM_NIC_H

#include "prm.h"

/* ---------------------------------------------------------------------------------------
 * Opcodes (MLX5_CMD_OP_* of the PRM)
 */
#define VCX_CMD_OP_ALLOC_TRANSPORT_DOMAIN	0x816
#define VCX_CMD_OP_DEALLOC_TRANSPORT_DOMAIN	0x817
#define VCX_CMD_OP_CREATE_TIR			0x900
#define VCX_CMD_OP_MODIFY_TIR			0x901
#define VCX_CMD_OP_DESTROY_TIR			0x902
#define VCX_CMD_OP_QUERY_TIR			0x903
#define VCX_CMD_OP_CREATE_SQ			0x904
#define VCX_CMD_OP_MODIFY_SQ			0x905
#define VCX_CMD_OP_DESTROY_SQ			0x906
#define VCX_CMD_OP_QUERY_SQ			0x907
#define VCX_CMD_OP_CREATE_RQ			0x908
#define VCX_CMD_OP_MODIFY_RQ			0x909
#define VCX_CMD_OP_DESTROY_RQ			0x90a
#define VCX_CMD_OP_QUERY_RQ			0x90b
#define VCX_CMD_OP_CREATE_TIS			0x912
#define VCX_CMD_OP_MODIFY_TIS			0x913
#define VCX_CMD_OP_DESTROY_TIS			0x914
#define VCX_CMD_OP_QUERY_TIS			0x915
#define VCX_CMD_OP_CREATE_RQT			0x916
#define VCX_CMD_OP_MODIFY_RQT			0x917
#define VCX_CMD_OP_DESTROY_RQT			0x918
#define VCX_CMD_OP_QUERY_RQT			0x919
#define VCX_CMD_OP_SET_FLOW_TABLE_ROOT		0x92f
#define VCX_CMD_OP_CREATE_FLOW_TABLE		0x930
#define VCX_CMD_OP_DESTROY_FLOW_TABLE		0x931
#define VCX_CMD_OP_QUERY_FLOW_TABLE		0x932
#define VCX_CMD_OP_CREATE_FLOW_GROUP		0x933
#define VCX_CMD_OP_DESTROY_FLOW_GROUP		0x934
#define VCX_CMD_OP_QUERY_FLOW_GROUP		0x935
#define VCX_CMD_OP_SET_FLOW_TABLE_ENTRY		0x936
#define VCX_CMD_OP_QUERY_FLOW_TABLE_ENTRY	0x937
#define VCX_CMD_OP_DELETE_FLOW_TABLE_ENTRY	0x938
/* ALLOC/DEALLOC/QUERY_Q_COUNTER (0x771..0x773) and QUERY_VPORT_COUNTER (0x770) are in prm-cmd.h. */

/* ---------------------------------------------------------------------------------------
 * Numbering. SQs and RQs share the 24-bit QP number space with QPs in a disjoint range, so
 * a send doorbell (ctrl segment qpn_ds) names an SQ as it names a QP.
 */
#define VCX_NIC_WQ_NUM_BASE		0x1000u	/* first SQ / RQ number */
#define VCX_NIC_WQ_NUM_END		0x2000u	/* one past the last */

/* ---------------------------------------------------------------------------------------
 * Transport domain: ALLOC_TRANSPORT_DOMAIN (out transport_domain) / DEALLOC (in)
 */
#define VCX_ALLOC_TD_OUT_TD			VCX_FLD(0x048, 24)
#define VCX_DEALLOC_TD_IN_TD			VCX_FLD(0x048, 24)
#define VCX_ALLOC_TD_IN_LEN			0x10u
#define VCX_DEALLOC_TD_IN_LEN			0x10u

/* ---------------------------------------------------------------------------------------
 * TIS: CREATE_TIS (tisc at 0x20) / MODIFY_TIS / QUERY_TIS / DESTROY_TIS; tisc (160 B)
 */
#define VCX_CREATE_TIS_IN_CTX_AT		0x20u
#define VCX_CREATE_TIS_IN_LEN			0xc0u
#define VCX_CREATE_TIS_OUT_TISN			VCX_FLD(0x048, 24)
#define VCX_MODIFY_TIS_IN_TISN			VCX_FLD(0x048, 24)
#define VCX_MODIFY_TIS_IN_BITMASK_PRIO		VCX_FLD(0x0bf, 1)
#define VCX_MODIFY_TIS_IN_BITMASK_LAG_TX_PORT_AFFINITY	VCX_FLD(0x0bd, 1)
#define VCX_MODIFY_TIS_IN_BITMASK_STRICT_LAG	VCX_FLD(0x0be, 1)
#define VCX_MODIFY_TIS_IN_CTX_AT		0x20u
#define VCX_MODIFY_TIS_IN_LEN			0xc0u
#define VCX_QUERY_TIS_OUT_CTX_AT		0x10u
#define VCX_QUERY_TIS_OUT_LEN			0xb0u
#define VCX_TISC_SIZE				0xa0u
#define VCX_TISC_STRICT_LAG_TX_PORT_AFFINITY	VCX_FLD(0x000, 1)
#define VCX_TISC_TLS_EN				VCX_FLD(0x001, 1)
#define VCX_TISC_LAG_TX_PORT_AFFINITY		VCX_FLD(0x004, 4)
#define VCX_TISC_PRIO				VCX_FLD(0x00c, 4)
#define VCX_TISC_TRANSPORT_DOMAIN		VCX_FLD(0x128, 24)
#define VCX_TISC_UNDERLAY_QPN			VCX_FLD(0x148, 24)
#define VCX_TISC_PD				VCX_FLD(0x168, 24)

/* ---------------------------------------------------------------------------------------
 * SQ: CREATE_SQ (sqc at 0x20, its wq at sqc+0x30, PAS at wq+0xc0) / MODIFY_SQ / QUERY_SQ /
 * DESTROY_SQ (VCX_OBJ_NUMBER); sqc (48 B + wq)
 */
#define VCX_CREATE_SQ_IN_CTX_AT			0x20u
#define VCX_CREATE_SQ_IN_LEN			0x110u	/* plus 8 bytes per PAS entry */
#define VCX_CREATE_SQ_OUT_SQN			VCX_FLD(0x048, 24)
#define VCX_MODIFY_SQ_IN_SQ_STATE		VCX_FLD(0x040, 4)	/* current state */
#define VCX_MODIFY_SQ_IN_SQN			VCX_FLD(0x048, 24)
#define VCX_MODIFY_SQ_IN_MODIFY_BITMASK		VCX_FLD(0x080, 64)
#define VCX_MODIFY_SQ_IN_CTX_AT			0x20u	/* ctx.state: the new state */
#define VCX_MODIFY_SQ_IN_LEN			0x110u
#define VCX_QUERY_SQ_OUT_CTX_AT			0x20u
#define VCX_QUERY_SQ_OUT_LEN			0x110u	/* plus the PAS list if room is given */
#define VCX_SQC_RLKY				VCX_FLD(0x000, 1)
#define VCX_SQC_CD_MASTER			VCX_FLD(0x001, 1)
#define VCX_SQC_FRE				VCX_FLD(0x002, 1)
#define VCX_SQC_FLUSH_IN_ERROR_EN		VCX_FLD(0x003, 1)
#define VCX_SQC_ALLOW_MULTI_PKT_SEND_WQE	VCX_FLD(0x004, 1)
#define VCX_SQC_MIN_WQE_INLINE_MODE		VCX_FLD(0x005, 3)
#define VCX_SQC_STATE				VCX_FLD(0x008, 4)
#define VCX_SQC_REG_UMR				VCX_FLD(0x00c, 1)
#define VCX_SQC_ALLOW_SWP			VCX_FLD(0x00d, 1)
#define VCX_SQC_HAIRPIN				VCX_FLD(0x00e, 1)
#define VCX_SQC_NON_WIRE			VCX_FLD(0x00f, 1)
#define VCX_SQC_TS_FORMAT			VCX_FLD(0x01a, 2)
#define VCX_SQC_USER_INDEX			VCX_FLD(0x028, 24)
#define VCX_SQC_CQN				VCX_FLD(0x048, 24)
#define VCX_SQC_HAIRPIN_PEER_RQ			VCX_FLD(0x068, 24)
#define VCX_SQC_HAIRPIN_PEER_VHCA		VCX_FLD(0x090, 16)
#define VCX_SQC_TS_CQE_TO_DEST_CQN		VCX_FLD(0x0c8, 24)
#define VCX_SQC_PACKET_PACING_RATE_LIMIT_INDEX	VCX_FLD(0x0f0, 16)
#define VCX_SQC_TIS_LST_SZ			VCX_FLD(0x100, 16)
#define VCX_SQC_QOS_QUEUE_GROUP_ID		VCX_FLD(0x110, 16)
#define VCX_SQC_TIS_NUM_0			VCX_FLD(0x168, 24)
#define VCX_SQC_WQ_AT				0x30u
#define VCX_SQC_STATE_RST		0x0
#define VCX_SQC_STATE_RDY		0x1
#define VCX_SQC_STATE_ERR		0x3
#define VCX_SQC_TS_FORMAT_FREE_RUNNING	0x0
#define VCX_SQC_TS_FORMAT_DEFAULT	0x1	/* free-running on a device without real time */
#define VCX_WQ_TYPE_CYCLIC		0x1	/* the only SQ and RQ type (no striding RQ) */
#define VCX_WQ_TYPE_CYCLIC_STRIDING_RQ	0x3
#define VCX_NIC_SQ_LOG_STRIDE		6u	/* SQ WQEBB: 64 bytes */

/* ---------------------------------------------------------------------------------------
 * RQ: CREATE_RQ (rqc at 0x20, its wq at rqc+0x30) / MODIFY_RQ / QUERY_RQ / DESTROY_RQ;
 * rqc (48 B + wq). An RQ WQE is 2^log_wq_stride bytes of 16-byte data segments (wq_type
 * cyclic); the doorbell record's dword 0 holds the 16-bit receive counter.
 */
#define VCX_CREATE_RQ_IN_CTX_AT			0x20u
#define VCX_CREATE_RQ_IN_LEN			0x110u	/* plus 8 bytes per PAS entry */
#define VCX_CREATE_RQ_OUT_RQN			VCX_FLD(0x048, 24)
#define VCX_MODIFY_RQ_IN_RQ_STATE		VCX_FLD(0x040, 4)	/* current state */
#define VCX_MODIFY_RQ_IN_RQN			VCX_FLD(0x048, 24)
#define VCX_MODIFY_RQ_IN_MODIFY_BITMASK		VCX_FLD(0x080, 64)
#define VCX_MODIFY_RQ_IN_CTX_AT			0x20u
#define VCX_MODIFY_RQ_IN_LEN			0x110u
#define VCX_QUERY_RQ_OUT_CTX_AT			0x20u
#define VCX_QUERY_RQ_OUT_LEN			0x110u
#define VCX_RQC_RLKY				VCX_FLD(0x000, 1)
#define VCX_RQC_DELAY_DROP_EN			VCX_FLD(0x001, 1)
#define VCX_RQC_SCATTER_FCS			VCX_FLD(0x002, 1)
#define VCX_RQC_VSD				VCX_FLD(0x003, 1)	/* 1: VLAN stripping disabled */
#define VCX_RQC_MEM_RQ_TYPE			VCX_FLD(0x004, 4)
#define VCX_RQC_STATE				VCX_FLD(0x008, 4)
#define VCX_RQC_FLUSH_IN_ERROR_EN		VCX_FLD(0x00d, 1)
#define VCX_RQC_HAIRPIN				VCX_FLD(0x00e, 1)
#define VCX_RQC_TS_FORMAT			VCX_FLD(0x01a, 2)
#define VCX_RQC_USER_INDEX			VCX_FLD(0x028, 24)
#define VCX_RQC_CQN				VCX_FLD(0x048, 24)
#define VCX_RQC_COUNTER_SET_ID			VCX_FLD(0x060, 8)
#define VCX_RQC_RMPN				VCX_FLD(0x088, 24)
#define VCX_RQC_HAIRPIN_PEER_SQ			VCX_FLD(0x0a8, 24)
#define VCX_RQC_HAIRPIN_PEER_VHCA		VCX_FLD(0x0d0, 16)
#define VCX_RQC_WQ_AT				0x30u
#define VCX_RQC_STATE_RST		0x0
#define VCX_RQC_STATE_RDY		0x1
#define VCX_RQC_STATE_ERR		0x3
#define VCX_RQC_MEM_RQ_TYPE_INLINE	0x0
#define VCX_RQC_MEM_RQ_TYPE_RMP		0x1
/* modify_bitmask (64 bits, low dword holds the defined bits) */
#define VCX_MODIFY_RQ_BITMASK_VSD		(1u << 1)
#define VCX_MODIFY_RQ_BITMASK_SCATTER_FCS	(1u << 2)
#define VCX_MODIFY_RQ_BITMASK_COUNTER_SET_ID	(1u << 3)
#define VCX_NIC_RQ_LOG_STRIDE_MIN	4u	/* one data segment */
#define VCX_NIC_RQ_LOG_STRIDE_MAX	9u	/* 32 data segments */
#define VCX_NIC_RQ_DBR_RECV		0u	/* RQ doorbell record: receive counter, dword 0 */

/* ---------------------------------------------------------------------------------------
 * RQT: CREATE_RQT (rqtc at 0x20, rq_num[] at rqtc+0xf0, 4 bytes each) / MODIFY_RQT
 * (bitmask.rqn_list) / QUERY_RQT / DESTROY_RQT
 */
#define VCX_CREATE_RQT_IN_CTX_AT		0x20u
#define VCX_CREATE_RQT_IN_LEN			0x110u	/* plus 4 bytes per rq_num entry */
#define VCX_CREATE_RQT_OUT_RQTN			VCX_FLD(0x048, 24)
#define VCX_MODIFY_RQT_IN_RQTN			VCX_FLD(0x048, 24)
#define VCX_MODIFY_RQT_IN_BITMASK_RQN_LIST	VCX_FLD(0x0bf, 1)
#define VCX_MODIFY_RQT_IN_CTX_AT		0x20u
#define VCX_MODIFY_RQT_IN_LEN			0x110u	/* plus 4 bytes per rq_num entry */
#define VCX_QUERY_RQT_OUT_CTX_AT		0x20u
#define VCX_QUERY_RQT_OUT_LEN			0x110u	/* plus 4 bytes per rq_num entry */
#define VCX_RQTC_LIST_Q_TYPE			VCX_FLD(0x0a5, 3)
#define VCX_RQTC_RQT_MAX_SIZE			VCX_FLD(0x0b0, 16)
#define VCX_RQTC_RQ_VHCA_ID_FORMAT		VCX_FLD(0x0c0, 1)
#define VCX_RQTC_RQT_ACTUAL_SIZE		VCX_FLD(0x0d0, 16)
#define VCX_RQTC_SIZE				0xf0u	/* the rq_num[] array follows */
#define VCX_RQTC_RQ_NUM_AT		0xf0u	/* rq_num[i]: dword, bits 23:0 */
#define VCX_RQT_ENTRY_SIZE		4u
#define VCX_RQT_RQN			VCX_FLD(0x08, 24)	/* inside one rq_num entry */

/* ---------------------------------------------------------------------------------------
 * TIR: CREATE_TIR (tirc at 0x20) / MODIFY_TIR / QUERY_TIR / DESTROY_TIR; tirc (240 B)
 */
#define VCX_CREATE_TIR_IN_CTX_AT		0x20u
#define VCX_CREATE_TIR_IN_LEN			0x110u
#define VCX_CREATE_TIR_OUT_TIRN			VCX_FLD(0x048, 24)
#define VCX_MODIFY_TIR_IN_TIRN			VCX_FLD(0x048, 24)
#define VCX_MODIFY_TIR_IN_BITMASK_SELF_LB_EN	VCX_FLD(0x0bb, 1)
#define VCX_MODIFY_TIR_IN_BITMASK_HASH		VCX_FLD(0x0bd, 1)
#define VCX_MODIFY_TIR_IN_BITMASK_PACKET_MERGE	VCX_FLD(0x0bf, 1)
#define VCX_MODIFY_TIR_IN_CTX_AT		0x20u
#define VCX_MODIFY_TIR_IN_LEN			0x110u
#define VCX_QUERY_TIR_OUT_CTX_AT		0x20u
#define VCX_QUERY_TIR_OUT_LEN			0x110u
#define VCX_TIRC_SIZE				0xf0u
#define VCX_TIRC_DISP_TYPE			VCX_FLD(0x020, 4)
#define VCX_TIRC_TLS_EN				VCX_FLD(0x024, 1)
#define VCX_TIRC_LRO_TIMEOUT_PERIOD_USECS	VCX_FLD(0x084, 16)
#define VCX_TIRC_PACKET_MERGE_MASK		VCX_FLD(0x094, 4)	/* lro_enable_mask */
#define VCX_TIRC_LRO_MAX_IP_PAYLOAD_SIZE	VCX_FLD(0x098, 8)
#define VCX_TIRC_INLINE_RQN			VCX_FLD(0x0e8, 24)
#define VCX_TIRC_RX_HASH_SYMMETRIC		VCX_FLD(0x100, 1)
#define VCX_TIRC_TUNNELED_OFFLOAD_EN		VCX_FLD(0x102, 1)
#define VCX_TIRC_INDIRECT_TABLE			VCX_FLD(0x108, 24)
#define VCX_TIRC_RX_HASH_FN			VCX_FLD(0x120, 4)
#define VCX_TIRC_SELF_LB_BLOCK			VCX_FLD(0x126, 2)
#define VCX_TIRC_TRANSPORT_DOMAIN		VCX_FLD(0x128, 24)
#define VCX_TIRC_RX_HASH_TOEPLITZ_KEY		VCX_FLD(0x140, 320)	/* 40 bytes */
#define VCX_TIRC_HASH_OUTER_AT			0x50u
#define VCX_TIRC_HASH_INNER_AT			0x54u
#define VCX_TIRC_TOEPLITZ_KEY_LEN	40u
/* rx_hash_field_select (one dword, at TIRC_HASH_OUTER_AT / _INNER_AT) */
#define VCX_HASH_SEL_L3_PROT_TYPE		VCX_FLD(0x000, 1)
#define VCX_HASH_SEL_L4_PROT_TYPE		VCX_FLD(0x001, 1)
#define VCX_HASH_SEL_SELECTED_FIELDS		VCX_FLD(0x002, 30)
#define VCX_TIRC_DISP_TYPE_DIRECT	0x0
#define VCX_TIRC_DISP_TYPE_INDIRECT	0x1
#define VCX_RX_HASH_FN_NONE		0x0
#define VCX_RX_HASH_FN_INVERTED_XOR8	0x1
#define VCX_RX_HASH_FN_TOEPLITZ		0x2
#define VCX_TIRC_SELF_LB_BLOCK_UNICAST	0x1
#define VCX_TIRC_SELF_LB_BLOCK_MULTICAST	0x2
#define VCX_L3_PROT_TYPE_IPV4		0
#define VCX_L3_PROT_TYPE_IPV6		1
#define VCX_L4_PROT_TYPE_TCP		0
#define VCX_L4_PROT_TYPE_UDP		1
#define VCX_HASH_FIELD_SEL_SRC_IP	(1u << 0)
#define VCX_HASH_FIELD_SEL_DST_IP	(1u << 1)
#define VCX_HASH_FIELD_SEL_L4_SPORT	(1u << 2)
#define VCX_HASH_FIELD_SEL_L4_DPORT	(1u << 3)
#define VCX_HASH_FIELD_SEL_IPSEC_SPI	(1u << 4)

/* ---------------------------------------------------------------------------------------
 * Flow tables (NIC RX, table_type 0): SET_FLOW_TABLE_ROOT, CREATE/DESTROY/QUERY_FLOW_TABLE
 */
#define VCX_FLOW_TABLE_TYPE_NIC_RX	0x0
#define VCX_FLOW_TABLE_TYPE_NIC_TX	0x1
#define VCX_FT_IN_TABLE_TYPE			VCX_FLD(0x080, 8)	/* every flow table command */
#define VCX_FT_IN_OTHER_VPORT			VCX_FLD(0x040, 1)
#define VCX_FT_IN_VPORT_NUMBER			VCX_FLD(0x050, 16)
#define VCX_FT_IN_TABLE_ID			VCX_FLD(0x0a8, 24)	/* destroy, query, groups, FTEs */
#define VCX_CREATE_FT_IN_CTX_AT			0x18u
#define VCX_CREATE_FT_IN_LEN		0x40u
#define VCX_CREATE_FT_OUT_TABLE_ID		VCX_FLD(0x048, 24)
#define VCX_CREATE_FT_OUT_LEN			0x10u
#define VCX_DESTROY_FT_IN_LEN			0x40u
#define VCX_QUERY_FT_IN_LEN			0x40u
#define VCX_QUERY_FT_OUT_CTX_AT			0x18u
#define VCX_QUERY_FT_OUT_LEN		0x40u
#define VCX_SET_FT_ROOT_IN_TABLE_ID		VCX_FLD(0x0a8, 24)
#define VCX_SET_FT_ROOT_IN_TABLE_OF_OTHER_VPORT	VCX_FLD(0x08f, 1)
#define VCX_SET_FT_ROOT_IN_UNDERLAY_QPN		VCX_FLD(0x0c8, 24)
#define VCX_SET_FT_ROOT_IN_OP_MOD		VCX_FLD(0x030, 16)	/* 1: disconnect (reset to default) */
#define VCX_SET_FT_ROOT_IN_LEN			0x40u
/* flow_table_context (40 B) */
#define VCX_FTC_SIZE			0x28u
#define VCX_FTC_REFORMAT_EN			VCX_FLD(0x000, 1)
#define VCX_FTC_DECAP_EN			VCX_FLD(0x001, 1)
#define VCX_FTC_SW_OWNER			VCX_FLD(0x002, 1)
#define VCX_FTC_TERMINATION_TABLE		VCX_FLD(0x003, 1)
#define VCX_FTC_TABLE_MISS_ACTION		VCX_FLD(0x004, 4)
#define VCX_FTC_LEVEL				VCX_FLD(0x008, 8)
#define VCX_FTC_RTC_VALID			VCX_FLD(0x010, 1)
#define VCX_FTC_LOG_SIZE			VCX_FLD(0x018, 8)
#define VCX_FTC_TABLE_MISS_ID			VCX_FLD(0x028, 24)
#define VCX_FTC_LAG_MASTER_NEXT_TABLE_ID	VCX_FLD(0x048, 24)
#define VCX_FT_MISS_ACTION_DEF		0x0	/* default: the root drops, others go on */
#define VCX_FT_MISS_ACTION_FWD		0x1	/* to table_miss_id */

/* ---------------------------------------------------------------------------------------
 * Flow groups: CREATE_FLOW_GROUP / DESTROY_FLOW_GROUP / QUERY_FLOW_GROUP. The match
 * criteria (fte_match_param, 512 B) start with the 64-byte outer headers
 * (fte_match_set_lyr_2_4, the VCX_MATCH_ fields).
 */
#define VCX_FG_IN_TABLE_ID			VCX_FLD(0x0a8, 24)
#define VCX_FG_GROUP_TYPE			VCX_FLD(0x08c, 4)
#define VCX_FG_START_FLOW_INDEX			VCX_FLD(0x0e0, 32)
#define VCX_FG_END_FLOW_INDEX			VCX_FLD(0x120, 32)
#define VCX_FG_MATCH_DEFINER_ID			VCX_FLD(0x150, 16)
#define VCX_FG_MATCH_CRITERIA_ENABLE		VCX_FLD(0x1f8, 8)
#define VCX_FG_MATCH_CRITERIA_AT		0x40u
#define VCX_CREATE_FG_IN_LEN			0x400u
#define VCX_CREATE_FG_OUT_GROUP_ID		VCX_FLD(0x048, 24)
#define VCX_DESTROY_FG_IN_GROUP_ID		VCX_FLD(0x0c0, 32)
#define VCX_DESTROY_FG_IN_LEN			0x40u
#define VCX_QUERY_FG_IN_GROUP_ID		VCX_FLD(0x0c0, 32)
#define VCX_QUERY_FG_IN_LEN			0x40u
#define VCX_QUERY_FG_OUT_START_FLOW_INDEX	VCX_FLD(0x0e0, 32)
#define VCX_QUERY_FG_OUT_END_FLOW_INDEX		VCX_FLD(0x120, 32)
#define VCX_QUERY_FG_OUT_MATCH_CRITERIA_ENABLE	VCX_FLD(0x1f8, 8)
#define VCX_QUERY_FG_OUT_MATCH_CRITERIA_AT	0x40u
#define VCX_QUERY_FG_OUT_LEN			0x400u
#define VCX_FTE_MATCH_PARAM_SIZE		0x200u
#define VCX_FTE_MATCH_OUTER_AT			0x0u
#define VCX_FTE_MATCH_MISC_AT			0x40u
#define VCX_FTE_MATCH_INNER_AT			0x80u
#define VCX_MATCH_CRITERIA_OUTER	(1u << 0)	/* match_criteria_enable: outer headers */
#define VCX_MATCH_CRITERIA_MISC		(1u << 1)
#define VCX_MATCH_CRITERIA_INNER	(1u << 2)
#define VCX_MATCH_SET_SIZE			0x40u	/* 64 B */
#define VCX_MATCH_SMAC_47_16			VCX_FLD(0x000, 32)
#define VCX_MATCH_SMAC_15_0			VCX_FLD(0x020, 16)
#define VCX_MATCH_ETHERTYPE			VCX_FLD(0x030, 16)
#define VCX_MATCH_DMAC_47_16			VCX_FLD(0x040, 32)
#define VCX_MATCH_DMAC_15_0			VCX_FLD(0x060, 16)
#define VCX_MATCH_FIRST_PRIO			VCX_FLD(0x070, 3)
#define VCX_MATCH_FIRST_CFI			VCX_FLD(0x073, 1)
#define VCX_MATCH_FIRST_VID			VCX_FLD(0x074, 12)
#define VCX_MATCH_IP_PROTOCOL			VCX_FLD(0x080, 8)
#define VCX_MATCH_IP_DSCP			VCX_FLD(0x088, 6)
#define VCX_MATCH_IP_ECN			VCX_FLD(0x08e, 2)
#define VCX_MATCH_CVLAN_TAG			VCX_FLD(0x090, 1)
#define VCX_MATCH_SVLAN_TAG			VCX_FLD(0x091, 1)
#define VCX_MATCH_FRAG				VCX_FLD(0x092, 1)
#define VCX_MATCH_IP_VERSION			VCX_FLD(0x093, 4)
#define VCX_MATCH_TCP_FLAGS			VCX_FLD(0x097, 9)
#define VCX_MATCH_TCP_SPORT			VCX_FLD(0x0a0, 16)
#define VCX_MATCH_TCP_DPORT			VCX_FLD(0x0b0, 16)
#define VCX_MATCH_L4_TYPE			VCX_FLD(0x0c0, 2)
#define VCX_MATCH_IPV4_IHL			VCX_FLD(0x0d0, 4)
#define VCX_MATCH_TTL_HOPLIMIT			VCX_FLD(0x0d8, 8)
#define VCX_MATCH_UDP_SPORT			VCX_FLD(0x0e0, 16)
#define VCX_MATCH_UDP_DPORT			VCX_FLD(0x0f0, 16)
#define VCX_MATCH_SRC_IP_AT			0x20u	/* 16 B; IPv4 in the last 4 */
#define VCX_MATCH_DST_IP_AT			0x30u	/* 16 B; IPv4 in the last 4 */
#define VCX_MATCH_IP_LEN		16u

/* ---------------------------------------------------------------------------------------
 * Flow table entries: SET_FLOW_TABLE_ENTRY (flow_context at 0x40) / QUERY_FLOW_TABLE_ENTRY
 * / DELETE_FLOW_TABLE_ENTRY; flow_context (768 B, match_value at 0x40, destination list
 * at 0x300: 8-byte dest_format_struct entries)
 */
#define VCX_SET_FTE_IN_TABLE_ID			VCX_FLD(0x0a8, 24)
#define VCX_SET_FTE_IN_IGNORE_FLOW_LEVEL	VCX_FLD(0x0c0, 1)
#define VCX_SET_FTE_IN_MODIFY_ENABLE_MASK	VCX_FLD(0x0d8, 8)
#define VCX_SET_FTE_IN_FLOW_INDEX		VCX_FLD(0x100, 32)
#define VCX_SET_FTE_IN_CTX_AT			0x40u
#define VCX_SET_FTE_IN_LEN			0x340u	/* plus 8 bytes per destination */
#define VCX_SET_FTE_OP_MOD_CREATE	0x0
#define VCX_SET_FTE_OP_MOD_MODIFY	0x1	/* modify_enable_mask selects what changes */
#define VCX_SET_FTE_MODIFY_ACTION	(1u << 0)
#define VCX_SET_FTE_MODIFY_FLOW_TAG	(1u << 1)
#define VCX_SET_FTE_MODIFY_DESTINATION	(1u << 2)
#define VCX_QUERY_FTE_IN_TABLE_ID		VCX_FLD(0x0a8, 24)
#define VCX_QUERY_FTE_IN_FLOW_INDEX		VCX_FLD(0x100, 32)
#define VCX_QUERY_FTE_IN_LEN			0x40u
#define VCX_QUERY_FTE_OUT_CTX_AT		0x40u
#define VCX_QUERY_FTE_OUT_LEN			0x340u	/* plus 8 bytes per destination */
#define VCX_DELETE_FTE_IN_TABLE_ID		VCX_FLD(0x0a8, 24)
#define VCX_DELETE_FTE_IN_FLOW_INDEX		VCX_FLD(0x100, 32)
#define VCX_DELETE_FTE_IN_LEN			0x40u
#define VCX_FTE_GROUP_ID			VCX_FLD(0x020, 32)
#define VCX_FTE_FLOW_TAG			VCX_FLD(0x048, 24)
#define VCX_FTE_ACTION				VCX_FLD(0x070, 16)
#define VCX_FTE_EXTENDED_DESTINATION		VCX_FLD(0x080, 1)
#define VCX_FTE_FLOW_SOURCE			VCX_FLD(0x082, 2)
#define VCX_FTE_DESTINATION_LIST_SIZE		VCX_FLD(0x088, 24)
#define VCX_FTE_FLOW_COUNTER_LIST_SIZE		VCX_FLD(0x0a8, 24)
#define VCX_FTE_PACKET_REFORMAT_ID		VCX_FLD(0x0c0, 32)
#define VCX_FTE_MODIFY_HEADER_ID		VCX_FLD(0x0e0, 32)
#define VCX_FTE_MATCH_VALUE_AT			0x40u
#define VCX_FTE_CTX_SIZE			0x300u	/* the destination list follows */
#define VCX_FTE_DEST_AT		0x300u	/* flow_context.destination[] */
#define VCX_FLOW_ACTION_ALLOW		0x0001
#define VCX_FLOW_ACTION_DROP		0x0002
#define VCX_FLOW_ACTION_FWD_DEST	0x0004
#define VCX_FLOW_ACTION_COUNT		0x0008
#define VCX_FLOW_ACTION_PACKET_REFORMAT	0x0010
#define VCX_FLOW_ACTION_DECAP		0x0020
#define VCX_FLOW_ACTION_MOD_HDR		0x0040
#define VCX_FLOW_ACTION_VLAN_POP	0x0080
#define VCX_FLOW_ACTION_VLAN_PUSH	0x0100
/* dest_format_struct (8 B) */
#define VCX_DEST_SIZE				0x8u
#define VCX_DEST_TYPE				VCX_FLD(0x000, 8)
#define VCX_DEST_ID				VCX_FLD(0x008, 24)
#define VCX_DEST_PACKET_REFORMAT		VCX_FLD(0x021, 1)
#define VCX_DEST_TABLE_TYPE			VCX_FLD(0x028, 8)
#define VCX_FLOW_DEST_TYPE_VPORT	0x00
#define VCX_FLOW_DEST_TYPE_FLOW_TABLE	0x01
#define VCX_FLOW_DEST_TYPE_TIR		0x02
#define VCX_FLOW_DEST_TYPE_QP		0x03
#define VCX_FLOW_DEST_TYPE_COUNTER	0x100	/* in the counter list, never a destination */

/* ---------------------------------------------------------------------------------------
 * NIC vport address lists (QUERY/MODIFY_NIC_VPORT_CONTEXT, field_select.addresses_list):
 * nic_vport_context.allowed_list_type/_size (prm-cmd.h) then, at context byte 0x100,
 * allowed_list_size 8-byte entries (mac_address_layout: MAC in bytes 2..7).
 */
#define VCX_NIC_VPORT_CTX_LIST_AT		0x100u
#define VCX_MAC_LAYOUT_SIZE			0x8u
#define VCX_MAC_LAYOUT_47_32			VCX_FLD(0x010, 16)
#define VCX_MAC_LAYOUT_31_0			VCX_FLD(0x020, 32)
#define VCX_NVPRT_LIST_TYPE_UC		0x0
#define VCX_NVPRT_LIST_TYPE_MC		0x1
#define VCX_NVPRT_LIST_TYPE_VLAN	0x2
/* a VLAN list entry (vlan_layout, 8 bytes like mac_address_layout): VID in bits 11:0 */
#define VCX_VLAN_LAYOUT_VLAN			VCX_FLD(0x014, 12)

/* ---------------------------------------------------------------------------------------
 * Counters: ALLOC_Q_COUNTER / DEALLOC_Q_COUNTER / QUERY_Q_COUNTER, QUERY_VPORT_COUNTER
 */
#define VCX_ALLOC_Q_COUNTER_OUT_COUNTER_SET_ID	VCX_FLD(0x058, 8)
#define VCX_ALLOC_Q_COUNTER_IN_LEN		0x10u
#define VCX_DEALLOC_Q_COUNTER_IN_COUNTER_SET_ID	VCX_FLD(0x058, 8)
#define VCX_DEALLOC_Q_COUNTER_IN_LEN		0x10u
#define VCX_QUERY_Q_COUNTER_IN_OTHER_VPORT	VCX_FLD(0x040, 1)
#define VCX_QUERY_Q_COUNTER_IN_CLEAR		VCX_FLD(0x0c0, 1)
#define VCX_QUERY_Q_COUNTER_IN_AGGREGATE	VCX_FLD(0x0c1, 1)
#define VCX_QUERY_Q_COUNTER_IN_COUNTER_SET_ID	VCX_FLD(0x0f8, 8)
#define VCX_QUERY_Q_COUNTER_IN_LEN		0x20u
#define VCX_QUERY_Q_COUNTER_OUT_RX_WRITE_REQUESTS	VCX_FLD(0x080, 32)
#define VCX_QUERY_Q_COUNTER_OUT_RX_READ_REQUESTS	VCX_FLD(0x0c0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_RX_ATOMIC_REQUESTS	VCX_FLD(0x100, 32)
#define VCX_QUERY_Q_COUNTER_OUT_OUT_OF_BUFFER	VCX_FLD(0x180, 32)
#define VCX_QUERY_Q_COUNTER_OUT_OUT_OF_SEQUENCE	VCX_FLD(0x1c0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_DUPLICATE_REQUEST	VCX_FLD(0x200, 32)
#define VCX_QUERY_Q_COUNTER_OUT_RNR_NAK_RETRY_ERR	VCX_FLD(0x240, 32)
#define VCX_QUERY_Q_COUNTER_OUT_PACKET_SEQ_ERR	VCX_FLD(0x280, 32)
#define VCX_QUERY_Q_COUNTER_OUT_IMPLIED_NAK_SEQ_ERR	VCX_FLD(0x2c0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_LOCAL_ACK_TIMEOUT_ERR	VCX_FLD(0x300, 32)
#define VCX_QUERY_Q_COUNTER_OUT_REQ_RNR_RETRIES_EXCEEDED	VCX_FLD(0x380, 32)
#define VCX_QUERY_Q_COUNTER_OUT_RESP_LOCAL_LENGTH_ERROR	VCX_FLD(0x3c0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_REQ_LOCAL_LENGTH_ERROR	VCX_FLD(0x3e0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_RESP_LOCAL_QP_ERROR	VCX_FLD(0x400, 32)
#define VCX_QUERY_Q_COUNTER_OUT_LOCAL_OPERATION_ERROR	VCX_FLD(0x420, 32)
#define VCX_QUERY_Q_COUNTER_OUT_RESP_LOCAL_PROTECTION	VCX_FLD(0x440, 32)
#define VCX_QUERY_Q_COUNTER_OUT_REQ_LOCAL_PROTECTION	VCX_FLD(0x460, 32)
#define VCX_QUERY_Q_COUNTER_OUT_RESP_CQE_ERROR	VCX_FLD(0x480, 32)
#define VCX_QUERY_Q_COUNTER_OUT_REQ_CQE_ERROR	VCX_FLD(0x4a0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_REQ_MW_BINDING	VCX_FLD(0x4c0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_REQ_BAD_RESPONSE	VCX_FLD(0x4e0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_REQ_REMOTE_INVALID_REQUEST	VCX_FLD(0x500, 32)
#define VCX_QUERY_Q_COUNTER_OUT_RESP_REMOTE_INVALID_REQUEST	VCX_FLD(0x520, 32)
#define VCX_QUERY_Q_COUNTER_OUT_REQ_REMOTE_ACCESS_ERRORS	VCX_FLD(0x540, 32)
#define VCX_QUERY_Q_COUNTER_OUT_RESP_REMOTE_ACCESS_ERRORS	VCX_FLD(0x560, 32)
#define VCX_QUERY_Q_COUNTER_OUT_REQ_REMOTE_OPERATION_ERRORS	VCX_FLD(0x580, 32)
#define VCX_QUERY_Q_COUNTER_OUT_REQ_TRANSPORT_RETRIES_EXCEEDED	VCX_FLD(0x5a0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_CQ_OVERFLOW	VCX_FLD(0x5c0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_RESP_CQE_FLUSH_ERROR	VCX_FLD(0x5e0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_REQ_CQE_FLUSH_ERROR	VCX_FLD(0x600, 32)
#define VCX_QUERY_Q_COUNTER_OUT_ROCE_ADP_RETRANS	VCX_FLD(0x640, 32)
#define VCX_QUERY_Q_COUNTER_OUT_ROCE_ADP_RETRANS_TO	VCX_FLD(0x660, 32)
#define VCX_QUERY_Q_COUNTER_OUT_ROCE_SLOW_RESTART	VCX_FLD(0x680, 32)
#define VCX_QUERY_Q_COUNTER_OUT_ROCE_SLOW_RESTART_CNPS	VCX_FLD(0x6a0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_ROCE_SLOW_RESTART_TRANS	VCX_FLD(0x6c0, 32)
#define VCX_QUERY_Q_COUNTER_OUT_LEN		0x100u
#define VCX_QUERY_VPORT_COUNTER_IN_OTHER_VPORT	VCX_FLD(0x040, 1)
#define VCX_QUERY_VPORT_COUNTER_IN_PORT_NUM	VCX_FLD(0x04c, 4)
#define VCX_QUERY_VPORT_COUNTER_IN_VPORT_NUMBER	VCX_FLD(0x050, 16)
#define VCX_QUERY_VPORT_COUNTER_IN_CLEAR	VCX_FLD(0x0c0, 1)
#define VCX_QUERY_VPORT_COUNTER_IN_LEN		0x20u
#define VCX_QUERY_VPORT_COUNTER_OUT_LEN		0x210u
/* traffic_counter pairs (packets, octets: 64 bits each) */
#define VCX_VPORT_CNT_RECEIVED_ERRORS_AT	0x10u
#define VCX_VPORT_CNT_TRANSMIT_ERRORS_AT	0x20u
#define VCX_VPORT_CNT_RX_IB_UNICAST_AT		0x30u
#define VCX_VPORT_CNT_TX_IB_UNICAST_AT		0x40u
#define VCX_VPORT_CNT_RX_IB_MULTICAST_AT	0x50u
#define VCX_VPORT_CNT_TX_IB_MULTICAST_AT	0x60u
#define VCX_VPORT_CNT_RX_ETH_BROADCAST_AT	0x70u
#define VCX_VPORT_CNT_TX_ETH_BROADCAST_AT	0x80u
#define VCX_VPORT_CNT_RX_ETH_UNICAST_AT		0x90u
#define VCX_VPORT_CNT_TX_ETH_UNICAST_AT		0xa0u
#define VCX_VPORT_CNT_RX_ETH_MULTICAST_AT	0xb0u
#define VCX_VPORT_CNT_TX_ETH_MULTICAST_AT	0xc0u
#define VCX_VPORT_CNT_LOCAL_LOOPBACK_AT		0xd0u
#define VCX_TRAFFIC_CNT_PACKETS			VCX_FLD(0x000, 64)
#define VCX_TRAFFIC_CNT_OCTETS			VCX_FLD(0x040, 64)

/* ---------------------------------------------------------------------------------------
 * Capabilities. General page (cmd_hca_cap) fields of the NIC not already in prm-cmd.h;
 * the ETHERNET_OFFLOADS page (cap type 0x1, per_protocol_networking_offload_caps) and the
 * FLOW_TABLE page (cap type 0x7, flow_table_nic_cap) relative to the capability page.
 */
#define VCX_HCA_CAP_TYPE_FLOW_TABLE	0x07
#define VCX_CAP_GEN_VPORT_COUNTERS		VCX_FLD(0x181, 1)
#define VCX_CAP_GEN_MODIFY_RQ_COUNTER_SET_ID	VCX_FLD(0x184, 1)
#define VCX_CAP_GEN_FLOW_COUNTER_BULK_ALLOC	VCX_FLD(0x310, 8)
#define VCX_CAP_GEN_LOG_MAX_FLOW_COUNTER_BULK	VCX_FLD(0x348, 8)
#define VCX_CAP_GEN_MAX_FLOW_COUNTER_15_0	VCX_FLD(0x350, 16)
#define VCX_CAP_GEN_LOG_MAX_RQ			VCX_FLD(0x363, 5)
#define VCX_CAP_GEN_LOG_MAX_SQ			VCX_FLD(0x36b, 5)
#define VCX_CAP_GEN_LOG_MAX_TIR			VCX_FLD(0x373, 5)
#define VCX_CAP_GEN_LOG_MAX_TIS			VCX_FLD(0x37b, 5)
#define VCX_CAP_GEN_LOG_MAX_RQT			VCX_FLD(0x38b, 5)
#define VCX_CAP_GEN_LOG_MAX_RQT_SIZE		VCX_FLD(0x393, 5)
#define VCX_CAP_GEN_LOG_MAX_TIS_PER_SQ		VCX_FLD(0x39b, 5)
#define VCX_CAP_GEN_LOG_MAX_VLAN_LIST		VCX_FLD(0x3eb, 5)
#define VCX_CAP_GEN_LOG_MAX_CURRENT_MC_LIST	VCX_FLD(0x3f3, 5)
#define VCX_CAP_GEN_LOG_MAX_CURRENT_UC_LIST	VCX_FLD(0x3fb, 5)
#define VCX_CAP_GEN_LOG_MAX_L2_TABLE		VCX_FLD(0x483, 5)
/* ETHERNET_OFFLOADS page */
#define VCX_CAP_ETH_CSUM_CAP			VCX_FLD(0x000, 1)
#define VCX_CAP_ETH_VLAN_CAP			VCX_FLD(0x001, 1)
#define VCX_CAP_ETH_LRO_CAP			VCX_FLD(0x002, 1)
#define VCX_CAP_ETH_WQE_VLAN_INSERT		VCX_FLD(0x007, 1)
#define VCX_CAP_ETH_SELF_LB_EN_MODIFIABLE	VCX_FLD(0x008, 1)
#define VCX_CAP_ETH_MAX_LSO_CAP			VCX_FLD(0x00b, 5)
#define VCX_CAP_ETH_MULTI_PKT_SEND_WQE		VCX_FLD(0x010, 2)
#define VCX_CAP_ETH_WQE_INLINE_MODE		VCX_FLD(0x012, 2)
#define VCX_CAP_ETH_RSS_IND_TBL_CAP		VCX_FLD(0x014, 4)
#define VCX_CAP_ETH_SCATTER_FCS			VCX_FLD(0x019, 1)
#define VCX_CAP_ETH_ENHANCED_MULTI_PKT_SEND_WQE	VCX_FLD(0x01a, 1)
#define VCX_CAP_ETH_TUNNEL_STATELESS_GRE	VCX_FLD(0x01e, 1)
#define VCX_CAP_ETH_TUNNEL_STATELESS_VXLAN	VCX_FLD(0x01f, 1)
#define VCX_CAP_ETH_SWP				VCX_FLD(0x020, 1)
#define VCX_CAP_ETH_CQE_CHECKSUM_FULL		VCX_FLD(0x023, 1)
#define VCX_CAP_ETH_MAX_VXLAN_UDP_PORTS		VCX_FLD(0x030, 8)
#define VCX_CAP_ETH_LRO_MIN_MSS_SIZE		VCX_FLD(0x050, 16)
#define VCX_CAP_ETH_INLINE_MODE_L2	0x0	/* wqe_inline_mode values */
#define VCX_CAP_ETH_INLINE_MODE_VPORT_CONTEXT	0x1
#define VCX_CAP_ETH_INLINE_MODE_NOT_REQUIRED	0x2
/* FLOW_TABLE page: flow_table_nic_cap; each table type has a flow_table_prop_layout
 * (64 B) whose fields (VCX_CAP_FT_*) are relative to its start, and in it two
 * flow_table_fields_supported bit sets (VCX_FT_FIELD_*, relative to their start). */
#define VCX_CAP_FT_NIC_RX_AT			0x40u
#define VCX_CAP_FT_NIC_RX_RDMA_AT		0x80u
#define VCX_CAP_FT_NIC_RX_SNIFFER_AT		0xc0u
#define VCX_CAP_FT_NIC_TX_AT			0x100u
#define VCX_CAP_FT_NIC_TX_RDMA_AT		0x140u
#define VCX_CAP_FT_NIC_TX_SNIFFER_AT		0x180u
#define VCX_CAP_FT_PROP_SIZE			0x40u
#define VCX_CAP_FT_FT_SUPPORT			VCX_FLD(0x000, 1)
#define VCX_CAP_FT_FLOW_COUNTER			VCX_FLD(0x002, 1)
#define VCX_CAP_FT_FLOW_MODIFY_EN		VCX_FLD(0x003, 1)
#define VCX_CAP_FT_MODIFY_ROOT			VCX_FLD(0x004, 1)
#define VCX_CAP_FT_IDENTIFIED_MISS_TABLE_MODE	VCX_FLD(0x005, 1)
#define VCX_CAP_FT_FLOW_TABLE_MODIFY		VCX_FLD(0x006, 1)
#define VCX_CAP_FT_REFORMAT			VCX_FLD(0x007, 1)
#define VCX_CAP_FT_DECAP			VCX_FLD(0x008, 1)
#define VCX_CAP_FT_RESET_ROOT_TO_DEFAULT	VCX_FLD(0x009, 1)
#define VCX_CAP_FT_POP_VLAN			VCX_FLD(0x00a, 1)
#define VCX_CAP_FT_PUSH_VLAN			VCX_FLD(0x00b, 1)
#define VCX_CAP_FT_SW_OWNER			VCX_FLD(0x011, 1)
#define VCX_CAP_FT_IGNORE_FLOW_LEVEL		VCX_FLD(0x015, 1)
#define VCX_CAP_FT_TERMINATION_TABLE		VCX_FLD(0x018, 1)
#define VCX_CAP_FT_LOG_MAX_FT_SIZE		VCX_FLD(0x022, 6)
#define VCX_CAP_FT_LOG_MAX_MODIFY_HEADER_CONTEXT	VCX_FLD(0x028, 8)
#define VCX_CAP_FT_MAX_MODIFY_HEADER_ACTIONS	VCX_FLD(0x030, 8)
#define VCX_CAP_FT_MAX_FT_LEVEL			VCX_FLD(0x038, 8)
#define VCX_CAP_FT_LOG_MAX_FT_NUM		VCX_FLD(0x078, 8)
#define VCX_CAP_FT_LOG_MAX_FLOW_COUNTER		VCX_FLD(0x090, 8)
#define VCX_CAP_FT_LOG_MAX_DESTINATION		VCX_FLD(0x098, 8)
#define VCX_CAP_FT_LOG_MAX_FLOW			VCX_FLD(0x0b8, 8)
#define VCX_CAP_FT_FIELD_SUPPORT_AT		0x20u
#define VCX_CAP_FT_FIELD_BITMASK_SUPPORT_AT	0x30u
#define VCX_FT_FIELD_OUTER_DMAC			VCX_FLD(0x000, 1)
#define VCX_FT_FIELD_OUTER_SMAC			VCX_FLD(0x001, 1)
#define VCX_FT_FIELD_OUTER_ETHER_TYPE		VCX_FLD(0x002, 1)
#define VCX_FT_FIELD_OUTER_IP_VERSION		VCX_FLD(0x003, 1)
#define VCX_FT_FIELD_OUTER_FIRST_PRIO		VCX_FLD(0x004, 1)
#define VCX_FT_FIELD_OUTER_FIRST_CFI		VCX_FLD(0x005, 1)
#define VCX_FT_FIELD_OUTER_FIRST_VID		VCX_FLD(0x006, 1)
#define VCX_FT_FIELD_OUTER_SIP			VCX_FLD(0x00c, 1)
#define VCX_FT_FIELD_OUTER_DIP			VCX_FLD(0x00d, 1)
#define VCX_FT_FIELD_OUTER_FRAG			VCX_FLD(0x00e, 1)
#define VCX_FT_FIELD_OUTER_IP_PROTOCOL		VCX_FLD(0x00f, 1)
#define VCX_FT_FIELD_OUTER_IP_ECN		VCX_FLD(0x010, 1)
#define VCX_FT_FIELD_OUTER_IP_DSCP		VCX_FLD(0x011, 1)
#define VCX_FT_FIELD_OUTER_UDP_SPORT		VCX_FLD(0x012, 1)
#define VCX_FT_FIELD_OUTER_UDP_DPORT		VCX_FLD(0x013, 1)
#define VCX_FT_FIELD_OUTER_TCP_SPORT		VCX_FLD(0x014, 1)
#define VCX_FT_FIELD_OUTER_TCP_DPORT		VCX_FLD(0x015, 1)
#define VCX_FT_FIELD_OUTER_TCP_FLAGS		VCX_FLD(0x016, 1)
#define VCX_FT_FIELD_INNER_DMAC			VCX_FLD(0x020, 1)

/* ---------------------------------------------------------------------------------------
 * Ethernet segment of a send WQE (16 B after the control segment; PRM "Ethernet
 * Segment"). inline_hdr_sz bytes of headers start at byte 14 and continue into the
 * following 16-byte units, which the ds count covers.
 */
#define VCX_ETH_SEG_SIZE		16u
#define VCX_ETH_SEG_SWP_OUTER_L4_OFFSET	VCX_FLD(0x00, 8)
#define VCX_ETH_SEG_SWP_OUTER_L3_OFFSET	VCX_FLD(0x08, 8)
#define VCX_ETH_SEG_SWP_INNER_L4_OFFSET	VCX_FLD(0x10, 8)
#define VCX_ETH_SEG_SWP_INNER_L3_OFFSET	VCX_FLD(0x18, 8)
#define VCX_ETH_SEG_CS_FLAGS		VCX_FLD(0x20, 8)
#define VCX_ETH_SEG_SWP_FLAGS		VCX_FLD(0x28, 8)
#define VCX_ETH_SEG_MSS			VCX_FLD(0x30, 16)	/* non-zero: LSO */
#define VCX_ETH_SEG_FLOW_TABLE_METADATA	VCX_FLD(0x40, 32)
/*
 * Bytes 12..15 are either inline_hdr_sz (10 bits; larger values do not fit a WQE) and the
 * first 2 inline bytes, or, with bit 15 set, a VLAN insertion: insert type (bit 15
 * INSERT_VLAN, bit 0 S-VLAN: TPID 0x88a8 instead of 0x8100) and the tag's TCI, which the
 * device puts after the frame's source MAC (wqe_vlan_insert).
 */
#define VCX_ETH_SEG_INLINE_HDR_SZ	VCX_FLD(0x60, 16)
#define VCX_ETH_SEG_INLINE_HDR_AT	14u	/* the first 2 inline bytes */
#define VCX_ETH_SEG_INSERT_TYPE		VCX_FLD(0x60, 16)
#define VCX_ETH_SEG_INSERT_VLAN_TCI	VCX_FLD(0x70, 16)
#define VCX_ETH_INSERT_VLAN		(1u << 15)
#define VCX_ETH_INSERT_SVLAN		(1u << 0)
#define VCX_ETH_CS_L3_INNER		(1u << 4)
#define VCX_ETH_CS_L4_INNER		(1u << 5)
#define VCX_ETH_CS_L3			(1u << 6)	/* IPv4 header checksum */
#define VCX_ETH_CS_L4			(1u << 7)	/* TCP / UDP checksum */

/* ---------------------------------------------------------------------------------------
 * Ethernet fields of the 64-byte CQE (PRM "Completion Queue Entry Format"; the other
 * fields are in prm-wqe.h)
 */
#define VCX_CQE_RSS_HASH_RESULT		VCX_FLD(0x060, 32)
#define VCX_CQE_RSS_HASH_TYPE		VCX_FLD(0x080, 8)
#define VCX_CQE_CHECK_SUM		VCX_FLD(0x0a0, 16)
#define VCX_CQE_HDS_IP_EXT		VCX_FLD(0x0e0, 8)
#define VCX_CQE_L4_L3_HDR_TYPE		VCX_FLD(0x0e8, 8)
#define VCX_CQE_L4_HDR_TYPE		VCX_FLD(0x0e9, 3)	/* byte 0x1d bits 6:4 */
#define VCX_CQE_L3_HDR_TYPE		VCX_FLD(0x0ec, 2)	/* byte 0x1d bits 3:2 */
#define VCX_CQE_FLOW_TAG		VCX_FLD(0x1c8, 24)	/* sop_drop_qpn (receive) */
#define VCX_CQE_L2_OK			(1u << 0)	/* hds_ip_ext */
#define VCX_CQE_L3_OK			(1u << 1)
#define VCX_CQE_L4_OK			(1u << 2)
#define VCX_CQE_L4_HDR_NONE		0x0
#define VCX_CQE_L4_HDR_TCP		0x1	/* TCP_NO_ACK, the value this device reports */
#define VCX_CQE_L4_HDR_UDP		0x2
#define VCX_CQE_L4_HDR_TCP_ACK_NO_DATA	0x3
#define VCX_CQE_L4_HDR_TCP_ACK_AND_DATA	0x4
#define VCX_CQE_L3_HDR_NONE		0x0
#define VCX_CQE_L3_HDR_IPV6		0x1
#define VCX_CQE_L3_HDR_IPV4		0x2
/* rss_hash_type: bits 3:2 the IP kind hashed, bits 7:6 the L4 kind */
#define VCX_CQE_RSS_HTYPE_IP_SHIFT	2
#define VCX_CQE_RSS_HTYPE_L4_SHIFT	6
#define VCX_CQE_RSS_IPV4		0x1
#define VCX_CQE_RSS_IPV6		0x2
#define VCX_CQE_RSS_L4_TCP		0x1
#define VCX_CQE_RSS_L4_UDP		0x2
#define VCX_CQE_RSS_L4_IPSEC		0x3

/* ---------------------------------------------------------------------------------------
 * Syndromes of the NIC commands (VCX_CMD_OUT_SYNDROME with BAD_PARAM, BAD_RES_STATE or
 * EXCEED_LIM); the device's own values, listed in docs/device-interface.md.
 */

#endif /* VCX_PRM_NIC_H */
