#!/bin/bash
# rdma-core 56.1's own pyverbs tests on vcx_0 (RoCE v2 GID): devices, PDs, MRs, CQs and
# CQ events, CQ resize, extended CQs (ibv_create_cq_ex), QPs (RC/UC/UD traffic), extended
# QPs (ibv_wr_* API), SRQs and atomics.
# Features the device does not have are skipped by the suite itself (XRC, MWs, rereg,
# ...); any error or failure fails the test. Skips are listed with their reasons.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

vcx_verbs_up >/dev/null
gid=$(vcx_roce_v2_gid) || fail "no RoCE v2 GID on $VCX_IBDEV"
cd /opt/rdma-core/tests || fail "no rdma-core tests in the guest"
rc=0
timeout 750 python3 run_tests.py --dev $VCX_IBDEV --gid "$gid" -v test_device test_pd \
	test_mr test_cq test_cq_events test_cqex test_qp test_qpex test_srq test_atomic \
	>/tmp/pyverbs.out 2>&1 || rc=$?
grep -E ' \.\.\. (ok|ERROR|FAIL|skipped)|^Ran|^OK|^FAILED' /tmp/pyverbs.out
if [ $rc -ne 0 ] || ! grep -q '^OK' /tmp/pyverbs.out; then
	tail -60 /tmp/pyverbs.out >&2
	fail "pyverbs tests failed (status $rc)"
fi
# "name result" per test; a docstring puts the result on the line after the name.
awk '/^test[_a-zA-Z0-9]* \(/ { name = $1 }
     / \.\.\. / { n = split($0, a, " \\.\\.\\. "); print name, a[n] }' /tmp/pyverbs.out \
	>/tmp/pyverbs.results
# What the device and provider implement must run, not skip.
for t in test_resize_cq test_create_cq_ex test_create_cq_ex_bad_flow test_rc_traffic_cq_ex \
	 test_ud_traffic_cq_ex; do
	grep -qx "$t ok" /tmp/pyverbs.results ||
		fail "$t: $(grep "^$t " /tmp/pyverbs.results || echo 'did not run')"
done
passed=$(grep -c ' \.\.\. ok' /tmp/pyverbs.out)
[ "$passed" -ge 30 ] || fail "only $passed pyverbs tests passed"
kernel_log_clean || fail "kernel warnings"
pass "pyverbs: $passed tests passed on $VCX_IBDEV ($(grep '^OK' /tmp/pyverbs.out))"
