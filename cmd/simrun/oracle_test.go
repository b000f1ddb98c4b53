package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/internal/shareddata"
	"simrun/sim/cpu"
)

// sharedOracle is the qemu oracle suite found beside the repository in
// ../shared/oracle: freestanding test programs with a Makefile, and qemu
// 7.2's recorded stdout, exit status and exact instruction count for each
// build. Without it the test skips naming the path, or fails when CI is set.
func sharedOracle(t *testing.T) string {
	insns := shareddata.Require(t, "oracle/expected/insns.tsv", "the qemu oracle suite (test programs with qemu's recorded outputs and instruction counts), kept beside the repository as ../shared/oracle")
	return filepath.Dir(filepath.Dir(insns))
}

// TestOracleSuite is the oracle suite's `make simcheck` plus the instruction
// count: it builds the oracle's programs (reproducibly: their sha256 must
// equal expected/binaries.sha256) and runs each one for an architecture
// simrun has through `simrun run --stats`, comparing stdout, exit status
// and the retired-instruction count with what qemu recorded.
func TestOracleSuite(t *testing.T) {
	src := sharedOracle(t)
	oracle.RequireTool(t, "aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu")
	oracle.RequireTool(t, "s390x-linux-gnu-gcc", "gcc-s390x-linux-gnu")
	work := t.TempDir()
	require.NoError(t, exec.Command("cp", "-r", src, work).Run())
	dir := filepath.Join(work, "oracle")
	require.NoError(t, exec.Command("chmod", "-R", "u+w", dir).Run())
	out, err := exec.Command("make", "-C", dir, "-j2", "all").CombinedOutput()
	require.NoError(t, err, "building the oracle programs:\n%s", out)

	sums := readTable(t, filepath.Join(dir, "expected", "binaries.sha256"))
	counts := map[string]string{}
	for _, f := range readTable(t, filepath.Join(dir, "expected", "insns.tsv")) {
		if len(f) == 3 {
			counts[f[0]+"/"+f[1]] = f[2]
		}
	}
	ran := map[string]int{}
	for _, f := range sums {
		want, rel := f[0], f[1] // "sha256  CONFIG/PROG"
		bin := filepath.Join(dir, "build", rel)
		data, err := os.ReadFile(bin)
		require.NoError(t, err)
		sum := sha256.Sum256(data)
		require.Equal(t, want, hex.EncodeToString(sum[:]), "%s was not rebuilt byte for byte; its recorded counts would not apply", rel)
		if _, arch, err := cpu.ParseELF(bin, data); err != nil || arch == nil {
			continue // an architecture simrun does not register (yet)
		}
		t.Run(rel, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			st := mainStatus([]string{"run", "--stats", bin}, strings.NewReader(""), &stdout, &stderr)
			wantOut, err := os.ReadFile(filepath.Join(dir, "expected", rel+".out"))
			require.NoError(t, err)
			wantRC, err := os.ReadFile(filepath.Join(dir, "expected", rel+".rc"))
			require.NoError(t, err)
			assert.Equal(t, string(wantOut), stdout.String(), "stdout")
			assert.Equal(t, strings.TrimSpace(string(wantRC)), itoa(st), "exit status; stderr: %s", stderr.String())
			assert.Contains(t, "\n"+stderr.String(), "\ninstructions: "+counts[rel]+"\n", "instruction count (expected/insns.tsv)")
		})
		ran[strings.Split(rel, "/")[0]]++
	}
	t.Logf("ran per configuration: %v", ran)
	require.NotZero(t, ran["aarch64-O0"]+ran["aarch64-O2"])
}

func itoa(i int) string { return strconv.Itoa(i) }

// readTable splits a whitespace-separated text file into fields per line,
// skipping comments.
func readTable(t *testing.T, path string) [][]string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		rows = append(rows, strings.Fields(line))
	}
	return rows
}
