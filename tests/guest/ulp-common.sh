# Helpers of the ulp-*.sh guest tests (sourced after lib.sh, verbs-common.sh and
# bringup-common.sh): kernel RDMA consumers over vcx_0 on one VM, reaching their own
# address 192.168.77.1 on the port's netdev (loopback through the device).

ULP_ADDR=192.168.77.1

# The port up with ULP_ADDR and its RoCE v2 GID; configfs mounted (nvmet, LIO).
ulp_port_up() {
	vcx_ipv4_up "$ULP_ADDR" >/dev/null
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config ||
		fail "mount configfs"
}

# The device's RDMA objects alive, from its state: "pds=N mkeys=N cqs=N qps=N srqs=N"
# (its RDMA device: $DEV in the two-VM scripts, which may run mlx5_ib on it, or vcx's).
# CQs that ib_core owns are not counted: its shared CQ pool (ib_cq_pool_get, used by
# nvme-rdma, nvmet-rdma, rpcrdma, ...) lives until the ib_device goes away, and rdma res
# lists its CQs, like ib_mad's own CQ, with comm [ib_core]. The count is the same before
# and after a ULP, so only CQs of the pool that a ULP made grow can be missed.
ulp_objects() {
	local s f n pool out=
	s=$(vcx_state)
	pool=$(rdma res show cq dev "${DEV:-$VCX_IBDEV}" 2>/dev/null |
		grep -c "comm \[ib_core\]" || true)
	for f in pds mkeys cqs qps srqs; do
		n=$(state_field "$s" $f)
		[ $f = cqs ] && n=$((n - pool))
		out="$out $f=$n"
	done
	echo "${out# }"
}
# One count of ulp_objects' output: objs_field "pds=1 ... srqs=2" srqs prints 2.
objs_field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# The device holds exactly the objects it held before the ULP came (what vcx.ko and
# ib_core keep for themselves): nothing leaked by the ULP's teardown.
ulp_expect_objects() { # baseline context
	local now
	now=$(ulp_objects)
	[ "$now" = "$1" ] || fail "$2: device objects $now, before the ULP: $1"
	echo "ok $2: device objects back to $now"
}

# No warning, oops or hung task in the kernel log since boot.
ulp_expect_clean_log() { # context
	kernel_log_clean || fail "$1: kernel log not clean"
	echo "ok $1: kernel log clean"
}

# Unload modules (and what only they used), failing with the holders if one stays.
ulp_unload() { # module...
	local m
	for m in "$@"; do
		modprobe -r "$m" || { lsmod >&2; fail "modprobe -r $m"; }
	done
}

# QP numbers (lqpn) of a kernel consumer: ulp_qpns COMM, on ULP_IBDEV (default vcx_0).
# QPs that rdma_cm creates are listed with comm [rdma_cm] by "rdma res show qp"; their
# rdma_cm IDs carry the consumer's name, so both listings are searched.
ulp_qpns() {
	local dev=${ULP_IBDEV:-$VCX_IBDEV}
	{
		rdma res show cm_id link "$dev/1" 2>/dev/null
		rdma res show qp link "$dev/1" 2>/dev/null
	} | grep "comm \[$1\]" | sed -n 's/.* lqpn \([0-9]*\) .*/\1/p' | sort -un
}

# Fault injection on the device (hw-model: the link and qp-error properties).
ulp_link() { vcx_qom_set link "$1"; } # on|off
ulp_qp_error() { vcx_qom_set qp-error "$1"; }

# Run a command with a deadline; fail naming the step if it hangs or fails.
ulp_step() { # seconds description cmd...
	local t=$1 what=$2 rc=0
	shift 2
	timeout "$t" "$@" || rc=$?
	[ $rc = 124 ] && fail "$what: still running after ${t}s"
	[ $rc = 0 ] || fail "$what: exit status $rc"
}

# Write then read back SIZE MiB of a pattern file through a block device, sha256
# compared: ulp_verify_block DEV MIB context
ulp_verify_block() {
	local dev=$1 mib=$2 want got
	head -c $((mib << 20)) /dev/urandom >/tmp/ulp-pattern
	want=$(sha256sum </tmp/ulp-pattern | cut -d' ' -f1)
	ulp_step 300 "$3: write $mib MiB" dd if=/tmp/ulp-pattern of="$dev" bs=1M oflag=direct \
		status=none
	got=$(timeout 300 dd if="$dev" bs=1M count="$mib" iflag=direct status=none |
		sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "$3: read back $got, wrote $want"
	echo "ok $3: $mib MiB written and read back through $dev, sha256 equal"
}

# The block device of namespace NSID of NVMe subsystem NQN (the multipath head when
# native multipath is on, else the controller's namespace), or nothing. Head names do
# not follow the NSID, so it is read from sysfs. nvme_ns_dev NQN NSID
nvme_ns_dev() {
	local b
	for b in /sys/block/nvme*; do
		[[ ${b##*/} =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$1" ] || continue
		[ "$(cat "$b/nsid" 2>/dev/null)" = "$2" ] && { echo "/dev/${b##*/}"; return; }
	done
	return 0
}
