#!/bin/bash
# ./vcx demo: what a developer sees first. Today: the virtual HCA on the PCI bus, the driver
# bringing its firmware up, and the device's own view of it. (The SRQ workload joins when
# verbs land.)
. "$(dirname "$0")/lib.sh"
addr=$(vcx_pci_addr)
echo "== the virtual HCA on the PCI bus"
lspci -nn -k -s "$addr"
echo "== vcx.ko bring-up"
dmesg | grep "vcx $addr" || fail "vcx.ko did not probe the device"
echo "== interrupts: control EQ on vector 0, one completion EQ per CPU"
grep vcx /proc/interrupts | awk '{ $2 = $2; print }'
echo "== the device's view (HMP 'info vcx' on the host)"
images/vcx-hostcall hmp 'info vcx'
echo "== RDMA devices"
rdma dev show
echo "vcx demo: firmware up, driver bound; the SRQ workload needs the verbs issue (not built yet)"
