#!/bin/bash
# Queue drains on a live vcx_0 (tests/kmod/vcx_drain_ulp.c, mode=alive): RC, UC and UD
# kernel QPs with receives and sends outstanding, on a regular RQ or an SRQ, with CQs
# polled directly, from a workqueue and from softirq, drained with ib_drain_qp or
# ib_drain_sq + ib_drain_rq. Every WR must complete once with a flush error in posting
# order, the drains return promptly, the SRQ QPs get the last-WQE event.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

ndev=$(vcx_verbs_up)
vcx_roce_v2_gid >/dev/null || fail "no RoCE v2 GID on $VCX_IBDEV"
vcx_wait_addr_ready "$ndev"

modprobe vcx_drain_ulp || { dmesg | grep vcx_drain_ulp >&2; fail "modprobe vcx_drain_ulp failed"; }
res=$(cat /sys/module/vcx_drain_ulp/parameters/result)
dmesg | grep vcx_drain_ulp
rmmod vcx_drain_ulp
case $res in
PASS*) ;;
*) fail "vcx_drain_ulp: $res" ;;
esac
n=$(dmesg_count 'vcx_drain_ulp: .*flushed in order')
[ "$n" -eq 10 ] || fail "$n drain cases reported, expected 10"
[ "$(dmesg_count 'vcx_drain_ulp: .*LAST_WQE_REACHED')" -eq 3 ] || fail "not every SRQ case saw the last-WQE event"
[ "$(dmesg_count 'drain still waiting')" -eq 0 ] || fail "a drain waited long"
kernel_log_clean || fail "kernel warnings"
pass "queue drains: $res"
