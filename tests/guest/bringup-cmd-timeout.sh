#!/bin/bash
# A command that firmware never answers: the device advertises a 2 s command timeout
# (cmd-exec-to-ms=2000, init segment 0xff8) and leaves the next command unanswered
# (cmd-stall fault injection). The driver must fail that command with -ETIMEDOUT and a
# message naming it, keep working, unload without hanging, and come back after a function
# reset. Run with: --vcx-props cmd-exec-to-ms=2000
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bringup-common.sh"

addr=$(vcx_pci_addr)
vcx_bound "$addr" || fail "vcx.ko not bound at boot"
expect_up "boot"
timed_out="vcx $addr: [A-Z_]+\(0x[0-9a-f]+\) op_mod\(0x[0-9a-f]+\) timed out after 2000 ms"
[ "$(dmesg_count "$timed_out")" -eq 0 ] || fail "a command timed out before the fault"

# The next command the driver sends is one firmware never answers: ask for pages.
vcx_qom_set cmd-stall 1
vcx_qom_set page-request 8
wait_dmesg_count "$timed_out" 15 1 || fail "no command timeout reported within 15 s"
dmesg | grep -E "$timed_out"
[ "$(state_field "$(vcx_state)" health)" = 0x00 ] || fail "device health changed"

# The driver goes on: unload finishes (the stalled entry is simply never reused).
start=$SECONDS
timeout 120 rmmod vcx || fail "rmmod after a command timeout failed or hung"
[ $((SECONDS - start)) -lt 60 ] || fail "rmmod took $((SECONDS - start)) s"
vcx_bound "$addr" && fail "device still bound after rmmod"

# The stalled entry leaves the function unclean; a function reset starts it afresh.
echo 1 >"/sys/bus/pci/devices/$addr/reset" || fail "function reset failed"
modprobe vcx || fail "modprobe after the reset failed"
vcx_bound "$addr" || fail "driver did not bind after the reset"
expect_up "modprobe after a command timeout and a function reset"
rmmod vcx || fail "final rmmod failed"
expect_released "final rmmod"
expect_no_splat "command timeout"
pass "command timeout reported, driver unloaded cleanly, function usable after a reset"
