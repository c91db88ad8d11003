#!/bin/bash
# XRC on vcx_0 over loopback (server and client on port 1, RoCE v2, exchanges on
# 127.0.0.1 TCP):
# - tests/userspace/vcx_xrc (built on the host into $VCX_BUILD): XRC SRQ limits (EINVAL),
#   SENDs, SEND_WITH_IMM and an RDMA WRITE through an XRC target, payloads compared, the
#   XRC SRQ limit event, a SEND naming an SRQ of another domain (IBV_WC_REM_INV_REQ_ERR,
#   both QPs in ERR, the target's IBV_EVENT_QP_REQ_ERR, nothing written), ibv_close_xrcd
#   while an SRQ or a target QP uses the domain (EBUSY), and a target opened by a second
#   process (ibv_open_qp) and destroyed by the first: the second still receives, the
#   device's `state` qps count drops only when the last handle closes;
# - ibv_xsrq_pingpong, one server with 3 clients (-c 3, a server option: each client is
#   its own process), polled and with events (-e);
# - perftest ib_send_bw and ib_send_lat with -c XRC (perftest's XRC mode is SRQ based;
#   --use-srq is accepted with it as well).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

ndev=$(vcx_verbs_up)
gid=$(vcx_roce_v2_gid) || fail "no RoCE v2 GID on $VCX_IBDEV"
vcx_wait_addr_ready "$ndev"
prog="$VCX_BUILD/vcx_xrc"
[ -x "$prog" ] || fail "no $prog (built by ./vcx build)"

rc=0
timeout 300 "$prog" >/tmp/xrc.out 2>&1 || rc=$?
cat /tmp/xrc.out
[ "$rc" = 0 ] || fail "vcx_xrc exited $rc ($(grep -c '^not ok' /tmp/xrc.out) failed)"
grep -q '^1\.\.[1-9]' /tmp/xrc.out || fail "vcx_xrc: no TAP plan"

port=18700
# xsrq NAME CLIENTS ARGS...: one server for CLIENTS clients, each client its own process.
xsrq() {
	local name=$1 n=$2 i pids=(); shift 2
	port=$((port + 1))
	timeout 120 ibv_xsrq_pingpong -d $VCX_IBDEV -g "$gid" -p $port -c "$n" "$@" \
		>/tmp/xsrq-srv.out 2>&1 &
	local srv=$!
	sleep 1
	for i in $(seq "$n"); do
		timeout 120 ibv_xsrq_pingpong -d $VCX_IBDEV -g "$gid" -p $port "$@" 127.0.0.1 \
			>/tmp/xsrq-cli$i.out 2>&1 &
		pids+=($!)
	done
	for i in $(seq "$n"); do
		wait "${pids[$((i - 1))]}" ||
			{ cat /tmp/xsrq-cli$i.out /tmp/xsrq-srv.out >&2; fail "$name: client $i failed"; }
		grep -qx 'success' /tmp/xsrq-cli$i.out ||
			{ cat /tmp/xsrq-cli$i.out >&2; fail "$name: client $i: no result"; }
	done
	wait "$srv" || { cat /tmp/xsrq-srv.out >&2; fail "$name: server failed"; }
	grep -qx 'success' /tmp/xsrq-srv.out || { cat /tmp/xsrq-srv.out >&2; fail "$name: server: no result"; }
	echo "ok $name: server and $n clients: success"
}
xsrq "xsrq_pingpong -c 3" 3 -n 50
xsrq "xsrq_pingpong -c 3 -e" 3 -n 50 -e

# run NAME KIND(bw|lat) SIZE ITERS TOOL ARGS...: vcx_perftest, and the run must be XRC
run() {
	vcx_perftest "$1" "$2" "$3" "$4" "$gid" "${@:5}"
	grep -q 'XRC' /tmp/cli.out || { cat /tmp/cli.out >&2; fail "$1: not an XRC run"; }
}
# one MTU per message (see verbs-perftest.sh on perftest's SRQ receive stride)
run "send_bw XRC" bw 2048 200 ib_send_bw -c XRC
run "send_lat XRC" lat 64 200 ib_send_lat -c XRC
run "send_bw XRC --use-srq" bw 2048 200 ib_send_bw -c XRC --use-srq
kernel_log_clean || fail "kernel warnings"
pass "XRC on $VCX_IBDEV: vcx_xrc ($(grep -c '^ok' /tmp/xrc.out) checks), xsrq_pingpong -c 3 polled and -e, perftest send_bw/send_lat -c XRC"
