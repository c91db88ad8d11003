# NVMe over RDMA helpers (sourced after lib.sh and ulp-common.sh), for ulp-nvme.sh (host
# and target in one VM) and roce-link.sh's step nvme (target in vm0, host in vm1): an
# nvmet-rdma subsystem NQN on NVME_ADDR:PORT with two namespaces, nullb0 (memory-backed:
# keeps what is written) and nullb1 (discards it, so a verify there must fail), and the
# host's nvme connect / fio verify / disconnect, every step bounded.
# Set NVME_ADDR before sourcing.
: "${NVME_ADDR:?NVME_ADDR: the address of the target}"
NQN=nqn.2026-12.org.vcx:ulp-nvme
PORT=4420
NVMET=/sys/kernel/config/nvmet
NULLB=/sys/kernel/config/nullb
# Short host timeouts, so that faults resolve within the test's deadlines.
CONNECT_OPTS=(-t rdma -a "$NVME_ADDR" -s $PORT -n $NQN --keep-alive-tmo=5
	--reconnect-delay=2 --ctrl-loss-tmo=30)

nvme_configfs() {
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config ||
		fail "mount configfs"
}

nvme_hostnqn() {
	mkdir -p /etc/nvme
	[ -s /etc/nvme/hostnqn ] || nvme gen-hostnqn >/etc/nvme/hostnqn
}

nullb_add() { # name memory_backed
	mkdir "$NULLB/$1" && echo 256 >"$NULLB/$1/size" && echo "$2" >"$NULLB/$1/memory_backed" &&
		echo 1 >"$NULLB/$1/power" || fail "null_blk $1 (memory_backed=$2)"
	[ -b "/dev/$1" ] || fail "no /dev/$1"
}

# null_blk with nullb0 (memory-backed) and nullb1 (discarding); nullb_remove undoes it.
nullb_setup() {
	modprobe null_blk nr_devices=0 || fail "modprobe null_blk"
	nullb_add nullb0 1
	nullb_add nullb1 0
}
nullb_remove() {
	local b
	for b in nullb0 nullb1; do rmdir "$NULLB/$b" || fail "null_blk $b removal"; done
	ulp_unload null_blk
}

target_up() { # use_srq
	local ns enabled
	enabled=$(dmesg_count "nvmet_rdma: enabling port 1 \\($NVME_ADDR:$PORT\\)")
	modprobe nvmet-rdma use_srq="$1" || fail "modprobe nvmet-rdma use_srq=$1"
	mkdir "$NVMET/subsystems/$NQN" && echo 1 >"$NVMET/subsystems/$NQN/attr_allow_any_host" ||
		fail "nvmet subsystem"
	for ns in 1 2; do
		mkdir "$NVMET/subsystems/$NQN/namespaces/$ns" &&
			echo "/dev/nullb$((ns - 1))" >"$NVMET/subsystems/$NQN/namespaces/$ns/device_path" &&
			echo 1 >"$NVMET/subsystems/$NQN/namespaces/$ns/enable" || fail "nvmet namespace $ns"
	done
	mkdir "$NVMET/ports/1" && echo rdma >"$NVMET/ports/1/addr_trtype" &&
		echo ipv4 >"$NVMET/ports/1/addr_adrfam" && echo "$NVME_ADDR" >"$NVMET/ports/1/addr_traddr" &&
		echo $PORT >"$NVMET/ports/1/addr_trsvcid" &&
		ln -s "$NVMET/subsystems/$NQN" "$NVMET/ports/1/subsystems/$NQN" || fail "nvmet port"
	wait_dmesg_count "nvmet_rdma: enabling port 1 \\($NVME_ADDR:$PORT\\)" 10 $((enabled + 1)) ||
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

# nvmet-rdma's SRQs in rdma res: at least one with use_srq=1, none with use_srq=0.
target_expect_srqs() { # use_srq context
	local srqs
	srqs=$(rdma res show srq 2>/dev/null | grep -c "comm \[nvmet_rdma\]" || true)
	if [ "$1" = 1 ]; then
		[ "$srqs" -ge 1 ] || { rdma res show srq >&2; fail "$2: no SRQ of nvmet_rdma"; }
		echo "ok $2: rdma res shows $srqs SRQ(s) of nvmet_rdma"
	else
		[ "$srqs" = 0 ] || fail "$2: nvmet_rdma has SRQs with use_srq=0"
		echo "ok $2: no SRQ of nvmet_rdma"
	fi
}

# The controller of our subsystem (nvmeN), or nothing.
ctrl_of_nqn() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = $NQN ] && { basename "$c"; return; }
	done
	return 0
}

# The controller is in the state: ctrl_state_is CTRL STATE. Read by bash itself (a cat
# costs the TCG guest a fork and exec per round of a wait).
ctrl_state_is() {
	local st=
	{ read -r st <"/sys/class/nvme/$1/state"; } 2>/dev/null || true
	[ "$st" = "$2" ]
}

# Wait (bounded) for the controller's state: ctrl_wait CTRL STATE SECONDS
ctrl_wait() {
	local i
	for i in $(seq $(($3 * 10))); do
		ctrl_state_is "$1" "$2" && return 0
		sleep 0.1
	done
	return 1
}

# nvme discover lists NQN over rdma.
host_discover() { # context
	local out
	out=$(timeout 60 nvme discover -t rdma -a "$NVME_ADDR" -s $PORT) || fail "$1: nvme discover"
	grep -q "subnqn: *$NQN" <<<"$out" || { echo "$out" >&2; fail "$1: $NQN not discovered"; }
	grep -q "trtype: *rdma" <<<"$out" || fail "$1: discovery entry is not rdma"
	echo "ok $1: nvme discover over rdma lists $NQN"
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
	grep -q "disconnected 1 controller" <<<"$out" || fail "$1: nvme disconnect: $out"
	[ -z "$(ctrl_of_nqn)" ] || fail "$1: controller still present after disconnect"
}

fio_verify() { # dev size; 0 when fio verified without error
	[ -b "$1" ] || fail "fio: $1 is not a block device"
	timeout 300 fio --name=verify --filename="$1" --rw=randrw --bs=4k --iodepth=16 \
		--ioengine=libaio --direct=1 --size="$2" --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --output-format=terse --terse-version=3 >/tmp/fio-verify.out 2>&1
}

# fio 4k randrw iodepth 16 with crc32c verify over MIB MiB (default 64) on ns1: err=0;
# the same verify fails on the discarding ns2 (the check can fail).
host_verify() { # context [MIB]
	local line mib=${2:-64}
	fio_verify "$ns1" "${mib}M" || { cat /tmp/fio-verify.out >&2; fail "$1: fio verify on $ns1"; }
	line=$(grep '^3;' /tmp/fio-verify.out | head -1)
	[ "$(echo "$line" | cut -d';' -f5)" = 0 ] || fail "$1: fio err=$(echo "$line" | cut -d';' -f5)"
	echo "ok $1: fio 4k randrw iodepth 16 crc32c verify over $mib MiB: err=0," \
		"read $(echo "$line" | cut -d';' -f8) IOPS, write $(echo "$line" | cut -d';' -f49) IOPS"
	if fio_verify "$ns2" 4M; then
		fail "$1: verify passed on a namespace that discards data (the check is blind)"
	fi
	echo "ok $1: the same verify fails on the discarding namespace $ns2"
}
