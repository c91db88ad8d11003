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

NQN=nqn.2026-12.org.vcx:ulp-nvme
PORT=4420
NVMET=/sys/kernel/config/nvmet
NULLB=/sys/kernel/config/nullb
# Short host timeouts, so that faults resolve within the test's deadlines.
CONNECT_OPTS=(-t rdma -a "$ULP_ADDR" -s $PORT -n $NQN --keep-alive-tmo=5
	--reconnect-delay=2 --ctrl-loss-tmo=30)

ulp_port_up
base=$(ulp_objects)
mkdir -p /etc/nvme
[ -s /etc/nvme/hostnqn ] || nvme gen-hostnqn >/etc/nvme/hostnqn

# Two null_blk disks: nullb0 keeps what is written (memory_backed), nullb1 discards it.
modprobe null_blk nr_devices=0 || fail "modprobe null_blk"
nullb_add() { # name memory_backed
	mkdir "$NULLB/$1" && echo 256 >"$NULLB/$1/size" && echo "$2" >"$NULLB/$1/memory_backed" &&
		echo 1 >"$NULLB/$1/power" || fail "null_blk $1 (memory_backed=$2)"
	[ -b "/dev/$1" ] || fail "no /dev/$1"
}
nullb_add nullb0 1
nullb_add nullb1 0

target_up() { # use_srq
	local ns enabled
	enabled=$(dmesg_count "nvmet_rdma: enabling port 1 \\($ULP_ADDR:$PORT\\)")
	modprobe nvmet-rdma use_srq="$1" || fail "modprobe nvmet-rdma use_srq=$1"
	mkdir "$NVMET/subsystems/$NQN" && echo 1 >"$NVMET/subsystems/$NQN/attr_allow_any_host" ||
		fail "nvmet subsystem"
	for ns in 1 2; do
		mkdir "$NVMET/subsystems/$NQN/namespaces/$ns" &&
			echo "/dev/nullb$((ns - 1))" >"$NVMET/subsystems/$NQN/namespaces/$ns/device_path" &&
			echo 1 >"$NVMET/subsystems/$NQN/namespaces/$ns/enable" || fail "nvmet namespace $ns"
	done
	mkdir "$NVMET/ports/1" && echo rdma >"$NVMET/ports/1/addr_trtype" &&
		echo ipv4 >"$NVMET/ports/1/addr_adrfam" && echo "$ULP_ADDR" >"$NVMET/ports/1/addr_traddr" &&
		echo $PORT >"$NVMET/ports/1/addr_trsvcid" &&
		ln -s "$NVMET/subsystems/$NQN" "$NVMET/ports/1/subsystems/$NQN" || fail "nvmet port"
	wait_dmesg_count "nvmet_rdma: enabling port 1 \\($ULP_ADDR:$PORT\\)" 10 $((enabled + 1)) ||
		fail "nvmet-rdma port not enabled"
}

target_down() {
	local ns
	rm "$NVMET/ports/1/subsystems/$NQN" && rmdir "$NVMET/ports/1" || fail "nvmet port removal"
	for ns in 1 2; do
		echo 0 >"$NVMET/subsystems/$NQN/namespaces/$ns/enable"
		rmdir "$NVMET/subsystems/$NQN/namespaces/$ns" || fail "nvmet namespace $ns removal"
	done
	rmdir "$NVMET/subsystems/$NQN" || fail "nvmet subsystem removal"
	ulp_unload nvmet_rdma nvmet
}

# The controller of our subsystem (nvmeN), or nothing.
ctrl_of_nqn() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = $NQN ] && { basename "$c"; return; }
	done
	return 0
}

# Wait (bounded) for the controller's state: ctrl_wait CTRL STATE SECONDS
ctrl_wait() {
	local i
	for i in $(seq $(($3 * 10))); do
		[ "$(cat "/sys/class/nvme/$1/state" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

connect() { # context; sets ctrl, ns1, ns2
	local i
	ulp_step 60 "$1: nvme connect" nvme connect "${CONNECT_OPTS[@]}" >/dev/null
	ctrl=$(ctrl_of_nqn)
	[ -n "$ctrl" ] || fail "$1: no controller for $NQN after connect"
	ctrl_wait "$ctrl" live 30 || fail "$1: $ctrl not live: $(cat /sys/class/nvme/$ctrl/state)"
	[ "$(cat /sys/class/nvme/$ctrl/transport)" = rdma ] || fail "$1: $ctrl is not on rdma"
	ns1=$(nvme_ns_dev $NQN 1) ns2=$(nvme_ns_dev $NQN 2)
	for i in $(seq 100); do
		[ -b "$ns1" ] && [ -b "$ns2" ] && break
		sleep 0.1
		ns1=$(nvme_ns_dev $NQN 1) ns2=$(nvme_ns_dev $NQN 2)
	done
	[ -b "$ns1" ] && [ -b "$ns2" ] || fail "$1: block devices of namespaces 1 and 2 did not appear"
}

disconnect() { # context
	local out
	out=$(timeout 60 nvme disconnect -n $NQN) || fail "$1: nvme disconnect failed or hung"
	echo "$out" | grep -q "disconnected 1 controller" || fail "$1: nvme disconnect: $out"
	[ -z "$(ctrl_of_nqn)" ] || fail "$1: controller still present after disconnect"
}

fio_verify() { # dev size; 0 when fio verified without error
	[ -b "$1" ] || fail "fio: $1 is not a block device"
	timeout 300 fio --name=verify --filename="$1" --rw=randrw --bs=4k --iodepth=16 \
		--ioengine=libaio --direct=1 --size="$2" --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --output-format=terse --terse-version=3 >/tmp/fio-verify.out 2>&1
}

round() { # use_srq
	local srq=$1 ctx="use_srq=$1" out srqs line
	target_up "$srq"
	modprobe nvme-rdma || fail "modprobe nvme-rdma"
	out=$(timeout 60 nvme discover -t rdma -a "$ULP_ADDR" -s $PORT) || fail "$ctx: nvme discover"
	echo "$out" | grep -q "subnqn: *$NQN" || { echo "$out" >&2; fail "$ctx: $NQN not discovered"; }
	echo "$out" | grep -q "trtype: *rdma" || fail "$ctx: discovery entry is not rdma"
	echo "ok $ctx: nvme discover over rdma lists $NQN"
	connect "$ctx"
	echo "ok $ctx: connected, $ctrl live on rdma, namespaces $ns1 $ns2"

	srqs=$(rdma res show srq 2>/dev/null | grep -c "comm \[nvmet_rdma\]" || true)
	if [ "$srq" = 1 ]; then
		[ "$srqs" -ge 1 ] || { rdma res show srq >&2; fail "$ctx: no SRQ of nvmet_rdma"; }
		echo "ok $ctx: rdma res shows $srqs SRQ(s) of nvmet_rdma"
	else
		[ "$srqs" = 0 ] || fail "$ctx: nvmet_rdma has SRQs with use_srq=0"
		echo "ok $ctx: no SRQ of nvmet_rdma"
	fi

	fio_verify "$ns1" 64M || { cat /tmp/fio-verify.out >&2; fail "$ctx: fio verify on $ns1"; }
	line=$(grep '^3;' /tmp/fio-verify.out | head -1)
	[ "$(echo "$line" | cut -d';' -f5)" = 0 ] || fail "$ctx: fio err=$(echo "$line" | cut -d';' -f5)"
	echo "ok $ctx: fio 4k randrw iodepth 16 crc32c verify over 64 MiB: err=0," \
		"read $(echo "$line" | cut -d';' -f8) IOPS, write $(echo "$line" | cut -d';' -f49) IOPS"
	timeout 300 fio --name=seq --filename="$ns1" --rw=read --bs=64k --iodepth=16 \
		--ioengine=libaio --direct=1 --size=64M --output-format=terse --terse-version=3 \
		>/tmp/fio-seq.out 2>&1 || { cat /tmp/fio-seq.out >&2; fail "$ctx: 64k sequential read"; }
	line=$(grep '^3;' /tmp/fio-seq.out | head -1)
	[ "$(echo "$line" | cut -d';' -f5)" = 0 ] && [ "$(echo "$line" | cut -d';' -f6)" -gt 0 ] ||
		fail "$ctx: 64k read: $line"
	echo "ok $ctx: 64k sequential read of 64 MiB: $(echo "$line" | cut -d';' -f7) KiB/s"
	if fio_verify "$ns2" 4M; then
		fail "$ctx: verify passed on a namespace that discards data (the check is blind)"
	fi
	echo "ok $ctx: the same verify fails on the discarding namespace $ns2"
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

for b in nullb0 nullb1; do rmdir "$NULLB/$b"; done
ulp_unload null_blk
ulp_expect_clean_log "NVMe-oF"
pass "NVMe over RDMA on $VCX_IBDEV: discover, connect, verified I/O, SRQ and no SRQ, faults"
