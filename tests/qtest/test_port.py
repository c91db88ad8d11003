#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Port and vport: ACCESS_REG PAOS / PFCC / PMTU / PTYS / HOST_ENDIANNESS / NODE_DESC (read and write),
QUERY_VPORT_STATE, QUERY_NIC_VPORT_CONTEXT, MODIFY_NIC_VPORT_CONTEXT and
QUERY_HCA_VPORT_PKEY."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import H, Tap, Vcx, EQ_BASE, get, put, run_isolated  # noqa: E402

OP = {k[len("VCX_CMD_OP_"):]: v for k, v in H.items() if k.startswith("VCX_CMD_OP_")}
AR = OP["ACCESS_REG"]
RID = H["VCX_ACCESS_REG_IN_REGISTER_ID"]
t = Tap()


def check(r, status, syndrome, desc):
    t.eq((r.deliv, r.status, r.syndrome), (0, status, syndrome), desc)


def reg(d, rid, write, data, length=None, out_len=None):
    length = len(data) if length is None else length
    return d.exec(AR, 0 if write else 1, in_len=16 + length,
                  out_len=16 + len(data) if out_len is None else out_len,
                  fields=[(RID, rid)], payload={16: bytes(data)})


def regbuf(size, **kv):
    b = bytearray(size)
    for k, v in kv.items():
        put(b, H[k], v)
    return b


def paos(d):
    r = reg(d, 0x5006, False, regbuf(16, VCX_PAOS_LOCAL_PORT=1))
    t.eq((r.status, r.f(H["VCX_PAOS_LOCAL_PORT"], 16), r.f(H["VCX_PAOS_ADMIN_STATUS"], 16),
          r.f(H["VCX_PAOS_OPER_STATUS"], 16)), (0, 1, 1, 1), "PAOS read: port 1 admin up, oper up")
    check(reg(d, 0x5006, False, regbuf(16, VCX_PAOS_LOCAL_PORT=2)), 3, 0x08050004,
          "PAOS local_port 2: BAD_PARAM")
    check(reg(d, 0x5006, True, regbuf(16, VCX_PAOS_LOCAL_PORT=1, VCX_PAOS_ASE=1,
                                      VCX_PAOS_ADMIN_STATUS=4)), 3, 0x08050005,
          "PAOS write admin_status 4: BAD_PARAM")
    check(reg(d, 0x5006, False, regbuf(16, VCX_PAOS_LOCAL_PORT=1), length=8), 0x50, 0x08050002,
          "PAOS with an 8-byte register: BAD_INPUT_LEN")
    check(reg(d, 0x5006, False, regbuf(16, VCX_PAOS_LOCAL_PORT=1), out_len=20), 0x51,
          0x08050003, "PAOS with a 4-byte output register: BAD_OUTPUT_LEN")
    # admin down: oper down, port change EQE
    uar = d.alloc_uar()
    r = d.create_eq(uar, 1 << 9, log_size=2)
    r = reg(d, 0x5006, True, regbuf(16, VCX_PAOS_LOCAL_PORT=1, VCX_PAOS_ASE=1,
                                    VCX_PAOS_ADMIN_STATUS=2))
    t.eq((r.status, r.f(H["VCX_PAOS_ADMIN_STATUS"], 16), r.f(H["VCX_PAOS_OPER_STATUS"], 16)),
         (0, 2, 2), "PAOS write admin down: admin 2, oper 2")
    e = d.eqe(EQ_BASE, 0)
    t.eq((e[1], e[3]), (9, 1), "admin down sends a port change EQE (down)")
    r = d.exec(OP["QUERY_VPORT_STATE"])
    t.eq(r.f(H["VCX_QUERY_VPORT_STATE_OUT_STATE"]), 0, "QUERY_VPORT_STATE: down while admin down")
    r = reg(d, 0x5006, True, regbuf(16, VCX_PAOS_LOCAL_PORT=1, VCX_PAOS_ADMIN_STATUS=2))
    t.eq(r.f(H["VCX_PAOS_ADMIN_STATUS"], 16), 2, "PAOS write without ase changes nothing")
    reg(d, 0x5006, True, regbuf(16, VCX_PAOS_LOCAL_PORT=1, VCX_PAOS_ASE=1, VCX_PAOS_ADMIN_STATUS=1))
    e = d.eqe(EQ_BASE, 1)
    t.eq((e[1], e[3]), (9, 4), "admin up sends a port change EQE (active)")
    d.exec(OP["DESTROY_EQ"])
    d.exec(OP["DEALLOC_UAR"], fields=[(H["VCX_DEALLOC_UAR_IN_UAR"], uar)])


def pmtu(d):
    r = reg(d, 0x5003, False, regbuf(16, VCX_PMTU_LOCAL_PORT=1))
    t.eq((r.status, r.f(H["VCX_PMTU_MAX_MTU"], 16), r.f(H["VCX_PMTU_ADMIN_MTU"], 16),
          r.f(H["VCX_PMTU_OPER_MTU"], 16)), (0, 9216, 9216, 9216), "PMTU read: max/admin/oper 9216")
    r = reg(d, 0x5003, True, regbuf(16, VCX_PMTU_LOCAL_PORT=1, VCX_PMTU_ADMIN_MTU=1522))
    t.eq((r.status, r.f(H["VCX_PMTU_ADMIN_MTU"], 16), r.f(H["VCX_PMTU_OPER_MTU"], 16)),
         (0, 1522, 1522), "PMTU write 1522: admin and oper 1522")
    r = reg(d, 0x5003, False, regbuf(16, VCX_PMTU_LOCAL_PORT=1))
    t.eq(r.f(H["VCX_PMTU_ADMIN_MTU"], 16), 1522, "PMTU read back 1522")
    check(reg(d, 0x5003, True, regbuf(16, VCX_PMTU_LOCAL_PORT=1, VCX_PMTU_ADMIN_MTU=9217)), 3,
          0x08050006, "PMTU write 9217: BAD_PARAM")
    check(reg(d, 0x5003, True, regbuf(16, VCX_PMTU_LOCAL_PORT=1, VCX_PMTU_ADMIN_MTU=10)), 3,
          0x08050006, "PMTU write 10: BAD_PARAM")
    check(reg(d, 0x5003, True, regbuf(16, VCX_PMTU_LOCAL_PORT=0, VCX_PMTU_ADMIN_MTU=1500)), 3,
          0x08050004, "PMTU local_port 0: BAD_PARAM")


def ptys(d):
    r = reg(d, 0x5004, False, regbuf(64, VCX_PTYS_LOCAL_PORT=1, VCX_PTYS_PROTO_MASK=4))
    t.eq((r.status, r.f(H["VCX_PTYS_ETH_PROTO_CAP"], 16), r.f(H["VCX_PTYS_ETH_PROTO_ADMIN"], 16),
          r.f(H["VCX_PTYS_ETH_PROTO_OPER"], 16), r.f(H["VCX_PTYS_IB_PROTO_CAP"], 16)),
         (0, 1 << 20, 1 << 20, 1 << 20, 0), "PTYS read: 100GBASE-CR4 capable, admin, oper")
    check(reg(d, 0x5004, False, regbuf(64, VCX_PTYS_LOCAL_PORT=1, VCX_PTYS_PROTO_MASK=1)), 3,
          0x08050007, "PTYS proto_mask IB: BAD_PARAM")
    check(reg(d, 0x5004, True, regbuf(64, VCX_PTYS_LOCAL_PORT=1, VCX_PTYS_PROTO_MASK=4,
                                      VCX_PTYS_ETH_PROTO_ADMIN=1 << 3)), 3, 0x08050008,
          "PTYS admin outside capability: BAD_PARAM")
    check(reg(d, 0x5004, True, regbuf(64, VCX_PTYS_LOCAL_PORT=1, VCX_PTYS_PROTO_MASK=4)), 3,
          0x08050008, "PTYS admin 0: BAD_PARAM")
    r = reg(d, 0x5004, True, regbuf(64, VCX_PTYS_LOCAL_PORT=1, VCX_PTYS_PROTO_MASK=4,
                                    VCX_PTYS_ETH_PROTO_ADMIN=1 << 20, VCX_PTYS_AN_DISABLE_ADMIN=1))
    t.eq((r.status, r.f(H["VCX_PTYS_AN_DISABLE_ADMIN"], 16)), (0, 1), "PTYS write: OK, an_disable 1")


def other_regs(d):
    r = reg(d, 0x7004, True, bytes(16))
    t.eq(r.status, 0, "HOST_ENDIANNESS write 0 (little-endian host): OK")
    check(reg(d, 0x7004, True, b"\x22" + bytes(15)), 3, 0x08050009,
          "HOST_ENDIANNESS he 0x22: BAD_PARAM")
    r = reg(d, 0x6001, False, bytes(64))
    t.eq((r.status, r.out[16:16 + 31]), (0, b"vcx virtual ConnectX-class HCA\0"),
         "NODE_DESC read (64 bytes, as mlx5_ib's probe asks): the default description")
    r = reg(d, 0x6001, True, b"node one".ljust(64, b"\0"))
    t.eq(r.status, 0, "NODE_DESC write: OK")
    r = reg(d, 0x6001, False, bytes(64))
    t.eq(r.out[16:16 + 64], b"node one".ljust(64, b"\0"), "NODE_DESC reads back what was written")
    check(reg(d, 0x6001, False, bytes(16)), 0x50, 0x08050002,
          "NODE_DESC with 16 bytes of data: BAD_INPUT_LEN")
    # PFCC (mlx5e reads it at every statistics update): no pause, no PFC
    r = reg(d, 0x5007, False, regbuf(32, VCX_PFCC_LOCAL_PORT=1))
    t.eq((r.status, r.f(H["VCX_PFCC_LOCAL_PORT"], 16), r.f(H["VCX_PFCC_PPTX"], 16),
          r.f(H["VCX_PFCC_PPRX"], 16), r.f(H["VCX_PFCC_PFCTX"], 16), r.f(H["VCX_PFCC_PFCRX"], 16)),
         (0, 1, 0, 0, 0, 0), "PFCC read: port 1, global pause and PFC off both ways")
    r = reg(d, 0x5007, True, regbuf(32, VCX_PFCC_LOCAL_PORT=1))
    t.eq(r.status, 0, "PFCC write enabling nothing (pause off): OK")
    for what, kv in (("pptx 1", {"VCX_PFCC_PPTX": 1}), ("pprx 1", {"VCX_PFCC_PPRX": 1}),
                     ("pfctx 0x08", {"VCX_PFCC_PFCTX": 8}), ("pfcrx 0x01", {"VCX_PFCC_PFCRX": 1}),
                     ("a stall watermark", {"VCX_PFCC_DEVICE_STALL_MINOR_WATERMARK": 100})):
        check(reg(d, 0x5007, True, regbuf(32, VCX_PFCC_LOCAL_PORT=1, **kv)), 3, 0x08050013,
              "PFCC write %s: BAD_PARAM (the port has no flow control)" % what)
    check(reg(d, 0x5007, False, regbuf(32, VCX_PFCC_LOCAL_PORT=2)), 3, 0x08050004,
          "PFCC local_port 2: BAD_PARAM")
    check(reg(d, 0xc00e, False, bytes(16)), 3, 0x08050001, "DTOR register 0xc00e: BAD_PARAM")
    check(reg(d, 0x9001, False, bytes(16)), 3, 0x08050001, "register 0x9001: BAD_PARAM")
    check(d.exec(AR, 2, in_len=32, out_len=32, fields=[(RID, 0x5006)]), 3, 0x0805ff09,
          "ACCESS_REG op_mod 2: BAD_PARAM")


def vport(d):
    r = d.exec(OP["QUERY_VPORT_STATE"])
    t.eq((r.status, r.f(H["VCX_QUERY_VPORT_STATE_OUT_ADMIN_STATE"]),
          r.f(H["VCX_QUERY_VPORT_STATE_OUT_STATE"])), (0, 2, 1),
         "QUERY_VPORT_STATE: admin auto (2), state up (1)")
    check(d.exec(OP["QUERY_VPORT_STATE"], op_mod=1), 3, 0x0750ff09,
          "QUERY_VPORT_STATE op_mod 1: BAD_PARAM")
    check(d.exec(OP["QUERY_VPORT_STATE"], fields=[(H["VCX_QUERY_VPORT_STATE_IN_OTHER_VPORT"], 1)]),
          3, 0x0750000b, "QUERY_VPORT_STATE other_vport: BAD_PARAM")
    check(d.exec(OP["QUERY_VPORT_STATE"], fields=[(H["VCX_QUERY_VPORT_STATE_IN_VPORT_NUMBER"], 3)]),
          3, 0x0750000b, "QUERY_VPORT_STATE vport 3: BAD_PARAM")
    Q, M = OP["QUERY_NIC_VPORT_CONTEXT"], OP["MODIFY_NIC_VPORT_CONTEXT"]
    r = d.exec(Q, out_len=0x110)
    c = 0x10
    t.eq((r.status, r.f(H["VCX_NIC_VPORT_CTX_ROCE_EN"], c), r.f(H["VCX_NIC_VPORT_CTX_MTU"], c),
          r.out[c + 0xf6:c + 0xfc].hex(), r.f(H["VCX_NIC_VPORT_CTX_NODE_GUID"], c)),
         (0, 0, 9216, "525400123456", 0x505400fffe123456),
         "QUERY_NIC_VPORT_CONTEXT: roce_en 0, mtu 9216, MAC, EUI-64 node GUID")
    ctx = bytearray(256)
    put(ctx, H["VCX_NIC_VPORT_CTX_ROCE_EN"], 1)
    put(ctx, H["VCX_NIC_VPORT_CTX_MTU"], 4200)
    ctx[0xf6:0xfc] = bytes.fromhex("020000aabbcc")
    fs = H["VCX_MODIFY_NIC_VPORT_CTX_IN_FIELD_SELECT"]
    r = d.exec(M, in_len=0x200, fields=[(fs, 1 << 1)], payload={0x100: ctx})
    t.eq(r.status, 0, "MODIFY_NIC_VPORT_CONTEXT roce_en only: OK")
    r = d.exec(Q, out_len=0x110)
    t.eq((r.f(H["VCX_NIC_VPORT_CTX_ROCE_EN"], c), r.f(H["VCX_NIC_VPORT_CTX_MTU"], c),
          r.out[c + 0xf6:c + 0xfc].hex()), (1, 9216, "525400123456"),
         "field_select honoured: roce_en 1, mtu and MAC unchanged")
    r = d.exec(M, in_len=0x200, fields=[(fs, (1 << 6) | (1 << 3))], payload={0x100: ctx})
    r2 = d.exec(Q, out_len=0x110)
    t.eq((r.status, r2.f(H["VCX_NIC_VPORT_CTX_MTU"], c), r2.out[c + 0xf6:c + 0xfc].hex()),
         (0, 4200, "020000aabbcc"), "mtu and permanent_address modified")
    check(d.exec(M, in_len=0x200, fields=[(fs, 1 << 5)], payload={0x100: ctx}), 3, 0x0755000c,
          "MODIFY change_event field_select (not implemented): BAD_PARAM")
    bad = bytearray(ctx)
    put(bad, H["VCX_NIC_VPORT_CTX_MTU"], 20000)
    check(d.exec(M, in_len=0x200, fields=[(fs, 1 << 6)], payload={0x100: bad}), 3, 0x0755000d,
          "MODIFY mtu 20000: BAD_PARAM")
    bad[0xf6:0xfc] = bytes.fromhex("010000aabbcc")
    check(d.exec(M, in_len=0x200, fields=[(fs, 1 << 3)], payload={0x100: bad}), 3, 0x0755000e,
          "MODIFY multicast permanent_address: BAD_PARAM")
    check(d.exec(M, in_len=0x100, fields=[(fs, 2)]), 0x50, 0x0755ff02,
          "MODIFY with a 0x100-byte input: BAD_INPUT_LEN")
    check(d.exec(Q, out_len=0x110, fields=[(H["VCX_QUERY_NIC_VPORT_CTX_IN_OTHER_VPORT"], 1)]), 3,
          0x0754000b, "QUERY_NIC_VPORT_CONTEXT other_vport: BAD_PARAM")
    check(d.exec(Q, out_len=0x110,
                 fields=[(H["VCX_QUERY_NIC_VPORT_CTX_IN_ALLOWED_LIST_TYPE"], 5)]), 3,
          0x0754000f, "QUERY_NIC_VPORT_CONTEXT allowed_list_type 5: BAD_PARAM")
    check(d.exec(Q, out_len=0x20), 0x51, 0x0754ff03, "QUERY_NIC_VPORT_CONTEXT short output: BAD_OUTPUT_LEN")



def pkey(d):
    """QUERY_HCA_VPORT_PKEY: what mlx5_ib asks for entry 0 at ib_register_device."""
    P = OP["QUERY_HCA_VPORT_PKEY"]
    idx = H["VCX_QUERY_HCA_VPORT_PKEY_IN_PKEY_INDEX"]
    r = d.exec(P, out_len=0x14, fields=[(idx, 0)])
    t.eq((r.status, r.u32(0x10)), (0, 0xffff), "P_Key index 0: the default 0xffff")
    r = d.exec(P, out_len=0x14, fields=[(idx, 5), (H["VCX_QUERY_HCA_VPORT_PKEY_IN_PORT_NUM"], 1)])
    t.eq((r.status, r.u32(0x10)), (0, 0), "P_Key index 5 (port_num 1): an empty entry")
    r = d.exec(P, out_len=0x10 + 4 * 128, fields=[(idx, 0xffff)])
    t.eq((r.status, r.u32(0x10), r.out[0x14:0x10 + 4 * 128]), (0, 0xffff, bytes(4 * 127)),
         "the whole table (index 0xffff): 0xffff, then 127 empty entries")
    check(d.exec(P, out_len=0x14, fields=[(idx, 0xffff)]), 0x51, 0x07650012,
          "the whole table into one entry's output: BAD_OUTPUT_LEN")
    check(d.exec(P, out_len=0x14, fields=[(idx, 128)]), 3, 0x07650011,
          "P_Key index 128: BAD_PARAM")
    check(d.exec(P, out_len=0x14, fields=[(H["VCX_QUERY_HCA_VPORT_PKEY_IN_PORT_NUM"], 2)]), 3,
          0x07650010, "port_num 2: BAD_PARAM")
    check(d.exec(P, out_len=0x14, fields=[(H["VCX_QUERY_HCA_VPORT_PKEY_IN_OTHER_VPORT"], 1)]),
          3, 0x0765000b, "other_vport: BAD_PARAM (no eswitch)")
    check(d.exec(P), 0x51, 0x0765ff03, "a 16-byte output (no entry): BAD_OUTPUT_LEN")


def main():
    d = Vcx("mac=52:54:00:12:34:56")
    d.bring_up()
    for name, fn in [("paos", paos), ("pmtu", pmtu), ("ptys", ptys), ("other", other_regs),
                     ("vport", vport), ("pkey", pkey)]:
        run_isolated(t, name, lambda fn=fn: fn(d))
    t.ok(d.qt.alive(), "QEMU still running")
    d.qt.close()
    t.done()


if __name__ == "__main__":
    main()
