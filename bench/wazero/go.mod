module offthread/bench/wazero

go 1.25.0

// wazero: the runtime the Karmem paper measured in; pinned so the figures are comparable
// from run to run (go.sum holds the hash).
require github.com/tetratelabs/wazero v1.12.0

require golang.org/x/sys v0.44.0 // indirect
