#!/bin/sh
# check.sh BINARY...             run each binary (bin/CONFIG/NAME) under
#                                qemu-user and compare its exit status and
#                                stdout with expected/NAME.{status,stdout}
# check.sh --counts PLUGIN BIN...  print "CONFIG NAME INSNS" (qemu plugin
#                                pccount: first output line "# insns N")
# RUN_HOST=1 runs the binaries natively (make host-check).
# Binaries run with an empty environment and no arguments.
set -u
cd "$(dirname "$0")" || exit 2

runner() {
	case "$1" in
	*/aarch64-*) echo "qemu-aarch64 -seed 1 -cpu max,sve=off,sme=off,pauth=off" ;;
	*/s390x-*)   echo "qemu-s390x -seed 1 -cpu qemu,stfle=off,etf3eh=off,vxeh=off,msa-base=off" ;;
	*)           echo "" ;;
	esac
}

if [ "${1:-}" = "--counts" ]; then
	plugin=$2
	shift 2
	[ -f "$plugin" ] || { echo "no plugin $plugin (build it from pccount.c)" >&2; exit 2; }
	tmp=$(mktemp)
	for b in "$@"; do
		# shellcheck disable=SC2046
		env -i $(runner "$b") -plugin "$plugin,out=$tmp" "$b" > /dev/null
		n=$(sed -n '1s/^# insns //p' "$tmp")
		echo "$(basename "$(dirname "$b")") $(basename "$b") $n"
	done
	rm -f "$tmp"
	exit 0
fi

pass=0
fail=0
tmp=$(mktemp)
for b in "$@"; do
	name=$(basename "$b")
	cfg=$(basename "$(dirname "$b")")
	if [ -n "${RUN_HOST:-}" ]; then r=""; else r=$(runner "$b"); fi
	# shellcheck disable=SC2086
	env -i $r "$b" > "$tmp"
	st=$?
	want=$(cat "expected/$name.status" 2>/dev/null || echo missing)
	if [ "$st" = "$want" ] && cmp -s "$tmp" "expected/$name.stdout"; then
		pass=$((pass + 1))
		echo "PASS $cfg/$name status $st"
	else
		fail=$((fail + 1))
		echo "FAIL $cfg/$name status $st (want $want)"
		diff "expected/$name.stdout" "$tmp" | head -20
	fi
done
rm -f "$tmp"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
