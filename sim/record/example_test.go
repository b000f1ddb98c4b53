package record_test

import (
	"context"
	"fmt"
	"io"
	"os"

	_ "simrun/sim/arm64" // the cores a recording may need
	"simrun/sim/linux"
	"simrun/sim/record"
	_ "simrun/sim/s390x"
)

// A Go program records a run as simrun record does, then reads the
// samples and writes perf.data.
func Example() {
	cfg := linux.Config{Args: []string{"../../programs/bin/aarch64-O2/listchase"}, Stdout: io.Discard, Stderr: io.Discard, Seed: 1}
	rec, err := record.Record(context.Background(), cfg, record.Options{Period: 1024, Callchain: "sframe"})
	if err != nil {
		fmt.Println(err)
		return
	}
	prof, _, err := rec.Profile()
	if err != nil {
		fmt.Println(err)
		return
	}
	perFunc := map[string]int{}
	for _, s := range prof.Samples {
		perFunc[s.Frames[0].FuncName()]++
	}
	fmt.Printf("%d instructions, %d samples, %d in main\n", rec.Insns(), len(prof.Samples), perFunc["main"])
	fmt.Println("callchain of the first:", prof.Samples[0].Frames[0].Name(), "<-", prof.Samples[0].Frames[1].Name())

	pd, err := rec.PerfData(prof)
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := os.CreateTemp("", "perf.data")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := pd.WriteTo(f); err != nil { // perf report -i FILE reads it
		fmt.Println(err)
	}
	// Output:
	// 131225 instructions, 128 samples, 98 in main
	// callchain of the first: main+0x80 <- _start+0x1c
}
