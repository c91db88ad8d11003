#!/bin/bash
# libibverbs' pingpong examples over loopback on vcx_0 (server and client on the same
# port, RoCE v2), payload checked (-c): RC, UC, UD, and the SRQ pingpong with 16 QPs;
# each polled and event driven (-e); ib_core's port counters over an RC pingpong; then
# RC with completion timestamps (-t) and the raw clock of ibv_query_rt_values_ex.
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
# ib_core's port counters (the PMA, which vcx.ko answers from the device's vport
# counters) count the RoCE frames the device loops, whether it moves messages whole (the
# default) or as frames (loopback-frames.sh): 100 iterations are 200 SENDs of 4096 bytes
# at path MTU 1024, each 4 frames of 1024 bytes and their headers (Ethernet 14, IPv4 20
# or IPv6 40 by the GID, UDP 8, BTH 12, ICRC 4) and an ACK (the same and an AETH of 4);
# each frame sent and received once.
case $(cat /sys/class/infiniband/$VCX_IBDEV/ports/1/gids/$gid) in
0000:0000:0000:0000:0000:ffff:*) hdr=58 ;;
*) hdr=78 ;;
esac
pma=/sys/class/infiniband/$VCX_IBDEV/ports/1/counters
pma_read() { cat $pma/port_xmit_packets $pma/port_rcv_packets $pma/port_xmit_data \
	$pma/port_rcv_data | tr '\n' ' '; }
p0=($(pma_read)) || fail "reading $pma"
run "rc, counted" ibv_rc_pingpong -n 100 -s 4096 -m 1024 -c
p1=($(pma_read)) || fail "reading $pma"
got="$((p1[0] - p0[0])) $((p1[1] - p0[1])) $((p1[2] - p0[2])) $((p1[3] - p0[3]))"
words=$((200 * (4 * (hdr + 1024) + hdr + 4) / 4))
want="1000 1000 $words $words"
[ "$got" = "$want" ] || fail "port counters (xmit/rcv packets, xmit/rcv data in 4-byte words)" \
	"grew by $got over the pingpong, not $want"
echo "ok port counters: packets and data words $got over 200 SENDs and their ACKs" \
	"($hdr bytes of headers a frame)"
# completion timestamps (ibv_create_cq_ex): the device's timer in every CQE, its rate in
# hca_core_clock; between two receive CQEs of a pingpong, time passed
clock=$(ibv_devinfo -v -d $VCX_IBDEV | awk '/hca_core_clock:/ { print $2 }')
[ "$clock" = 1000000kHZ ] || fail "hca_core_clock '$clock', not the device's 1000000 kHz"
run "rc -t" ibv_rc_pingpong -n 200 -c -t
for out in /tmp/cli.out /tmp/srv.out; do
	avg=$(awk -F'= ' '/^Average receive completion clock cycles/ { print $2 }' $out)
	awk -v a="${avg:-0}" 'BEGIN { exit !(a > 0) }' ||
		{ cat $out >&2; fail "rc -t: receive CQEs carry no advancing timestamp ($out)"; }
	echo "ok rc -t: $avg clock cycles between receive CQEs on average ($out)"
done
# the raw clock (ibv_query_rt_values_ex): the same timer, read from its mapped page
rt=$(python3 -c "
from pyverbs.device import Context
c = Context(name='$VCX_IBDEV')
a = c.query_rt_values_ex()[1]
b = c.query_rt_values_ex()[1]
print(a, b)") || fail "ibv_query_rt_values_ex on $VCX_IBDEV failed"
read -r rt0 rt1 <<<"$rt"
[ "$rt0" -gt 0 ] && [ "$rt1" -gt "$rt0" ] ||
	fail "ibv_query_rt_values_ex: raw clock '$rt' does not advance"
echo "ok raw clock: $rt0 then $rt1"
kernel_log_clean || fail "kernel warnings"
pass "rc/uc/ud/srq pingpong (-c, polled and -e), completion timestamps and the raw clock over loopback on $VCX_IBDEV"
