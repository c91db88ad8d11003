#!/usr/bin/env bash
# Build a userspace test program for the guest (which has no compiler) on the host, against
# the pinned rdma-core tree that build-rdma-core.sh keeps in the cache (the guest's
# libibverbs is the same release, same soname). The program may include the provider's
# private headers (rdma-core-provider/vcx.h) and include/vcx/*.h.
# Usage: build-guest-tool.sh SOURCE.c OUTPUT
. "$(dirname "$0")/common.sh"

src_c=${1:?usage: build-guest-tool.sh SOURCE.c OUTPUT}
out=${2:?usage: build-guest-tool.sh SOURCE.c OUTPUT}
# Relative to where we run: meson passes @INPUT@ relative to the build directory, which
# need not sit at any fixed depth below the checkout (VCX_CACHE can be anywhere).
case $src_c in /*) ;; *) src_c="$PWD/$src_c" ;; esac

top="$VCX_CACHE/rdma-core/$VCX_RDMA_CORE_DIR"
src="$top/src"
bld="$top/build"
[ -e "$bld/lib/libibverbs.so" ] || vcx_die "no $bld/lib/libibverbs.so: build the provider first (build-rdma-core.sh)"

tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
# rdma-core's own headers are system headers here: only our code must be warning-free.
${CC:-gcc} -std=gnu11 -O2 -g -Wall -Wextra -Werror \
	-I"$VCX_SRC" -I"$VCX_SRC/include" \
	-isystem "$bld/include" -isystem "$src" \
	-o "$tmp" "$src_c" -L"$bld/lib" -libverbs ||
	vcx_die "compiling $(basename "$src_c") failed"
mv -f "$tmp" "$out"
