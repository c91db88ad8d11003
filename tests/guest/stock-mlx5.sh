#!/bin/bash
# The stock Linux mlx5 drivers on the device (docs/stock-mlx5.md), against vcx.ko: two VMs
# (./vcx vm --vms 2 --no-load --vcx-props cx5-id=on), the device with a ConnectX-5 PF's
# PCI ID in both. vm0 runs the kernel's own mlx5_core (its mlx5e netdev) and mlx5_ib;
# vm1 runs vcx.ko, bound to that ID through the driver's new_id (its normal build leaves
# ConnectX boards to mlx5_core). Checked:
#   - vm0: mlx5e's netdev on the link, carrier, and mlx5_0's RoCE port ACTIVE with the RoCE
#     v2 GID of 192.168.77.1;
#   - ping and ping6 both ways, then a verified 16 MiB TCP transfer each way (net-xfer.py:
#     the receiver's sha256 against the sender's);
#   - VLAN 77 over the link (mlx5e's VLAN table and tag offloads, the device's stripping
#     and insertion): ping and a verified 4 MiB transfer each way;
#   - mlx5e's counters: frames received with CHECKSUM_COMPLETE (the CQE's check_sum), tags
#     the device stripped and inserted for it;
#   - both kernel logs free of warnings and oopses, including "hw csum failure";
#   - vm0: mlx5_ib and mlx5_core unload, and the device holds no NIC object after.
#   - vm0: mlx5e's port counters (PPCNT, its *_phy statistics): frames and bytes both
#     ways, at least the 16 MiB received, the size histogram, and no failed ACCESS_REG in
#     its log.
#   - vm0: mlx5_core's PTP hardware clock (mlx5_ptp) on the device's internal timer;
#   - hardware timestamps (net-hwtstamp.py) on both netdevs, each VM receiving 20 UDP
#     datagrams of the other's 30 in turn: every one stamped, in order, within the
#     readings of its PTP clock, sent ones too;
#   - vm0: RDMA from user space on mlx5_0 through Debian's libmlx5 (its own WQEs, CQEs and
#     doorbells; MRs registered by mlx5_ib's UMR QP): ibv_rc/uc/ud_pingpong and
#     ibv_srq_pingpong -q 4, 200 iterations each with -c (payload checked), rc with -t
#     (completion timestamps: a positive average between receive CQEs), then
#     ib_send_bw, ib_write_bw, ib_read_bw and ib_atomic_bw for 1 s each (a positive
#     figure; no threshold).
#   - RDMA between the stacks over the link (RoCE v2 frames): ibv_rc_pingpong,
#     ibv_ud_pingpong and ibv_srq_pingpong -q 4 with -c, and rping -V over rdma_cm, first
#     vm1 (vcx_0: vcx provider, vcx.ko) serving vm0 (mlx5_0: libmlx5, mlx5_ib), then the
#     other way. Not perftest: Debian's links libmlx5 itself (mlx5dv), which then claims
#     vcx_0 by its ConnectX ID whatever the configuration says.
#   - vm0: no failed MODIFY_NIC_VPORT_CONTEXT (mlx5e's VLAN list as VLAN 77 comes and goes).
#   - vm0: mlx5_0's port counters (ib_core's PMA counters) count the RDMA traffic, every
#     one of them reads, and mlx5_core logged no failed command at all.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bringup-common.sh"      # vcx_state, state_field
. "$(dirname "$0")/verbs-common.sh"        # vcx_roce_v2_gid

[ "${VCX_VMS:-1}" = 2 ] || fail "stock-mlx5.sh needs two VMs (./vcx vm --vms 2)"
me=$VCX_VM_INDEX other=$((1 - VCX_VM_INDEX))
IP4=192.168.77.$((me + 1)) PEER4=192.168.77.$((other + 1))
IP6=fd77::$((me + 1)) PEER6=fd77::$((other + 1))
PORT=18900
WAIT=600
XFER="python3 $(dirname "$0")/net-xfer.py"
log() { echo "# vm$me: $*"; }

# The netdev a PCI driver registered for the device, or nothing.
netdev_of() { # DRIVER
	local d
	for d in /sys/bus/pci/drivers/"$1"/0000:*/net/*; do
		[ -e "$d" ] && { basename "$d"; return 0; }
	done
	return 0
}

wait_for() { # WHAT TENTHS CMD...
	local what=$1 n=$2 i
	shift 2
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	fail "$what"
}

if [ "$me" = 0 ]; then
	modprobe mlx5_core && modprobe mlx5_ib || fail "modprobe mlx5_core mlx5_ib"
	has_if() { IF=$(netdev_of mlx5_core); [ -n "$IF" ]; }
	wait_for "mlx5e registered no netdev in 15 s: $(dmesg | grep mlx5 | tail -5)" 150 has_if
	DEV=mlx5_0
else
	rmmod mlx5_ib 2>/dev/null || true
	rmmod mlx5_core 2>/dev/null || true
	modprobe vcx || fail "modprobe vcx"
	echo "15b3 1017" >/sys/bus/pci/drivers/vcx/new_id || fail "new_id 15b3 1017 for vcx"
	has_if() { IF=$(netdev_of vcx); [ -n "$IF" ]; }
	wait_for "vcx.ko registered no netdev in 15 s: $(dmesg | grep vcx | tail -5)" 150 has_if
	DEV=vcx_0
fi
drv=$(ethtool -i "$IF" | sed -n 's/^driver: //p')
log "$IF ($drv), RDMA device $DEV"
ip addr flush dev "$IF"
ip addr add "$IP4/24" dev "$IF" && ip -6 addr add "$IP6/64" dev "$IF" nodad &&
	ip link set "$IF" up || fail "addresses on $IF"
carrier() { [ "$(cat "/sys/class/net/$IF/carrier" 2>/dev/null)" = 1 ]; }
wait_for "no carrier on $IF in 10 s" 100 carrier
if [ "$me" = 0 ]; then
	active() { grep -q 'state ACTIVE' <<<"$(rdma link show "$DEV/1" 2>&1)"; }
	wait_for "$DEV/1 not ACTIVE in 10 s: $(rdma link show 2>&1)" 100 active
	gid() { grep -q "ffff:c0a8:4d01" /sys/class/infiniband/$DEV/ports/1/gids/* 2>/dev/null; }
	wait_for "no RoCE GID for $IP4 on $DEV in 10 s" 100 gid
	log "$DEV/1 ACTIVE with the GID of $IP4"
fi
$XFER serve $PORT >/tmp/xfer-serve.log 2>&1 &
wait_for "the transfer server did not start: $(cat /tmp/xfer-serve.log)" 100 tcp_listening $PORT
vm_signal up
vm_wait up $WAIT >/dev/null

send_to() { # ADDR SIZE
	local out
	out=$(timeout 600 $XFER --deadline 540 send "$1" $PORT "$2" "vm$me-$2-$RANDOM" 2>&1) ||
		fail "TCP transfer of $2 to $1 over $IF: $out"
	log "to $1: $(head -1 <<<"$out")"
}
# vm0 first, then vm1: the other serves meanwhile.
in_turn() { # NAME CMD...
	local name=$1
	shift
	[ "$me" = 0 ] || vm_wait "$name" $WAIT >/dev/null
	"$@"
	vm_signal "$name"
	[ "$me" = 1 ] || vm_wait "$name" $WAIT >/dev/null
}

out=$(ping -c 3 -i 0.3 -W 2 -w 30 "$PEER4" 2>&1) || fail "ping $PEER4: $(tail -2 <<<"$out")"
out=$(ping -6 -c 3 -i 0.3 -W 2 -w 30 "$PEER6" 2>&1) || fail "ping -6 $PEER6: $(tail -2 <<<"$out")"
log "ping and ping6 to vm$other"
in_turn xfer send_to "$PEER4" 16M

ip link add link "$IF" name "$IF.77" type vlan id 77 &&
	ip addr add "192.168.78.$((me + 1))/24" dev "$IF.77" && ip link set "$IF.77" up ||
	fail "creating $IF.77"
vm_signal vlan-up
vm_wait vlan-up $WAIT >/dev/null
out=$(ping -c 3 -i 0.3 -W 2 -w 30 "192.168.78.$((other + 1))" 2>&1) ||
	fail "ping over $IF.77: $(tail -2 <<<"$out")"
in_turn vlan-xfer send_to "192.168.78.$((other + 1))" 4M
ip link del "$IF.77"
if [ "$me" = 0 ]; then
	! dmesg | grep -E "MODIFY_NIC_VPORT_CONTEXT\(0x755\).*failed" ||
		fail "mlx5_core logged failed vport context changes (above)"
fi

# hardware timestamps on both netdevs (mlx5e's and vcx.ko's, each on its device's PTP
# clock from the CQEs' timer): each VM receives in turn what the other sends
ts_round() { # RECEIVER_VM PORT
	local rx_vm=$1 port=$2 pid out
	if [ "$me" = "$rx_vm" ]; then
		python3 "$(dirname "$0")/net-hwtstamp.py" recv "$IF" $port 20 >/tmp/ts.out 2>&1 &
		pid=$!
		udp_bound() { grep -q ":$(printf %04X $port) " /proc/net/udp; }
		wait_for "the timestamp receiver did not bind in 30 s" 300 udp_bound
		vm_signal "ts$port"
		wait $pid || fail "hardware timestamps, receiving on $IF: $(cat /tmp/ts.out)"
		log "$(cat /tmp/ts.out)"
	else
		vm_wait "ts$port" $WAIT >/dev/null
		out=$(python3 "$(dirname "$0")/net-hwtstamp.py" send "$IF" "$PEER4" $port 30 2>&1) ||
			fail "hardware timestamps, sending on $IF: $out"
		log "$out"
	fi
}
ts_round 1 19501
ts_round 0 19502

if [ "$me" = 0 ]; then
	s=$(ethtool -S "$IF") || fail "ethtool -S $IF"
	for c in rx_csum_complete rx_removed_vlan_packets tx_added_vlan_packets; do
		v=$(awk -v f="$c:" '$1 == f { print $2; exit }' <<<"$s")
		[ "${v:-0}" -gt 0 ] || fail "mlx5e's $c is ${v:-missing} after the transfers"
		log "mlx5e $c: $v"
	done
	# the port's counters (PPCNT): what crossed the MAC, FCS included
	phy() { awk -v f="$1:" '$1 == f { print $2; exit }' <<<"$s"; }
	for c in rx_packets_phy tx_packets_phy tx_bytes_phy rx_1519_to_2047_bytes_phy \
		rx_1024_to_1518_bytes_phy rx_64_bytes_phy; do
		[ "$(phy $c)" -gt 0 ] 2>/dev/null || fail "mlx5e's $c is $(phy $c) after the transfers"
	done
	[ "$(phy rx_bytes_phy)" -gt $((16 << 20)) ] ||
		fail "mlx5e's rx_bytes_phy $(phy rx_bytes_phy) is under the 16 MiB received"
	log "mlx5e port counters: rx $(phy rx_packets_phy) frames $(phy rx_bytes_phy) bytes," \
		"tx $(phy tx_packets_phy) frames $(phy tx_bytes_phy) bytes"
	! dmesg | grep -E "ACCESS_REG\(0x805\).*failed" ||
		fail "mlx5_core logged failed register accesses (above)"
	# the internal timer (device_frequency_khz): mlx5_core's PTP hardware clock
	grep -qx mlx5_ptp /sys/class/ptp/ptp*/clock_name 2>/dev/null ||
		fail "no mlx5_ptp hardware clock: $(dmesg | grep -i -m3 'clock\|frequency')"

	# user-space RDMA on the stock stack: libmlx5 over mlx5_ib, server and client on
	# mlx5_0 (loopback through the device)
	G=$(vcx_roce_v2_gid $DEV "$IP4") || fail "no RoCE v2 GID of $IP4 on $DEV"
	uport=18950
	user_pair() { # NAME CMD...: server, then the client to localhost; both must succeed
		local name=$1 srv
		shift
		uport=$((uport + 1))
		timeout 120 "$@" -p $uport >/tmp/u-srv.out 2>&1 &
		srv=$!
		for _ in $(seq 100); do tcp_listening $uport && break; sleep 0.1; done
		timeout 120 "$@" -p $uport localhost >/tmp/u-cli.out 2>&1 ||
			fail "$name on $DEV (libmlx5) failed: $(tail -3 /tmp/u-cli.out)"
		wait $srv || fail "$name server on $DEV failed: $(tail -3 /tmp/u-srv.out)"
	}
	for t in "ibv_rc_pingpong -s 4096 -t" "ibv_uc_pingpong -s 4096" "ibv_ud_pingpong -s 1024" \
		"ibv_srq_pingpong -q 4 -s 4096"; do
		user_pair "$t" $t -d $DEV -g "$G" -n 200 -c
		grep -q "200 iters in" /tmp/u-cli.out || fail "$t: $(tail -2 /tmp/u-cli.out)"
		log "$DEV (libmlx5) $t -c: $(grep -m1 'iters in' /tmp/u-cli.out)"
		case $t in *" -t") # completion timestamps: between two receive CQEs, time passed
			avg=$(awk -F'= ' '/^Average receive completion clock cycles/ { print $2 }' \
				/tmp/u-cli.out)
			awk -v a="${avg:-0}" 'BEGIN { exit !(a > 0) }' ||
				fail "$t: receive CQEs carry no advancing timestamp: $(tail -3 /tmp/u-cli.out)"
			log "$DEV (libmlx5) $t: $avg timer ticks between receive CQEs on average" ;;
		esac
	done
	for t in ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw; do
		user_pair "$t" $t -d $DEV -x "$G" -F -D 1
		bw=$(grep -A1 '#bytes' /tmp/u-cli.out | awk 'NR == 2 { print $4 }')
		awk -v b="${bw:-0}" 'BEGIN { exit !(b > 0) }' ||
			fail "$t on $DEV: no figure: $(tail -3 /tmp/u-cli.out)"
		log "$DEV (libmlx5) $t: $bw MB/s"
	done
fi

# RDMA between the two stacks over the link, RoCE v2 frames both ways: vm0's stock
# libmlx5 and mlx5_ib on mlx5_0, vm1's vcx provider and vcx.ko on vcx_0, each side serving
# in turn. In vm1, libmlx5 would claim vcx_0 by its ConnectX ID before the vcx provider is
# tried: its configuration goes, as on a board that vcx.ko drives (docs/provider.md).
[ "$me" = 0 ] || rm -f /etc/libibverbs.d/mlx5.driver
XG=$(vcx_roce_v2_gid $DEV "$IP4") || fail "no RoCE v2 GID of $IP4 on $DEV"
xport=19000
stack() { [ "$1" = 0 ] && echo "vm0 (mlx5_0, libmlx5)" || echo "vm1 (vcx_0, vcx provider)"; }
tcp_ready() { tcp_listening $xport; }
cm_ready() { grep -q "link $DEV/1 .*state LISTEN" <<<"$(rdma res show cm_id 2>/dev/null)"; }
# cross_pair NAME SERVER_VM READY SERVER_CMD CLIENT_CMD: SERVER_CMD in SERVER_VM until
# READY (a command) says it listens, then CLIENT_CMD in the other VM; both must succeed.
cross_pair() {
	local name=$1 srv_vm=$2 ready=$3 srv
	xport=$((xport + 1))
	if [ "$me" = "$srv_vm" ]; then
		timeout 120 $4 >/tmp/x-srv.out 2>&1 &
		srv=$!
		wait_for "$name: the server did not listen in 60 s" 600 $ready
		vm_signal "x$xport"
		wait $srv || fail "$name, server on $DEV: $(tail -3 /tmp/x-srv.out)"
		vm_wait "x$xport-done" $WAIT >/dev/null
	else
		vm_wait "x$xport" $WAIT >/dev/null
		timeout 120 $5 >/tmp/x-cli.out 2>&1 ||
			fail "$name, client on $DEV to vm$other: $(tail -3 /tmp/x-cli.out)"
		vm_signal "x$xport-done"
	fi
}
for srv_vm in 1 0; do
	for t in "ibv_rc_pingpong -s 4096" "ibv_ud_pingpong -s 1024" \
		"ibv_srq_pingpong -q 4 -s 4096"; do
		args="-d $DEV -g $XG -n 200 -c -p $((xport + 1))"
		cross_pair "$t" $srv_vm tcp_ready "$t $args" "$t $args $PEER4"
		[ "$me" = "$srv_vm" ] && continue
		grep -q "200 iters in" /tmp/x-cli.out || fail "$t: $(tail -2 /tmp/x-cli.out)"
		log "$t -c, $(stack $me) to $(stack $other): $(grep -m1 'iters in' /tmp/x-cli.out)"
	done
	# rdma_cm: address and route resolution, connection, payload validated on both sides
	args="-C 100 -S 1024 -V -p $((xport + 1))"
	cross_pair rping $srv_vm cm_ready "rping -s -a $IP4 $args" "rping -c -a $PEER4 $args"
	[ "$me" = "$srv_vm" ] || log "rping -C 100 -V, $(stack $me) to $(stack $other)"
done
if [ "$me" = 0 ]; then
	# ib_core's port counters: mlx5_ib answers the PMA from QUERY_VPORT_COUNTER's ib
	# counters (the cap vport_counters), the RoCE frames of the port
	cnt=/sys/class/infiniband/$DEV/ports/1/counters
	for c in port_xmit_data port_rcv_data port_xmit_packets port_rcv_packets; do
		v=$(cat $cnt/$c 2>/dev/null)
		[ "${v:-0}" -gt 0 ] 2>/dev/null || fail "$DEV's $c is '${v:-missing}' after RDMA"
	done
	for f in $cnt/*; do	# the error counters come from PPCNT's IB port counters group
		cat "$f" >/dev/null || fail "reading $f failed"
	done
	log "$DEV port counters: xmit $(cat $cnt/port_xmit_packets) packets" \
		"$(($(cat $cnt/port_xmit_data) * 4)) bytes, rcv $(cat $cnt/port_rcv_packets)" \
		"packets $(($(cat $cnt/port_rcv_data) * 4)) bytes"
	! dmesg | grep "mlx5_cmd_out_err" || fail "mlx5_core logged failed commands (above)"
fi

kernel_log_clean || fail "kernel warnings or oopses in vm$me (above)"
vm_signal checked
vm_wait checked $WAIT >/dev/null
if [ "$me" = 0 ]; then
	rmmod mlx5_ib && rmmod mlx5_core || fail "unloading mlx5_ib and mlx5_core"
	st=$(vcx_state)
	for f in tds tises tirs rqts sqs rqs fts fgs ftes; do
		[ "$(state_field "$st" $f)" = 0 ] || fail "after rmmod: device state $f is not 0: $st"
	done
	kernel_log_clean || fail "kernel warnings or oopses in vm0 at unload (above)"
	log "mlx5_ib and mlx5_core unloaded; no NIC object left in the device"
fi
vm_signal done
vm_wait done $WAIT >/dev/null
pass "vm$me ($drv): stock mlx5 against vcx.ko, IP, TCP, VLAN"
