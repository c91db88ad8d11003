#!/usr/bin/env bash
# Prepare a Debian 12 host for vcx: apt sources (bookworm-backports, trixie deb-src) and the
# packages the build, the VM runner and the tests need. Idempotent; a stamp keyed on the
# package list makes a second run return at once.
. "$(dirname "$0")/common.sh"

# name:target-release (empty = default release)
VCX_HOST_PACKAGES=(
	# QEMU build
	meson:bookworm-backports python3-pycotap:bookworm-backports ninja-build pkg-config gcc make
	libglib2.0-dev libpixman-1-dev libslirp-dev libfdt-dev zlib1g-dev flex bison python3-venv
	dpkg-dev xz-utils bzip2 patch
	# rdma-core build
	cmake libnl-3-dev libnl-route-3-dev libudev-dev
	# kernel module builds (6.12 for the guest, 6.1 compile-only)
	"$VCX_KERNEL_HEADERS_PKG:bookworm-backports" "$VCX_KERNEL61_HEADERS_PKG"
	# guest image
	debootstrap e2fsprogs cpio busybox-static
	# x86 firmware for the VM
	seabios:bookworm-backports ipxe-qemu qemu-system-data:bookworm-backports
	# tests (gnuplot-nox: the plot of ./vcx bench)
	python3 tshark gnuplot-nox
)

stamp_key=$(printf '%s\n' "${VCX_HOST_PACKAGES[@]}" | sha256sum | cut -c1-16)
stamp="$VCX_CACHE/stamps/host-$stamp_key"
if [ -e "$stamp" ] && [ -e /etc/apt/sources.list.d/vcx.sources ]; then
	exit 0
fi

[ "$(id -u)" = 0 ] || vcx_die "host setup installs Debian packages: run as root (or run 'sudo ./vcx setup' once)"
[ -r /etc/debian_version ] || vcx_die "vcx expects a Debian 12 (bookworm) host"

mirror=$(vcx_debian_mirror)
if ! [ -e /etc/apt/sources.list.d/vcx.sources ]; then
	vcx_log "adding apt sources: bookworm-backports (deb), trixie (deb-src) from $mirror"
	cat >/etc/apt/sources.list.d/vcx.sources <<EOS
# Added by vcx (build-aux/setup-host.sh)
Types: deb
URIs: $mirror
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: $mirror
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
fi
vcx_log "apt-get update"
apt-get update -qq >/dev/null 2>"$VCX_CACHE/apt-update.err" || {
	cat "$VCX_CACHE/apt-update.err" >&2
	vcx_die "apt-get update failed"
}

default_pkgs=() bpo_pkgs=()
for p in "${VCX_HOST_PACKAGES[@]}"; do
	case "$p" in
	*:bookworm-backports) bpo_pkgs+=("${p%%:*}/bookworm-backports") ;;
	*) default_pkgs+=("$p") ;;
	esac
done
export DEBIAN_FRONTEND=noninteractive
for p in "${default_pkgs[@]}" "${bpo_pkgs[@]}"; do
	name=${p%%/*}
	apt-cache show "$name" >/dev/null 2>&1 || vcx_die "Debian package $name is not available from the configured apt sources"
done
vcx_log "installing host packages (${#default_pkgs[@]} + ${#bpo_pkgs[@]} from bookworm-backports)"
if ! apt-get install -y -q --no-install-recommends "${default_pkgs[@]}" "${bpo_pkgs[@]}" \
	>"$VCX_CACHE/apt-install.log" 2>&1; then
	tail -20 "$VCX_CACHE/apt-install.log" >&2
	vcx_die "apt-get install failed (log: $VCX_CACHE/apt-install.log)"
fi
mkdir -p "$(dirname "$stamp")"
touch "$stamp"
vcx_log "host ready"
