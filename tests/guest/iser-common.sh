# iSER helpers shared by tests/guest/ulp-iser.sh (target and initiator on one VM, over
# loopback) and the iser step of tests/guest/roce-link.sh (target in one VM, initiator in
# the other): a LIO target (targetcli, ib_isert) with a 64 MiB ramdisk LUN behind a portal
# with iser enabled, and open-iscsi (iscsid, ib_iser) logging in through an iser iface.
# Sourced after lib.sh and ulp-common.sh. Set before sourcing:
#   ISER_ADDR     the portal's address (the target's port address)
#   ISER_IBDEV    the RDMA device of this VM's end (ib_isert listens, QPs are looked up)
#   ISER_LOCAL    "both" (one VM), "target" or "initiator"

TIQN=iqn.2003-01.org.vcx:iser-rd0
PORTAL=$ISER_ADDR:3260
TPG=/iscsi/$TIQN/tpg1
LIO=/sys/kernel/config/target
# Timeouts of the node record: commands fail after 10 s without a connection, a dead
# connection is noticed by a NOP-Out unanswered within 5 s (sent after 5 s idle). 2 s
# NOP-Outs expired on a live connection under TCG while a two-VM test shared the 2 cores,
# and the session then went offline in the middle of the verified pass.
REPLACEMENT_TIMEOUT=10
NOOP=5
LOGIN_TIMEOUT=10

# A hung task shows up in the log within 30 s instead of 120 (every wait here is shorter).
if [ -w /proc/sys/kernel/hung_task_timeout_secs ]; then
	echo 30 >/proc/sys/kernel/hung_task_timeout_secs
fi

# Wait up to $1 seconds for process $2 to end; return 1 if it has not. Unlike timeout(1),
# this also gives up on a process stuck in the kernel (uninterruptible, unkillable).
wait_pid() { # seconds pid
	for _ in $(seq $(($1 * 10))); do
		kill -0 "$2" 2>/dev/null || return 0
		sleep 0.1
	done
	! kill -0 "$2" 2>/dev/null
}
# Run a command (or a function) with a deadline, fail naming the step if it is still
# running after it or fails: bounded SECONDS WHAT CMD...
bounded() {
	local t=$1 what=$2 pid rc=0
	shift 2
	"$@" &
	pid=$!
	wait_pid "$t" $pid || fail "$what: still running after ${t}s"
	wait $pid || rc=$?
	[ $rc = 0 ] || fail "$what: exit status $rc"
}
# Unload those of the modules that are loaded (ulp_unload).
unload_loaded() { # module...
	local m
	for m in "$@"; do
		if [ -d "/sys/module/$m" ]; then ulp_unload "$m"; fi
	done
}

# --- target ---------------------------------------------------------------------------
# targetcli, run on several command lines in one process (a start costs ~4 s under TCG):
# tcli 'CMDLINE' ... runs each as `targetcli CMDLINE` would, stopping at the first that
# fails. One change: targetcli asks the system D-Bus for tcmu-runner's user backstores
# before any command, outside its own try block, so with no D-Bus in the guest it exits
# 255 ("g-io-error-quark: Could not connect"); here the bus lookup answers None, the
# query fails inside the try and no user backstores are listed.
TARGETCLI=(python3 -c 'import os, runpy, sys
from gi.repository import Gio
Gio.bus_get_sync = lambda *args: None
from targetcli import UIRoot
shell = runpy.run_path("/usr/bin/targetcli")["TargetCLI"](os.path.expanduser("~/.targetcli"))
UIRoot(shell, as_root=True).refresh()
for cmdline in sys.argv[1:]:
    try:
        shell.run_cmdline(cmdline)
    except Exception as e:
        sys.exit("targetcli %s: %s" % (cmdline, e))')
tcli() {
	local rc=0
	timeout 120 "${TARGETCLI[@]}" "$@" >/tmp/targetcli.out 2>&1 || rc=$?
	[ $rc = 0 ] || { cat /tmp/targetcli.out >&2; fail "targetcli: exit status $rc"; }
}

# This VM's initiator name (open-iscsi's, from the image).
iser_iname() {
	local n
	n=$(sed -n 's/^InitiatorName=//p' /etc/iscsi/initiatorname.iscsi)
	[ -n "$n" ] || fail "no InitiatorName in /etc/iscsi/initiatorname.iscsi"
	echo "$n"
}

# The target: ramdisk rd0 as LUN 0 of TIQN, the portal ISER_ADDR:3260 with iser, an ACL
# for initiator INAME and no authentication; ib_isert must listen on ISER_IBDEV.
iser_target_up() { # INAME
	INAME=$1
	mkdir -p /etc/target
	for m in target_core_mod iscsi_target_mod ib_isert; do
		modprobe "$m" || fail "modprobe $m"
	done
	tcli "set global auto_save_on_exit=false auto_add_default_portal=false auto_add_mapped_luns=true" \
		"/backstores/ramdisk create name=rd0 size=64M" \
		"/iscsi create $TIQN" \
		"$TPG/luns create /backstores/ramdisk/rd0" \
		"$TPG/portals create $ISER_ADDR 3260" \
		"$TPG/portals/$PORTAL enable_iser boolean=true" \
		"$TPG/acls create $INAME" \
		"$TPG set attribute authentication=0 generate_node_acls=0"
	local np=$LIO/iscsi/$TIQN/tpgt_1/np/$PORTAL
	[ "$(cat "$np/iser")" = 1 ] || fail "portal $PORTAL: iser not enabled in configfs"
	[ "$(cat "$LIO/iscsi/$TIQN/tpgt_1/enable")" = 1 ] || fail "TPG 1 not enabled"
	[ "$(cat "$LIO/iscsi/$TIQN/tpgt_1/attrib/authentication")" = 0 ] ||
		fail "TPG 1 wants authentication"
	[ -e "$LIO/iscsi/$TIQN/tpgt_1/acls/$INAME/lun_0" ] || fail "LUN 0 not mapped to $INAME"
	rdma res show cm_id 2>/dev/null | grep -E "link $ISER_IBDEV/1 .*state LISTEN .*comm \[ib_isert\]" \
		>/dev/null || { rdma res show cm_id >&2; fail "ib_isert not listening on $ISER_IBDEV"; }
	echo "ok target $TIQN: ramdisk rd0 64 MiB as LUN 0, ACL $INAME, no auth," \
		"portal $PORTAL with iser (isert listening on $ISER_IBDEV)"
}

# The target's view of the initiator: a logged-in session whose connection is not TCP.
# LIO's ACL info names a connection's transport "TCP" or, for anything else (iser
# included), "SCTP": "   Address 192.168.77.1 SCTP  StatSN: ...".
target_session_check() { # context initiator-address
	local info
	info=$(cat "$LIO/iscsi/$TIQN/tpgt_1/acls/$INAME/info" 2>/dev/null) || true
	grep -q "TARG_SESS_STATE_LOGGED_IN" <<<"$info" &&
		grep -q "Connection State: TARG_CONN_STATE_LOGGED_IN" <<<"$info" ||
		{ echo "$info" >&2; fail "$1: target has no logged-in session of $INAME"; }
	grep -q "Address $2 " <<<"$info" && ! grep -q "Address .* TCP " <<<"$info" ||
		{ echo "$info" >&2; fail "$1: target connection not from $2, or over TCP"; }
	echo "ok $1: target sees $INAME logged in from $2, not over TCP"
}

# Configuration cleared, ib_isert and the LIO modules unloaded.
iser_target_down() {
	bounded 120 "targetcli clearconfig" tcli "clearconfig confirm=True"
	local left
	left=$(find "$LIO/iscsi" "$LIO/core" -mindepth 1 -maxdepth 1 -type d \
		! -name discovery_auth ! -name alua 2>/dev/null)
	[ -z "$left" ] || { cat /tmp/targetcli.out >&2; fail "target configuration left: $(echo $left)"; }
	# The fabric's configfs directory (rtslib made it) holds iscsi_target_mod until removed.
	bounded 30 "rmdir $LIO/iscsi" rmdir "$LIO/iscsi"
	bounded 60 "unload ib_isert" ulp_unload ib_isert
	# The fabric, the backstore modules rtslib loaded, then the core.
	bounded 60 "unload LIO" unload_loaded iscsi_target_mod target_core_user target_core_pscsi \
		target_core_file target_core_iblock target_core_mod
	echo "ok target gone: configuration cleared, ib_isert and the LIO modules unloaded"
}

# --- initiator ------------------------------------------------------------------------
# What the target and the port looked like when discovery or a login failed, for the log.
iser_diag() {
	echo "--- iscsid log ---"; tail -40 /tmp/iscsid.log
	echo "--- rdma res show cm_id ---"; rdma res show cm_id
	echo "--- rdma res show qp ---"; rdma res show qp
	echo "--- rdma res show cq ---"; rdma res show cq
	echo "--- rdma statistic ---"; rdma statistic show link "$ISER_IBDEV/1"
	[ "$ISER_IBDEV" != "$VCX_IBDEV" ] || vcx_state
	echo "--- iser / isert messages ---"; dmesg | grep -i -E "iser|rdma|cma" | grep -v "WR flushed" | tail -200
	# Where each CPU is (a CPU spinning shows here) and every blocked task.
	echo l >/proc/sysrq-trigger; echo w >/proc/sysrq-trigger; sleep 1
	echo "--- sysrq l, w ---"; dmesg | sed -n '/sysrq: Show backtrace of all active CPUs/,$p'
} >&2

iadm() { ulp_step "$1" "iscsiadm ${*:2}" iscsiadm "${@:2}"; }
iser_node() { iadm 30 -m node -T "$TIQN" -p "$PORTAL" -I iser "$@"; }
nset() { iser_node -o update -n "$1" -v "$2" >/dev/null; }

# ib_iser and iscsid up, an iser iface, the target found and its node record made.
iser_initiator_up() {
	# No udev in the guest: sd_mod is loaded here, or the LUN shows up with no disk.
	for m in sd_mod ib_iser; do
		modprobe "$m" || fail "modprobe $m"
	done
	[ -d /sys/class/iscsi_transport/iser ] || fail "no iser iSCSI transport registered"
	mkdir -p /run/lock/iscsi /var/lib/iscsi
	# iscsid in its own session: its shutdown (SIGTERM, iscsiadm -k) does killpg(SIGTERM)
	# on its process group, which would otherwise be this script's.
	setsid iscsid -f -d 2 >/tmp/iscsid.log 2>&1 &
	iscsid_pid=$!
	for _ in $(seq 100); do
		grep -q ISCSIADM_ABSTRACT_NAMESPACE /proc/net/unix && break
		kill -0 $iscsid_pid 2>/dev/null || { cat /tmp/iscsid.log >&2; fail "iscsid exited"; }
		sleep 0.1
	done
	grep -q ISCSIADM_ABSTRACT_NAMESPACE /proc/net/unix || fail "iscsid not listening after 10 s"
	# open-iscsi has a built-in iface "iser" (transport iser) that it refuses to modify;
	# make and set it up only where it is not built in.
	if ! grep -q '^iface.transport_name = iser$' <<<"$(iscsiadm -m iface -I iser 2>/dev/null)"; then
		iadm 30 -m iface -I iser -o new >/dev/null
		iadm 30 -m iface -I iser -o update -n iface.transport_name -v iser >/dev/null
	fi
	grep -q '^iface.transport_name = iser$' <<<"$(iscsiadm -m iface -I iser)" ||
		{ iscsiadm -m iface -I iser >&2; fail "iface iser has not transport iser"; }
	# SendTargets discovery over TCP on the same portal (LIO's iser attribute adds an
	# iSER listener beside the portal's TCP one), then the node record for iface iser:
	# every login, the I/O and the faults go over iSER. Not discovery through iface iser:
	# iscsiadm (open-iscsi 2.1.11) then runs the discovery session in the kernel itself
	# and loses a Text Response its kernel delivers before the netlink reply to the
	# SEND_PDU that carried the request (__kipc_call reads that RECV_PDU event into
	# conn->recv_context while it waits, then polls the empty socket until its timeout);
	# its reconnect takes the stale PDU for a login response and gives up, and sometimes
	# leaves that session in the kernel, where nothing removes it. A fast loopback made
	# that order common (one run in ten), and the leftover session then failed the next
	# login (docs/ulps.md).
	local disc
	disc=$(timeout 60 iscsiadm -m discovery -t sendtargets -p "$PORTAL" 2>&1) ||
		{ echo "$disc" >&2; iser_diag; fail "sendtargets discovery over TCP"; }
	grep -q "^$PORTAL,1 $TIQN\$" <<<"$disc" || { echo "$disc" >&2; fail "discovery: no $TIQN"; }
	iadm 30 -m node -o new -T "$TIQN" -p "$PORTAL" -I iser >/dev/null
	iscsiadm -m node -T "$TIQN" -p "$PORTAL" -I default -o delete >/dev/null 2>&1 || true
	nset node.session.timeo.replacement_timeout $REPLACEMENT_TIMEOUT
	nset node.conn[0].timeo.noop_out_interval $NOOP
	nset node.conn[0].timeo.noop_out_timeout $NOOP
	nset node.conn[0].timeo.login_timeout $LOGIN_TIMEOUT
	nset node.session.initial_login_retry_max 2
	nset node.startup manual
	grep -q '^iface.transport_name = iser$' <<<"$(iscsiadm -m node -T "$TIQN" -p "$PORTAL" -I iser)" ||
		fail "node record of $TIQN not bound to the iser transport"
	echo "ok discovery over TCP found $TIQN at $PORTAL, node record for iface iser; node timeouts:" \
		"replacement $REPLACEMENT_TIMEOUT s, noop $NOOP/$NOOP s, login $LOGIN_TIMEOUT s"
}

# The single session's sysfs name (sessionN), empty when none.
session_id() {
	local s
	for s in /sys/class/iscsi_session/session*; do
		[ -e "$s" ] && { basename "$s"; return 0; }
	done
	return 0
}
session_state() { cat "/sys/class/iscsi_session/$1/state" 2>/dev/null || echo gone; }
# The SCSI disk of session $1 (sdX), waiting up to 30 s for the LUN scan.
session_disk() {
	local b
	for _ in $(seq 150); do
		for b in /sys/class/iscsi_session/"$1"/device/target*/*:*:*:*/block/*; do
			[ -e "$b" ] && [ -b "/dev/${b##*/}" ] && { echo "${b##*/}"; return 0; }
		done
		sleep 0.2
	done
	return 1
}
# Wait up to $2 seconds for session $1 to reach state $3.
wait_session_state() {
	for _ in $(seq $(($2 * 5))); do
		[ "$(session_state "$1")" = "$3" ] && return 0
		sleep 0.2
	done
	return 1
}
# Log in (bounded), check the transport, find the disk: sets SID, DISK and INIT_QPS (and
# TGT_QPS with the target on this VM too).
iser_login() { # context
	# A discovery session (or the last logout's) can still be in sysfs for a moment, in
	# state FREE while the kernel tears it down; session_id must find the new one alone.
	# Under multi-threaded TCG with other VMs on the host it stayed there over 10 s once
	# (the kernel's iSER teardown had ended 10 s before), so wait up to 30 s.
	local _
	for _ in $(seq 150); do
		[ -z "$(session_id)" ] && break
		sleep 0.2
	done
	[ -z "$(session_id)" ] ||
		{ iser_diag; fail "$1: $(session_id) still in sysfs 30 s before the login"; }
	timeout 30 iscsiadm -m node -T "$TIQN" -p "$PORTAL" -I iser --login >/dev/null ||
		{ iser_diag; fail "$1: iscsiadm --login failed or still running after 30 s"; }
	SID=$(session_id)
	[ -n "$SID" ] || fail "$1: login returned but no iSCSI session in sysfs"
	wait_session_state "$SID" 10 LOGGED_IN || fail "$1: $SID is $(session_state "$SID")"
	local p1 host
	p1=$(iscsiadm -m session -P 1 2>&1)
	grep -q "Iface Transport: iser" <<<"$p1" ||
		{ echo "$p1" >&2; fail "$1: session transport is not iser"; }
	host=$(ls -d /sys/class/iscsi_session/"$SID"/device/../scsi_host/host* 2>/dev/null | head -1)
	[ "$(cat "$host/proc_name" 2>/dev/null)" = iscsi_iser ] ||
		fail "$1: SCSI host of $SID is not ib_iser's ($host: $(cat "$host/proc_name"))"
	DISK=$(session_disk "$SID") || fail "$1: no SCSI disk appeared for $SID"
	[ "$(cat /sys/block/"$DISK"/size)" = $((64 << 11)) ] ||
		fail "$1: /dev/$DISK has $(cat /sys/block/"$DISK"/size) sectors, not 64 MiB"
	INIT_QPS=$(ULP_IBDEV=$ISER_IBDEV ulp_qpns ib_iser)
	[ -n "$INIT_QPS" ] || { rdma res show qp >&2; fail "$1: no ib_iser QPs on $ISER_IBDEV"; }
	local tgt=""
	if [ "$ISER_LOCAL" = both ]; then
		TGT_QPS=$(ULP_IBDEV=$ISER_IBDEV ulp_qpns ib_isert)
		[ -n "$TGT_QPS" ] || { rdma res show qp >&2; fail "$1: no ib_isert QPs on $ISER_IBDEV"; }
		tgt=", ib_isert $(echo $TGT_QPS)"
	fi
	echo "ok $1: $SID logged in over iser (${host##*/}: iscsi_iser), disk /dev/$DISK" \
		"64 MiB; QPs on $ISER_IBDEV: ib_iser $(echo $INIT_QPS)$tgt"
}
iser_logout() { # context
	iser_node --logout >/dev/null
	[ -z "$(session_id)" ] || fail "$1: a session is left after logout"
	echo "ok $1: logged out"
}

# Node record and discovery forgotten, iscsid stopped, ib_iser and what it used unloaded.
iser_initiator_down() {
	iadm 30 -m node -T "$TIQN" -p "$PORTAL" -I iser -o delete
	iscsiadm -m discoverydb -t sendtargets -p "$PORTAL" -o delete >/dev/null 2>&1 || true
	iadm 30 -k 0
	wait_pid 10 "$iscsid_pid" || fail "iscsid still running 10 s after iscsiadm -k 0"
	# ib_iser, then what it used and modprobe -r left behind.
	bounded 60 "unload ib_iser" ulp_unload ib_iser
	# iscsi_tcp too: iscsiadm loads it for the discovery over TCP.
	bounded 60 "unload libiscsi" unload_loaded iscsi_tcp libiscsi_tcp libiscsi scsi_transport_iscsi
	echo "ok initiator gone: iscsid stopped, ib_iser unloaded"
}
