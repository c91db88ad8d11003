#!/bin/bash
# rdma_cm over loopback on vcx_0: the port's netdev gets 192.168.77.1/24, and
# rdmacm-utils connect to it through ib_cm, whose MADs travel on the GSI QP (QP1):
#   rping    server + client, 10 pings, payload validated (-V) and each ping's bytes
#            compared with rping's pattern here (-v prints them);
#   udaddy   UD QPs through rdma_cm (SIDR REQ/REP on QP1), 10 datagrams;
#   ucmatose RC QPs through rdma_cm (REQ/REP/RTU, DREQ/DREP on QP1), 10 messages;
#   mckey    UD multicast through rdma_cm: 20 of 100 datagrams to 239.77.0.1 received.
# Each connected step must raise the device's QP1 counters (its state property): the MADs went
# through vcx_0's QP1 and nowhere else. No other RDMA device exists in the VM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"
. "$(dirname "$0")/bringup-common.sh"

ADDR=192.168.77.1
COUNT=10

dmesg_has "Couldn't create ib_mad" && fail "ib_mad could not create QP1 on load"
gid_index=$(vcx_ipv4_up $ADDR)
modprobe rdma_ucm || fail "modprobe rdma_ucm"
echo "ok GID ::ffff:$ADDR at index $gid_index (RoCE v2)"

# ib_mad's GSI QP: qp_num 1 in restrack, and the device's QP1 exists.
rdma res show qp | grep -E "link $VCX_IBDEV/1 .*lqpn 1 type GSI" >/dev/null ||
	{ rdma res show qp >&2; fail "no GSI QP (lqpn 1) on $VCX_IBDEV/1"; }
s=$(vcx_state)
[ "$(state_field "$s" qp1)" != 0x0 ] || fail "the device has no QP1: $s"
echo "ok GSI QP: lqpn 1 on $VCX_IBDEV/1, device QP $(state_field "$s" qp1)"

# The device's QP1 datagram counters; qp1_check NAME MIN: both grew by at least MIN.
sent0=$(state_field "$s" qp1_sent)
recv0=$(state_field "$s" qp1_received)
qp1_check() {
	local st sent recv
	st=$(vcx_state)
	sent=$(state_field "$st" qp1_sent)
	recv=$(state_field "$st" qp1_received)
	[ $((sent - sent0)) -ge "$2" ] && [ $((recv - recv0)) -ge "$2" ] ||
		fail "$1: QP1 sent $((sent - sent0)), received $((recv - recv0)) MADs (want >= $2)"
	echo "ok $1: QP1 sent $((sent - sent0)), received $((recv - recv0)) MADs"
	sent0=$sent
	recv0=$recv
}

# Start a server in the background (output in /tmp/NAME-srv.out); wait until its
# rdma_cm ID is bound to vcx_0 (rdma res show cm_id).
start_server() { # name cmd...
	local name=$1; shift
	timeout 120 "$@" >"/tmp/$name-srv.out" 2>&1 &
	srv=$!
	for _ in $(seq 100); do
		grep -q "link $VCX_IBDEV/1 .*state LISTEN" <<<"$(rdma res show cm_id 2>/dev/null)" &&
			return 0
		kill -0 $srv 2>/dev/null || break
		sleep 0.1
	done
	cat "/tmp/$name-srv.out" >&2
	rdma res show cm_id >&2 || true
	fail "$name: server not listening on $VCX_IBDEV"
}
finish() { # name client-status
	if [ "$2" != 0 ]; then
		kill $srv 2>/dev/null || true
		cat "/tmp/$1-cli.out" "/tmp/$1-srv.out" >&2
		fail "$1: client failed ($2)"
	fi
	wait $srv || { cat "/tmp/$1-srv.out" >&2; fail "$1: server failed"; }
}

# rping: the expected bytes of ping N (64-byte buffer, "rdma-ping-N: " then letters
# from chr(65 + N) upwards, wrapping after 'z' to 'A', NUL in the last byte).
rping_expected() {
	python3 - "$COUNT" <<-'EOF'
	import sys
	start = 65
	for n in range(int(sys.argv[1])):
	    head = "rdma-ping-%d: " % n
	    c, body = start, ""
	    for _ in range(len(head), 63):
	        body += chr(c)
	        c = 65 if c >= 122 else c + 1
	    start = 65 if start >= 122 else start + 1
	    print(head + body)
	EOF
}
rping_expected >/tmp/rping.want
start_server rping rping -s -a $ADDR -p 7999 -C $COUNT -V -v
rc=0
timeout 120 rping -c -a $ADDR -p 7999 -C $COUNT -V -v >/tmp/rping-cli.out 2>&1 || rc=$?
finish rping $rc
sed -n 's/^ping data: //p' /tmp/rping-cli.out >/tmp/rping-cli.got
sed -n 's/^server ping data: //p' /tmp/rping-srv.out >/tmp/rping-srv.got
cmp -s /tmp/rping.want /tmp/rping-cli.got ||
	{ diff /tmp/rping.want /tmp/rping-cli.got >&2 || true; fail "rping: client ping data differs"; }
cmp -s /tmp/rping.want /tmp/rping-srv.got ||
	{ diff /tmp/rping.want /tmp/rping-srv.got >&2 || true; fail "rping: server ping data differs"; }
echo "ok rping: $COUNT pings, payload bytes as expected on both sides"
qp1_check rping 3

# udaddy (UD) and ucmatose (RC) over rdma_cm: server bound to the address, client with
# the same message count; both sides must report the test complete.
cmatose_pair() { # tool what min-qp1-datagrams
	local tool=$1 rc=0 side
	start_server $tool $tool -b $ADDR -C $COUNT
	timeout 120 $tool -s $ADDR -C $COUNT >/tmp/$tool-cli.out 2>&1 || rc=$?
	finish $tool $rc
	for side in cli srv; do
		grep -q 'test complete' /tmp/$tool-$side.out ||
			{ cat /tmp/$tool-$side.out >&2; fail "$tool: $side side did not complete"; }
	done
	echo "ok $tool: $COUNT $2 each way"
	qp1_check $tool $3
}
cmatose_pair udaddy datagrams 2
cmatose_pair ucmatose messages 3

# mckey: UD multicast through rdma_cm (no MADs on RoCE: the join is local, librdmacm
# attaches the QP with ATTACH_TO_MCG). The receiver joins 239.77.0.1 and posts its
# receives before it says "joined"; the sender joins, waits 3 s and posts 100 datagrams
# to QP 0xFFFFFF, of which the receiver polls 20: the device's local copies (the port has
# no wire). mckey counts completions only (qtest test_roce and verbs-pyverbs' multicast
# cases check the bytes).
timeout 120 stdbuf -oL -eL mckey -m 239.77.0.1 -b $ADDR -C 20 -S 512 >/tmp/mckey-srv.out 2>&1 &
srv=$!
for _ in $(seq 300); do
	grep -q 'mckey: joined' /tmp/mckey-srv.out && break
	kill -0 $srv 2>/dev/null || break
	sleep 0.1
done
grep -q 'mckey: joined' /tmp/mckey-srv.out || { cat /tmp/mckey-srv.out >&2; fail "mckey: the receiver did not join"; }
# mckey destroys its QP right after posting: what the executor has not sent by then is
# lost, so the sender runs again (at most 5 times) while the receiver still waits.
for run in 1 2 3 4 5; do
	rc=0
	timeout 120 stdbuf -oL -eL mckey -s -m 239.77.0.1 -b $ADDR -C 100 -S 512 >/tmp/mckey-cli.out 2>&1 || rc=$?
	[ $rc = 0 ] || break
	for _ in $(seq 150); do
		kill -0 $srv 2>/dev/null || break 2
		sleep 0.1
	done
done
finish mckey $rc
for side in cli srv; do
	grep -q 'data transfers complete' /tmp/mckey-$side.out && grep -q 'return status 0' /tmp/mckey-$side.out ||
		{ cat /tmp/mckey-$side.out >&2; fail "mckey: $side side did not complete"; }
done
echo "ok mckey: 20 multicast datagrams of 512 bytes received over loopback ($run sender run(s) of 100)"

kernel_log_clean || fail "kernel warnings or ib_mad errors"
pass "rping, udaddy, ucmatose and mckey through rdma_cm over loopback on $VCX_IBDEV"
