#!/bin/bash
# Two VMs on the vcx link (./vcx vm --vms 2, docs/networking.md): both VMs run this script
# and meet through their shared directory (vm_signal / vm_wait, tests/guest/lib.sh).
# Usage: net-link.sh full|peer|any
#   full: vcx0 in both VMs. ping and ping6 both ways; a verified TCP transfer (NET_BULK,
#         default 256 MiB, sha256 compared by the receiver) each way at MTU 1500 and 9000,
#         with ethtool -S (the driver's rings, the device's vport and port counters, and
#         the standard eth-mac and rmon groups) and the
#         netdev statistics agreeing with the bytes sent, and the sender's TCP segmented
#         by the device (LSO WQEs counted); link
#         down and up through vm0's monitor (set_link vcxnet): carrier follows within a
#         second, nothing passes while down, traffic resumes; 20 reloads of vcx.ko in vm0
#         with traffic after each and the device's NIC objects gone after each unload.
#   peer: vcx0 in vm0, a plain virtio-net in vm1 (--peer virtio): ping, ping6 and the
#         transfer both ways at MTU 1500, vcx0's counters checked.
#   Both: vcx0's completion moderation (ethtool -c/-C): mlx5e's defaults (adaptive, RX
#         periods from the first CQE), refusals, static values and period modes read
#         back; adaptive again for the transfers, which must make DIM change the CQs.
#         A VLAN (IF.77, 192.168.78.N/24, fd78::N/64): ping both families and a verified
#         transfer each way with vcx0's VLAN offloads on (the device strips and inserts
#         the tags: the rings' vlan counters grow) and off (they do not).
#   any:  whatever each VM has on the link, no check of it (to try the runner by hand,
#         e.g. --link-nics virtio,virtio); NET_STEPS picks steps then.
# NET_CAPTURE=1: the runner's --capture filter (/objects/vcxcap) is on; vm0 turns it off
# around the bulk transfers, so the capture holds ARP, ND, ICMP and short TCP transfers
# at both MTUs and stays small (tests/guest/net-check reads it with tshark).
# The link carries only this run's two VMs; all addresses are the runner's defaults
# (192.168.77.N/24, fd77::N/64 with N = VM index + 1).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bringup-common.sh"

mode=${1:?usage: net-link.sh full|peer|any}
case "$mode" in
full) steps="setup ping coalesce small capture-off bulk-1500 vlan jumbo bulk-9000 mtu-1500 link reload" ;;
peer) steps="setup ping coalesce small capture-off bulk-1500 vlan" ;;
any) steps="setup ping small capture-off bulk-1500" ;;
*) fail "unknown mode $mode" ;;
esac
steps=${NET_STEPS:-$steps}
[ "${VCX_VMS:-1}" = 2 ] || fail "net-link.sh needs two VMs (./vcx vm --vms 2)"

me=$VCX_VM_INDEX other=$((1 - VCX_VM_INDEX))
IP4=192.168.77.$((me + 1)) IP6=fd77::$((me + 1))
PEER4=192.168.77.$((other + 1)) PEER6=fd77::$((other + 1))
PORT=18800
BULK=${NET_BULK:-256M}
IF=${VCX_LINK_IF:-}
XFER="python3 $(dirname "$0")/net-xfer.py"
# Generous bounds for a machine shared with other VMs; every wait below has one.
WAIT=1200

log() { echo "# vm$me: $*"; }

# Bytes of SIZE (K/M/G suffix).
bytes_of() { numfmt --from=iec "$1"; }

is_vcx() { [ "$IF" = vcx0 ]; }

carrier() { cat "/sys/class/net/$IF/carrier" 2>/dev/null || echo -; }

# Wait up to MS milliseconds for carrier VALUE; prints the milliseconds it took.
wait_carrier() { # VALUE MS
	local t0 now
	t0=$(date +%s%N)
	while :; do
		now=$(date +%s%N)
		[ "$(carrier)" = "$1" ] && { echo $(((now - t0) / 1000000)); return 0; }
		[ $(((now - t0) / 1000000)) -lt "$2" ] || return 1
		sleep 0.01
	done
}

# vm0 runs CMD, then vm1 does; both return once both have run it.
in_turn() { # NAME TIMEOUT CMD...
	local name=$1 t=$2
	shift 2
	[ "$me" = 0 ] || vm_wait "$name" "$t" >/dev/null
	"$@"
	vm_signal "$name"
	[ "$me" = 1 ] || vm_wait "$name" "$t" >/dev/null
}

# A verified transfer of SIZE to the other VM's server at ADDR (net-xfer.py).
send_to() { # ADDR SIZE
	local out
	out=$(timeout 900 $XFER --deadline 840 send "$1" $PORT "$2" "vm$me-$2-$RANDOM" 2>&1) ||
		fail "TCP transfer of $2 to $1 over $IF (MTU $(cat /sys/class/net/$IF/mtu)): $out"
	log "to $1: $(head -1 <<<"$out")"
}

capture() { # on|off (vm0, with NET_CAPTURE=1 only)
	[ "${NET_CAPTURE:-0}" = 1 ] && [ "$me" = 0 ] || return 0
	images/vcx-hostcall hmp "qom-set /objects/vcxcap status $1" >/dev/null ||
		fail "cannot turn the capture $1"
}

# tx bytes, tx packets, rx bytes, rx packets of the interface: the driver's ring totals
# from ethtool -S (ethtool), the device's vport unicast counters from ethtool -S (vport),
# the port's counters at the MAC, PPCNT (phy: every frame, FCS included), or the netdev
# statistics (sysfs).
counters() { # ethtool|vport|phy|sysfs
	local f v out=""
	if [ "$1" != sysfs ]; then
		local s names=(tx_bytes tx_packets rx_bytes rx_packets)
		[ "$1" != vport ] || names=(tx_vport_unicast_bytes tx_vport_unicast_packets
			rx_vport_unicast_bytes rx_vport_unicast_packets)
		[ "$1" != phy ] || names=(tx_bytes_phy tx_packets_phy rx_bytes_phy rx_packets_phy)
		s=$(ethtool -S "$IF") || fail "ethtool -S $IF"
		for f in "${names[@]}"; do
			v=$(awk -v f="$f:" '$1 == f { print $2; exit }' <<<"$s")
			[ -n "$v" ] || fail "ethtool -S $IF has no $f: $(tr -s ' \n' ' ' <<<"$s" | cut -c1-400)"
			out="$out $v"
		done
	else
		for f in tx_bytes tx_packets rx_bytes rx_packets; do
			out="$out $(cat "/sys/class/net/$IF/statistics/$f")"
		done
	fi
	echo $out
}

# LSO WQEs the driver posted on all its rings (tx<n>_tso_packets of ethtool -S).
tso_wqes() {
	local s
	s=$(ethtool -S "$IF") || fail "ethtool -S $IF"
	awk '$1 ~ /^tx[0-9]+_tso_packets:$/ { n += $2 } END { print n + 0 }' <<<"$s"
}

# The counters' growth over one exchange of PAYLOAD bytes each way at MTU agrees with it:
# each direction carried the payload in frames of at most MTU - 40 bytes of it plus 54 or
# more of headers, and the other direction's ACKs add at most one frame per data frame.
# Bounds: bytes in [payload, 1.15 payload], packets in [payload / (MTU - 40),
# 2.2 payload / (MTU - 52) + 2000]; a counter that misses frames or counts one twice
# falls outside.
check_counters() { # WHAT BEFORE AFTER PAYLOAD MTU
	local what=$1 payload=$4 mtu=$5 i name d lo hi
	local -a b=($2) a=($3) names=(tx_bytes tx_packets rx_bytes rx_packets)
	for i in 0 1 2 3; do
		name=${names[$i]}
		d=$((a[i] - b[i]))
		case $name in
		*_bytes) lo=$payload hi=$((payload * 115 / 100)) ;;
		*_packets) lo=$((payload / (mtu - 40))) hi=$((payload * 22 / 10 / (mtu - 52) + 2000)) ;;
		esac
		[ "$d" -ge "$lo" ] && [ "$d" -le "$hi" ] ||
			fail "$what $name grew by $d over $payload bytes each way at MTU $mtu (expected $lo..$hi)"
	done
	log "$what: tx +$((a[0] - b[0])) B / +$((a[1] - b[1])) pkts, rx +$((a[2] - b[2])) B / +$((a[3] - b[3])) pkts for $payload B each way"
}

step_setup() {
	log "link interface '${IF:-none}', addresses ${VCX_LINK_ADDRS:-none}"
	[ -n "$IF" ] || fail "the vcx link's interface did not come up at boot (images/guest-init; vcx.ko loaded: $(lsmod | grep -c '^vcx ' || true))"
	# Outputs are read whole before grep (lib.sh, dmesg_has: pipefail and SIGPIPE).
	local addrs
	addrs=$(ip addr show dev "$IF")
	grep -q "inet $IP4/24 " <<<"$addrs" || fail "$IF lacks $IP4/24: $addrs"
	grep -q "inet6 $IP6/64 " <<<"$addrs" || fail "$IF lacks $IP6/64: $addrs"
	if [ "$mode" != any ]; then
		if [ "$me" = 0 ] || [ "$mode" = full ]; then
			is_vcx || fail "vm$me: expected vcx0 on the link, found $IF"
			[ "$(ethtool -i "$IF" | sed -n 's/^driver: //p')" = vcx ] ||
				fail "$IF is not driven by vcx: $(ethtool -i "$IF" | head -1)"
		else
			[ "$(ethtool -i "$IF" | sed -n 's/^driver: //p')" = virtio_net ] ||
				fail "vm1: expected a virtio-net peer, found $IF: $(ethtool -i "$IF" | head -1)"
		fi
	fi
	wait_carrier 1 10000 >/dev/null || fail "$IF has no carrier 10 s after boot"
	$XFER serve $PORT >/tmp/net-serve.log 2>&1 &
	for _ in $(seq 100); do
		tcp_listening $PORT && break
		sleep 0.1
	done
	tcp_listening $PORT || fail "the transfer server did not start: $(cat /tmp/net-serve.log)"
	vm_signal ready
	vm_wait ready 300 >/dev/null
}

step_ping() {
	local out
	out=$(ping -c 3 -i 0.3 -W 2 -w 30 "$PEER4" 2>&1) ||
		fail "ping $PEER4 over $IF: $(tail -2 <<<"$out" | tr '\n' ' '); neighbours: $(ip neigh show dev "$IF" | tr '\n' ' ')"
	log "ping $PEER4: $(grep -o '[0-9]* received' <<<"$out")"
	out=$(ping -6 -c 3 -i 0.3 -W 2 -w 30 "$PEER6" 2>&1) ||
		fail "ping -6 $PEER6 over $IF: $(tail -2 <<<"$out" | tr '\n' ' '); neighbours: $(ip -6 neigh show dev "$IF" | tr '\n' ' ')"
	log "ping -6 $PEER6: $(grep -o '[0-9]* received' <<<"$out")"
	vm_signal ping
	vm_wait ping $WAIT >/dev/null
}

# Completion moderation of vcx0's CQs (ethtool -c/-C, docs/driver.md): the defaults, a
# refused period, and other values, which the transfers after this step run with.
# ethtool -c shows each FIELD:VALUE ("rx-usecs:8"; "Adaptive RX:on" and "CQE mode TX:off"
# from its lines "Adaptive RX: on  TX: on" and "CQE mode RX: on  TX: off").
coal_is() { # CONTEXT FIELD:VALUE...
	local c f key line ctx=$1
	shift
	c=$(ethtool -c "$IF") || fail "ethtool -c $IF"
	for f in "$@"; do
		key=${f%:*}
		case "$f" in
		Adaptive*|CQE*)
			line=$(grep -m1 "^${key% *} RX:" <<<"$c" || true)
			grep -Eq "(^| )${key##* }:[[:space:]]+${f##*:}( |\$)" <<<"$line" ;;
		*)
			grep -Eq "^$key:[[:space:]]+${f##*:}\$" <<<"$c" ;;
		esac || fail "ethtool -c $IF $ctx: no $f: $(tr '\n' ' ' <<<"$c")"
	done
}

# vcx0's completion moderation (docs/driver.md): mlx5e's defaults with the device's caps
# (adaptive on both ways from DIM's default profiles, RX periods from the first CQE),
# refusals, static values, the period mode, then adaptive again for the transfers after,
# where bulk_dim checks that DIM changed the CQs' moderation.
step_coalesce() {
	is_vcx || return 0
	coal_is "(defaults)" "Adaptive RX:on" "Adaptive TX:on" "CQE mode RX:on" "CQE mode TX:off" \
		rx-usecs:8 rx-frames:128 tx-usecs:8 tx-frames:128
	! ethtool -C "$IF" adaptive-rx off rx-usecs 5000 2>/dev/null ||
		fail "ethtool -C $IF rx-usecs 5000 accepted (at most 4095)"
	! ethtool -C "$IF" rx-usecs 9 2>/dev/null ||
		fail "ethtool -C $IF rx-usecs 9 accepted under adaptive-rx"
	ethtool -C "$IF" adaptive-rx off adaptive-tx off rx-usecs 8 rx-frames 4 tx-usecs 3 tx-frames 64 ||
		fail "ethtool -C $IF adaptive-rx off adaptive-tx off rx-usecs 8 rx-frames 4 tx-usecs 3 tx-frames 64"
	coal_is "(static)" "Adaptive RX:off" "Adaptive TX:off" rx-usecs:8 rx-frames:4 tx-usecs:3 tx-frames:64
	ethtool -C "$IF" cqe-mode-rx off || fail "ethtool -C $IF cqe-mode-rx off"
	coal_is "(cqe-mode-rx off)" "CQE mode RX:off" rx-usecs:16 rx-frames:32 tx-usecs:3 tx-frames:64
	ethtool -C "$IF" adaptive-rx on adaptive-tx on cqe-mode-rx on ||
		fail "ethtool -C $IF adaptive-rx on adaptive-tx on cqe-mode-rx on"
	coal_is "(adaptive again)" "Adaptive RX:on" "Adaptive TX:on" "CQE mode RX:on" \
		rx-usecs:8 rx-frames:128 tx-usecs:8 tx-frames:128
	# From here on every MODIFY_CQ of the driver is DIM's (its work item).
	echo vcx_cq_modify_moderation >/sys/kernel/tracing/set_ftrace_filter &&
		echo function >/sys/kernel/tracing/current_tracer ||
		fail "function tracing of vcx_cq_modify_moderation"
	log "ethtool -c/-C: defaults, refusals, static values and period modes as set; adaptive on"
}

# After the first bulk transfer: DIM moved vcx0's CQs to other profiles (MODIFY_CQ from
# its work item), and none of those commands failed.
bulk_dim() {
	local n
	is_vcx && [ "$(cat /sys/kernel/tracing/current_tracer)" = function ] || return 0
	n=$(grep -c 'vcx_cq_modify_moderation' /sys/kernel/tracing/trace || true)
	echo nop >/sys/kernel/tracing/current_tracer
	echo >/sys/kernel/tracing/set_ftrace_filter
	[ "$n" -gt 0 ] || fail "adaptive moderation: no MODIFY_CQ by DIM during $BULK of TCP"
	! dmesg | grep -q "adaptive moderation of CQ" ||
		fail "adaptive moderation: $(dmesg | grep -m1 'adaptive moderation of CQ')"
	log "adaptive moderation: $n MODIFY_CQ by DIM during the transfers"
}

step_small() {
	small() { send_to "$PEER4" 1M; send_to "$PEER6" 1M; }
	in_turn small $WAIT small
}

step_capture-off() { capture off; }

set_mtu() {
	ip link set "$IF" mtu "$1" || fail "ip link set $IF mtu $1"
	vm_signal "mtu-$1"
	vm_wait "mtu-$1" $WAIT >/dev/null
}

bulk() { # MTU
	local e0 v0 p0 s0 e1 v1 p1 s1 l0 l1
	set_mtu "$1"
	if is_vcx; then
		l0=$(tso_wqes) e0=$(counters ethtool) v0=$(counters vport) p0=$(counters phy)
		s0=$(counters sysfs)
	fi
	# Neither sends before both have their baselines: vm0's transfer starts at once, and
	# frames it delivered while vm1 was still reading (ethtool -S twice, then sysfs) were
	# missing from vm1's later counts.
	vm_signal "bulk-$1-base"
	vm_wait "bulk-$1-base" $WAIT >/dev/null
	in_turn "bulk-$1" $WAIT send_to "$PEER4" "$BULK"
	if is_vcx; then
		e1=$(counters ethtool) v1=$(counters vport) p1=$(counters phy) s1=$(counters sysfs)
		check_counters "ethtool -S $IF (rings)" "$e0" "$e1" "$(bytes_of "$BULK")" "$1"
		check_counters "ethtool -S $IF (device vport, unicast)" "$v0" "$v1" "$(bytes_of "$BULK")" "$1"
		check_counters "ethtool -S $IF (device port, *_phy)" "$p0" "$p1" "$(bytes_of "$BULK")" "$1"
		# the same PPCNT through ethtool's standard groups: octets and the size bin of
		# full frames at this MTU (FCS included: 1518 or 9018 bytes)
		local g bin o h
		g=$(ethtool -S "$IF" --groups eth-mac rmon) || fail "ethtool -S $IF --groups eth-mac rmon"
		bin=1024to1518
		[ "$1" -le 1500 ] || bin=8192to10239
		o=$(awk '$1 == "eth-mac-OctetsReceivedOK:" { print $2 }' <<<"$g")
		h=$(awk -v f="rx-rmon-etherStatsPkts${bin}Octets:" '$1 == f { print $2 }' <<<"$g")
		[ "${o:-0}" -ge "$(bytes_of "$BULK")" ] && [ "${h:-0}" -ge $(($(bytes_of "$BULK") / $1 / 2)) ] ||
			fail "ethtool --groups eth-mac rmon: OctetsReceivedOK ${o:-missing}, ${bin} frames ${h:-missing} after $BULK"
		log "eth-mac OctetsReceivedOK $o, rmon ${bin} frames $h"
		check_counters "$IF statistics" "$s0" "$s1" "$(bytes_of "$BULK")" "$1"
		# The device segments TCP (max_lso_cap): the stack hands the driver GSO packets.
		l1=$(tso_wqes)
		[ "$l1" -gt "$l0" ] ||
			fail "no LSO WQE posted for $BULK of TCP at MTU $1 ($(ethtool -k "$IF" | grep tcp-segmentation))"
		log "LSO WQEs posted: $((l1 - l0))"
	fi
	vm_signal "bulk-$1-done"
	vm_wait "bulk-$1-done" $WAIT >/dev/null
}

step_bulk-1500() { bulk 1500; bulk_dim; }
step_bulk-9000() { bulk 9000; }
step_mtu-1500() { set_mtu 1500; }

# MTU 9000: full-size frames with DF both ways (IPv4 8972 + 28, IPv6 8952 + 48), and a
# short transfer of full frames, captured.
step_jumbo() {
	local out
	set_mtu 9000
	capture on
	out=$(ping -M do -s 8972 -c 2 -W 2 -w 30 "$PEER4" 2>&1) ||
		fail "9000-byte IPv4 packets (DF) to $PEER4: $(tail -2 <<<"$out" | tr '\n' ' ')"
	out=$(ping -6 -M do -s 8952 -c 2 -W 2 -w 30 "$PEER6" 2>&1) ||
		fail "9000-byte IPv6 packets to $PEER6: $(tail -2 <<<"$out" | tr '\n' ' ')"
	log "9000-byte pings both families to vm$other"
	jumbo_small() { send_to "$PEER4" 1M; }
	in_turn jumbo $WAIT jumbo_small
	capture off
}

# The tags vcx0's rings added on send and the RQs stripped on receive, summed over the
# rings (tx<n>_added_vlan_packets, rx<n>_removed_vlan_packets of ethtool -S).
vlan_tags() {
	local s
	s=$(ethtool -S "$IF") || fail "ethtool -S $IF"
	awk '$1 ~ /^tx[0-9]+_added_vlan_packets:$/ { t += $2 }
	     $1 ~ /^rx[0-9]+_removed_vlan_packets:$/ { r += $2 } END { print t + 0, r + 0 }' <<<"$s"
}

# One round over the VLAN: ping both families, then a verified transfer each way.
vlan_round() { # WHAT SIZE
	local out
	out=$(ping -c 2 -i 0.3 -W 2 -w 30 "192.168.78.$((other + 1))" 2>&1) ||
		fail "$1: ping over $IF.77: $(tail -2 <<<"$out" | tr '\n' ' ')"
	out=$(ping -6 -c 2 -i 0.3 -W 2 -w 30 "fd78::$((other + 1))" 2>&1) ||
		fail "$1: ping -6 over $IF.77: $(tail -2 <<<"$out" | tr '\n' ' ')"
	vlan_xfer() { send_to "192.168.78.$((other + 1))" "$2"; }
	in_turn "vlan-$1" $WAIT vlan_xfer "$@"
}

# VLAN 77 on the link: vcx0's offloads on (its default) and off; a virtio-net peer
# (peer mode) keeps its own settings.
step_vlan() {
	local k t0 t1 t2
	ip link add link "$IF" name "$IF.77" type vlan id 77 &&
		ip addr add "192.168.78.$((me + 1))/24" dev "$IF.77" &&
		ip -6 addr add "fd78::$((me + 1))/64" dev "$IF.77" nodad &&
		ip link set "$IF.77" up || fail "creating $IF.77"
	if is_vcx; then
		k=$(ethtool -k "$IF")
		grep -q '^rx-vlan-offload: on$' <<<"$k" && grep -q '^tx-vlan-offload: on$' <<<"$k" ||
			fail "vcx0's VLAN offloads are not on by default: $(grep vlan <<<"$k" | tr '\n' ' ')"
		t0=$(vlan_tags)
	fi
	vm_signal vlan-up
	vm_wait vlan-up $WAIT >/dev/null
	vlan_round offload 16M
	if is_vcx; then
		t1=$(vlan_tags)
		[ "${t1% *}" -gt "${t0% *}" ] && [ "${t1#* }" -gt "${t0#* }" ] ||
			fail "VLAN offloads on: tags added/stripped by the device went from $t0 to $t1"
		log "VLAN 77, offloads on: the device added $((${t1% *} - ${t0% *})) and stripped $((${t1#* } - ${t0#* })) tags"
		ethtool -K "$IF" rxvlan off txvlan off || fail "ethtool -K $IF rxvlan off txvlan off"
	fi
	vm_signal vlan-off
	vm_wait vlan-off $WAIT >/dev/null
	vlan_round software 4M
	if is_vcx; then
		t2=$(vlan_tags)
		[ "$t2" = "$t1" ] || fail "VLAN offloads off: the device's tag counters moved ($t1 to $t2)"
		log "VLAN 77, offloads off: the stack tagged the frames, the device's counters stayed"
		ethtool -K "$IF" rxvlan on txvlan on || fail "ethtool -K $IF rxvlan on txvlan on"
	fi
	vm_signal vlan-done
	vm_wait vlan-done $WAIT >/dev/null
	ip link del "$IF.77" || fail "deleting $IF.77"
}

# Link down and up through vm0's monitor; vm1 waits.
step_link() {
	if [ "$me" = 0 ]; then
		local ms out
		images/vcx-hostcall hmp "set_link vcxnet off" >/dev/null || fail "set_link vcxnet off"
		ms=$(wait_carrier 0 1000) || fail "carrier still $(carrier) 1 s after set_link vcxnet off"
		log "carrier lost ${ms} ms after set_link off"
		! ping -c 2 -W 1 -w 3 "$PEER4" >/dev/null 2>&1 || fail "ping to $PEER4 answered with the link down"
		images/vcx-hostcall hmp "set_link vcxnet on" >/dev/null || fail "set_link vcxnet on"
		ms=$(wait_carrier 1 1000) || fail "carrier still $(carrier) 1 s after set_link vcxnet on"
		log "carrier back ${ms} ms after set_link on"
		out=$(ping -c 1 -W 1 -w 15 "$PEER4" 2>&1) || fail "no ping to $PEER4 after link up: $(tail -2 <<<"$out")"
		send_to "$PEER4" 16M
		send_to "$PEER6" 16M
	fi
	vm_signal link
	vm_wait link $WAIT >/dev/null
}

# The device's NIC objects (docs/device-interface.md, "state") all gone.
nic_objects_gone() { # CONTEXT
	local s f v
	s=$(vcx_state)
	for f in tds tises tirs rqts sqs rqs fts fgs ftes qcounters; do
		v=$(state_field "$s" $f)
		[ "$v" = 0 ] || fail "$1: device state $f='$v' (expected 0): $s"
	done
}

# 20 reloads of vcx.ko in vm0, traffic after each; vm1 serves and waits.
step_reload() {
	local i out
	if [ "$me" = 0 ]; then
		for i in $(seq 20); do
			rmmod vcx || fail "reload $i: rmmod vcx"
			[ ! -e /sys/class/net/vcx0 ] || fail "reload $i: vcx0 still there after rmmod"
			nic_objects_gone "reload $i, after rmmod"
			modprobe vcx || fail "reload $i: modprobe vcx"
			for _ in $(seq 150); do [ -e /sys/class/net/vcx0 ] && break; sleep 0.1; done
			[ -e /sys/class/net/vcx0 ] || fail "reload $i: no vcx0 15 s after modprobe"
			ip link set vcx0 up || fail "reload $i: vcx0 up"
			ip addr add "$IP4/24" dev vcx0 && ip -6 addr add "$IP6/64" dev vcx0 nodad ||
				fail "reload $i: addresses on vcx0"
			wait_carrier 1 10000 >/dev/null || fail "reload $i: no carrier on vcx0 in 10 s"
			out=$(ping -c 1 -W 1 -w 15 "$PEER4" 2>&1) || fail "reload $i: no ping to $PEER4: $(tail -2 <<<"$out")"
			send_to "$PEER4" 4M
			[ $((i % 5)) != 0 ] || send_to "$PEER6" 4M
		done
		log "20 reloads of vcx.ko, a verified transfer after each"
	fi
	vm_signal reload
	vm_wait reload $WAIT >/dev/null
}

for step in $steps; do
	log "step $step"
	"step_$step"
done
kernel_log_clean || fail "kernel warnings or oopses in vm$me (above)"
vm_signal done
vm_wait done $WAIT >/dev/null
pass "vm$me ($mode, ${IF}): $steps"
