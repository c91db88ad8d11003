#!/usr/bin/env bash
# Download the pinned sources and packages into $VCX_CACHE/downloads and verify their sha256.
# Usage: fetch.sh qemu|rdma-core|kernel ...   (prints nothing when already cached)
. "$(dirname "$0")/common.sh"

mkdir -p "$VCX_DL"
cd "$VCX_DL"

fetch_source_tarball() { # package version file sha256
	local pkg=$1 ver=$2 file=$3 sum=$4
	if [ -e "$file" ] && [ "$(sha256sum "$file" | cut -d' ' -f1)" = "$sum" ]; then
		return 0
	fi
	vcx_log "downloading $pkg $ver source"
	rm -f "$file"
	# The mirror may lack the .dsc (rdma-core 56.1-1): apt then reports an error but has
	# already saved the tarball, which the sha256 pin verifies on its own.
	apt-get source -qq --download-only "$pkg=$ver" >"$VCX_DL/apt-source-$pkg.log" 2>&1 || true
	[ -e "$file" ] || {
		tail -3 "$VCX_DL/apt-source-$pkg.log" >&2
		vcx_die "download refused: Debian source package $pkg=$ver ($file); is trixie deb-src in the apt sources? (./vcx setup)"
	}
	vcx_sha256_check "$file" "$sum"
}

fetch_binary_deb() { # package version sha256
	local pkg=$1 ver=$2 sum=$3 deb
	deb="${pkg}_${ver//:/%3a}_amd64.deb"
	if [ -e "$deb" ] && [ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$sum" ]; then
		return 0
	fi
	vcx_log "downloading $pkg $ver"
	apt-get download -qq "$pkg=$ver" >"$VCX_DL/apt-download-$pkg.log" 2>&1 || {
		tail -3 "$VCX_DL/apt-download-$pkg.log" >&2
		vcx_die "download refused: Debian package $pkg=$ver"
	}
	vcx_sha256_check "$deb" "$sum"
}

for what in "$@"; do
	case "$what" in
	qemu) fetch_source_tarball qemu "$VCX_QEMU_SRC_VERSION" "$VCX_QEMU_ORIG" "$VCX_QEMU_ORIG_SHA256" ;;
	rdma-core) fetch_source_tarball rdma-core "$VCX_RDMA_CORE_SRC_VERSION" "$VCX_RDMA_CORE_ORIG" "$VCX_RDMA_CORE_ORIG_SHA256" ;;
	kernel) fetch_binary_deb "$VCX_KERNEL_IMAGE_PKG" "$VCX_KERNEL_IMAGE_VERSION" "$VCX_KERNEL_IMAGE_SHA256" ;;
	*) vcx_die "fetch: unknown artefact $what" ;;
	esac
done
