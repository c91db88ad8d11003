# SRP helpers shared by tests/guest/ulp-srp.sh (target and initiator on one VM) and the
# srp step of tests/guest/roce-link.sh (target in one VM, initiator in the other):
# ib_srpt (LIO, set up with targetcli) listening through rdma_cm, a 64 MiB ramdisk as
# LUN 0, and ib_srp logging in with add_target. Sourced after lib.sh and ulp-common.sh.
# Linux 6.12: rdma_cm_port and use_srq are not ib_srpt module parameters (modprobe ignores
# them, "unknown parameter ... ignored"): rdma_cm_port is the configfs attribute
# srpt/discovery_auth/rdma_cm_port, use_srq an attribute of the TPG (tpgt_1/attrib).

CM_PORT=5555
LIO=/sys/kernel/config/target

# targetcli asks the system D-Bus for tcmu-runner's user backstores before any command,
# outside its own try block: with no D-Bus in the guest it exits 255 ("g-io-error-quark:
# Could not connect"). It runs here with the bus lookup answering None, so that query
# fails inside the try and lists no user backstores; everything else is targetcli's own.
# Commands go to one targetcli shell on stdin (each start costs seconds under TCG).
TARGETCLI=(python3 -c 'import runpy, sys
from gi.repository import Gio
Gio.bus_get_sync = lambda *args: None
sys.argv[0] = "targetcli"
runpy.run_path("/usr/bin/targetcli", run_name="__main__")')
tcli() { # commands on stdin
	local rc=0
	timeout 120 "${TARGETCLI[@]}" >/tmp/targetcli.out 2>&1 || rc=$?
	[ $rc = 0 ] || { cat /tmp/targetcli.out >&2; fail "targetcli: exit status $rc"; }
	! grep -iE "error|not found|unknown|invalid|failed" /tmp/targetcli.out >&2 ||
		fail "targetcli reported an error (above)"
}

# The 128-bit GID 0 of IBDEV's port 1 as 32 hex digits.
srp_gid0() { tr -d : </sys/class/infiniband/"$1"/ports/1/gids/0; }
# The SRP initiator port ID of IBDEV (ib.<hex>): initiator_ext (0 here) then the interface
# ID of its GID 0, as an ACL of a GID-named target port wants it.
srp_iport_of() { local g; g=$(srp_gid0 "$1"); echo "ib.0000000000000000${g:16}"; }

# The target on IBDEV: ib_srpt listening with rdma_cm on CM_PORT; the srpt port named by
# IBDEV's GID 0 (0x<128-bit GID>, targetcli: ib.<GID>; ib_srpt also names it by the GUID
# of GID 0) with ramdisk rd0 as LUN 0, an ACL for initiator port IPORT and use_srq
# USE_SRQ. Sets TPORT, TPG, GUID (the service GUID an initiator logs in with), IPORT.
srp_target_up() { # IBDEV IPORT USE_SRQ
	mkdir -p /etc/target
	[ "$3" = 0 ] || srp_use_srq_warning_known
	modprobe ib_srpt || fail "modprobe ib_srpt"
	[ -d $LIO/srpt ] || mkdir $LIO/srpt || fail "mkdir $LIO/srpt"
	echo $CM_PORT >$LIO/srpt/discovery_auth/rdma_cm_port || fail "rdma_cm_port $CM_PORT"
	rdma res show cm_id 2>/dev/null | grep -E "state LISTEN .*comm \[ib_srpt\] src-addr .*:$CM_PORT" \
		>/dev/null || { rdma res show cm_id >&2; fail "ib_srpt not listening on port $CM_PORT"; }
	local gid0
	gid0=$(srp_gid0 "$1")
	TPORT=ib.$gid0
	IPORT=$2
	GUID=$(sed 's/^0x//' /sys/module/ib_srpt/parameters/srpt_service_guid)
	TPG=$LIO/srpt/0x$gid0/tpgt_1
	tcli <<-EOF
		/srpt info
		set global auto_save_on_exit=false auto_add_mapped_luns=true
		/backstores/ramdisk create name=rd0 size=64M
		/srpt create $TPORT
		/srpt/$TPORT/luns create /backstores/ramdisk/rd0
		/srpt/$TPORT/acls create $IPORT
		/srpt/$TPORT set attribute use_srq=$3
		exit
	EOF
	grep -q "Allowed WWNs list: .*$TPORT" /tmp/targetcli.out ||
		{ cat /tmp/targetcli.out >&2; fail "targetcli /srpt info does not offer $TPORT"; }
	[ "$(cat $TPG/enable)" = 1 ] || fail "srpt TPG not enabled"
	[ "$(cat $TPG/attrib/use_srq)" = "$3" ] || fail "use_srq not $3"
	[ -e "$TPG/acls/0x${IPORT#ib.}/lun_0" ] || fail "LUN 0 not mapped to ${IPORT}"
}

# ib_srpt (6.12 and later) releases every channel with srpt_cache_put(ch->req_buf_cache),
# but a channel of a port with use_srq=1 has no req_buf_cache (its receive buffers are
# the SRQ's): srpt_cache_put(NULL) finds no cache and warns once per boot
# (WARN_ON_ONCE at ib_srpt.c:158, from srpt_release_channel_work). It is not a vcx fault
# and nothing leaks (the callers check the device's objects). A target with use_srq=1
# registers that one splat with lib.sh's kernel_log_known; any other warning still fails.
srp_use_srq_warning_known() {
	kernel_log_known 'at drivers/infiniband/ulp/srpt/ib_srpt.c:[0-9]+ srpt_cache_put' \
		'srpt_release_channel_work'
}
srp_expect_clean_log() { # context
	kernel_log_clean || fail "$1: kernel log not clean"
	if [ "$(kernel_log_known_cut)" != 0 ]; then
		echo "ok $1: kernel log clean but for the known ib_srpt use_srq=1 warning:" \
			"$(dmesg | grep -E -m1 'ib_srpt.c:[0-9]+ srpt_cache_put' | sed 's/^\[[^]]*\] //')"
	else
		echo "ok $1: kernel log clean"
	fi
}

# Configuration cleared, rdma_cm listener closed, ib_srpt (and ib_srp where loaded) gone.
srp_target_down() {
	tcli <<-EOF
		clearconfig confirm=True
		exit
	EOF
	echo 0 >$LIO/srpt/discovery_auth/rdma_cm_port
	rmdir $LIO/srpt || fail "rmdir $LIO/srpt"
}

# ib_srp with short SRP transport timeouts (seconds), on IBDEV: sets SRPHOST.
srp_initiator_up() { # IBDEV reconnect_delay fast_io_fail_tmo dev_loss_tmo
	# No udev in the guest: sd_mod is loaded here, or the LUN shows up with no disk.
	modprobe sd_mod || fail "modprobe sd_mod"
	modprobe ib_srp reconnect_delay=$2 fast_io_fail_tmo=$3 dev_loss_tmo=$4 ||
		fail "modprobe ib_srp"
	SRPHOST=/sys/class/infiniband_srp/srp-$1-1
	[ -w $SRPHOST/add_target ] || fail "no $SRPHOST/add_target"
}
# The add_target line of an RDMA/CM login to the target at ADDR from SRC: id_ext and
# ioc_guid must both be the target's service GUID (ib_srpt checks both halves of the
# target port ID), dest the listener's IP:port.
srp_login_line() { echo "id_ext=$1,ioc_guid=$1,dest=$2:$CM_PORT,src=$3"; } # GUID ADDR SRC

rport() { # the single SRP remote port directory, or nothing
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p" ] && { echo "$p"; return; }
	done
}
rport_state() { cat "$1/state" 2>/dev/null || echo gone; }
# After add_target: the remote port, its ib_srp SCSI host and its 64 MiB disk, waited
# for up to 20 s. Sets RPORT, SHOST, DISK.
srp_find_disk() { # context
	local b h
	RPORT=$(rport)
	[ -n "$RPORT" ] || fail "$1: add_target returned but no SRP remote port"
	h=${RPORT##*/port-}
	SHOST=host${h%%:*}
	[ "$(cat /sys/class/scsi_host/$SHOST/proc_name)" = ib_srp ] || fail "$1: $SHOST is not ib_srp's"
	DISK=
	for _ in $(seq 100); do
		for b in /sys/class/scsi_host/$SHOST/device/target*/*:*:*:*/block/*; do
			[ -e "$b" ] && [ -b "/dev/${b##*/}" ] && DISK=${b##*/}
		done
		[ -n "$DISK" ] && break
		sleep 0.2
	done
	[ -n "$DISK" ] || fail "$1: no SCSI disk on $SHOST"
	[ "$(cat /sys/block/$DISK/size)" = $((64 << 11)) ] ||
		fail "$1: /dev/$DISK has $(cat /sys/block/$DISK/size) sectors, not 64 MiB"
	[ "$(rport_state "$RPORT")" = running ] || fail "$1: ${RPORT##*/} is $(rport_state "$RPORT")"
}
