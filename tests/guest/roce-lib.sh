# Shared by the two-VM RoCE scripts (roce-link.sh, roce-loss.sh), sourced after lib.sh
# with $mode set (vcx, peer, mlx5, pair or any; docs/networking.md "RoCE v2 between two VMs"):
# the VMs' roles and bounds, the RDMA device of the link interface and its RoCE v2 GID
# (step_setup), one tool run across the VMs (pair), and Soft-RoCE's ICRC probe and
# counters (rxe_check, step_counters).
. "$(dirname "${BASH_SOURCE[0]}")/verbs-common.sh"    # vcx_roce_v2_gid
[ "${VCX_VMS:-1}" = 2 ] || fail "$(basename "$0") needs two VMs (./vcx vm --vms 2)"

me=$VCX_VM_INDEX other=$((1 - VCX_VM_INDEX))
# A failure outside fail() (set -e, set -u) still tells the other VM, whose vm_wait then
# stops at once.
trap 'rc=$?; [ $rc = 0 ] || [ -e "$VCX_SHARED/failed.vm$me" ] ||
	echo "$(basename "$0") exited with $rc" >"$VCX_SHARED/failed.vm$me"' EXIT
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

# The port's active MTU in bytes (ibv_devinfo: "active_mtu: 4096 (5)").
active_mtu() {
	local out
	out=$(ibv_devinfo -d "$DEV" -i 1) || fail "ibv_devinfo -d $DEV"
	sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$out"
}

is_rxe() { [ "$DEV" = rxe0 ]; }

# Mode mlx5, vm0 (--no-load --vcx-props cx5-id=on): the kernel's own mlx5_core and
# mlx5_ib on the device, and mlx5e's netdev brought up with the link's addresses as
# images/guest-init brings vcx0 up (it leaves the link alone without vcx.ko).
mlx5_link_up() {
	local d a cmds
	modprobe mlx5_core && modprobe mlx5_ib || fail "modprobe mlx5_core mlx5_ib"
	for _ in $(seq 150); do
		for d in /sys/bus/pci/drivers/mlx5_core/0000:*/net/*; do
			[ -e "$d" ] && IF=${d##*/}
		done
		[ -z "$IF" ] || break
		sleep 0.1
	done
	[ -n "$IF" ] || fail "mlx5_core registered no netdev in 15 s"
	cmds="link set $IF up"
	for a in ${VCX_LINK_ADDRS//,/ }; do
		case "$a" in
		*:*) cmds+=$'\n'"addr add $a dev $IF nodad" ;;
		*) cmds+=$'\n'"addr add $a dev $IF" ;;
		esac
	done
	ip -batch - <<<"$cmds" || fail "cannot bring $IF up with ${VCX_LINK_ADDRS:-no address}"
}

step_setup() {
	local drv want_drv
	[ "$mode,$me" != mlx5,0 ] || mlx5_link_up
	log "link interface '${IF:-none}', addresses ${VCX_LINK_ADDRS:-none}"
	[ -n "$IF" ] || fail "the vcx link's interface did not come up at boot (images/guest-init)"
	drv=$(ethtool -i "$IF" | sed -n 's/^driver: //p')
	case "$mode,$me" in
	vcx,* | peer,0) want_drv=vcx ;;
	mlx5,0) want_drv=mlx5_core ;;
	peer,1 | mlx5,1 | pair,*) want_drv=virtio_net ;;
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
	GID=$(vcx_roce_v2_gid "$DEV" "$IP4") ||
		fail "no RoCE v2 GID ::ffff:$IP4 on $DEV port 1: $(grep -v '0000:0000:0000:0000:0000:0000:0000:0000' /sys/class/infiniband/$DEV/ports/1/gids/* 2>/dev/null | tr '\n' ' ')"
	grep -q 'state ACTIVE' <<<"$(rdma link show "$DEV/1")" || fail "$DEV/1 not ACTIVE: $(rdma link show "$DEV/1")"
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
		tcp:*) tcp_listening "${1#tcp:}" && return 0 ;;
		cm) grep -q "link $DEV/1 .*state LISTEN" <<<"$(rdma res show cm_id 2>/dev/null)" && return 0 ;;
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

# The line of a tool's output worth keeping (SUMMARY_RE: the script's own pattern).
SUMMARY_RE='iters in|test complete|Mbytes/sec|^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+'
summary() { # OUT
	grep -m1 -E "$SUMMARY_RE" "$1" | tr -s " \t" " " || echo "done"
}

# Soft-RoCE's own counters (rdma statistic show link rxe0/1; rxe_hw_counters.c names them
# sent_pkts, rcvd_pkts, duplicate_request, out_of_seq_request, rcvd_rnr_err, send_rnr_err,
# rcvd_seq_err, ack_deferred, retry_exceeded_err, retry_rnr_exceeded_err,
# completer_retry_err, send_err, link_downed, rdma_sends, rdma_recvs).
# After each step their growth is printed and checked: the hard errors
# (retry_exceeded_err, retry_rnr_exceeded_err, send_err, link_downed) must not grow. The
# sequence errors (out_of_seq_request, rcvd_seq_err) and retransmissions
# (duplicate_request, completer_retry_err) are printed, not failed: under TCG on a busy
# host an ACK often comes after the 67 ms transport timer the tools set (timeout 14) (and
# a --link-transport dgram link drops frames when a receiving QEMU's socket is full);
# go-back-N recovers, and two stock rxe ends show them too (measured: +1 and +2 out_of_seq_request
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

# The device's link on again (ulp_link, tests/guest/ulp-common.sh; the fault steps nfs and
# nvme_faults), and this end's netdev carrier and RDMA port back within 15 s.
faults_link_on() { # context
	local i
	ulp_link on
	for i in $(seq 150); do
		[ "$(cat /sys/class/net/$IF/carrier 2>/dev/null)" = 1 ] &&
			rdma link show "$DEV/1" 2>/dev/null | grep -q "state ACTIVE" && return 0
		sleep 0.1
	done
	fail "$1: $IF or $DEV/1 not up 15 s after the link came back: $(rdma link show "$DEV/1" 2>&1)"
}

# An NVMe step (nvme, nvme_faults): the ULP helpers, nvme-common.sh with the target on
# vm0's link address (nvme_round moves it), configfs mounted, the host NQN made.
nvme_step_prepare() {
	. "$(dirname "$0")/bringup-common.sh"
	. "$(dirname "$0")/ulp-common.sh"
	NVME_ADDR=192.168.77.1
	. "$(dirname "$0")/nvme-common.sh"
	nvme_configfs
	nvme_hostnqn
}

# A LIO target step (iser, srp): configfs mounted, ROUND 0 (the target in vm0), ROUND 1
# where the ends differ or with ROCE_ULP_BOTH=1, then the rxe counters over the step.
lio_rounds() { # STEP ROUND
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config ||
		fail "mount configfs"
	"$2" 0
	if [ "$DEV" != "$OTHER_DEV" ] || [ -n "${ROCE_ULP_BOTH:-}" ]; then
		"$2" 1
	fi
	rxe_check "$1"
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

