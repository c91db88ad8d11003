#!/bin/bash
# ./vcx demo: the main job. Boot a VM with the virtual HCA, show the driver bringing it up
# and the RDMA device it registers, then run an SRQ workload: ibv_srq_pingpong with 16 RC
# QPs sharing one SRQ, over loopback on vcx_0, payload checked (-c).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"
addr=$(vcx_pci_addr)
echo "== the virtual HCA on the PCI bus"
lspci -nn -k -s "$addr"
echo "== vcx.ko bring-up"
dmesg | grep "vcx $addr" | sed 's/^\[ *[0-9.]*\] //'
echo "== the device's view (HMP 'info vcx' on the host)"
images/vcx-hostcall hmp 'info vcx'
echo "== RDMA device"
vcx_verbs_up >/dev/null
ibv_devinfo -d "$VCX_IBDEV" | grep -E 'hca_id|fw_ver|state|link_layer|active_mtu'
ibv_devinfo -v -d "$VCX_IBDEV" | grep -E 'max_srq'
gid=$(vcx_roce_v2_gid) || fail "no RoCE v2 GID on $VCX_IBDEV"
echo "== SRQ workload: ibv_srq_pingpong, 16 QPs on one SRQ, 1000 iterations, payload checked"
timeout 300 ibv_srq_pingpong -d "$VCX_IBDEV" -g "$gid" -q 16 -n 1000 -c >/tmp/srv.out 2>&1 &
srv=$!
sleep 1
timeout 300 ibv_srq_pingpong -d "$VCX_IBDEV" -g "$gid" -q 16 -n 1000 -c localhost |
	grep -E 'bytes in|iters in' || fail "SRQ pingpong client failed"
wait "$srv" || { cat /tmp/srv.out; fail "SRQ pingpong server failed"; }
echo "== objects the run used are gone again"
rdma res show srq
images/vcx-hostcall hmp 'info vcx'
echo "vcx demo: done"
