#!/bin/bash
# Page request events: the device asks for more pages (positive request) and gives some
# back (negative request); the driver serves both from its workqueue, and takes every
# page back on unload.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bringup-common.sh"

addr=$(vcx_pci_addr)
vcx_bound "$addr" || fail "vcx.ko not bound at boot"
expect_up "boot"
base=$(state_field "$(vcx_state)" pages)

# Wait up to 10 s for the device to hold $1 pages and want none.
wait_pages() {
	local s i
	for i in $(seq 100); do
		s=$(vcx_state)
		[ "$(state_field "$s" pages)" = "$1" ] && [ "$(state_field "$s" pages_wanted)" = 0 ] &&
			return 0
		sleep 0.1
	done
	fail "$2: device holds $(state_field "$s" pages) pages, wants $(state_field "$s" pages_wanted), expected $1 and 0"
}

vcx_qom_set page-request 40
wait_pages $((base + 40)) "after a request for 40 pages"
# More than one command's worth of page addresses (512 per MANAGE_PAGES).
vcx_qom_set page-request 700
wait_pages $((base + 740)) "after a request for 700 pages"
vcx_qom_set page-request -740
wait_pages "$base" "after the device returned 740 pages"
vcx_qom_set page-request 16
wait_pages $((base + 16)) "after a request for 16 pages"
rmmod vcx || fail "rmmod failed"
expect_released "rmmod with run-time pages given"
modprobe vcx || fail "modprobe failed"
# DISABLE_HCA dropped the run-time demand: the new load gives boot and init pages only.
expect_up "modprobe after run-time page requests"
s=$(vcx_state)
[ "$(state_field "$s" pages)" = "$base" ] || fail "modprobe: expected $base pages: $s"
if [ -n "$(kernel_warnings)" ]; then
	kernel_warnings
	fail "warnings or errors in the kernel log"
fi
expect_no_splat "page requests"
pass "page requests served (give 40, 700; take 740; give 16), all pages back on unload"
