package oracle

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// This file holds the parser of qemu's "-d exec,cpu[,fpu],nochain" log.
//
// With -singlestep and nochain every executed guest instruction produces one
// block in the log, e.g. for arm64:
//
//	Trace 0: 0x7f3774000100 [0000000000009201/00000000004000d0/00000001/00000201] _start
//	 PC=00000000004000d0 X00=0000000000000000 X01=0000000000000000
//	X02=... X03=... X04=...            (three per line up to X28)
//	X29=0000000000000000 X30=0000000000000000  SP=0000005500800e60
//	PSTATE=40000000 -Z-- EL0t  BTYPE=0     FPCR=00000000 FPSR=00000000   (FPCR/FPSR only with fpu)
//	Q00=HIGH64:LOW64 Q01=HIGH64:LOW64  (with fpu, two per line up to Q31)
//
// and for s390x:
//
//	Trace 0: 0x7fd390000100 [0000000000000000/00000000010000d8/60000003/00000201] _start
//	PSW=mask 0000000180000000 addr 00000000010000d8 cc 00
//	R00=... R01=... R02=... R03=...    (four per line up to R15)
//	V00=32HEXDIGITS V01=32HEXDIGITS    (with fpu, two per line; F00..F15 with 16
//	                                    digits each if the CPU has no vector facility)
//	(empty line)
//
// The "Trace" line comes first, the state dump (the state *before* the
// instruction) follows.  A record is complete when the next "Trace" line or
// the end of the log is reached.  A line "Stopped execution of TB chain
// before ..." means that the block just logged was not executed after all
// (qemu left it at its entry check, e.g. to deliver an asynchronous signal);
// that record is dropped, the block is logged again when it really runs.

// Parse reads a qemu log in the format produced by Trace (qemu-user 7.2,
// -singlestep -d exec,cpu,nochain[,fpu]) from r and calls fn for every
// record, in order.  arch is "arm64" or "s390x"; opt.FP and opt.Max have the
// same meaning as for Trace (other fields are ignored).  It returns the
// number of records (executed instructions) in the log, including those
// beyond opt.Max.  The *Record passed to fn is reused for the next record:
// copy it if it is needed after fn returns.  An error returned by fn ends
// parsing and is returned unchanged (errors.Is works on it).
func Parse(r io.Reader, arch string, opt Options, fn func(*Record) error) (uint64, error) {
	p, err := newParser(arch, opt, fn)
	if err != nil {
		return 0, err
	}
	err = p.run(r)
	var fe fnError
	if errors.As(err, &fe) {
		err = fe.err
	}
	return p.n, err
}

// fnError wraps an error returned by the caller's callback so that Trace can
// tell it from parse and I/O errors.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }
func (e fnError) Unwrap() error { return e.err }

// FormatError reports a qemu log that does not look as expected: another
// qemu version, a changed dump format, or flags other than those Trace uses.
type FormatError struct {
	Record uint64 // index of the record being parsed
	Msg    string
	Line   string // the offending line (may be empty)
	// Lost marks an inconsistency that points to log data lost by qemu
	// rather than to a different format: qemu's host signal handlers do
	// not restart system calls, so a host signal (the guest's timer
	// signals, SIGCHLD, ...) that arrives while qemu is blocked writing to
	// a full FIFO makes the write fail, and stdio drops that piece of the
	// log.  Only guests with asynchronous signals are affected; running
	// them again may succeed.
	Lost bool
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("unexpected qemu log format at record %d: %s", e.Record, e.Msg)
	if e.Lost {
		s = fmt.Sprintf("inconsistent qemu log at record %d: %s", e.Record, e.Msg)
	}
	if e.Line != "" {
		s += fmt.Sprintf(" (line %q)", e.Line)
	}
	return s
}

const (
	archARM64 = iota + 1
	archS390X
)

// Bits of parser.have: general registers 0-31, then these.
const (
	havePC    = 1 << 32
	haveFlags = 1 << 33
)

// checkTracePC is how many leading records may fail the comparison of the
// "Trace" line's pc with the dumped pc as "unexpected log format"; later
// mismatches are reported as lost log data.
const checkTracePC = 16

type parser struct {
	arch    int
	fp      bool
	max     uint64 // 0 = no limit
	fn      func(*Record) error
	rec     Record
	n       uint64 // records completed so far
	pending bool   // a Trace line was seen, its record is being collected
	parse   bool   // registers of the pending record are wanted
	tracePC uint64 // pc from the pending record's Trace line
	have    uint64 // fields seen for the pending record
	vhave   uint32 // vector registers seen for the pending record
	pcLines int    // dump header lines (" PC=" / "PSW=") of a skipped record
	needGPR uint64 // value of have once a record is complete
	needV   uint32
}

func newParser(arch string, opt Options, fn func(*Record) error) (*parser, error) {
	p := &parser{fp: opt.FP, fn: fn, needV: 1<<32 - 1}
	if opt.Max > 0 {
		p.max = uint64(opt.Max)
	}
	switch arch {
	case "arm64":
		p.arch = archARM64
		p.needGPR = 1<<32 - 1 | havePC | haveFlags
	case "s390x":
		p.arch = archS390X
		p.needGPR = 1<<16 - 1 | havePC | haveFlags
	default:
		return nil, fmt.Errorf("oracle: unknown arch %q (want arm64 or s390x)", arch)
	}
	return p, nil
}

func (p *parser) formatErr(msg string, line []byte) error {
	l := string(bytes.TrimRight(line, "\n"))
	if len(l) > 200 {
		l = l[:200] + "..."
	}
	return &FormatError{Record: p.n, Msg: msg, Line: l}
}

// lostErr reports a log that is inconsistent in a way a changed format
// would not explain (see FormatError.Lost).
func (p *parser) lostErr(msg string, line []byte) error {
	err := p.formatErr(msg+"; qemu probably lost log data (a log write interrupted by an asynchronous "+
		"signal, e.g. a guest timer, is dropped by qemu), the trace cannot be trusted", line)
	err.(*FormatError).Lost = true
	return err
}

// run parses the whole log.
func (p *parser) run(r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<20)
	skip := false // discarding the rest of an over-long line
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 && !skip {
			if e := p.line(line); e != nil {
				return e
			}
		}
		switch err {
		case nil:
			skip = false
		case bufio.ErrBufferFull:
			// Only "Trace" lines with absurdly long symbol names get here;
			// their beginning has been handled, drop the rest.
			skip = true
		case io.EOF:
			return p.finish()
		default:
			return err
		}
	}
}

var (
	tracePrefix   = []byte("Trace ")
	stoppedPrefix = []byte("Stopped execution of TB chain before ")
	pswPrefix     = []byte("PSW=mask ")
	pcPrefix      = []byte(" PC=")
)

func (p *parser) line(l []byte) error {
	switch l[0] {
	case 'T':
		if bytes.HasPrefix(l, tracePrefix) {
			return p.trace(l)
		}
	case 'S':
		if bytes.HasPrefix(l, stoppedPrefix) {
			return p.stopped(l)
		}
	}
	if !p.parse {
		if p.pending && (p.arch == archARM64 && bytes.HasPrefix(l, pcPrefix) ||
			p.arch == archS390X && bytes.HasPrefix(l, pswPrefix)) {
			p.pcLines++
		}
		return nil
	}
	if p.arch == archS390X && l[0] == 'P' && bytes.HasPrefix(l, pswPrefix) {
		return p.psw(l)
	}
	return p.regs(l)
}

// stopped handles "Stopped execution of TB chain before HOSTPTR [PC] SYMBOL":
// the block just logged was not executed.
func (p *parser) stopped(l []byte) error {
	b := bytes.IndexByte(l, '[')
	if b < 0 {
		return p.formatErr(`bad "Stopped execution" line`, l)
	}
	pc, end, ok := parseHex(l, b+1)
	if !ok || end >= len(l) || l[end] != ']' {
		return p.formatErr(`bad "Stopped execution" line`, l)
	}
	if !p.pending || pc != p.tracePC {
		return p.lostErr(fmt.Sprintf(`"Stopped execution" at pc %#x does not follow the block logged last`, pc), l)
	}
	p.pending = false
	return nil
}

// trace handles "Trace CPU: HOSTPTR [CSBASE/PC/FLAGS/CFLAGS] SYMBOL".
func (p *parser) trace(l []byte) error {
	if err := p.finish(); err != nil {
		return err
	}
	// cpu index: decimal after "Trace "
	i := len(tracePrefix)
	cpu := 0
	for ; i < len(l) && l[i] >= '0' && l[i] <= '9'; i++ {
		cpu = cpu*10 + int(l[i]-'0')
	}
	if i == len(tracePrefix) || i >= len(l) || l[i] != ':' {
		return p.formatErr(`bad "Trace" line`, l)
	}
	if cpu != 0 {
		return p.formatErr(fmt.Sprintf("guest runs a second thread (cpu %d); multi-threaded programs cannot be traced", cpu), l)
	}
	b := bytes.IndexByte(l[i:], '[')
	if b < 0 {
		return p.formatErr(`no "[" in "Trace" line`, l)
	}
	b += i + 1
	s := bytes.IndexByte(l[b:], '/')
	if s < 0 {
		return p.formatErr(`no "/" in "Trace" line`, l)
	}
	v, end, ok := parseHex(l, b+s+1)
	if !ok || end >= len(l) || l[end] != '/' {
		return p.formatErr(`bad pc in "Trace" line`, l)
	}
	p.tracePC = v
	p.pending = true
	p.have, p.vhave, p.pcLines = 0, 0, 0
	p.parse = p.max == 0 || p.n < p.max
	return nil
}

// finish delivers the pending record, if any.
func (p *parser) finish() error {
	if !p.pending {
		return nil
	}
	p.pending = false
	if !p.parse {
		if p.pcLines != 1 {
			return p.lostErr(fmt.Sprintf("%d register dumps after one \"Trace\" line", p.pcLines), nil)
		}
		p.n++
		return nil
	}
	if p.have != p.needGPR {
		msg := fmt.Sprintf("incomplete register dump (fields seen %#x, want %#x)", p.have, p.needGPR)
		if p.n < checkTracePC {
			return p.formatErr(msg+"; is this qemu 7.2 with -d exec,cpu,nochain?", nil)
		}
		return p.lostErr(msg, nil)
	}
	if p.fp && p.vhave != p.needV {
		msg := fmt.Sprintf("incomplete FP/vector register dump (registers seen %#x)", p.vhave)
		if p.n < checkTracePC {
			return p.formatErr(msg, nil)
		}
		return p.lostErr(msg, nil)
	}
	if p.tracePC != p.rec.PC {
		msg := fmt.Sprintf(`pc %#x in the "Trace" line differs from the dumped pc %#x`, p.tracePC, p.rec.PC)
		if p.n < checkTracePC {
			return p.formatErr(msg, nil)
		}
		return p.lostErr(msg, nil)
	}
	p.rec.N = p.n
	p.n++
	if err := p.fn(&p.rec); err != nil {
		return fnError{err}
	}
	return nil
}

// dup reports a field that appears twice in one record's dump.
func (p *parser) dup(name []byte, l []byte) error {
	return p.lostErr(fmt.Sprintf("%s twice in one register dump", name), l)
}

// psw handles the s390x line "PSW=mask MASK addr ADDR cc CCOP".
func (p *parser) psw(l []byte) error {
	mask, end, ok := parseHex(l, len(pswPrefix))
	if !ok || !bytes.HasPrefix(l[end:], []byte(" addr ")) {
		return p.formatErr("bad PSW line", l)
	}
	addr, _, ok := parseHex(l, end+len(" addr "))
	if !ok {
		return p.formatErr("bad PSW address", l)
	}
	// The text after "cc" is qemu's lazy cc_op unless the cc is a
	// constant; the real condition code is PSW bits 18-19 of the mask
	// (s390_cpu_get_psw_mask computes it for the dump).
	if p.have&havePC != 0 {
		return p.dup([]byte("PSW"), l)
	}
	p.rec.PC = addr
	p.rec.F = uint8(mask>>44) & 3
	p.have |= havePC | haveFlags
	return nil
}

// regs handles a line of NAME=HEX fields.
func (p *parser) regs(l []byte) error {
	i := 0
	for {
		// next word; fields are NAME=VALUE, other words are skipped
		for i < len(l) && l[i] == ' ' {
			i++
		}
		if i >= len(l) || l[i] == '\n' {
			return nil
		}
		eq := i
		for eq < len(l) && l[eq] != '=' && l[eq] != ' ' && l[eq] != '\n' {
			eq++
		}
		if eq >= len(l) || l[eq] != '=' {
			i = eq
			continue
		}
		name := l[i:eq]
		v, end, ok := parseHex(l, eq+1)
		if !ok {
			return p.formatErr(fmt.Sprintf("bad value for %s", name), l)
		}
		i = end
		var bit uint64  // in p.have
		var vbit uint32 // in p.vhave
		switch {
		case len(name) == 3 && isDigit(name[1]) && isDigit(name[2]):
			idx := int(name[1]-'0')*10 + int(name[2]-'0')
			switch {
			case p.arch == archARM64 && name[0] == 'X' && idx < 31,
				p.arch == archS390X && name[0] == 'R' && idx < 16:
				bit = 1 << idx
				p.rec.R[idx] = v
			case !p.fp:
			case p.arch == archARM64 && name[0] == 'Q' && idx < 32:
				// Q%02d=HIGH64:LOW64
				if end-eq-1 != 16 || end >= len(l) || l[end] != ':' {
					return p.formatErr("bad Q register", l)
				}
				lo, e2, ok := parseHex(l, end+1)
				if !ok || e2-end-1 != 16 {
					return p.formatErr("bad Q register", l)
				}
				vbit = 1 << idx
				p.rec.V[idx] = [2]uint64{v, lo}
				i = e2
			case p.arch == archS390X && name[0] == 'V' && idx < 32:
				// V%02d=HIGH64LOW64: 32 digits without separator;
				// parseHex stopped after 16.
				lo, e2, ok := parseHex(l, end)
				if end-eq-1 != 16 || !ok || e2-end != 16 {
					return p.formatErr("bad V register", l)
				}
				vbit = 1 << idx
				p.rec.V[idx] = [2]uint64{v, lo}
				i = e2
			case p.arch == archS390X && name[0] == 'F' && idx < 16:
				// No vector facility: fN is the high half of vN, the
				// rest does not exist.
				vbit = 1<<idx | 1<<(idx+16)
				p.rec.V[idx] = [2]uint64{v, 0}
				p.rec.V[idx+16] = [2]uint64{}
			}
		case p.arch != archARM64:
		case string(name) == "PC":
			bit = havePC
			p.rec.PC = v
		case string(name) == "SP":
			bit = 1 << 31
			p.rec.R[31] = v
		case string(name) == "PSTATE":
			bit = haveFlags
			p.rec.F = uint8(v>>28) & 0xf
		case string(name) == "FPSR":
			p.rec.FPSR = uint32(v)
		}
		if p.have&bit != 0 || p.vhave&vbit != 0 {
			return p.dup(name, l)
		}
		p.have |= bit
		p.vhave |= vbit
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// hexTab maps an ASCII byte to its hex digit value, 0xff for non-digits.
var hexTab = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return
}()

// parseHex parses up to 16 hex digits of l starting at i.  It returns the
// value, the index after the last digit, and whether there was a digit.
func parseHex(l []byte, i int) (v uint64, end int, ok bool) {
	if i+16 <= len(l) {
		// common case: a full %016x field, converted 8 digits at a time
		hi, ok1 := hex8(binary.LittleEndian.Uint64(l[i:]))
		lo, ok2 := hex8(binary.LittleEndian.Uint64(l[i+8:]))
		if ok1 && ok2 {
			return hi<<32 | lo, i + 16, true
		}
	}
	start := i
	for ; i < len(l) && i-start < 16; i++ {
		d := hexTab[l[i]]
		if d == 0xff {
			break
		}
		v = v<<4 | uint64(d)
	}
	return v, i, i > start
}

// hex8 converts 8 ASCII digits 0-9a-f, loaded little-endian (the first,
// most significant digit in the low byte), to their value; ok is false if
// any byte is not such a digit.
func hex8(x uint64) (uint64, bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// per byte, without carries between bytes since all bytes are < 0x80:
	// digit: 0x30 <= b < 0x3a; lower: 0x61 <= b < 0x67
	digit := (x + ones*(0x80-0x30)) &^ (x + ones*(0x80-0x3a))
	lower := (x + ones*(0x80-0x61)) &^ (x + ones*(0x80-0x67))
	if x&highs != 0 || (digit|lower)&highs != highs {
		return 0, false
	}
	v := x&(ones*0x0f) + (x>>6)&ones*9 // digit values 0..15 per byte
	v = (v<<4 | v>>8) & 0x00ff00ff00ff00ff
	v = (v<<8 | v>>16) & 0x0000ffff0000ffff
	v = (v<<16 | v>>32) & 0xffffffff
	return v, true
}
