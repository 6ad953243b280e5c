/**
 * Loads the native addon (napi-rs). Failure is not fatal: `loadError` says why and the
 * package falls back to WASM, then pure JS (see backends/index.ts).
 */
import { join } from 'node:path';
import type * as Binding from '../../native/binding';

export type NativeBinding = typeof Binding;

/** napi-rs platform suffix, e.g. `linux-x64-gnu`. */
export function platformSuffix(): string {
  const { platform, arch } = process;
  if (platform !== 'linux') return `${platform}-${arch}`;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return `${platform}-${arch}-${report?.header?.glibcVersionRuntime ? 'gnu' : 'musl'}`;
}

export const nativePath = join(__dirname, '..', '..', 'native', `offthread.${platformSuffix()}.node`);

export let native: NativeBinding | null = null;
export let loadError: string | null = null;

if (process.env.OFFTHREAD_BACKEND && process.env.OFFTHREAD_BACKEND !== 'native') {
  loadError = `disabled by OFFTHREAD_BACKEND=${process.env.OFFTHREAD_BACKEND}`;
} else {
  try {
    native = require(nativePath) as NativeBinding;
  } catch (err) {
    loadError =
      `cannot load ${nativePath}: ${(err as Error).message.split('\n')[0]}. ` +
      'Build it with `npm run setup` (needs Rust: https://rustup.rs).';
  }
}
