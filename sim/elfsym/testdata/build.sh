#!/bin/sh
# Rebuilds the test ELF files from syms.S with Debian's cross compilers
# (gcc-aarch64-linux-gnu, gcc-s390x-linux-gnu).
set -eu
cd "$(dirname "$0")"
for a in aarch64 s390x; do
	$a-linux-gnu-gcc -nostdlib -shared -Wl,--build-id=none,-z,max-page-size=4096,--section-start=hot=0x400 -o syms-$a.so syms.S
	$a-linux-gnu-strip -o syms-$a-stripped.so syms-$a.so
done
