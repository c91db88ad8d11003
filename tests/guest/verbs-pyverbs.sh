#!/bin/bash
# rdma-core 56.1's own pyverbs tests on vcx_0 (RoCE v2 GID): devices, PDs, MRs, CQs and
# CQ events, QPs (RC/UC/UD traffic), extended QPs (ibv_wr_* API), SRQs and atomics.
# Features the device does not have are skipped by the suite itself (XRC, MWs, rereg,
# flush, atomic write, ...); any error or failure fails the test. Skips are listed with
# their reasons. The extended QP cases the provider implements (create_qp_ex, ibv_wr_*)
# must run and pass: a skip of one of them fails the test.
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
passed=$(grep -c ' \.\.\. ok' /tmp/pyverbs.out)
# The run is OK, so none of these failed or errored; each must have run and not skipped.
# unittest -v names a test by its docstring's first line when it has one (test_qp's),
# else "name (module.class.name)"; text a test writes to stderr (pyverbs' ignored
# exceptions of objects freed late) can separate the name from its "ok".
while read -r t; do
	re="^$(printf '%s' "$t" | sed 's/[.[\*^$()+?{|]/\\&/g')( \(.*\))? \.\.\. "
	if [ "$(grep -cE "$re" /tmp/pyverbs.out)" -ne 1 ] ||
	   grep -qE "${re}skipped" /tmp/pyverbs.out; then
		grep -F -A3 "$t" /tmp/pyverbs.out >&2
		fail "'$t' did not run and pass"
	fi
done <<'EOF_TESTS'
test_qp_ex_rc_send
test_qp_ex_rc_send_imm
test_qp_ex_ud_send
test_qp_ex_ud_send_imm
test_qp_ex_ud_zero_size
test_qp_ex_rc_rdma_write
test_qp_ex_rc_rdma_write_imm
test_qp_ex_rc_rdma_write_zero_length
test_qp_ex_rc_rdma_read
test_qp_ex_rc_rdma_read_zero_size
test_qp_ex_rc_atomic_cmp_swp
test_qp_ex_rc_atomic_fetch_add
test_post_receive_qp_state_bad_flow
test_post_send_qp_state_bad_flow
test_full_rq_bad_flow
Test RC QP creation via ibv_create_qp_ex without a QPAttr object
Test RC QP creation via ibv_create_qp_ex with a QPAttr object provided.
Test UC QP creation via ibv_create_qp_ex without a QPAttr object
Test UC QP creation via ibv_create_qp_ex with a QPAttr object provided.
Test UD QP creation via ibv_create_qp_ex without a QPAttr object
Test UD QP creation via ibv_create_qp_ex with a QPAttr object provided.
EOF_TESTS
[ "$passed" -ge 66 ] || fail "only $passed pyverbs tests passed"
kernel_log_clean || fail "kernel warnings"
pass "pyverbs: $passed tests passed on $VCX_IBDEV ($(grep '^OK' /tmp/pyverbs.out))"
