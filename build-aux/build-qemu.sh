#!/usr/bin/env bash
# Build QEMU (pinned Debian source) with hw-model/ grafted in as hw/vcx.
#
# The QEMU tree and its build directory live in $VCX_CACHE/qemu/<version>-<patch set>,
# shared by every checkout with the same patches: hw/vcx and include/vcx are symlinks into
# the checkout being built, so an edit in hw-model/ recompiles only the files it touches.
# Usage: build-qemu.sh OUTPUT [sanitizers]
#   OUTPUT: where to place a copy of qemu-system-x86_64;
#   sanitizers: build with ASan and UBSan instead, in a build directory of its own
#   (build-sanitizers/ beside build/, same source tree), for the device-sanitizers suite.
. "$(dirname "$0")/common.sh"

out=${1:?usage: build-qemu.sh OUTPUT [sanitizers]}
variant=${2:-}
case "$variant" in
"") bld_name=build; variant_args=() ;;
# -O1 and -g1 (line tables): ASan's usual level, and enough for its reports' stacks. The
# sanitizer build is the longest step of a cold .ci/run, most of it optimizing at -O2.
sanitizers) bld_name=build-sanitizers
	variant_args=(--enable-asan --enable-ubsan -Doptimization=1 --extra-cflags=-g1) ;;
*) vcx_die "build-qemu.sh: unknown variant '$variant' (known: sanitizers)" ;;
esac
"$VCX_SRC/build-aux/fetch.sh" qemu

# Fixes to QEMU itself, applied in name order to the unpacked tree; each patch's header
# says what it fixes and which upstream change it follows. The tree is keyed by the QEMU
# version and the patch set, so checkouts with other patches keep trees of their own.
patches=("$VCX_SRC"/build-aux/qemu-patches/*.patch)
patch_set=$(cat "${patches[@]}" | sha256sum | cut -c1-12)
top="$VCX_CACHE/qemu/$VCX_QEMU_DIR-$patch_set"
src="$top/src"
bld="$top/$bld_name"
graft_rev=1 # bump when the graft below changes, so existing trees are re-grafted
marker="$src/.vcx-graft-$graft_rev"
vcx_lock "qemu-$patch_set"

if ! [ -e "$marker" ]; then
	vcx_log "unpacking $VCX_QEMU_ORIG"
	rm -rf "$top"
	mkdir -p "$top"
	tar -C "$top" -xf "$VCX_DL/$VCX_QEMU_ORIG"
	mv "$top/$VCX_QEMU_DIR" "$src"
	# The +ds tarball carries no edk2 firmware blobs; do not try to unpack them.
	sed -i 's/^\( *unpack_edk2_blobs = \)bzip2.found()/\1false/' "$src/meson.build"
	# Graft the device: a subdir, a Kconfig entry and a trace-events directory.
	echo "subdir('vcx')" >>"$src/hw/meson.build"
	echo "source vcx/Kconfig" >>"$src/hw/Kconfig"
	sed -i "s|^\( *\)'hw/nvme',|&\n\1'hw/vcx',|" "$src/meson.build"
	grep -q "'hw/vcx'" "$src/meson.build" || vcx_die "QEMU graft: trace_events_subdirs not found"
	for p in "${patches[@]}"; do
		vcx_log "patching QEMU: $(basename "$p")"
		patch -d "$src" -p1 --forward --batch --quiet <"$p" ||
			vcx_die "QEMU patch $(basename "$p") does not apply to $VCX_QEMU_DIR"
	done
	touch "$marker"
fi
# HMP "info vcx": a command table entry and its declaration (the handler is in
# hw-model/vcx-monitor.c). Applied once to an existing tree, without re-unpacking it.
if ! grep -q hmp_info_vcx "$src/hmp-commands-info.hx"; then
	cat >>"$src/hmp-commands-info.hx" <<'EOS'

    {
        .name       = "vcx",
        .args_type  = "",
        .params     = "",
        .help       = "show the state of vcx devices",
        .cmd        = hmp_info_vcx,
    },

SRST
  ``info vcx``
    Show the state of each vcx device: ISSI, HCA state, pages held, objects alive.
ERST
EOS
	sed -i '$i void hmp_info_vcx(Monitor *mon, const QDict *qdict);' "$src/include/monitor/hmp.h"
fi

# Point the graft at this checkout. When another checkout built last in this build
# directory, its files may be newer than ours, which ninja's timestamp check would miss:
# drop the device's objects and make meson re-read hw/vcx/meson.build. Each build
# directory (plain, sanitizers) records the checkout it last built.
# A link pointing elsewhere means another checkout built since: no build directory's
# record holds any more (an older copy of this script keeps one record per tree).
if [ "$(readlink "$src/hw/vcx")" != "$VCX_SRC/hw-model" ] ||
	[ "$(readlink "$src/include/vcx")" != "$VCX_SRC/include/vcx" ]; then
	rm -f "$top"/.graft-checkout*
	ln -sfn "$VCX_SRC/hw-model" "$src/hw/vcx"
	ln -sfn "$VCX_SRC/include/vcx" "$src/include/vcx"
fi
if [ "$(cat "$top/.graft-checkout-$bld_name" 2>/dev/null)" != "$VCX_SRC" ]; then
	# Objects and generated trace files of the device; trace-events-all concatenates it.
	find "$bld" -name '*hw_vcx*' -delete 2>/dev/null || true
	rm -f "$bld/trace/trace-events-all"
	touch "$src/hw/meson.build"
	echo "$VCX_SRC" >"$top/.graft-checkout-$bld_name"
fi

# Configured with other arguments (this script changed them): configure afresh.
configure_args="${variant_args[*]}"
if [ -e "$bld/build.ninja" ] &&
	[ "$(cat "$top/.configure-args-$bld_name" 2>/dev/null)" != "$configure_args" ]; then
	rm -f "$bld/build.ninja"
fi
if ! [ -e "$bld/build.ninja" ]; then
	vcx_log "configuring QEMU${variant:+ ($variant)}"
	rm -rf "$bld"
	mkdir -p "$bld"
	(cd "$bld" && "$src/configure" --python=/usr/bin/python3 \
		--target-list=x86_64-softmmu --without-default-features \
		--enable-tcg --enable-kvm --enable-slirp --enable-fdt=system \
		--enable-attr --enable-virtfs --disable-install-blobs \
		--disable-docs --disable-werror "${variant_args[@]}") \
		>"$top/configure-$bld_name.log" 2>&1 || {
		tail -30 "$top/configure-$bld_name.log" >&2
		rm -f "$bld/build.ninja"
		vcx_die "QEMU configure failed (log: $top/configure-$bld_name.log)"
	}
	echo "$configure_args" >"$top/.configure-args-$bld_name"
fi
ninja -C "$bld" qemu-system-x86_64 >"$top/ninja-$bld_name.log" 2>&1 || {
	grep -E -B2 -A12 'error|FAILED' "$top/ninja-$bld_name.log" | head -60 >&2
	vcx_die "QEMU build failed (log: $top/ninja-$bld_name.log)"
}
# A copy, not a link: each checkout keeps the binary of its own device sources.
if ! [ "$out" -nt "$bld/qemu-system-x86_64" ]; then
	# Per-process temporary name, then an atomic rename: a QEMU already running from
	# $out keeps its own inode.
	cp "$bld/qemu-system-x86_64" "$out.tmp.$$"
	mv -f "$out.tmp.$$" "$out"
fi
