package profile

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Recording is one simrun record run as the sinks see it: what the run
// was and did (Summary) and its samples.
type Recording struct {
	Summary Summary
	Samples []Sample
}

// Summary describes a recorded run: the program, the machine model, how
// SPE was programmed, and what the run and the SPE unit counted.  It is
// what the report's summary shows and what the "run" line of the JSON
// output holds (field names as in the JSON schema).
type Summary struct {
	Program    string   `json:"program"` // absolute path of the executable
	Args       []string `json:"args"`    // argv, argv[0] as given
	Arch       string   `json:"arch"`    // "arm64", "s390x"
	Bias       Hex      `json:"bias"`    // load bias of the image
	Comm       string   `json:"comm"`
	PID        uint32   `json:"pid"`
	Seed       uint64   `json:"seed"`
	ExitStatus int      `json:"exit_status"`
	Fault      string   `json:"fault,omitempty"` // the fault that ended the run

	CPU CPUModel `json:"cpu"`
	SPE SPESetup `json:"spe"`

	Instructions uint64  `json:"instructions"`
	Cycles       uint64  `json:"cycles"`
	Nanos        uint64  `json:"ns"` // virtual run time
	Timing       Timing  `json:"timing"`
	PMU          SPEPMU  `json:"spe_pmu"`
	Buffer       Buffers `json:"buffer"`

	// Objects are the executable mappings of the program's other objects
	// (the interpreter, shared libraries), as the run made them, so that
	// simrun report names their functions as the recording did.
	Objects []ObjectMap `json:"objects,omitempty"`
}

// ObjectMap is one executable file mapping: its host path, where it was
// mapped and from which file offset.
type ObjectMap struct {
	Path  string `json:"path"`
	Start Hex    `json:"start"`
	Len   Hex    `json:"len"`
	Pgoff Hex    `json:"pgoff"`
}

// CPUModel is the timing preset the run used.
type CPUModel struct {
	Model string `json:"model"`
	Desc  string `json:"desc"`
	MHz   uint64 `json:"mhz"`
	MIDR  Hex    `json:"midr"`
}

// SPESetup is how the SPE unit was programmed.
type SPESetup struct {
	Version string `json:"version"` // "SPEv1p0", ...
	Event   string `json:"event"`   // the perf event as given
	Period  uint64 `json:"period"`  // -c
	// Words says in sentences what the configuration samples.
	Words     []string   `json:"words"`
	Registers []RegValue `json:"registers"`
}

// RegValue is a sampling-control register as programmed before the run.
type RegValue struct {
	Name    string `json:"name"`
	Value   Hex    `json:"value"`
	Explain string `json:"explain"` // spe.Explain's field-by-field text
}

// Timing are the timing model's counts of the run.
type Timing struct {
	L1DAccess   uint64 `json:"l1d_access"`
	L1DRefill   uint64 `json:"l1d_refill"`
	L2Access    uint64 `json:"l2_access"`
	L2Refill    uint64 `json:"l2_refill"`
	LLCAccess   uint64 `json:"llc_access"`
	LLCMiss     uint64 `json:"llc_miss"`
	TLBAccess   uint64 `json:"tlb_access"`
	TLBWalk     uint64 `json:"tlb_walk"`
	Branches    uint64 `json:"branches"`
	Mispredicts uint64 `json:"mispredicts"`
	NotTaken    uint64 `json:"not_taken"`
	StallCycles uint64 `json:"stall_cycles"`
}

// SPEPMU are the SPE PMU events the unit counted (Arm names).
type SPEPMU struct {
	SamplePop        uint64 `json:"SAMPLE_POP"`
	SampleFeed       uint64 `json:"SAMPLE_FEED"`
	SampleFiltrate   uint64 `json:"SAMPLE_FILTRATE"`
	SampleCollision  uint64 `json:"SAMPLE_COLLISION"`
	SampleBufferFull uint64 `json:"SAMPLE_BUFFER_FULL"`
	FeedBr           uint64 `json:"SAMPLE_FEED_BR"`
	FeedLd           uint64 `json:"SAMPLE_FEED_LD"`
	FeedSt           uint64 `json:"SAMPLE_FEED_ST"`
	FeedFP           uint64 `json:"SAMPLE_FEED_FP"`
	FeedSIMD         uint64 `json:"SAMPLE_FEED_SIMD"`
	FeedOp           uint64 `json:"SAMPLE_FEED_OP"`
	FeedEvent        uint64 `json:"SAMPLE_FEED_EVENT"`
	FeedLat          uint64 `json:"SAMPLE_FEED_LAT"`
	FeedDS           uint64 `json:"SAMPLE_FEED_DS"`
}

// Buffers are the profiling buffer's events as the driver saw them.
type Buffers struct {
	Records   uint64      `json:"records"`    // records written
	Bytes     int         `json:"bytes"`      // bytes of SPE data
	AuxPages  int         `json:"aux_pages"`  // AUX area size
	Truncated bool        `json:"truncated"`  // the AUX area filled up
	Errors    []string    `json:"errors"`     // fatal buffer events, the driver's words
	Events    []AuxRecord `json:"aux_events"` // PERF_RECORD_AUX, in order
}

// AuxRecord is one AUX transaction the driver ended.
type AuxRecord struct {
	Offset uint64   `json:"offset"`
	Size   uint64   `json:"size"`
	Flags  []string `json:"flags"` // "truncated", "partial", "collision"
	Time   uint64   `json:"ns"`
}

// Hex is a 64-bit value written in JSON as a "0x..." string, exact in
// every JSON reader (JavaScript numbers hold 53 bits).
type Hex uint64

// MarshalJSON writes "0x" and lowercase hex digits.
func (h Hex) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf(`"0x%x"`, uint64(h))), nil }

// UnmarshalJSON reads what MarshalJSON writes.
func (h *Hex) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil || !strings.HasPrefix(s, "0x") {
		return fmt.Errorf("%q is not a 0x hex value", s)
	}
	*h = Hex(v)
	return nil
}

// simrunSection is what simrun keeps in its perf.data feature section.
// A run of several processes adds the program each ran (Processes) and
// each record's index in it (Tags), so simrun report names and
// symbolizes every process's samples as the recording did.
type simrunSection struct {
	Format     string         `json:"format"`
	Version    int            `json:"version"`
	Summary    Summary        `json:"summary"`
	Callchains [][]uint64     `json:"callchains,omitempty"`
	Processes  []ProcessImage `json:"processes,omitempty"`
	Tags       []int          `json:"tags,omitempty"`
	// CPURecords, for a run of several CPUs, counts each CPU's records:
	// the AUX data is CPU 0's records, then CPU 1's, and so on (the
	// chunks in CPU order), and Callchains and Tags follow that order.
	CPURecords []int `json:"cpu_records,omitempty"`
}

// Section is what EncodeSection keeps beside the summary.
type Section struct {
	// Callchains[i] is the call stack of record i, leaf first (nil: each
	// sample's is its pc alone).
	Callchains [][]uint64
	// Processes are the programs of a run of several processes, Tags
	// each record's index in them.
	Processes []ProcessImage
	Tags      []int
	// CPURecords counts each CPU's records, in CPU order (nil: one CPU).
	CPURecords []int
}

// ProcessImage is one program a process of a run ran (one per process
// and execve): the process, the program where it was loaded, and the
// shared objects it had mapped, each with its load bias.
type ProcessImage struct {
	Pid     uint32         `json:"pid"`
	Comm    string         `json:"comm"`
	Program string         `json:"program"`
	Bias    Hex            `json:"bias"`
	Objects []LoadedObject `json:"objects,omitempty"`
}

// LoadedObject is a shared object where a process loaded it.
type LoadedObject struct {
	Path string `json:"path"`
	Bias Hex    `json:"bias"`
}

// maxImageFiles bounds the files OpenImages opens (each file at each load
// address counts): a hostile section cannot make simrun report read one
// large file at a million addresses. A run's processes repeat their
// programs at the same addresses (simrun lays them out
// deterministically), so real recordings stay far below it.
const maxImageFiles = 256

// MergeCPUs makes one list of the samples of several CPUs (perCPU[i]:
// CPU i's, in its record order): each gets its CPU, and the list is in
// time order (records of one time, such as every record without a
// timestamp, by CPU, then record order), as perf orders the CPUs'
// streams.
func MergeCPUs(perCPU [][]Sample) []Sample {
	var out []Sample
	for cpu, ss := range perCPU {
		for _, s := range ss {
			s.CPU = cpu
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b Sample) int { return cmp.Compare(a.Time, b.Time) })
	return out
}

// OpenImages opens each image's program and objects for symbolizing,
// each file once per load address; a file that is gone or unreadable, or
// past maxImageFiles, leaves its pcs unnamed.
func OpenImages(list []ProcessImage) []Image {
	type key struct {
		path string
		bias Hex
	}
	bins := map[key]*Binary{}
	open := func(path string, bias Hex) *Binary {
		k := key{path, bias}
		b, ok := bins[k]
		if !ok && len(bins) < maxImageFiles {
			b, _ = OpenBinary(path, uint64(bias))
			bins[k] = b
		}
		return b
	}
	var out []Image
	for _, in := range list {
		b := open(in.Program, in.Bias)
		if b != nil && len(in.Objects) > 0 {
			c := *b
			c.Shared = nil
			for _, o := range in.Objects {
				if ob := open(o.Path, o.Bias); ob != nil {
					c.Shared = append(c.Shared, ob)
				}
			}
			b = &c
		}
		out = append(out, Image{Bin: b, Pid: in.Pid, Comm: in.Comm})
	}
	return out
}

const (
	sectionFormat  = "simrun-recording"
	sectionVersion = 1
)

// ErrNotSimrun says a file is not a recording simrun wrote.
var ErrNotSimrun = errors.New("not a perf.data file written by simrun record")

// EncodeSection is the content of simrun's perf.data feature section for
// a run (PerfData.Simrun): the summary, the callchains of the records (nil
// when every chain is the sampled pc alone) and, for a run of several
// processes, their programs and each record's index in procs (tags).
func EncodeSection(s *Summary, sec Section) ([]byte, error) {
	chains, procs, tags := sec.Callchains, sec.Processes, sec.Tags
	keep := false
	for _, c := range chains {
		if len(c) > 1 {
			keep = true
		}
	}
	if !keep {
		chains = nil
	}
	if len(procs) == 0 {
		tags = nil
	}
	cpus := sec.CPURecords
	if len(cpus) < 2 {
		cpus = nil
	}
	return json.Marshal(simrunSection{Format: sectionFormat, Version: sectionVersion, Summary: *s, Callchains: chains,
		Processes: procs, Tags: tags, CPURecords: cpus})
}

// ReadRecording reads a perf.data file simrun record wrote: the summary
// from simrun's section, the samples from the SPE data, symbolized with
// the program (bin; nil for no symbols).  The program is found through
// OpenRecording; ReadRecording is for a caller that already has it.
func ReadRecording(data []byte, bin *Binary) (*Recording, error) {
	sec, err := readSection(data)
	if err != nil {
		return nil, err
	}
	chunks, err := ReadAuxtrace(data)
	if err != nil {
		return nil, err
	}
	var aux []byte
	for _, c := range chunks {
		aux = append(aux, c...)
	}
	var samples []Sample
	if len(sec.Processes) > 0 {
		samples, err = DecodeTagged(aux, bin, OpenImages(sec.Processes), sec.Tags, sec.Callchains)
	} else {
		samples, err = Decode(aux, bin, sec.Callchains)
	}
	if err != nil {
		return nil, err
	}
	if len(sec.CPURecords) > 1 {
		var perCPU [][]Sample
		rest := samples
		for _, n := range sec.CPURecords {
			n = min(max(n, 0), len(rest))
			perCPU, rest = append(perCPU, rest[:n]), rest[n:]
		}
		samples = MergeCPUs(perCPU)
	}
	return &Recording{Summary: sec.Summary, Samples: samples}, nil
}

// RecordingSummary returns the summary of a perf.data file simrun wrote
// (to find the program before symbolizing).
func RecordingSummary(data []byte) (*Summary, error) {
	sec, err := readSection(data)
	if err != nil {
		return nil, err
	}
	return &sec.Summary, nil
}

func readSection(data []byte) (*simrunSection, error) {
	raw, err := ReadFeature(data, FeatSimrun)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, fmt.Errorf("%w (it has no simrun section)", ErrNotSimrun)
	}
	var sec simrunSection
	if err := json.Unmarshal(raw, &sec); err != nil {
		return nil, fmt.Errorf("%w: its simrun section does not parse: %v", ErrNotSimrun, err)
	}
	if sec.Format != sectionFormat {
		return nil, fmt.Errorf("%w: its simrun section has format %q", ErrNotSimrun, sec.Format)
	}
	if sec.Version != sectionVersion {
		return nil, fmt.Errorf("simrun recording version %d: this simrun reads version %d (record it again)", sec.Version, sectionVersion)
	}
	return &sec, nil
}
