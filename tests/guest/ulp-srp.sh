#!/bin/bash
# SRP over loopback on vcx_0 (RoCE v2) through rdma_cm, on one VM:
#   - target: ib_srpt (LIO, set up with targetcli) listening with rdma_cm on port 5555, a
#     64 MiB ramdisk as LUN 0 of the srpt port named by vcx_0's GID 0, an ACL for the
#     initiator's port ID; the shared receive queue on (use_srq=1) for the verified pass
#     and the link fault, off (use_srq=0: a receive ring per channel, immediate data
#     granted) for the link loss and the QP fault;
#   - initiator: ib_srp logs in with add_target (id_ext, ioc_guid, dest=IP:port; srptools
#     do not discover over RoCE), 32 MiB written and read back through its SCSI disk;
#   - faults, each with a fresh login and I/O in flight: (a) the link down 6 s: the
#     initiator reconnects once it is up; (a2) the link down with reconnects off and
#     short rport timeouts: SRP fails the I/O (fast_io_fail_tmo) and removes the SCSI host
#     itself (dev_loss_tmo) while the link is down; (b) a QP of the initiator in error
#     (qp-error): the initiator reconnects. Every removal completes; nothing hangs;
#   - teardown: target cleared, ib_srp and ib_srpt unloaded, the device holds the objects
#     it held before, the kernel log is clean (but for one known ib_srpt warning, below).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"
. "$(dirname "$0")/bringup-common.sh"
. "$(dirname "$0")/ulp-common.sh"
. "$(dirname "$0")/srp-common.sh"   # the 6.12 notes on ib_srpt's parameters too

# SRP transport timeouts (seconds), short: reconnect attempts every 2 s, I/O failed after
# 10 s without a connection, the SCSI host removed after 30 s.
RECONNECT_DELAY=2
FAST_IO_FAIL_TMO=10
DEV_LOSS_TMO=30
LINK_DOWN_S=8

# The whole kernel log goes to the run directory (kept by ./vcx vm on a failure).
[ -n "${VCX_RESULT:-}" ] && trap 'dmesg >"$VCX_RESULT/ulp-srp-dmesg.txt" 2>/dev/null || true' EXIT

# A hung task shows up in the log within 30 s instead of 120 (every wait here is shorter).
[ -w /proc/sys/kernel/hung_task_timeout_secs ] && echo 30 >/proc/sys/kernel/hung_task_timeout_secs

kernel_log_clean >/dev/null || fail "kernel log not clean before the test"
ulp_port_up
before=$(ulp_objects)
echo "ok port up with $ULP_ADDR; device objects before the ULPs: $before"

STALE_QPS=

# --- target ---------------------------------------------------------------------------
# Target and initiator are the same port of vcx_0 here: the ACL is for vcx_0's own port ID.
srp_target_up "$VCX_IBDEV" "$(srp_iport_of "$VCX_IBDEV")" 1
USE_SRQ=1
o=$(ulp_objects)
[ "$(objs_field "$o" srqs)" = $(($(objs_field "$before" srqs) + 1)) ] ||
	fail "use_srq=1: device objects $o (want one SRQ more than $before)"
echo "ok target: ramdisk rd0 64 MiB as LUN 0 of srpt port $TPORT, ACL $IPORT," \
	"rdma_cm listening on port $CM_PORT, use_srq=1 (the device has $(objs_field "$o" srqs) SRQ)"
# ib_srpt sets IsDeviceManagementSupported with ib_modify_port() on every non-iWARP port.
# vcx has no modify_port: for a RoCE port ib_core then answers 0 (mlx5_ib_modify_port
# returns 0 on Ethernet ports too), so no "enabling device management failed" is expected.
if dmesg_has "enabling device management failed"; then
	echo "note: $(dmesg | grep -m1 'enabling device management failed')"
else
	echo "ok ib_srpt: device management enabled on $VCX_IBDEV port 1 (ib_modify_port accepted)"
fi

# --- initiator ------------------------------------------------------------------------
srp_initiator_up "$VCX_IBDEV" $RECONNECT_DELAY $FAST_IO_FAIL_TMO $DEV_LOSS_TMO
LOGIN=$(srp_login_line "$GUID" "$ULP_ADDR" "$ULP_ADDR")

# Log in, find the disk: sets RPORT, SHOST, DISK, INIT_QPS, TGT_QPS.
srp_login() { # context
	local b t0=$SECONDS imm0 imm
	imm0=$(dmesg_count "ib_srp: using immediate data")
	ulp_step 120 "$1: add_target" sh -c "echo '$LOGIN' >$SRPHOST/add_target"
	srp_find_disk "$1"
	if [ -n "$STALE_QPS" ]; then
		# Channels the target kept after a loss: the relogin closes them (as many channels
		# as then, one QP on each side of each).
		local want=$((QPS_BASE + 2 * $(echo $STALE_QPS | wc -w))) end=$((SECONDS + 30))
		until [ "$(objs_field "$(ulp_objects)" qps)" = $want ]; do
			[ $SECONDS -lt $end ] || fail "$1: the target's stale channels (QPs $STALE_QPS) not closed: $(ulp_objects)"
			sleep 0.5
		done
	fi
	INIT_QPS=$(ulp_qpns ib_srp)
	TGT_QPS=$(ulp_qpns ib_srpt)
	if [ -n "$STALE_QPS" ]; then
		for b in $STALE_QPS; do
			! grep -q " $b " <<<" $TGT_QPS " || fail "$1: stale target QP $b still listed"
		done
		echo "ok $1: the target closed its stale channels (ib_srpt QPs $STALE_QPS) on the relogin"
		STALE_QPS=
	fi
	[ -n "$INIT_QPS" ] && [ -n "$TGT_QPS" ] ||
		{ rdma res show qp >&2; fail "$1: no ib_srp/ib_srpt QPs on $VCX_IBDEV"; }
	rdma res show cm_id 2>/dev/null | grep -E "link $VCX_IBDEV/1 .*state CONNECT .*comm \[ib_srp\] .*dst-addr $ULP_ADDR:$CM_PORT" \
		>/dev/null || { rdma res show cm_id >&2; fail "$1: no connected ib_srp rdma_cm ID to $ULP_ADDR:$CM_PORT"; }
	# ib_srpt grants immediate data (SRP_LOGIN_RSP_IMMED_SUPP) only to channels with their
	# own receive ring, i.e. with use_srq=0.
	imm=$(($(dmesg_count "ib_srp: using immediate data") - imm0))
	if [ "$USE_SRQ" = 1 ]; then
		[ $imm = 0 ] || fail "$1: immediate data granted with use_srq=1"
	else
		[ $imm -gt 0 ] || fail "$1: no immediate data granted with use_srq=0"
	fi
	echo "ok $1: logged in through rdma_cm in $((SECONDS - t0)) s, ${RPORT##*/} running" \
		"($SHOST, ib_srp), disk /dev/$DISK 64 MiB; RC QPs on $VCX_IBDEV:" \
		"ib_srp $(echo $INIT_QPS), ib_srpt $(echo $TGT_QPS); use_srq=$USE_SRQ," \
		"immediate data on $imm of $(echo $INIT_QPS | wc -w) channels"
}
# Remove the SCSI host through the rport's delete attribute, wait (bounded) until the
# port, the host and every SRP QP on both sides are gone.
srp_remove() { # context
	local t0=$SECONDS p
	p=$(rport)
	[ -z "$p" ] || ulp_step 30 "$1: delete ${p##*/}" sh -c "echo 1 >$p/delete"
	srp_wait_removed "$1" 60 || fail "$1: ${RPORT##*/} or $SHOST still there $((SECONDS - t0)) s after delete"
	echo "ok $1: SCSI host removed in $((SECONDS - t0)) s, the QPs of both sides destroyed"
}
# Wait up to $2 s until the rport and its SCSI host are gone, then (bounded) until the
# device holds $3 QPs more than with no session (default 0): the SRP QPs destroyed.
# The device count is watched rather than rdma res: a restrack dump queries every QP it
# lists, and one the driver has just destroyed (ib_core drops it from restrack after
# the driver's destroy_qp) makes vcx log a failed QUERY_QP.
QPS_BASE=$(objs_field "$before" qps)
srp_wait_removed() { # context seconds [qps-left]
	local end=$((SECONDS + $2)) want=$((QPS_BASE + ${3:-0}))
	while [ -n "$(rport)" ] || [ -e "/sys/class/scsi_host/$SHOST" ]; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
	end=$((SECONDS + 60))
	until [ "$(objs_field "$(ulp_objects)" qps)" = $want ]; do
		[ $SECONDS -lt $end ] || fail "$1: device objects $(ulp_objects), want $want QPs"
		sleep 0.5
	done
	[ -z "$(ulp_qpns ib_srp)" ] || { rdma res show qp >&2; fail "$1: ib_srp QPs listed after the removal"; }
	[ -n "${3:-}" ] || [ -z "$(ulp_qpns ib_srpt)" ] ||
		{ rdma res show qp >&2; fail "$1: ib_srpt QPs listed after the removal"; }
}

# --- the verified pass ----------------------------------------------------------------
srp_login "login"
tmo="reconnect_delay=$(cat "$RPORT/reconnect_delay") fast_io_fail_tmo=$(cat "$RPORT/fast_io_fail_tmo")"
tmo="$tmo dev_loss_tmo=$(cat "$RPORT/dev_loss_tmo")"
[ "$tmo" = "reconnect_delay=$RECONNECT_DELAY fast_io_fail_tmo=$FAST_IO_FAIL_TMO dev_loss_tmo=$DEV_LOSS_TMO" ] ||
	fail "rport timeouts: $tmo"
echo "ok ${RPORT##*/} timeouts (ib_srp's module parameters): $tmo"
# The target's view: the ACL's LUN 0 has an attached initiator port, and counts the I/O.
STATS=$TPG/acls/0x${IPORT#ib.}/lun_0/statistics
ident=$(cat $STATS/scsi_att_intr_port/port_ident 2>/dev/null || true)
grep -qi "0x${IPORT#ib.}" <<<"$ident" || fail "target: no session of $IPORT on LUN 0 ($ident)"
echo "ok target session: LUN 0 of ACL $IPORT attached to initiator port $ident"
w0=$(cat $STATS/scsi_auth_intr/write_mbytes)
r0=$(cat $STATS/scsi_auth_intr/read_mbytes)
ulp_verify_block "/dev/$DISK" 32 "SRP"
w=$(($(cat $STATS/scsi_auth_intr/write_mbytes) - w0))
r=$(($(cat $STATS/scsi_auth_intr/read_mbytes) - r0))
[ $w -ge 32 ] && [ $r -ge 32 ] || fail "target counted $w MiB written, $r MiB read (want >= 32)"
echo "ok target counted $w MiB written and $r MiB read by $IPORT on LUN 0"
srp_remove "logout"

# Faults: I/O in flight (a bounded loop rewriting the first 4 MiB with direct I/O until
# told to stop), the fault, then the recovery: the rport back to running with new QPs (a
# reconnect), or gone (SRP's dev_loss_tmo). The rport states seen are collected.
# An RC requester notices a dead link, a responder does not: a write whose SRP_CMD was
# acknowledged before the link went down leaves only the target's RDMA READ and response
# outstanding, the target's QP fails (retries spent) and the initiator learns nothing
# until the SCSI command times out (30 s, then an abort whose send fails). A prober
# reading one block every 0.5 s puts a fresh SRP_CMD send on an initiator QP while the
# link is down, so the initiator sees its own retries spent within seconds.
STATES=
note_state() { # sets S, adds it to STATES
	S=$(rport_state "$RPORT")
	case " $STATES " in *" $S "*) ;; *) STATES="$STATES $S" ;; esac
}
watch_rport() { # seconds
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		note_state
		sleep 0.2
	done
}
# The I/O in flight during a fault: a loop of direct writes over the first 4 MiB, and a
# prober issuing a new 4 KiB command every 0.5 s in the second half of the disk (so that
# the initiator sends, and notices a dead link, even while the loop waits on a command
# whose answer was lost). "registered" (the default): 256 KiB writes and 4 KiB reads,
# each through a memory registration (REG_MR, then LOCAL_INV when it ends).
# "unregistered": 4 KiB writes only, loop and prober, which SRP sends as immediate data
# in the SRP_CMD (the target grants it with use_srq=0), so no work request names a
# request's memory. The writes never create their output (conv=nocreat): a write after
# SRP removed the disk would leave a plain file at /dev/sdX, and the next login's disk
# would get no device node. The link-loss step needs the second: there SRP fails the I/O,
# whose LOCAL_INVs the device flushes into the send CQ, then frees the requests
# (scsi_remove_host frees the tag set) before srp_free_ch_ib polls that CQ and calls
# through each flushed completion's wr_cqe, which points into a freed request. An
# upstream ib_srp use-after-free (Linux 6.12), hit on any HCA that flushes unsignaled
# work requests as ConnectX does; with init_on_free=1 (the ulp suite's guests) it is a
# call through NULL every time. docs/ulps.md, SRP, "Known, in ib_srp of 6.12".
start_io() { # [registered|unregistered]; also notes the count of reconnects so far
	local mode=${1:-registered}
	RECONNECTS=$(dmesg_count "ib_srp: reconnect succeeded")
	head -c $((4 << 20)) /dev/urandom >/tmp/ulp-io
	rm -f /tmp/io.stop /tmp/io.count
	timeout 300 bash -c 'n=0
		while [ ! -e /tmp/io.stop ]; do
			dd if=/tmp/ulp-io of="$1" bs=$2 oflag=direct conv=nocreat status=none || exit 3
			n=$((n + 1)); echo $n >/tmp/io.count
		done' io "/dev/$DISK" "$([ "$mode" = registered ] && echo 256k || echo 4k)" \
		2>/tmp/io.err &
	IO=$!
	timeout 300 bash -c 'while [ ! -e /tmp/io.stop ]; do
			if [ "$2" = registered ]; then
				dd if="$1" of=/dev/null bs=4k count=1 skip=$((8192 + RANDOM % 4096)) \
					iflag=direct status=none
			else
				dd if=/tmp/ulp-io of="$1" bs=4k count=1 seek=$((8192 + RANDOM % 4096)) \
					oflag=direct conv=nocreat status=none
			fi 2>/dev/null
			sleep 0.5
		done' probe "/dev/$DISK" "$mode" &
	PROBE=$!
	for _ in $(seq 100); do
		[ -e /tmp/io.count ] && break
		kill -0 $IO 2>/dev/null || { cat /tmp/io.err >&2; fail "the background I/O failed"; }
		sleep 0.2
	done
	[ -e /tmp/io.count ] || fail "the background I/O made no progress in 20 s"
}
stop_io() { # context: sets IO_RC (0: every write completed, 3: a write failed)
	IO_RC=0
	touch /tmp/io.stop
	wait $IO || IO_RC=$?
	[ $IO_RC != 124 ] || fail "$1: the I/O in flight hung (still running after 300 s)"
	wait $PROBE || [ $? != 124 ] || fail "$1: the prober hung (still running after 300 s)"
	[ $IO_RC = 0 ] || [ $IO_RC = 3 ] || fail "$1: the I/O loop exited with $IO_RC"
	echo "ok $1: I/O in flight ended: $(cat /tmp/io.count 2>/dev/null || echo 0) passes of" \
		"4 MiB, $([ $IO_RC = 0 ] && echo "no write failed" ||
			echo "a write failed: $(head -c 120 /tmp/io.err | tr '\n' ' ')")"
}
recover_or_removed() { # context old-qps
	local t0=$SECONDS qps
	# Watched through the rport state and ib_srp's "reconnect succeeded", not rdma res
	# (the old QPs are being destroyed: see srp_wait_removed).
	while [ $SECONDS -lt $((t0 + DEV_LOSS_TMO + 30)) ]; do
		note_state
		[ "$S" = running ] && [ "$(dmesg_count "ib_srp: reconnect succeeded")" -gt "$RECONNECTS" ] && break
		[ "$S" = gone ] && break
		sleep 0.2
	done
	stop_io "$1"
	case $S in
	running)
		qps=$(ulp_qpns ib_srp)
		[ "$(dmesg_count "ib_srp: reconnect succeeded")" -gt "$RECONNECTS" ] ||
			fail "$1: no reconnect within $((SECONDS - t0)) s (rport states seen:$STATES)"
		[ -n "$qps" ] && [ "$qps" != "$2" ] ||
			fail "$1: ${RPORT##*/} reconnected but its QPs ($(echo $qps)) are the old ones"
		echo "ok $1: reconnected $((SECONDS - t0)) s after the fault ended (rport states" \
			"seen:$STATES), ib_srp QPs $(echo $2) replaced by $(echo $qps)"
		ulp_verify_block "/dev/$DISK" 4 "$1: after the reconnect"
		;;
	gone)
		echo "ok $1: no reconnect; dev_loss_tmo removed the port (states seen:$STATES)" ;;
	*)
		dmesg | grep -E "ib_srp|srpt" | tail -20 >&2
		fail "$1: ${RPORT##*/} $S, no new QPs $((SECONDS - t0)) s after the fault (seen:$STATES)" ;;
	esac
	srp_remove "$1"
}

# --- fault (a): the link down for a few seconds ---------------------------------------
srp_login "link fault: login"
start_io
STATES=
ulp_link off
[ "$(state_field "$(vcx_state)" link)" = down ] || fail "link fault: link not down"
watch_rport $LINK_DOWN_S
ulp_link on
[ "$(state_field "$(vcx_state)" link)" = up ] || fail "link fault: link not up again"
echo "ok link fault: link off for $LINK_DOWN_S s under I/O (rport states seen:$STATES), on again"
recover_or_removed "link fault" "$INIT_QPS"

# --- use_srq=0 from here on ------------------------------------------------------------
# Only with no channel: ib_srpt's use_srq store closes the port's channels without waiting
# for their release and destroys the SRQ at once; with a QP still on it the destroy fails
# (-EBUSY, "Destroy of kernel SRQ shouldn't fail" WARN in srpt_free_srq), the SRQ is
# leaked and its receive ring freed under it.
[ "$(objs_field "$(ulp_objects)" qps)" = $QPS_BASE ] ||
	fail "use_srq=0: the target still has channels: $(ulp_objects)"
tcli <<-EOF
	/srpt/$TPORT set attribute use_srq=0
	exit
EOF
USE_SRQ=0
[ "$(objs_field "$(ulp_objects)" srqs)" = "$(objs_field "$before" srqs)" ] ||
	fail "use_srq=0: the target's SRQ is still there: $(ulp_objects)"
echo "ok use_srq=0: the target's SRQ destroyed, channels get their own receive queues"

# --- fault (a2): the link down for longer than SRP waits ---------------------------
# This rport's timeouts set through its sysfs attributes: I/O failed 2 s and the SCSI
# host removed 6 s after the transport error, and no reconnect attempt. A reconnect
# attempt holds the rport mutex while rdma_cm waits for the CM REP, and with the link
# down the REQ and its retries are lost (about 16 x 4.8 s): fast_io_fail_tmo and
# dev_loss_tmo wait for that mutex. With reconnects off SRP's own timeouts act on time.
srp_login "link loss: login"
echo 2 >"$RPORT/fast_io_fail_tmo" && echo 6 >"$RPORT/dev_loss_tmo" &&
	echo off >"$RPORT/reconnect_delay" || fail "link loss: setting the rport timeouts"
echo "ok link loss: ${RPORT##*/} reconnect_delay=$(cat "$RPORT/reconnect_delay")" \
	"fast_io_fail_tmo=$(cat "$RPORT/fast_io_fail_tmo") dev_loss_tmo=$(cat "$RPORT/dev_loss_tmo")"
start_io unregistered	# not registered: see start_io
STATES=
t0=$SECONDS
ulp_link off
end=$((SECONDS + 60))
while [ $SECONDS -lt $end ]; do
	note_state
	[ "$S" = gone ] && [ ! -e "/sys/class/scsi_host/$SHOST" ] && break
	sleep 0.2
done
t=$((SECONDS - t0))
ulp_link on
[ "$S" = gone ] || fail "link loss: ${RPORT##*/} still $S ${t} s after the link went off (seen:$STATES)"
case "$STATES" in *fail-fast*) ;; *) fail "link loss: the rport never went fail-fast (seen:$STATES)" ;; esac
stop_io "link loss"
[ $IO_RC = 3 ] || fail "link loss: no write failed though the port went fail-fast"
# The initiator's disconnect was lost with the link: the target's channels live on (SRP
# has no keepalive) until the next login of this initiator port closes them.
srp_wait_removed "link loss" 10 $(echo $TGT_QPS | wc -w) || fail "link loss: SCSI host still there"
STALE_QPS=$(echo $TGT_QPS)
echo "ok link loss: SRP removed ${RPORT##*/} by itself ${t} s after the link went off" \
	"(states seen:$STATES), initiator QPs destroyed, link on again; target channels" \
	"(ib_srpt QPs $STALE_QPS) left for the next login to close"

# --- fault (b): a QP of the initiator in error ----------------------------------------
srp_login "QP fault: login"
start_io
STATES=
qpn=$(echo $INIT_QPS | cut -d' ' -f1)
ulp_qp_error "$qpn"
echo "ok QP fault: initiator QP $qpn (ib_srp) put in error with qp-error under I/O"
recover_or_removed "QP fault" "$INIT_QPS"

# --- teardown -------------------------------------------------------------------------
srp_target_down
ulp_unload ib_srp ib_srpt
for m in ib_srp ib_srpt scsi_transport_srp; do
	[ ! -d /sys/module/$m ] || fail "$m still loaded"
done
echo "ok target cleared, ib_srp and ib_srpt unloaded"
ulp_expect_objects "$before" "teardown"
srp_expect_clean_log "teardown"
pass "SRP over rdma_cm on $VCX_IBDEV: login, 32 MiB verified, link down (reconnect and" \
	"dev_loss removal) and QP error recovered, clean teardown, in $SECONDS s"
