#!/usr/bin/env python3
"""Verbs objects on vcx_0 through pyverbs and the vcx provider: every create, modify,
query and destroy the kernel driver implements, the objects visible to `rdma res show`
while they exist, and the errnos of bad attributes. Prints 'OK <check>' per check and
exits non-zero at the first failure."""
import errno
import subprocess
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

DEV = sys.argv[1] if len(sys.argv) > 1 else 'vcx_0'


def ok(what):
    print('OK', what, flush=True)


def fail(what):
    print('FAIL', what, flush=True)
    sys.exit(1)


def expect_errno(what, want, fn):
    try:
        fn()
    except PyverbsRDMAError as ex:
        if ex.error_code != want:
            fail('%s: errno %d, expected %d (%s)' % (what, ex.error_code, want, ex))
        ok('%s -> %s' % (what, errno.errorcode[want]))
        return
    fail('%s: succeeded, expected %s' % (what, errno.errorcode[want]))


def res_show(kind):
    """This process's objects on DEV (kernel ones carry no pid: ib_mad's GSI QP and its
    CQ, the driver's UMR QP, CQ and PD)."""
    out = subprocess.run(['rdma', 'res', 'show', kind], capture_output=True, text=True,
                         check=True).stdout
    return '\n'.join(ln for ln in out.splitlines()
                     if (DEV + ' ' in ln or DEV + '/' in ln) and ' pid ' in ln)


ctx = Context(name=DEV)
attr = ctx.query_device()
if attr.max_srq < 1 or attr.max_srq_wr < 1 or attr.max_srq_sge < 1:
    fail('SRQ caps: max_srq %d max_srq_wr %d max_srq_sge %d' %
         (attr.max_srq, attr.max_srq_wr, attr.max_srq_sge))
ok('query_device: max_qp %d max_srq %d max_srq_wr %d max_srq_sge %d' %
   (attr.max_qp, attr.max_srq, attr.max_srq_wr, attr.max_srq_sge))

pd = PD(ctx)
ok('alloc_pd')
mr = MR(pd, 64 * 1024, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
        e.IBV_ACCESS_REMOTE_READ)
if mr.lkey == 0:
    fail('reg_mr: lkey 0')
ok('reg_mr 64 KiB lkey 0x%x' % mr.lkey)
# rereg of the PD or the rights is done in place by the driver's UMR QP: same keys, as on
# a ConnectX; a new translation gets a new key.
keys = (mr.lkey, mr.rkey)
pd2 = PD(ctx)
mr.rereg(e.IBV_REREG_MR_CHANGE_PD | e.IBV_REREG_MR_CHANGE_ACCESS, pd2, 0, 0,
         e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ)
if (mr.lkey, mr.rkey) != keys:
    fail('rereg PD+access: keys 0x%x/0x%x changed from 0x%x/0x%x' % (mr.lkey, mr.rkey, *keys))
mr.rereg(e.IBV_REREG_MR_CHANGE_PD | e.IBV_REREG_MR_CHANGE_ACCESS, pd, 0, 0,
         e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ)
if (mr.lkey, mr.rkey) != keys:
    fail('rereg back: keys 0x%x/0x%x changed from 0x%x/0x%x' % (mr.lkey, mr.rkey, *keys))
ok('rereg PD and access in place: lkey 0x%x rkey 0x%x kept' % keys)
ch = CompChannel(ctx)
cq = CQ(ctx, 256, None, ch, 0)
cq.req_notify()
ok('create_cq 256 + req_notify')

srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=64, max_sge=2, srq_limit=0)))
ok('create_srq max_wr 64')
srq.modify(SrqAttr(srq_limit=16), e.IBV_SRQ_LIMIT)
qa = srq.query()
if qa.srq_limit != 16:
    fail('query_srq: limit %d after modify to 16' % qa.srq_limit)
ok('modify_srq limit 16, query_srq limit %d max_wr %d' % (qa.srq_limit, qa.max_wr))

qps = []
for qpt in (e.IBV_QPT_RC, e.IBV_QPT_UC, e.IBV_QPT_UD):
    cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
    qp = QP(pd, QPInitAttr(qp_type=qpt, scq=cq, rcq=cq, cap=cap))
    qa = QPAttr()
    qa.pkey_index = 0
    qa.port_num = 1
    qa.qkey = 0x11111111
    qa.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_LOCAL_WRITE
    qp.to_init(qa)
    got, _ = qp.query(e.IBV_QP_STATE)
    if got.qp_state != e.IBV_QPS_INIT:
        fail('QP type %d: state %d after to_init' % (qpt, got.qp_state))
    ok('create_qp type %d qpn 0x%x, RST2INIT, query_qp INIT' % (qpt, qp.qp_num))
    qps.append(qp)
cap = QPCap(max_send_wr=16, max_recv_wr=0, max_send_sge=1, max_recv_sge=1)
sqp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, srq=srq, cap=cap))
ok('create_qp RC on the SRQ qpn 0x%x' % sqp.qp_num)
qps.append(sqp)

for kind, want in (('pd', 1), ('mr', 1), ('cq', 1), ('qp', 4), ('srq', 1)):
    out = res_show(kind)
    lines = [ln for ln in out.splitlines() if ln.strip()]
    if kind == 'qp':
        lines = [ln for ln in lines if 'lqpn' in ln]
    if len(lines) < want:
        fail('rdma res show %s: %d entries, expected %d:\n%s' % (kind, len(lines), want, out))
    ok('rdma res show %s: %d' % (kind, len(lines)))

# Bad attributes: the errnos of the kernel's (and the library's) checks.
expect_errno('create_srq max_wr > max_srq_wr', errno.EINVAL,
             lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=attr.max_srq_wr + 1, max_sge=1))))
expect_errno('create_srq max_sge > max_srq_sge', errno.EINVAL,
             lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=8, max_sge=attr.max_srq_sge + 1))))
expect_errno('create_srq srq_limit >= max_wr', errno.EINVAL,
             lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=8, max_sge=1, srq_limit=8))))
expect_errno('modify_srq srq_limit >= max_wr', errno.EINVAL,
             lambda: srq.modify(SrqAttr(srq_limit=1000000), e.IBV_SRQ_LIMIT))
# XRC: an initiator is an RC send queue without receive queue (vcx_xrc for traffic).
if not attr.device_cap_flags & e.IBV_DEVICE_XRC:
    fail('query_device: no IBV_DEVICE_XRC')
xqp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_XRC_SEND, scq=cq, rcq=cq,
                        cap=QPCap(max_send_wr=4, max_recv_wr=0)))
qa = QPAttr()
qa.pkey_index = 0
qa.port_num = 1
qa.qp_access_flags = 0
xqp.to_init(qa)
got, init = xqp.query(e.IBV_QP_STATE)
if got.qp_state != e.IBV_QPS_INIT or init.cap.max_recv_wr != 0:
    fail('XRC_SEND: state %d, max_recv_wr %d' % (got.qp_state, init.cap.max_recv_wr))
ok('create_qp XRC_SEND qpn 0x%x, RST2INIT, no receive queue' % xqp.qp_num)
xqp.close()
expect_errno('create_qp XRC_SEND with an SRQ', errno.EINVAL,
             lambda: QP(pd, QPInitAttr(qp_type=e.IBV_QPT_XRC_SEND, scq=cq, rcq=cq, srq=srq,
                                       cap=QPCap(max_send_wr=4, max_recv_wr=0))))

for qp in reversed(qps):
    qp.close()
srq.close()
cq.close()
ch.close()
mr.close()
pd.close()
for kind in ('qp', 'cq', 'srq', 'mr'):
    out = res_show(kind)    # ib_mad's GSI QP and CQ and the UMR QP are the kernel's
    if kind == 'qp':
        out = '\n'.join(ln for ln in out.splitlines() if 'lqpn' in ln)
    if out.strip():
        fail('rdma res show %s after destroy:\n%s' % (kind, out))
ok('everything destroyed, rdma res empty')
ctx.close()
print('PASS verbs objects')
