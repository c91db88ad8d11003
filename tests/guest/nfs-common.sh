# NFS over RDMA helpers of ulp-nfs.sh (one VM) and roce-nfs.sh (two VMs), sourced after
# lib.sh: knfsd listening on RDMA port NFS_PORT and exporting a tmpfs on NFS_EXPORT to
# NFS_CLIENTS, a mount on NFS_MNT and its counters, and commands with deadlines. No
# systemd in the guest: rpcbind, exportfs, rpc.mountd and rpc.nfsd run by hand.
NFS_PORT=20049 NFS_EXPORT=/export NFS_MNT=/mnt NFS_CLIENTS=192.168.77.0/24
NFS_DAEMONS=()

# Run a command with a deadline. It runs in the background and is polled, so a task
# stuck in the kernel (which timeout(1) would wait for forever) cannot stall the test.
nfs_within() { # seconds description cmd...
	local t=$1 what=$2 pid i rc=0
	shift 2
	"$@" &
	pid=$!
	for ((i = 0; i < t * 5; i++)); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 $pid 2>/dev/null; then
		kill -9 $pid 2>/dev/null || true
		sleep 2
		nfs_blocked_tasks >&2
		fail "$what: still running after ${t}s"
	fi
	wait $pid || rc=$?
	[ $rc = 0 ] || fail "$what: exit status $rc"
}

# Tasks in uninterruptible sleep (D state).
nfs_blocked_tasks() { ps -eo stat=,pid=,wchan:32=,comm= | awk '$1 ~ /^D/' || true; }

# The stats block of the mount on NFS_MNT in /proc/self/mountstats, and the bytes the
# mount read from / wrote to the server (the "bytes:" line, server* fields).
nfs_mnt_stats() { awk -v m="$NFS_MNT" '$1 == "device" { on = ($5 == m) } on' /proc/self/mountstats; }
nfs_server_bytes() { # read|write
	nfs_mnt_stats | awk -v f="$1" '$1 == "bytes:" { print (f == "read" ? $6 : $7) }'
}

# knfsd on RDMA port NFS_PORT exporting a tmpfs on NFS_EXPORT to NFS_CLIENTS, with its
# rpcbind and rpc.mountd (NFS_DAEMONS); an RDMA listener of rpcrdma must show in rdma res.
nfs_knfsd_start() { # context
	mkdir -p "$NFS_EXPORT" /run/rpc_pipefs /var/lib/nfs
	mountpoint -q "$NFS_EXPORT" || mount -t tmpfs -o size=256m tmpfs "$NFS_EXPORT" ||
		fail "$1: mount tmpfs"
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || fail "$1: mount nfsd"
	mountpoint -q /run/rpc_pipefs || mount -t rpc_pipefs sunrpc /run/rpc_pipefs ||
		fail "$1: mount rpc_pipefs"
	rpcbind -f -w >/tmp/rpcbind.log 2>&1 &
	NFS_DAEMONS=($!)
	for _ in $(seq 50); do
		rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break
		sleep 0.2
	done
	rpcinfo -p 127.0.0.1 >/dev/null || fail "$1: rpcbind not answering"
	echo "$NFS_EXPORT $NFS_CLIENTS(rw,no_root_squash,insecure,no_subtree_check,fsid=1)" \
		>/etc/exports
	nfs_within 30 "$1: exportfs -ra" exportfs -ra
	rpc.mountd -F >/tmp/mountd.log 2>&1 &
	NFS_DAEMONS+=($!)
	nfs_within 60 "$1: rpc.nfsd" rpc.nfsd 4
	echo "rdma $NFS_PORT" >/proc/fs/nfsd/portlist ||
		fail "$1: cannot add rdma $NFS_PORT to nfsd's portlist"
	grep -qx "rdma $NFS_PORT" /proc/fs/nfsd/portlist ||
		{ cat /proc/fs/nfsd/portlist >&2; fail "$1: nfsd not listening on rdma $NFS_PORT"; }
	grep -qE "state LISTEN .*comm \[rpcrdma\] src-addr 0.0.0.0:$NFS_PORT" \
		<<<"$(rdma res show cm_id)" ||
		{ rdma res show cm_id >&2; fail "$1: no rpcrdma listener"; }
	# A fresh server has no client to wait for: end NFSv4's 90 s grace period now.
	echo Y >/proc/fs/nfsd/v4_end_grace
}

# knfsd stopped, the export removed, rpc.mountd and rpcbind gone.
nfs_knfsd_stop() { # context
	nfs_within 60 "$1: rpc.nfsd 0" rpc.nfsd 0
	nfs_within 30 "$1: exportfs -ua" exportfs -ua
	kill "${NFS_DAEMONS[@]}" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 "${NFS_DAEMONS[@]}" 2>/dev/null || break
		sleep 0.2
	done
}

# The source file's NFS_MIB MiB written to NFS_MNT/data with fsync, the client's caches
# dropped, read back: the sha256 must be want, and the mount's counters must show every
# byte going to and coming from the server. Sets NFS_WROTE and NFS_READ (bytes).
nfs_write_read() { # context source want
	local w0 w1 r0 r1 got
	w0=$(nfs_server_bytes write)
	nfs_within 300 "$1: write $NFS_MIB MiB" dd if="$2" of="$NFS_MNT/data" bs=1M conv=fsync \
		status=none
	w1=$(nfs_server_bytes write)
	[ $((w1 - w0)) -ge $((NFS_MIB << 20)) ] ||
		fail "$1: the mount sent $((w1 - w0)) bytes to the server for $NFS_MIB MiB"
	nfs_within 60 "$1: drop caches" sh -c 'sync && echo 3 >/proc/sys/vm/drop_caches'
	r0=$(nfs_server_bytes read)
	nfs_within 300 "$1: read back" sh -c "sha256sum <'$NFS_MNT/data' >/tmp/nfs-got"
	r1=$(nfs_server_bytes read)
	got=$(cut -d' ' -f1 </tmp/nfs-got)
	[ "$got" = "$3" ] || fail "$1: read back sha256 $got, wrote $3"
	[ $((r1 - r0)) -ge $((NFS_MIB << 20)) ] ||
		fail "$1: only $((r1 - r0)) bytes read from the server: page cache not dropped?"
	NFS_WROTE=$((w1 - w0)) NFS_READ=$((r1 - r0))
}
