#!/usr/bin/env bash
# Memory-safety check, not part of `npm test` (minutes, nightly Rust): the Rust tests
# and a Node smoke run of the addon, all under AddressSanitizer.
#
#   scripts/asan.sh            # both
#   scripts/asan.sh rust       # cargo tests of kernels, pool and schema only
#   scripts/asan.sh node       # addon + packages/offthread/test/reliability.test.mjs only
#
# Rust: `-Zsanitizer=address` on nightly, with `--target` so build scripts and proc
# macros stay uninstrumented. Node is not built with ASan, so the addon's checks need
# a shared ASan runtime loaded first: gcc's libasan (same shadow layout and ABI, v8, as
# LLVM's) through LD_PRELOAD; override with ASAN_RUNTIME=/path/to/libasan.so. The
# addon and the package's dist/ are copied into a temporary node_modules/offthread,
# so the product build in packages/offthread/native is never replaced. Needs
# `npm run setup` done (dist/ and wasm/).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
target=$(rustc +nightly -vV | sed -n 's/^host: //p')
export CARGO_TARGET_DIR="$root/target/asan"
export RUSTFLAGS="-Zsanitizer=address"
export RUSTDOCFLAGS="-Zsanitizer=address"
cd "$root"

if [[ $what == all || $what == rust ]]; then
  echo "asan: cargo tests (kernels, pool, schema) under AddressSanitizer" >&2
  # Leak checks on: the Rust tests own every allocation they make.
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" \
    cargo +nightly test --release --target "$target" \
    -p offthread-kernels -p offthread-pool -p offthread-schema
fi

if [[ $what == all || $what == node ]]; then
  runtime=${ASAN_RUNTIME:-$(gcc -print-file-name=libasan.so)}
  if [[ ! -e $runtime ]]; then
    echo "asan: no shared ASan runtime (install gcc's libasan, or set ASAN_RUNTIME)" >&2
    exit 1
  fi
  echo "asan: building the addon with AddressSanitizer" >&2
  cargo +nightly build --release --target "$target" -p offthread-node
  pkg="$root/packages/offthread"
  if [[ ! -d $pkg/dist || ! -d $pkg/wasm ]]; then
    echo "asan: run \`npm run setup\` first (needs packages/offthread/dist and wasm)" >&2
    exit 1
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mod="$tmp/node_modules/offthread"
  mkdir -p "$mod/native"
  cp -r "$pkg/package.json" "$pkg/dist" "$pkg/wasm" "$mod/"
  suffix=$(node -p "require('$pkg/dist/backends/native.js').platformSuffix()")
  cp "$CARGO_TARGET_DIR/$target/release/liboffthread_node.so" "$mod/native/offthread.$suffix.node"
  # The test file resolves `offthread` from its own directory: the copy above.
  cp "$pkg/test/reliability.test.mjs" "$tmp/"
  echo "asan: node --test reliability.test.mjs with $runtime preloaded" >&2
  log="$tmp/node.log"
  status=0
  # Node's own allocations are not ours to check for leaks. The quarantine (freed
  # memory kept poisoned) must outlast the repro's ~250 MB of frees (default 256 MB),
  # or the freed batch is unmapped and the read is a plain SIGSEGV, not a report.
  LD_PRELOAD="$runtime" ASAN_OPTIONS="detect_leaks=0:quarantine_size_mb=2048" \
    node --test --test-reporter=spec "$tmp/reliability.test.mjs" >"$log" 2>&1 || status=$?
  cat "$log"
  if grep -q "ERROR: AddressSanitizer" "$log"; then
    echo "asan: AddressSanitizer reported errors:" >&2
    grep -E "ERROR: AddressSanitizer|^ *#[0-9]+ .*offthread|READ of|WRITE of|freed by thread|previously allocated" "$log" >&2 || true
    exit 1
  fi
  if [[ $status -ne 0 ]]; then
    echo "asan: node tests failed (exit $status)" >&2
    exit "$status"
  fi
  loaded=$(LD_PRELOAD="$runtime" ASAN_OPTIONS=detect_leaks=0 \
    node -p "require('$mod/dist/index.js').backendInfo().native.path")
  if [[ $loaded != "$mod/native/offthread.$suffix.node" ]]; then
    echo "asan: the instrumented addon was not the one loaded ($loaded)" >&2
    exit 1
  fi
fi
echo "asan: clean" >&2
