#!/bin/bash
# perftest over loopback on vcx_0 (server and client on port 1, RoCE v2 GID, connection
# data exchanged over TCP as perftest does by default, not rdma_cm): send BW and latency
# with an SRQ, RDMA write BW, RDMA read BW and atomic (fetch&add) BW. Each run must end
# with its report: the '#bytes' header and a row with the size, the iteration count and
# non-zero bandwidth / latency figures.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

vcx_verbs_up >/dev/null
gid=$(vcx_roce_v2_gid) || fail "no RoCE v2 GID on $VCX_IBDEV"
run() { vcx_perftest "$1" "$2" "$3" "$4" "$gid" "${@:5}"; }
# One MTU (2048): with --use-srq perftest rounds each receive up to the MTU but steps the
# receive addresses by the message size, so below the MTU the last receives of its
# buffer reach past the end of its MR. Hardware checks only the bytes it writes; the
# device checks the whole scatter entry when it takes the WQE and fails them with a
# local protection error (hw-model/vcx-xport.c, vcx_resp_get_wqe).
run "send_bw srq" bw 1024 200 ib_send_bw --use-srq
run "send_lat srq" lat 64 200 ib_send_lat --use-srq
run "write_bw" bw 4096 200 ib_write_bw
run "read_bw" bw 4096 200 ib_read_bw
run "atomic_bw" bw 8 200 ib_atomic_bw
kernel_log_clean || fail "kernel warnings"
pass "perftest send_bw/send_lat (SRQ), write_bw, read_bw, atomic_bw over loopback on $VCX_IBDEV"
