#!/usr/bin/env bash
# fetch.sh: puts Debian bookworm's arm64 and s390x builds of the programs
# that programs/debian's test runs (and of the shared libraries they load)
# into one sysroot per architecture, unpacked with dpkg -x:
#
#   $CACHE/arm64/sysroot, $CACHE/s390x/sysroot
#
# CACHE is $SIMRUN_DEBIAN_CACHE, else $XDG_CACHE_HOME/simrun/debian, else
# ~/.cache/simrun/debian. Nothing of it is committed.
#
# Idempotent: an architecture whose stamp file ($CACHE/ARCH/stamp) already
# holds the package list below is left alone, so the download happens once.
# A changed list unpacks that architecture anew. Needs root the first time
# (dpkg --add-architecture, apt-get update), as CI is.
set -euo pipefail

# The programs and, resolved by hand from their Depends and Pre-Depends in
# bookworm (apt's solver is not asked), every shared library they need.
# Packages that hold only data or maintainer scripts (readline-common,
# dpkg, install-info, passwd, debianutils) are left out: nothing the test
# runs opens their files.
packages=(
	# C library and the C++ runtime (zstd is C++-linked); libc's separate
	# debug files (usr/lib/debug/.build-id), which name its internal
	# functions for simrun's outputs as for perf --symfs and gdb
	libc6 libc6-dbg libgcc-s1 libstdc++6
	# text tools
	coreutils libacl1 libattr1 libgmp10 libselinux1 libpcre2-8-0
	grep sed diffutils findutils tar
	# compressors
	gzip bzip2 libbz2-1.0 xz-utils liblzma5 zstd libzstd1 liblz4-1 zlib1g
	# interpreters, a calculator and a database engine
	perl-base libcrypt1 mawk bc sqlite3 libsqlite3-0 libreadline8 libtinfo6
	# statically linked
	busybox-static bash-static
	# a build tool that runs other programs, and /bin/sh (dash) for its
	# recipes
	make dash
)
arches=(arm64 s390x)

cache=${SIMRUN_DEBIAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/simrun/debian}
want="${packages[*]}"

todo=()
for arch in "${arches[@]}"; do
	if [ "$(cat "$cache/$arch/stamp" 2>/dev/null)" != "$want" ]; then
		todo+=("$arch")
	fi
done
if [ ${#todo[@]} -eq 0 ]; then
	echo "programs/debian: sysroots up to date in $cache"
	exit 0
fi

sudo=""
sandbox=()
if [ "$(id -u)" -eq 0 ]; then
	# apt's download user cannot write into root's cache folder.
	sandbox=(-o APT::Sandbox::User=root)
else
	sudo="sudo"
fi
update=false
foreign=$(dpkg --print-foreign-architectures)
for arch in "${todo[@]}"; do
	if ! grep -qx "$arch" <<<"$foreign"; then
		echo "== dpkg --add-architecture $arch"
		$sudo dpkg --add-architecture "$arch"
		update=true
	fi
	# The package lists may predate the architecture or be gone.
	apt-cache show "libc6:$arch" >/dev/null 2>&1 || update=true
done
if $update; then
	echo "== apt-get update"
	$sudo apt-get update -qq
fi

for arch in "${todo[@]}"; do
	dir="$cache/$arch"
	echo "== programs/debian: ${#packages[@]} packages for $arch into $dir/sysroot"
	rm -rf "$dir/debs" "$dir/sysroot.new"
	mkdir -p "$dir/debs" "$dir/sysroot.new"
	# Package lists older than the archive name versions it no longer
	# has: on a failed download, update them and try once more.
	if ! (cd "$dir/debs" && apt-get download -qq "${sandbox[@]}" "${packages[@]/%/:$arch}"); then
		echo "== apt-get update (a download failed)"
		$sudo apt-get update -qq
		(cd "$dir/debs" && apt-get download -qq "${sandbox[@]}" "${packages[@]/%/:$arch}")
	fi
	for deb in "$dir"/debs/*.deb; do
		dpkg -x "$deb" "$dir/sysroot.new"
	done
	rm -rf "$dir"/sysroot.new/usr/share/{doc,man,info,locale,lintian}
	# An empty ld.so cache: the loader then searches its built-in
	# multiarch directories, and never reads the host's /etc/ld.so.cache
	# (whose contents differ from machine to machine).
	mkdir -p "$dir/sysroot.new/etc"
	: >"$dir/sysroot.new/etc/ld.so.cache"
	(cd "$dir/debs" && ls) >"$dir/sysroot.new/PACKAGES"
	rm -rf "$dir/sysroot" "$dir/debs"
	mv "$dir/sysroot.new" "$dir/sysroot"
	echo "$want" >"$dir/stamp"
done
echo "programs/debian: sysroots ready in $cache"
