#!/bin/bash
# NVMe over RDMA benchmark in one VM boot: the same nvmet subsystem (a memory-backed
# null_blk) reached over vcx_0 (192.168.77.1) and over Soft-RoCE rxe0 on eth0
# (192.168.78.1), alternately, with the same fio jobs: 4k random read IOPS and 64k
# sequential read MB/s. Prints one CSV line per measurement
#   BENCH,<test>,<device>,<value>,<unit>
# and a table with the vcx/rxe ratio. Run by `./vcx bench --ulp` (BENCH_SECONDS sets the
# length of each fio run; BENCH_ROUNDS how many times each pair alternates).
# Two references without any RDMA device, measured in the same rounds: the same subsystem
# through nvme-loop (nvmet's in-kernel loop transport: the NVMe-oF host and target code
# without a fabric), and fio on the null_blk itself. They are the guest's own ceiling under
# TCG: no transport can make the host faster than nvme-loop.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"
. "$(dirname "$0")/bringup-common.sh"
. "$(dirname "$0")/ulp-common.sh"

SECONDS_PER_RUN=${BENCH_SECONDS:-10}
ROUNDS=${BENCH_ROUNDS:-2}
NQN=nqn.2026-12.org.vcx:bench
RXE_ADDR=192.168.78.1
NVMET=/sys/kernel/config/nvmet

ulp_port_up
ip link set eth0 up || fail "eth0 up"
ip addr add $RXE_ADDR/24 dev eth0 || fail "address on eth0"
modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0 || fail "rxe0 on eth0"
mkdir -p /etc/nvme
[ -s /etc/nvme/hostnqn ] || nvme gen-hostnqn >/etc/nvme/hostnqn

modprobe null_blk nr_devices=1 memory_backed=1 gb=1 || fail "null_blk"
modprobe nvmet-rdma || fail "nvmet-rdma"
mkdir "$NVMET/subsystems/$NQN" && echo 1 >"$NVMET/subsystems/$NQN/attr_allow_any_host" &&
	mkdir "$NVMET/subsystems/$NQN/namespaces/1" &&
	echo /dev/nullb0 >"$NVMET/subsystems/$NQN/namespaces/1/device_path" &&
	echo 1 >"$NVMET/subsystems/$NQN/namespaces/1/enable" || fail "nvmet subsystem"
port=0
for addr in "$ULP_ADDR" $RXE_ADDR; do
	port=$((port + 1))
	mkdir "$NVMET/ports/$port" && echo rdma >"$NVMET/ports/$port/addr_trtype" &&
		echo ipv4 >"$NVMET/ports/$port/addr_adrfam" &&
		echo "$addr" >"$NVMET/ports/$port/addr_traddr" &&
		echo 4420 >"$NVMET/ports/$port/addr_trsvcid" &&
		ln -s "$NVMET/subsystems/$NQN" "$NVMET/ports/$port/subsystems/$NQN" ||
		fail "nvmet port $port ($addr)"
done
mkdir "$NVMET/ports/3" && echo loop >"$NVMET/ports/3/addr_trtype" &&
	ln -s "$NVMET/subsystems/$NQN" "$NVMET/ports/3/subsystems/$NQN" ||
	fail "nvmet port 3 (loop)"
modprobe nvme-rdma || fail "nvme-rdma"
modprobe nvme-loop || fail "nvme-loop"
# Fill the null_blk so that reads return data (memory_backed allocates on write).
dd if=/dev/urandom of=/dev/nullb0 bs=1M count=256 oflag=direct status=none || fail "fill"

# fio_run DEV RW BS: prints "iops kib_per_s" of the read side (terse v3 fields 8, 7).
fio_run() {
	local line
	line=$(timeout $((SECONDS_PER_RUN + 120)) fio --name=bench --filename="$1" --rw="$2" \
		--bs="$3" --iodepth=32 --ioengine=libaio --direct=1 --size=256M --time_based \
		--runtime="$SECONDS_PER_RUN" --output-format=terse --terse-version=3 |
		grep '^3;' | head -1) || fail "fio $2 $3 on $1"
	[ "$(echo "$line" | cut -d';' -f5)" = 0 ] || fail "fio $2 $3 on $1: error"
	echo "$line" | cut -d';' -f8,7 --output-delimiter=' ' | awk '{print $2, $1}'
}

declare -A sum
# measure DEV BLOCKDEV: both fio jobs on BLOCKDEV, recorded under DEV.
measure() {
	local iops kib
	read -r iops _ <<<"$(fio_run "$2" randread 4k)"
	read -r _ kib <<<"$(fio_run "$2" read 64k)"
	echo "BENCH,randread-4k-iops,$1,$iops,IOPS"
	echo "BENCH,seqread-64k-mbs,$1,$((kib / 1024)),MB/s"
	sum[$1,iops]=$(( ${sum[$1,iops]:-0} + iops ))
	sum[$1,mbs]=$(( ${sum[$1,mbs]:-0} + kib / 1024 ))
}
for round in $(seq "$ROUNDS"); do
	for dev in vcx_0 rxe0 loop; do
		case $dev in
		vcx_0) args=(-t rdma -a "$ULP_ADDR" -s 4420) ;;
		rxe0) args=(-t rdma -a $RXE_ADDR -s 4420) ;;
		loop) args=(-t loop) ;;
		esac
		ulp_step 60 "connect over $dev" nvme connect "${args[@]}" -n $NQN >/dev/null
		ns=
		for _ in $(seq 100); do
			ns=$(nvme_ns_dev $NQN 1)
			[ -n "$ns" ] && break
			sleep 0.1
		done
		[ -n "$ns" ] || fail "no namespace over $dev"
		measure $dev "$ns"
		ulp_step 60 "disconnect over $dev" nvme disconnect -n $NQN >/dev/null
	done
	measure nullb0 /dev/nullb0
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'; }
row() { # TITLE KEY
	printf '%-28s %8d %8d %8d %8d %8s %8s\n' "$1" $((sum[vcx_0,$2] / ROUNDS)) \
		$((sum[rxe0,$2] / ROUNDS)) $((sum[loop,$2] / ROUNDS)) $((sum[nullb0,$2] / ROUNDS)) \
		"$(ratio ${sum[vcx_0,$2]} ${sum[rxe0,$2]})" "$(ratio ${sum[vcx_0,$2]} ${sum[loop,$2]})"
}
printf '%-28s %8s %8s %8s %8s %8s %8s\n' "NVMe-oF, iodepth 32" vcx_0 rxe0 loop nullb0 vcx/rxe vcx/loop
row "4k random read (IOPS)" iops
row "64k sequential read (MB/s)" mbs
