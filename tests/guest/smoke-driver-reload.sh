#!/bin/bash
# Unload and load vcx.ko 10 times; each load probes the device and logs the firmware.
. "$(dirname "$0")/lib.sh"

addr=$(vcx_pci_addr)
probe="vcx $addr: firmware [0-9]+\.[0-9]+\.[0-9]+, command interface revision 5"
grep -q '^vcx ' <<<"$(lsmod)" || fail "vcx.ko was not loaded at boot"
for i in $(seq 10); do
	before=$(dmesg_count "$probe")
	removed_before=$(dmesg_count "vcx $addr: removed")
	rmmod vcx || fail "cycle $i: rmmod failed"
	[ "$(dmesg_count "vcx $addr: removed")" -eq $((removed_before + 1)) ] ||
		fail "cycle $i: no removal message"
	[ -e "/sys/bus/pci/devices/$addr/driver" ] && fail "cycle $i: device still bound after rmmod"
	modprobe vcx || fail "cycle $i: modprobe failed"
	[ "$(dmesg_count "$probe")" -eq $((before + 1)) ] || fail "cycle $i: no probe message"
	[ "$(basename "$(readlink "/sys/bus/pci/devices/$addr/driver")")" = vcx ] ||
		fail "cycle $i: device not bound to vcx"
done
# Nothing the driver did may have warned or oopsed.
kernel_log_clean || fail "kernel warnings during reload cycles"
pass "10 unload/load cycles"
