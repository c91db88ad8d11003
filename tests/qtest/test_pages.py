#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Firmware pages: QUERY_PAGES stages, MANAGE_PAGES give / take / allocation failure, the
page bookkeeping (duplicates, alignment, limits) and page request EQEs from the monitor."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import H, Tap, Vcx, DEV_PATH, EQ_BASE, PAGES_BASE, run_isolated  # noqa: E402

OP = {k[len("VCX_CMD_OP_"):]: v for k, v in H.items() if k.startswith("VCX_CMD_OP_")}
QP, MP = OP["QUERY_PAGES"], OP["MANAGE_PAGES"]
NUM = H["VCX_MANAGE_PAGES_IN_NUM_ENTRIES"]
t = Tap()


def check(r, status, syndrome, desc):
    t.eq((r.deliv, r.status, r.syndrome), (0, status, syndrome), desc)


def query(d, op_mod):
    r = d.exec(QP, op_mod)
    assert r.status == 0, "QUERY_PAGES failed"
    return struct.unpack(">i", r.out[12:16])[0]


def give(d, addrs, n=None):
    pas = b"".join(struct.pack(">Q", a) for a in addrs)
    return d.exec(MP, 1, in_len=16 + len(pas), fields=[(NUM, len(addrs) if n is None else n)],
                  payload={16: pas})


def take(d, n, room=None):
    room = n if room is None else room
    return d.exec(MP, 2, out_len=16 + 8 * room, fields=[(NUM, n)])


def stages(d):
    check(d.exec(OP["ENABLE_HCA"]), 0, 0, "ENABLE_HCA")
    t.eq((query(d, 1), query(d, 2), query(d, 3)), (16, 80, 80),
         "QUERY_PAGES boot 16, init 16+64, regular 16+64+0 (defaults)")
    r = d.exec(QP, 1)
    t.eq(r.f(H["VCX_QUERY_PAGES_OUT_FUNCTION_ID"]), 0, "QUERY_PAGES function_id 0")
    check(give(d, [PAGES_BASE + i * 4096 for i in range(16)]), 0, 0, "MANAGE_PAGES give 16 boot pages")
    t.eq((query(d, 1), query(d, 2)), (0, 64), "after boot pages: boot 0, init 64")
    st = d.state()
    t.eq((st["pages"], st["pages_boot"], st["pages_init"]), ("16", "16", "0"),
         "state property: pages=16 pages_boot=16 pages_init=0")
    check(give(d, [PAGES_BASE + i * 4096 for i in range(16, 80)]), 0, 0, "give 64 init pages")
    t.eq((query(d, 2), query(d, 3)), (0, 0), "init and regular needs met")
    check(d.exec(OP["INIT_HCA"]), 0, 0, "INIT_HCA with all pages")


def bad_inputs(d):
    check(d.exec(QP, 0), 3, 0x0107ff09, "QUERY_PAGES op_mod 0: BAD_PARAM")
    check(d.exec(QP, 4), 3, 0x0107ff09, "QUERY_PAGES op_mod 4: BAD_PARAM")
    check(d.exec(QP, 1, fields=[(H["VCX_QUERY_PAGES_IN_FUNCTION_ID"], 1)]), 3, 0x01070001,
          "QUERY_PAGES function_id 1: BAD_PARAM")
    check(d.exec(QP, 1, fields=[(H["VCX_QUERY_PAGES_IN_EMBEDDED_CPU"], 1)]), 3, 0x01070002,
          "QUERY_PAGES embedded_cpu_function: BAD_PARAM")
    n0 = d.state()["pages"]
    check(give(d, [0x05000000, 0x05001800]), 3, 0x01080004, "give a misaligned page: BAD_PARAM")
    check(give(d, [0x05000000, 0x05001000, 0x05000000]), 3, 0x01080005,
          "give the same page twice in one command: BAD_PARAM")
    check(give(d, [0x05000000, PAGES_BASE + 4096]), 3, 0x01080005,
          "give a page already held: BAD_PARAM")
    check(give(d, [0x05000000], n=2), 0x50, 0x01080003,
          "give announcing 2 entries with room for 1: BAD_INPUT_LEN")
    check(give(d, [], n=0), 0x50, 0x01080003, "give of 0 pages: BAD_INPUT_LEN")
    t.eq(d.state()["pages"], n0, "refused gives are atomic: held count unchanged")
    check(d.exec(MP, 3, fields=[(NUM, 0)]), 3, 0x0108ff09, "MANAGE_PAGES op_mod 3: BAD_PARAM")
    check(d.exec(MP, 0, fields=[(NUM, 2)]), 3, 0x01080007,
          "allocation-failure notice with 2 entries: BAD_PARAM")
    check(take(d, 4, room=2), 0x51, 0x01080003, "take 4 with room for 2: BAD_OUTPUT_LEN")
    check(d.exec(MP, 1, fields=[(H["VCX_MANAGE_PAGES_IN_FUNCTION_ID"], 7), (NUM, 1)],
                 in_len=24, payload={16: struct.pack(">Q", 0x05000000)}), 3, 0x01080001,
          "give for function_id 7: BAD_PARAM")


def take_while_running(d):
    r = take(d, 8)
    t.eq((r.status, r.u32(8)), (0, 0), "take while initialized and all pages needed: 0 returned")
    check(give(d, [0x06000000 + i * 4096 for i in range(4)]), 0, 0, "give 4 surplus pages")
    t.eq(query(d, 3), -4, "QUERY_PAGES regular: -4 (device wants 4 back)")
    r = take(d, 8)
    got = sorted(struct.unpack(">4Q", r.out[16:48])) if r.u32(8) == 4 else None
    t.eq((r.status, r.u32(8), d.state()["pages"]), (0, 4, "80"),
         "take 8 while initialized returns only the 4 surplus pages")
    t.eq(r.u32(8), 4, "output num_entries 4")
    t.ok(got is not None and all(a % 4096 == 0 for a in got), "taken PAS entries are page addresses")


def page_requests(d):
    r = d.qt.qom_set(DEV_PATH, "page-request", 0)
    t.ok("error" in r, "page-request 0 refused by qom-set")
    uar = d.alloc_uar()
    r = d.create_eq(uar, 1 << 0xb, log_size=3, intr=1)
    t.eq(r.status, 0, "pages EQ (PAGE_REQUEST only) created")
    eqn = r.f(H["VCX_CREATE_EQ_OUT_EQN"])
    d.uar_write(uar, 0x40, eqn << 24)
    d.msi_count(1)
    r = d.qt.qom_set(DEV_PATH, "page-request", 8)
    t.ok("error" not in r, "qom-set page-request 8")
    e = d.eqe(EQ_BASE, 0)
    t.eq((e[1], e[0x3f] & 1, struct.unpack(">H", e[0x22:0x24])[0],
          struct.unpack(">i", e[0x24:0x28])[0]), (0x0b, 0, 0, 8),
         "page request EQE: type 0x0B, owner 0, function_id 0, num_pages 8")
    t.ok(d.msi_count(1), "armed pages EQ raised MSI-X vector 1")
    t.eq((query(d, 3), d.qt.qom_get(DEV_PATH, "page-request")), (8, 8),
         "QUERY_PAGES regular and page-request property both report 8")
    check(give(d, [0x07000000 + i * 4096 for i in range(8)]), 0, 0, "give the 8 requested pages")
    t.eq((query(d, 3), d.state()["pages_regular"]), (0, "8"), "regular need met, 8 regular pages held")
    d.uar_write(uar, 0x40, (eqn << 24) | 1)
    d.qt.qom_set(DEV_PATH, "page-request", -3)
    e = d.eqe(EQ_BASE, 1)
    t.eq((e[1], struct.unpack(">i", e[0x24:0x28])[0]), (0x0b, -3),
         "negative page request EQE: num_pages -3")
    t.eq(query(d, 3), -3, "QUERY_PAGES regular: -3")
    r = take(d, 3)
    t.eq((r.status, r.u32(8), query(d, 3)), (0, 3, 0), "take 3: returned, demand met")
    d.uar_write(uar, 0x40, (eqn << 24) | 2)
    d.qt.qom_set(DEV_PATH, "page-request", 5)
    check(d.exec(MP, 0, fields=[(NUM, 0)]), 0, 0, "allocation-failure notice: OK")
    t.eq(query(d, 3), 0, "after allocation failure the run-time request is dropped")


def runtime_request_ends_with_function():
    """A run-time page request belongs to the running function: DISABLE_HCA drops it."""
    d = Vcx()
    d.bring_up()
    d.qt.qom_set(DEV_PATH, "page-request", 7)
    t.eq(query(d, 3), 7, "run-time request of 7 pending")
    check(d.exec(OP["TEARDOWN_HCA"]), 0, 0, "TEARDOWN_HCA")
    r = take(d, d.pages_given)
    t.eq((r.status, r.u32(8)), (0, d.pages_given), "all given pages taken back")
    check(d.exec(OP["DISABLE_HCA"]), 0, 0, "DISABLE_HCA")
    check(d.exec(OP["ENABLE_HCA"]), 0, 0, "ENABLE_HCA again")
    t.eq(query(d, 3), d.pages_given,
         "the new function wants its boot and init pages, not the old run-time request")
    d.qt.close()


def limit():
    d = Vcx()
    d.exec(OP["ENABLE_HCA"])
    half = 131072
    for k in range(2):
        base = 0x10000000 + k * half * 4096
        pas = b"".join(struct.pack(">Q", base + i * 4096) for i in range(half))
        r = d.exec(MP, 1, in_len=16 + len(pas), fields=[(NUM, half)], payload={16: pas})
        t.eq((r.deliv, r.status), (0, 0), "give 131072 pages in one 1 MiB command (%d)" % k)
    r = give(d, [0x0f000000])
    check(r, 8, 0x01080006, "one page beyond 262144 held: EXCEED_LIM")
    t.eq(d.state()["pages"], "262144", "state property: pages=262144")
    d.qt.close()


def main():
    d = Vcx()
    for name, fn in [("stages", stages), ("bad", bad_inputs), ("take", take_while_running),
                     ("requests", page_requests)]:
        run_isolated(t, name, lambda fn=fn: fn(d))
    t.ok(d.qt.alive(), "QEMU still running")
    d.qt.close()
    run_isolated(t, "limit", limit)
    run_isolated(t, "runtime-request", runtime_request_ends_with_function)
    t.done()


if __name__ == "__main__":
    main()
