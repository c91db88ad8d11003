# The iser step of tests/guest/roce-link.sh (sourced by it): iSER across the VMs with
# tests/guest/iser-common.sh. vm0 runs the LIO target on its link address (a 64 MiB
# ramdisk LUN, iser on portal 192.168.77.1:3260, an ACL for vm1's initiator name), vm1
# runs open-iscsi: discovery over TCP, a login through an iser iface (the session's
# transport iser, its SCSI host ib_iser's, its QPs on vm1's device), 16 MiB written and
# read back through the disk it made, sha256 compared, and a logout. The target sees the
# session from 192.168.77.2 and not over TCP while it is logged in. Then both ends tear
# down (node record, iscsid, ib_iser; LIO configuration, ib_isert, the LIO modules) and
# each vcx_0 end's device holds the objects it held before. Against rxe: the vcx_0 target
# in vm0, the rxe initiator in vm1. The link's captures pause during the verified I/O.

ISER_MIB=${ROCE_ISER_MIB:-16}

step_iser() {
	. "$(dirname "$0")/bringup-common.sh"
	. "$(dirname "$0")/ulp-common.sh"
	ISER_ADDR=192.168.77.1 ISER_IBDEV=$DEV
	ISER_LOCAL=initiator
	[ "$me" != 0 ] || ISER_LOCAL=target
	. "$(dirname "$0")/iser-common.sh"
	local base="" ctx
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config ||
		fail "mount configfs"
	is_rxe || base=$(ulp_objects)
	if [ "$me" = 0 ]; then
		ctx="iSER target ($DEV, initiator $OTHER_DEV in vm1)"
		iser_target_up "$(vm_wait iser-iname $WAIT)"
		vm_signal iser-target
		vm_wait iser-login $WAIT >/dev/null
		target_session_check "$ctx" 192.168.77.2
		capture off
		vm_signal iser-checked
		vm_wait iser-initiator-done $((WAIT + 300)) >/dev/null
		capture on
		iser_target_down
	else
		ctx="iSER initiator ($DEV, target $OTHER_DEV in vm0)"
		vm_signal iser-iname "$(iser_iname)"
		vm_wait iser-target $WAIT >/dev/null
		iser_initiator_up
		iser_login "$ctx: login"
		vm_signal iser-login
		vm_wait iser-checked $WAIT >/dev/null
		capture off
		ulp_verify_block "/dev/$DISK" "$ISER_MIB" "$ctx"
		capture on
		iser_logout "$ctx: logout"
		iser_initiator_down
		vm_signal iser-initiator-done
	fi
	if [ -n "$base" ]; then ulp_expect_objects "$base" "$ctx"; fi
	rxe_check iser
	ok "$ctx: done"
	vm_signal iser-done
	vm_wait iser-done $WAIT >/dev/null
}
