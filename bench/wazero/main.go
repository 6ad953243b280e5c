// Command wazero-layout times the layout experiment's variants of offthread's WASM
// build inside wazero, the Go WebAssembly runtime the Karmem paper's measurements ran
// in (its §5.1.3: "results were obtained using Go"). It prints one JSON array of
// {"variant", "nsPerUpdate", "calls"} on stdout; bench/experiments/layout.mjs reads it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/tetratelabs/wazero"
)

// The variants in the order of the kernel's VARIANTS (crates/offthread-kernels/src/layout.rs).
var variants = []string{"native", "fixed", "stride", "fixedSimd", "soa", "soaSimd", "aop"}

type row struct {
	Variant     string  `json:"variant"`
	NsPerUpdate float64 `json:"nsPerUpdate"`
	Calls       int     `json:"calls"`
}

func main() {
	wasmPath := flag.String("wasm", "", "offthread.wasm")
	n := flag.Uint64("n", 10_000, "scooters")
	reps := flag.Uint64("reps", 100, "passes per call")
	minTime := flag.Duration("min-time", 800*time.Millisecond, "timing per variant")
	flag.Parse()
	if err := run(*wasmPath, *n, *reps, *minTime); err != nil {
		fmt.Fprintln(os.Stderr, "wazero-layout:", err)
		os.Exit(1)
	}
}

func run(wasmPath string, n, reps uint64, minTime time.Duration) error {
	bin, err := os.ReadFile(wasmPath)
	if err != nil {
		return err
	}
	ctx := context.Background()
	// The optimising compiler (wazero's default on amd64), as in the paper's setting.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, bin)
	if err != nil {
		return err
	}
	layoutRun := mod.ExportedFunction("layout_run")
	if layoutRun == nil {
		return fmt.Errorf("%s exports no layout_run", wasmPath)
	}
	call := func(v int, speed uint64) (uint64, error) {
		out, err := layoutRun.Call(ctx, uint64(v), n, reps, speed)
		if err != nil {
			return 0, err
		}
		return out[0], nil
	}
	expected, err := call(0, 3)
	if err != nil {
		return err
	}
	rows := make([]row, 0, len(variants))
	for v, name := range variants {
		if got, err := call(v, 3); err != nil || got != expected {
			return fmt.Errorf("%s: checksum %d, want %d (%v)", name, got, expected, err)
		}
		var times []time.Duration
		speed := uint64(1)
		for start := time.Now(); time.Since(start) < minTime || len(times) < 10; {
			speed = speed%7 + 1 // changes per call: nothing can be hoisted
			t := time.Now()
			if _, err := call(v, speed); err != nil {
				return err
			}
			times = append(times, time.Since(t))
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		median := times[len(times)/2]
		rows = append(rows, row{name, float64(median.Nanoseconds()) / float64(n*reps), len(times)})
	}
	return json.NewEncoder(os.Stdout).Encode(rows)
}
