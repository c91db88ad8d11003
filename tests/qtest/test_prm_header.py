#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Cross-check include/vcx/prm-cmd.h against the kernel's mlx5_ifc.h: every field
descriptor the device and the driver share must sit at the PRM's bit offset with the
PRM's width, and the command lengths must match the PRM layouts. The kernel header is the
independent authority (MLX5_IFC env var, or the installed linux-headers); without it the
checks are skipped."""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import H, Tap  # noqa: E402

t = Tap()


def find_ifc():
    env = os.environ.get("MLX5_IFC")
    if env:
        return env
    hits = sorted(glob.glob("/usr/src/linux-headers-*/include/linux/mlx5/mlx5_ifc.h"))
    return hits[-1] if hits else None


def parse_ifc(path):
    """{struct: [(name, type or None, bits)]} from the mlx5_ifc '_bits' layouts."""
    text = ""
    for name in ("mlx5_ifc.h", "mlx5_ifc_fpga.h", "mlx5_ifc_vdpa.h"):
        p = os.path.join(os.path.dirname(path), name)
        if os.path.exists(p):
            text += open(p).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    structs = {}
    # A few aggregates are named without the _bits suffix (union mlx5_ifc_exe_aso_ctrl):
    # they are keyed by their bare name, and members of that type resolve to them.
    for m in re.finditer(r"(struct|union)\s+mlx5_ifc_(\w+?)(?:_bits)?\s*\{(.*?)\n\};", text,
                         re.S):
        members = []
        for decl in m.group(3).split(";"):
            decl = decl.strip()
            a = re.match(r"u8\s+(\w+)((?:\[[^\]]*\])+)$", decl)
            b = re.match(r"(?:struct|union)\s+mlx5_ifc_(\w+?)(?:_bits)?\s+(\w+)"
                         r"((?:\[[^\]]*\])*)$", decl)
            if a:
                dims = re.findall(r"\[([^\]]*)\]", a.group(2))
                members.append((a.group(1), None, dims))
            elif b:
                members.append((b.group(2), b.group(1), re.findall(r"\[([^\]]*)\]", b.group(3))))
        structs[m.group(2)] = (m.group(1), members)
    return structs


class Ifc:
    def __init__(self, path):
        self.s = parse_ifc(path)

    @staticmethod
    def _dim(x):
        try:
            return int(x, 0) if x else 0
        except ValueError:
            return 1

    def size(self, name):
        if name not in self.s:
            return 0
        kind, members = self.s[name]
        sizes = []
        for _, typ, dims in members:
            n = 1
            for x in dims:
                n *= self._dim(x)
            sizes.append(n if typ is None else self.size(typ) * n)
        return max(sizes) if kind == "union" else sum(sizes)

    def field(self, struct, path):
        """(bit offset, width) of dotted path inside struct."""
        off = 0
        for part in path.split("."):
            kind, members = self.s[struct]
            pos = 0
            for name, typ, dims in members:
                n = 1
                for x in dims:
                    n *= self._dim(x)
                w = n if typ is None else self.size(typ) * n
                if name == part:
                    off += pos
                    width = w
                    struct = typ
                    break
                if kind != "union":
                    pos += w
            else:
                raise KeyError(path)
        return off, width


# (header name, ifc struct, ifc field path, compare width?)
FIELDS = [
    ("CMDQ_ENT_TYPE", "cmd_queue_entry", "type"),
    ("CMDQ_ENT_IN_LEN", "cmd_queue_entry", "input_length"),
    ("CMDQ_ENT_IN_PTR", "cmd_queue_entry", "input_mailbox_pointer_63_32", False),
    ("CMDQ_ENT_IN_INLINE", "cmd_queue_entry", "command_input_inline_data"),
    ("CMDQ_ENT_OUT_INLINE", "cmd_queue_entry", "command_output_inline_data"),
    ("CMDQ_ENT_OUT_PTR", "cmd_queue_entry", "output_mailbox_pointer_63_32", False),
    ("CMDQ_ENT_OUT_LEN", "cmd_queue_entry", "output_length"),
    ("CMDQ_ENT_TOKEN", "cmd_queue_entry", "token"),
    ("CMDQ_ENT_SIGNATURE", "cmd_queue_entry", "signature"),
    ("CMDQ_ENT_STATUS", "cmd_queue_entry", "status"),
    ("CMDQ_ENT_OWNERSHIP", "cmd_queue_entry", "ownership"),
    ("MBOX_NEXT_PTR", "cmd_if_box", "next_pointer_63_32", False),
    ("MBOX_BLOCK_NUM", "cmd_if_box", "block_number"),
    ("MBOX_TOKEN", "cmd_if_box", "token"),
    ("MBOX_CTRL_SIGNATURE", "cmd_if_box", "ctrl_signature"),
    ("MBOX_SIGNATURE", "cmd_if_box", "signature"),
    ("CMD_IN_OPCODE", "enable_hca_in", "opcode"),
    ("CMD_IN_OP_MOD", "enable_hca_in", "op_mod"),
    ("CMD_IN_UID", "alloc_uar_in", "uid"),
    ("CMD_OUT_STATUS", "enable_hca_out", "status"),
    ("CMD_OUT_SYNDROME", "enable_hca_out", "syndrome"),
    ("ENABLE_HCA_IN_EMBEDDED_CPU", "enable_hca_in", "embedded_cpu_function"),
    ("ENABLE_HCA_IN_FUNCTION_ID", "enable_hca_in", "function_id"),
    ("DISABLE_HCA_IN_FUNCTION_ID", "disable_hca_in", "function_id"),
    ("INIT_HCA_IN_SW_VHCA_ID", "init_hca_in", "sw_vhca_id"),
    ("INIT_HCA_IN_SW_OWNER_ID", "init_hca_in", "sw_owner_id"),
    ("TEARDOWN_HCA_IN_PROFILE", "teardown_hca_in", "profile"),
    ("TEARDOWN_HCA_OUT_STATE", "teardown_hca_out", "state"),
    ("QUERY_ISSI_OUT_CURRENT_ISSI", "query_issi_out", "current_issi"),
    ("QUERY_ISSI_OUT_SUPPORTED_DW0", "query_issi_out", "supported_issi_dw0"),
    ("SET_ISSI_IN_CURRENT_ISSI", "set_issi_in", "current_issi"),
    ("QUERY_PAGES_IN_FUNCTION_ID", "query_pages_in", "function_id"),
    ("QUERY_PAGES_IN_EMBEDDED_CPU", "query_pages_in", "embedded_cpu_function"),
    ("QUERY_PAGES_OUT_NUM_PAGES", "query_pages_out", "num_pages"),
    ("QUERY_PAGES_OUT_FUNCTION_ID", "query_pages_out", "function_id"),
    ("MANAGE_PAGES_IN_NUM_ENTRIES", "manage_pages_in", "input_num_entries"),
    ("MANAGE_PAGES_IN_FUNCTION_ID", "manage_pages_in", "function_id"),
    ("MANAGE_PAGES_IN_PAS", "manage_pages_in", "pas", False),
    ("MANAGE_PAGES_OUT_NUM_ENTRIES", "manage_pages_out", "output_num_entries"),
    ("MANAGE_PAGES_OUT_PAS", "manage_pages_out", "pas", False),
    ("HCA_CAP_IN_OTHER_FUNCTION", "query_hca_cap_in", "other_function"),
    ("HCA_CAP_IN_FUNCTION_ID", "query_hca_cap_in", "function_id"),
    ("HCA_CAP_CAPABILITY", "query_hca_cap_out", "capability"),
    ("QUERY_ADAPTER_OUT_PARAMS", "query_adapter_out", "query_adapter_struct"),
    ("ADAPTER_IEEE_VENDOR_ID", "query_adapter_param_block", "ieee_vendor_id"),
    ("ADAPTER_VSD_VENDOR_ID", "query_adapter_param_block", "vsd_vendor_id"),
    ("ADAPTER_VSD", "query_adapter_param_block", "vsd"),
    ("ADAPTER_PSID", "query_adapter_param_block", "vsd_contd_psid"),
    ("ACCESS_REG_IN_REGISTER_ID", "access_register_in", "register_id"),
    ("ACCESS_REG_IN_ARGUMENT", "access_register_in", "argument"),
    ("ACCESS_REG_IN_DATA", "access_register_in", "register_data", False),
    ("ACCESS_REG_OUT_DATA", "access_register_out", "register_data", False),
    ("QUERY_VPORT_STATE_IN_OTHER_VPORT", "query_vport_state_in", "other_vport"),
    ("QUERY_VPORT_STATE_IN_VPORT_NUMBER", "query_vport_state_in", "vport_number"),
    ("QUERY_VPORT_STATE_OUT_ADMIN_STATE", "query_vport_state_out", "admin_state"),
    ("QUERY_VPORT_STATE_OUT_STATE", "query_vport_state_out", "state"),
    ("QUERY_NIC_VPORT_CTX_IN_ALLOWED_LIST_TYPE", "query_nic_vport_context_in", "allowed_list_type"),
    ("QUERY_NIC_VPORT_CTX_OUT_CTX", "query_nic_vport_context_out", "nic_vport_context"),
    ("MODIFY_NIC_VPORT_CTX_IN_FIELD_SELECT", "modify_nic_vport_context_in", "field_select"),
    ("MODIFY_NIC_VPORT_CTX_IN_CTX", "modify_nic_vport_context_in", "nic_vport_context"),
    ("NIC_VPORT_CTX_MAC_47_32", "nic_vport_context", "permanent_address.mac_addr_47_32"),
    ("NIC_VPORT_CTX_MAC_31_0", "nic_vport_context", "permanent_address.mac_addr_31_0"),
    ("ALLOC_UAR_OUT_UAR", "alloc_uar_out", "uar"),
    ("DEALLOC_UAR_IN_UAR", "dealloc_uar_in", "uar"),
    ("CREATE_EQ_IN_EQC", "create_eq_in", "eq_context_entry"),
    ("CREATE_EQ_IN_EVENT_BITMASK", "create_eq_in", "event_bitmask", False),
    ("CREATE_EQ_IN_PAS", "create_eq_in", "pas", False),
    ("CREATE_EQ_OUT_EQN", "create_eq_out", "eq_number"),
    ("DESTROY_EQ_IN_EQN", "destroy_eq_in", "eq_number"),
    ("QUERY_EQ_IN_EQN", "query_eq_in", "eq_number"),
    ("QUERY_EQ_OUT_EQC", "query_eq_out", "eq_context_entry"),
    ("QUERY_EQ_OUT_EVENT_BITMASK", "query_eq_out", "event_bitmask"),
    ("QUERY_EQ_OUT_PAS", "query_eq_out", "pas", False),
    ("ROCE_ADDRESS_IN_INDEX", "set_roce_address_in", "roce_address_index"),
    ("ROCE_ADDRESS_IN_VHCA_PORT_NUM", "set_roce_address_in", "vhca_port_num"),
    ("ROCE_ADDRESS_IN_INDEX", "query_roce_address_in", "roce_address_index"),
    ("ROCE_ADDRESS_IN_VHCA_PORT_NUM", "query_roce_address_in", "vhca_port_num"),
    ("SET_ROCE_ADDRESS_IN_ENTRY", "set_roce_address_in", "roce_address"),
    ("QUERY_ROCE_ADDRESS_OUT_ENTRY", "query_roce_address_out", "roce_address"),
    ("GID_MAC_47_32", "roce_addr_layout", "source_mac_47_32"),
    ("GID_MAC_31_0", "roce_addr_layout", "source_mac_31_0"),
]
PREFIX_STRUCTS = [("CAP_GEN_", "cmd_hca_cap", {}),
                  ("CAP_ROCE_", "roce_cap", {"VERSION": "roce_version",
                                             "ADDRESS_TABLE_SIZE": "roce_address_table_size"}),
                  ("CAP_ATOMIC_", "atomic_caps", {
                      "REQ_8B_ENDIANNESS_MODE": "atomic_req_8B_endianness_mode",
                      "SUPPORTED_REQ_8B_ENDIANNESS_MODE_1":
                      "supported_atomic_req_8B_endianness_mode_1",
                      "OPERATIONS": "atomic_operations", "SIZE_QP": "atomic_size_qp",
                      "SIZE_DC": "atomic_size_dc"}),
                  ("GID_", "roce_addr_layout", {"L3_ADDRESS": "source_l3_address",
                                                "L3_TYPE": "roce_l3_type",
                                                "VERSION": "roce_version",
                                                "MAC_47_32": None, "MAC_31_0": None}),
                  ("EQC_", "eqc", {}),
                  ("PAOS_", "paos_reg", {}),
                  ("PFCC_", "pfcc_reg", {}),
                  ("PMTU_", "pmtu_reg", {}),
                  ("PTYS_", "ptys_reg", {"EXT_ETH_PROTO_CAP": "ext_eth_proto_capability",
                                         "ETH_PROTO_CAP": "eth_proto_capability",
                                         "IB_LINK_WIDTH_CAP": "ib_link_width_capability",
                                         "IB_PROTO_CAP": "ib_proto_capability"}),
                  ("NIC_VPORT_CTX_", "nic_vport_context", {"MAC_47_32": None, "MAC_31_0": None})]
LENGTHS = [("QUERY_ISSI_OUT_LEN", "query_issi_out"), ("QUERY_HCA_CAP_OUT_LEN", "query_hca_cap_out"),
           ("SET_HCA_CAP_IN_LEN", "set_hca_cap_in"), ("INIT_HCA_IN_LEN", "init_hca_in"),
           ("QUERY_ADAPTER_OUT_LEN", "query_adapter_out"), ("CREATE_EQ_IN_LEN", "create_eq_in"),
           ("QUERY_EQ_OUT_LEN", "query_eq_out"), ("MODIFY_NIC_VPORT_CTX_IN_LEN",
                                                   "modify_nic_vport_context_in"),
           ("QUERY_NIC_VPORT_CTX_OUT_LEN", "query_nic_vport_context_out"),
           ("REG_PAOS_LEN", "paos_reg"), ("REG_PFCC_LEN", "pfcc_reg"), ("REG_PMTU_LEN", "pmtu_reg"), ("REG_PTYS_LEN", "ptys_reg"),
           ("EQC_SIZE", "eqc"), ("NIC_VPORT_CTX_SIZE", "nic_vport_context"),
           ("HCA_CAP_SIZE", "hca_cap_union"), ("MBOX_SIZE", "cmd_if_box"),
           ("CMDQ_ENT_SIZE", "cmd_queue_entry"),
           ("QUERY_ROCE_ADDRESS_IN_LEN", "query_roce_address_in"),
           ("QUERY_ROCE_ADDRESS_OUT_LEN", "query_roce_address_out"),
           ("SET_ROCE_ADDRESS_IN_LEN", "set_roce_address_in"),
           ("SET_ROCE_ADDRESS_OUT_LEN", "set_roce_address_out"),
           ("GID_ENTRY_SIZE", "roce_addr_layout")]


def main():
    path = find_ifc()
    if not path:
        print("1..0 # SKIP mlx5_ifc.h not found (set MLX5_IFC)")
        return
    ifc = Ifc(path)
    checks = [(n, s, f, True) if len(x) == 3 else (n, s, f, x[3])
              for x in FIELDS for (n, s, f) in [x[:3]]]
    for prefix, struct, renames in PREFIX_STRUCTS:
        for key in sorted(H):
            if key.startswith("VCX_" + prefix) and hasattr(H[key], "bit"):
                short = key[len("VCX_" + prefix):]
                name = renames.get(short, short.lower())
                if name is not None:
                    checks.append((prefix + short, struct, name, True))
    for name, struct, fld, width in checks:
        f = H.get("VCX_" + name)
        try:
            bit, w = ifc.field(struct, fld)
        except KeyError:
            t.ok(False, "VCX_%s: %s.%s not in mlx5_ifc.h" % (name, struct, fld))
            continue
        got = (f.bit, f.width) if width else f.bit
        want = (bit, w) if width else bit
        t.eq(got, want, "VCX_%s = %s.%s" % (name, struct, fld))
    for name, struct in LENGTHS:
        t.eq(H["VCX_" + name], ifc.size(struct) // 8, "VCX_%s = sizeof %s" % (name, struct))
    t.done()


if __name__ == "__main__":
    main()
