// Command wazero-layout times the layout experiment's variants inside wazero, the Go
// WebAssembly runtime the Karmem paper's measurements ran in (its §5.1.3: "results were
// obtained using Go"). It takes either of two modules: offthread's WASM build (export
// layout_run, bench/experiments/layout.mjs) or the paper's Zig code built to wasm32
// (exports init, checksum, run_reps: bench/zig-layout, bench/experiments/layout-zig.mjs).
// It prints one JSON array of {"variant", "nsPerUpdate", "calls"} on stdout.
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
	"github.com/tetratelabs/wazero/api"
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
	// offthread.wasm imports offthread.interrupted() -> i32, how a running kernel asks its
	// host whether to stop (crates/offthread-wasm/src/registry.rs); nothing stops here.
	_, err = rt.NewHostModuleBuilder("offthread").
		NewFunctionBuilder().
		WithFunc(func() int32 { return 0 }).
		Export("interrupted").
		Instantiate(ctx)
	if err != nil {
		return err
	}
	mod, err := rt.Instantiate(ctx, bin)
	if err != nil {
		return err
	}
	call, check, err := runner(ctx, mod, n, reps)
	if err != nil {
		return fmt.Errorf("%s: %w", wasmPath, err)
	}
	rows := make([]row, 0, len(variants))
	for v, name := range variants {
		if err := check(v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		var times []time.Duration
		speed := uint64(1)
		for start := time.Now(); time.Since(start) < minTime || len(times) < 10; {
			speed = speed%7 + 1 // changes per call: nothing can be hoisted
			t := time.Now()
			if err := call(v, speed); err != nil {
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

// runner returns the timed call (variant v, `reps` passes adding speed) and a check that
// variant v computes what the others do, for whichever ABI the module exports.
func runner(ctx context.Context, mod api.Module, n, reps uint64) (func(int, uint64) error, func(int) error, error) {
	if layoutRun := mod.ExportedFunction("layout_run"); layoutRun != nil {
		// offthread.wasm: layout_run(variant, n, reps, speed) builds its arrays once per n
		// and returns a checksum of the distances after the runs.
		run := func(v int, r, speed uint64) (uint64, error) {
			out, err := layoutRun.Call(ctx, uint64(v), n, r, speed)
			if err != nil {
				return 0, err
			}
			return out[0], nil
		}
		expected, err := run(0, reps, 3)
		if err != nil {
			return nil, nil, err
		}
		call := func(v int, speed uint64) error { _, err := run(v, reps, speed); return err }
		check := func(v int) error {
			if got, err := run(v, reps, 3); err != nil || got != expected {
				return fmt.Errorf("checksum %d, want %d (%v)", got, expected, err)
			}
			return nil
		}
		return call, check, nil
	}
	initFn, checksum, runReps := mod.ExportedFunction("init"), mod.ExportedFunction("checksum"), mod.ExportedFunction("run_reps")
	if initFn == nil || checksum == nil || runReps == nil {
		return nil, nil, fmt.Errorf("exports neither layout_run nor init, checksum and run_reps")
	}
	// The Zig module: init(n, runtime stride 2) allocates every layout once; run_reps
	// updates in place, so a check compares the layout's sum before and after 3 more.
	if out, err := initFn.Call(ctx, n, 2); err != nil || out[0] != 0 {
		return nil, nil, fmt.Errorf("init failed (%v)", err)
	}
	call := func(v int, speed uint64) error { _, err := runReps.Call(ctx, uint64(v), reps, speed); return err }
	sum := func(layout uint64) (uint64, error) {
		out, err := checksum.Call(ctx, layout)
		if err != nil {
			return 0, err
		}
		return out[0], nil
	}
	check := func(v int) error {
		// The layout each variant updates: 0 AoS (native, fixed, stride, fixed+SIMD), 1 SoA, 2 AoP.
		layout := uint64(2)
		if v < 4 {
			layout = 0
		} else if v < 6 {
			layout = 1
		}
		before, err := sum(layout)
		if err != nil {
			return err
		}
		if _, err := runReps.Call(ctx, uint64(v), 1, 3); err != nil {
			return err
		}
		after, err := sum(layout)
		if err != nil {
			return err
		}
		if want := uint32(before + 3*n); uint32(after) != want {
			return fmt.Errorf("checksum %d, want %d", after, want)
		}
		return nil
	}
	return call, check, nil
}
