package report

import (
	"sort"
	"strings"
)

// Term is one glossary entry.
type Term struct {
	Name, Kind, Text string
}

// glossary explains, in the report's own words, every SPE term the page
// can show.  Facts from the Arm ARM: the SPE chapter (D17: sampling,
// latency counters, record contents), the packet formats (D18.2: events
// bits, operation types), the PMU events the sampling unit raises
// (D14.2), and the data-source encoding perf decodes for Neoverse cores.
var glossary = map[string]Term{
	// Events packet bits (D18.2.6), with perf's names.
	"EXCEPTION-GEN": {Kind: "event", Text: "The sampled operation ended by taking a synchronous exception (a system call's SVC, a fault)."},
	"RETIRED":       {Kind: "event", Text: "The operation was architecturally executed, not thrown away after speculation. simrun does not speculate, so every sample has it."},
	"L1D-ACCESS":    {Kind: "event", Text: "The operation looked up the level 1 data cache."},
	"L1D-REFILL":    {Kind: "event", Text: "The level 1 data cache did not have the data and had to fetch the line from further out (a miss)."},
	"TLB-ACCESS":    {Kind: "event", Text: "The operation looked up the data TLB to translate its virtual address."},
	"TLB-REFILL":    {Kind: "event", Text: "The TLB had no translation, so the page tables were walked (a TLB miss); the time shows up as translation latency."},
	"NOT-TAKEN":     {Kind: "event", Text: "A conditional operation whose condition failed: a branch that fell through, or a conditional select that took its second operand."},
	"MISPRED":       {Kind: "event", Text: "The branch predictor guessed this branch wrong, so the work fetched after it was thrown away."},
	"LLC-ACCESS":    {Kind: "event", Text: "The access reached the last-level cache."},
	"LLC-REFILL":    {Kind: "event", Text: "The last-level cache missed too: the data came from memory."},
	"REMOTE-ACCESS": {Kind: "event", Text: "The data came from another socket's memory or caches."},
	"ALIGNMENT":     {Kind: "event", Text: "The access was misaligned and paid extra cycles for it."},
	"TXN":           {Kind: "event", Text: "The operation ran inside a hardware transaction (reads as zero on current cores)."},
	"L2D-ACCESS":    {Kind: "event", Text: "A load looked up the level 2 data cache (SPE v1.4)."},
	"L2D-MISS":      {Kind: "event", Text: "A load missed in the level 2 data cache (SPE v1.4)."},
	"HITM":          {Kind: "event", Text: "The data was found modified in another core's cache (SPE v1.4)."},
	"LFB":           {Kind: "event", Text: "The data came from a line that was already being fetched (SPE v1.4)."},
	"SNOOPED":       {Kind: "event", Text: "The data was snooped from outside this core's own cache hierarchy (SPE v1.4)."},

	// Data sources (the Neoverse encoding perf decodes).
	"L1D":           {Kind: "data source", Text: "The load's data came from the level 1 data cache: the fast case."},
	"L2":            {Kind: "data source", Text: "The load's data came from the core's level 2 cache."},
	"peer-core":     {Kind: "data source", Text: "The data came from another core's private cache."},
	"local-cluster": {Kind: "data source", Text: "The data came from a cache shared within the core's cluster."},
	"system-cache":  {Kind: "data source", Text: "The data came from the system-level (last-level) cache."},
	"peer-cluster":  {Kind: "data source", Text: "The data came from a cache of another cluster."},
	"remote":        {Kind: "data source", Text: "The data came from another socket."},
	"DRAM":          {Kind: "data source", Text: "The data came from main memory: the slowest case."},

	// Latency counters (D17, the counter packets).
	"total latency":       {Kind: "latency", Text: "Cycles from when the operation was dispatched for issue until it completed (could no longer hold up the operations that wait for it)."},
	"issue latency":       {Kind: "latency", Text: "The part of the total latency the operation spent waiting to be issued, e.g. for its inputs or a free execution unit."},
	"translation latency": {Kind: "latency", Text: "Cycles the operation waited for its virtual address to be translated (long after a TLB-REFILL)."},

	// Operation types (D18.2.5) in perf's words.
	"LD":          {Kind: "operation", Text: "A load: an operation that reads memory."},
	"ST":          {Kind: "operation", Text: "A store: an operation that writes memory."},
	"B":           {Kind: "operation", Text: "A branch (or exception return)."},
	"COND":        {Kind: "operation", Text: "The branch is conditional."},
	"IND":         {Kind: "operation", Text: "The branch is indirect: its target comes from a register."},
	"OTHER":       {Kind: "operation", Text: "Neither a load, a store nor a branch: arithmetic, moves, compares…"},
	"INSN-OTHER":  {Kind: "operation", Text: "An ordinary other operation (not a conditional select or compare)."},
	"COND-SELECT": {Kind: "operation", Text: "A conditional select or conditional compare (CSEL, CCMP and the like)."},
	"GP-REG":      {Kind: "operation", Text: "The load or store moves general-purpose registers."},
	"SIMD-FP":     {Kind: "operation", Text: "The load or store moves SIMD or floating-point registers."},
	"AT":          {Kind: "operation", Text: "An atomic memory operation."},
	"EXCL":        {Kind: "operation", Text: "A load- or store-exclusive."},
	"AR":          {Kind: "operation", Text: "A load-acquire or store-release."},
	"UNSPEC-REG":  {Kind: "operation", Text: "A load or store whose registers the record does not say."},

	// PMU events the sampling unit raises (D14.2).
	"SAMPLE_POP":         {Kind: "PMU event", Text: "Counts every operation in the population: each one that could be sampled while profiling is on. The interval counter counts these down."},
	"SAMPLE_FEED":        {Kind: "PMU event", Text: "Counts the operations picked for sampling that completed: each one was followed through the pipeline and offered to the filters."},
	"SAMPLE_FILTRATE":    {Kind: "PMU event", Text: "Counts the sampled operations that passed every filter, so a record was written for each (unless discarding)."},
	"SAMPLE_COLLISION":   {Kind: "PMU event", Text: "Counts the times an operation was picked while the previous sample was still in flight: the new one is not sampled. Many collisions mean the interval is too short."},
	"SAMPLE_BUFFER_FULL": {Kind: "PMU event", Text: "Counts the times the profiling buffer filled up and the unit stopped to let the driver empty it."},
	"SAMPLE_FEED_BR":     {Kind: "PMU event", Text: "Sampled operations that were branches."},
	"SAMPLE_FEED_LD":     {Kind: "PMU event", Text: "Sampled operations that were loads."},
	"SAMPLE_FEED_ST":     {Kind: "PMU event", Text: "Sampled operations that were stores."},
	"SAMPLE_FEED_FP":     {Kind: "PMU event", Text: "Sampled operations that were floating point."},
	"SAMPLE_FEED_SIMD":   {Kind: "PMU event", Text: "Sampled operations that were SIMD."},
	"SAMPLE_FEED_OP":     {Kind: "PMU event", Text: "Sampled operations that matched the operation-type filter (counted when that filter is set)."},
	"SAMPLE_FEED_EVENT":  {Kind: "PMU event", Text: "Sampled operations that matched the event filters."},
	"SAMPLE_FEED_LAT":    {Kind: "PMU event", Text: "Sampled operations whose total latency reached the latency filter's minimum."},
	"SAMPLE_FEED_DS":     {Kind: "PMU event", Text: "Sampled loads whose data source the data-source filter selects."},

	// Registers (D24.7) and setup.
	"PMSCR_EL1":    {Kind: "register", Text: "Sampling control: which exception levels are profiled and what a record includes (timestamps, physical addresses, the context)."},
	"PMSIRR_EL1":   {Kind: "register", Text: "Sampling interval reload: one operation in every INTERVAL is picked (-c), optionally with random jitter."},
	"PMSFCR_EL1":   {Kind: "register", Text: "Sampling filter control: switches the operation-type, event and latency filters on."},
	"PMSEVFR_EL1":  {Kind: "register", Text: "Event filter: a record is kept only when the operation raised every event set here."},
	"PMSNEVFR_EL1": {Kind: "register", Text: "Inverted event filter: a record is dropped when the operation raised any event set here."},
	"PMSLATFR_EL1": {Kind: "register", Text: "Latency filter: a record is kept only when the total latency is at least MINLAT cycles."},
	"PMSDSFR_EL1":  {Kind: "register", Text: "Data-source filter: loads are kept only when their data source is selected here."},
	"INTERVAL":     {Kind: "setup", Text: "How many operations pass between two samples (the -c period)."},
	"SPE":          {Kind: "setup", Text: "The Arm Statistical Profiling Extension: hardware that picks one operation in every INTERVAL, follows it through the pipeline and writes a record of what happened to it (where it ran, what it accessed, how long it took) into a memory buffer."},
	"record":       {Kind: "setup", Text: "What SPE writes for one sampled operation: a series of packets (PC, operation type, addresses, events, latency counters, data source, timestamp)."},
	"data source":  {Kind: "setup", Text: "Where a load's data came from (which cache level or memory); the encoding is implementation defined, and simrun uses the one perf decodes for Neoverse cores."},

	// AUX transactions as the Linux driver reports them.
	"AUX area":  {Kind: "driver", Text: "The ring buffer the Linux driver gives the SPE unit to write records into; perf copies it into perf.data."},
	"truncated": {Kind: "driver", Text: "The AUX area filled up and the driver stopped profiling: records after that point are missing."},
	"partial":   {Kind: "driver", Text: "The AUX transaction ends mid-record."},
	"collision": {Kind: "driver", Text: "Samples were lost to collisions during this AUX transaction (see SAMPLE_COLLISION)."},
}

// glossarySet collects the terms a page uses.
type glossarySet map[string]bool

// add marks term (and each word of a perf operation description such as
// "LD GP-REG") as used when the glossary has it.
func (g glossarySet) add(terms ...string) {
	for _, t := range terms {
		if _, ok := glossary[t]; ok {
			g[t] = true
			continue
		}
		for _, w := range strings.Fields(t) {
			if _, ok := glossary[w]; ok {
				g[w] = true
			}
		}
	}
}

// terms are the used entries, grouped by kind in a fixed order, then by
// name.
func (g glossarySet) terms() []Term {
	order := map[string]int{"setup": 0, "operation": 1, "event": 2, "data source": 3, "latency": 4, "PMU event": 5, "register": 6, "driver": 7}
	var out []Term
	for name := range g {
		t := glossary[name]
		t.Name = name
		out = append(out, t)
	}
	sortTerms(out, order)
	return out
}

func sortTerms(ts []Term, order map[string]int) {
	sort.Slice(ts, func(i, j int) bool {
		if order[ts[i].Kind] != order[ts[j].Kind] {
			return order[ts[i].Kind] < order[ts[j].Kind]
		}
		return ts[i].Name < ts[j].Name
	})
}

// termID is the glossary anchor of a term.
func termID(t string) string { return "g-" + strings.ReplaceAll(t, " ", "-") }
