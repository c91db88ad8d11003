# The iser step of tests/guest/roce-link.sh (sourced by it): iSER across the VMs with
# tests/guest/iser-common.sh, target in vm T and initiator in the other. vm T runs the
# LIO target on its link address (a 64 MiB ramdisk LUN, iser on portal
# 192.168.77.T+1:3260, an ACL for the other VM's initiator name), the other runs
# open-iscsi: discovery over TCP, a login through an iser iface (the session's transport
# iser, its SCSI host ib_iser's, its QPs on that VM's device), ROCE_ISER_MIB MiB (16)
# written and read back through the disk it made, sha256 compared, and a logout. The
# target sees the session from the initiator's link address and not over TCP while it is
# logged in. Then both ends tear down (node record, iscsid, ib_iser; LIO configuration,
# ib_isert, the LIO modules) and each vcx_0 end's device holds the objects it held
# before. T = 0 (the target in vm0), then T = 1 where the ends differ (against rxe: a
# vcx_0 initiator of an rxe target) or with ROCE_ULP_BOTH=1. The link's captures pause
# during the verified I/O.

ISER_MIB=${ROCE_ISER_MIB:-16}

iser_round() { # T
	local t=$1 base="" ctx
	ISER_ADDR=192.168.77.$((t + 1)) ISER_IBDEV=$DEV
	ISER_LOCAL=initiator
	[ "$me" != "$t" ] || ISER_LOCAL=target
	. "$(dirname "$0")/iser-common.sh"
	is_rxe || base=$(ulp_objects)
	if [ "$me" = "$t" ]; then
		ctx="iSER target ($DEV, initiator $OTHER_DEV in vm$other)"
		iser_target_up "$(vm_wait iser$t-iname $WAIT)"
		vm_signal iser$t-target
		vm_wait iser$t-login $WAIT >/dev/null
		target_session_check "$ctx" 192.168.77.$((other + 1))
		capture off
		vm_signal iser$t-checked
		vm_wait iser$t-initiator-done $((WAIT + 300)) >/dev/null
		capture on
		iser_target_down
	else
		ctx="iSER initiator ($DEV, target $OTHER_DEV in vm$t)"
		vm_signal iser$t-iname "$(iser_iname)"
		vm_wait iser$t-target $WAIT >/dev/null
		iser_initiator_up
		iser_login "$ctx: login"
		vm_signal iser$t-login
		vm_wait iser$t-checked $WAIT >/dev/null
		capture off
		ulp_verify_block "/dev/$DISK" "$ISER_MIB" "$ctx"
		capture on
		iser_logout "$ctx: logout"
		iser_initiator_down
		vm_signal iser$t-initiator-done
	fi
	if [ -n "$base" ]; then ulp_expect_objects "$base" "$ctx"; fi
	ok "$ctx: done"
	vm_signal iser$t-done
	vm_wait iser$t-done $WAIT >/dev/null
}

step_iser() {
	. "$(dirname "$0")/bringup-common.sh"
	. "$(dirname "$0")/ulp-common.sh"
	lio_rounds iser iser_round
}
