package arm64

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"simrun/internal/difftest"
	"simrun/internal/oracle"
)

// TestDecoderAgainstObjdump checks simrun's decoder against binutils on
// random words: every word simrun decodes must be an instruction objdump
// knows (simrun must not execute encodings the architecture leaves
// unallocated). Words objdump knows and simrun does not are listed by
// mnemonic as information (features simrun leaves out).
func TestDecoderAgainstObjdump(t *testing.T) {
	// binutils is the oracle here: its absence fails the test, as a missing
	// qemu fails the differential tests (SIMRUN_ALLOW_NO_QEMU=1 skips).
	objdump := oracle.RequireTool(t, "aarch64-linux-gnu-objdump", "binutils-aarch64-linux-gnu")
	n := difftest.EnvInt("SIMRUN_OBJDUMP_WORDS", 300000)
	r := rand.New(rand.NewPCG(7, 7))
	words := make([]uint32, n)
	buf := make([]byte, 4*n)
	for i := range words {
		words[i] = r.Uint32()
		binary.LittleEndian.PutUint32(buf[4*i:], words[i])
	}
	bin := filepath.Join(t.TempDir(), "words.bin")
	if err := os.WriteFile(bin, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(objdump, "-D", "-b", "binary", "-m", "aarch64", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	known := make([]bool, n)
	mnem := make([]string, n)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 3)
		if len(f) < 3 || !strings.HasSuffix(f[0], ":") {
			continue
		}
		off, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(f[0], ":")), 16, 64)
		if err != nil || off/4 >= uint64(n) {
			continue
		}
		text := f[2]
		if strings.HasPrefix(text, ".inst") || strings.Contains(text, "undefined") {
			continue
		}
		known[off/4] = true
		mnem[off/4] = strings.Fields(text)[0]
	}
	missing := map[string]int{}
	bad := 0
	for i, w := range words {
		in := decode(w, 0)
		switch {
		case in.op != opUndef && !known[i]:
			bad++
			if bad <= 20 {
				t.Errorf("simrun decodes %08x (op %v) but objdump calls it undefined", w, in.op)
			}
		case in.op == opUndef && known[i]:
			missing[mnem[i]]++
		}
	}
	if bad > 20 {
		t.Errorf("... %d words in all", bad)
	}
	var names []string
	for k, c := range missing {
		names = append(names, k+"("+strconv.Itoa(c)+")")
	}
	sort.Strings(names)
	t.Logf("%d random words; objdump knows but simrun leaves undefined: %s", n, strings.Join(names, " "))
}
