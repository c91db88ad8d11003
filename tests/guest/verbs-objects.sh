#!/bin/bash
# Every verbs object through the provider and vcx.ko (pyverbs): PD, MR, CQ (+ arm), SRQ
# (+ limit, query), RC/UC/UD and XRC_SEND QPs (RST2INIT, query), a QP on the SRQ; rdma res
# show lists them; bad attributes get EINVAL / EOPNOTSUPP; all destroyed cleanly. Then
# per-QP counters (verbs-counters.py): `rdma statistic qp` bind / unbind by hand and auto
# mode, the bound counter and the port's counting loopback RDMA WRITEs and READs exactly.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

ndev=$(vcx_verbs_up)
python3 "$(dirname "$0")/verbs-objects.py" $VCX_IBDEV || fail "verbs objects"
gid=$(vcx_roce_v2_gid) || fail "no RoCE v2 GID on $VCX_IBDEV"
vcx_wait_addr_ready "$ndev"
python3 "$(dirname "$0")/verbs-counters.py" $VCX_IBDEV "$gid" || fail "per-QP counters"
kernel_log_clean || fail "kernel warnings"
pass "verbs objects and per-QP counters on $VCX_IBDEV"
