#!/bin/bash
# NFS over RDMA on vcx_0, client and server on one VM over loopback through the device:
# knfsd listens on RDMA port 20049 (svcrdma; on 6.12 it lives in rpcrdma.ko, with
# xprtrdma) and exports a tmpfs; the client mounts 192.168.77.1:/export with proto=rdma.
#   - NFSv3 and NFSv4.2: 64 MiB of random bytes written, caches dropped, read back,
#     sha256 compared. The mount must really ride on RDMA: proto=rdma in its options,
#     transport "rdma" in /proc/self/mountstats, the rpcrdma cm_ids connected to :20049
#     on vcx_0, and the mount's byte counters showing the data went to and came from
#     the server.
#   - Faults on a soft mount with a direct write in flight: (a) the port's link down for
#     5 s; (b) the client's QP of the transport failed (qp-error); (c) the server's QP
#     failed. The write must complete with the right data, the client reconnect after
#     (b) and (c), the umount finish in bounded time, no task stay blocked.
#   - Teardown: nfsd stopped, export gone, rpcrdma unloaded; the device holds exactly the
#     RDMA objects it held before, the kernel log is clean (no splat, no hung task).
# rdma res names the transport's QPs [rdma_cm] (rdma_create_qp creates them on behalf
# of rpcrdma) while their cm_ids are [rpcrdma]; the cm_ids tell client from server QP.
# knfsd, the mount's counters and the deadlines: tests/guest/nfs-common.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"
. "$(dirname "$0")/bringup-common.sh"
. "$(dirname "$0")/ulp-common.sh"
. "$(dirname "$0")/nfs-common.sh"

NFS_MIB=64
TR=/sys/kernel/tracing
DYNDBG=/sys/kernel/debug/dynamic_debug/control
# An RPC of a fault mount gives up after 10 + 20 + 30 s: longer than any fault here
# lasts (the I/O must survive it), short enough to bound everything.
FAULT_OPTS=soft,timeo=100,retrans=2

t0=$SECONDS

expect_nothing_blocked() { # context
	for _ in $(seq 50); do
		[ -z "$(nfs_blocked_tasks)" ] && break
		sleep 0.2
	done
	[ -z "$(nfs_blocked_tasks)" ] || { nfs_blocked_tasks >&2; fail "$1: tasks blocked"; }
	kernel_log_clean || fail "$1: kernel log not clean"
	echo "ok $1: no task blocked, kernel log clean"
}

# Connected rpcrdma cm_ids: the client's (to :PORT), the server's (from :PORT).
client_cm() { rdma res show cm_id | grep -E "comm \[rpcrdma\] .*dst-addr $ULP_ADDR:$NFS_PORT " || true; }
server_cm() { rdma res show cm_id | grep -E "comm \[rpcrdma\] src-addr $ULP_ADDR:$NFS_PORT dst-addr" || true; }
field() { sed -n "s/.* $1 \([^ ]*\) .*/\1/p"; } # value of a "name value" pair on stdin

# The mount on $NFS_MNT is NFS over RDMA through vcx_0, not TCP.
expect_rdma_mount() { # context vers
	local opts xprt c s
	opts=$(findmnt -n -o OPTIONS "$NFS_MNT") || fail "$1: nothing mounted on $NFS_MNT"
	case ",$opts," in *,proto=rdma,*) ;; *) fail "$1: mounted without proto=rdma: $opts" ;; esac
	case ",$opts," in *,port=$NFS_PORT,*) ;; *) fail "$1: mounted without port=$NFS_PORT: $opts" ;; esac
	case ",$opts," in *,vers=$2,*) ;; *) fail "$1: mounted without vers=$2: $opts" ;; esac
	xprt=$(nfs_mnt_stats | awk '$1 == "xprt:" { print $2 }')
	[ "$xprt" = rdma ] || { nfs_mnt_stats >&2; fail "$1: transport in mountstats is '$xprt', not rdma"; }
	c=$(client_cm)
	s=$(server_cm)
	[ "$(echo "$c" | grep -c .)" = 1 ] && [ "$(echo "$s" | grep -c .)" = 1 ] ||
		{ rdma res show cm_id >&2; fail "$1: not one rpcrdma connection on $VCX_IBDEV"; }
	echo "ok $1: proto=rdma in effect (mountstats xprt: $xprt; client QP $(echo "$c" | field lqpn), server QP $(echo "$s" | field lqpn) on $VCX_IBDEV)"
}

nfs_mount() { # context vers [options]
	nfs_within 90 "$1: mount" mount -t nfs -o "proto=rdma,port=$NFS_PORT,vers=$2${3:+,$3}" \
		"$ULP_ADDR:$NFS_EXPORT" "$NFS_MNT"
	expect_rdma_mount "$1" "$2"
}

# Unmount in bounded time: a plain umount gets 60 s, else a forced lazy one 30 s.
nfs_umount() { # context
	local rc=0 pid how=plain
	umount "$NFS_MNT" &
	pid=$!
	for _ in $(seq 300); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 $pid 2>/dev/null; then
		how="forced lazy: plain umount still running after 60 s"
	else
		wait $pid || rc=$?
		[ $rc = 0 ] || how="forced lazy: plain umount failed ($rc)"
	fi
	[ "$how" = plain ] || nfs_within 30 "$1: umount -f -l" umount -f -l "$NFS_MNT"
	! mountpoint -q "$NFS_MNT" || fail "$1: $NFS_MNT still mounted"
	echo "ok $1: unmounted ($how)"
}

# Tracepoints of the RPC/RDMA transport (counted at the faults), and vcx.ko's debug
# note of each error CQE other than a flush.
trace_on() {
	local e
	for e in rpcrdma/xprtrdma_connect rpcrdma/xprtrdma_disconnect rpcrdma/svcrdma_qp_error; do
		[ -e "$TR/events/$e/enable" ] && echo 1 >"$TR/events/$e/enable"
	done
	[ -w $TR/tracing_on ] && echo 1 >$TR/tracing_on
	[ -w $DYNDBG ] && echo 'file vcx_cq.c +p' >$DYNDBG
	return 0
}
trace_clear() { [ -w $TR/trace ] && : >$TR/trace || true; }
trace_count() { grep -c -E "$1" $TR/trace 2>/dev/null || true; }
trace_off() {
	[ -w $TR/events/enable ] && echo 0 >$TR/events/enable && : >$TR/trace
	[ -w $DYNDBG ] && echo 'file vcx_cq.c -p' >$DYNDBG
	return 0
}
# Error CQEs vcx.ko has reported since boot, per syndrome, e.g. "0x15 x1" (flushes are
# not reported).
error_cqes() {
	dmesg | sed -n 's/.*vcx .*: QP .*: error CQE syndrome \(0x[0-9a-f]*\) .*/\1/p' |
		sort | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1 } END { if (!NR) printf "none" }'
}
# Only the syndromes a fault explains: 0x15, transport retries exceeded (the link was
# down). Anything else (0x4 local protection, 0x13 remote access, ...) is a data path bug.
expect_error_cqes() { # context allowed-syndromes-regex
	local e bad
	[ -w $DYNDBG ] || { echo "ok $1: (no dynamic debug: error CQEs not checked)"; return 0; }
	e=$(error_cqes)
	[ "$e" = none ] ||
		bad=$(echo "$e" | tr ',' '\n' | awk '{ print $1 }' | grep -vxE "$2" || true)
	[ -z "${bad:-}" ] || fail "$1: unexpected error CQEs: $e"
	echo "ok $1: error CQEs reported by vcx.ko: $e"
}

# --- bring up ----------------------------------------------------------------------
kernel_log_clean || fail "kernel log not clean at start"
# A task blocked for 30 s counts as hung here, so the check bites within the test.
[ -w /proc/sys/kernel/hung_task_timeout_secs ] && echo 30 >/proc/sys/kernel/hung_task_timeout_secs
ulp_port_up
base=$(ulp_objects)
echo "ok $VCX_IBDEV up with $ULP_ADDR; device objects before the ULP: $base"

# svcrdma and xprtrdma: one module, rpcrdma, on 6.12 (aliases svcrdma, xprtrdma).
mods=(rpcrdma)
svc=$(modinfo -F name svcrdma 2>/dev/null) || fail "no module svcrdma"
[ "$svc" = rpcrdma ] || mods+=("$svc")
for m in nfsd nfs "${mods[@]}"; do
	modprobe "$m" || fail "modprobe $m"
done
echo "ok modules loaded: nfsd nfs ${mods[*]} (svcrdma is module $svc)"

head -c $((NFS_MIB << 20)) /dev/urandom >/tmp/nfs-src
want=$(sha256sum </tmp/nfs-src | cut -d' ' -f1)

mkdir -p "$NFS_MNT"
nfs_knfsd_start "knfsd"
echo "ok knfsd listening on rdma $NFS_PORT (rpcrdma cm_id LISTEN on $VCX_IBDEV), exporting tmpfs $NFS_EXPORT"
trace_on

# --- NFSv3 and NFSv4.2: 64 MiB written, caches dropped, read back ----------------------
verify_rw() { # context
	nfs_write_read "$1" /tmp/nfs-src "$want"
	cmp -s /tmp/nfs-src "$NFS_EXPORT/data" || fail "$1: the exported file differs from the source"
	echo "ok $1: $NFS_MIB MiB written ($NFS_WROTE bytes to the server), read back after drop_caches ($NFS_READ bytes from the server), sha256 equal"
	nfs_within 60 "$1: rm" rm -f "$NFS_MNT/data"
}
nfs_mount "NFSv3" 3 nolock
verify_rw "NFSv3"
nfs_umount "NFSv3"
nfs_mount "NFSv4.2" 4.2
verify_rw "NFSv4.2"
nfs_umount "NFSv4.2"
expect_error_cqes "NFSv3 and NFSv4.2" "none"

# --- faults with I/O in flight on a soft mount ----------------------------------------
# A direct write of the 64 MiB file (each 1 MiB an RPC on the wire); returns once the
# first MiB is on the server.
fault_io_start() {
	dd if=/tmp/nfs-src of="$NFS_MNT/fault" bs=1M oflag=direct status=none &
	io=$!
	io_t0=$SECONDS
	for _ in $(seq 150); do
		[ "$(stat -c %s "$NFS_EXPORT/fault" 2>/dev/null || echo 0)" -ge $((1 << 20)) ] && return 0
		sleep 0.2
	done
	fail "fault I/O: nothing reached the server in 30 s"
}
# Right after the fault was injected: was the write still going?
fault_io_mark() {
	io_state="in flight"
	kill -0 $io 2>/dev/null || io_state="just done"
}
# The write ends within 120 s, successfully (a soft RPC gives up only after 60 s, the
# faults last less), and the file reads back equal.
fault_io_end() { # context
	local rc=0
	for _ in $(seq 600); do
		kill -0 $io 2>/dev/null || break
		sleep 0.2
	done
	kill -0 $io 2>/dev/null && { nfs_blocked_tasks >&2; fail "$1: I/O still running after 120 s"; }
	wait $io || rc=$?
	[ $rc = 0 ] || fail "$1: the write failed ($rc) across the fault"
	nfs_within 120 "$1: read back (cmp)" cmp -s /tmp/nfs-src "$NFS_MNT/fault"
	echo "ok $1: write ($io_state at the fault) completed in $((SECONDS - io_t0)) s, $NFS_MIB MiB read back equal"
	nfs_within 60 "$1: rm" rm -f "$NFS_MNT/fault"
}
# The client connected again after a fault: one client cm_id, a new one.
expect_reconnect() { # context old-client-cm-idn
	local c=
	for _ in $(seq 300); do
		c=$(client_cm | field cm-idn)
		[ -n "$c" ] && [ "$c" != "$2" ] && [ "$(echo "$c" | wc -l)" = 1 ] && break
		sleep 0.2
	done
	[ -n "$c" ] && [ "$c" != "$2" ] && [ "$(echo "$c" | wc -l)" = 1 ] ||
		{ rdma res show cm_id >&2; fail "$1: client not reconnected (cm_id $2 -> '$c')"; }
	echo "ok $1: client reconnected (cm_id $2 -> $c; traced $(trace_count 'xprtrdma_disconnect:') disconnect, $(trace_count 'xprtrdma_connect:.* rc=0 ') connect)"
}
# ulp_qp_error, but failing when the device refuses: HMP reports an unknown QP as text
# ("Error: vcx: no QP 0x..."), not as a failed command, so vcx_qom_set does not see it.
qp_error() { # qpn
	local out
	out=$(images/vcx-hostcall hmp "qom-set $VCX_QOM qp-error $1") || fail "qp-error $1: no answer"
	case "$out" in *rror*) fail "qp-error $1: $out" ;; esac
}

# (a) Link down 5 s under the write, NFSv4.2. The RC QP sending at that moment (so far
# always the server's, with a reply) runs out of retries (7 x the ~0.5 s local ACK
# timeout rdma_cm sets on RoCE) after ~3.5 s: the device completes that Send with
# "transport retries exceeded" (0x15) and svcrdma closes the connection. Its DREQ is lost
# in the outage, so the client notices at its RPC timeout (timeo) or at ib_cm's DREQ
# retry, reconnects and sends the WRITEs again.
nfs_mount "link fault" 4.2 "$FAULT_OPTS"
cm=$(client_cm | field cm-idn)
trace_clear
fault_io_start
ulp_link off
fault_io_mark
[ "$(state_field "$(vcx_state)" link)" = down ] || fail "link fault: port not down"
sleep 5
ulp_link on
[ "$(state_field "$(vcx_state)" link)" = up ] || fail "link fault: port not up again"
echo "ok link fault: port down for 5 s under the write, up again"
fault_io_end "link fault"
if [ "$(client_cm | field cm-idn)" = "$cm" ]; then
	echo "ok link fault: the connection survived (cm_id $cm)"
else
	expect_reconnect "link fault" "$cm"
fi
expect_error_cqes "link fault" "0x15"
expect_rdma_mount "link fault" 4.2
nfs_umount "link fault"
expect_nothing_blocked "link fault"

# (b) The client's QP in error (NFSv4.2); (c) the server's QP in error (NFSv3).
qp_fault() { # context vers client|server [options]
	local ctx=$1 cm qpn line
	nfs_mount "$ctx" "$2" "$FAULT_OPTS${4:+,$4}"
	cm=$(client_cm | field cm-idn)
	if [ "$3" = client ]; then line=$(client_cm); else line=$(server_cm); fi
	qpn=$(echo "$line" | field lqpn)
	{ ulp_qpns rpcrdma; ulp_qpns rdma_cm; } | grep -x "$qpn" >/dev/null ||
		{ rdma res show qp >&2; fail "$ctx: QP $qpn is not one rdma res shows for rpcrdma"; }
	trace_clear
	fault_io_start
	qp_error "$qpn"
	fault_io_mark
	echo "ok $ctx: $3 QP $qpn (cm_id $(echo "$line" | field cm-idn)) put in error by the device"
	fault_io_end "$ctx"
	expect_reconnect "$ctx" "$cm"
	expect_rdma_mount "$ctx" "$2"
	nfs_umount "$ctx"
	expect_nothing_blocked "$ctx"
}
qp_fault "client QP error" 4.2 client
qp_fault "server QP error" 3 server nolock
expect_error_cqes "QP faults" "0x15"
trace_off

# --- teardown ------------------------------------------------------------------------
nfs_knfsd_stop "teardown"
[ -z "$(rdma res show cm_id)" ] || { rdma res show cm_id >&2; fail "rdma_cm IDs left after nfsd stopped"; }
echo "ok nfsd stopped, export removed, rpc.mountd and rpcbind gone, no rdma_cm ID left"
# The transports drop their module references asynchronously.
for _ in $(seq 100); do
	[ "$(cat /sys/module/rpcrdma/refcnt)" = 0 ] && break
	sleep 0.2
done
nfs_within 60 "unload ${mods[*]}" ulp_unload "${mods[@]}"
[ ! -d /sys/module/rpcrdma ] || fail "rpcrdma still loaded"
echo "ok ${mods[*]} unloaded"
ulp_expect_objects "$base" "teardown"
ulp_expect_clean_log "teardown"
pass "NFSv3 and NFSv4.2 over RDMA on $VCX_IBDEV: $NFS_MIB MiB each, link and QP faults survived, clean teardown ($((SECONDS - t0)) s)"
