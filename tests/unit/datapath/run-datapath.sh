#!/bin/sh
# Provider data-path harness (TAP): compiles the provider sources of this checkout with
# the harness (fake-uverbs.c, device.c) against the pinned rdma-core tree that
# build-aux/build-rdma-core.sh unpacked and built, and runs it. Skips when that tree has
# not been built yet.
set -eu
here=$(cd "$(dirname "$0")" && pwd -P)
src=${VCX_SRC:-$(cd "$here/../../.." && pwd -P)}
. "$src/build-aux/pins.sh"
cache=${VCX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vcx}
top=$cache/rdma-core/$VCX_RDMA_CORE_DIR
if [ ! -e "$top/build/lib/libibverbs.so" ] || [ ! -e "$top/build/util/librdma_util_pic.a" ]; then
	echo "1..0 # SKIP rdma-core $VCX_RDMA_CORE_DIR not built in $top (build the provider first)"
	exit 0
fi
unset VCX_SINGLE_THREADED	# the threads test needs the locks
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prov=$src/rdma-core-provider
${CC:-cc} -std=gnu11 -O1 -g -Wall -Wextra -Wno-sign-compare -Wno-unused-parameter -Werror \
	-I"$top/build/include" -I"$top/src" -I"$src/include" -I"$prov" -I"$here" \
	-o "$tmp/test-datapath" \
	"$here/test-datapath.c" "$here/test-qp-ex.c" "$here/fake-uverbs.c" "$here/device.c" \
	"$prov"/ah.c "$prov"/buf.c "$prov"/cq.c "$prov"/db.c "$prov"/qp.c "$prov"/rq.c \
	"$prov"/sq.c "$prov"/sq_wqe.c "$prov"/sq_wr.c "$prov"/srq.c "$prov"/srq_list.c "$prov"/table.c \
	"$prov"/vcx.c "$prov"/verbs.c "$prov"/xrc.c \
	"$top/build/util/librdma_util_pic.a" -L"$top/build/lib" -libverbs -lpthread >&2
LD_LIBRARY_PATH="$top/build/lib" "$tmp/test-datapath"
