#!/bin/bash
# iSER over loopback on vcx_0: a LIO target (targetcli, ib_isert) with a 64 MiB ramdisk
# LUN behind a portal on 192.168.77.1:3260 with iser enabled, and open-iscsi (iscsid,
# ib_iser) logging in to it through an iser iface, on one VM:
#   - the session's transport is iser on both sides, its QPs live on vcx_0;
#   - 32 MiB written and read back through the SCSI disk it created, sha256 compared;
#   - faults with a session logged in: the port's link down for a few seconds, then a QP
#     of the initiator in error (qp-error): the session recovers, or at least the logout
#     completes within iSCSI's own (shortened) timeouts; nothing hangs;
#   - teardown: logout, target cleared, ib_iser and ib_isert unloaded, the device holds
#     the objects it held before, the kernel log is clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"
. "$(dirname "$0")/bringup-common.sh"
. "$(dirname "$0")/ulp-common.sh"

ISER_ADDR=$ULP_ADDR ISER_IBDEV=$VCX_IBDEV ISER_LOCAL=both
. "$(dirname "$0")/iser-common.sh"

kernel_log_clean >/dev/null || fail "kernel log not clean before the test"
ulp_port_up
before=$(ulp_objects)
echo "ok port up with $ULP_ADDR; device objects before the ULPs: $before"
iser_target_up "$(iser_iname)"
iser_initiator_up

# --- the verified pass ----------------------------------------------------------------
iser_login "login"
target_session_check "target session" "$ULP_ADDR"
ulp_verify_block "/dev/$DISK" 32 "iSER"
iser_logout "logout"

# A fault with a session logged in: the initiator must notice it (its session FAILED)
# within its NOP-Out timeouts, then get the session back (a new connection, so a new
# QP) within the replacement timeout and a few logins, and carry a verified pass; if it
# does not come back, the logout must still complete.
expect_failed() { # context what
	local t0=$SECONDS
	wait_session_state "$SID" $((2 * NOOP + 20)) FAILED ||
		fail "$1: $SID still $(session_state "$SID") $((SECONDS - t0)) s after $2"
	kill -0 "$reader" 2>/dev/null || fail "$1: the read meant to be in flight had ended"
	echo "ok $1: $SID FAILED $((SECONDS - t0)) s after $2, a read in flight"
}
# A reader with I/O in flight across the fault: passes of 64 MiB direct reads until told
# to stop (at most 200), so that it is still reading when the fault comes however fast the
# guest reads. It must end, each pass with its data or an I/O error (commands fail once
# the replacement timeout passes), not hang.
start_reader() {
	rm -f /tmp/reader.stop /tmp/reader.count
	bash -c 'for n in $(seq 200); do
			[ -e /tmp/reader.stop ] && exit 0
			dd if="$1" of=/dev/null bs=1M count=64 iflag=direct status=none || exit 3
			echo $n >/tmp/reader.count
		done' reader "/dev/$DISK" 2>/tmp/reader.err &
	reader=$!
}
end_reader() { # context
	local rc=0
	touch /tmp/reader.stop
	wait_pid 90 $reader || fail "$1: the read in flight across the fault still running after 90 s"
	wait $reader || rc=$?
	if [ $rc = 0 ]; then
		echo "ok $1: the reads in flight across the fault completed" \
			"($(cat /tmp/reader.count 2>/dev/null || echo 0) passes of 64 MiB)"
	else
		echo "ok $1: the read in flight across the fault ended: exit $rc," \
			"$(head -1 /tmp/reader.err)"
	fi
}
recover_or_logout() { # context old-initiator-QPNs
	local t0=$SECONDS qps
	if wait_session_state "$SID" $((REPLACEMENT_TIMEOUT + 3 * LOGIN_TIMEOUT)) LOGGED_IN; then
		qps=$(ulp_qpns ib_iser)
		[ -n "$qps" ] && [ "$(echo $qps)" != "$(echo $2)" ] ||
			fail "$1: $SID LOGGED_IN but its QPs ($(echo $qps)) are the old ones"
		echo "ok $1: $SID recovered $((SECONDS - t0)) s after the fault ended," \
			"ib_iser QP $(echo $2) replaced by $(echo $qps)"
		target_session_check "$1: target session" "$ULP_ADDR"
		end_reader "$1"
		DISK=$(session_disk "$SID") || fail "$1: no disk after recovery"
		ulp_verify_block "/dev/$DISK" 4 "$1: after recovery"
	else
		echo "ok $1: $SID did not recover within $((SECONDS - t0)) s" \
			"(state $(session_state "$SID")), logging out"
		end_reader "$1"
	fi
	iser_logout "$1"
}

# --- fault (a): the link down for a few seconds ---------------------------------------
iser_login "link fault: login"
start_reader
ulp_link off
[ "$(state_field "$(vcx_state)" link)" = down ] || fail "link fault: link not down"
expect_failed "link fault" "link off"
sleep 2
ulp_link on
[ "$(state_field "$(vcx_state)" link)" = up ] || fail "link fault: link not up again"
echo "ok link fault: link on again"
recover_or_logout "link fault" "$INIT_QPS"

# --- fault (b): the initiator's QP in error -------------------------------------------
# Which QP is the initiator's: "rdma res show qp" lists both RC QPs as comm [rdma_cm];
# "rdma res show cm_id" names the module that made the ID, [ib_iser] on the initiator's
# (src port ephemeral, dst 3260, its lqpn) and [ib_isert] on the target's, which
# ulp_qpns reads.
iser_login "QP fault: login"
qpn=$(echo $INIT_QPS | cut -d' ' -f1)
# ib_iser's debug level 3 logs each error completion, flushes included (level 0 drops
# those: iser takes a flush for the aftermath of its own disconnect, so a QP failed under
# it is only noticed when a NOP-Out goes unanswered).
flushed() { dmesg_count "iser_err_comp: [a-z_]+ failure: WR flushed"; }
f0=$(flushed)
start_reader
echo 3 >/sys/module/ib_iser/parameters/debug_level
ulp_qp_error "$qpn"
echo "ok QP fault: initiator QP $qpn (ib_iser) put in error with qp-error"
expect_failed "QP fault" "qp-error"
echo 0 >/sys/module/ib_iser/parameters/debug_level
[ $(($(flushed) - f0)) -gt 0 ] || fail "QP fault: no work request of QP $qpn completed flushed"
echo "ok QP fault: $(($(flushed) - f0)) work requests of QP $qpn completed as WR flushed"
recover_or_logout "QP fault" "$INIT_QPS"

# --- teardown -------------------------------------------------------------------------
iser_initiator_down
iser_target_down
ulp_expect_objects "$before" "teardown"
ulp_expect_clean_log "teardown"
pass "iSER over loopback on $VCX_IBDEV: LIO target + open-iscsi, 32 MiB verified, link and QP faults ($SECONDS s)"
