#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Cross-check include/vcx/prm-obj.h against the kernel's mlx5_ifc.h: every field of the
object contexts (mkc, cqc, qpc, ads, srqc, rmpc, wq), every command field, every nested
structure offset and every command length must match the PRM layouts."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap  # noqa: E402
from vcx_verbs import P  # noqa: E402
from test_prm_header import Ifc, find_ifc  # noqa: E402

t = Tap()

FIELDS = [
    ("ALLOC_PD_OUT_PD", "alloc_pd_out", "pd"),
    ("DEALLOC_PD_IN_PD", "dealloc_pd_in", "pd"),
    ("CREATE_MKEY_IN_PG_ACCESS", "create_mkey_in", "pg_access"),
    ("CREATE_MKEY_IN_UMEM_VALID", "create_mkey_in", "mkey_umem_valid"),
    ("CREATE_MKEY_IN_XLT_ACTUAL", "create_mkey_in", "translations_octword_actual_size"),
    ("CREATE_MKEY_OUT_MKEY_INDEX", "create_mkey_out", "mkey_index"),
    ("QUERY_MKEY_IN_MKEY_INDEX", "query_mkey_in", "mkey_index"),
    ("QUERY_MKEY_IN_PG_ACCESS", "query_mkey_in", "pg_access"),
    ("DESTROY_MKEY_IN_MKEY_INDEX", "destroy_mkey_in", "mkey_index"),
    ("CREATE_CQ_IN_UMEM_VALID", "create_cq_in", "cq_umem_valid"),
    ("CREATE_CQ_OUT_CQN", "create_cq_out", "cqn"),
    ("MODIFY_CQ_IN_CQN", "modify_cq_in", "cqn"),
    ("MODIFY_CQ_IN_FIELD_SELECT", "modify_cq_in", "modify_field_select_resize_field_select"),
    ("MODIFY_CQ_IN_UMEM_VALID", "modify_cq_in", "cq_umem_valid"),
    ("CREATE_QP_IN_QPC_EXT", "create_qp_in", "qpc_ext"),
    ("CREATE_QP_IN_INPUT_QPN", "create_qp_in", "input_qpn"),
    ("QP_IN_OPT_PARAM_MASK", "create_qp_in", "opt_param_mask"),
    ("QP_IN_ECE", "create_qp_in", "ece"),
    ("CREATE_QP_IN_WQ_UMEM_VALID", "create_qp_in", "wq_umem_valid"),
    ("CREATE_QP_OUT_QPN", "create_qp_out", "qpn"),
    ("MODIFY_QP_IN_QPN", "rst2init_qp_in", "qpn"),
    ("QUERY_QP_OUT_OPT_PARAM_MASK", "query_qp_out", "opt_param_mask"),
    ("OBJ_NUMBER", "destroy_qp_in", "qpn"),
    ("OBJ_NUMBER", "query_srq_in", "srqn"),
    ("OBJ_NUMBER", "destroy_rmp_in", "rmpn"),
    ("CREATE_SRQ_OUT_SRQN", "create_srq_out", "srqn"),
    ("ARM_RQ_IN_SRQ_NUMBER", "arm_rq_in", "srq_number"),
    ("ARM_RQ_IN_LWM", "arm_rq_in", "lwm"),
    ("CREATE_RMP_OUT_RMPN", "create_rmp_out", "rmpn"),
    ("MODIFY_RMP_IN_RMP_STATE", "modify_rmp_in", "rmp_state"),
    ("MODIFY_RMP_IN_RMPN", "modify_rmp_in", "rmpn"),
    ("MODIFY_RMP_IN_BITMASK", "modify_rmp_in", "bitmask"),
    ("MODIFY_RMP_IN_BITMASK_LWM", "modify_rmp_in", "bitmask.lwm"),
    ("ALLOC_XRCD_OUT_XRCD", "alloc_xrcd_out", "xrcd"),
    ("DEALLOC_XRCD_IN_XRCD", "dealloc_xrcd_in", "xrcd"),
    ("CREATE_XRC_SRQ_IN_UMEM_VALID", "create_xrc_srq_in", "xrc_srq_umem_valid"),
    ("CREATE_XRC_SRQ_OUT_SRQN", "create_xrc_srq_out", "xrc_srqn"),
    ("XRC_SRQ_IN_SRQN", "destroy_xrc_srq_in", "xrc_srqn"),
    ("XRC_SRQ_IN_SRQN", "query_xrc_srq_in", "xrc_srqn"),
    ("XRC_SRQ_IN_SRQN", "arm_xrc_srq_in", "xrc_srqn"),
    ("ARM_XRC_SRQ_IN_LWM", "arm_xrc_srq_in", "lwm"),
    ("MCG_IN_QPN", "attach_to_mcg_in", "qpn"),
    ("MCG_IN_QPN", "detach_from_mcg_in", "qpn"),
    ("MCG_IN_GID", "attach_to_mcg_in", "multicast_gid"),
    ("MCG_IN_GID", "detach_from_mcg_in", "multicast_gid"),
]
AT = [
    ("CREATE_MKEY_IN_MKC_AT", "create_mkey_in", "memory_key_mkey_entry"),
    ("CREATE_MKEY_IN_MTT_AT", "create_mkey_in", "klm_pas_mtt"),
    ("QUERY_MKEY_OUT_MKC_AT", "query_mkey_out", "memory_key_mkey_entry"),
    ("QUERY_MKEY_OUT_MTT_AT", "query_mkey_out", "bsf0_klm0_pas_mtt0_1"),
    ("CREATE_CQ_IN_CQC_AT", "create_cq_in", "cq_context"),
    ("CREATE_CQ_IN_PAS_AT", "create_cq_in", "pas"),
    ("QUERY_CQ_OUT_CQC_AT", "query_cq_out", "cq_context"),
    ("QUERY_CQ_OUT_PAS_AT", "query_cq_out", "pas"),
    ("MODIFY_CQ_IN_CQC_AT", "modify_cq_in", "cq_context"),
    ("MODIFY_CQ_IN_PAS_AT", "modify_cq_in", "pas"),
    ("QP_IN_QPC_AT", "create_qp_in", "qpc"),
    ("QP_IN_QPC_AT", "rst2init_qp_in", "qpc"),
    ("CREATE_QP_IN_PAS_AT", "create_qp_in", "pas"),
    ("QUERY_QP_OUT_QPC_AT", "query_qp_out", "qpc"),
    ("QUERY_QP_OUT_PAS_AT", "query_qp_out", "qp_pas_or_qpc_ext_and_pas"),
    ("QPC_PRI_PATH_AT", "qpc", "primary_address_path"),
    ("QPC_SEC_PATH_AT", "qpc", "secondary_address_path"),
    ("CREATE_SRQ_IN_SRQC_AT", "create_srq_in", "srq_context_entry"),
    ("CREATE_SRQ_IN_PAS_AT", "create_srq_in", "pas"),
    ("QUERY_SRQ_OUT_SRQC_AT", "query_srq_out", "srq_context_entry"),
    ("QUERY_SRQ_OUT_PAS_AT", "query_srq_out", "pas"),
    ("CREATE_RMP_IN_RMPC_AT", "create_rmp_in", "ctx"),
    ("MODIFY_RMP_IN_RMPC_AT", "modify_rmp_in", "ctx"),
    ("QUERY_RMP_OUT_RMPC_AT", "query_rmp_out", "rmp_context"),
    ("RMPC_WQ_AT", "rmpc", "wq"),
    ("WQ_PAS_AT", "wq", "pas"),
    ("CREATE_XRC_SRQ_IN_CTX", "create_xrc_srq_in", "xrc_srq_context_entry"),
    ("CREATE_XRC_SRQ_IN_PAS", "create_xrc_srq_in", "pas"),
    ("QUERY_XRC_SRQ_OUT_CTX", "query_xrc_srq_out", "xrc_srq_context_entry"),
    ("QUERY_XRC_SRQ_OUT_PAS", "query_xrc_srq_out", "pas"),
]
PREFIX_STRUCTS = [("MKC_", "mkc", {}),
                  ("CQC_", "cqc", {"SCQE_BREAK_MODERATION": "scqe_break_moderation_en",
                                   "C_EQN": "c_eqn_or_apu_element"}),
                  ("QPC_", "qpc", {"ULP_STATELESS_OFFLOAD": "ulp_stateless_offload_mode"}),
                  ("ADS_", "ads", {}),
                  ("SRQC_", "srqc", {}),
                  ("RMPC_", "rmpc", {}),
                  ("XRC_SRQC_", "xrc_srqc", {"LOG_SIZE": "log_xrc_srq_size",
                                             "BASIC_CYCLIC": "basic_cyclic_rcv_wqe",
                                             "UIDX_EQ_SRQN": "user_index_equal_xrc_srqn",
                                             "DBR_ADDR": None}),
                  ("WQ_", "wq", {})]
LENGTHS = [("MKC_SIZE", "mkc"), ("CQC_SIZE", "cqc"), ("QPC_SIZE", "qpc"), ("ADS_SIZE", "ads"),
           ("SRQC_SIZE", "srqc"), ("CREATE_MKEY_IN_LEN", "create_mkey_in"),
           ("QUERY_MKEY_OUT_LEN", "query_mkey_out"), ("CREATE_CQ_IN_LEN", "create_cq_in"),
           ("QUERY_CQ_OUT_LEN", "query_cq_out"), ("MODIFY_CQ_IN_LEN", "modify_cq_in"),
           ("CREATE_QP_IN_LEN", "create_qp_in"), ("MODIFY_QP_IN_LEN", "rst2init_qp_in"),
           ("MODIFY_QP_IN_LEN", "init2rtr_qp_in"), ("MODIFY_QP_IN_LEN", "rtr2rts_qp_in"),
           ("MODIFY_QP_IN_LEN", "rts2rts_qp_in"), ("MODIFY_QP_IN_LEN", "init2init_qp_in"),
           ("CREATE_SRQ_IN_LEN", "create_srq_in"), ("QUERY_SRQ_OUT_LEN", "query_srq_out"),
           ("CREATE_RMP_IN_LEN", "create_rmp_in"), ("MODIFY_RMP_IN_LEN", "modify_rmp_in"),
           ("QUERY_RMP_OUT_LEN", "query_rmp_out"), ("OBJ_CMD_LEN", "destroy_qp_in"),
           ("OBJ_CMD_LEN", "alloc_pd_out"), ("OBJ_CMD_LEN", "arm_rq_in"),
           ("OBJ_CMD_LEN", "alloc_xrcd_in"), ("OBJ_CMD_LEN", "alloc_xrcd_out"),
           ("OBJ_CMD_LEN", "dealloc_xrcd_in"), ("OBJ_CMD_LEN", "destroy_xrc_srq_in"),
           ("OBJ_CMD_LEN", "query_xrc_srq_in"), ("OBJ_CMD_LEN", "arm_xrc_srq_in"),
           ("OBJ_CMD_LEN", "create_xrc_srq_out"), ("CREATE_XRC_SRQ_IN_LEN", "create_xrc_srq_in"),
           ("QUERY_XRC_SRQ_OUT_LEN", "query_xrc_srq_out"), ("SRQC_SIZE", "xrc_srqc"),
           ("MCG_IN_LEN", "attach_to_mcg_in"), ("MCG_IN_LEN", "detach_from_mcg_in"),
           ("OBJ_CMD_LEN", "attach_to_mcg_out"), ("OBJ_CMD_LEN", "detach_from_mcg_out")]


def main():
    path = find_ifc()
    if not path:
        print("1..0 # SKIP mlx5_ifc.h not found (set MLX5_IFC)")
        return
    ifc = Ifc(path)
    checks = [(n, s, fl, True) for n, s, fl in FIELDS]
    for prefix, struct, renames in PREFIX_STRUCTS:
        for key in sorted(P):
            if key.startswith("VCX_" + prefix) and hasattr(P[key], "bit"):
                short = key[len("VCX_" + prefix):]
                if renames.get(short, "") is None:
                    continue
                checks.append((prefix + short, struct, renames.get(short, short.lower()), True))
    for name, struct, fld, width in checks:
        f = P.get("VCX_" + name)
        try:
            bit, w = ifc.field(struct, fld)
        except KeyError:
            t.ok(False, "VCX_%s: %s.%s not in mlx5_ifc.h" % (name, struct, fld))
            continue
        t.eq((f.bit, f.width), (bit, w), "VCX_%s = %s.%s" % (name, struct, fld))
    # xrc_srqc splits the 64-bit doorbell record address in two dwords (bits 1:0 reserved)
    hi, lo = ifc.field("xrc_srqc", "db_record_addr_h"), ifc.field("xrc_srqc",
                                                                   "db_record_addr_l")
    t.eq((P["VCX_XRC_SRQC_DBR_ADDR"].bit, P["VCX_XRC_SRQC_DBR_ADDR"].width),
         (hi[0], hi[1] + lo[1] + 2), "VCX_XRC_SRQC_DBR_ADDR = xrc_srqc.db_record_addr_h/_l")
    for name, struct, fld in AT:
        bit, _ = ifc.field(struct, fld)
        t.eq(P["VCX_" + name] * 8, bit, "VCX_%s = offset of %s.%s" % (name, struct, fld))
    for name, struct in LENGTHS:
        t.eq(P["VCX_" + name], ifc.size(struct) // 8, "VCX_%s = sizeof %s" % (name, struct))
    t.done()


if __name__ == "__main__":
    main()
