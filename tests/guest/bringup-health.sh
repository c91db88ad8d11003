#!/bin/bash
# A fatal health syndrome forced into the device is reported by the driver with the
# syndrome, the driver enters the error state (teardown does not wait for firmware), the
# device can be unbound, cleared by a function reset and bound again, working. Then the
# same with the driver bound: a function reset while in the error state recovers it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bringup-common.sh"

addr=$(vcx_pci_addr)
probe="vcx $addr: firmware 16\.35\.1000, command interface revision 5"
drv=/sys/bus/pci/drivers/vcx
vcx_bound "$addr" || fail "vcx.ko not bound at boot"
expect_up "boot"

# --- 1. fatal syndrome 0x08 (hardware internal error), then unbind, reset, bind ---
fatal1="vcx $addr: firmware fatal error: syndrome 0x08 \(hardware internal error\), ext_synd 0x0000, fw_ver 16\.35\.1000: firmware requests a reset"
errstate="vcx $addr: device is in error state"
vcx_qom_set health-syndrome 8
# The health timer polls every 2 s.
wait_dmesg_count "$fatal1" 10 1 || fail "no fatal error report with syndrome 0x08 within 10 s"
wait_dmesg_count "$errstate" 2 1 || fail "driver did not enter the error state"
dmesg_has "vcx $addr: health: syndrome 0x08 (hardware internal error), ext_synd 0x0000" ||
	fail "no health buffer report"
sleep 5
[ "$(dmesg_count "$fatal1")" -eq 1 ] || fail "fatal error reported $(dmesg_count "$fatal1") times, expected once"

# Unbinding must not wait for dead firmware: every command fails at once with -EIO.
start=$(date +%s)
echo "$addr" >"$drv/unbind" || fail "unbind failed"
took=$(($(date +%s) - start))
[ "$took" -le 5 ] || fail "unbind in the error state took $took s (commands waited for firmware)"
vcx_bound "$addr" && fail "still bound after unbind"
dmesg_has "vcx $addr: removed" || fail "no removal message"
dmesg | grep -E "vcx $addr: .*timed out" && fail "a command timed out in the error state"
# The dead device still holds what it had; a function reset clears it.
s=$(vcx_state)
[ "$(state_field "$s" health)" = 0x08 ] || fail "device health not 0x08 before reset: $s"
echo 1 >"/sys/bus/pci/devices/$addr/reset" || fail "function reset of the unbound device failed"
s=$(vcx_state)
[ "$(state_field "$s" health)" = 0x00 ] || fail "health syndrome not cleared by the reset: $s"
expect_released "after function reset"

before=$(dmesg_count "$probe")
echo "$addr" >"$drv/bind" || fail "bind after reset failed"
vcx_bound "$addr" || fail "not bound after bind"
[ "$(dmesg_count "$probe")" -eq $((before + 1)) ] || fail "no probe message on rebind"
expect_up "after rebind"
# Working: a clean unload/load cycle.
rmmod vcx || fail "rmmod after rebind failed"
expect_released "rmmod after rebind"
modprobe vcx || fail "modprobe after rebind failed"
expect_up "modprobe after rebind"

# --- 2. fatal syndrome 0x01 while bound; recover with a function reset while bound ---
fatal2="vcx $addr: firmware fatal error: syndrome 0x01 \(firmware internal error\)"
vcx_qom_set health-syndrome 1
wait_dmesg_count "$fatal2" 10 1 || fail "no fatal error report with syndrome 0x01 within 10 s"
reloaded_before=$(dmesg_count "vcx $addr: loaded after function reset")
start=$(date +%s)
echo 1 >"/sys/bus/pci/devices/$addr/reset" || fail "function reset while bound failed"
took=$(($(date +%s) - start))
[ "$took" -le 10 ] || fail "function reset in the error state took $took s"
[ "$(dmesg_count "vcx $addr: loaded after function reset")" -eq $((reloaded_before + 1)) ] ||
	fail "driver did not come back after the function reset"
vcx_bound "$addr" || fail "not bound after reset"
expect_up "after recovery by function reset"
rmmod vcx || fail "rmmod after recovery failed"
expect_released "rmmod after recovery"
modprobe vcx || fail "modprobe after recovery failed"
expect_up "modprobe after recovery"

# --- 3. fatal syndrome 0x09 right before rmmod: teardown commands are in flight (the
# dead firmware drops them) when the health poll notices; they fail with -EIO, none
# waits for its 60 s timeout ---
fatal3="vcx $addr: firmware fatal error: syndrome 0x09 \(firmware CRC error\)"
vcx_qom_set health-syndrome 9
start=$(date +%s)
rmmod vcx || fail "rmmod with dying firmware failed"
took=$(($(date +%s) - start))
[ "$took" -le 10 ] || fail "rmmod with dying firmware took $took s"
[ "$(dmesg_count "$fatal3")" -eq 1 ] || fail "no single fatal error report with syndrome 0x09"
dmesg | grep -E "vcx $addr: .*timed out" && fail "a command timed out"
echo 1 >"/sys/bus/pci/devices/$addr/reset" || fail "function reset after rmmod failed"
expect_released "function reset after rmmod"
before=$(dmesg_count "$probe")
modprobe vcx || fail "modprobe after reset failed"
[ "$(dmesg_count "$probe")" -eq $((before + 1)) ] || fail "no probe message after reset"
expect_up "modprobe after reset"

expect_no_splat "health test"
[ "$(dmesg_count 'firmware fatal error')" -eq 3 ] || fail "expected exactly 3 fatal error reports"
pass "fatal health syndromes reported; unbind/reset/bind, reset while bound and rmmod with dying firmware all work"
