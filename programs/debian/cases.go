package debian

// Step is one program run in the case's directory.
type Step struct {
	Prog  string   // the program's absolute path inside the sysroot
	Args  []string // argv[1:]
	Stdin string
}

// Case is one row of the table.
type Case struct {
	Name  string
	Steps []Step
	// Files are compared between the two runs after the last step.
	Files []string
	// Restored names input files that the steps remove and make again
	// (compression round trips): after the last step each must hold
	// its prepared content again, in both runs.
	Restored []string
	// Known maps an architecture to the reason the case fails there
	// (a missing instruction, say): the subtest is skipped with it (none
	// today: every case passes on both architectures).
	Known map[string]string
}

func run(prog string, args ...string) Step { return Step{Prog: prog, Args: args} }

func (s Step) in(stdin string) Step { s.Stdin = stdin; return s }

func one(name string, s Step) Case { return Case{Name: name, Steps: []Step{s}} }

func (c Case) then(s Step) Case { c.Steps = append(c.Steps, s); return c }

func (c Case) out(files ...string) Case { c.Files = append(c.Files, files...); return c }

func (c Case) back(files ...string) Case { c.Restored = append(c.Restored, files...); return c }

const sqlScript = `
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 500)
  INSERT INTO t(name, v) SELECT 'n' || (i % 17), i * 1.5 FROM n;
CREATE INDEX t_name ON t(name);
SELECT name, count(*), sum(v), printf('%.3f', avg(v)) FROM t GROUP BY name ORDER BY name;
SELECT group_concat(id, ',') FROM (SELECT id FROM t WHERE v BETWEEN 100 AND 130 ORDER BY id DESC);
SELECT upper(substr('simulated', 2, 4)), length(hex(randomblob(0))), 7 / 2, 7 / 2.0, 1 << 40;
`

const sqlCreate = `
CREATE TABLE city(name TEXT PRIMARY KEY, pop INTEGER);
INSERT INTO city VALUES ('Berlin', 3645000), ('Lyon', 516000), ('Porto', 232000), ('Oslo', 697000);
BEGIN; UPDATE city SET pop = pop + 1 WHERE name LIKE '%o%'; COMMIT;
`

// sqlWAL works in write-ahead-log mode: the -shm file is a shared
// mapping, the log a second file, both under fcntl locks.
const sqlWAL = `
PRAGMA journal_mode=WAL;
CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000)
  INSERT INTO kv SELECT i, hex(i * 7919) FROM n;
UPDATE kv SET v = 'x' || v WHERE k % 3 = 0;
DELETE FROM kv WHERE k % 5 = 0;
PRAGMA wal_checkpoint(TRUNCATE);
SELECT count(*), sum(k), max(v) FROM kv;
PRAGMA integrity_check;
`

// perlFiles makes, renames, reads and removes files and a directory.
const perlFiles = `open my $f, ">", "p.out" or die "open: $!";
print $f "line $_\n" for 1 .. 500;
close $f or die;
rename "p.out", "q.out" or die "rename: $!";
my @st = stat "q.out"; print "size $st[7]\n";
open $f, "<", "q.out" or die; my @l = <$f>; close $f; print scalar(@l), " $l[-1]";
opendir my $d, "tree" or die; print join(",", sort grep { !/^\./ } readdir $d), "\n"; closedir $d;
mkdir "nd", 0750 or die; printf "%o\n", (stat "nd")[2] & 07777;
symlink "q.out", "nd/ln" or die; print readlink("nd/ln"), "\n";
unlink "nd/ln", "q.out"; rmdir "nd" or die "rmdir: $!";
print -e "q.out" ? "still there\n" : "gone\n";
`

const bashScript = `declare -A m
for w in alpha beta gamma alpha delta alpha beta; do m[$w]=$(( ${m[$w]:-0} + 1 )); done
for k in alpha beta delta gamma; do echo "$k ${m[$k]}"; done
x=0; for ((i = 0; i < 2000; i++)); do ((x += i * i % 7)); done; echo $x
s="The quick brown fox"; echo "${s^^} ${s,,} ${s//o/0} ${#s} ${s:4:5}"
arr=(3 1 4 1 5 9 2 6); echo "${#arr[@]} ${arr[*]:2:3}"
printf '%q|%5.2f|%x\n' "a b" 3.14159 255
while IFS=, read -r n q p c; do ((t += q)); done < table.csv; echo "total $t"
[[ abc123 =~ ^([a-z]+)([0-9]+)$ ]] && echo "${BASH_REMATCH[2]} ${BASH_REMATCH[1]}"
`

const bbScript = `i=0; s=0
while [ $i -lt 300 ]; do s=$((s + i * i)); i=$((i + 1)); done
echo $s ${#s}
set -- a b c; echo "$# $2"
case hello.txt in *.txt) echo text;; *) echo other;; esac
while read -r line; do n=$((n + 1)); done < text.txt; echo "$n lines"
printf '%s-%d\n' x 42
`

// Cases is the table of real programs: each case's steps run under simrun
// and qemu-user with the same sysroot (programs/debian's test compares
// them; cmd/simrun's TestUnwindDebian checks their stacks). Paths are
// where bookworm's packages put the programs.
var Cases = []Case{
	// coreutils
	one("cat", run("/bin/cat", "-n", "-A", "text.txt")),
	one("wc", run("/usr/bin/wc", "text.txt", "words.txt", "big.txt")),
	one("sort", run("/usr/bin/sort", "words.txt")),
	one("sort-numeric", run("/usr/bin/sort", "-n", "-r", "-u", "nums.txt")),
	one("sort-keys", run("/usr/bin/sort", "-t,", "-k4,4", "-k3,3gr", "table.csv")),
	one("uniq", run("/usr/bin/uniq", "-c", "sorted.txt")),
	one("head", run("/usr/bin/head", "-n", "5", "text.txt")),
	one("tail", run("/usr/bin/tail", "-c", "150", "big.txt")),
	one("cut", run("/usr/bin/cut", "-d,", "-f1,4", "--output-delimiter= ", "table.csv")),
	one("tr", run("/usr/bin/tr", "-s", "a-z", "A-Z").in(debianText())),
	one("tac", run("/usr/bin/tac", "text.txt")),
	one("nl", run("/usr/bin/nl", "-ba", "-w3", "text.txt")),
	one("fmt", run("/usr/bin/fmt", "-w", "40", "text.txt")),
	one("paste", run("/usr/bin/paste", "-d|", "words.txt", "sorted.txt")),
	one("od", run("/usr/bin/od", "-A", "x", "-t", "x1z", "-N", "256", "data.bin")),
	one("od-words", run("/usr/bin/od", "-A", "d", "-t", "u4", "-t", "d2", "-N", "96", "data.bin")),
	one("md5sum", run("/usr/bin/md5sum", "text.txt", "data.bin", "big.txt")),
	one("sha1sum", run("/usr/bin/sha1sum", "data.bin", "big.txt")),
	one("sha256sum", run("/usr/bin/sha256sum", "data.bin", "big.txt")),
	one("sha256sum-check", run("/usr/bin/sha256sum", "-c", "sums.sha256")),
	one("sha512sum", run("/usr/bin/sha512sum", "big.txt")),
	one("b2sum", run("/usr/bin/b2sum", "data.bin", "big.txt")),
	one("cksum", run("/usr/bin/cksum", "data.bin", "big.txt")),
	one("base64", run("/usr/bin/base64", "data.bin")),
	one("base64-decode", run("/usr/bin/base64", "-d", "text.b64")),
	one("seq", run("/usr/bin/seq", "-w", "-s,", "1", "7", "300")),
	one("printf", run("/usr/bin/printf", `%05d|%x|%o|%s|%.3f|%e|%g|%b\n`, "42", "255", "8", "abc", "3.14159", "12345.678", "0.0001", `a\tb`)),
	one("expr", run("/usr/bin/expr", "123456789", "*", "987654321")),
	one("expr-match", run("/usr/bin/expr", "abcdef", ":", `a\(.*\)e`)),
	one("expr-false", run("/usr/bin/expr", "0", "+", "0")),
	one("basename", run("/usr/bin/basename", "-s", ".txt", "/a/b/c.txt", "d.txt")),
	one("dirname", run("/usr/bin/dirname", "/a/b/c.txt", "x", "/")),
	one("factor", run("/usr/bin/factor", "600851475143", "1234567890123", "18446744073709551557")),
	one("numfmt", run("/usr/bin/numfmt", "--to=iec", "1024", "1048576", "123456789")),
	one("date", run("/bin/date", "-u", "-d", "@1700000000", "+%Y-%m-%d %H:%M:%S %A %j %s")),
	// nice sets its priority and execs the second nice, which reads it back.
	one("nice", run("/usr/bin/nice", "-n", "5", "/usr/bin/nice")),
	one("ls", run("/bin/ls", "-R", "-F", "tree")),
	one("ls-long", run("/bin/ls", "-l", "-n", "-a", "--time-style=+%Y-%m-%d", "tree", "tree/b")),
	one("stat", run("/usr/bin/stat", "-c", "%n %s %F %a %h %Y", "text.txt", "tree", "tree/b/d.dat")),
	one("du", run("/usr/bin/du", "-a", "-b", "tree")),
	one("split", run("/usr/bin/split", "-l", "5", "-d", "text.txt", "part.")).out("part.00", "part.01", "part.02"),
	one("cp", run("/bin/cp", "-r", "tree", "tree2")).then(run("/bin/ls", "-R", "tree2")).out("tree2/b/d.dat", "tree2/h.txt"),
	one("dd", run("/bin/dd", "if=data.bin", "of=dd.out", "bs=100", "skip=3", "count=7", "conv=swab")).out("dd.out"),
	one("mkdir-mv-rm", run("/bin/mkdir", "-p", "x/y/z")).then(run("/bin/mv", "text.txt", "x/y/z/t")).
		then(run("/bin/rm", "-r", "tree")).then(run("/bin/ls", "-R", ".")).out("x/y/z/t"),
	one("sort-tempfiles", run("/usr/bin/sort", "-S", "64K", "-T", ".", "-k2,2", "-k1,1nr", "big.txt")),
	one("sort-parallel", run("/usr/bin/sort", "--parallel=2", "-S", "16M", "lines.txt")),
	one("symlink", run("/bin/ln", "-s", "../text.txt", "tree/link")).then(run("/bin/readlink", "tree/link")).
		then(run("/usr/bin/stat", "-c", "%N %F %s", "tree/link")).then(run("/usr/bin/wc", "-l", "tree/link")),
	one("touch", run("/bin/touch", "-m", "-d", "2001-02-03 04:05:06", "text.txt")).
		then(run("/usr/bin/stat", "-c", "%Y %n", "text.txt")).then(run("/bin/ls", "-t", "-1")),
	one("chmod", run("/bin/chmod", "640", "text.txt")).then(run("/bin/chmod", "-R", "go-rx", "tree")).
		then(run("/usr/bin/stat", "-c", "%a %n", "text.txt", "tree", "tree/b", "tree/b/c.txt")),
	one("truncate", run("/usr/bin/truncate", "-s", "100", "text.txt")).then(run("/usr/bin/truncate", "-s", "+1K", "data.bin")).
		then(run("/usr/bin/wc", "-c", "text.txt", "data.bin")).out("text.txt", "data.bin"),
	one("tee", run("/usr/bin/tee", "out1.txt", "out2.txt").in("one\ntwo\nthree\n")).out("out1.txt", "out2.txt"),
	one("shuf", run("/usr/bin/shuf", "--random-source=data.bin", "words.txt")),
	one("csplit", run("/usr/bin/csplit", "-f", "cs.", "text.txt", "5", "/alpha/")).out("cs.00", "cs.01", "cs.02"),
	// grep, sed, diffutils, findutils, tar
	one("grep", run("/bin/grep", "-n", "-i", "-E", "the (simulator|kernel)", "text.txt")),
	one("grep-count", run("/bin/grep", "-c", "-w", "-F", "alpha", "text.txt", "words.txt")),
	one("grep-only", run("/bin/grep", "-o", "-E", `[0-9]+(\.[0-9]+)?`, "text.txt")),
	one("grep-recursive", run("/bin/grep", "-r", "-c", "-i", "the", "tree")),
	one("grep-none", run("/bin/grep", "-q", "zebra", "text.txt")),
	one("sed", run("/bin/sed", "-n", "-e", `s/\([a-z]*\)ing/[\1]/gp`, "text.txt")),
	one("sed-inplace", run("/bin/sed", "-i", "-e", "1d", "-e", "s/the/THE/g", "text.txt")).out("text.txt"),
	one("diff", run("/usr/bin/diff", "-u", "text.txt", "text2.txt")),
	one("cmp", run("/usr/bin/cmp", "text.txt", "text2.txt")),
	one("find", run("/usr/bin/find", "tree", "-name", "*.txt", "-printf", "%p %s %d\n")),
	one("tar", run("/bin/tar", "--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner", "-cf", "out.tar", "tree")).
		then(run("/bin/tar", "-tvf", "out.tar")).then(run("/bin/mkdir", "x")).then(run("/bin/tar", "-C", "x", "-xf", "out.tar")).
		out("out.tar", "x/tree/b/d.dat", "x/tree/h.txt"),
	// compressors: compress, then decompress in place
	one("gzip", run("/bin/gzip", "-9", "-n", "big.txt")).then(run("/bin/gzip", "-l", "big.txt.gz")).
		then(run("/bin/gzip", "-d", "big.txt.gz")).back("big.txt"),
	one("gzip-stdout", run("/bin/gzip", "-c", "-n", "-6", "text.txt")),
	one("bzip2", run("/bin/bzip2", "-9", "big.txt")).then(run("/bin/bzip2", "-t", "big.txt.bz2")).
		then(run("/bin/bunzip2", "big.txt.bz2")).back("big.txt"),
	one("xz", run("/usr/bin/xz", "-6", "-k", "big.txt")).then(run("/usr/bin/xz", "-l", "big.txt.xz")).
		then(run("/bin/rm", "big.txt")).then(run("/usr/bin/unxz", "big.txt.xz")).back("big.txt"),
	one("zstd", run("/usr/bin/zstd", "-q", "-12", "--no-asyncio", "--rm", "big.txt")).then(run("/usr/bin/zstd", "-l", "big.txt.zst")).
		then(run("/usr/bin/zstd", "-q", "-d", "--no-asyncio", "--rm", "big.txt.zst")).back("big.txt"),
	// zstd's asynchronous I/O starts a thread (clone).
	one("zstd-threads", run("/usr/bin/zstd", "-q", "-3", "big.txt")).out("big.txt.zst"),
	// Four compression workers (xz: seven blocks among them); the
	// output does not depend on how they interleave.
	one("zstd-T4", run("/usr/bin/zstd", "-q", "-T4", "-3", "big.txt")).out("big.txt.zst"),
	one("xz-T4", run("/usr/bin/xz", "-T4", "-1", "--block-size=32KiB", "-k", "big.txt")).
		then(run("/usr/bin/xz", "-l", "big.txt.xz")).out("big.txt.xz"),
	// interpreters and a database engine
	one("perl-words", run("/usr/bin/perl", "-e",
		`my %c; $c{lc $_}++ for grep { length } split /\W+/, join "", <>; print "$_ $c{$_}\n" for sort { $c{$b} <=> $c{$a} || $a cmp $b } keys %c`,
		"text.txt")),
	one("perl-math", run("/usr/bin/perl", "-e",
		`my ($a, $b) = (0, 1); ($a, $b) = ($b, $a + $b) for 1 .. 90; printf "%d %.10g %s\n", $a, sqrt(2) * 1e6, join(",", map { $_ * $_ } 1 .. 12); print unpack("H*", pack("N n C a4", 0xdeadbeef, 513, 7, "ab")), "\n"; printf "%.12e\n", atan2(1, 1) * 4`)),
	one("perl-file", run("/usr/bin/perl", "-ne", `chomp; my @f = split /,/; $s{$f[3]} += $f[1] * $f[2]; END { printf "%s %.2f\n", $_, $s{$_} for sort keys %s }`, "table.csv")),
	one("perl-files", run("/usr/bin/perl", "-e", perlFiles)),
	// system() and qx() with shell metacharacters run /bin/sh, which the
	// sysroot lacks: the host's shell runs on the host, as under qemu.
	one("perl-system", run("/usr/bin/perl", "-e", `system("echo via sh | tr a-z A-Z"); print qx(ls tree | sort -r); open(my $fh, "-|", "seq", "3") or die; print <$fh>; close $fh; print "status $?\n"`)),
	one("mawk-files", run("/usr/bin/mawk", "-F,", `{ print $1 > ($4 ".txt") } END { close("Berlin.txt"); while ((getline l < "Berlin.txt") > 0) n++; print n }`, "table.csv")).
		out("Berlin.txt", "Graz.txt", "Lyon.txt", "Oslo.txt", "Porto.txt", "Turin.txt"),
	one("mawk", run("/usr/bin/mawk", "-F,", `{ q[$4] += $2; s += $2 * $3 } END { for (c in q) print c, q[c]; printf "%.2f %d\n", s, NR }`, "table.csv")),
	one("mawk-primes", run("/usr/bin/mawk", `BEGIN { for (i = 2; n < 300; i++) { p = 1; for (j = 2; j * j <= i; j++) if (i % j == 0) { p = 0; break }; if (p) { n++; printf "%d ", i } }; print ""; print sin(1), exp(10), log(2) }`)),
	one("bc", run("/usr/bin/bc", "-l").in("scale=60; 4*a(1)\n2^300\nsqrt(2)\ne(1)\n")),
	one("sqlite3", run("/usr/bin/sqlite3").in(sqlScript)),
	one("sqlite3-file", run("/usr/bin/sqlite3", "db.sqlite").in(sqlCreate)).
		then(run("/usr/bin/sqlite3", "-separator", " ", "db.sqlite", "SELECT name, pop FROM city ORDER BY pop DESC; PRAGMA integrity_check;")),
	one("sqlite3-wal", run("/usr/bin/sqlite3", "wal.db").in(sqlWAL)),
	// Four sqlite3 processes write one database at once: fcntl's record
	// locks between processes keep it whole (under qemu the shell's
	// children are the host's sqlite3, whose locks are the host
	// kernel's).
	one("sqlite3-concurrent", run("/bin/bash-static", "-c", sqlConcurrentScript)),
	// statically linked: busybox and bash
	one("busybox-sh", run("/bin/busybox", "sh", "-c", bbScript)),
	one("busybox-awk", run("/bin/busybox", "awk", "-F,", `{ s += $2 } END { print s, NR }`, "table.csv")),
	one("busybox-sort", run("/bin/busybox", "sort", "-n", "nums.txt")),
	one("busybox-md5sum", run("/bin/busybox", "md5sum", "big.txt", "data.bin")),
	one("busybox-sed", run("/bin/busybox", "sed", "-e", "s/[aeiou]/_/g", "text.txt")),
	one("busybox-ls", run("/bin/busybox", "ls", "-R", "tree")),
	one("busybox-gzip", run("/bin/busybox", "gzip", "big.txt")).then(run("/bin/busybox", "gunzip", "big.txt.gz")).back("big.txt"),
	one("bash", run("/bin/bash-static", "-c", bashScript)),
	// processes: pipelines, command substitution, subshells, redirections
	one("busybox-pipeline", run("/bin/busybox", "sh", "-c", bbPipeScript)),
	one("bash-pipeline", run("/bin/bash-static", "-c", bbPipeScript)),
	// find and xargs run other programs (fork + execve through PATH);
	// qemu-user hands a guest's execve to the host kernel, so its children
	// are the host's GNU tools: the same versions' output is the oracle.
	one("find-exec", run("/usr/bin/find", "tree", "-type", "f", "-name", "*.txt", "-exec", "wc", "-c", "{}", ";")),
	one("xargs", run("/usr/bin/xargs", "-n", "2", "wc", "-l").in("tree/a.txt\ntree/b/c.txt\ntree/b/f/g.txt\n")),
	one("bash-find-xargs", run("/bin/bash-static", "-c", findXargsScript)),
	// named pipes: mkfifo (mknodat), opens that wait for the other end
	one("bash-fifo", run("/bin/bash-static", "-c", fifoScript)).out("out.txt"),
	// process substitution (/dev/fd/N, distinct pipes), a coprocess,
	// traps, waits, read with a timeout
	one("bash-procsubst", run("/bin/bash-static", "-c", procSubstScript)),
	// make runs each recipe line with /bin/sh (dash), which runs the
	// tools (the host's under qemu, as for find-exec); run again, it
	// finds everything up to date.
	one("make", run("/usr/bin/make", "-f", "build.mk")).then(run("/usr/bin/make", "-f", "build.mk")).
		out("text.upper", "count.txt", "summary.txt"),
}

// procSubstScript leaves out what shows qemu's own descriptors (the
// number of an "exec {fd}>" and a listing of /dev/fd: qemu-user shares
// its descriptor table with the guest).
const procSubstScript = `diff <(echo a) <(echo b); echo "rc $?"; cat <(seq 3)
coproc c { read x; echo "got $x"; }; echo hi >&"${c[1]}"; read y <&"${c[0]}"; echo "$y"
trap "echo trapped" USR1; kill -USR1 $$; (sleep 0.01 & wait $!; echo waited $?)
read -t 0.01 z < <(sleep 1); echo "read rc $?"
mapfile -t arr < <(printf "%s\n" q w e); echo "${arr[@]}"`

// fifoScript makes a FIFO and passes bytes through it: a reader and a
// writer that wait for each other, a read-write open that does not wait.
// sqlConcurrentScript runs four writers of one database at once, each
// waiting up to 10 s for the others' locks.
const sqlConcurrentScript = `sqlite3 c.db "create table t(x integer)"
for i in 1 2 3 4; do sqlite3 -cmd ".timeout 10000" c.db "insert into t values($i)" & done; wait
sqlite3 c.db "select count(*), sum(x) from t; pragma integrity_check;"`

const fifoScript = `mkfifo f; ls -l f | cut -c1-10; stat -c %F f
(echo via fifo > f &); cat f
exec 3<>f; echo rw >&3; read x <&3; echo "$x"; exec 3>&-
cat f > out.txt & echo one > f; wait; cat out.txt`

// findXargsScript runs find -exec and xargs under a shell (issue 3/8).
const findXargsScript = `find tree -type f -exec wc -c {} \; | sort
find tree -name '*.txt' | sort | xargs -n 1 head -c 5; echo
printf '%s\n' 3 1 2 | xargs -I{} echo item {} | sort`

// bbPipeScript forks, pipes and execs (issue 3/8).
const bbPipeScript = `seq 1000 | sort -rn | head -3
x=$(echo hi | tr a-z A-Z); echo "$x"
(cd tree && ls | wc -l); pwd | wc -c
for i in 1 2 3; do echo n$i; done > loop.out; wc -l < loop.out; sort -r loop.out
false || echo "status $?"; (exit 3); echo "subshell $?"`

// debianText is the prepared text.txt, for a case that reads it on stdin.
func debianText() string { return string(Inputs()["text.txt"]) }
