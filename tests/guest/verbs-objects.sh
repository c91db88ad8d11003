#!/bin/bash
# Every verbs object through the provider and vcx.ko (pyverbs): PD, MR, CQ (+ arm), SRQ
# (+ limit, query), RC/UC/UD and XRC_SEND QPs (RST2INIT, query), a QP on the SRQ; rdma res
# show lists them; bad attributes get EINVAL / EOPNOTSUPP; all destroyed cleanly.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs-common.sh"

vcx_verbs_up >/dev/null
python3 "$(dirname "$0")/verbs-objects.py" $VCX_IBDEV || fail "verbs objects"
kernel_log_clean || fail "kernel warnings"
pass "verbs objects on $VCX_IBDEV"
