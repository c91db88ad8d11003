#!/bin/bash
# The device is on the PCI bus with the vcx id and vcx.ko is bound to it.
. "$(dirname "$0")/lib.sh"

addr=$(vcx_pci_addr)
grep -q '\[1af4:10f0\]' <<<"$(lspci -nn -s "$addr" | tee /dev/stderr)" || fail "lspci does not show 1af4:10f0"
grep -q 'Kernel driver in use: vcx' <<<"$(lspci -k -s "$addr")" || fail "vcx.ko is not bound to $addr"
# BAR0 as on a ConnectX PF: 64-bit prefetchable, 32 MiB; MSI-X with 64 vectors.
grep -q 'Memory at .* (64-bit, prefetchable) \[size=32M\]' <<<"$(lspci -vv -s "$addr")" ||
	fail "BAR0 is not a 64-bit prefetchable 32 MiB BAR"
grep -q 'MSI-X: Enable.* Count=64' <<<"$(lspci -vv -s "$addr")" || fail "no 64-vector MSI-X capability"
dmesg_has "vcx $addr: firmware 16.35.1000, command interface revision 5" ||
	fail "probe message missing"
pass "vcx at $addr, driver bound"
