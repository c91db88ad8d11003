#!/usr/bin/env bash
# Build the vcx provider inside the pinned rdma-core tree (grafted as providers/vcx).
# The tree and its build live in $VCX_CACHE/rdma-core/<version>, shared by checkouts;
# providers/vcx and vcx-include are symlinks into the checkout being built.
# Usage: build-rdma-core.sh OUTPUT_DIR   (receives libvcx-rdmav*.so, vcx.driver and
#        rdma-core-tests.tar, rdma-core's own pyverbs test suite for the guest)
. "$(dirname "$0")/common.sh"

out=${1:?usage: build-rdma-core.sh OUTPUT_DIR}
"$VCX_SRC/build-aux/fetch.sh" rdma-core
vcx_lock rdma-core

top="$VCX_CACHE/rdma-core/$VCX_RDMA_CORE_DIR"
src="$top/src"
bld="$top/build"
graft_rev=1

if ! [ -e "$src/.vcx-graft-$graft_rev" ]; then
	vcx_log "unpacking $VCX_RDMA_CORE_ORIG"
	rm -rf "$top"
	mkdir -p "$top"
	tar -C "$top" -xzf "$VCX_DL/$VCX_RDMA_CORE_ORIG"
	mv "$top/$VCX_RDMA_CORE_DIR" "$src"
	sed -i 's|^add_subdirectory(providers/siw)$|&\nadd_subdirectory(providers/vcx)|' "$src/CMakeLists.txt"
	grep -q 'providers/vcx' "$src/CMakeLists.txt" || vcx_die "rdma-core graft: providers list not found"
	touch "$src/.vcx-graft-$graft_rev"
fi
# Point the graft at this checkout; after another checkout, rebuild the provider whole
# (its files may be older than the objects) and let cmake re-read its CMakeLists.txt.
if [ "$(cat "$top/.graft-checkout" 2>/dev/null)" != "$VCX_SRC" ]; then
	ln -sfn "$VCX_SRC/rdma-core-provider" "$src/providers/vcx"
	ln -sfn "$VCX_SRC/include" "$src/vcx-include"
	rm -rf "$bld/providers/vcx/CMakeFiles"
	touch "$src/CMakeLists.txt"
	echo "$VCX_SRC" >"$top/.graft-checkout"
fi

if ! [ -e "$bld/build.ninja" ]; then
	vcx_log "configuring rdma-core"
	rm -rf "$bld"
	mkdir -p "$bld"
	(cd "$bld" && cmake -GNinja -DNO_PYVERBS=1 -DNO_MAN_PAGES=1 -DENABLE_STATIC=0 \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo "$src") >"$top/cmake.log" 2>&1 || {
		tail -30 "$top/cmake.log" >&2
		rm -f "$bld/build.ninja"
		vcx_die "rdma-core configure failed (log: $top/cmake.log)"
	}
fi
pabi=$(sed -n 's/^set(IBVERBS_PABI_VERSION "\([0-9]*\)")/\1/p' "$src/CMakeLists.txt")
ninja -C "$bld" "vcx-rdmav$pabi" >"$top/ninja.log" 2>&1 || {
	grep -E -B2 -A12 'error|FAILED' "$top/ninja.log" | head -60 >&2
	vcx_die "rdma-core provider build failed (log: $top/ninja.log)"
}
mkdir -p "$out"
# The installable driver file ("driver vcx"), not the build tree's absolute-path one.
cp "$bld/lib/libvcx-rdmav$pabi.so" "$bld/providers/vcx/vcx.driver" "$out/"
# The pyverbs tests of the same release run in the guest against its python3-pyverbs.
if ! [ "$out/rdma-core-tests.tar" -nt "$src/.vcx-graft-$graft_rev" ]; then
	tar -C "$src" -cf "$out/rdma-core-tests.tar" tests
fi
