package oracle

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
)

// MemAccess is one guest data access qemu-user performed, as its plugin
// interface reports it (after the access, in program order).
type MemAccess struct {
	N     uint64 // index of the executing instruction in the run, from 0 (as Record.N)
	PC    uint64 // its address
	Addr  uint64 // the accessed virtual address
	Size  uint8  // bytes accessed: 1, 2, 4, 8 or 16
	Store bool
}

// MemTraceResult is what MemTrace returns: Result.Insns counts every
// executed instruction, Accesses holds the first accesses of the run and
// Total counts all of them.
type MemTraceResult struct {
	Result
	Accesses []MemAccess
	Total    uint64
}

// MaxMemTrace is the largest limit MemTrace takes (records of 32 bytes:
// a 512 MiB file).
const MaxMemTrace = 1 << 24

// MemTrace runs prog under qemu-user normally (as Count does: the same
// CPU model, sysroot, arguments, directory and empty environment) with
// simrun's memory trace plugin (plugin/memtrace.c, embedded, built with
// the host gcc on first use) and returns the run's first limit data
// accesses (1 <= limit <= MaxMemTrace). Options.FP, Max and Plugin are
// ignored. A guest killed by a signal is an error: qemu 7.2 then runs no
// exit hook and the trace has no end.
func MemTrace(ctx context.Context, prog string, opt Options, limit int) (*MemTraceResult, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("oracle: memory trace %s: "+format, append([]any{prog}, a...)...)
	}
	if limit < 1 || limit > MaxMemTrace {
		return nil, fail("limit %d out of range [1, %d]", limit, MaxMemTrace)
	}
	res, data, err := runPlugin(ctx, prog, opt, memPlugin, "", []string{"limit=" + strconv.Itoa(limit)}, fail)
	if err != nil {
		return nil, err
	}
	mr := &MemTraceResult{Result: *res}
	if data == nil {
		return mr, fail("plugin wrote no trace (exit status %d, signal %d)%s", res.Status, res.Signal, stderrNote(res.Stderr))
	}
	acc, insns, total, err := ParseMemTrace(data)
	if err != nil {
		if res.Signal != 0 {
			return mr, fail("guest killed by signal %d (qemu 7.2 runs no plugin exit hook then): %w", res.Signal, err)
		}
		return mr, fail("%w%s", err, stderrNote(res.Stderr))
	}
	if len(acc) != int(min(total, uint64(limit))) {
		return mr, fail("%d access records for %d accesses and limit %d", len(acc), total, limit)
	}
	mr.Accesses, mr.Insns, mr.Total = acc, insns, total
	return mr, nil
}

// The memory trace file (see plugin/memtrace.c): a header, then records
// of memRecord bytes, the last one the end record.
const (
	memMagic   = "simrunMT"
	memVersion = 1
	memHeader  = 16
	memRecord  = 32
	memStore   = 1
	memEnd     = 0x80
)

// ParseMemTrace parses the file plugin/memtrace.c writes: the accesses it
// holds, and from its end record the run's executed instructions and
// accesses. A file that is not one, is cut short or has no end record, or
// whose records are not in program order, gives an error naming the
// offset.
func ParseMemTrace(data []byte) (acc []MemAccess, insns, total uint64, err error) {
	if len(data) < memHeader || string(data[:8]) != memMagic {
		return nil, 0, 0, fmt.Errorf("memory trace: no %q header", memMagic)
	}
	le := binary.LittleEndian
	if v, rs := le.Uint32(data[8:]), le.Uint32(data[12:]); v != memVersion || rs != memRecord {
		return nil, 0, 0, fmt.Errorf("memory trace: version %d with %d-byte records, want version %d with %d", v, rs, memVersion, memRecord)
	}
	body := data[memHeader:]
	if len(body)%memRecord != 0 {
		return nil, 0, 0, fmt.Errorf("memory trace: truncated: %d bytes after the header, not a multiple of %d", len(body), memRecord)
	}
	n := len(body) / memRecord
	if n == 0 {
		return nil, 0, 0, fmt.Errorf("memory trace: truncated: no end record")
	}
	acc = make([]MemAccess, 0, n-1)
	for i := range n {
		r := body[i*memRecord : (i+1)*memRecord]
		off := memHeader + i*memRecord
		idx, pc, addr, shift, flags := le.Uint64(r), le.Uint64(r[8:]), le.Uint64(r[16:]), r[24], r[25]
		if !bytes.Equal(r[26:], make([]byte, 6)) {
			return nil, 0, 0, fmt.Errorf("memory trace: record at offset %d: non-zero padding", off)
		}
		if flags == memEnd {
			if i != n-1 {
				return nil, 0, 0, fmt.Errorf("memory trace: end record at offset %d is not the last", off)
			}
			if idx != ^uint64(0) || shift != 0 {
				return nil, 0, 0, fmt.Errorf("memory trace: malformed end record at offset %d", off)
			}
			insns, total = pc, addr
			if total < uint64(len(acc)) {
				return nil, 0, 0, fmt.Errorf("memory trace: end record counts %d accesses, the file holds %d", total, len(acc))
			}
			if len(acc) > 0 && acc[len(acc)-1].N >= insns {
				return nil, 0, 0, fmt.Errorf("memory trace: end record counts %d instructions, an access is of instruction %d", insns, acc[len(acc)-1].N)
			}
			return acc, insns, total, nil
		}
		if flags&^memStore != 0 || shift > 4 {
			return nil, 0, 0, fmt.Errorf("memory trace: record at offset %d: flags %#x, size shift %d", off, flags, shift)
		}
		if len(acc) > 0 && idx < acc[len(acc)-1].N {
			return nil, 0, 0, fmt.Errorf("memory trace: record at offset %d: instruction %d after %d", off, idx, acc[len(acc)-1].N)
		}
		acc = append(acc, MemAccess{N: idx, PC: pc, Addr: addr, Size: 1 << shift, Store: flags&memStore != 0})
	}
	return nil, 0, 0, fmt.Errorf("memory trace: truncated: no end record after %d accesses", len(acc))
}
