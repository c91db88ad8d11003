#!/bin/bash
# Bad input on vcx_0: tests/userspace/vcx_bad_wqe (built on the host into $VCX_BUILD) writes
# malformed WQEs into its own SQ and checks the error CQEs, the QP in ERR and the flush,
# verbs with bad attributes for their errno, and CQ moderation (ibv_modify_cq) holding an
# event back until its count; afterwards the device and driver must
# still carry ibv_srq_pingpong (16 QPs on one SRQ, payload checked) over loopback, and the
# kernel log must be clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

ndev=$(vcx_verbs_up)
gid=$(vcx_roce_v2_gid) || fail "no RoCE v2 GID on $VCX_IBDEV"
# The first QP connect needs the IPv6 address behind the GID (pingpong's own handshake
# usually hides this delay).
vcx_wait_addr_ready "$ndev"
prog="$VCX_BUILD/vcx_bad_wqe"
[ -x "$prog" ] || fail "no $prog (built by ./vcx build)"

rc=0
timeout 300 "$prog" >/tmp/bad-wqe.out 2>&1 || rc=$?
cat /tmp/bad-wqe.out
[ "$rc" = 0 ] || fail "vcx_bad_wqe exited $rc ($(grep -c '^not ok' /tmp/bad-wqe.out) failed)"
grep -q '^1\.\.[1-9]' /tmp/bad-wqe.out || fail "vcx_bad_wqe: no TAP plan"

port=18600
timeout 120 ibv_srq_pingpong -n 200 -q 16 -c -d "$VCX_IBDEV" -g "$gid" -p $port \
	>/tmp/srv.out 2>&1 &
srv=$!
sleep 1
timeout 120 ibv_srq_pingpong -n 200 -q 16 -c -d "$VCX_IBDEV" -g "$gid" -p $port localhost \
	>/tmp/cli.out 2>&1 || { cat /tmp/cli.out /tmp/srv.out >&2; fail "srq pingpong: client failed"; }
wait "$srv" || { cat /tmp/srv.out >&2; fail "srq pingpong: server failed"; }
grep -q 'iters in' /tmp/cli.out || { cat /tmp/cli.out >&2; fail "srq pingpong: no result"; }
echo "ok srq pingpong after the bad input: $(grep 'iters in' /tmp/cli.out)"

kernel_log_clean || fail "kernel warnings"
pass "malformed WQEs and bad verbs attributes rejected; srq pingpong still runs on $VCX_IBDEV"
