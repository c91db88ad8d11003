#!/bin/bash
# ./vcx demo: what a developer sees first. Today: the virtual HCA on the PCI bus and the
# driver that found it. (The SRQ workload joins when verbs land.)
. "$(dirname "$0")/lib.sh"
addr=$(vcx_pci_addr)
echo "== the virtual HCA on the PCI bus"
lspci -nn -k -s "$addr"
echo "== vcx.ko probe"
dmesg | grep "vcx $addr" || fail "vcx.ko did not probe the device"
echo "== RDMA devices"
rdma dev show
echo "vcx demo: device found and driver bound; the SRQ workload needs the verbs issue (not built yet)"
