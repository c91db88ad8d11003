#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""HCA lifecycle commands and their state machine: ENABLE_HCA, DISABLE_HCA, QUERY_ISSI,
SET_ISSI, QUERY_HCA_CAP, SET_HCA_CAP, INIT_HCA, TEARDOWN_HCA, QUERY_ADAPTER."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import H, Tap, Vcx, get, put, synd, run_isolated  # noqa: E402

OP = {k[len("VCX_CMD_OP_"):]: v for k, v in H.items() if k.startswith("VCX_CMD_OP_")}
t = Tap()


def check(r, status, syndrome, desc):
    t.eq((r.deliv, r.status, r.syndrome), (0, status, syndrome), desc)


def cap_page(d, op_mod):
    r = d.exec(OP["QUERY_HCA_CAP"], op_mod, out_len=0x1010)
    assert r.status == 0
    return bytearray(r.out[0x10:0x1010])


def set_cap(d, page, op_mod=0, fields=()):
    return d.exec(OP["SET_HCA_CAP"], op_mod, in_len=0x1010, payload={0x10: bytes(page)},
                  fields=fields)


def before_enable(d):
    for name, out_len, syn in [("QUERY_ISSI", 0x70, 0xff04), ("SET_ISSI", 16, 0xff04),
                               ("QUERY_HCA_CAP", 0x1010, 0xff04), ("INIT_HCA", 16, 0xff04),
                               ("DISABLE_HCA", 16, 0xff04), ("TEARDOWN_HCA", 16, 0xff05),
                               ("QUERY_ADAPTER", 0x110, 0xff04), ("QUERY_PAGES", 16, 0xff04),
                               ("ALLOC_UAR", 16, 0xff05)]:
        op_mod = 1 if name in ("QUERY_HCA_CAP", "QUERY_PAGES") else 0
        r = d.exec(OP[name], op_mod, out_len=out_len)
        check(r, 4, synd(OP[name], syn), "%s before ENABLE_HCA: BAD_SYS_STATE" % name)


def enable(d):
    r = d.exec(OP["ENABLE_HCA"], fields=[(H["VCX_ENABLE_HCA_IN_FUNCTION_ID"], 1)])
    check(r, 3, 0x01040001, "ENABLE_HCA function_id 1: BAD_PARAM")
    r = d.exec(OP["ENABLE_HCA"], fields=[(H["VCX_ENABLE_HCA_IN_EMBEDDED_CPU"], 1)])
    check(r, 3, 0x01040002, "ENABLE_HCA embedded_cpu_function: BAD_PARAM")
    r = d.exec(OP["ENABLE_HCA"], op_mod=1)
    check(r, 3, 0x0104ff09, "ENABLE_HCA op_mod 1: BAD_PARAM")
    t.eq(d.state()["hca"], "disabled", "refused ENABLE_HCA leaves the HCA disabled")
    # enable_hca_out is 12 bytes (status, syndrome, a reserved dword): what mlx5_core sends
    check(d.exec(OP["ENABLE_HCA"], out_len=8), 0x51, 0x0104ff03,
          "ENABLE_HCA with an 8-byte output: BAD_OUTPUT_LEN")
    check(d.exec(OP["ENABLE_HCA"], out_len=12), 0, 0, "ENABLE_HCA with its 12-byte output: OK")
    t.eq(d.state()["hca"], "enabled", "state property: hca=enabled")
    check(d.exec(OP["ENABLE_HCA"]), 4, 0x0104ff06, "ENABLE_HCA twice: BAD_SYS_STATE")


def issi(d):
    r = d.exec(OP["QUERY_ISSI"], out_len=0x70)
    t.eq((r.status, r.f(H["VCX_QUERY_ISSI_OUT_CURRENT_ISSI"]), r.u32(0x6c)), (0, 0, 3),
         "QUERY_ISSI: current 0, supported_issi_dw0 0b11")
    check(d.exec(OP["QUERY_ISSI"], out_len=0x10), 0x51, 0x010aff03,
          "QUERY_ISSI output 16 bytes: BAD_OUTPUT_LEN")
    check(d.exec(OP["SET_ISSI"], fields=[(H["VCX_SET_ISSI_IN_CURRENT_ISSI"], 2)]), 3,
          0x010b0004, "SET_ISSI 2: BAD_PARAM")
    check(d.exec(OP["SET_ISSI"], fields=[(H["VCX_SET_ISSI_IN_CURRENT_ISSI"], 0xffff)]), 3,
          0x010b0004, "SET_ISSI 0xffff: BAD_PARAM")
    check(d.exec(OP["SET_ISSI"], in_len=8), 0x50, 0x010bff02,
          "SET_ISSI with 8-byte input: BAD_INPUT_LEN")
    check(d.exec(OP["SET_ISSI"], fields=[(H["VCX_SET_ISSI_IN_CURRENT_ISSI"], 1)]), 0, 0,
          "SET_ISSI 1: OK")
    r = d.exec(OP["QUERY_ISSI"], out_len=0x70)
    t.eq(r.f(H["VCX_QUERY_ISSI_OUT_CURRENT_ISSI"]), 1, "QUERY_ISSI reports current_issi 1")
    t.eq(d.state()["issi"], "1", "state property: issi=1")


def caps(d):
    gmax, gcur = cap_page(d, 0), cap_page(d, 1)
    expect = [("PORT_TYPE", 1), ("NUM_PORTS", 1), ("ROCE", 1), ("LOG_MAX_EQ", 6),
              ("MAX_NUM_EQS", 64), ("LOG_MAX_EQ_SZ", 15), ("LOG_PG_SZ", 12),
              ("LOG_MAX_QP", 12), ("LOG_MAX_CQ", 12), ("XRC", 1), ("LOG_MAX_XRCD", 16),
              ("PAGE_REQUEST_DISABLE", 0), ("DEVICE_FREQUENCY_KHZ", 1000000)]
    got = [(n, get(gcur, H["VCX_CAP_GEN_" + n])) for n, _ in expect]
    t.eq(got, expect, "GENERAL CUR caps: Ethernet, RoCE, 64 EQs, QPs and CQs, XRC with 2^16 "
         "domains, a 1 GHz internal timer")
    t.eq((get(gmax, H["VCX_CAP_GEN_CMDIF_CHECKSUM"]), get(gcur, H["VCX_CAP_GEN_CMDIF_CHECKSUM"])),
         (3, 0), "cmdif_checksum: MAX 3 (capable), CUR 0")
    rcur = cap_page(d, (4 << 1) | 1)
    t.eq((get(rcur, H["VCX_CAP_ROCE_VERSION"]), get(rcur, H["VCX_CAP_ROCE_L3_TYPE"]),
          get(rcur, H["VCX_CAP_ROCE_R_ROCE_DEST_UDP_PORT"]),
          get(rcur, H["VCX_CAP_ROCE_R_ROCE_MIN_SRC_UDP_PORT"])),
         (4, 6, 4791, 0xc000), "ROCE CUR caps: v2, IPv4+IPv6, UDP 4791, min sport 0xc000")
    t.eq((get(cap_page(d, 8), H["VCX_CAP_ROCE_ADDRESS_TABLE_SIZE"]),
          get(rcur, H["VCX_CAP_ROCE_ADDRESS_TABLE_SIZE"])), (256, 256),
         "ROCE caps: roce_address_table_size 256 (MAX and CUR)")
    atomic_caps(d, gmax, gcur)
    for op_mod, desc in [(4, "type 2 (ODP)"), (0x10, "type 8 (eswitch flow table)"),
                         (0x40, "type 0x20 (general 2)")]:
        check(d.exec(OP["QUERY_HCA_CAP"], op_mod, out_len=0x1010), 3,
              synd(0x100, 0xff09), "QUERY_HCA_CAP %s: BAD_PARAM" % desc)
    check(d.exec(OP["QUERY_HCA_CAP"], 1, out_len=0x1010,
                 fields=[(H["VCX_HCA_CAP_IN_FUNCTION_ID"], 2)]), 3, 0x0100000d,
          "QUERY_HCA_CAP function_id 2: BAD_PARAM")
    # SET_HCA_CAP
    bad = bytearray(gcur)
    put(bad, H["VCX_CAP_GEN_LOG_MAX_QP"], 13)
    check(set_cap(d, bad), 3, 0x01090006, "SET_HCA_CAP log_max_qp 13 > MAX 12: BAD_PARAM")
    bad = bytearray(gcur)
    put(bad, H["VCX_CAP_GEN_CMDIF_CHECKSUM"], 2)
    check(set_cap(d, bad), 3, 0x01090006, "SET_HCA_CAP cmdif_checksum 2: BAD_PARAM")
    bad = bytearray(gcur)
    put(bad, H["VCX_CAP_GEN_UAR_4K"], 1)
    check(set_cap(d, bad), 3, 0x01090006, "SET_HCA_CAP uar_4k 1 > MAX 0: BAD_PARAM")
    check(set_cap(d, gcur, op_mod=1), 3, 0x0109ff09, "SET_HCA_CAP op_mod 1 (CUR bit): BAD_PARAM")
    check(set_cap(d, gcur, fields=[(H["VCX_HCA_CAP_IN_OTHER_FUNCTION"], 1)]), 3, 0x0109000d,
          "SET_HCA_CAP other_function: BAD_PARAM")
    t.eq(cap_page(d, 1), gcur, "refused SET_HCA_CAP changed nothing")
    ok = bytearray(gcur)
    put(ok, H["VCX_CAP_GEN_ROCE"], 0)
    put(ok, H["VCX_CAP_GEN_MAX_NUM_EQS"], 5)    # read-only: ignored
    check(set_cap(d, ok), 0, 0, "SET_HCA_CAP roce 0 (+ read-only max_num_eqs 5): OK")
    now = cap_page(d, 1)
    t.eq((get(now, H["VCX_CAP_GEN_ROCE"]), get(now, H["VCX_CAP_GEN_MAX_NUM_EQS"])), (0, 64),
         "CUR roce now 0, read-only max_num_eqs still 64")
    put(ok, H["VCX_CAP_GEN_ROCE"], 1)
    check(set_cap(d, ok), 0, 0, "SET_HCA_CAP roce back to 1: OK")
    rcur = cap_page(d, 9)
    put(rcur, H["VCX_CAP_ROCE_SW_R_ROCE_SRC_UDP_PORT"], 1)
    check(set_cap(d, rcur, op_mod=8), 3, 0x01090006,
          "SET_HCA_CAP ROCE sw_r_roce_src_udp_port 1 > MAX 0: BAD_PARAM")


def atomic_caps(d, gmax, gcur):
    t.eq((get(gmax, H["VCX_CAP_GEN_ATOMIC"]), get(gcur, H["VCX_CAP_GEN_ATOMIC"])), (1, 1),
         "GENERAL atomic = 1 (MAX and CUR): the ATOMIC page is reported")
    names = ["REQ_8B_ENDIANNESS_MODE", "SUPPORTED_REQ_8B_ENDIANNESS_MODE_1", "OPERATIONS",
             "SIZE_QP", "SIZE_DC"]
    amax, acur = cap_page(d, 6), cap_page(d, 7)
    t.eq([get(acur, H["VCX_CAP_ATOMIC_" + n]) for n in names], [0, 1, 3, 8, 0],
         "ATOMIC CUR: mode 0 (big-endian), mode 1 supported, CS+FA, 8-byte QP atomics, no DC")
    t.eq([get(amax, H["VCX_CAP_ATOMIC_" + n]) for n in names], [1, 1, 3, 8, 0],
         "ATOMIC MAX: endianness mode up to 1, CS+FA, 8 bytes")
    t.eq(bytes(acur[0x20:]), bytes(len(acur) - 0x20),
         "ATOMIC CUR: nothing set beyond atomic_size_dc (no masked atomics)")
    bad = bytearray(acur)
    put(bad, H["VCX_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE"], 2)
    check(set_cap(d, bad, op_mod=6), 3, 0x01090006,
          "SET_HCA_CAP ATOMIC endianness mode 2 > MAX 1: BAD_PARAM")
    check(set_cap(d, acur, op_mod=7), 3, 0x0109ff09,
          "SET_HCA_CAP ATOMIC op_mod 7 (CUR bit): BAD_PARAM")
    ok = bytearray(acur)
    put(ok, H["VCX_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE"], 1)
    put(ok, H["VCX_CAP_ATOMIC_OPERATIONS"], 0xf)        # read-only: ignored
    check(set_cap(d, ok, op_mod=6), 0, 0,
          "SET_HCA_CAP ATOMIC mode 1 (host endianness), as mlx5_core does: OK")
    now = cap_page(d, 7)
    t.eq((get(now, H["VCX_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE"]),
          get(now, H["VCX_CAP_ATOMIC_OPERATIONS"])), (1, 3),
         "ATOMIC CUR now mode 1; read-only atomic_operations still 3")
    t.eq(get(cap_page(d, 6), H["VCX_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE"]), 1,
         "ATOMIC MAX unchanged by SET_HCA_CAP")


def init(d):
    r = d.exec(OP["INIT_HCA"])
    check(r, 9, 0x01020008, "INIT_HCA before boot+init pages: BAD_RES_STATE")
    r = d.exec(OP["QUERY_PAGES"], 2)
    d.give_pages(r.u32(12))
    owner = bytes(range(1, 17))
    check(d.exec(OP["INIT_HCA"], in_len=0x20, payload={0x10: owner}), 3, 0x01020009,
          "INIT_HCA with sw_owner_id: BAD_PARAM")
    check(d.exec(OP["INIT_HCA"], fields=[(H["VCX_INIT_HCA_IN_SW_VHCA_ID"], 3)]), 3,
          0x0102000a, "INIT_HCA with sw_vhca_id: BAD_PARAM")
    check(d.exec(OP["INIT_HCA"], in_len=0x20), 0, 0, "INIT_HCA (32-byte input): OK")
    t.eq(d.state()["hca"], "initialized", "state property: hca=initialized")
    check(d.exec(OP["INIT_HCA"]), 4, 0x0102ff07, "INIT_HCA twice: BAD_SYS_STATE")
    check(d.exec(OP["SET_ISSI"], fields=[(H["VCX_SET_ISSI_IN_CURRENT_ISSI"], 0)]), 4,
          0x010bff07, "SET_ISSI after INIT_HCA: BAD_SYS_STATE")
    check(set_cap(d, cap_page(d, 1)), 4, 0x0109ff07, "SET_HCA_CAP after INIT_HCA: BAD_SYS_STATE")
    check(d.exec(OP["DISABLE_HCA"]), 4, 0x0105ff07, "DISABLE_HCA while initialized: BAD_SYS_STATE")


def adapter(d):
    r = d.exec(OP["QUERY_ADAPTER"], out_len=0x110)
    blk = 0x10
    t.eq((r.status, r.f(H["VCX_ADAPTER_IEEE_VENDOR_ID"], blk),
          r.f(H["VCX_ADAPTER_VSD_VENDOR_ID"], blk), r.out[0x100:0x10d]),
         (0, 0x525400, 0x1af4, b"VCX0000000001"),
         "QUERY_ADAPTER: OUI 52:54:00, vsd vendor 0x1af4, PSID VCX0000000001")
    check(d.exec(OP["QUERY_ADAPTER"], out_len=0x20), 0x51, 0x0101ff03,
          "QUERY_ADAPTER output 32 bytes: BAD_OUTPUT_LEN")
    check(d.exec(OP["QUERY_ADAPTER"], out_len=0x110, fields=[(H["VCX_CMD_IN_UID"], 1)]), 3,
          0x0101ff08, "QUERY_ADAPTER uid 1: BAD_PARAM")
    check(d.exec(OP["QUERY_ADAPTER"], in_len=8, out_len=0x110), 0x50, 0x0101ff02,
          "QUERY_ADAPTER 8-byte input: BAD_INPUT_LEN")


def teardown(d):
    uar = d.alloc_uar()
    check(d.exec(OP["TEARDOWN_HCA"]), 9, 0x0103000c,
          "graceful TEARDOWN_HCA with a UAR alive: BAD_RES_STATE")
    check(d.exec(OP["TEARDOWN_HCA"], fields=[(H["VCX_TEARDOWN_HCA_IN_PROFILE"], 2)]), 3,
          0x0103000b, "TEARDOWN_HCA profile 2 (fast): BAD_PARAM")
    check(d.exec(OP["TEARDOWN_HCA"], op_mod=1), 3, 0x0103ff09, "TEARDOWN_HCA op_mod 1: BAD_PARAM")
    r = d.create_eq(uar, 1 << 9)
    t.eq(r.status, 0, "CREATE_EQ before force teardown: OK")
    r = d.exec(OP["TEARDOWN_HCA"], fields=[(H["VCX_TEARDOWN_HCA_IN_PROFILE"], 1)])
    t.eq((r.status, r.f(H["VCX_TEARDOWN_HCA_OUT_STATE"])), (0, 0),
         "force-close TEARDOWN_HCA: OK, state 0")
    st = d.state()
    t.eq((st["hca"], st["uars"], st["eqs"], st["pages"]), ("enabled", "0", "0", "80"),
         "after force teardown: enabled, no UARs or EQs, pages still held")
    check(d.exec(OP["TEARDOWN_HCA"]), 4, 0x0103ff05, "TEARDOWN_HCA when not initialized: BAD_SYS_STATE")
    check(d.exec(OP["DISABLE_HCA"]), 9, 0x01050003, "DISABLE_HCA with pages held: BAD_RES_STATE")
    r = d.exec(OP["MANAGE_PAGES"], 2, out_len=16 + 8 * 80,
               fields=[(H["VCX_MANAGE_PAGES_IN_NUM_ENTRIES"], 80)])
    t.eq((r.status, r.u32(8)), (0, 80), "MANAGE_PAGES take after teardown returns all 80")
    check(d.exec(OP["DISABLE_HCA"], fields=[(H["VCX_DISABLE_HCA_IN_FUNCTION_ID"], 1)]), 3,
          0x01050001, "DISABLE_HCA function_id 1: BAD_PARAM")
    check(d.exec(OP["DISABLE_HCA"], out_len=12), 0, 0, "DISABLE_HCA with its 12-byte output: OK")
    st = d.state()
    t.eq((st["hca"], st["issi"], st["pages"]), ("disabled", "0", "0"),
         "after DISABLE_HCA: disabled, ISSI back to 0, no pages")
    check(d.exec(OP["ENABLE_HCA"]), 0, 0, "ENABLE_HCA again")
    t.eq(get(cap_page(d, 7), H["VCX_CAP_ATOMIC_REQ_8B_ENDIANNESS_MODE"]), 0,
         "DISABLE_HCA resets the ATOMIC endianness mode to 0")
    check(d.exec(OP["DISABLE_HCA"]), 0, 0, "DISABLE_HCA again")
    check(d.exec(OP["DISABLE_HCA"]), 4, 0x0105ff04, "DISABLE_HCA twice: BAD_SYS_STATE")
    # the whole cycle again
    d.bring_up()
    t.eq(d.state()["hca"], "initialized", "ENABLE/ISSI/pages/INIT cycle runs again after DISABLE")
    t.ok("syndrome 0x0103000c" in d.qt.log(), "refused TEARDOWN_HCA logged as a guest error")


def main():
    d = Vcx()
    for name, fn in [("before_enable", before_enable), ("enable", enable), ("issi", issi),
                     ("caps", caps), ("init", init), ("adapter", adapter),
                     ("teardown", teardown)]:
        run_isolated(t, name, lambda fn=fn: fn(d))
    t.ok(d.qt.alive(), "QEMU still running")
    d.qt.close()
    t.done()


if __name__ == "__main__":
    main()
