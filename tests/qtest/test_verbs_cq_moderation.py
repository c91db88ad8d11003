#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""CQ event moderation (PRM "CQ moderation"; mlx5_ib_modify_cq and ib_core's adaptive
moderation use it): the cq_moderation, cq_period_mode_modify and cq_period_start_from_cqe
capabilities (scqe_break_moderation 0, its CQC bit refused); reserved period modes
refused by CREATE_CQ and MODIFY_CQ; MODIFY_CQ op_mod 0 with
modify_field_select period, count and period mode, read back by QUERY_CQ; an armed CQ's
completion event after cq_max_count CQEs, or when cq_period microseconds of the virtual
clock have passed since the last event (mode 0: an idle CQ fires at once) or since the
first CQE after it (mode 1); both 0 gives an event per CQE; a solicited-only arm and
arming over unpolled CQEs fire at once; a CQ destroyed while its period runs leaves no
event and no timer behind."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vcx_qtest import Tap, get, put  # noqa: E402
from vcx_verbs import OP, P, Verbs, dseg, cqe_tuple as f, run_cases  # noqa: E402

t = Tap()
NOP, SEND = 0x00, 0x0a
US = 1000
SEL_PERIOD, SEL_COUNT, SEL_MODE = 0x1, 0x2, 0x10


def moderate(v, cq, period=None, count=None, mode=None):
    """MODIFY_CQ op_mod 0 with the fields given; returns the reply."""
    cqc = bytearray(64)
    sel = 0
    for fld, val, bit in (("CQ_PERIOD", period, SEL_PERIOD), ("CQ_MAX_COUNT", count, SEL_COUNT),
                          ("CQ_PERIOD_MODE", mode, SEL_MODE)):
        if val is not None:
            put(cqc, P["VCX_CQC_" + fld], val)
            sel |= bit
    return v.cmd("MODIFY_CQ", op_mod=0, in_len=0x110,
                 fields=[(P["VCX_MODIFY_CQ_IN_CQN"], cq.cqn),
                         (P["VCX_MODIFY_CQ_IN_FIELD_SELECT"], sel)],
                 payload={0x10: bytes(cqc)})


def setup(v):
    """A CQ of 64 entries under test as the send CQ of an RC pair a -> b; NOPs on a
    complete there one CQE each, without the peer."""
    pd = v.alloc_pd()
    buf = v.alloc(0x4000)
    key = v.create_mkey(pd, buf, 0x4000)
    cq, other = v.create_cq(), v.create_cq()
    a = v.create_qp("RC", pd, cq, other)
    b = v.create_qp("RC", pd, other, other)
    v.connect(a, b.qpn)
    v.connect(b, a.qpn)
    v.events(comp=True)
    return cq, a, buf, key


def nops(v, a, n):
    for _ in range(n):
        a.post_send(NOP, b"")
    v.settle()


def fired(v, cq):
    """The completion EQEs since the last look, as the CQNs they name."""
    return [get(e, P["VCX_EQE_COMP_CQN"]) for ty, e in v.events(comp=True) if ty == 0]


def rearm(v, cq):
    cq.poll_all()
    cq.arm()


def caps_and_query(v):
    for mode in (0, 1):
        r = v.d.exec(OP["QUERY_HCA_CAP"], op_mod=mode, out_len=0x1010)
        t.eq([get(r.out[0x10:], P["VCX_CAP_GEN_" + n]) for n in
              ("CQ_MODERATION", "CQ_PERIOD_MODE_MODIFY", "CQ_PERIOD_START_FROM_CQE",
               "SCQE_BREAK_MODERATION")], [1, 1, 1, 0],
             "QUERY_HCA_CAP %s: cq_moderation, cq_period_mode_modify and "
             "cq_period_start_from_cqe 1, scqe_break_moderation 0" % ("cur" if mode else "max"))
    for fld, val, what in (("CQ_PERIOD_MODE", 2, "cq_period_mode 2 (reserved)"),
                           ("CQ_PERIOD_MODE", 3, "cq_period_mode 3 (reserved)"),
                           ("SCQE_BREAK_MODERATION", 1, "scqe_break_moderation_en (cap 0)")):
        r = v.create_cq(raw=lambda c, fld=fld, val=val: put(c, P["VCX_CQC_" + fld], val))
        t.eq((getattr(r, "status", 0), getattr(r, "syndrome", 1) & 0xffff != 0), (0x03, True),
             "CREATE_CQ with %s: BAD_PARAM" % what)
    cq = v.create_cq(raw=lambda c: put(c, P["VCX_CQC_CQ_PERIOD_MODE"], 1))
    r = v.cmd("QUERY_CQ", out_len=0x120, fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)])
    t.eq(get(r.out[0x10:0x50], P["VCX_CQC_CQ_PERIOD_MODE"]), 1,
         "CREATE_CQ with cq_period_mode 1 (upon CQE): QUERY_CQ reads it back")
    cq, a, buf, key = setup(v)
    t.eq(moderate(v, cq, period=0xfff, count=0xffff, mode=1).status, 0,
         "MODIFY_CQ op_mod 0: period 4095 us, count 65535, period mode 1")
    r = v.cmd("QUERY_CQ", out_len=0x120, fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)])
    c = r.out[0x10:0x50]
    t.eq([get(c, P["VCX_CQC_" + n]) for n in ("CQ_PERIOD", "CQ_MAX_COUNT", "CQ_PERIOD_MODE")],
         [0xfff, 0xffff, 1], "QUERY_CQ reads them back")
    r = v.cmd("MODIFY_CQ", op_mod=0, in_len=0x110,
              fields=[(P["VCX_MODIFY_CQ_IN_CQN"], cq.cqn),
                      (P["VCX_MODIFY_CQ_IN_FIELD_SELECT"], 0x100)])
    t.eq((r.status, r.syndrome & 0xffff != 0), (0x03, True),
         "an unknown modify_field_select bit: BAD_PARAM")
    r = moderate(v, cq, period=7, count=9, mode=2)
    t.eq((r.status, r.syndrome & 0xffff != 0), (0x03, True),
         "MODIFY_CQ with cq_period_mode 2 (reserved): BAD_PARAM")
    r = v.cmd("QUERY_CQ", out_len=0x120, fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)])
    c = r.out[0x10:0x50]
    t.eq([get(c, P["VCX_CQC_" + n]) for n in ("CQ_PERIOD", "CQ_MAX_COUNT", "CQ_PERIOD_MODE")],
         [0xfff, 0xffff, 1], "a refused MODIFY_CQ changes none of the fields it selected")


def by_count(v):
    cq, a, buf, key = setup(v)
    t.eq(moderate(v, cq, period=0, count=3).status, 0, "count 3, no period")
    cq.arm()
    nops(v, a, 2)
    t.eq(fired(v, cq), [], "2 CQEs of 3: no event")
    nops(v, a, 1)
    t.eq(fired(v, cq), [cq.cqn], "the third CQE: one event")
    rearm(v, cq)
    nops(v, a, 2)
    v.advance(10000 * US, 1000 * US)
    t.eq(fired(v, cq), [], "re-armed, 2 CQEs and 10 ms later: still none (no period)")
    nops(v, a, 1)
    t.eq(fired(v, cq), [cq.cqn], "the count restarts at each event")
    nops(v, a, 5)
    t.eq(fired(v, cq), [], "CQEs while fired raise nothing and are not counted")
    t.eq(len(cq.poll_all()), 8, "every CQE written: 8")
    cq.arm()
    t.eq(fired(v, cq), [], "arming with nothing past ci: no event")
    t.eq(moderate(v, cq, period=0, count=0).status, 0, "moderation off")
    nops(v, a, 1)
    t.eq(fired(v, cq), [cq.cqn], "both 0: an event for the first CQE")


def by_period_upon_event(v):
    cq, a, buf, key = setup(v)
    t.eq(moderate(v, cq, period=100, count=0, mode=0).status, 0, "period 100 us from the event")
    cq.arm()
    nops(v, a, 1)
    t.eq(fired(v, cq), [cq.cqn], "idle CQ: the first CQE fires at once")
    rearm(v, cq)
    nops(v, a, 2)
    t.eq(fired(v, cq), [], "within 100 us of that event: held")
    v.advance(98 * US, 98 * US)
    t.eq(fired(v, cq), [], "98 us on: held")
    v.advance(3 * US, 3 * US)
    t.eq(fired(v, cq), [cq.cqn], "101 us after the event: one event")
    t.ok("vcx_cq_moderation" in v.qt.log() and "period ended after 2 CQEs" in v.qt.log(),
         "traced: vcx_cq_moderation period ended after 2 CQEs")


def by_period_upon_cqe(v):
    cq, a, buf, key = setup(v)
    t.eq(moderate(v, cq, period=50, count=4, mode=1).status, 0,
         "period 50 us from the first CQE, count 4")
    v.advance(1000 * US, 1000 * US)
    cq.arm()
    nops(v, a, 1)
    t.eq(fired(v, cq), [], "mode 1: even an idle CQ's first CQE waits")
    v.advance(49 * US, 49 * US)
    t.eq(fired(v, cq), [], "49 us on: held")
    v.advance(2 * US, 2 * US)
    t.eq(fired(v, cq), [cq.cqn], "51 us after the CQE: the event")
    rearm(v, cq)
    nops(v, a, 4)
    t.eq(fired(v, cq), [cq.cqn], "4 CQEs: the count fires before the period")
    v.advance(100 * US, 50 * US)
    t.eq(fired(v, cq), [], "and the period ends with no second event")


def at_once(v):
    cq, a, buf, key = setup(v)
    moderate(v, cq, period=1000, count=8, mode=1)
    nops(v, a, 2)
    cq.arm()
    t.eq(fired(v, cq), [cq.cqn], "arming over 2 unpolled CQEs fires at once")
    cq.poll_all()
    cq.arm(solicited=True)
    a.post_send(SEND, dseg(buf, 4, key ^ 0x100))      # an lkey that does not exist
    v.settle()
    t.eq([f(e, "opcode", "syndrome") for e in cq.poll_all()], [(0xd, 0x04)],
         "an error CQE (local protection)")
    t.eq(fired(v, cq), [cq.cqn], "a solicited-only arm fires on it at once")


def destroyed_while_held(v):
    cq, a, buf, key = setup(v)
    moderate(v, cq, period=500, count=0, mode=1)
    cq.arm()
    nops(v, a, 1)
    t.eq(fired(v, cq), [], "the CQE held for 500 us")
    t.eq(v.cmd("DESTROY_QP", fields=[(P["VCX_OBJ_NUMBER"], a.qpn)]).status, 0, "QP destroyed")
    t.eq(v.cmd("DESTROY_CQ", fields=[(P["VCX_OBJ_NUMBER"], cq.cqn)]).status, 0,
         "CQ destroyed with its period running")
    v.advance(2000 * US, 250 * US)
    v.settle()
    t.eq(fired(v, cq), [], "no event for the CQ that is gone")
    t.ok(v.qt.alive(), "QEMU alive")


def main():
    run_cases(t, (("caps_and_query", caps_and_query), ("by_count", by_count),
                  ("by_period_upon_event", by_period_upon_event),
                  ("by_period_upon_cqe", by_period_upon_cqe), ("at_once", at_once),
                  ("destroyed_while_held", destroyed_while_held)),
              trace="vcx_cq_moderation")


if __name__ == "__main__":
    main()
