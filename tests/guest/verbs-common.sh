# Helpers of the verbs guest tests (sourced after lib.sh).

VCX_IBDEV=vcx_0

# The ib_device exists, and its netdev (named vcxN) is up so that ib_core builds GIDs.
vcx_verbs_up() {
	local ndev
	[ -d /sys/class/infiniband/$VCX_IBDEV ] || fail "no ib_device $VCX_IBDEV"
	ndev=$(rdma link show $VCX_IBDEV/1 | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
	[ -n "$ndev" ] || fail "$VCX_IBDEV/1 has no netdev"
	ip link set "$ndev" up || fail "ip link set $ndev up"
	echo "$ndev"
}

# Index of the first RoCE v2 GID of port 1 of IBDEV (default vcx_0); with ADDR, the one
# of that IPv4 address (::ffff:ADDR), as Soft-RoCE's rxe0 uses to reach itself. Waits up
# to 10 s for ib_core to add it. vcx_roce_v2_gid [IBDEV [ADDR]]
vcx_roce_v2_gid() {
	local d=/sys/class/infiniband/${1:-$VCX_IBDEV}/ports/1 want="" i t g
	[ -z "${2:-}" ] || want=0000:0000:0000:0000:0000:ffff:$(printf '%02x%02x:%02x%02x' $(tr . ' ' <<<"$2"))
	for _ in $(seq 100); do
		for t in "$d"/gid_attrs/types/*; do
			i=${t##*/}
			g=$(cat "$d/gids/$i" 2>/dev/null) || continue
			[ "$g" != "0000:0000:0000:0000:0000:0000:0000:0000" ] || continue
			[ -z "$want" ] || [ "$g" = "$want" ] || continue
			[ "$(cat "$t" 2>/dev/null)" = "RoCE v2" ] || continue
			echo "$i"
			return 0
		done
		sleep 0.1
	done
	return 1
}

# The port's netdev up with ADDR/24 and ib_core's IPv4-mapped RoCE v2 GID of it (waits up
# to 10 s); prints the GID's index. vcx_ipv4_up ADDR
vcx_ipv4_up() {
	local ndev i
	ndev=$(vcx_verbs_up)
	# replace: the runner may have given the address already (images/guest-init).
	ip addr replace "$1/24" dev "$ndev" || fail "ip addr replace $1/24 dev $ndev"
	i=$(vcx_roce_v2_gid "$VCX_IBDEV" "$1") || fail "no RoCE v2 GID ::ffff:$1 on $VCX_IBDEV port 1"
	echo "$i"
}

# Wait (up to 10 s) until the netdev's IPv6 address is no longer tentative: the first
# INIT->RTR resolves the loopback GID's MAC through it and fails with ETIMEDOUT while
# duplicate address detection runs (about 1 s after link up). Prints the wait.
vcx_wait_addr_ready() { # netdev
	local waited=0
	while grep -q tentative <<<"$(ip -6 addr show dev "$1")" && [ $waited -lt 100 ]; do
		sleep 0.1
		waited=$((waited + 1))
	done
	echo "# $1: IPv6 address tentative for ${waited}00 ms after link up"
}

# One perftest run over loopback on port 1 (server and client here, connection data over
# TCP on 127.0.0.1, a fresh TCP port each run counting up from VCX_PERFTEST_PORT). It must
# end with its report: the '#bytes' header and the row for SIZE bytes and ITERS iterations
# with non-zero bandwidth / latency figures. The client's output stays in /tmp/cli.out.
# vcx_perftest NAME KIND(bw|lat) SIZE ITERS GID_INDEX TOOL ARGS...
VCX_PERFTEST_PORT=18600
vcx_perftest() {
	local name=$1 kind=$2 size=$3 iters=$4 gid=$5; shift 5
	local common=(-d "$VCX_IBDEV" -i 1 -x "$gid" -F -s "$size" -n "$iters")
	local port=$((VCX_PERFTEST_PORT += 1)) srv row ok
	timeout 120 "$@" "${common[@]}" -p $port >/tmp/srv.out 2>&1 &
	srv=$!
	sleep 1
	timeout 120 "$@" "${common[@]}" -p $port 127.0.0.1 >/tmp/cli.out 2>&1 ||
		{ cat /tmp/cli.out /tmp/srv.out >&2; fail "$name: client failed ($*)"; }
	wait "$srv" || { cat /tmp/cli.out /tmp/srv.out >&2; fail "$name: server failed ($*)"; }
	grep -q '^ *#bytes' /tmp/cli.out || { cat /tmp/cli.out >&2; fail "$name: no report header"; }
	row=$(awk -v s="$size" -v n="$iters" '$1 == s && $2 == n' /tmp/cli.out | head -1)
	[ -n "$row" ] || { cat /tmp/cli.out >&2; fail "$name: no report row for $size bytes x $iters"; }
	if [ "$kind" = bw ]; then
		# #bytes #iterations BW_peak[MB/s] BW_average[MB/s] MsgRate[Mpps]
		ok=$(awk '{print ($4 > 0 && $5 > 0) ? 1 : 0}' <<<"$row")
	else
		# #bytes #iterations t_min t_max t_typical t_avg ... [usec]
		ok=$(awk '{print ($3 > 0 && $5 > 0 && $6 > 0) ? 1 : 0}' <<<"$row")
	fi
	[ "$ok" = 1 ] || { cat /tmp/cli.out >&2; fail "$name: zero figures in '$row'"; }
	echo "ok $name: $(grep -m1 '^ *#bytes' /tmp/cli.out | tr -s ' \t' ' ')"
	echo "ok $name: $(tr -s ' \t' ' ' <<<"$row")"
}
