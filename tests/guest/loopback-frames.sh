#!/bin/bash
# Loopback through the packet engine (the device's loopback-frames property, booted with
# --vcx-props loopback-frames=on, no netdev): other guest scripts run again, with their
# own checks, but every message cut into RoCEv2 frames that loop inside the device.
# Usage: loopback-frames.sh [SCRIPT...]   (names in tests/guest without .sh)
#   default: verbs-pingpong verbs-perftest verbs-kmod verbs-rdmacm (RC, UC, UD, SRQ; SEND,
#   WRITE, READ and atomics; the in-kernel SRQ ULP with its XRC pair; rdma_cm on QP1; UD
#   multicast); the suite's ulp-loopback-frames test names kernel ULP scripts.
# Then the device's counters (its state property) must show it: thousands of frames
# sent, every one received (none lost in the loop: a full receive queue or a frame to a
# wire there is not would leave it short), no ICRC error, none malformed; and ib_core's
# port counters (PMA) count exactly those frames.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"
. "$(dirname "$0")/bringup-common.sh"

lb=$(images/vcx-hostcall hmp "qom-get $VCX_QOM loopback-frames" | tr -d '"\r ')
[ "$lb" = true ] || fail "boot with --vcx-props loopback-frames=on (the property reads '$lb')"
# ib_core's port counters (the PMA, answered by vcx.ko from the device's vport counters)
pma=/sys/class/infiniband/$VCX_IBDEV/ports/1/counters
pma_read() { cat $pma/port_xmit_packets $pma/port_rcv_packets $pma/port_xmit_data; }
p0=($(pma_read)) || fail "reading $pma"
s0=$(vcx_state)
scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=(verbs-pingpong verbs-perftest verbs-kmod verbs-rdmacm)
for t in "${scripts[@]}"; do
	echo "# $t"
	bash "$(dirname "$0")/$t.sh" || fail "$t over looped frames"
done
s1=$(vcx_state)
d() { echo $(($(state_field "$s1" "$1") - $(state_field "$s0" "$1"))); }
tx=$(d roce_tx_pkts) rx=$(d roce_rx_pkts)
echo "frames: sent $tx, received $rx, ICRC errors $(d roce_icrc_err)," \
	"malformed $(d roce_malformed), retransmits $(d retransmits), ACKs $(d acks_sent)"
[ "$tx" -ge 10000 ] || fail "only $tx RoCE frames sent: the traffic did not go through frames"
[ "$rx" = "$tx" ] || fail "$tx frames sent but $rx received: $s1"
[ "$(d roce_icrc_err)" = 0 ] && [ "$(d roce_malformed)" = 0 ] ||
	fail "looped frames failed their checks: $s1"
p1=($(pma_read)) || fail "reading $pma"
for f in $pma/*; do
	cat "$f" >/dev/null || fail "reading $f failed"
done
echo "PMA: port_xmit_packets +$((p1[0] - p0[0])), port_rcv_packets +$((p1[1] - p0[1]))," \
	"port_xmit_data +$(((p1[2] - p0[2]) * 4)) bytes"
[ $((p1[0] - p0[0])) = "$tx" ] && [ $((p1[1] - p0[1])) = "$rx" ] ||
	fail "the port counters (PMA) do not count the frames: $(grep . $pma/*)"
[ $((p1[2] - p0[2])) -gt "$tx" ] || fail "port_xmit_data did not grow with the frames"
pass "${scripts[*]} over frames looped inside $VCX_IBDEV"
