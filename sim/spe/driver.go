package spe

import (
	"fmt"
	"math/bits"
	"strconv"

	"simrun/sim/cpu"
)

// AUX record flags (PERF_AUX_FLAG_*).
const (
	AuxTruncated = 0x01
	AuxPartial   = 0x04
	AuxCollision = 0x08
)

// AuxEvent is what the driver reports to perf when it ends an AUX
// transaction (PERF_RECORD_AUX): where the data lies in the ring and how
// it ended.
type AuxEvent struct {
	Offset, Size uint64 // position in the AUX ring, bytes
	Flags        uint64
	Data         []byte // the bytes, as perf record copies them out
	Cycle        uint64 // when (timing-model cycle)
}

// Driver is a front end that programs a Unit the way Linux's arm_spe_pmu
// driver does (Linux drivers/perf/arm_spe_pmu.c behaviour): it owns the AUX area perf maps, computes the
// buffer limits, handles the buffer interrupt (buffer full, faults,
// collisions), pads and restarts, and hands finished chunks to the
// consumer (perf record's reader).
type Driver struct {
	Unit   *Unit
	Config *Config
	Base   uint64 // kernel VA of the AUX area
	Size   uint64 // AUX area bytes (a multiple of the page size)
	// Drain: the consumer copies data out at every wakeup (perf record's
	// normal behaviour); if false nothing is consumed and the area fills up,
	// after which records are truncated.
	Drain  bool
	Events []AuxEvent
	Errors []string // fatal buffer events, in the driver's words

	head, tail uint64 // bytes produced / consumed (not wrapped)
	txStart    uint64 // head at the start of the running transaction (before padding)
	txPtr      uint64 // PMBPTR programmed for it
	txLimit    uint64 // and the limit address
	active     bool
	truncated  bool
	now        func() uint64
	saved      uint64 // PMSICR saved at stop (period_left)
}

// auxBase is where simrun maps the AUX area in the kernel's address space.
const auxBase = 0xffff800010000000

// MaxAuxPages bounds the AUX area simrun maps (1 GiB).
const MaxAuxPages = 1 << 18

// ParseAuxSize reads an AUX area size as perf's -m takes it: a number of
// pages, or a size in bytes with a B, K, M or G suffix. The kernel maps
// only whole pages, a power of two of them, at least 2 for arm_spe_pmu:
// a size that is not a page multiple is an error (mmap fails with EINVAL);
// a page count that is not a power of two is rounded up, as perf does,
// and note says so.
func ParseAuxSize(s string) (pages int, note string, err error) {
	num, unit := s, uint64(0)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'B', 'b':
			unit = 1
		case 'K', 'k':
			unit = 1 << 10
		case 'M', 'm':
			unit = 1 << 20
		case 'G', 'g':
			unit = 1 << 30
		}
		if unit != 0 {
			num = s[:n-1]
		}
	}
	v, perr := strconv.ParseUint(num, 0, 64)
	if perr != nil || v == 0 {
		return 0, "", fmt.Errorf("AUX area size %q: want a number of pages or a size such as 512K", s)
	}
	n := v
	if unit != 0 {
		if v > MaxAuxPages*cpu.PageSize/unit {
			return 0, "", fmt.Errorf("AUX area size %s is larger than simrun's %d MiB", s, MaxAuxPages*cpu.PageSize>>20)
		}
		bytes := v * unit
		if bytes%cpu.PageSize != 0 {
			return 0, "", fmt.Errorf("AUX area size %s (%d bytes) is not a multiple of the %d-byte page: the kernel cannot map it", s, bytes, cpu.PageSize)
		}
		n = bytes / cpu.PageSize
	}
	if n < 2 {
		return 0, "", fmt.Errorf("AUX area of %d page: arm_spe_pmu needs at least 2", n)
	}
	if n > MaxAuxPages {
		return 0, "", fmt.Errorf("AUX area of %d pages is larger than simrun's %d", n, MaxAuxPages)
	}
	if n&(n-1) != 0 {
		r := uint64(1) << bits.Len64(n)
		note = fmt.Sprintf("rounding AUX area size to %dK (%d pages): the kernel maps a power of two", r*cpu.PageSize>>10, r)
		n = r
	}
	return int(n), note, nil
}

// NewDriver maps an AUX area of pages pages for u and programs it for c.
func NewDriver(u *Unit, c *Config, pages int, now func() uint64) (*Driver, error) {
	if pages < 2 || pages > MaxAuxPages || pages&(pages-1) != 0 {
		return nil, fmt.Errorf("AUX area of %d pages: arm_spe_pmu needs a power of two from 2 to %d", pages, MaxAuxPages)
	}
	d := &Driver{Unit: u, Config: c, Base: auxBase, Size: uint64(pages) * cpu.PageSize, Drain: true, now: now}
	u.Mem = cpu.NewMemory()
	if err := u.Mem.Map(d.Base, d.Size, cpu.PermRW); err != nil {
		return nil, err
	}
	u.OnManagement = d.irq
	regs, err := c.Program(&u.Features)
	if err != nil {
		return nil, err
	}
	if !d.next() {
		return nil, fmt.Errorf("AUX area of %d pages has no room for one %d-byte record", pages, 1<<u.Features.MaxSize)
	}
	// The driver's order: buffer, filters, interval, counter, then enable.
	r := u.Regs
	for _, reg := range []Reg{PMSFCR, PMSEVFR, PMSNEVFR, PMSLATFR, PMSDSFR, PMSIRR} {
		if v, ok := regs[reg]; ok {
			r.Set(reg, v)
		}
	}
	r.Set(PMSICR, 0)
	r.Set(PMSCR, regs[PMSCR])
	return d, nil
}

// next starts a transaction: pad head to the record alignment, find the
// page-aligned limit within the free part of the ring, and program PMBPTR
// and PMBLIMITR. It reports false when the ring has no room (truncation).
func (d *Driver) next() bool {
	u := d.Unit
	align := uint64(1) << u.Features.Align
	maxRec := uint64(1) << u.Features.MaxSize
	d.txStart = d.head // padding written now belongs to this transaction
	for {
		for d.head%align != 0 {
			d.pad(1)
		}
		free := d.Size - (d.head - d.tail)
		off := d.head % d.Size
		end := min(d.Size, off+free)
		limit := end &^ cpu.PageMask
		if limit > off && limit-off >= maxRec {
			r := u.Regs
			r.Set(PMBPTR, d.Base+off)
			lim := d.Base + limit | pmblimitrE
			if d.Config.Discard {
				lim |= fmDiscard << 1
			}
			r.Set(PMBLIMITR, lim)
			d.txPtr, d.txLimit, d.active = d.Base+off, d.Base+limit, true
			return true
		}
		// Not enough room before the limit: pad up to it and try again
		// (after the end of the ring that wraps to its start).
		if end == off || free == 0 {
			return false
		}
		d.pad(end - off)
	}
}

// pad writes n zero bytes (PAD packets) at head.
func (d *Driver) pad(n uint64) {
	for i := uint64(0); i < n; i++ {
		d.Unit.Mem.Store8(d.Base+(d.head+i)%d.Size, 0)
	}
	d.head += n
}

// irq handles the profiling buffer interrupt.
func (d *Driver) irq() {
	u := d.Unit
	r := u.Regs
	bsr := r.Get(PMBSR)
	var flags uint64
	if bsr&pmbsrDL != 0 {
		flags |= AuxTruncated | AuxPartial
	}
	if bsr&pmbsrCOLL != 0 {
		flags |= AuxCollision
	}
	ec, mss := bsr>>pmbsrECSh&0x3f, bsr&0xffff
	fatal := ""
	switch {
	case ec == ecBuffer && mss == bscFull:
	case ec == ecBuffer:
		fatal = "Unknown buffer status code"
	case ec == ecStage1 || ec == 0x25:
		fatal = "Unexpected buffer fault"
	default:
		fatal = "Unknown error code"
	}
	ptr, lim := r.Get(PMBPTR), r.Get(PMBLIMITR)
	if !d.endTransaction(flags) && fatal == "" {
		fatal = "Buffer pointer outside the AUX transaction"
	}
	switch {
	case fatal != "":
		d.Errors = append(d.Errors, fmt.Sprintf("%s on CPU 0 [PMBSR=0x%016x, PMBPTR=0x%016x, PMBLIMITR=0x%016x]",
			fatal, bsr, ptr, lim))
		r.Set(PMSCR, 0)
		r.Set(PMBLIMITR, 0)
	case flags&AuxTruncated != 0:
		// A truncated AUX transaction (DL: a partial record was lost)
		// ends the session: perf disables an event whose AUX output was
		// truncated, and the driver then finds no buffer to restart in.
		d.Errors = append(d.Errors, fmt.Sprintf("partial record lost (PMBSR.DL=1) on CPU 0 [PMBSR=0x%016x]: AUX data truncated, profiling stopped", bsr))
		r.Set(PMBLIMITR, 0)
	case !d.next():
		d.truncated = true
		if n := len(d.Events); n > 0 {
			d.Events[n-1].Flags |= AuxTruncated
		}
		r.Set(PMBLIMITR, 0)
	}
	r.Set(PMBSR, 0) // restarts profiling (if the buffer is still enabled)
}

// endTransaction reports the data written since the transaction started:
// from its start to PMBPTR. It reports false, and no data, when PMBPTR is
// not within the transaction's part of the ring, [its pointer, its limit]
// (software moved the pointer, or a fault left it elsewhere): Linux's
// driver would compute a size from it regardless, which wraps around;
// simrun drops that transaction's data and flags it truncated.
func (d *Driver) endTransaction(flags uint64) bool {
	if !d.active {
		return true
	}
	d.active = false
	ptr := d.Unit.Regs.Get(PMBPTR)
	ok := ptr >= d.txPtr && ptr <= d.txLimit
	if ok {
		d.head += ptr - d.txPtr
	} else {
		flags |= AuxTruncated
	}
	size := d.head - d.txStart
	ev := AuxEvent{Offset: d.txStart % d.Size, Size: size, Flags: flags}
	if d.now != nil {
		ev.Cycle = d.now()
	}
	if size > 0 || flags != 0 {
		// perf record copies the bytes out of the ring (they may wrap).
		ev.Data = make([]byte, size)
		for i := range ev.Data {
			ev.Data[i], _ = d.Unit.Mem.Load8(d.Base + (d.txStart+uint64(i))%d.Size)
		}
		if d.Drain {
			d.tail = d.head
		}
		d.Events = append(d.Events, ev)
	}
	return ok
}

// Stop disables profiling and drains, as perf does when the program ends
// (PMSCR = 0, PSB CSYNC, PMBLIMITR = 0), reporting the last transaction.
func (d *Driver) Stop() {
	r := d.Unit.Regs
	r.Set(PMSCR, 0)
	d.saved = r.Get(PMSICR)
	if ptr := r.Get(PMBPTR); !d.endTransaction(0) {
		d.Errors = append(d.Errors, fmt.Sprintf("Buffer pointer outside the AUX transaction at stop on CPU 0 [PMBPTR=0x%016x, AUX transaction 0x%x-0x%x]: its data is dropped",
			ptr, d.txPtr, d.txLimit))
	}
	r.Set(PMBLIMITR, 0)
	d.Unit.Finish()
}

// Data returns every byte perf would have collected, in order, and the
// total truncation state.
func (d *Driver) Data() (data []byte, truncated bool) {
	for _, e := range d.Events {
		data = append(data, e.Data...)
	}
	return data, d.truncated
}
