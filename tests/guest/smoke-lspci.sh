#!/bin/bash
# The device is on the PCI bus with the vcx id and vcx.ko is bound to it.
. "$(dirname "$0")/lib.sh"

addr=$(vcx_pci_addr)
lspci -nn -s "$addr" | tee /dev/stderr | grep -q '\[1af4:10f0\]' || fail "lspci does not show 1af4:10f0"
lspci -k -s "$addr" | grep -q 'Kernel driver in use: vcx' || fail "vcx.ko is not bound to $addr"
# BAR0 as on a ConnectX PF: 64-bit prefetchable, 32 MiB; MSI-X with 64 vectors.
lspci -vv -s "$addr" | grep -q 'Memory at .* (64-bit, prefetchable) \[size=32M\]' ||
	fail "BAR0 is not a 64-bit prefetchable 32 MiB BAR"
lspci -vv -s "$addr" | grep -q 'MSI-X: Enable.* Count=64' || fail "no 64-vector MSI-X capability"
dmesg_has "vcx $addr: firmware 16.35.1000, command interface revision 5" ||
	fail "probe message missing"
pass "vcx at $addr, driver bound"
