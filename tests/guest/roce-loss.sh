#!/bin/bash
# A long RC stream between two VMs through each wire fault of vm0's vcx port
# (docs/networking.md "Wire faults"). Both VMs run this script (./vcx vm --vms 2) and
# meet through their shared directory, as roce-link.sh does (tests/guest/roce-lib.sh).
# Usage: roce-loss.sh vcx|peer [FAULTS]   (FAULTS: a list as LOSS_FAULTS below)
#   vcx:  vcx_0 in both VMs; vm0 is the client (the requester), vm1 the server.
#   peer: vcx_0 in vm0, Soft-RoCE (rxe0) on a virtio-net in vm1 (--peer virtio); the
#         stream runs twice, server in vm1 then in vm0, so vcx_0 is requester and
#         responder against rxe.
# For each fault (LOSS_FAULTS; vcx: drop=0.01 drop=0.10 dup=0.01 reorder=0.01
# corrupt=0.01, peer: drop=0.01) vm0 sets its device's wire-fault property to
# "FAULT,seed=K,dir=both" through the runner's host call, then tests/userspace/
# vcx_rc_stream runs: LOSS_MSGS (default 10000) SEND_WITH_IMM messages of 1 B .. 8 KiB
# into the server's SRQ, every byte and every sequence number checked (each exactly once),
# then as many RDMA WRITEs each read back and compared, and the server's region checked;
# every completion status and every wait checked or bounded inside the tool. After each
# fault the counters' growth is printed and must show the fault and the recovery from it:
#   vm0's device state (qom-get state): the fault's own count (fault_drop, fault_dup,
#     fault_reorder, fault_corrupt) above 0;
#   drop, corrupt:  vm0's requester retransmitted: local_ack_timeout_err, packet_seq_err
#                   or implied_nak_seq_err (rdma statistic of vcx_0) grew;
#   corrupt:        some receiver dropped frames on their ICRC (roce_icrc_err of a vcx
#                   state; mode vcx only: an rxe end fails on any bad ICRC);
#   dup:            the responder saw duplicate requests (duplicate_request);
#   reorder:        the responder saw a PSN gap (out_of_sequence / out_of_seq_request);
# and no RNR or transport retry was exhausted (req_rnr_retries_exceeded,
# req_transport_retries_exceeded; rxe's hard errors, as roce-link.sh checks them). RNR NAKs
# within rnr_retry (rnr_nak_retry_err) are printed, not failed. The kernel log must be clean at the end.
# LOSS_ACK_TIMEOUT: the QP's local ACK timeout exponent (4.096 us << T; default 14, 67 ms).
# LOSS_MSGS: messages per phase. LOSS_SERVERS: the VMs that serve, one stream each
# (default vcx: 1; peer: "1 0").
. "$(dirname "$0")/lib.sh"

mode=${1:?usage: roce-loss.sh vcx|peer [FAULTS]}
case "$mode" in
vcx) faults_default="drop=0.01 drop=0.10 dup=0.01 reorder=0.01 corrupt=0.01" servers=1 ;;
peer) faults_default="drop=0.01" servers="1 0" ;;
*) fail "unknown mode $mode (vcx or peer)" ;;
esac
FAULTS=${2:-${LOSS_FAULTS:-$faults_default}}
servers=${LOSS_SERVERS:-$servers}   # the VMs that serve, one stream each
# An rxe end fails the run on any frame failing its ICRC check (roce-lib.sh), as it must
# when nothing corrupts frames on purpose.
[ "$mode" != peer ] || [[ "$FAULTS" != *corrupt* ]] ||
	fail "peer mode: no corrupt fault (rxe's ICRC probe fails the run on every bad frame)"
MSGS=${LOSS_MSGS:-10000}
ACK_T=${LOSS_ACK_TIMEOUT:-14}
# One stream may take minutes under TCG at 10% drop: the runner's bound, not the tool's.
ROCE_RUN_TIMEOUT=${ROCE_RUN_TIMEOUT:-1500}
. "$(dirname "$0")/roce-lib.sh"
SUMMARY_RE='^phase send'
HOSTCALL="$(dirname "$0")/../../images/vcx-hostcall"
STREAM=$VCX_BUILD/vcx_rc_stream
[ -x "$STREAM" ] || fail "no $STREAM (built by ./vcx build)"
QOM=/machine/peripheral/vcx0

# This VM's counters as "name=value" words: vcx_0's Q counter and device state, or rxe's.
VCX_QC="out_of_sequence duplicate_request packet_seq_err implied_nak_seq_err local_ack_timeout_err rnr_nak_retry_err out_of_buffer req_rnr_retries_exceeded req_transport_retries_exceeded"
VCX_ST="roce_icrc_err roce_malformed roce_bad_tver roce_bad_pkey roce_bad_qp roce_bad_opcode roce_rx_drop retransmits nak_sent rnr_nak_rcvd fault_drop fault_dup fault_reorder fault_corrupt"
snapshot() {
	local stats st name v
	stats=$(rdma statistic show link "$DEV/1") || fail "rdma statistic show link $DEV/1"
	if is_rxe; then
		for name in $RXE_COUNTERS; do
			echo "$name=$(counter "$stats" $name)"
		done
		return
	fi
	for name in $VCX_QC; do
		v=$(counter "$stats" $name)
		[[ "$v" =~ ^[0-9]+$ ]] || fail "$DEV: no counter $name in rdma statistic: $stats"
		echo "$name=$v"
	done
	st=$("$HOSTCALL" hmp "qom-get $QOM state" | tr -d '"\r') || fail "qom-get $QOM state"
	for name in $VCX_ST; do
		v=$(tr ' ' '\n' <<<"$st" | sed -n "s/^$name=//p")
		[[ "$v" =~ ^[0-9]+$ ]] || fail "no $name in the device state: $st"
		echo "$name=$v"
	done
}
# The growth from BEFORE (a snapshot) to now, as "name+delta" words.
growth() { # BEFORE
	local now name v b
	now=$(snapshot)
	for w in $now; do
		name=${w%%=*} v=${w#*=}
		b=$(sed -n "s/^$name=//p" <<<"$1")
		echo "$name+$((v - b))"
	done | tr '\n' ' '
}
g() { # WORDS NAME: the growth of NAME in WORDS, 0 if absent
	local v
	v=$(tr ' ' '\n' <<<"$1" | sed -n "s/^$2+//p")
	echo "${v:-0}"
}

set_fault() { # SPEC (drop=0: off)
	local got key want have out
	out=$("$HOSTCALL" hmp "qom-set $QOM wire-fault $1") || fail "qom-set wire-fault $1: $out"
	[ -z "$(tr -d '\r\n' <<<"$out")" ] || fail "qom-set wire-fault $1: $out"
	got=$("$HOSTCALL" hmp "qom-get $QOM wire-fault" | tr -d '"\r')
	log "wire-fault now: $got"
	key=${1%%=*} want=${1#*=} want=${want%%,*}
	have=$(tr ',' '\n' <<<"$got" | sed -n "s/^$key=//p")
	awk -v a="$have" -v b="$want" 'BEGIN { exit !(a != "" && a + 0 == b + 0) }' ||
		fail "wire-fault '$1' not taken: $got"
}

check_stream() { # OUT SIDE
	! grep -q '^FAIL' "$1" || return 1
	grep -q "^phase send: messages $MSGS," "$1" && grep -q "^phase write: messages $MSGS," "$1"
}

# Does the fault's evidence hold? mine: vm0's growth, theirs: vm1's.
evidence() { # FAULT MINE THEIRS
	local f=${1%%=*} mine=$2 theirs=$3 retrans why=""
	[ "$(g "$mine" "fault_$f")" -gt 0 ] || why="$why; vm0's fault_$f did not grow"
	retrans=$(($(g "$mine" local_ack_timeout_err) + $(g "$mine" packet_seq_err) + $(g "$mine" implied_nak_seq_err)))
	case $f,$servers in
	drop,*1* | corrupt,*1*) # vm0 was a requester
		[ $retrans -gt 0 ] || why="$why; vm0 never retransmitted (local_ack_timeout_err, packet_seq_err, implied_nak_seq_err)"
		;;
	drop,* | corrupt,*) # vm0 only served (LOSS_SERVERS=0): its responder saw the gaps
		[ $(($(g "$mine" out_of_sequence) + $(g "$mine" duplicate_request))) -gt 0 ] ||
			why="$why; vm0's responder saw no gap nor duplicate (out_of_sequence, duplicate_request)"
		;;
	esac
	case $f in
	corrupt)
		[ $(($(g "$mine" roce_icrc_err) + $(g "$theirs" roce_icrc_err))) -gt 0 ] ||
			why="$why; no receiver dropped a frame on its ICRC (roce_icrc_err)"
		;;
	dup)
		[ $(($(g "$mine" duplicate_request) + $(g "$theirs" duplicate_request))) -gt 0 ] ||
			why="$why; no duplicate_request at either responder"
		;;
	reorder)
		[ $(($(g "$mine" out_of_sequence) + $(g "$theirs" out_of_sequence) + $(g "$theirs" out_of_seq_request))) -gt 0 ] ||
			why="$why; no responder saw a PSN gap (out_of_sequence)"
		;;
	esac
	for c in req_rnr_retries_exceeded req_transport_retries_exceeded retry_exceeded_err \
		retry_rnr_exceeded_err send_err link_downed; do
		[ "$(g "$mine" $c)" = 0 ] && [ "$(g "$theirs" $c)" = 0 ] || why="$why; $c grew"
	done
	[ -z "$why" ] || { echo "${why#; }"; return 1; }
}

step_setup
k=0
for fault in $FAULTS; do
	k=$((k + 1))
	before=$(snapshot)
	[ "$me" != 0 ] || set_fault "$fault,seed=$k,dir=both"
	vm_signal "fault-$k"
	vm_wait "fault-$k" $WAIT >/dev/null
	t0=$(date +%s)
	for s in $servers; do
		TCP_PORT=$((TCP_PORT + 1))
		args="-d $DEV -g $GID -p $TCP_PORT -n $MSGS -t $ACK_T"
		pair "stream $fault" "$s" tcp:$TCP_PORT check_stream "$args server" "$args client @CTL@" \
			"$STREAM"
		log "$(grep '^phase' "/tmp/roce-p$PAIR_N.out" | tr '\n' ';')"
	done
	[ "$me" != 0 ] || set_fault drop=0
	mine=$(growth "$before")
	vm_signal "growth-$k" "$mine"
	theirs=$(vm_wait "growth-$k" $WAIT)
	if [ "$me" = 1 ]; then # mine and theirs: vm0's and vm1's
		vm1=$mine mine=$theirs theirs=$vm1
	fi
	log "counters over $fault: vm0: $mine"
	log "counters over $fault: vm1: $theirs"
	why=$(evidence "$fault" "$mine" "$theirs") || fail "$fault: the counters do not show the fault and its recovery: $why"
	ok "$fault: $MSGS SENDs and $MSGS WRITE+READs per stream, each exactly once and intact, in $(($(date +%s) - t0)) s; counters show the fault and its recovery"
	rxe_check "$fault"
done
step_counters
kernel_log_clean || fail "kernel warnings or oopses in vm$me (above)"
vm_signal done
vm_wait done $WAIT >/dev/null
pass "vm$me ($mode, $DEV on $IF): stream of $MSGS through $FAULTS"
