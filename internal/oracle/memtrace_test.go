package oracle

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"testing"
)

// encodeMemTrace writes a file as plugin/memtrace.c does.
func encodeMemTrace(acc []MemAccess, insns, total uint64, end bool) []byte {
	le := binary.LittleEndian
	b := []byte(memMagic)
	b = le.AppendUint32(b, memVersion)
	b = le.AppendUint32(b, memRecord)
	rec := func(n, pc, addr uint64, shift, flags byte) {
		b = le.AppendUint64(b, n)
		b = le.AppendUint64(b, pc)
		b = le.AppendUint64(b, addr)
		b = append(b, shift, flags, 0, 0, 0, 0, 0, 0)
	}
	for _, a := range acc {
		shift, flags := byte(0), byte(0)
		for 1<<shift < a.Size {
			shift++
		}
		if a.Store {
			flags = memStore
		}
		rec(a.N, a.PC, a.Addr, shift, flags)
	}
	if end {
		rec(^uint64(0), insns, total, 0, memEnd)
	}
	return b
}

var sampleAccesses = []MemAccess{
	{N: 1, PC: 0x400004, Addr: 0x400200, Size: 8},
	{N: 1, PC: 0x400004, Addr: 0x400208, Size: 8},
	{N: 5, PC: 0x400014, Addr: 0x7ffff000, Size: 16, Store: true},
	{N: 9, PC: 0x400024, Addr: 0x7ffff001, Size: 1, Store: true},
}

func TestParseMemTrace(t *testing.T) {
	good := encodeMemTrace(sampleAccesses, 12, 7, true)
	acc, insns, total, err := ParseMemTrace(good)
	if err != nil || insns != 12 || total != 7 || len(acc) != len(sampleAccesses) {
		t.Fatalf("good file: %v, %d insns, %d accesses, %v", err, insns, total, acc)
	}
	for i := range acc {
		if acc[i] != sampleAccesses[i] {
			t.Errorf("access %d: %+v, want %+v", i, acc[i], sampleAccesses[i])
		}
	}
	if acc, _, _, err := ParseMemTrace(encodeMemTrace(nil, 3, 0, true)); err != nil || len(acc) != 0 {
		t.Errorf("no accesses: %v %v", acc, err)
	}

	patch := func(off int, b ...byte) []byte {
		c := bytes.Clone(good)
		copy(c[off:], b)
		return c
	}
	rec := func(i, field int) int { return memHeader + i*memRecord + field }
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"empty", "no \"simrunMT\" header", nil},
		{"other magic", "header", patch(0, 'X')},
		{"version 2", "version 2", patch(8, 2)},
		{"record size", "with 33-byte records", patch(12, 33)},
		{"cut in a record", "truncated: 140 bytes", good[:len(good)-20]},
		{"no end record", "no end record after 4 accesses", good[:len(good)-memRecord]},
		{"header only", "no end record", good[:memHeader]},
		{"end record early", "is not the last", append(bytes.Clone(good), good[memHeader:memHeader+memRecord]...)},
		{"bad end index", "malformed end record", patch(rec(4, 0), 0)},
		{"too few accesses counted", "counts 3 accesses, the file holds 4", patch(rec(4, 16), 3)},
		{"too few instructions counted", "counts 9 instructions", patch(rec(4, 8), 9)},
		{"padding", "non-zero padding", patch(rec(2, 31), 1)},
		{"unknown flag", "flags 0x2", patch(rec(0, 25), 2)},
		{"size 32", "size shift 5", patch(rec(0, 24), 5)},
		{"out of order", "instruction 0 after 1", patch(rec(2, 0), 0)},
	} {
		if _, _, _, err := ParseMemTrace(tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// FuzzParseMemTrace: any input parses or fails cleanly, and what parses
// encodes back to the same bytes.
func FuzzParseMemTrace(f *testing.F) {
	f.Add(encodeMemTrace(sampleAccesses, 12, 7, true))
	f.Add(encodeMemTrace(nil, 0, 0, true))
	f.Add(encodeMemTrace(sampleAccesses, 12, 7, false))
	f.Fuzz(func(t *testing.T, data []byte) {
		acc, insns, total, err := ParseMemTrace(data)
		if err != nil {
			return
		}
		if got := encodeMemTrace(acc, insns, total, true); !bytes.Equal(got, data) {
			t.Fatalf("round trip: %x, want %x", got, data)
		}
	})
}

// progMem loads 5 from its code segment and stores it on the stack, then
// exits with it: two accesses, at the instructions of index 1 and 2.
func progMem(arch string) (p testProg, dataOff uint64) {
	a := &asm{arch: arch}
	if arch == "arm64" {
		a.w(a64adr(1, 0x14)) // 00 x1 = data
		a.w(0xf9400020)      // 04 ldr x0, [x1]
		a.w(0xf81f0fe0)      // 08 str x0, [sp, #-16]!
		a.w(a64movz(8, 94))  // 0c exit_group
		a.w(a64svc0)         // 10
		a.u64(5)             // 14 data
		return testProg{a.b, 5, []uint64{0, 4, 8, 0xc, 0x10}}, 0x14
	}
	a.raw(s390larl(1, 0x14)...)               // 00 r1 = data
	a.raw(s390lg2_0r1...)                     // 06 lg %r2,0(%r1)
	a.raw(0xe3, 0x20, 0xf0, 0x00, 0x00, 0x24) // 0c stg %r2,0(%r15)
	a.raw(s390svc(248)...)                    // 12 exit_group
	a.u64(5)                                  // 14 data
	return testProg{a.b, 4, []uint64{0, 6, 0xc, 0x12}}, 0x14
}

// TestMemTrace checks the plugin's records of a hand-made program against
// qemu's own trace of its registers.
func TestMemTrace(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			RequireMemTrace(t, arch)
			p, dataOff := progMem(arch)
			prog := writeELF(t, t.TempDir(), "mem", arch, p.code)
			recs, _, err := collect(t, prog, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != len(p.pcs) {
				t.Fatalf("traced %d instructions, want %d", len(recs), len(p.pcs))
			}
			sp := recs[2].R[31] - 16 // str x0, [sp, #-16]!
			if arch == "s390x" {
				sp = recs[2].R[15]
			}
			want := []MemAccess{
				{N: 1, PC: codeVA + p.pcs[1], Addr: codeVA + dataOff, Size: 8},
				{N: 2, PC: codeVA + p.pcs[2], Addr: sp, Size: 8, Store: true},
			}
			for _, limit := range []int{1, 2, 100} {
				res, err := MemTrace(context.Background(), prog, Options{}, limit)
				if err != nil {
					t.Fatal(err)
				}
				if res.Insns != p.insns || res.Total != 2 || res.Status != 5 {
					t.Errorf("limit %d: %d instructions, %d accesses, status %d", limit, res.Insns, res.Total, res.Status)
				}
				if n := min(limit, 2); len(res.Accesses) != n {
					t.Fatalf("limit %d: %v", limit, res.Accesses)
				}
				for i, a := range res.Accesses {
					if a != want[i] {
						t.Errorf("limit %d: access %d: %+v, want %+v", limit, i, a, want[i])
					}
				}
			}
			if _, err := MemTrace(context.Background(), prog, Options{}, 0); err == nil {
				t.Error("limit 0 accepted")
			}
			segv := writeELF(t, t.TempDir(), "segv", arch, progSegv(arch).code)
			if _, err := MemTrace(context.Background(), segv, Options{}, 10); err == nil || !strings.Contains(err.Error(), "killed by signal 11") {
				t.Errorf("a guest killed by SIGSEGV: %v", err)
			}
		})
	}
}
