# The srp step of tests/guest/roce-link.sh (sourced by it): SRP across the VMs with
# tests/guest/srp-common.sh, target in vm T and initiator in the other. vm T runs ib_srpt
# (LIO) listening through rdma_cm on port 5555 of its link address, a 64 MiB ramdisk as
# LUN 0 of the srpt port named by its GID 0, an ACL for the other VM's initiator port ID
# and use_srq=1 when T = 0 (the channels' receives in one SRQ of the target's device,
# which a vcx_0 target shows) or 0 when T = 1 (a receive ring per channel); the other
# loads ib_srp and logs in with add_target to 192.168.77.T+1:5555 (RDMA/CM), finds the
# remote port running, its SCSI disk of 64 MiB, its RC QPs and its connected rdma_cm ID
# on its device, and immediate data granted exactly when use_srq=0 (ib_srpt grants it
# only to channels with their own ring), writes ROCE_SRP_MIB MiB (16) through the
# disk and reads it back (sha256); vm T sees the initiator's port attached to LUN 0 and
# counts the MiB written and read. Then the initiator deletes the remote port (the SCSI
# host and every SRP QP gone, bounded) and unloads ib_srp, vm T clears the target and
# unloads ib_srpt, and each vcx_0 end's device holds the objects it held before. T = 0,
# then T = 1 where the ends differ (against rxe: a vcx_0 initiator of an rxe target) or
# with ROCE_ULP_BOTH=1. The link's captures pause during the verified I/O.

SRP_MIB=${ROCE_SRP_MIB:-16}

srp_round() { # T
	local t=$1 base="" ctx stats ident w0 r0 w r guid qps imm srqs end
	local taddr=192.168.77.$((t + 1)) use_srq=$((t == 0))
	is_rxe || base=$(ulp_objects)
	if [ "$me" = "$t" ]; then
		ctx="SRP target ($DEV, initiator $OTHER_DEV in vm$other)"
		srp_target_up "$DEV" "$(vm_wait srp$t-iport $WAIT)" $use_srq
		if [ $use_srq = 1 ] && ! is_rxe; then
			srqs=$(objs_field "$(ulp_objects)" srqs)
			[ "$srqs" = $(($(objs_field "$base" srqs) + 1)) ] ||
				fail "$ctx: use_srq=1 but the device holds $srqs SRQs ($base before)"
		fi
		ok "$ctx: srpt port $TPORT with LUN 0 for $IPORT, use_srq=$use_srq," \
			"rdma_cm on port $CM_PORT${srqs:+, SRQs on the device: $srqs}"
		vm_signal srp$t-target "$GUID"
		vm_wait srp$t-login $WAIT >/dev/null
		stats=$TPG/acls/0x${IPORT#ib.}/lun_0/statistics
		ident=$(cat $stats/scsi_att_intr_port/port_ident 2>/dev/null || true)
		grep -qi "0x${IPORT#ib.}" <<<"$ident" || fail "$ctx: no session of $IPORT on LUN 0 ($ident)"
		w0=$(cat $stats/scsi_auth_intr/write_mbytes)
		r0=$(cat $stats/scsi_auth_intr/read_mbytes)
		ok "$ctx: LUN 0 of ACL $IPORT attached to initiator port $ident"
		capture off
		vm_signal srp$t-checked
		vm_wait srp$t-io-done $((WAIT + 300)) >/dev/null
		capture on
		w=$(($(cat $stats/scsi_auth_intr/write_mbytes) - w0))
		r=$(($(cat $stats/scsi_auth_intr/read_mbytes) - r0))
		[ $w -ge "$SRP_MIB" ] && [ $r -ge "$SRP_MIB" ] ||
			fail "$ctx: counted $w MiB written, $r MiB read (want >= $SRP_MIB)"
		ok "$ctx: counted $w MiB written and $r MiB read by $IPORT on LUN 0"
		vm_signal srp$t-counted
		vm_wait srp$t-initiator-done $WAIT >/dev/null
		srp_target_down
		ulp_unload ib_srpt
		[ ! -d /sys/module/ib_srpt ] || fail "$ctx: ib_srpt still loaded"
		ok "$ctx: target cleared, ib_srpt unloaded"
	else
		ctx="SRP initiator ($DEV, target $OTHER_DEV in vm$t)"
		vm_signal srp$t-iport "$(srp_iport_of "$DEV")"
		guid=$(vm_wait srp$t-target $WAIT)
		srp_initiator_up "$DEV" 2 10 30
		imm=$(dmesg_count "ib_srp: using immediate data")
		ulp_step 120 "$ctx: add_target" sh -c \
			"echo '$(srp_login_line "$guid" $taddr 192.168.77.$((me + 1)))' >$SRPHOST/add_target"
		srp_find_disk "$ctx"
		qps=$(ULP_IBDEV=$DEV ulp_qpns ib_srp)
		[ -n "$qps" ] || { rdma res show qp >&2; fail "$ctx: no ib_srp QPs on $DEV"; }
		rdma res show cm_id 2>/dev/null |
			grep -E "link $DEV/1 .*state CONNECT .*comm \[ib_srp\] .*dst-addr $taddr:$CM_PORT" \
			>/dev/null || { rdma res show cm_id >&2; fail "$ctx: no connected ib_srp rdma_cm ID"; }
		# ib_srpt grants immediate data to channels with their own receive ring (use_srq=0).
		imm=$(($(dmesg_count "ib_srp: using immediate data") - imm))
		if [ $use_srq = 1 ] && [ $imm != 0 ]; then
			fail "$ctx: immediate data granted with use_srq=1"
		elif [ $use_srq = 0 ] && [ $imm = 0 ]; then
			fail "$ctx: no immediate data granted with use_srq=0"
		fi
		[ $imm = 0 ] && imm="not granted" || imm=granted
		ok "$ctx: logged in through rdma_cm, ${RPORT##*/} running ($SHOST, ib_srp)," \
			"disk /dev/$DISK 64 MiB, ib_srp QPs $(echo $qps), immediate data $imm"
		vm_signal srp$t-login
		vm_wait srp$t-checked $WAIT >/dev/null
		capture off
		ulp_verify_block "/dev/$DISK" "$SRP_MIB" "$ctx"
		capture on
		vm_signal srp$t-io-done
		vm_wait srp$t-counted $WAIT >/dev/null
		ulp_step 30 "$ctx: delete ${RPORT##*/}" sh -c "echo 1 >$RPORT/delete"
		end=$((SECONDS + 60))
		while [ -n "$(rport)" ] || [ -e "/sys/class/scsi_host/$SHOST" ] ||
			[ -n "$(ULP_IBDEV=$DEV ulp_qpns ib_srp)" ]; do
			[ $SECONDS -lt $end ] || fail "$ctx: ${RPORT##*/}, $SHOST or its QPs still there 60 s after delete"
			sleep 0.2
		done
		ulp_unload ib_srp
		ok "$ctx: ${RPORT##*/} deleted, its SCSI host and QPs gone, ib_srp unloaded"
		vm_signal srp$t-initiator-done
	fi
	if [ -n "$base" ]; then ulp_expect_objects "$base" "$ctx"; fi
	vm_signal srp$t-done
	vm_wait srp$t-done $WAIT >/dev/null
}

step_srp() {
	. "$(dirname "$0")/bringup-common.sh"
	. "$(dirname "$0")/ulp-common.sh"
	. "$(dirname "$0")/srp-common.sh"
	lio_rounds srp srp_round
}
