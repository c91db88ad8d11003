#!/bin/bash
# RoCE v2 between two VMs on the vcx link (./vcx vm --vms 2, docs/networking.md): both VMs
# run this script and meet through their shared directory (vm_signal / vm_wait,
# tests/guest/lib.sh). Each VM drives the RDMA device of its link interface: vcx_0 on
# vcx0, or Soft-RoCE (rxe0, `rdma link add rxe0 type rxe netdev IF`) on a virtio-net.
# Usage: roce-link.sh vcx|peer|pair|any   (tools run line-buffered: stdbuf -oL)
#   vcx:  vcx0 in both VMs (--vms 2).
#   peer: vcx0 in vm0, rxe0 on a virtio-net in vm1 (--peer virtio): vcx against stock rxe.
#   pair: rxe0 on a virtio-net in both (--link-nics virtio,virtio): the baseline, which
#         proves the script on stock Linux.
#   any:  whatever each VM has on the link, unchecked.
# Each direction (server in vm0, then in vm1): ibv_rc_pingpong, ibv_uc_pingpong,
# ibv_ud_pingpong and ibv_srq_pingpong -q 16, all with -c, at path MTU 1024 (netdev MTU
# 1500) and 4096 (netdev MTU 9000 on both ends, when both ports then report an active MTU
# of 4096); rping -C 200 -V; ucmatose; udaddy; ib_send_bw --use-srq, ib_write_bw,
# ib_read_bw and ib_atomic_bw. At an rxe end no frame may fail rxe's ICRC check and its
# counters (rdma statistic) must show no retry-exceeded or send errors (sequence errors
# and retransmissions are printed: see rxe_check); the kernel log must be clean.
# The out-of-band exchanges of the pingpongs and perftest (QP numbers, PSNs, GIDs) go over
# eth0 (169.254.77.N), so the vcx link carries RoCE, ARP and ND only; rdma_cm resolves the
# link addresses (192.168.77.N). ROCE_STEPS picks steps; ROCE_MTUS the path MTUs
# (default "1024 4096"); ROCE_ITERS the pingpong iteration count (default 200).
# Every wait is bounded; each step prints "ok ..." or fails the script with the reason.
. "$(dirname "$0")/lib.sh"

mode=${1:?usage: roce-link.sh vcx|peer|pair|any}
case "$mode" in
vcx | peer | pair | any) ;;
*) fail "unknown mode $mode" ;;
esac
steps=${ROCE_STEPS:-"setup pingpong rdmacm mcast perftest counters"}
MTUS=${ROCE_MTUS:-"1024 4096"}
ITERS=${ROCE_ITERS:-200}
[ "${VCX_VMS:-1}" = 2 ] || fail "roce-link.sh needs two VMs (./vcx vm --vms 2)"

me=$VCX_VM_INDEX other=$((1 - VCX_VM_INDEX))
# A failure outside fail() (set -e, set -u) still tells the other VM, whose vm_wait then
# stops at once.
trap 'rc=$?; [ $rc = 0 ] || [ -e "$VCX_SHARED/failed.vm$me" ] ||
	echo "roce-link.sh exited with $rc" >"$VCX_SHARED/failed.vm$me"' EXIT
IP4=192.168.77.$((me + 1))
IF=${VCX_LINK_IF:-}
# Bounds for a machine shared with other VMs (TCG): one tool run, one rendezvous.
RUN_T=${ROCE_RUN_TIMEOUT:-240}
WAIT=$((RUN_T + 120))
TCP_PORT=18700
DEV="" GID="" OTHER_DEV=""

log() { echo "# vm$me: $*"; }
ok() { echo "ok vm$me: $*"; }

# The RDMA device whose port 1 sits on netdev $1 (rdma link show), or nothing.
ibdev_of() {
	local links
	links=$(rdma link show 2>/dev/null) || return 0
	awk -v nd="$1" '{ for (i = 1; i < NF; i++) if ($i == "netdev" && $(i + 1) == nd) { split($2, a, "/"); print a[1]; exit } }' <<<"$links"
}

# Index of the RoCE v2 GID ::ffff:$2 on port 1 of $1 (sysfs gids + gid_attrs/types);
# waits up to 10 s for ib_core to add it.
roce_v2_gid_index() { # DEV ADDR
	local d=/sys/class/infiniband/$1/ports/1 want t i
	want=0000:0000:0000:0000:0000:ffff:$(printf '%02x%02x:%02x%02x' $(tr . ' ' <<<"$2"))
	for _ in $(seq 100); do
		for t in "$d"/gid_attrs/types/*; do
			i=${t##*/}
			[ "$(cat "$d/gids/$i" 2>/dev/null)" = "$want" ] || continue
			[ "$(cat "$t" 2>/dev/null)" = "RoCE v2" ] || continue
			echo "$i"
			return 0
		done
		sleep 0.1
	done
	return 1
}

# The port's active MTU in bytes (ibv_devinfo: "active_mtu: 4096 (5)").
active_mtu() {
	local out
	out=$(ibv_devinfo -d "$DEV" -i 1) || fail "ibv_devinfo -d $DEV"
	sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$out"
}

is_rxe() { [ "$DEV" = rxe0 ]; }

step_setup() {
	local drv want_drv
	log "link interface '${IF:-none}', addresses ${VCX_LINK_ADDRS:-none}"
	[ -n "$IF" ] || fail "the vcx link's interface did not come up at boot (images/guest-init)"
	drv=$(ethtool -i "$IF" | sed -n 's/^driver: //p')
	case "$mode,$me" in
	vcx,* | peer,0) want_drv=vcx ;;
	peer,1 | pair,*) want_drv=virtio_net ;;
	*) want_drv=$drv ;;
	esac
	[ "$drv" = "$want_drv" ] || fail "mode $mode: expected a $want_drv interface on the link in vm$me, found $IF ($drv)"
	if [ "$drv" = virtio_net ]; then
		modprobe rdma_rxe || fail "modprobe rdma_rxe"
		rdma link add rxe0 type rxe netdev "$IF" || fail "rdma link add rxe0 type rxe netdev $IF"
	fi
	for _ in $(seq 100); do
		DEV=$(ibdev_of "$IF")
		[ -z "$DEV" ] || break
		sleep 0.1
	done
	[ -n "$DEV" ] || fail "no RDMA device on $IF: $(rdma link show 2>&1 | tr '\n' ' ')"
	modprobe rdma_ucm || fail "modprobe rdma_ucm"
	GID=$(roce_v2_gid_index "$DEV" "$IP4") ||
		fail "no RoCE v2 GID ::ffff:$IP4 on $DEV port 1: $(grep -v '0000:0000:0000:0000:0000:0000:0000:0000' /sys/class/infiniband/$DEV/ports/1/gids/* 2>/dev/null | tr '\n' ' ')"
	rdma link show "$DEV/1" | grep -q 'state ACTIVE' || fail "$DEV/1 not ACTIVE: $(rdma link show "$DEV/1")"
	ok "setup: $DEV on $IF ($drv), GID index $GID (RoCE v2 ::ffff:$IP4)"
	! is_rxe || rxe_icrc_probe_start
	rxe_check setup
	vm_signal ready "$DEV"
	OTHER_DEV=$(vm_wait ready 300)
	log "vm$other uses $OTHER_DEV"
}

# Wait until a server of TOOL listens: TCP port (tcp:PORT), an rdma_cm ID bound to DEV
# (cm) or a line in its output (out:TEXT); fails when the server exits first or after 30 s.
wait_listen() { # tcp:PORT|cm|out:TEXT PID OUT
	local i
	for i in $(seq 300); do
		case "$1" in
		tcp:*) [ -z "$(ss -Hltn "sport = :${1#tcp:}")" ] || return 0 ;;
		cm) rdma res show cm_id 2>/dev/null | grep -q "link $DEV/1 .*state LISTEN" && return 0 ;;
		out:*) grep -q "${1#out:}" "$3" 2>/dev/null && return 0 ;;
		esac
		kill -0 "$2" 2>/dev/null || { cat "$3" >&2; fail "server exited before listening"; }
		sleep 0.1
	done
	cat "$3" >&2
	fail "server not listening after 30 s ($1)"
}

# One tool run across the VMs: the VM with index SERVER runs "CMD... SERVER_ARGS", the
# other "CMD... CLIENT_ARGS", both bounded by RUN_T; in the args @SRV@ stands for the
# server's link address (192.168.77.N), @CTL@ for its eth0 address. The client starts once
# the server listens (LISTEN: tcp:PORT, cm or out:TEXT). Then CHECK (a function, given the output
# file and the side) judges the output. Both meet before and after.
# pair NAME SERVER LISTEN CHECK "SERVER_ARGS" "CLIENT_ARGS" CMD...
PAIR_N=0
pair() {
	local name=$1 server=$2 listen=$3 check=$4 sargs=$5 cargs=$6
	shift 6
	local tag out rc=0 pid side srv=192.168.77.$((server + 1)) ctl=169.254.77.$((server + 1))
	sargs=${sargs//@SRV@/$srv} cargs=${cargs//@SRV@/$srv}
	sargs=${sargs//@CTL@/$ctl} cargs=${cargs//@CTL@/$ctl}
	PAIR_N=$((PAIR_N + 1))
	tag="p$PAIR_N"
	out=/tmp/roce-$tag.out
	if [ "$me" = "$server" ]; then
		side=server
		# shellcheck disable=SC2086
		timeout "$RUN_T" stdbuf -oL -eL "$@" $sargs >"$out" 2>&1 &
		pid=$!
		wait_listen "$listen" $pid "$out"
		vm_signal "$tag-listen"
		wait $pid || rc=$?
	else
		side=client
		vm_wait "$tag-listen" $WAIT >/dev/null
		# shellcheck disable=SC2086
		timeout "$RUN_T" stdbuf -oL -eL "$@" $cargs >"$out" 2>&1 || rc=$?
	fi
	if [ $rc != 0 ]; then
		cat "$out" >&2
		diagnose >&2
		[ $rc != 124 ] || fail "$name: $side timed out after $RUN_T s ($*)"
		fail "$name: $side failed, exit $rc ($*)"
	fi
	"$check" "$out" $side || { cat "$out" >&2; fail "$name: $side output check failed ($*)"; }
	vm_signal "$tag-done"
	vm_wait "$tag-done" $WAIT >/dev/null
	ok "$name ($side, server vm$server): $(summary "$out")"
}

# What a failed run leaves to look at: the QPs, the device's counters, the neighbours.
diagnose() {
	echo "--- rdma res show qp"; rdma res show qp 2>&1 | head -20
	echo "--- rdma statistic show link $DEV/1"; rdma statistic show link "$DEV/1" 2>&1
	echo "--- ip neigh show dev $IF"; ip -color=never neigh show dev "$IF" 2>&1
}

summary() { # OUT: the line worth keeping
	grep -m1 -E 'iters in|test complete|Mbytes/sec|^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+' "$1" | tr -s " \t" " " || echo "done"
}

# Pingpong: the client reports "N iters in"; the server's -c check prints "invalid data"
# for a bad page and exits 0 regardless, so that line fails the run here.
check_pingpong() { # OUT SIDE
	! grep -q 'invalid data' "$1" || return 1
	grep -q "$ITERS iters in" "$1"
}

# Every pingpong at path MTU MTU, server in vm SERVER.
pingpongs() { # MTU SERVER
	local mtu=$1 s=$2 ud_size
	# UD datagrams fill the MTU (ibv_ud_pingpong takes the port's active MTU).
	ud_size=$mtu
	local common="-d $DEV -i 1 -g $GID -n $ITERS -c"
	p() { # NAME TOOL ARGS...
		local n=$1; shift
		TCP_PORT=$((TCP_PORT + 1))
		pair "$n mtu $mtu" "$s" tcp:$TCP_PORT check_pingpong "-p $TCP_PORT" "-p $TCP_PORT @CTL@" "$@" $common
	}
	p ibv_rc_pingpong ibv_rc_pingpong -m "$mtu" -s 4096
	p ibv_uc_pingpong ibv_uc_pingpong -m "$mtu" -s 4096
	p ibv_ud_pingpong ibv_ud_pingpong -s "$ud_size"
	p "ibv_srq_pingpong -q 16" ibv_srq_pingpong -q 16 -m "$mtu" -s 4096
}

set_netdev_mtu() { ip link set "$IF" mtu "$1" || fail "ip link set $IF mtu $1"; }

step_pingpong() {
	local mtu nmtu mine theirs
	for mtu in $MTUS; do
		case $mtu in
		1024) nmtu=1500 ;;
		4096) nmtu=9000 ;;
		*) fail "ROCE_MTUS: $mtu (1024 or 4096)" ;;
		esac
		set_netdev_mtu $nmtu
		# The port's active MTU follows the netdev's (IBTA MTU below netdev MTU - headers).
		for _ in $(seq 50); do
			mine=$(active_mtu)
			[ "$mine" -ge "$mtu" ] && break
			sleep 0.1
		done
		vm_signal "mtu-$mtu" "$mine"
		theirs=$(vm_wait "mtu-$mtu" $WAIT)
		if [ "$mine" -lt "$mtu" ] || [ "$theirs" -lt "$mtu" ]; then
			fail "path MTU $mtu: active MTU $mine here, $theirs in vm$other with netdev MTU $nmtu"
		fi
		ok "netdev MTU $nmtu on $IF, active MTU $mine here, $theirs in vm$other"
		pingpongs "$mtu" 0
		pingpongs "$mtu" 1
	done
	set_netdev_mtu 1500
	vm_signal mtu-back
	vm_wait mtu-back $WAIT >/dev/null
	rxe_check pingpong
}

# rping -V: both sides check every ping's payload ("data mismatch!" and an error exit
# otherwise); the client's 200 pings all completed.
check_rping() { # OUT SIDE
	! grep -q 'mismatch' "$1" || return 1
	[ "$2" = server ] || [ "$(grep -c '^ping data: ' "$1")" = 200 ]
}
check_cmatose() { grep -q 'test complete' "$1"; }

step_rdmacm() {
	local s
	for s in 0 1; do
		pair "rping -C 200 -V" $s cm check_rping "-s -a @SRV@ -C 200 -V -v" "-c -a @SRV@ -C 200 -V -v" \
			rping -p 7999
		pair "ucmatose" $s cm check_cmatose "-b @SRV@" "-s @SRV@" ucmatose -C 20
		pair "udaddy" $s cm check_cmatose "-b @SRV@" "-s @SRV@" udaddy -C 20
	done
	rxe_check rdmacm
}

# mckey (UD multicast through rdma_cm): the receiver joins 239.77.0.1 (::ffff:239.77.0.1,
# MAC 01:00:5e:4d:00:01), posts MCAST_N receives and says "joined"; the sender joins too,
# waits 3 s and posts MCAST_SEND datagrams of MCAST_SIZE bytes to QP 0xFFFFFF; the
# receiver exits once it has polled MCAST_N completions. mckey destroys its QP right
# after posting, unsignaled, so a run can lose what was not sent yet: Soft-RoCE put 18 of
# 20, then 1 of 100 on the wire; vcx_0, whose executor runs after the doorbell, 137 of
# 200 in one run and none in another (DESTROY_QP came first). So the sender runs again,
# at most MCAST_RUNS times, until the receiver has its MCAST_N. mckey counts completions
# and checks no payload bytes (the device's multicast payload path is checked byte for
# byte by qtest test_roce, and through rdma_cm by verbs-pyverbs' test_rdmacm multicast
# cases). "local": receiver and sender both in vm0, the copy looped back inside the
# device while the frame also goes on the link, which vm1 has not joined.
MCAST_GRP=239.77.0.1 MCAST_N=20 MCAST_SEND=100 MCAST_SIZE=512 MCAST_RUNS=5
check_mckey() { # OUT
	grep -q 'data transfers complete' "$1" && grep -q 'return status 0' "$1"
}

# True once the other VM has signalled NAME, waiting up to TIMEOUT_S (its failure fails).
vm_seen() { # NAME TIMEOUT_S
	local _
	for _ in $(seq $(($2 * 10))); do
		[ ! -e "$VCX_SHARED/$1.vm$other" ] || return 0
		[ ! -e "$VCX_SHARED/failed.vm$other" ] || vm_wait "$1" 1 >/dev/null
		sleep 0.1
	done
	[ -e "$VCX_SHARED/$1.vm$other" ]
}

mckey_recv_start() { # OUT: the receiver in the background (pid in mc_pid), joined
	timeout "$RUN_T" stdbuf -oL -eL mckey -m $MCAST_GRP -b "$IP4" -C $MCAST_N \
		-S $MCAST_SIZE >"$1" 2>&1 &
	mc_pid=$!
	wait_listen "out:mckey: joined" $mc_pid "$1"
}
mckey_send() { # OUT
	local rc=0
	timeout "$RUN_T" stdbuf -oL -eL mckey -s -m $MCAST_GRP -b "$IP4" -C $MCAST_SEND \
		-S $MCAST_SIZE >"$1" 2>&1 || rc=$?
	[ $rc = 0 ] && check_mckey "$1" || { cat "$1" >&2; fail "mckey sender: exit $rc"; }
}
mckey_recv_end() { # OUT WHAT
	local rc=0
	wait $mc_pid || rc=$?
	if [ $rc != 0 ] || ! check_mckey "$1"; then
		cat "$1" >&2
		diagnose >&2
		fail "mckey $MCAST_GRP ($2): receiver exit $rc after the sender's runs"
	fi
}

# Receiver in vm R, sender in the other.
mckey_pair() { # R
	local r=$1 tag out runs
	PAIR_N=$((PAIR_N + 1))
	tag="p$PAIR_N" out=/tmp/roce-p$PAIR_N.out
	if [ "$me" = "$r" ]; then
		mckey_recv_start "$out"
		vm_signal "$tag-joined"
		mckey_recv_end "$out" "receiver in vm$r"
		vm_signal "$tag-rcvd"
		runs=$(vm_wait "$tag-sent" $WAIT)
		ok "mckey $MCAST_GRP (receiver): $MCAST_N datagrams from vm$other, $runs sender run(s)"
	else
		vm_wait "$tag-joined" $WAIT >/dev/null
		for runs in $(seq $MCAST_RUNS); do
			mckey_send "$out"
			! vm_seen "$tag-rcvd" 15 || break
		done
		vm_signal "$tag-sent" "$runs"
		vm_wait "$tag-rcvd" $WAIT >/dev/null
		ok "mckey $MCAST_GRP (sender, receiver vm$r): $runs run(s) of $MCAST_SEND datagrams"
	fi
}

mckey_local() {
	local out=/tmp/roce-mckey-local.out sout=/tmp/roce-mckey-local-send.out runs
	if [ "$me" = 0 ] && ! is_rxe; then
		mckey_recv_start "$out"
		for runs in $(seq $MCAST_RUNS); do
			mckey_send "$sout"
			for _ in $(seq 150); do
				kill -0 $mc_pid 2>/dev/null || break 2
				sleep 0.1
			done
		done
		mckey_recv_end "$out" "sender and receiver in vm0"
		ok "mckey local: $MCAST_N datagrams to $MCAST_GRP received, $runs sender run(s) of $MCAST_SEND, both in vm0"
	fi
	vm_signal mckey-local
	vm_wait mckey-local $WAIT >/dev/null
}

step_mcast() {
	local s sender_dev
	for s in 0 1; do
		# the sender is the VM other than s
		if [ "$me" = "$s" ]; then sender_dev=$OTHER_DEV; else sender_dev=$DEV; fi
		if [ "$sender_dev" = rxe0 ]; then
			log "mckey with vm$s receiving skipped: an rxe0 sender flushes most of its datagrams unsent when mckey destroys its QP at exit"
			continue
		fi
		mckey_pair $s
	done
	mckey_local
	rxe_check mcast
}

# perftest: both sides print the report; the row for SIZE x ITERS has non-zero figures.
PERF_SIZE=65536 PERF_ITERS=200
check_perftest() { # OUT SIDE (the server of a WRITE or READ test prints no figures)
	local row
	grep -q 'local address' "$1" || return 1
	[ "$2" = client ] || return 0
	grep -q '^ *#bytes' "$1" || return 1
	row=$(awk -v s="$PERF_SIZE" -v n="$PERF_ITERS" '$1 == s && $2 == n' "$1" | head -1)
	[ -n "$row" ] || return 1
	# The message rate (Mpps, 6 decimals): both MiB/s columns of 200 8-byte atomics round
	# to 0.00 at under 1,300 per second, which a loaded host gives; every completion
	# is counted by perftest itself, which fails on an error CQE.
	awk '{ exit !($5 > 0) }' <<<"$row"
}

step_perftest() {
	local s t
	for s in 0 1; do
		# READ and atomic tests: -o 16 at both ends. perftest gives the QP as many
		# outstanding requests (max_rd_atomic) as the other end advertises, and rxe
		# advertises 128, above vcx_0's 16 (as a ConnectX's); the driver then refuses
		# the RTS transition with EINVAL, as mlx5_ib does.
		for t in "ib_send_bw --use-srq" ib_write_bw "ib_read_bw -o 16" "ib_atomic_bw -o 16"; do
			TCP_PORT=$((TCP_PORT + 1))
			PERF_SIZE=65536
			[ "${t%% *}" != ib_atomic_bw ] || PERF_SIZE=8
			pair "$t" $s tcp:$TCP_PORT check_perftest "-p $TCP_PORT" "-p $TCP_PORT @CTL@" \
				$t -d "$DEV" -i 1 -x "$GID" -F -s $PERF_SIZE -n $PERF_ITERS
		done
	done
	rxe_check perftest
}

# Soft-RoCE's own counters (rdma statistic show link rxe0/1; rxe_hw_counters.c names them
# sent_pkts, rcvd_pkts, duplicate_request, out_of_seq_request, rcvd_rnr_err, send_rnr_err,
# rcvd_seq_err, ack_deferred, retry_exceeded_err, retry_rnr_exceeded_err,
# completer_retry_err, send_err, link_downed, rdma_sends, rdma_recvs).
# After each step their growth is printed and checked: the hard errors
# (retry_exceeded_err, retry_rnr_exceeded_err, send_err, link_downed) must not grow. The
# sequence errors (out_of_seq_request, rcvd_seq_err) and retransmissions
# (duplicate_request, completer_retry_err) are printed, not failed: under TCG on a busy
# host an ACK often comes after the 67 ms transport timer the tools set (timeout 14), and
# the dgram link drops frames when a receiving QEMU's socket is full; go-back-N recovers
# from both, and two stock rxe ends show them too (measured: +1 and +2 out_of_seq_request
# with +208 and +300 duplicate_request over the pingpong step at load average 3). Frames
# the other end got wrong are what fails: a bad ICRC (below), a bad payload (-c, -V).
# rxe has no ICRC counter: a frame failing its ICRC is dropped before rcvd_pkts counts it,
# silently. So setup puts a return probe on rxe's ICRC check (rxe_icrc_check(), through
# tracefs kprobe_events) that records every non-zero return; step counters fails on any,
# and wants the probe's hit count (kprobe_profile) to be at least rcvd_pkts with nothing
# missed. (Frames rxe drops for other reasons, e.g. a last ACK to a QP already destroyed,
# are dropped as silently; the probe tells the two apart.)

TRACEFS=/sys/kernel/tracing
KPROBE=vcxroce/rxe_icrc_check
rxe_icrc_probe_start() {
	[ -e $TRACEFS/kprobe_events ] || mount -t tracefs nodev $TRACEFS || fail "cannot mount tracefs"
	echo "r:$KPROBE rxe_icrc_check ret=\$retval:s32" >>$TRACEFS/kprobe_events ||
		fail "cannot probe rxe_icrc_check (kprobe_events)"
	echo 'ret != 0' >$TRACEFS/events/$KPROBE/filter || fail "kprobe filter"
	echo >$TRACEFS/trace
	echo 1 >$TRACEFS/events/$KPROBE/enable || fail "cannot enable the rxe_icrc_check probe"
	ok "ICRC failures of $DEV traced (return probe on rxe_icrc_check)"
}
rxe_icrc_probe_check() { # RCVD_PKTS
	local prof hits missed bad
	prof=$(cat $TRACEFS/kprobe_profile)
	# (no process substitution: the guest has no /dev/fd)
	read -r hits missed <<<"$(awk -v e="${KPROBE#*/}" '$1 == e { print $2, $3 }' <<<"$prof")"
	bad=$(grep -c 'rxe_icrc_check:' $TRACEFS/trace || true)
	[ "$bad" = 0 ] || fail "$DEV: $bad received frames failed rxe's ICRC check: $(grep -m3 'rxe_icrc_check:' $TRACEFS/trace)"
	[ "${missed:-x}" = 0 ] && [ "${hits:-0}" -ge "$1" ] ||
		fail "$DEV: the rxe_icrc_check probe hit ${hits:-?} times, missed ${missed:-?} (received $1)"
	ok "$DEV: rxe checked the ICRC of $hits received frames, none failed"
}

RXE_COUNTERS="sent_pkts rcvd_pkts out_of_seq_request rcvd_seq_err duplicate_request completer_retry_err rcvd_rnr_err send_rnr_err retry_exceeded_err retry_rnr_exceeded_err send_err link_downed"
declare -A RXE_LAST=()
counter() { # STATS NAME
	awk -v f="$2" '{ for (i = 1; i < NF; i++) if ($i == f) { print $(i + 1); exit } }' <<<"$1"
}
rxe_check() { # STEP
	local stats name v d deltas="" bad=""
	is_rxe || return 0
	stats=$(rdma statistic show link "$DEV/1") || fail "rdma statistic show link $DEV/1"
	for name in $RXE_COUNTERS; do
		v=$(counter "$stats" $name)
		[[ "$v" =~ ^[0-9]+$ ]] || fail "$DEV: no counter $name in rdma statistic: $stats"
		d=$((v - ${RXE_LAST[$name]:-0}))
		RXE_LAST[$name]=$v
		deltas="$deltas $name+$d"
		case $name in
		retry_exceeded_err | retry_rnr_exceeded_err | send_err | link_downed) [ $d = 0 ] || bad="$bad $name+$d" ;;
		esac
	done
	[ -z "$bad" ] || fail "$DEV counters over step $1 show errors:$bad (all:$deltas)"
	ok "$DEV counters over step $1:$deltas"
}

step_counters() {
	local stats
	if is_rxe; then
		stats=$(rdma statistic show link "$DEV/1") || fail "rdma statistic show link $DEV/1"
		log "rdma statistic show link $DEV/1 after the run: $(tr -s ' \n' ' ' <<<"$stats")"
		rxe_icrc_probe_check "$(counter "$stats" rcvd_pkts)"
	else
		stats=$(rdma statistic show link "$DEV/1" 2>&1) || stats="(none: $stats)"
		log "rdma statistic show link $DEV/1: $(tr -s ' \n' ' ' <<<"$stats")"
	fi
	vm_signal counters
	vm_wait counters $WAIT >/dev/null
}

for step in $steps; do
	log "step $step"
	"step_$step"
done
kernel_log_clean || fail "kernel warnings or oopses in vm$me (above)"
vm_signal done
vm_wait done $WAIT >/dev/null
pass "vm$me ($mode, $DEV on $IF): $steps"
