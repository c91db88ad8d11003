# Shared helpers for the build-aux scripts (sourced, not run).
set -euo pipefail

VCX_SRC="${VCX_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
VCX_CACHE="${VCX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vcx}"
VCX_DL="$VCX_CACHE/downloads"
# shellcheck source=pins.sh
. "$VCX_SRC/build-aux/pins.sh"

vcx_die() { echo "vcx: error: $*" >&2; exit 1; }
vcx_log() { echo "vcx: $*" >&2; }

# Serialise work on a shared cache directory (two checkouts may build at once).
vcx_lock() { # name
	mkdir -p "$VCX_CACHE/locks"
	exec {VCX_LOCK_FD}>"$VCX_CACHE/locks/$1.lock"
	flock "$VCX_LOCK_FD"
}

vcx_sha256_check() { # file expected-sha256
	local got
	got=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$got" = "$2" ] || vcx_die "$(basename "$1"): sha256 $got, expected $2 (pinned in build-aux/pins.sh)"
	# Keep a record of everything downloaded and what it hashed to.
	mkdir -p "$VCX_DL"
	grep -qs "  $(basename "$1")\$" "$VCX_DL/SHA256SUMS" ||
		echo "$got  $(basename "$1")" >>"$VCX_DL/SHA256SUMS"
}

# The Debian mirror this machine already uses, read from its apt configuration.
vcx_debian_mirror() {
	local uri=""
	if [ -r /etc/apt/sources.list.d/debian.sources ]; then
		uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
			/etc/apt/sources.list.d/debian.sources)
	fi
	if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
		uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { print $i; exit } }' \
			/etc/apt/sources.list)
	fi
	[ -n "$uri" ] || vcx_die "no Debian mirror found in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list"
	echo "${uri%/}"
}
