#!/bin/bash
# NVMe over RDMA on vcx_0, host and target in one VM (loopback through the device):
#   nvmet-rdma exporting a memory-backed null_blk on 192.168.77.1:4420, once with
#   use_srq=1 (nvmet's receives on an SRQ per completion vector, shown by rdma res) and
#   once with use_srq=0; nvme discover and connect through rdma_cm; fio 4k randrw at
#   iodepth 16 with crc32c verify over 64 MiB (err=0) and a 64k sequential read;
#   disconnect; ten connect/disconnect rounds; modules unloaded, the device's objects
#   back to where they were, kernel log clean. A second namespace on a null_blk that
#   discards data must fail the same verify: the check can fail.
#   Faults: the port's link down (keep-alive expires, disconnect completes), and a host
#   QP put in error by the device (the host recovers and reconnects).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"
. "$(dirname "$0")/bringup-common.sh"
. "$(dirname "$0")/ulp-common.sh"

NVME_ADDR=$ULP_ADDR
. "$(dirname "$0")/nvme-common.sh"

ulp_port_up
base=$(ulp_objects)
nvme_hostnqn
nullb_setup

round() { # use_srq
	local srq=$1 ctx="use_srq=$1" line
	target_up "$srq"
	modprobe nvme-rdma || fail "modprobe nvme-rdma"
	host_discover "$ctx"
	connect "$ctx"
	echo "ok $ctx: connected, $ctrl live on rdma, namespaces $ns1 $ns2"
	target_expect_srqs "$srq" "$ctx"
	host_verify "$ctx"
	timeout 300 fio --name=seq --filename="$ns1" --rw=read --bs=64k --iodepth=16 \
		--ioengine=libaio --direct=1 --size=64M --output-format=terse --terse-version=3 \
		>/tmp/fio-seq.out 2>&1 || { cat /tmp/fio-seq.out >&2; fail "$ctx: 64k sequential read"; }
	line=$(grep '^3;' /tmp/fio-seq.out | head -1)
	[ "$(echo "$line" | cut -d';' -f5)" = 0 ] && [ "$(echo "$line" | cut -d';' -f6)" -gt 0 ] ||
		fail "$ctx: 64k read: $line"
	echo "ok $ctx: 64k sequential read of 64 MiB: $(echo "$line" | cut -d';' -f7) KiB/s"
	disconnect "$ctx"
	echo "ok $ctx: disconnected"
}

# One round with an SRQ at the target, ten connect/disconnect rounds, and the faults.
round 1
for i in $(seq 10); do
	connect "round $i"
	disconnect "round $i"
done
echo "ok use_srq=1: ten connect/disconnect rounds"

# Fault 1: the link goes down under a live controller. Keep-alive (5 s) expires, the host
# starts error recovery; disconnect then completes, and the link comes back.
connect "link down"
ulp_link off
ctrl_wait "$ctrl" connecting 30 || ctrl_wait "$ctrl" resetting 1 ||
	fail "link down: $ctrl still $(cat /sys/class/nvme/$ctrl/state) after 30 s"
echo "ok link down: $ctrl left live ($(cat /sys/class/nvme/$ctrl/state 2>/dev/null))"
disconnect "link down"
ulp_link on
echo "ok link down: disconnect completed; link up again"

# Fault 2: the device puts a host I/O QP in error (WQ catastrophic error). The host sees
# flush errors, recovers by reconnecting, and I/O works again.
connect "QP error"
qpn=$(ulp_qpns nvme_rdma | tail -1)
[ -n "$qpn" ] || { rdma res show cm_id >&2; fail "QP error: no QP of nvme_rdma in rdma res"; }
ulp_qp_error "$qpn"
ctrl_wait "$ctrl" resetting 10 || ctrl_wait "$ctrl" connecting 1 || true
ctrl_wait "$ctrl" live 60 || fail "QP error: $ctrl did not come back: $(cat /sys/class/nvme/$ctrl/state)"
dmesg_has "nvme $ctrl: Successfully reconnected" || fail "QP error: no reconnect in the log"
fio_verify "$ns1" 4M || { cat /tmp/fio-verify.out >&2; fail "QP error: verify after recovery"; }
echo "ok QP error: QP $qpn failed, $ctrl reconnected, verify passes again"
disconnect "QP error"
ulp_unload nvme_rdma
target_down
ulp_expect_objects "$base" "use_srq=1"

round 0
ulp_unload nvme_rdma
target_down
ulp_expect_objects "$base" "use_srq=0"

nullb_remove
ulp_expect_clean_log "NVMe-oF"
pass "NVMe over RDMA on $VCX_IBDEV: discover, connect, verified I/O, SRQ and no SRQ, faults"
