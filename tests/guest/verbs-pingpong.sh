#!/bin/bash
# libibverbs' pingpong examples over loopback on vcx_0 (server and client on the same
# port, RoCE v2), payload checked (-c): RC, UC, UD, and the SRQ pingpong with 16 QPs;
# each polled and event driven (-e).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

vcx_verbs_up >/dev/null
gid=$(vcx_roce_v2_gid) || fail "no RoCE v2 GID on $VCX_IBDEV"
port=18515
run() { # name args...
	local name=$1; shift
	port=$((port + 1))
	timeout 120 "$@" -d $VCX_IBDEV -g "$gid" -p $port >/tmp/srv.out 2>&1 &
	local srv=$!
	sleep 1
	timeout 120 "$@" -d $VCX_IBDEV -g "$gid" -p $port localhost >/tmp/cli.out 2>&1 ||
		{ cat /tmp/cli.out /tmp/srv.out >&2; fail "$name: client failed"; }
	wait "$srv" || { cat /tmp/srv.out >&2; fail "$name: server failed"; }
	grep -q 'iters in' /tmp/cli.out || { cat /tmp/cli.out >&2; fail "$name: no result"; }
	echo "ok $name: $(grep 'iters in' /tmp/cli.out)"
}
for ev in "" "-e"; do
	run "rc $ev" ibv_rc_pingpong -n 200 -c $ev
	run "uc $ev" ibv_uc_pingpong -n 200 -c $ev
	run "ud $ev" ibv_ud_pingpong -n 200 -s 1024 -c $ev
	run "srq $ev" ibv_srq_pingpong -n 200 -q 16 -c $ev
done
kernel_log_clean || fail "kernel warnings"
pass "rc/uc/ud/srq pingpong (-c, polled and -e) over loopback on $VCX_IBDEV"
