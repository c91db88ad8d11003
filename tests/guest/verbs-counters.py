#!/usr/bin/env python3
"""Per-QP hardware counters on vcx_0 (`rdma statistic qp`), over loopback RC through pyverbs.

A responder QP is bound by hand (`rdma statistic qp bind`) while in INIT (applied when it
enters RTS), takes K RDMA WRITEs (payload checked) and R READs: its counter must show
exactly K rx_write_requests and R rx_read_requests, and the port's counters must have
risen by as much. Unbound (in RTS), the counter is gone; bound again in RTS it counts one
more WRITE from zero. Then auto mode (`auto type on`) binds new RC QPs at their RST2INIT,
and their traffic counts there; `auto off`. Then the enhanced error fields: both QPs of a
new pair bound to one counter, a WRITE through an rkey without remote write fails with a
remote access error, a send and a receive posted in ERR are flushed: the counter shows
exactly req_remote_access_errors 1, resp_remote_access_errors 1, req_cqe_error 2,
req_cqe_flush_error 1, resp_cqe_error 1, resp_cqe_flush_error 1 and 0 in the rest of the
group, and the port's counters rise by as much. All destroyed, no counter left.
Usage: verbs-counters.py IBDEV GID_INDEX. Prints 'OK <check>' per check and exits
non-zero at the first failure."""
import json
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

DEV = sys.argv[1]
GID_INDEX = int(sys.argv[2])
LINK = DEV + '/1'
K, R = 5, 3                 # WRITEs and READs to the bound responder
MSG = 256                   # bytes per WRITE / READ
# mlx5_ib's extended error group, shown when the device sets enhanced_error_q_counters
EE = ('resp_local_length_error', 'resp_cqe_error', 'req_cqe_error',
      'req_remote_invalid_request', 'req_remote_access_errors', 'resp_remote_access_errors',
      'resp_cqe_flush_error', 'req_cqe_flush_error', 'req_transport_retries_exceeded',
      'req_rnr_retries_exceeded')


def ok(what):
    print('OK', what, flush=True)


def fail(what):
    print('FAIL', what, flush=True)
    sys.exit(1)


def rdma(*args):
    p = subprocess.run(['rdma'] + list(args), capture_output=True, text=True)
    if p.returncode:
        fail('rdma %s: exit %d: %s' % (' '.join(args), p.returncode,
                                       (p.stderr + p.stdout).strip()))
    return p.stdout


def rdma_json(*args):
    out = rdma('-j', *args).strip()
    return json.loads(out) if out else []


def bound_counters():
    """cntn -> the counter's entry (values and 'lqpn' list) of LINK."""
    return {c['cntn']: c for c in rdma_json('statistic', 'qp', 'show', 'link', LINK)
            if c.get('ifname') == DEV}


def counter_of(qpn):
    for c in bound_counters().values():
        if qpn in c.get('lqpn', []):
            return c
    return None


def port_counters():
    for c in rdma_json('statistic', 'show', 'link', LINK):
        if c.get('ifname') == DEV:
            return c
    fail('rdma statistic show link %s: no entry' % LINK)


ctx = Context(name=DEV)
pd = PD(ctx)
mr = MR(pd, 64 * 1024, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
        e.IBV_ACCESS_REMOTE_READ)
cq = CQ(ctx, 64)
gid = ctx.query_gid(1, GID_INDEX)


def new_qp():
    cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))


def qp_attr(dest):
    a = QPAttr()
    a.port_num = 1
    a.pkey_index = 0
    a.qp_access_flags = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
                         e.IBV_ACCESS_REMOTE_READ)
    a.path_mtu = e.IBV_MTU_1024
    a.dest_qp_num = dest
    a.rq_psn = 0
    a.sq_psn = 0
    a.max_dest_rd_atomic = 1
    a.max_rd_atomic = 1
    a.min_rnr_timer = 12
    a.timeout = 14
    a.retry_cnt = 7
    a.rnr_retry = 7
    a.ah_attr = AHAttr(port_num=1, is_global=1,
                       gr=GlobalRoute(dgid=gid, sgid_index=GID_INDEX, hop_limit=64))
    return a


def post(qp, opcode, local_off, remote_off, n=1):
    """n signaled RDMA WRITEs or READs of MSG bytes, one at a time, each completed."""
    for i in range(n):
        lo, ro = local_off + i * MSG, remote_off + i * MSG
        wr = SendWR(wr_id=i, opcode=opcode, num_sge=1, sg=[SGE(mr.buf + lo, MSG, mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(mr.rkey, mr.buf + ro)
        qp.post_send(wr)
        end = time.monotonic() + 30
        npolled, wcs = cq.poll()
        while not npolled:
            if time.monotonic() > end:
                fail('no completion for opcode %d #%d within 30 s' % (opcode, i))
            npolled, wcs = cq.poll()
        if wcs[0].status != e.IBV_WC_SUCCESS:
            fail('opcode %d #%d completed with status %d' % (opcode, i, wcs[0].status))


def poll_one(what):
    """The next work completion (any status), within 30 s."""
    end = time.monotonic() + 30
    npolled, wcs = cq.poll()
    while not npolled:
        if time.monotonic() > end:
            fail('no completion for %s within 30 s' % what)
        npolled, wcs = cq.poll()
    return wcs[0]


def pattern(i):
    return bytes((i * 37 + j) & 0xff for j in range(MSG))


if bound_counters():
    fail('bound counters before the test: %s' % bound_counters())
req, resp = new_qp(), new_qp()
resp.to_init(qp_attr(req.qp_num))
rdma('statistic', 'qp', 'bind', 'link', LINK, 'lqpn', str(resp.qp_num))
c = counter_of(resp.qp_num)
if c is None:
    fail('QP %d bound in INIT: no counter in rdma statistic qp show' % resp.qp_num)
cntn = c['cntn']
ok('QP %d bound in INIT to counter %d' % (resp.qp_num, cntn))
resp.to_rts(qp_attr(req.qp_num))
req.to_rts(qp_attr(resp.qp_num))
ok('RC pair %d -> %d in RTS over loopback (GID %d)' % (req.qp_num, resp.qp_num, GID_INDEX))

port0 = port_counters()
for i in range(K):
    mr.write(pattern(i), MSG, i * MSG)
post(req, e.IBV_WR_RDMA_WRITE, 0, 0x4000, K)
for i in range(K):
    got = mr.read(MSG, 0x4000 + i * MSG)
    if got != pattern(i):
        fail('WRITE %d: payload at the destination differs' % i)
ok('%d RDMA WRITEs of %d bytes landed byte for byte' % (K, MSG))
post(req, e.IBV_WR_RDMA_READ, 0x8000, 0x4000, R)
for i in range(R):
    if mr.read(MSG, 0x8000 + i * MSG) != pattern(i):
        fail('READ %d: bytes read differ' % i)
ok('%d RDMA READs returned the written bytes' % R)

c = counter_of(resp.qp_num)
if c is None or c['cntn'] != cntn:
    fail('counter %d of QP %d gone: %s' % (cntn, resp.qp_num, bound_counters()))
if (c.get('rx_write_requests'), c.get('rx_read_requests')) != (K, R):
    fail('counter %d: rx_write_requests %s rx_read_requests %s, expected %d %d: %s' %
         (cntn, c.get('rx_write_requests'), c.get('rx_read_requests'), K, R, c))
ok('rdma statistic qp: counter %d rx_write_requests %d rx_read_requests %d' % (cntn, K, R))
if counter_of(req.qp_num) is not None:
    fail('the requester QP %d is bound too' % req.qp_num)
port1 = port_counters()
for name, want in (('rx_write_requests', K), ('rx_read_requests', R)):
    if port1[name] - port0[name] != want:
        fail('port %s rose by %d, expected %d' % (name, port1[name] - port0[name], want))
ok('port counters rose by %d WRITE and %d READ requests too' % (K, R))

rdma('statistic', 'qp', 'unbind', 'link', LINK, 'cntn', str(cntn), 'lqpn', str(resp.qp_num))
if cntn in bound_counters() or counter_of(resp.qp_num) is not None:
    fail('counter %d still there after unbind: %s' % (cntn, bound_counters()))
port2 = port_counters()
if port2['rx_write_requests'] != port1['rx_write_requests']:
    fail('port rx_write_requests %d after unbind, %d before' %
         (port2['rx_write_requests'], port1['rx_write_requests']))
ok('unbound in RTS: counter %d gone, its counts kept in the port\'s' % cntn)
post(req, e.IBV_WR_RDMA_WRITE, 0, 0x4000, 1)
if port_counters()['rx_write_requests'] != port2['rx_write_requests'] + 1:
    fail('a WRITE after unbind did not count in the port\'s Q counter')
ok('after unbind the responder counts in the port\'s Q counter again')

rdma('statistic', 'qp', 'bind', 'link', LINK, 'lqpn', str(resp.qp_num))
c = counter_of(resp.qp_num)
if c is None or c.get('rx_write_requests') != 0:
    fail('QP %d bound in RTS: %s' % (resp.qp_num, c))
post(req, e.IBV_WR_RDMA_WRITE, 0, 0x4000, 1)
c = counter_of(resp.qp_num)
if c is None or (c.get('rx_write_requests'), c.get('rx_read_requests')) != (1, 0):
    fail('QP %d bound in RTS, one WRITE: %s' % (resp.qp_num, c))
ok('bound again in RTS (counter %d): one WRITE counted from zero' % c['cntn'])
rdma('statistic', 'qp', 'unbind', 'link', LINK, 'cntn', str(c['cntn']), 'lqpn', str(resp.qp_num))
if bound_counters():
    fail('counters left after the second unbind: %s' % bound_counters())
ok('unbound again: no counter left')

rdma('statistic', 'qp', 'set', 'link', LINK, 'auto', 'type', 'on')
mode = rdma('statistic', 'qp', 'mode', 'link', LINK)
if 'auto' not in mode or 'auto off' in mode:
    fail('mode of %s after set auto type on: %s' % (LINK, mode.strip()))
ok('mode: %s' % mode.strip())
a, b = new_qp(), new_qp()
a.to_rts(qp_attr(b.qp_num))
b.to_rts(qp_attr(a.qp_num))
ca, cb = counter_of(a.qp_num), counter_of(b.qp_num)
if ca is None or cb is None or ca['cntn'] != cb['cntn']:
    fail('auto mode: QPs %d %d bound to %s / %s' % (a.qp_num, b.qp_num, ca, cb))
if counter_of(resp.qp_num) is not None:
    fail('auto mode bound QP %d created before it' % resp.qp_num)
ok('auto type on: new RC QPs %d and %d auto-bound at RST2INIT to counter %d' %
   (a.qp_num, b.qp_num, ca['cntn']))
post(a, e.IBV_WR_RDMA_WRITE, 0, 0x4000, 2)
post(b, e.IBV_WR_RDMA_READ, 0x8000, 0x4000, 1)
c = counter_of(a.qp_num)
if (c.get('rx_write_requests'), c.get('rx_read_requests')) != (2, 1):
    fail('auto counter %d: %s, expected 2 WRITE and 1 READ requests' % (c['cntn'], c))
ok('auto counter %d: 2 rx_write_requests, 1 rx_read_requests' % c['cntn'])
rdma('statistic', 'qp', 'set', 'link', LINK, 'auto', 'off')
mode = rdma('statistic', 'qp', 'mode', 'link', LINK)
if 'auto off' not in mode:
    fail('mode of %s after auto off: %s' % (LINK, mode.strip()))
ok('auto off: %s' % mode.strip())

# The enhanced error fields on a bound counter: a remote access error, then flushes.
x, y = new_qp(), new_qp()
x.to_rts(qp_attr(y.qp_num))
y.to_rts(qp_attr(x.qp_num))
rdma('statistic', 'qp', 'bind', 'link', LINK, 'lqpn', str(x.qp_num))
cx = counter_of(x.qp_num)
if cx is None:
    fail('QP %d bound in RTS: no counter' % x.qp_num)
# bind takes the QP before the counter (rdma-statistic(8): OBJECT-ID, then COUNTER-ID)
rdma('statistic', 'qp', 'bind', 'link', LINK, 'lqpn', str(y.qp_num), 'cntn', str(cx['cntn']))
c = counter_of(y.qp_num)
if c is None or c['cntn'] != cx['cntn']:
    fail('QP %d not bound to counter %d: %s' % (y.qp_num, cx['cntn'], c))
missing = [n for n in EE if n not in c]
if missing:
    fail('counter %d lacks the enhanced error fields %s: %s' % (c['cntn'], missing, c))
if any(c[n] for n in EE):
    fail('counter %d: enhanced error fields not 0 before the error: %s' % (c['cntn'], c))
ok('QPs %d and %d bound to counter %d, which shows the %d enhanced error fields at 0' %
   (x.qp_num, y.qp_num, c['cntn'], len(EE)))
port0 = port_counters()
ro = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ)
ro.write(bytes(MSG), MSG, 0)
wr = SendWR(wr_id=1, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(mr.buf, MSG, mr.lkey)],
            send_flags=e.IBV_SEND_SIGNALED)
wr.set_wr_rdma(ro.rkey, ro.buf)
x.post_send(wr)
wc = poll_one('the WRITE through an rkey without remote write')
if wc.status != e.IBV_WC_REM_ACCESS_ERR:
    fail('WRITE through a read-only rkey: status %d, expected %d (remote access error)' %
         (wc.status, e.IBV_WC_REM_ACCESS_ERR))
if ro.read(MSG, 0) != bytes(MSG):
    fail('the WRITE changed memory behind a read-only rkey')
ok('WRITE through an rkey without remote write: IBV_WC_REM_ACCESS_ERR, nothing written')
y.post_recv(RecvWR(wr_id=2, num_sge=1, sg=[SGE(mr.buf + 0xc000, MSG, mr.lkey)]))
wc = poll_one('a receive posted to the responder in ERR')
if (wc.wr_id, wc.status) != (2, e.IBV_WC_WR_FLUSH_ERR):
    fail('receive in ERR: wr_id %d status %d, expected a flush' % (wc.wr_id, wc.status))
wr = SendWR(wr_id=3, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(mr.buf, MSG, mr.lkey)],
            send_flags=e.IBV_SEND_SIGNALED)
wr.set_wr_rdma(mr.rkey, mr.buf + 0x4000)
x.post_send(wr)
wc = poll_one('a WRITE posted to the requester in ERR')
if (wc.wr_id, wc.status) != (3, e.IBV_WC_WR_FLUSH_ERR):
    fail('send in ERR: wr_id %d status %d, expected a flush' % (wc.wr_id, wc.status))
ok('a receive and a send posted in ERR: one flush completion each')
want = dict.fromkeys(EE, 0)
want.update(req_remote_access_errors=1, resp_remote_access_errors=1, req_cqe_error=2,
            req_cqe_flush_error=1, resp_cqe_error=1, resp_cqe_flush_error=1)
c = counter_of(x.qp_num)
got = {n: c.get(n) for n in EE} if c else None
if got != want:
    fail('counter of QPs %d/%d: %s, expected %s' % (x.qp_num, y.qp_num, got, want))
ok('rdma statistic qp: counter %d %s' % (c['cntn'], ' '.join(
    '%s %d' % (n, c[n]) for n in EE if c[n])))
port1 = port_counters()
rise = {n: port1[n] - port0[n] for n in EE}
if rise != want:
    fail('port counters rose by %s, expected %s' % (rise, want))
ok('port counters rose by as much')
ro.close()

for qp in (a, b, req, resp, x, y):
    qp.close()
if bound_counters():
    fail('counters left after destroying the QPs: %s' % bound_counters())
ok('QPs destroyed: no counter left')
cq.close()
mr.close()
pd.close()
ctx.close()
print('PASS per-QP counters')
