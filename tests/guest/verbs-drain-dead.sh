#!/bin/bash
# Queue drains on a dead vcx_0: vcx_drain_ulp (tests/kmod/vcx_drain_ulp.c) loaded with
# mode=dead sets up QPs with outstanding work and waits; a fatal health syndrome forced
# into the device puts the driver in the error state; the module then sees
# IB_EVENT_DEVICE_FATAL, collects the flush completions the driver delivers without any
# drain, checks that posting fails with -EIO, drains every QP (each drain well under
# 10 s, every WR once, flushed in order) and destroys everything. Then a function reset
# brings the driver back and a drain test on the live device passes again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bringup-common.sh"
. "$(dirname "$0")/verbs-common.sh"

addr=$(vcx_pci_addr)
ndev=$(vcx_verbs_up)
vcx_roce_v2_gid >/dev/null || fail "no RoCE v2 GID on $VCX_IBDEV"
vcx_wait_addr_ready "$ndev"

# Module init blocks until the device fails (at most 60 s).
modprobe vcx_drain_ulp mode=dead >/tmp/modprobe-dead.out 2>&1 &
mp=$!
wait_dmesg_count 'vcx_drain_ulp: dead: .*QPs armed' 60 1 || fail "the module did not arm its QPs"
start=$(date +%s)
vcx_qom_set health-syndrome 8
rc=0
wait "$mp" || rc=$?
took=$(($(date +%s) - start))
dmesg | grep -E 'vcx_drain_ulp|error state|fatal error event'
[ "$rc" = 0 ] || { cat /tmp/modprobe-dead.out >&2; fail "modprobe vcx_drain_ulp mode=dead: exit $rc"; }
res=$(cat /sys/module/vcx_drain_ulp/parameters/result)
rmmod vcx_drain_ulp
case $res in
PASS*) ;;
*) fail "vcx_drain_ulp: $res" ;;
esac
echo "# from the forced syndrome to the end of the module's checks: $took s"
[ "$(dmesg_count 'vcx_drain_ulp: IB_EVENT_DEVICE_FATAL received')" -eq 1 ] || fail "no single DEVICE_FATAL"
dmesg_has "vcx $addr: vcx_0: fatal error event dispatched, completion handlers run on [1-9][0-9]* CQs" ||
	fail "the driver notified no CQ"
dmesg_has 'vcx_drain_ulp: dead: [1-9][0-9]* flush completions arrived without a drain' ||
	fail "no flush completion without a drain"
n=$(dmesg_count 'vcx_drain_ulp: .*flushed in order')
[ "$n" -eq 11 ] || fail "$n drain cases reported, expected 11"
[ "$(dmesg_count 'drain still waiting')" -eq 0 ] || fail "a drain waited long"
[ "$(dmesg_count 'blocked for more than')" -eq 0 ] || fail "hung task"
kernel_log_clean || fail "kernel warnings"

# Recovery: reset the function while bound, as after any fatal error.
before=$(dmesg_count "vcx $addr: loaded after function reset")
echo 1 >"/sys/bus/pci/devices/$addr/reset" || fail "function reset failed"
[ "$(dmesg_count "vcx $addr: loaded after function reset")" -eq $((before + 1)) ] ||
	fail "driver did not come back after the function reset"
expect_up "after the function reset"
ndev=$(vcx_verbs_up)
vcx_roce_v2_gid >/dev/null || fail "no RoCE v2 GID after the reset"
vcx_wait_addr_ready "$ndev"
modprobe vcx_drain_ulp || { dmesg | tail -20 >&2; fail "drains after the reset: modprobe failed"; }
res2=$(cat /sys/module/vcx_drain_ulp/parameters/result)
rmmod vcx_drain_ulp
case $res2 in
PASS*) ;;
*) fail "after the reset: vcx_drain_ulp: $res2" ;;
esac
kernel_log_clean || fail "kernel warnings after the reset"
pass "drains on a dead device: $res; after the reset: $res2"
