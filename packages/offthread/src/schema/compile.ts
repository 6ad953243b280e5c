// The schema compiler (crates/offthread-schema-wasm, the same Rust code as the
// `offthread-schema` CLI) driven from JS: no Rust toolchain, any host. This file is
// host-neutral: the host supplies the compiled module (Node reads it from the package;
// a browser loads it in `init({ schemaCompiler })`).
import { makeError } from '../errors.js';
import { host, type WebAssembly } from '../host.js';

export interface CompileOptions {
  /** The schema's name in diagnostics (`--> file:line:col`). Default `schema.km`. */
  fileName?: string;
  /** Base name of the generated files. Default: `fileName` without directory and extension. */
  stem?: string;
  /** Emit TypeScript. Default true. */
  ts?: boolean;
  /** Emit Rust. Default true. */
  rust?: boolean;
  /** Import specifier of the TS runtime. Default `'offthread/schema'`. */
  runtimeImport?: string;
  /** `use` path of the Rust runtime. Default `::offthread_schema_rt`. */
  rustRuntime?: string;
  /**
   * Also emit `<stem>_guest.rs`: a Rust guest's bindings for the schema's interfaces,
   * on top of the `offthread-guest` crate (docs/guests.md). Default false.
   */
  rustGuest?: boolean;
  /** Path of the schema's Rust module as the guest module sees it. Default `super::schema`. */
  guestSchema?: string;
  /**
   * Also emit C readers and writers for C guests: `<stem>.h` and the runtime it
   * includes, `offthread_rt.h` (docs/guests.md, "C guests"). Default false.
   */
  c?: boolean;
}

export interface CompiledFile {
  lang: 'ts' | 'rust' | 'rust-guest' | 'c';
  /** Relative to the language's output directory: `<stem>.ts` / `<stem>.rs` / `<stem>_guest.rs` / `<stem>.h`, `offthread_rt.h`. */
  path: string;
  contents: string;
}

/** A schema error (codes E0001…, docs/schema-format.md). */
export interface SchemaDiagnostic {
  code: string;
  message: string;
  help: string;
  /** 1-based line and column of the span start. */
  line: number;
  column: number;
  /** Byte range in the UTF-8 source. */
  start: number;
  end: number;
}

export interface CompileResult {
  /** Empty when there are diagnostics. */
  files: CompiledFile[];
  diagnostics: SchemaDiagnostic[];
  /** The diagnostics as the CLI prints them (rustc's shape); '' when none. */
  rendered: string;
}

interface Exports {
  memory: WebAssembly.Memory;
  alloc(len: number): number;
  dealloc(ptr: number, len: number): void;
  compile(src: number, srcLen: number, opts: number, optsLen: number): number;
  result_ptr(): number;
}

const instances = new WeakMap<WebAssembly.Module, Exports>();

/**
 * Memory an idle instance may keep. wasm memory never shrinks: after a compile that
 * grew it past this (a schema near the limits), the instance is dropped so the next
 * compile starts small rather than the process holding the peak for good.
 */
const RETAINED_MEMORY = 64 << 20;

function instance(module: WebAssembly.Module): Exports {
  let e = instances.get(module);
  if (e === undefined) {
    e = new WebAssembly.Instance(module, {}).exports as unknown as Exports;
    instances.set(module, e);
  }
  return e;
}

function optionText(name: string, value: unknown): string {
  if (typeof value !== 'string' || /[\r\n]/.test(value))
    throw makeError('ERR_INVALID_ARG', `schema.compile: ${name} must be a string without line breaks`);
  return value;
}

function flag(name: string, value: unknown, fallback = '1'): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw makeError('ERR_INVALID_ARG', `schema.compile: ${name} must be a boolean`);
  return value ? '1' : '0';
}

/** The `key=value` lines the wasm module reads (crates/offthread-schema-wasm). */
function optionLines(opts: CompileOptions): string {
  const file = optionText('fileName', opts.fileName ?? 'schema.km');
  const stem = optionText('stem', opts.stem ?? (file.split(/[\\/]/).pop() ?? file).replace(/\.[^.]*$/, ''));
  const lines = [
    `file=${file}`,
    `stem=${stem || 'schema'}`,
    `ts=${flag('ts', opts.ts)}`,
    `rust=${flag('rust', opts.rust)}`,
    `rust_guest=${flag('rustGuest', opts.rustGuest, '0')}`,
    `c=${flag('c', opts.c, '0')}`,
  ];
  if (opts.runtimeImport !== undefined) lines.push(`ts_runtime=${optionText('runtimeImport', opts.runtimeImport)}`);
  if (opts.rustRuntime !== undefined) lines.push(`rust_runtime=${optionText('rustRuntime', opts.rustRuntime)}`);
  if (opts.guestSchema !== undefined) lines.push(`guest_schema=${optionText('guestSchema', opts.guestSchema)}`);
  return lines.join('\n');
}

/** Compiles `source` with the compiler in `module`. Schema errors are returned, not thrown. */
export function compileWith(module: WebAssembly.Module, source: string, opts: CompileOptions = {}): CompileResult {
  if (typeof source !== 'string') throw makeError('ERR_INVALID_ARG', 'schema.compile: source must be a string');
  if (opts === null || typeof opts !== 'object')
    throw makeError('ERR_INVALID_ARG', 'schema.compile: options must be an object');
  const e = instance(module);
  const enc = new TextEncoder();
  const src = enc.encode(source);
  const opt = enc.encode(optionLines(opts));
  let json: string | undefined;
  try {
    const sp = e.alloc(src.length);
    const op = e.alloc(opt.length);
    new Uint8Array(e.memory.buffer, sp, src.length).set(src);
    new Uint8Array(e.memory.buffer, op, opt.length).set(opt);
    const len = e.compile(sp, src.length, op, opt.length);
    // A fresh view: compiling may have grown (and so replaced) the memory buffer.
    if (len >= 0) json = new TextDecoder().decode(new Uint8Array(e.memory.buffer, e.result_ptr(), len));
    e.dealloc(sp, src.length);
    e.dealloc(op, opt.length);
  } catch (err) {
    // A trap (stack overflow, out of memory, a panic) can leave the instance's stack
    // pointer and allocator mid-update: every later call on it would fail. Drop it; the
    // next compile gets a fresh one.
    instances.delete(module);
    const why = err instanceof Error ? err.message : String(err);
    throw makeError('ERR_SCHEMA_COMPILER', `schema.compile: the compiler failed (${why}); not a schema error`, err);
  } finally {
    if (e.memory.buffer.byteLength > RETAINED_MEMORY) instances.delete(module);
  }
  if (json === undefined) throw makeError('ERR_INVALID_ARG', 'schema.compile: source is not valid UTF-8');
  return JSON.parse(json) as CompileResult;
}

/**
 * Compiles a `.km` schema to TS and/or Rust (and a Rust guest's bindings); schema errors come back as `diagnostics`.
 * Node loads the compiler from the package; a browser passes it to `init({ schemaCompiler })`.
 */
export function compile(source: string, opts?: CompileOptions): CompileResult {
  return compileWith(host().schemaCompiler(), source, opts);
}
