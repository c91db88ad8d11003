#!/bin/bash
# The in-kernel ULP test (tests/kmod/vcx_srq_ulp.c): one PD, a CQ per CPU, an SRQ shared
# by 8 RC QPs in loopback pairs, payload checked byte by byte, SRQ limit event, RNR
# retries into an empty SRQ, attribute refusals, FRWR (REG_MR, RDMA WRITE and SEND through
# the fast-registered key, LOCAL_INV), orderly teardown. Module init returns
# the result; it is also in /sys/module/vcx_srq_ulp/parameters/result.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

vcx_verbs_up >/dev/null
vcx_roce_v2_gid >/dev/null || fail "no RoCE v2 GID on $VCX_IBDEV"

# Installed with the build's modules, else built next to the build or in the checkout.
ko=
if ! modinfo vcx_srq_ulp >/dev/null 2>&1; then
	build=$(sed -n 's/.*vcxvm\.build=\([^ ]*\).*/\1/p' /proc/cmdline)
	for c in ${VCX_SRQ_ULP_KO:-} "$build/tests/kmod/vcx_srq_ulp.ko" \
		 "$(dirname "$0")/../kmod/vcx_srq_ulp.ko"; do
		[ -n "$c" ] && [ -f "$c" ] && { ko=$c; break; }
	done
	[ -n "$ko" ] || fail "vcx_srq_ulp.ko not found (build it: see docs/driver.md)"
fi
if [ -n "$ko" ]; then
	insmod "$ko" || { dmesg | grep vcx_srq_ulp >&2; fail "insmod $ko failed"; }
else
	modprobe vcx_srq_ulp || { dmesg | grep vcx_srq_ulp >&2; fail "modprobe vcx_srq_ulp failed"; }
fi
res=$(cat /sys/module/vcx_srq_ulp/parameters/result)
dmesg | grep vcx_srq_ulp
rmmod vcx_srq_ulp
case $res in
PASS*) ;;
*) fail "vcx_srq_ulp: $res" ;;
esac
dmesg_has 'vcx_srq_ulp: SRQ_LIMIT_REACHED' || fail "no SRQ limit event reported"
dmesg_has 'vcx_srq_ulp: FRWR: REG_MR' || fail "FRWR step not reported"
kernel_log_clean || fail "kernel warnings"
pass "kernel ULP: $res"
