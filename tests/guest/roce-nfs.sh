# Step nfs of roce-link.sh (sourced by it, after roce-lib.sh): NFS over RDMA across the
# VMs, server in vm S and client in the other, S = 0 then 1. The server's knfsd exports a
# tmpfs on its link address and listens on RDMA port 20049 (svcrdma, in rpcrdma.ko on
# 6.12); the client mounts 192.168.77.S+1:/export with proto=rdma, NFSv3 when the server
# is vm0 and NFSv4.2 when it is vm1 (ROCE_NFS_VERS="3 4.2": both in each round), so each
# version and each end in each role crosses the link once; it writes NFS_MIB MiB of
# random bytes (ROCE_NFS_MIB, default 16) with fsync, drops its caches and reads them
# back: the sha256 must match, the mount must ride on RDMA (proto=rdma in its options,
# transport "rdma" in /proc/self/mountstats, the byte counters showing the data went to
# and came from the server), and the server's copy must be the client's bytes. Then umount, knfsd stopped, rpcrdma (the RPC-over-RDMA
# transport) unloaded at both ends, no rpcrdma rdma_cm ID left; at each vcx_0 end the
# device's objects are back to where they were before the round. Every wait is bounded
# (nfs_within). The same runs against Soft-RoCE. knfsd, the mount's counters and the
# deadlines: tests/guest/nfs-common.sh.
# Link fault (round S = 0, both ends vcx_0): the client mounts NFSv3 again (a
# hard mount, RPC timeout 10 s) and writes the 16 MiB with direct I/O; vm0's port loses its link for 5 s
# under the write (the device's `link` property), then gets it back. The write must
# complete without error within 180 s (the transport reconnects and the RPCs are sent
# again) and the server's file must hold the client's bytes.
. "$(dirname "${BASH_SOURCE[0]}")/bringup-common.sh"
. "$(dirname "${BASH_SOURCE[0]}")/ulp-common.sh"
. "$(dirname "${BASH_SOURCE[0]}")/nfs-common.sh"

NFS_MIB=${ROCE_NFS_MIB:-16}

nfs_modules() {
	local m
	for m in nfsd nfs rpcrdma; do
		modprobe "$m" || fail "nfs: modprobe $m"
	done
}

# The transports drop their module references asynchronously.
nfs_unload() { # context
	for _ in $(seq 100); do
		[ "$(cat /sys/module/rpcrdma/refcnt 2>/dev/null || echo 0)" = 0 ] && break
		sleep 0.2
	done
	nfs_within 60 "$1: unload rpcrdma" ulp_unload rpcrdma
	[ ! -d /sys/module/rpcrdma ] || fail "$1: rpcrdma still loaded"
}

nfs_server_start() { # context addr
	nfs_knfsd_start "$1"
	ok "$1: knfsd on rdma $NFS_PORT of $2 (rpcrdma cm_id LISTEN on $DEV), exporting a tmpfs"
}

nfs_server_stop() { # context
	nfs_knfsd_stop "$1"
	umount /proc/fs/nfsd 2>/dev/null || true
	rm -f "$NFS_EXPORT/data"
}

# One version: mount, write, drop caches, read back, umount; the server's copy checked
# by the server afterwards (nfs_round).
nfs_client_pass() { # context vers srv
	local ctx=$1 opts xprt
	nfs_within 90 "$ctx: mount" mount -t nfs \
		-o "proto=rdma,port=$NFS_PORT,vers=$2${NFS_NOLOCK:+,nolock}" "$3:$NFS_EXPORT" "$NFS_MNT"
	opts=$(findmnt -n -o OPTIONS "$NFS_MNT") || fail "$ctx: nothing mounted on $NFS_MNT"
	case ",$opts," in *,proto=rdma,*) ;; *) fail "$ctx: mounted without proto=rdma: $opts" ;; esac
	xprt=$(nfs_mnt_stats | awk '$1 == "xprt:" { print $2 }')
	[ "$xprt" = rdma ] || { nfs_mnt_stats >&2; fail "$ctx: mountstats transport '$xprt'"; }
	nfs_write_read "$ctx" /tmp/nfs-src "$NFS_SHA"
	nfs_within 60 "$ctx: umount" umount "$NFS_MNT"
	ok "$ctx: $NFS_MIB MiB written ($NFS_WROTE bytes to the server) and read back ($NFS_READ bytes from it) over proto=rdma, sha256 equal"
}

# The link fault runs in round 0 between two vcx_0 ends (roce-vcx). Which QP spends its
# 7 retries (ACK timeout 537 ms) while the link is down decides how the client comes
# back (device traces, 2026-12-07): its own, and it reconnects at once (the write took
# 9 s); or only the server's, on RDMA READs of the client's data, and then the client,
# whose QP has nothing outstanding, hears nothing until its RPC times out (63 s with
# NFS over RDMA's default timeo=600). The server's DREQ went out while the link was
# down, and ib_cm cancels a DREQ's retransmissions when the ID is destroyed (svcrdma does
# at once): the client never hears of it. The mount's timeo=100 bounds that wait at 10 s. Not run against rxe0 (11 s and 63 s in
# two runs): roce-rxe-peer is the suite's longest test.
nfs_fault_round() { # S
	[ "$1" = 0 ] && [ "$DEV" = vcx_0 ] && [ "$OTHER_DEV" = vcx_0 ]
}

# The link fault's server side: the link off once the client's write runs, on 5 s later,
# then the exported file checked against the client's sha256.
nfs_fault_server() { # S context
	local s=$1 ctx="$2: link fault" sum
	vm_wait "nfs$s-fault-io" $WAIT >/dev/null
	ulp_link off
	ok "$ctx: link off under the client's direct write"
	sleep 5
	faults_link_on "$ctx"
	ok "$ctx: link on again"
	vm_signal "nfs$s-link-back"
	sum=$(vm_wait "nfs$s-fault-done" $((WAIT + 240)))
	[ "$(sha256sum <"$NFS_EXPORT/fault" | cut -d' ' -f1)" = "$sum" ] ||
		fail "$ctx: the exported file is not what the client wrote across the fault"
	rm -f "$NFS_EXPORT/fault"
	ok "$ctx: the exported file holds the client's $NFS_MIB MiB"
	vm_signal "nfs$s-fault-checked"
}

# The link fault's client side: a direct write on a hard NFSv3 mount across the fault.
nfs_fault_client() { # S context srv
	local s=$1 ctx="$2: link fault" io rc=0 t0 state="done before the link came back" i
	nfs_within 90 "$ctx: mount" mount -t nfs \
		-o "proto=rdma,port=$NFS_PORT,vers=3,nolock,timeo=100" "$3:$NFS_EXPORT" "$NFS_MNT"
	t0=$SECONDS
	dd if=/tmp/nfs-src of="$NFS_MNT/fault" bs=1M oflag=direct status=none &
	io=$!
	vm_signal "nfs$s-fault-io"
	vm_wait "nfs$s-link-back" $WAIT >/dev/null
	! kill -0 $io 2>/dev/null || state="in flight when the link came back"
	for i in $(seq 900); do
		kill -0 $io 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 $io 2>/dev/null; then
		nfs_blocked_tasks >&2
		fail "$ctx: the write still running 180 s after the link came back"
	fi
	wait $io || rc=$?
	[ $rc = 0 ] || fail "$ctx: the write across the fault failed ($rc)"
	nfs_within 60 "$ctx: umount" umount "$NFS_MNT"
	ok "$ctx: write ($state) completed in $((SECONDS - t0)) s"
	vm_signal "nfs$s-fault-done" "$NFS_SHA"
	vm_wait "nfs$s-fault-checked" $WAIT >/dev/null
}

nfs_round() { # S VERSION...
	local s=$1 srv=192.168.77.$(($1 + 1)) ctx base="" v sum
	shift
	local vers=("$@")
	is_rxe || base=$(ulp_objects)
	nfs_modules
	if [ "$me" = "$s" ]; then
		ctx="nfs server ($DEV, client $OTHER_DEV in vm$other)"
		nfs_server_start "$ctx" "$srv"
		vm_signal "nfs$s-listen"
		for v in "${vers[@]}"; do
			sum=$(vm_wait "nfs$s-v$v" $WAIT)
			[ "$(sha256sum <"$NFS_EXPORT/data" | cut -d' ' -f1)" = "$sum" ] ||
				fail "$ctx: NFSv$v: the exported file is not what the client wrote"
			rm -f "$NFS_EXPORT/data"
			ok "$ctx: NFSv$v: the exported file holds the client's $NFS_MIB MiB ($sum)"
			vm_signal "nfs$s-v$v-checked"
		done
		if nfs_fault_round "$s"; then nfs_fault_server "$s" "$ctx"; fi
		vm_wait "nfs$s-client-done" $WAIT >/dev/null
		nfs_server_stop "$ctx"
	else
		ctx="nfs client ($DEV, server $OTHER_DEV in vm$other)"
		head -c $((NFS_MIB << 20)) /dev/urandom >/tmp/nfs-src
		NFS_SHA=$(sha256sum </tmp/nfs-src | cut -d' ' -f1)
		mkdir -p "$NFS_MNT"
		vm_wait "nfs$s-listen" $WAIT >/dev/null
		for v in "${vers[@]}"; do
			# NFSv3 with nolock, as ulp-nfs.sh and docs/ulps.md mount it
			NFS_NOLOCK=$([ "$v" != 3 ] || echo 1) nfs_client_pass "$ctx: NFSv$v" "$v" "$srv"
			vm_signal "nfs$s-v$v" "$NFS_SHA"
			vm_wait "nfs$s-v$v-checked" $WAIT >/dev/null
		done
		if nfs_fault_round "$s"; then nfs_fault_client "$s" "$ctx" "$srv"; fi
		vm_signal "nfs$s-client-done"
	fi
	for _ in $(seq 100); do
		[ -z "$(rdma res show cm_id link "$DEV/1" 2>/dev/null | grep 'comm \[rpcrdma\]')" ] && break
		sleep 0.2
	done
	[ -z "$(rdma res show cm_id link "$DEV/1" 2>/dev/null | grep 'comm \[rpcrdma\]')" ] ||
		{ rdma res show cm_id >&2; fail "$ctx: rpcrdma rdma_cm IDs left"; }
	nfs_unload "$ctx"
	if [ -n "$base" ]; then ulp_expect_objects "$base" "$ctx"; fi
	vm_signal "nfs$s-done"
	vm_wait "nfs$s-done" $WAIT >/dev/null
}

step_nfs() {
	# shellcheck disable=SC2086 # a list of versions
	nfs_round 0 ${ROCE_NFS_VERS:-3}
	# shellcheck disable=SC2086
	nfs_round 1 ${ROCE_NFS_VERS:-4.2}
	kernel_log_clean || fail "nfs: kernel warnings or oopses in vm$me (above)"
	rxe_check nfs
}
