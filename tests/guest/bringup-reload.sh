#!/bin/bash
# 50 unload/load cycles of vcx.ko: each load brings the function up (probe message, no
# warning or error in the kernel log, device state "up"); each unload gives everything
# back (device state: HCA disabled, zero pages, zero UARs, zero EQs).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bringup-common.sh"

cycles=${1:-50}
addr=$(vcx_pci_addr)
probe="vcx $addr: firmware 16\.35\.1000, command interface revision 5"
removed="vcx $addr: removed"
grep -q '^vcx ' <<<"$(lsmod)" || fail "vcx.ko was not loaded at boot"
vcx_bound "$addr" || fail "vcx.ko not bound to $addr at boot"
[ -z "$(kernel_warnings)" ] || { kernel_warnings; fail "warnings or errors at boot"; }
expect_up "boot"

for i in $(seq "$cycles"); do
	before=$(dmesg_count "$probe")
	removed_before=$(dmesg_count "$removed")
	rmmod vcx || fail "cycle $i: rmmod failed"
	[ "$(dmesg_count "$removed")" -eq $((removed_before + 1)) ] || fail "cycle $i: no removal message"
	vcx_bound "$addr" && fail "cycle $i: device still bound after rmmod"
	expect_released "cycle $i, after unload"
	modprobe vcx || fail "cycle $i: modprobe failed"
	[ "$(dmesg_count "$probe")" -eq $((before + 1)) ] || fail "cycle $i: no probe message"
	vcx_bound "$addr" || fail "cycle $i: device not bound to vcx"
	expect_up "cycle $i, after load"
	if [ -n "$(kernel_warnings)" ]; then
		kernel_warnings
		fail "cycle $i: warnings or errors in the kernel log"
	fi
done
expect_no_splat "reload cycles"
[ "$(dmesg_count "$probe")" -eq $((cycles + 1)) ] || fail "expected $((cycles + 1)) probe messages"
[ "$(dmesg_count "$removed")" -eq "$cycles" ] || fail "expected $cycles removal messages"
pass "$cycles unload/load cycles, everything released after each unload"
