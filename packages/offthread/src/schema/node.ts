// Node's way to find the schema compiler: wasm/offthread-schema.wasm next to dist/
// (setup copies it there; the package ships it). Everything else is in ./compile.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeError } from '../errors';
import { type CompileOptions, type CompileResult, compileWith } from './compile';

let cached: WebAssembly.Module | undefined;

/** The compiled compiler module (read and compiled once). */
export function compilerModule(): WebAssembly.Module {
  if (cached === undefined) {
    const path = join(__dirname, '..', '..', 'wasm', 'offthread-schema.wasm');
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = new Uint8Array(readFileSync(path));
    } catch (err) {
      throw makeError('ERR_BACKEND_UNAVAILABLE', `schema compiler not found at ${path}`, err);
    }
    cached = new WebAssembly.Module(bytes);
  }
  return cached;
}

/** Compiles a `.km` schema to TS and/or Rust; schema errors come back as `diagnostics`. */
export function compile(source: string, opts?: CompileOptions): CompileResult {
  return compileWith(compilerModule(), source, opts);
}
