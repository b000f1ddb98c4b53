package oracle

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Tests of the log parser on recorded and synthetic logs; no qemu needed.

// readGz returns the contents of a gzip-compressed testdata file.
func readGz(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(z); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// goldenRec is one line of qemu-trace --fp output.
type goldenRec struct {
	N  uint64   `json:"n"`
	PC string   `json:"pc"`
	R  []string `json:"r"`
	F  uint8    `json:"f"`
	V  []string `json:"v"`
}

func hexs(v uint64) string { return fmt.Sprintf("0x%x", v) }

// hex128 formats a {high, low} pair like qemu-trace does.
func hex128(v [2]uint64) string {
	if v[0] == 0 {
		return hexs(v[1])
	}
	return fmt.Sprintf("0x%x%016x", v[0], v[1])
}

// checkGolden compares a record with a qemu-trace line.
func checkGolden(t *testing.T, r *Record, g *goldenRec, nreg int, fp bool) {
	t.Helper()
	if r.N != g.N || hexs(r.PC) != g.PC || r.F != g.F {
		t.Fatalf("record %d: n=%d pc=%#x f=%d, want n=%d pc=%s f=%d", g.N, r.N, r.PC, r.F, g.N, g.PC, g.F)
	}
	if len(g.R) != nreg {
		t.Fatalf("golden record %d has %d registers", g.N, len(g.R))
	}
	for i := 0; i < 32; i++ {
		want := "0x0"
		if i < nreg {
			want = g.R[i]
		}
		if hexs(r.R[i]) != want {
			t.Fatalf("record %d: R[%d]=%#x, want %s", g.N, i, r.R[i], want)
		}
	}
	for i := 0; i < 32; i++ {
		want := "0x0"
		if fp {
			want = g.V[i]
		}
		if hex128(r.V[i]) != want {
			t.Fatalf("record %d: V[%d]=%s, want %s", g.N, i, hex128(r.V[i]), want)
		}
	}
}

func readGolden(t *testing.T, name string) []goldenRec {
	var recs []goldenRec
	sc := bufio.NewScanner(bytes.NewReader(readGz(t, name)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var g goldenRec
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, g)
	}
	return recs
}

// TestParseGolden parses 1500-record windows of recorded qemu 7.2 logs
// (-d exec,cpu,nochain,fpu) of the oracle's vecloops programs and compares
// every record with the output of qemu-trace --fp for the same run: the
// qemu oracle suite's per-instruction trace tool, kept beside the
// repository in ../shared/oracle (testdata/README says how they were made).
func TestParseGolden(t *testing.T) {
	for _, tc := range []struct {
		arch string
		nreg int
	}{{"arm64", 32}, {"s390x", 16}} {
		t.Run(tc.arch, func(t *testing.T) {
			log := readGz(t, tc.arch+"-vecloops.log.gz")
			golden := readGolden(t, tc.arch+"-vecloops.jsonl.gz")
			for _, fp := range []bool{true, false} {
				i := 0
				n, err := Parse(bytes.NewReader(log), tc.arch, Options{FP: fp}, func(r *Record) error {
					if i >= len(golden) {
						t.Fatalf("more records than the %d golden ones", len(golden))
					}
					checkGolden(t, r, &golden[i], tc.nreg, fp)
					i++
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if n != uint64(len(golden)) || i != len(golden) {
					t.Fatalf("fp=%v: %d records (%d delivered), want %d", fp, n, i, len(golden))
				}
			}
			// Max: delivery stops, counting goes on
			i := 0
			n, err := Parse(bytes.NewReader(log), tc.arch, Options{FP: true, Max: 10}, func(r *Record) error {
				i++
				return nil
			})
			if err != nil || n != uint64(len(golden)) || i != 10 {
				t.Fatalf("Max 10: n=%d delivered=%d err=%v", n, i, err)
			}
		})
	}
}

// Synthetic logs in qemu 7.2's format.

func fakeARM64(b *strings.Builder, pc, x0 uint64, fp bool) {
	fmt.Fprintf(b, "Trace 0: 0x7f0000000100 [0000000000009201/%016x/00000001/00000201] sym\n", pc)
	fmt.Fprintf(b, " PC=%016x ", pc)
	for i := 0; i < 31; i++ {
		v := uint64(i) * 0x1111
		if i == 0 {
			v = x0
		}
		sep := " "
		if (i+2)%3 == 0 {
			sep = "\n"
		}
		fmt.Fprintf(b, "X%02d=%016x%s", i, v, sep)
	}
	fmt.Fprintf(b, " SP=%016x\n", uint64(0x5500800e60))
	fmt.Fprintf(b, "PSTATE=%08x -Z-C EL0t  BTYPE=0", uint32(0x60000000))
	if !fp {
		b.WriteString("\n")
		return
	}
	fmt.Fprintf(b, "     FPCR=00000000 FPSR=%08x\n", 0x08000000|uint32(x0)<<4) // QC and flags from x0
	for i := 0; i < 32; i++ {
		sep := " "
		if i&1 == 1 {
			sep = "\n"
		}
		fmt.Fprintf(b, "Q%02d=%016x:%016x%s", i, uint64(i)<<56|1, uint64(i)+2, sep)
	}
}

// fakeS390X writes a record; vec: 0 = no FP registers, 'V' = the vector
// registers, 'F' = f0..f15 only (CPU without the vector facility).
func fakeS390X(b *strings.Builder, pc uint64, cc int, ccop string, vec byte) {
	fmt.Fprintf(b, "Trace 0: 0x7f0000000100 [0000000000000000/%016x/60000003/00000201] sym\n", pc)
	mask := uint64(0x0000000180000000) | uint64(cc)<<44
	if ccop != "" {
		fmt.Fprintf(b, "PSW=mask %016x addr %016x cc %15s\n", mask, pc, ccop)
	} else {
		fmt.Fprintf(b, "PSW=mask %016x addr %016x cc %02x\n", mask, pc, cc)
	}
	for i := 0; i < 16; i++ {
		sep := " "
		if i%4 == 3 {
			sep = "\n"
		}
		fmt.Fprintf(b, "R%02d=%016x%s", i, uint64(i)<<32|uint64(i), sep)
	}
	switch vec {
	case 'V':
		for i := 0; i < 32; i++ {
			sep := " "
			if i%2 == 1 {
				sep = "\n"
			}
			fmt.Fprintf(b, "V%02d=%016x%016x%s", i, uint64(i)<<48|7, uint64(i)+9, sep)
		}
	case 'F':
		for i := 0; i < 16; i++ {
			sep := " "
			if i%4 == 3 {
				sep = "\n"
			}
			fmt.Fprintf(b, "F%02d=%016x%s", i, uint64(i)<<52|5, sep)
		}
	}
	b.WriteString("\n")
}

func parseAll(arch, log string, opt Options) ([]Record, uint64, error) {
	var recs []Record
	n, err := Parse(strings.NewReader(log), arch, opt, func(r *Record) error {
		recs = append(recs, *r)
		return nil
	})
	return recs, n, err
}

func wantFormatError(t *testing.T, err error, lost bool, substr string) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v, want a *FormatError", err)
	}
	if fe.Lost != lost || !strings.Contains(fe.Msg, substr) {
		t.Fatalf("error %v (Lost=%v), want Lost=%v and %q", err, fe.Lost, lost, substr)
	}
}

func TestParseSyntheticARM64(t *testing.T) {
	var b strings.Builder
	fakeARM64(&b, 0x1000, 1, true)
	b.WriteString("some unrelated line\n")
	fakeARM64(&b, 0x1004, 2, true)
	recs, n, err := parseAll("arm64", b.String(), Options{FP: true})
	if err != nil || n != 2 || len(recs) != 2 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	r := recs[1]
	if r.N != 1 || r.PC != 0x1004 || r.R[0] != 2 || r.R[30] != 30*0x1111 || r.R[31] != 0x5500800e60 || r.F != 6 {
		t.Fatalf("record %+v", r)
	}
	if r.FPSR != 0x08000020 {
		t.Fatalf("FPSR = %#x, want 0x08000020", r.FPSR)
	}
	if r.V[5] != [2]uint64{5<<56 | 1, 7} {
		t.Fatalf("V[5] = %#x, want {high, low} = {0x0500000000000001, 7}", r.V[5])
	}

	// A block logged but not executed ("Stopped execution") is dropped.
	b.Reset()
	fakeARM64(&b, 0x1000, 1, false)
	fakeARM64(&b, 0x1004, 2, false)
	b.WriteString("Stopped execution of TB chain before 0x7f0000000100 [0000000000001004] sym\n")
	fakeARM64(&b, 0x2000, 3, false)
	fakeARM64(&b, 0x1004, 4, false)
	recs, n, err = parseAll("arm64", b.String(), Options{})
	if err != nil || n != 3 || recs[1].PC != 0x2000 || recs[2].PC != 0x1004 || recs[2].N != 2 {
		t.Fatalf("n=%d err=%v recs=%v", n, err, recs)
	}

	// "Stopped execution" of a block other than the pending one.
	b.Reset()
	fakeARM64(&b, 0x1000, 1, false)
	b.WriteString("Stopped execution of TB chain before 0x7f0000000100 [0000000000001234] sym\n")
	_, _, err = parseAll("arm64", b.String(), Options{})
	wantFormatError(t, err, true, "Stopped")

	// A lost "Trace" line: two dumps in one record.
	b.Reset()
	for i := 0; i < 20; i++ {
		fakeARM64(&b, 0x1000+4*uint64(i), 1, false)
	}
	s := b.String()
	k := strings.LastIndex(s, "Trace ")
	s = s[:k] + s[k+strings.IndexByte(s[k:], '\n')+1:]
	_, _, err = parseAll("arm64", s, Options{})
	wantFormatError(t, err, true, "twice")
	// ... also noticed when the records are not parsed (beyond Max)
	_, _, err = parseAll("arm64", s, Options{Max: 1})
	wantFormatError(t, err, true, "register dumps")

	// The first record's Trace pc disagrees with the dump: format error.
	b.Reset()
	fakeARM64(&b, 0x1000, 1, false)
	s = strings.Replace(b.String(), "/0000000000001000/", "/0000000000001008/", 1)
	_, _, err = parseAll("arm64", s, Options{})
	wantFormatError(t, err, false, "differs")

	// Incomplete dump (e.g. another qemu version or -d option).
	b.Reset()
	fakeARM64(&b, 0x1000, 1, false)
	s = strings.Replace(b.String(), "PSTATE=", "PSR=", 1)
	_, _, err = parseAll("arm64", s, Options{})
	wantFormatError(t, err, false, "incomplete")
	// FP wanted but not logged
	_, _, err = parseAll("arm64", b.String(), Options{FP: true})
	wantFormatError(t, err, false, "FP")

	// A second thread.
	b.Reset()
	fakeARM64(&b, 0x1000, 1, false)
	s = b.String() + strings.Replace(b.String(), "Trace 0:", "Trace 1:", 1)
	_, _, err = parseAll("arm64", s, Options{})
	wantFormatError(t, err, false, "thread")

	// A symbol name longer than the read buffer.
	b.Reset()
	fakeARM64(&b, 0x1000, 1, false)
	s = strings.Replace(b.String(), "] sym\n", "] "+strings.Repeat("x", 3<<20)+"\n", 1)
	recs, n, err = parseAll("arm64", s+s, Options{})
	if err != nil || n != 2 || recs[1].PC != 0x1000 {
		t.Fatalf("long symbol: n=%d err=%v", n, err)
	}
}

func TestParseSyntheticS390X(t *testing.T) {
	var b strings.Builder
	fakeS390X(&b, 0x1000, 2, "CC_OP_ADD_64", 'V') // lazy cc_op text
	fakeS390X(&b, 0x1004, 3, "", 'V')             // constant cc
	fakeS390X(&b, 0x1008, 1, "", 'F')             // no vector facility
	recs, n, err := parseAll("s390x", b.String(), Options{FP: true})
	if err != nil || n != 3 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	if recs[0].F != 2 || recs[1].F != 3 || recs[2].F != 1 {
		t.Fatalf("cc %d %d %d, want 2 3 1", recs[0].F, recs[1].F, recs[2].F)
	}
	r := recs[1]
	if r.PC != 0x1004 || r.R[15] != 15<<32|15 || r.R[16] != 0 {
		t.Fatalf("record %+v", r)
	}
	if r.V[3] != [2]uint64{3<<48 | 7, 12} {
		t.Fatalf("V[3] = %#x, want {high, low} = {0x0003000000000007, 12}", r.V[3])
	}
	r = recs[2]
	if r.V[3] != [2]uint64{3<<52 | 5, 0} || r.V[19] != [2]uint64{} {
		t.Fatalf("F format: V[3] = %#x V[19] = %#x, want f3 in the high half and no v16..v31", r.V[3], r.V[19])
	}
	// without FP the vector registers are skipped
	recs, _, err = parseAll("s390x", b.String(), Options{})
	if err != nil || recs[1].V[3] != [2]uint64{} {
		t.Fatalf("err=%v V[3]=%#x", err, recs[1].V[3])
	}
	// a lost Trace line later in the log
	b.Reset()
	for i := 0; i < 20; i++ {
		fakeS390X(&b, 0x1000+4*uint64(i), 0, "", 0)
	}
	s := b.String()
	k := strings.LastIndex(s, "Trace ")
	s = s[:k] + s[k+strings.IndexByte(s[k:], '\n')+1:]
	_, _, err = parseAll("s390x", s, Options{})
	wantFormatError(t, err, true, "PSW twice")
}

func TestParseCallbackError(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 5; i++ {
		fakeS390X(&b, 0x1000+4*uint64(i), 0, "", 0)
	}
	stop := errors.New("stop")
	calls := 0
	_, err := Parse(strings.NewReader(b.String()), "s390x", Options{}, func(r *Record) error {
		calls++
		if r.N == 2 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 3 {
		t.Fatalf("err=%v calls=%d, want the callback's error after 3 calls", err, calls)
	}
}

// BenchmarkParse measures the parser alone on the recorded logs, with and
// without the FP/vector registers (for "nofp" the Q/V lines are removed
// from the log, as qemu would not print them).
func BenchmarkParse(b *testing.B) {
	for _, arch := range []string{"arm64", "s390x"} {
		log := readGz(b, arch+"-vecloops.log.gz")
		var nofp bytes.Buffer
		for _, l := range bytes.SplitAfter(log, []byte("\n")) {
			if len(l) > 0 && (l[0] == 'Q' || l[0] == 'V') {
				continue
			}
			nofp.Write(l)
		}
		for _, tc := range []struct {
			name string
			fp   bool
			log  []byte
		}{{"fp", true, log}, {"nofp", false, nofp.Bytes()}} {
			b.Run(arch+"/"+tc.name, func(b *testing.B) {
				b.SetBytes(int64(len(tc.log)))
				var recs uint64
				for b.Loop() {
					n, err := Parse(bytes.NewReader(tc.log), arch, Options{FP: tc.fp}, func(*Record) error { return nil })
					if err != nil {
						b.Fatal(err)
					}
					recs += n
				}
				b.ReportMetric(float64(recs)/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(float64(len(tc.log))/float64(recs/uint64(b.N)), "bytes/record")
			})
		}
	}
}

func TestParseHex(t *testing.T) {
	for _, tc := range []struct {
		in  string
		v   uint64
		end int
		ok  bool
	}{
		{"0123456789abcdef", 0x0123456789abcdef, 16, true},
		{"fedcba9876543210 X", 0xfedcba9876543210, 16, true},
		{"00000000004000d0:0000", 0x4000d0, 16, true},
		{"0123456789ABCDEF", 0x0123456789abcdef, 16, true},
		{"40000000 -Z--", 0x40000000, 8, true},
		{"0", 0, 1, true},
		{"9/", 9, 1, true},
		{"g", 0, 0, false},
		{"", 0, 0, false},
		{"0123456789abcdef0123", 0x0123456789abcdef, 16, true},
		{"0123456:89abcdef", 0x0123456, 7, true},
		{"0123456789abcde\xb0", 0x0123456789abcde, 15, true},
		{"`abcdefg/@AFG0123", 0, 0, false},
	} {
		v, end, ok := parseHex([]byte(tc.in), 0)
		if v != tc.v || end != tc.end || ok != tc.ok {
			t.Errorf("parseHex(%q) = %#x, %d, %v; want %#x, %d, %v", tc.in, v, end, ok, tc.v, tc.end, tc.ok)
		}
	}
	// every byte value in every position of a 16-digit field
	for pos := 0; pos < 16; pos++ {
		for c := 0; c < 256; c++ {
			b := []byte("0123456789abcdef")
			b[pos] = byte(c)
			v, end, ok := parseHex(b, 0)
			var wv uint64
			var wend int
			for wend = 0; wend < 16 && hexTab[b[wend]] != 0xff; wend++ {
				wv = wv<<4 | uint64(hexTab[b[wend]])
			}
			if v != wv || end != wend || ok != (wend > 0) {
				t.Fatalf("parseHex(%q) = %#x, %d, %v; want %#x, %d", b, v, end, ok, wv, wend)
			}
		}
	}
}
