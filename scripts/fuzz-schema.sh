#!/usr/bin/env bash
# Fuzzes the schema readers and compiler with cargo-fuzz (libFuzzer, nightly).
#   scripts/fuzz-schema.sh                 # both targets, 60 s each
#   scripts/fuzz-schema.sh read_buffers 600
# Needs: rustup toolchain nightly, `cargo install cargo-fuzz`.
# Seeds: the golden buffers and schemas in tests/fixtures/schema.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=("${1:-read_buffers}")
[[ $# -eq 0 ]] && targets=(read_buffers compile_schema)
seconds="${2:-60}"

for target in "${targets[@]}"; do
  corpus="fuzz/corpus/$target"
  mkdir -p "$corpus"
  if [[ "$target" == read_buffers ]]; then
    for hex in tests/fixtures/schema/golden/*.hex; do
      xxd -r -p "$hex" > "$corpus/$(basename "$hex" .hex).bin"
    done
  else
    cp tests/fixtures/schema/*.km crates/offthread-schema/schemas/*.km "$corpus/"
  fi
  cargo +nightly fuzz run --fuzz-dir fuzz "$target" "$corpus" -- -max_total_time="$seconds"
done
