package profile

import (
	"compress/gzip"
	"debug/elf"
	"fmt"
	"io"
	"path/filepath"

	"simrun/sim/spe/codes"
)

// The pprof output is a gzipped profile.proto message (the format of
// github.com/google/pprof's proto/profile.proto), encoded here rather
// than through pprof's Go package: that package compiles a dozen
// regular expressions at start-up, which every simrun command paid for
// in memory (docs/promises.md: peak RSS). The tests read the output
// with pprof's own parser.

// Sample types of the pprof profile, in order.  "samples" is the default
// (what go tool pprof -top shows without -sample_index).
var pprofSampleTypes = [][2]string{
	{"samples", "count"},
	{"total_latency", "cycles"},
	{"issue_latency", "cycles"},
	{"translation_latency", "cycles"},
}

// WritePprof writes the recording as a gzipped profile.proto: one sample
// per SPE record with its count and latencies, string labels for the
// operation ("op": load, store, branch, other; "op_type": perf's words),
// the data source ("data_source") and each event ("event", one value per
// event bit), and numeric labels for the data address ("va", "pa") and
// the time. A recording of more than one thread also labels each sample
// with its thread: "tid" and "pid" (numbers) and "comm". Locations carry the function from the ELF symbol table and
// the line from DWARF .debug_line (the file being the line's own file).
func WritePprof(w io.Writer, r *Recording, bin *Binary) error {
	zw := gzip.NewWriter(w)
	if _, err := zw.Write(pprofMessage(r, bin)); err != nil {
		return fmt.Errorf("pprof profile: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("pprof profile: %w", err)
	}
	return nil
}

// Field numbers of profile.proto's messages.
const (
	// Profile
	fProfileSampleType  = 1
	fProfileSample      = 2
	fProfileMapping     = 3
	fProfileLocation    = 4
	fProfileFunction    = 5
	fProfileStringTable = 6
	fProfileDuration    = 10
	fProfilePeriodType  = 11
	fProfilePeriod      = 12
	fProfileComment     = 13
	fProfileDefaultType = 14
	// ValueType
	fValueTypeType = 1
	fValueTypeUnit = 2
	// Sample
	fSampleLocationID = 1
	fSampleValue      = 2
	fSampleLabel      = 3
	// Label
	fLabelKey     = 1
	fLabelStr     = 2
	fLabelNum     = 3
	fLabelNumUnit = 4
	// Mapping
	fMappingID           = 1
	fMappingStart        = 2
	fMappingLimit        = 3
	fMappingOffset       = 4
	fMappingFilename     = 5
	fMappingBuildID      = 6
	fMappingHasFunctions = 7
	fMappingHasFilenames = 8
	fMappingHasLines     = 9
	// Location
	fLocationID        = 1
	fLocationMappingID = 2
	fLocationAddress   = 3
	fLocationLine      = 4
	// Line
	fLineFunctionID = 1
	fLineLine       = 2
	// Function
	fFunctionID         = 1
	fFunctionName       = 2
	fFunctionSystemName = 3
	fFunctionFilename   = 4
)

// pbuf appends protocol-buffer fields: a key (field number << 3 | wire
// type) then a varint (wire type 0) or a length and bytes (wire type 2).
// Zero scalars are left out, as proto3 encoders do.
type pbuf []byte

func (b *pbuf) uvarint(v uint64) {
	for v >= 0x80 {
		*b = append(*b, byte(v)|0x80)
		v >>= 7
	}
	*b = append(*b, byte(v))
}

func (b *pbuf) num(field int, v uint64) {
	if v != 0 {
		b.uvarint(uint64(field) << 3)
		b.uvarint(v)
	}
}

func (b *pbuf) flag(field int, v bool) {
	if v {
		b.num(field, 1)
	}
}

func (b *pbuf) bytes(field int, p []byte) {
	b.uvarint(uint64(field)<<3 | 2)
	b.uvarint(uint64(len(p)))
	*b = append(*b, p...)
}

// packed appends a packed repeated varint field.
func (b *pbuf) packed(field int, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	var p pbuf
	for _, v := range vs {
		p.uvarint(v)
	}
	b.bytes(field, p)
}

// strtab is the profile's string table: index 0 is "".
type strtab struct {
	list  []string
	index map[string]uint64
}

func (t *strtab) id(s string) uint64 {
	if t.index == nil {
		t.index = map[string]uint64{"": 0}
		t.list = []string{""}
	}
	if i, ok := t.index[s]; ok {
		return i
	}
	i := uint64(len(t.list))
	t.index[s] = i
	t.list = append(t.list, s)
	return i
}

func (t *strtab) valueType(typ, unit string) pbuf {
	var v pbuf
	v.num(fValueTypeType, t.id(typ))
	v.num(fValueTypeUnit, t.id(unit))
	return v
}

// pprofMapping is an executable segment of one object.
type pprofMapping struct{ id, start, limit uint64 }

// pprofMappings are the Mapping messages of a profile: every executable
// segment of each object a sample's frame is in (the program, ld.so,
// libc, ...; each program of a run of several), with its file and
// build-id, numbered in the order met.
type pprofMappings struct {
	st   *strtab
	msgs pbuf
	n    uint64
	by   map[objectKey][]pprofMapping
}

// objectKey names one object where it is loaded (a process's copy of a
// Binary is the same object).
type objectKey struct {
	path string
	bias uint64
}

// of is the mapping of pc in bin (0: none), adding bin's mappings when
// it is first met; file is the name they get.
func (ms *pprofMappings) of(bin *Binary, file string, pc uint64) uint64 {
	if bin == nil {
		return 0
	}
	k := objectKey{bin.Path, bin.Bias}
	list, ok := ms.by[k]
	if !ok {
		for _, pr := range bin.ELF.Progs {
			if pr.Type != elf.PT_LOAD || pr.Flags&elf.PF_X == 0 {
				continue
			}
			ms.n++
			m := pprofMapping{ms.n, pr.Vaddr + bin.Bias, pr.Vaddr + pr.Memsz + bin.Bias}
			list = append(list, m)
			var e pbuf
			e.num(fMappingID, m.id)
			e.num(fMappingStart, m.start)
			e.num(fMappingLimit, m.limit)
			e.num(fMappingOffset, pr.Off)
			e.num(fMappingFilename, ms.st.id(file))
			if len(bin.BuildID) > 0 {
				e.num(fMappingBuildID, ms.st.id(fmt.Sprintf("%x", bin.BuildID)))
			}
			e.flag(fMappingHasFunctions, true)
			e.flag(fMappingHasFilenames, bin.HasLines)
			e.flag(fMappingHasLines, bin.HasLines)
			ms.msgs.bytes(fProfileMapping, e)
		}
		ms.by[k] = list
	}
	for _, m := range list {
		if pc >= m.start && pc < m.limit {
			return m.id
		}
	}
	return 0
}

// pprofMessage encodes the recording as an uncompressed Profile message.
// Everything is emitted in a fixed order (samples as recorded, locations,
// functions and strings as first met), so that equal recordings give
// equal bytes.
func pprofMessage(r *Recording, bin *Binary) []byte {
	s := &r.Summary
	var st strtab
	var out, body pbuf
	st.id("")
	for _, t := range pprofSampleTypes {
		out.bytes(fProfileSampleType, st.valueType(t[0], t[1]))
	}

	maps := &pprofMappings{st: &st, by: map[objectKey][]pprofMapping{}}
	mainFile := s.Program
	if bin != nil && mainFile == "" {
		mainFile = filepath.Base(bin.Path)
	}
	if bin != nil && len(bin.ELF.Progs) > 0 {
		maps.of(bin, mainFile, bin.ELF.Progs[0].Vaddr+bin.Bias) // the program's first
	}
	// object is the file that holds a frame's pc (nil: none), and the
	// name its mapping gets: the program's absolute path, each other
	// object's path.
	object := func(smp *Sample, pc uint64) (*Binary, string) {
		b := smp.bin
		if b == nil {
			b = bin
		}
		o := b.ObjectAt(pc)
		if o == nil {
			return nil, ""
		}
		if bin != nil && o.Path == bin.Path && o.Bias == bin.Bias {
			return o, mainFile
		}
		if abs, err := filepath.Abs(o.Path); err == nil {
			return o, abs
		}
		return o, o.Path
	}

	// A location is a pc in one object: the same pc in two processes'
	// programs is two locations.
	type lkey struct {
		obj objectKey
		pc  uint64
	}
	locs := map[lkey]uint64{}
	type fkey struct{ name, file string }
	funcs := map[fkey]uint64{}
	var locMsgs, funcMsgs pbuf
	location := func(smp *Sample, fr Frame) uint64 {
		o, file := object(smp, fr.PC)
		k := lkey{pc: fr.PC}
		if o != nil {
			k.obj = objectKey{o.Path, o.Bias}
		}
		if id, ok := locs[k]; ok {
			return id
		}
		id := uint64(len(locs) + 1)
		locs[k] = id
		var e pbuf
		e.num(fLocationID, id)
		e.num(fLocationMappingID, maps.of(o, file, fr.PC))
		e.num(fLocationAddress, fr.PC)
		if fr.Func != "" {
			k := fkey{fr.Func, fr.File}
			fid, ok := funcs[k]
			if !ok {
				fid = uint64(len(funcs) + 1)
				funcs[k] = fid
				var f pbuf
				f.num(fFunctionID, fid)
				f.num(fFunctionName, st.id(fr.Func))
				f.num(fFunctionSystemName, st.id(fr.Func))
				f.num(fFunctionFilename, st.id(fr.File))
				funcMsgs.bytes(fProfileFunction, f)
			}
			var l pbuf
			l.num(fLineFunctionID, fid)
			l.num(fLineLine, uint64(fr.Line))
			e.bytes(fLocationLine, l)
		}
		locMsgs.bytes(fProfileLocation, e)
		return id
	}

	label := func(dst *pbuf, key, str string, num int64, unit string) {
		var l pbuf
		l.num(fLabelKey, st.id(key))
		if str != "" {
			l.num(fLabelStr, st.id(str))
		} else {
			l.num(fLabelNum, uint64(num))
			l.num(fLabelNumUnit, st.id(unit))
		}
		dst.bytes(fSampleLabel, l)
	}
	var ids []uint64
	threaded := Threaded(r.Samples)
	for i := range r.Samples {
		smp := &r.Samples[i]
		ids = ids[:0]
		for _, fr := range smp.Frames {
			ids = append(ids, location(smp, fr))
		}
		var e pbuf
		e.packed(fSampleLocationID, ids)
		e.packed(fSampleValue, []uint64{1, uint64(smp.Lat[LatTotal]), uint64(smp.Lat[LatIssue]), uint64(smp.Lat[LatXlat])})
		label(&e, "op", smp.Op.Kind, 0, "")
		label(&e, "op_type", smp.Op.Desc, 0, "")
		if smp.HasDataSource {
			label(&e, "data_source", codes.DataSourceName(smp.DataSource), 0, "")
		}
		for _, ev := range smp.EventNames() {
			label(&e, "event", ev, 0, "")
		}
		if smp.HasVA {
			label(&e, "va", "", int64(smp.VA), "")
		}
		if smp.HasPA {
			label(&e, "pa", "", int64(smp.PA), "")
		}
		if smp.HasTime {
			label(&e, "time", "", int64(smp.Time), "nanoseconds")
		}
		if threaded {
			// Which thread: go tool pprof -tagfocus tid=1001, -tags.
			label(&e, "tid", "", int64(smp.Tid()), "")
			pid, comm := int64(r.Summary.PID), r.Summary.Comm
			if smp.Comm != "" {
				pid, comm = int64(smp.Pid), smp.Comm
			}
			label(&e, "pid", "", pid, "")
			label(&e, "comm", comm, 0, "")
		}
		body.bytes(fProfileSample, e)
	}
	body = append(body, maps.msgs...)
	body = append(body, locMsgs...)
	body = append(body, funcMsgs...)

	comments := []uint64{
		st.id(fmt.Sprintf("simrun record -e %s -c %d %s", s.SPE.Event, s.SPE.Period, s.Program)),
		st.id(fmt.Sprintf("cpu model %s; %d instructions, %d cycles", s.CPU.Model, s.Instructions, s.Cycles)),
	}
	body.num(fProfileDuration, uint64(int64(s.Nanos)))
	body.bytes(fProfilePeriodType, st.valueType("operations", "count"))
	body.num(fProfilePeriod, uint64(int64(s.SPE.Period)))
	for _, c := range comments {
		body.num(fProfileComment, c)
	}
	body.num(fProfileDefaultType, st.id("samples"))

	out = append(out, body...)
	for _, str := range st.list {
		out.bytes(fProfileStringTable, []byte(str))
	}
	return out
}
