#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Cross-check include/vcx/prm-nic.h against the kernel's mlx5_ifc.h: every field of the NIC
contexts (sqc, rqc, tisc, tirc, rqtc, flow_table_context, flow_context,
fte_match_set_lyr_2_4, dest_format_struct), of the ETHERNET_OFFLOADS and FLOW_TABLE
capability pages and the NIC general capabilities, every command field, nested structure
offset and command length must sit where the PRM puts it. A few layouts the parser cannot
size (anonymous unions) are checked from the offsets of their last members."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, load_header_defines  # noqa: E402
from test_prm_header import Ifc, find_ifc  # noqa: E402

t = Tap()
N = load_header_defines(["prm-nic.h"])

FIELDS = [
    ("ALLOC_TD_OUT_TD", "alloc_transport_domain_out", "transport_domain"),
    ("DEALLOC_TD_IN_TD", "dealloc_transport_domain_in", "transport_domain"),
    ("CREATE_TIS_OUT_TISN", "create_tis_out", "tisn"),
    ("MODIFY_TIS_IN_TISN", "modify_tis_in", "tisn"),
    ("MODIFY_TIS_IN_BITMASK_PRIO", "modify_tis_in", "bitmask.prio"),
    ("MODIFY_TIS_IN_BITMASK_LAG_TX_PORT_AFFINITY", "modify_tis_in", "bitmask.lag_tx_port_affinity"),
    ("MODIFY_TIS_IN_BITMASK_STRICT_LAG", "modify_tis_in", "bitmask.strict_lag_tx_port_affinity"),
    ("CREATE_SQ_OUT_SQN", "create_sq_out", "sqn"),
    ("MODIFY_SQ_IN_SQ_STATE", "modify_sq_in", "sq_state"),
    ("MODIFY_SQ_IN_SQN", "modify_sq_in", "sqn"),
    ("MODIFY_SQ_IN_MODIFY_BITMASK", "modify_sq_in", "modify_bitmask"),
    ("CREATE_RQ_OUT_RQN", "create_rq_out", "rqn"),
    ("MODIFY_RQ_IN_RQ_STATE", "modify_rq_in", "rq_state"),
    ("MODIFY_RQ_IN_RQN", "modify_rq_in", "rqn"),
    ("MODIFY_RQ_IN_MODIFY_BITMASK", "modify_rq_in", "modify_bitmask"),
    ("CREATE_RQT_OUT_RQTN", "create_rqt_out", "rqtn"),
    ("MODIFY_RQT_IN_RQTN", "modify_rqt_in", "rqtn"),
    ("MODIFY_RQT_IN_BITMASK_RQN_LIST", "modify_rqt_in", "bitmask.rqn_list"),
    ("CREATE_TIR_OUT_TIRN", "create_tir_out", "tirn"),
    ("MODIFY_TIR_IN_TIRN", "modify_tir_in", "tirn"),
    ("MODIFY_TIR_IN_BITMASK_SELF_LB_EN", "modify_tir_in", "bitmask.self_lb_en"),
    ("MODIFY_TIR_IN_BITMASK_HASH", "modify_tir_in", "bitmask.hash"),
    ("MODIFY_TIR_IN_BITMASK_PACKET_MERGE", "modify_tir_in", "bitmask.packet_merge"),
    ("FT_IN_TABLE_TYPE", "create_flow_table_in", "table_type"),
    ("FT_IN_OTHER_VPORT", "create_flow_table_in", "other_vport"),
    ("FT_IN_VPORT_NUMBER", "create_flow_table_in", "vport_number"),
    ("FT_IN_TABLE_ID", "destroy_flow_table_in", "table_id"),
    ("CREATE_FT_OUT_TABLE_ID", "create_flow_table_out", "table_id"),
    ("SET_FT_ROOT_IN_TABLE_ID", "set_flow_table_root_in", "table_id"),
    ("SET_FT_ROOT_IN_TABLE_OF_OTHER_VPORT", "set_flow_table_root_in", "table_of_other_vport"),
    ("SET_FT_ROOT_IN_UNDERLAY_QPN", "set_flow_table_root_in", "underlay_qpn"),
    ("SET_FT_ROOT_IN_OP_MOD", "set_flow_table_root_in", "op_mod"),
    ("FG_IN_TABLE_ID", "create_flow_group_in", "table_id"),
    ("FG_GROUP_TYPE", "create_flow_group_in", "group_type"),
    ("FG_START_FLOW_INDEX", "create_flow_group_in", "start_flow_index"),
    ("FG_END_FLOW_INDEX", "create_flow_group_in", "end_flow_index"),
    ("FG_MATCH_DEFINER_ID", "create_flow_group_in", "match_definer_id"),
    ("FG_MATCH_CRITERIA_ENABLE", "create_flow_group_in", "match_criteria_enable"),
    ("CREATE_FG_OUT_GROUP_ID", "create_flow_group_out", "group_id"),
    ("DESTROY_FG_IN_GROUP_ID", "destroy_flow_group_in", "group_id"),
    ("QUERY_FG_IN_GROUP_ID", "query_flow_group_in", "group_id"),
    ("QUERY_FG_OUT_START_FLOW_INDEX", "query_flow_group_out", "start_flow_index"),
    ("QUERY_FG_OUT_END_FLOW_INDEX", "query_flow_group_out", "end_flow_index"),
    ("QUERY_FG_OUT_MATCH_CRITERIA_ENABLE", "query_flow_group_out", "match_criteria_enable"),
    ("SET_FTE_IN_TABLE_ID", "set_fte_in", "table_id"),
    ("SET_FTE_IN_IGNORE_FLOW_LEVEL", "set_fte_in", "ignore_flow_level"),
    ("SET_FTE_IN_MODIFY_ENABLE_MASK", "set_fte_in", "modify_enable_mask"),
    ("SET_FTE_IN_FLOW_INDEX", "set_fte_in", "flow_index"),
    ("QUERY_FTE_IN_TABLE_ID", "query_fte_in", "table_id"),
    ("QUERY_FTE_IN_FLOW_INDEX", "query_fte_in", "flow_index"),
    ("DELETE_FTE_IN_TABLE_ID", "delete_fte_in", "table_id"),
    ("DELETE_FTE_IN_FLOW_INDEX", "delete_fte_in", "flow_index"),
    ("ALLOC_Q_COUNTER_OUT_COUNTER_SET_ID", "alloc_q_counter_out", "counter_set_id"),
    ("DEALLOC_Q_COUNTER_IN_COUNTER_SET_ID", "dealloc_q_counter_in", "counter_set_id"),
    ("QUERY_Q_COUNTER_IN_OTHER_VPORT", "query_q_counter_in", "other_vport"),
    ("QUERY_Q_COUNTER_IN_CLEAR", "query_q_counter_in", "clear"),
    ("QUERY_Q_COUNTER_IN_AGGREGATE", "query_q_counter_in", "aggregate"),
    ("QUERY_Q_COUNTER_IN_COUNTER_SET_ID", "query_q_counter_in", "counter_set_id"),
    ("QUERY_Q_COUNTER_OUT_RX_WRITE_REQUESTS", "query_q_counter_out", "rx_write_requests"),
    ("QUERY_Q_COUNTER_OUT_RX_READ_REQUESTS", "query_q_counter_out", "rx_read_requests"),
    ("QUERY_Q_COUNTER_OUT_RX_ATOMIC_REQUESTS", "query_q_counter_out", "rx_atomic_requests"),
    ("QUERY_Q_COUNTER_OUT_OUT_OF_BUFFER", "query_q_counter_out", "out_of_buffer"),
    ("QUERY_Q_COUNTER_OUT_OUT_OF_SEQUENCE", "query_q_counter_out", "out_of_sequence"),
    ("QUERY_Q_COUNTER_OUT_DUPLICATE_REQUEST", "query_q_counter_out", "duplicate_request"),
    ("QUERY_Q_COUNTER_OUT_RNR_NAK_RETRY_ERR", "query_q_counter_out", "rnr_nak_retry_err"),
    ("QUERY_Q_COUNTER_OUT_PACKET_SEQ_ERR", "query_q_counter_out", "packet_seq_err"),
    ("QUERY_Q_COUNTER_OUT_IMPLIED_NAK_SEQ_ERR", "query_q_counter_out", "implied_nak_seq_err"),
    ("QUERY_Q_COUNTER_OUT_LOCAL_ACK_TIMEOUT_ERR", "query_q_counter_out", "local_ack_timeout_err"),
    ("QUERY_Q_COUNTER_OUT_REQ_RNR_RETRIES_EXCEEDED", "query_q_counter_out", "req_rnr_retries_exceeded"),
    ("QUERY_Q_COUNTER_OUT_RESP_LOCAL_LENGTH_ERROR", "query_q_counter_out", "resp_local_length_error"),
    ("QUERY_Q_COUNTER_OUT_REQ_LOCAL_LENGTH_ERROR", "query_q_counter_out", "req_local_length_error"),
    ("QUERY_Q_COUNTER_OUT_RESP_LOCAL_QP_ERROR", "query_q_counter_out", "resp_local_qp_error"),
    ("QUERY_Q_COUNTER_OUT_LOCAL_OPERATION_ERROR", "query_q_counter_out", "local_operation_error"),
    ("QUERY_Q_COUNTER_OUT_RESP_LOCAL_PROTECTION", "query_q_counter_out", "resp_local_protection"),
    ("QUERY_Q_COUNTER_OUT_REQ_LOCAL_PROTECTION", "query_q_counter_out", "req_local_protection"),
    ("QUERY_Q_COUNTER_OUT_RESP_CQE_ERROR", "query_q_counter_out", "resp_cqe_error"),
    ("QUERY_Q_COUNTER_OUT_REQ_CQE_ERROR", "query_q_counter_out", "req_cqe_error"),
    ("QUERY_Q_COUNTER_OUT_REQ_MW_BINDING", "query_q_counter_out", "req_mw_binding"),
    ("QUERY_Q_COUNTER_OUT_REQ_BAD_RESPONSE", "query_q_counter_out", "req_bad_response"),
    ("QUERY_Q_COUNTER_OUT_REQ_REMOTE_INVALID_REQUEST", "query_q_counter_out", "req_remote_invalid_request"),
    ("QUERY_Q_COUNTER_OUT_RESP_REMOTE_INVALID_REQUEST", "query_q_counter_out", "resp_remote_invalid_request"),
    ("QUERY_Q_COUNTER_OUT_REQ_REMOTE_ACCESS_ERRORS", "query_q_counter_out", "req_remote_access_errors"),
    ("QUERY_Q_COUNTER_OUT_RESP_REMOTE_ACCESS_ERRORS", "query_q_counter_out", "resp_remote_access_errors"),
    ("QUERY_Q_COUNTER_OUT_REQ_REMOTE_OPERATION_ERRORS", "query_q_counter_out", "req_remote_operation_errors"),
    ("QUERY_Q_COUNTER_OUT_REQ_TRANSPORT_RETRIES_EXCEEDED", "query_q_counter_out", "req_transport_retries_exceeded"),
    ("QUERY_Q_COUNTER_OUT_CQ_OVERFLOW", "query_q_counter_out", "cq_overflow"),
    ("QUERY_Q_COUNTER_OUT_RESP_CQE_FLUSH_ERROR", "query_q_counter_out", "resp_cqe_flush_error"),
    ("QUERY_Q_COUNTER_OUT_REQ_CQE_FLUSH_ERROR", "query_q_counter_out", "req_cqe_flush_error"),
    ("QUERY_VPORT_COUNTER_IN_OTHER_VPORT", "query_vport_counter_in", "other_vport"),
    ("QUERY_VPORT_COUNTER_IN_PORT_NUM", "query_vport_counter_in", "port_num"),
    ("QUERY_VPORT_COUNTER_IN_VPORT_NUMBER", "query_vport_counter_in", "vport_number"),
    ("QUERY_VPORT_COUNTER_IN_CLEAR", "query_vport_counter_in", "clear"),
]
AT = [
    ("CREATE_TIS_IN_CTX_AT", "create_tis_in", "ctx"),
    ("MODIFY_TIS_IN_CTX_AT", "modify_tis_in", "ctx"),
    ("QUERY_TIS_OUT_CTX_AT", "query_tis_out", "tis_context"),
    ("CREATE_SQ_IN_CTX_AT", "create_sq_in", "ctx"), ("MODIFY_SQ_IN_CTX_AT", "modify_sq_in", "ctx"),
    ("QUERY_SQ_OUT_CTX_AT", "query_sq_out", "sq_context"), ("SQC_WQ_AT", "sqc", "wq"),
    ("CREATE_RQ_IN_CTX_AT", "create_rq_in", "ctx"), ("MODIFY_RQ_IN_CTX_AT", "modify_rq_in", "ctx"),
    ("QUERY_RQ_OUT_CTX_AT", "query_rq_out", "rq_context"), ("RQC_WQ_AT", "rqc", "wq"),
    ("CREATE_RQT_IN_CTX_AT", "create_rqt_in", "rqt_context"),
    ("MODIFY_RQT_IN_CTX_AT", "modify_rqt_in", "ctx"),
    ("QUERY_RQT_OUT_CTX_AT", "query_rqt_out", "rqt_context"),
    ("CREATE_TIR_IN_CTX_AT", "create_tir_in", "ctx"),
    ("MODIFY_TIR_IN_CTX_AT", "modify_tir_in", "ctx"),
    ("QUERY_TIR_OUT_CTX_AT", "query_tir_out", "tir_context"),
    ("TIRC_HASH_OUTER_AT", "tirc", "rx_hash_field_selector_outer"),
    ("TIRC_HASH_INNER_AT", "tirc", "rx_hash_field_selector_inner"),
    ("CREATE_FT_IN_CTX_AT", "create_flow_table_in", "flow_table_context"),
    ("QUERY_FT_OUT_CTX_AT", "query_flow_table_out", "flow_table_context"),
    ("FG_MATCH_CRITERIA_AT", "create_flow_group_in", "match_criteria"),
    ("QUERY_FG_OUT_MATCH_CRITERIA_AT", "query_flow_group_out", "match_criteria"),
    ("FTE_MATCH_OUTER_AT", "fte_match_param", "outer_headers"),
    ("FTE_MATCH_MISC_AT", "fte_match_param", "misc_parameters"),
    ("FTE_MATCH_INNER_AT", "fte_match_param", "inner_headers"),
    ("MATCH_SRC_IP_AT", "fte_match_set_lyr_2_4", "src_ipv4_src_ipv6"),
    ("MATCH_DST_IP_AT", "fte_match_set_lyr_2_4", "dst_ipv4_dst_ipv6"),
    ("SET_FTE_IN_CTX_AT", "set_fte_in", "flow_context"),
    ("QUERY_FTE_OUT_CTX_AT", "query_fte_out", "flow_context"),
    ("FTE_MATCH_VALUE_AT", "flow_context", "match_value"),
    ("NIC_VPORT_CTX_LIST_AT", "nic_vport_context", "current_uc_mac_address"),
    ("VPORT_CNT_RECEIVED_ERRORS_AT", "query_vport_counter_out", "received_errors"),
    ("VPORT_CNT_TRANSMIT_ERRORS_AT", "query_vport_counter_out", "transmit_errors"),
    ("VPORT_CNT_RX_IB_UNICAST_AT", "query_vport_counter_out", "received_ib_unicast"),
    ("VPORT_CNT_TX_IB_UNICAST_AT", "query_vport_counter_out", "transmitted_ib_unicast"),
    ("VPORT_CNT_RX_IB_MULTICAST_AT", "query_vport_counter_out", "received_ib_multicast"),
    ("VPORT_CNT_TX_IB_MULTICAST_AT", "query_vport_counter_out", "transmitted_ib_multicast"),
    ("VPORT_CNT_RX_ETH_BROADCAST_AT", "query_vport_counter_out", "received_eth_broadcast"),
    ("VPORT_CNT_TX_ETH_BROADCAST_AT", "query_vport_counter_out", "transmitted_eth_broadcast"),
    ("VPORT_CNT_RX_ETH_UNICAST_AT", "query_vport_counter_out", "received_eth_unicast"),
    ("VPORT_CNT_TX_ETH_UNICAST_AT", "query_vport_counter_out", "transmitted_eth_unicast"),
    ("VPORT_CNT_RX_ETH_MULTICAST_AT", "query_vport_counter_out", "received_eth_multicast"),
    ("VPORT_CNT_TX_ETH_MULTICAST_AT", "query_vport_counter_out", "transmitted_eth_multicast"),
    ("VPORT_CNT_LOCAL_LOOPBACK_AT", "query_vport_counter_out", "local_loopback"),
    ("CAP_FT_NIC_RX_AT", "flow_table_nic_cap", "flow_table_properties_nic_receive"),
    ("CAP_FT_NIC_RX_RDMA_AT", "flow_table_nic_cap", "flow_table_properties_nic_receive_rdma"),
    ("CAP_FT_NIC_RX_SNIFFER_AT", "flow_table_nic_cap", "flow_table_properties_nic_receive_sniffer"),
    ("CAP_FT_NIC_TX_AT", "flow_table_nic_cap", "flow_table_properties_nic_transmit"),
    ("CAP_FT_NIC_TX_RDMA_AT", "flow_table_nic_cap", "flow_table_properties_nic_transmit_rdma"),
    ("CAP_FT_NIC_TX_SNIFFER_AT", "flow_table_nic_cap",
     "flow_table_properties_nic_transmit_sniffer"),
    ("CAP_FT_FIELD_SUPPORT_AT", "flow_table_prop_layout", "ft_field_support"),
    ("CAP_FT_FIELD_BITMASK_SUPPORT_AT", "flow_table_prop_layout", "ft_field_bitmask_support"),
]
LENGTHS = [
    ("ALLOC_TD_IN_LEN", "alloc_transport_domain_in"),
    ("DEALLOC_TD_IN_LEN", "dealloc_transport_domain_in"), ("CREATE_TIS_IN_LEN", "create_tis_in"),
    ("MODIFY_TIS_IN_LEN", "modify_tis_in"), ("QUERY_TIS_OUT_LEN", "query_tis_out"),
    ("TISC_SIZE", "tisc"), ("CREATE_SQ_IN_LEN", "create_sq_in"),
    ("MODIFY_SQ_IN_LEN", "modify_sq_in"), ("QUERY_SQ_OUT_LEN", "query_sq_out"),
    ("CREATE_RQ_IN_LEN", "create_rq_in"), ("MODIFY_RQ_IN_LEN", "modify_rq_in"),
    ("QUERY_RQ_OUT_LEN", "query_rq_out"), ("CREATE_RQT_IN_LEN", "create_rqt_in"),
    ("MODIFY_RQT_IN_LEN", "modify_rqt_in"), ("QUERY_RQT_OUT_LEN", "query_rqt_out"),
    ("RQTC_SIZE", "rqtc"), ("CREATE_TIR_IN_LEN", "create_tir_in"),
    ("MODIFY_TIR_IN_LEN", "modify_tir_in"), ("QUERY_TIR_OUT_LEN", "query_tir_out"),
    ("TIRC_SIZE", "tirc"), ("CREATE_FT_OUT_LEN", "create_flow_table_out"),
    ("DESTROY_FT_IN_LEN", "destroy_flow_table_in"), ("QUERY_FT_IN_LEN", "query_flow_table_in"),
    ("SET_FT_ROOT_IN_LEN", "set_flow_table_root_in"), ("CREATE_FG_IN_LEN", "create_flow_group_in"),
    ("DESTROY_FG_IN_LEN", "destroy_flow_group_in"), ("QUERY_FG_IN_LEN", "query_flow_group_in"),
    ("QUERY_FG_OUT_LEN", "query_flow_group_out"), ("FTE_MATCH_PARAM_SIZE", "fte_match_param"),
    ("MATCH_SET_SIZE", "fte_match_set_lyr_2_4"), ("SET_FTE_IN_LEN", "set_fte_in"),
    ("QUERY_FTE_IN_LEN", "query_fte_in"), ("QUERY_FTE_OUT_LEN", "query_fte_out"),
    ("DELETE_FTE_IN_LEN", "delete_fte_in"), ("FTE_CTX_SIZE", "flow_context"),
    ("DEST_SIZE", "dest_format_struct"), ("MAC_LAYOUT_SIZE", "mac_address_layout"),
    ("ALLOC_Q_COUNTER_IN_LEN", "alloc_q_counter_in"),
    ("DEALLOC_Q_COUNTER_IN_LEN", "dealloc_q_counter_in"),
    ("QUERY_Q_COUNTER_IN_LEN", "query_q_counter_in"),
    ("QUERY_Q_COUNTER_OUT_LEN", "query_q_counter_out"),
    ("QUERY_VPORT_COUNTER_IN_LEN", "query_vport_counter_in"),
    ("QUERY_VPORT_COUNTER_OUT_LEN", "query_vport_counter_out"),
    ("CAP_FT_PROP_SIZE", "flow_table_prop_layout"),
]
PREFIX_STRUCTS = [("SQC_", "sqc", {}), ("RQC_", "rqc", {}), ("TISC_", "tisc", {}),
                  ("TIRC_", "tirc", {}), ("RQTC_", "rqtc", {}),
                  ("FTC_", "flow_table_context", {}), ("MATCH_", "fte_match_set_lyr_2_4", {}),
                  ("FTE_", "flow_context", {}),
                  ("DEST_", "dest_format_struct", {"TYPE": "destination_type",
                                                   "ID": "destination_id",
                                                   "TABLE_TYPE": "destination_table_type"}),
                  ("HASH_SEL_", "rx_hash_field_select", {}),
                  ("CAP_ETH_", "per_protocol_networking_offload_caps", {}),
                  ("CAP_FT_", "flow_table_prop_layout", {}),
                  ("FT_FIELD_", "flow_table_fields_supported", {}),
                  ("MAC_LAYOUT_", "mac_address_layout", {"47_32": "mac_addr_47_32",
                                                         "31_0": "mac_addr_31_0"}),
                  ("TRAFFIC_CNT_", "traffic_counter", {}), ("CAP_GEN_", "cmd_hca_cap", {})]


def main():
    path = find_ifc()
    if not path:
        print("1..0 # SKIP mlx5_ifc.h not found (set MLX5_IFC)")
        return
    ifc = Ifc(path)
    checks = list(FIELDS)
    for prefix, struct, renames in PREFIX_STRUCTS:
        for key in sorted(N):
            if key.startswith("VCX_" + prefix) and hasattr(N[key], "bit"):
                short = key[len("VCX_" + prefix):]
                checks.append((prefix + short, struct, renames.get(short, short.lower())))
    for name, struct, fld in checks:
        f = N["VCX_" + name]
        try:
            bit, w = ifc.field(struct, fld)
        except KeyError:
            t.ok(False, "VCX_%s: %s.%s not in mlx5_ifc.h" % (name, struct, fld))
            continue
        t.eq((f.bit, f.width), (bit, w), "VCX_%s = %s.%s" % (name, struct, fld))
    for name, struct, fld in AT:
        bit, _ = ifc.field(struct, fld)
        t.eq(N["VCX_" + name] * 8, bit, "VCX_%s = offset of %s.%s" % (name, struct, fld))
    for name, struct in LENGTHS:
        t.eq(N["VCX_" + name], ifc.size(struct) // 8, "VCX_%s = sizeof %s" % (name, struct))
    # flow_table_context ends in an anonymous union of two 0x80-bit layouts at 0xc0
    ftc = ifc.field("flow_table_context", "reserved_at_60")
    t.eq(N["VCX_FTC_SIZE"] * 8, ftc[0] + ftc[1] + 0x80, "VCX_FTC_SIZE = sizeof flow_table_context")
    for name, struct, at in (("CREATE_FT_IN_LEN", "create_flow_table_in", "flow_table_context"),
                             ("QUERY_FT_OUT_LEN", "query_flow_table_out", "flow_table_context")):
        bit, _ = ifc.field(struct, at)
        t.eq(N["VCX_" + name] * 8, bit + N["VCX_FTC_SIZE"] * 8,
             "VCX_%s = sizeof %s" % (name, struct))
    # flexible arrays: rqtc.rq_num[], flow_context.destination[] start where the fixed part ends
    t.eq(N["VCX_RQTC_RQ_NUM_AT"], ifc.size("rqtc") // 8, "VCX_RQTC_RQ_NUM_AT = rqtc.rq_num")
    last = ifc.field("flow_context", "reserved_at_1300")
    t.eq(N["VCX_FTE_DEST_AT"] * 8, last[0] + last[1], "VCX_FTE_DEST_AT = flow_context.destination")
    rq = ifc.field("rq_num", "rq_num")
    t.eq((N["VCX_RQT_RQN"].bit, N["VCX_RQT_RQN"].width), rq, "VCX_RQT_RQN = rq_num.rq_num")
    t.done()


if __name__ == "__main__":
    main()
