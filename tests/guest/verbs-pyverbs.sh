#!/bin/bash
# rdma-core 56.1's own pyverbs tests on vcx_0 (RoCE v2 GID): devices, PDs, MRs, CQs and
# CQ events, QPs (RC/UC/UD traffic), extended QPs (ibv_wr_* API), SRQs and atomics.
# Features the device does not have are skipped by the suite itself (XRC, MWs, ...); any
# error or failure fails the test, as does a skip of a test vcx must run (listed below).
# Skips are listed with their reasons.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

vcx_verbs_up >/dev/null
gid=$(vcx_roce_v2_gid) || fail "no RoCE v2 GID on $VCX_IBDEV"
cd /opt/rdma-core/tests || fail "no rdma-core tests in the guest"
rc=0
timeout 750 python3 run_tests.py --dev $VCX_IBDEV --gid "$gid" -v test_device test_pd \
	test_mr test_cq test_cq_events test_qp test_qpex test_srq test_atomic \
	>/tmp/pyverbs.out 2>&1 || rc=$?
grep -E ' \.\.\. (ok|ERROR|FAIL|skipped)|^Ran|^OK|^FAILED' /tmp/pyverbs.out
if [ $rc -ne 0 ] || ! grep -q '^OK' /tmp/pyverbs.out; then
	tail -60 /tmp/pyverbs.out >&2
	fail "pyverbs tests failed (status $rc)"
fi
# Features vcx has must run, not skip: a skip here is a regression. unittest prints
# "name (id) ... result", or "name (id)" and "docstring ... result" on the next line.
pyverbs_result() { # test name
	awk -v t="$1" 'f { print; exit } index($0, t " (") == 1 { if (/ \.\.\. /) { print; exit } f = 1 }' \
		/tmp/pyverbs.out | sed -n 's/.* \.\.\. //p'
}
for t in test_mr_rereg_access test_mr_rereg_access_bad_flow test_mr_rereg_addr \
	test_mr_rereg_atomic test_mr_rereg_pd; do
	r=$(pyverbs_result $t)
	[ "$r" = ok ] || fail "$t: '${r:-did not run}', expected ok"
done
passed=$(grep -c ' \.\.\. ok' /tmp/pyverbs.out)
[ "$passed" -ge 30 ] || fail "only $passed pyverbs tests passed"
kernel_log_clean || fail "kernel warnings"
pass "pyverbs: $passed tests passed on $VCX_IBDEV ($(grep '^OK' /tmp/pyverbs.out))"
