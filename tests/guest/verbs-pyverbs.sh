#!/bin/bash
# rdma-core 56.1's own pyverbs tests on vcx_0 (RoCE v2 GID): devices, PDs, MRs, CQs and
# CQ events, CQ resize, extended CQs (ibv_create_cq_ex), QPs (RC/UC/UD traffic), extended
# QPs (ibv_wr_* API), SRQs, atomics, XRC and relaxed ordering; then test_rdmacm's three
# UD multicast cases (payloads validated), which must pass.
# Features the device does not have are skipped by the suite itself (flush, atomic write,
# ...); any error or failure fails the test. Skips are listed with their reasons.
# The cases of what vcx implements (extended QPs through create_qp_ex and ibv_wr_*, rereg
# MR, resize CQ, extended CQs, memory windows of type 1 and 2, XRC traffic, sends,
# atomics and the XRC case of the relaxed-ordering tests) must run and pass: a skip of one
# of them fails the test.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

vcx_verbs_up >/dev/null
gid=$(vcx_roce_v2_gid) || fail "no RoCE v2 GID on $VCX_IBDEV"
cd /opt/rdma-core/tests || fail "no rdma-core tests in the guest"
rc=0
timeout 750 python3 run_tests.py --dev $VCX_IBDEV --gid "$gid" -v test_device test_pd \
	test_mr test_cq test_cq_events test_cqex test_qp test_qpex test_srq test_atomic \
	test_relaxed_ordering \
	>/tmp/pyverbs.out 2>&1 || rc=$?
grep -E ' \.\.\. (ok|ERROR|FAIL|skipped)|^Ran|^OK|^FAILED' /tmp/pyverbs.out
if [ $rc -ne 0 ] || ! grep -q '^OK' /tmp/pyverbs.out; then
	tail -60 /tmp/pyverbs.out >&2
	fail "pyverbs tests failed (status $rc)"
fi
# The run is OK, so none failed or errored; each of these must have run and not skipped.
# unittest -v prints "name (id) ... result", or "name (id)" and then "docstring ...
# result"; text a test writes to stderr (pyverbs' ignored exceptions and resource
# warnings of objects freed late) can come between " ... " and the result, so the result
# is the first ok/skipped/ERROR/FAIL after the name, before the next test's name.
pyverbs_result() { # test name
	awk -v t="$1" '
		index($0, t " (") == 1 { f = 1 }
		!f { next }
		/^test[_a-zA-Z0-9]* \(/ && index($0, t " (") != 1 { print "none"; exit }
		/ \.\.\. ok$/ || /^ok$/ { print "ok"; exit }
		/ \.\.\. skipped/ || /^skipped / { print "skipped"; exit }
		/ \.\.\. (ERROR|FAIL)$/ || /^(ERROR|FAIL)$/ { print "error"; exit }' /tmp/pyverbs.out
}
for t in test_qp_ex_rc_send test_qp_ex_rc_send_imm test_qp_ex_ud_send \
	test_qp_ex_ud_send_imm test_qp_ex_ud_zero_size test_qp_ex_rc_rdma_write \
	test_qp_ex_rc_rdma_write_imm test_qp_ex_rc_rdma_write_zero_length \
	test_qp_ex_rc_rdma_read test_qp_ex_rc_rdma_read_zero_size \
	test_qp_ex_rc_atomic_cmp_swp test_qp_ex_rc_atomic_fetch_add \
	test_post_receive_qp_state_bad_flow test_post_send_qp_state_bad_flow \
	test_full_rq_bad_flow \
	test_create_rc_qp_ex_no_attr test_create_uc_qp_ex_no_attr test_create_ud_qp_ex_no_attr \
	test_create_rc_qp_ex_with_attr test_create_uc_qp_ex_with_attr \
	test_create_ud_qp_ex_with_attr \
	test_mr_rereg_access test_mr_rereg_access_bad_flow test_mr_rereg_addr \
	test_mr_rereg_atomic test_mr_rereg_pd \
	test_resize_cq test_create_cq_ex test_create_cq_ex_bad_flow test_rc_traffic_cq_ex \
	test_ud_traffic_cq_ex \
	test_mw_type1 test_invalidate_mw_type1 test_mw_type2 test_mw_type2_invalidate_local \
	test_mw_type2_invalidate_remote test_mw_type2_invalidate_dealloc \
	test_reg_mw_wrong_type test_qp_ex_rc_bind_mw \
	test_qp_ex_xrc_send test_qp_ex_xrc_send_imm test_xrc_traffic_cq_ex \
	test_xrc_atomic_fetch_and_add test_xrc_atomic_cmp_and_swap test_ro_xrc_traffic; do
	r=$(pyverbs_result $t)
	if [ "$r" != ok ]; then
		grep -F -A3 "$t (" /tmp/pyverbs.out >&2
		fail "$t: '${r:-did not run}', expected ok"
	fi
done
# UD multicast through rdma_cm (test_rdmacm's multicast cases, vcx_0 over loopback): both
# sides join a group, each sends a message to QP 0xFFFFFF and validates the bytes of the
# other's (attach_mcast, the device's local copies).
mc_tests="test_rdmacm_async_multicast_traffic test_rdmacm_async_ex_multicast_traffic
	test_rdmacm_async_ex_leave_multicast_traffic"
rc=0
timeout 300 python3 run_tests.py --dev $VCX_IBDEV --gid "$gid" -v -k multicast test_rdmacm \
	>/tmp/pyverbs-mc.out 2>&1 || rc=$?
grep -E ' \.\.\. (ok|ERROR|FAIL|skipped)|^Ran|^OK|^FAILED' /tmp/pyverbs-mc.out
if [ $rc -ne 0 ] || ! grep -q '^OK' /tmp/pyverbs-mc.out; then
	tail -60 /tmp/pyverbs-mc.out >&2
	fail "pyverbs multicast tests failed (status $rc)"
fi
for t in $mc_tests; do
	grep -q "^$t (.*) \.\.\. ok$" /tmp/pyverbs-mc.out ||
		{ grep -F -A3 "$t (" /tmp/pyverbs-mc.out >&2; fail "$t did not pass"; }
done
passed=$(grep -c ' \.\.\. ok' /tmp/pyverbs.out)
skipped=$(grep -Ec ' \.\.\. skipped|^skipped ' /tmp/pyverbs.out || true)
[ "$passed" -ge 86 ] || fail "only $passed pyverbs tests passed"
kernel_log_clean || fail "kernel warnings"
pass "pyverbs: $passed tests passed, $skipped skipped on $VCX_IBDEV ($(grep '^OK' /tmp/pyverbs.out)); 3 rdmacm multicast tests passed"
