package profile

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"io"

	"simrun/sim/spe/codes"
)

// JSONSchema is the JSON Schema (draft 2020-12) of the JSON Lines output:
// sim/profile/simrun-samples.schema.json, with a description of every field.
//
//go:embed simrun-samples.schema.json
var JSONSchema []byte

// JSON Lines: the first line is the run ({"type":"run",...}: the Summary),
// then one line per sample ({"type":"sample",...}).  Addresses and other
// 64-bit values are "0x..." strings; counts and latencies are numbers.
const jsonFormat = "simrun-samples"

type jsonRun struct {
	Type    string `json:"type"`
	Format  string `json:"format"`
	Version int    `json:"version"`
	Summary
}

type jsonSample struct {
	Type       string       `json:"type"`
	Index      int          `json:"index"`
	Offset     int          `json:"offset"`
	Time       *uint64      `json:"time_ns,omitempty"`
	CPU        int          `json:"cpu"`
	Context    *uint32      `json:"context,omitempty"`
	PC         Hex          `json:"pc"`
	EL         uint8        `json:"el"`
	NS         bool         `json:"ns"`
	Op         jsonOp       `json:"op"`
	VA         *Hex         `json:"va,omitempty"`
	PA         *Hex         `json:"pa,omitempty"`
	Target     *Hex         `json:"target,omitempty"`
	PrevTarget *Hex         `json:"prev_target,omitempty"`
	Latency    jsonLatency  `json:"latency"`
	Events     *jsonEvents  `json:"events,omitempty"`
	DataSource *jsonDS      `json:"data_source,omitempty"`
	Callchain  []jsonFrame  `json:"callchain"`
	Packets    []jsonPacket `json:"packets"`
}

type jsonOp struct {
	Class    uint8  `json:"class"`
	Subclass uint8  `json:"subclass"`
	Kind     string `json:"kind"`
	Desc     string `json:"desc"`
}

type jsonLatency struct {
	Total *uint16 `json:"total,omitempty"`
	Issue *uint16 `json:"issue,omitempty"`
	Xlat  *uint16 `json:"xlat,omitempty"`
}

type jsonEvents struct {
	Bits  Hex      `json:"bits"`
	Names []string `json:"names"`
}

type jsonDS struct {
	Value uint16 `json:"value"`
	Name  string `json:"name"`
}

type jsonFrame struct {
	PC     Hex    `json:"pc"`
	Func   string `json:"func,omitempty"`
	Offset *Hex   `json:"offset,omitempty"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
}

type jsonPacket struct {
	Kind    string `json:"kind"`
	Index   uint8  `json:"index"`
	Payload Hex    `json:"payload"`
	Len     int    `json:"len"`
	Desc    string `json:"desc"`
}

func hexp(ok bool, v uint64) *Hex {
	if !ok {
		return nil
	}
	h := Hex(v)
	return &h
}

// WriteJSON writes the recording as JSON Lines, every field of every
// record (see JSONSchema).
func WriteJSON(w io.Writer, r *Recording) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	sum := r.Summary
	if sum.Args == nil {
		sum.Args = []string{}
	}
	if sum.Buffer.Errors == nil {
		sum.Buffer.Errors = []string{}
	}
	if sum.Buffer.Events == nil {
		sum.Buffer.Events = []AuxRecord{}
	}
	if sum.SPE.Words == nil {
		sum.SPE.Words = []string{}
	}
	if sum.SPE.Registers == nil {
		sum.SPE.Registers = []RegValue{}
	}
	if err := enc.Encode(jsonRun{Type: "run", Format: jsonFormat, Version: 1, Summary: sum}); err != nil {
		return err
	}
	for i := range r.Samples {
		s := &r.Samples[i]
		j := jsonSample{Type: "sample", Index: s.Index, Offset: s.Offset, CPU: s.CPU, PC: Hex(s.PC), EL: s.EL, NS: s.NS,
			Op: jsonOp{Class: s.Op.Class, Subclass: s.Op.Sub, Kind: s.Op.Kind, Desc: s.Op.Desc},
			VA: hexp(s.HasVA, s.VA), PA: hexp(s.HasPA, s.PA), Target: hexp(s.HasTarget, s.Target), PrevTarget: hexp(s.HasPrevTarget, s.PrevTarget)}
		if s.HasTime {
			t := s.Time
			j.Time = &t
		}
		if s.HasCtx {
			c := s.Context
			j.Context = &c
		}
		lat := func(k int) *uint16 {
			if !s.HasLat[k] {
				return nil
			}
			v := s.Lat[k]
			return &v
		}
		j.Latency = jsonLatency{Total: lat(LatTotal), Issue: lat(LatIssue), Xlat: lat(LatXlat)}
		if s.HasEvents {
			j.Events = &jsonEvents{Bits: Hex(s.Events), Names: s.EventNames()}
			if j.Events.Names == nil {
				j.Events.Names = []string{}
			}
		}
		if s.HasDataSource {
			j.DataSource = &jsonDS{Value: s.DataSource, Name: codes.DataSourceName(s.DataSource)}
		}
		for _, f := range s.Frames {
			jf := jsonFrame{PC: Hex(f.PC), Func: f.Func, File: f.File, Line: f.Line}
			jf.Offset = hexp(f.Func != "", f.Offset)
			j.Callchain = append(j.Callchain, jf)
		}
		for _, p := range s.Packets {
			j.Packets = append(j.Packets, jsonPacket{Kind: p.Kind.String(), Index: p.Index, Payload: Hex(p.Payload), Len: p.Len, Desc: p.Desc()})
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return bw.Flush()
}
