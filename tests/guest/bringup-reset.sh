#!/bin/bash
# A PCI function reset (echo 1 > .../reset) with the driver loaded: reset_prepare takes
# the function down in order, reset_done brings it up again; the driver works afterwards
# and releases everything on unload. Three resets in a row, no warnings or errors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bringup-common.sh"

addr=$(vcx_pci_addr)
vcx_bound "$addr" || fail "vcx.ko not bound at boot"
expect_up "boot"
for i in 1 2 3; do
	down=$(dmesg_count "vcx $addr: unloaded for function reset")
	up=$(dmesg_count "vcx $addr: loaded after function reset")
	echo 1 >"/sys/bus/pci/devices/$addr/reset" || fail "reset $i: writing reset failed"
	[ "$(dmesg_count "vcx $addr: unloaded for function reset")" -eq $((down + 1)) ] ||
		fail "reset $i: no reset_prepare message"
	[ "$(dmesg_count "vcx $addr: loaded after function reset")" -eq $((up + 1)) ] ||
		fail "reset $i: driver did not come back"
	vcx_bound "$addr" || fail "reset $i: driver no longer bound"
	expect_up "after reset $i"
done
rmmod vcx || fail "rmmod after resets failed"
expect_released "rmmod after resets"
modprobe vcx || fail "modprobe after resets failed"
expect_up "modprobe after resets"
if [ -n "$(kernel_warnings)" ]; then
	kernel_warnings
	fail "warnings or errors in the kernel log"
fi
expect_no_splat "function resets"
pass "3 function resets survived, driver working and releasing everything"
