package s390x

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/difftest"
	"simrun/internal/oracle"
	"simrun/programs"
)

// vstrCase is one case of testdata/vstr.s: V2, V3 and the vstrc controls
// for byte, halfword and word elements.
type vstrCase struct {
	v2, v3           vreg128
	ctlB, ctlH, ctlF vreg128
}

// vecElems builds a vector of elements of size es from the left; missing
// elements are zero.
func vecElems(es uint8, xs ...uint64) vreg128 {
	var v vreg128
	for i, x := range xs {
		setElem(&v, es, i, x)
	}
	return v
}

// ordinary returns n nonzero elements of size es that differ from each
// other; halfwords and words among them have zero bytes (0x4100, 0x00410000)
// so that a byte-wise zero search would go wrong.
func ordinary(es uint8, n int) []uint64 {
	xs := make([]uint64, n)
	for i := range xs {
		x := uint64(0x41 + i)
		switch {
		case es == 1 && i%2 == 0:
			x <<= 8
		case es == 2 && i%2 == 0:
			x <<= 16
		case es == 2:
			x |= 0x7f00_0000
		}
		xs[i] = x
	}
	return xs
}

// vstrCases are the edge cases of each element size (zero element first,
// before, at and after the match, no match, a match in the last element,
// every element matching, all zero, operands equal, a difference in
// either direction with the sign bit set) and seeded random cases drawn
// from a small alphabet with zeros, so that matches are common.
func vstrCases() []vstrCase {
	var cs []vstrCase
	add := func(v2, v3 vreg128, ctl ...vreg128) {
		c := vstrCase{v2: v2, v3: v3}
		if len(ctl) == 3 {
			c.ctlB, c.ctlH, c.ctlF = ctl[0], ctl[1], ctl[2]
		}
		cs = append(cs, c)
	}
	for es := uint8(0); es <= 2; es++ {
		n := nelem(es)
		base := ordinary(es, n)
		with := func(k int, x uint64) vreg128 { // base with element k set to x
			xs := append([]uint64(nil), base...)
			if k >= 0 {
				xs[k] = x
			}
			return vecElems(es, xs...)
		}
		other := make([]uint64, n) // differs from base everywhere
		for i := range other {
			other[i] = base[i] ^ 0x20
		}
		otherWith := func(k int) vreg128 { // other, but equal to base at k
			xs := append([]uint64(nil), other...)
			if k >= 0 {
				xs[k] = base[k]
			}
			return vecElems(es, xs...)
		}
		msb := uint64(1) << (8<<es - 1)
		add(with(-1, 0), otherWith(-1))           // no match, no zero
		add(with(-1, 0), otherWith(0))            // match in the first element
		add(with(-1, 0), otherWith(n/2))          // match in the middle
		add(with(-1, 0), otherWith(n-1))          // match in the last element
		add(with(0, 0), otherWith(n/2))           // zero first, match later
		add(with(2, 0), otherWith(n-1))           // zero before the match
		add(with(n-1, 0), otherWith(1))           // zero after the match
		add(with(3, 0), with(3, 0))               // equal, zero in both
		add(with(-1, 0), with(-1, 0))             // equal, no zero
		add(vreg128{}, vreg128{})                 // all zero
		add(with(n/2, msb), with(n/2, msb-1))     // differ: V2 high (unsigned)
		add(with(n/2, msb-1), with(n/2, msb))     // differ: V2 low
		add(with(n-1, 0), with(n-1, 1))           // zero against nonzero
		add(vecElems(es, base[n-1]), with(-1, 0)) // set: V3 holds the last element
	}
	// vstrc ranges: [a, e] (>= and <=), the single value 0 (= and =),
	// [0x80 up] (>= and anything), a pair that never holds (controls 0).
	// The bounds are in each element size, the controls in the leftmost
	// bits of each element (0x80 equal, 0x40 low, 0x20 high).
	for es := uint8(0); es <= 2; es++ {
		sh := uint(8<<es - 8)
		c := func(x uint64) uint64 { return x << sh }
		n := nelem(es)
		bounds := make([]uint64, n)
		ctl := make([]uint64, n)
		copy(bounds, []uint64{'a', 'e', 0x80 << sh, 0x80 << sh, 0, 0, 'q', 'r'})
		copy(ctl, []uint64{c(0xa0), c(0xc0), c(0xa0), c(0xe0), c(0x80), c(0x80), 0, 0})
		text := [3]vreg128{ // in, out, zero and the high range
			vecElems(0, 'x', 'a', 'c', 'e', 'f', 0x81, 0, 'q', 'b', 'a', 0, 'z', 'e', 'd', 'c', 'b'),
			vecElems(1, 'x', 'a', 0x8100, 'q', 0, 'e', 'b', 'z'),
			vecElems(2, 'c', 0x81000000, 0, 'z'),
		}[es]
		var ctls [3]vreg128
		ctls[es] = vecElems(es, ctl[:min(n, 8)]...)
		add(text, vecElems(es, bounds[:min(n, 8)]...), ctls[:]...)
		// Every outcome counts (0xe0) or only a difference (0x60).
		ctls[es] = vecElems(es, c(0xe0), c(0xe0), c(0x60), c(0x60))
		add(text, vecElems(es, 'c', 'c', 'c', 'c'), ctls[:]...)
	}
	r := rand.New(rand.NewPCG(1, 0x57c))
	alphabet := []byte{0, 0, 'a', 'b', 'c', 0x7f, 0x80, 0xff}
	randVec := func(pool []byte) vreg128 {
		var b [16]byte
		for i := range b {
			b[i] = pool[r.IntN(len(pool))]
		}
		return vreg128{beU64(b[:8]), beU64(b[8:])}
	}
	ctlBits := []byte{0x00, 0x20, 0x40, 0x60, 0x80, 0xa0, 0xc0, 0xe0, 0xff, 0x1f}
	for range 30 {
		add(randVec(alphabet), randVec(alphabet[1:]), randVec(ctlBits), randVec(ctlBits), randVec(ctlBits))
	}
	return cs
}

// vstrData is the data image of testdata/vstr.s.
func vstrData(cs []vstrCase) []byte {
	d := make([]byte, 16+96*len(cs))
	binary.BigEndian.PutUint64(d, uint64(len(cs)))
	for i, c := range cs {
		p := d[16+96*i:]
		for j, v := range []vreg128{c.v2, c.v3, c.ctlB, c.ctlH, c.ctlF} {
			binary.BigEndian.PutUint64(p[16*j:], v[0])
			binary.BigEndian.PutUint64(p[16*j+8:], v[1])
		}
	}
	return d
}

// assembleText assembles testdata/NAME.s with the s390x cross assembler
// and returns its .text bytes.
func assembleText(t *testing.T, name string) []byte {
	t.Helper()
	as := oracle.RequireTool(t, "s390x-linux-gnu-as", "binutils-s390x-linux-gnu")
	objcopy := oracle.RequireTool(t, "s390x-linux-gnu-objcopy", "binutils-s390x-linux-gnu")
	dir := t.TempDir()
	obj, bin := filepath.Join(dir, name+".o"), filepath.Join(dir, name+".bin")
	out, err := exec.Command(as, "-march=z13", "-o", obj, filepath.Join("testdata", name+".s")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(objcopy, "-O", "binary", "-j", ".text", obj, bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	code, err := os.ReadFile(bin)
	require.NoError(t, err)
	return code
}

// lockstepAsm assembles testdata/NAME.s, runs it with data at 0x410000
// under qemu and simrun, and requires the whole run in lockstep (up to
// limit instructions), exit status 0 and no fault.
func lockstepAsm(t *testing.T, name string, data []byte, limit int) {
	t.Helper()
	oracle.Require(t, "s390x")
	code := assembleText(t, name)
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, prog(code, data), 0o755))
	res, err := difftest.Compare(context.Background(), path, difftest.Options{Lockstep: limit, FP: true, CPU: programs.S390xQemuCPU})
	require.NoError(t, err)
	require.Empty(t, res.Fault)
	require.Equal(t, 0, res.Status)
	require.Equal(t, res.Insns, res.Compared)
	t.Logf("%d instructions compared", res.Compared)
}

// TestQemuVectorString runs testdata/vstr.s, every variant of vfae, vfee,
// vfene, vistr and vstrc on every case of vstrCases, in lockstep with qemu.
func TestQemuVectorString(t *testing.T) {
	lockstepAsm(t, "vstr", vstrData(vstrCases()), 1<<20)
}

// str16 is the vector of the 16 bytes of s (which must have 16).
func str16(s string) vreg128 {
	if len(s) != 16 {
		panic("str16: " + s)
	}
	return vreg128{beU64([]byte(s[:8])), beU64([]byte(s[8:]))}
}

// Encodings of the vector string instructions (registers below 16).
func vrrb(opc byte, v1, v2, v3, m4, m5 uint8) string {
	return hexBytes(0xe7, v1<<4|v2, v3<<4, m5<<4, m4<<4, opc)
}

func vistrEnc(v1, v2, m3, m5 uint8) string { return hexBytes(0xe7, v1<<4|v2, 0, m5<<4, m3<<4, 0x5c) }

func vstrcEnc(v1, v2, v3, v4, m5, m6 uint8) string {
	return hexBytes(0xe7, v1<<4|v2, v3<<4|m5, m6<<4, v4<<4, 0x8a)
}

func hexBytes(b ...byte) string { return fmt.Sprintf("%x", b) }

// TestVectorStringSemantics checks each instruction's variants against
// results worked out by hand from the Principles of Operation: V1 and
// the condition code (cc 3 before each; -1: kept, CS clear).
func TestVectorStringSemantics(t *testing.T) {
	const (
		vfee, vfene, vfae = 0x80, 0x81, 0x82
		b, h, f           = 0, 1, 2
		zs, cs, rt, inv   = strZS, strCS, strRT, strIN
	)
	text := str16("hello, world\x00xyz")
	index := func(i uint64) vreg128 { return vreg128{i, 0} }
	// vstrc ranges: pair 0 lowercase letters (>= 'a', <= 'z'), pair 1
	// digits, pairs 2-7 off (controls 0).
	lower := vecElems(0, 'a', 'z')
	lowerCtl := vecElems(0, 0xa0, 0xc0)
	digits := vecElems(0, 0, 0, '0', '9')
	digitsCtl := vecElems(0, 0, 0, 0xa0, 0xc0)
	words := vecElems(2, 0x41, 0, 0x42, 0x43)
	for _, tt := range []struct {
		name       string
		code       string
		v2, v3, v4 vreg128
		want       vreg128
		cc         int
	}{
		// vfee: the first element equal; with ZS the first zero if earlier.
		{"vfeeb first o", vrrb(vfee, 1, 2, 3, b, 0), text, str16("oooooooooooooooo"), vreg128{}, index(4), -1},
		{"vfeezbs o before the zero", vrrb(vfee, 1, 2, 3, b, zs|cs), text, str16("oooooooooooooooo"), vreg128{}, index(4), 2},
		{"vfeezbs x after the zero", vrrb(vfee, 1, 2, 3, b, zs|cs), text, str16("xxxxxxxxxxxxxxxx"), vreg128{}, index(12), 0},
		{"vfeebs x, no zero search", vrrb(vfee, 1, 2, 3, b, cs), text, str16("xxxxxxxxxxxxxxxx"), vreg128{}, index(13), 1},
		{"vfeebs no match", vrrb(vfee, 1, 2, 3, b, cs), text, str16("qqqqqqqqqqqqqqqq"), vreg128{}, index(16), 3},
		{"vfeezbs no match, zero", vrrb(vfee, 1, 2, 3, b, zs|cs), text, str16("qqqqqqqqqqqqqqqq"), vreg128{}, index(12), 0},
		{"vfeezbs the zero itself", vrrb(vfee, 1, 2, 3, b, zs|cs), text, vreg128{}, vreg128{}, index(12), 0},
		{"vfeezbs match in the last byte", vrrb(vfee, 1, 2, 3, b, zs|cs), str16("abcdefghijklmnop"), str16("zzzzzzzzzzzzzzzp"), vreg128{}, index(15), 1},
		{"vfeezhs halfword 'or'", vrrb(vfee, 1, 2, 3, h, zs|cs), text, str16("orororororororor"), vreg128{}, index(8), 1},
		{"vfeezhs \\0x is no zero halfword", vrrb(vfee, 1, 2, 3, h, zs|cs), text, str16("qqqqqqqqqqqqqqqq"), vreg128{}, index(16), 3},
		{"vfeezfs word", vrrb(vfee, 1, 2, 3, f, zs|cs), vecElems(f, 1, 2, 0, 4), vecElems(f, 9, 9, 9, 4), vreg128{}, index(8), 0},
		// vfene: the first difference, cc 1 V2 low, 2 V2 high.
		{"vfenezbs w > t", vrrb(vfene, 1, 2, 3, b, zs|cs), text, str16("hello, there\x00abc"), vreg128{}, index(7), 2},
		{"vfenezbs c < d", vrrb(vfene, 1, 2, 3, b, zs|cs), str16("abc\x00............"), str16("abd\x00............"), vreg128{}, index(2), 1},
		{"vfenezbs equal through the zero", vrrb(vfene, 1, 2, 3, b, zs|cs), text, text, vreg128{}, index(12), 0},
		{"vfenezbs zero first, difference after", vrrb(vfene, 1, 2, 3, b, zs|cs), str16("ab\x00x............"), str16("ab\x00y............"), vreg128{}, index(2), 0},
		{"vfenebs all equal", vrrb(vfene, 1, 2, 3, b, cs), text, text, vreg128{}, index(16), 3},
		{"vfenezbs zero against nonzero", vrrb(vfene, 1, 2, 3, b, zs|cs), str16("ab\x00x............"), str16("abcx............"), vreg128{}, index(2), 1},
		{"vfenehs unsigned", vrrb(vfene, 1, 2, 3, h, cs), vecElems(h, 1, 0x8000), vecElems(h, 1, 0x7fff), vreg128{}, index(2), 2},
		{"vfenef no cc", vrrb(vfene, 1, 2, 3, f, 0), vecElems(f, 1, 2, 3, 4), vecElems(f, 1, 2, 3, 5), vreg128{}, index(12), -1},
		// vfae: the first element equal to any of V3's.
		{"vfaezbs , or space", vrrb(vfae, 1, 2, 3, b, zs|cs), text, str16(",,,,,,,,        "), vreg128{}, index(5), 2},
		{"vfaebs IN: first not in helo", vrrb(vfae, 1, 2, 3, b, inv|cs), text, str16("helohelohelohelo"), vreg128{}, index(5), 1},
		{"vfaezbs IN: all in the set up to the zero", vrrb(vfae, 1, 2, 3, b, inv|zs|cs), str16("abab\x00bbbbbbbbbbb"), str16("ab\x00ababababababa"), vreg128{}, index(4), 0},
		{"vfaeb RT mask of b", vrrb(vfae, 1, 2, 3, b, rt), str16("abcabcabcabcabca"), str16("bbbbbbbbbbbbbbbb"), vreg128{}, vreg128{0x00ff0000ff0000ff, 0x0000ff0000ff0000}, -1},
		{"vfaehs RT IN", vrrb(vfae, 1, 2, 3, h, rt|inv|cs), vecElems(h, 1, 2, 3, 4, 5, 6, 7, 8), vecElems(h, 2, 4, 6, 8, 2, 4, 6, 8), vreg128{}, vreg128{0xffff0000ffff0000, 0xffff0000ffff0000}, 1},
		{"vfaezfs zero before the match", vrrb(vfae, 1, 2, 3, f, zs|cs), vecElems(f, 7, 0, 9, 1), vecElems(f, 1, 1, 1, 1), vreg128{}, index(4), 0},
		{"vfaezfs no match, no zero", vrrb(vfae, 1, 2, 3, f, zs|cs), vecElems(f, 7, 8, 9, 10), vecElems(f, 1, 1, 1, 1), vreg128{}, index(16), 3},
		// vistr: V2 up to its first zero element.
		{"vistrbs", vistrEnc(1, 2, b, cs), text, vreg128{}, vreg128{}, str16("hello, world\x00\x00\x00\x00"), 0},
		{"vistrbs no zero", vistrEnc(1, 2, b, cs), str16("abcdefghijklmnop"), vreg128{}, vreg128{}, str16("abcdefghijklmnop"), 3},
		{"vistrh no cc", vistrEnc(1, 2, h, 0), vecElems(h, 0x4100, 0x0041, 0, 5, 6, 7, 8, 9), vreg128{}, vreg128{}, vecElems(h, 0x4100, 0x0041), -1},
		{"vistrfs zero first", vistrEnc(1, 2, f, cs), vecElems(f, 0, 1, 2, 3), vreg128{}, vreg128{}, vreg128{}, 0},
		// vstrc: the first element in a range.
		{"vstrczbs first lowercase", vstrcEnc(1, 2, 3, 4, b, zs|cs), str16("Hello World 42\x00!"), lower, lowerCtl, index(1), 2},
		{"vstrczbs IN: first not lowercase", vstrcEnc(1, 2, 3, 4, b, inv|zs|cs), str16("Hello World 42\x00!"), lower, lowerCtl, index(0), 2},
		{"vstrcbs first digit", vstrcEnc(1, 2, 3, 4, b, cs), str16("Hello World 42\x00!"), digits, digitsCtl, index(12), 1},
		{"vstrczbs no digit before the zero", vstrcEnc(1, 2, 3, 4, b, zs|cs), str16("Hello\x00World 42.!"), digits, digitsCtl, index(5), 0},
		{"vstrcbs RT digits", vstrcEnc(1, 2, 3, 4, b, rt|cs), str16("a1b2c3d4e5f6g7h8"), digits, digitsCtl, vreg128{0x00ff00ff00ff00ff, 0x00ff00ff00ff00ff}, 1},
		{"vstrcbs no range", vstrcEnc(1, 2, 3, 4, b, cs), str16("a1b2c3d4e5f6g7h8"), digits, vreg128{}, index(16), 3},
		// Words: pair 0 is (= 0x41, anything not equal... ) ctl = and ≠.
		{"vstrcfs equal and not equal", vstrcEnc(1, 2, 3, 4, f, cs), vecElems(f, 0x40, 0x41, 0x42, 0x43), words, vecElems(f, 0x80<<24, 0x60<<24, 0x80<<24, 0xe0<<24), index(4), 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := machine(t, func(c *Core) {
				c.v[1] = vreg128{0xdead, 0xbeef}
				c.v[2], c.v[3], c.v[4] = tt.v2, tt.v3, tt.v4
				c.cc = 3
			}, nil, tt.code)
			require.Equal(t, tt.want, c.v[1], "V1")
			wantCC := uint8(3)
			if tt.cc >= 0 {
				wantCC = uint8(tt.cc)
			}
			require.Equal(t, wantCC, c.cc, "cc")
		})
	}
}

// TestVectorStringSpecification: element sizes above 2 and reserved M5
// bits are specification exceptions.
func TestVectorStringSpecification(t *testing.T) {
	for _, tt := range []struct {
		code string
		spec bool
	}{
		{vrrb(0x80, 1, 2, 3, 3, 0), true},   // vfee, es 3
		{vrrb(0x80, 1, 2, 3, 2, 3), false},  // vfeezfs
		{vrrb(0x80, 1, 2, 3, 0, 4), true},   // vfee with RT
		{vrrb(0x81, 1, 2, 3, 0, 8), true},   // vfene with IN
		{vrrb(0x82, 1, 2, 3, 0, 15), false}, // vfae: every flag
		{vrrb(0x82, 1, 2, 3, 4, 0), true},
		{vistrEnc(1, 2, 0, 2), true}, // vistr with ZS
		{vistrEnc(1, 2, 2, 1), false},
		{vistrEnc(1, 2, 3, 0), true},
		{vstrcEnc(1, 2, 3, 4, 2, 15), false},
		{vstrcEnc(1, 2, 3, 4, 3, 0), true},
	} {
		in := decode(mustHex(tt.code))
		require.Equal(t, tt.spec, in.op == opSpec, "%s decodes as %v", tt.code, in.op)
	}
}
