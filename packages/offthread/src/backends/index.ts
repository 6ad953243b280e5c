/** Which backend serves calls, and why (`offthread doctor` prints this). */
import { loadError, native, nativePath } from './native';
import { wasm, wasmLoadError, wasmPath } from './wasm';

export type BackendName = 'native' | 'wasm' | 'js';

export interface BackendInfo {
  /** The backend async and `auto` calls use: native → wasm → js, first that loads. */
  active: BackendName;
  native: { loaded: boolean; path: string; error: string | null };
  wasm: { loaded: boolean; path: string; error: string | null };
}

export function backendInfo(): BackendInfo {
  const w = wasm();
  return {
    active: native ? 'native' : w ? 'wasm' : 'js',
    native: { loaded: native !== null, path: nativePath, error: loadError },
    wasm: { loaded: w !== null, path: wasmPath, error: wasmLoadError },
  };
}

let warned = false;

/** One line on stderr the first time a fallback is used (never when native loads). */
export function warnFallbackOnce(): void {
  if (warned || native) return;
  warned = true;
  const using = wasm() ? 'WebAssembly' : 'pure JS';
  process.emitWarning(`offthread: native addon unavailable (${loadError}); using ${using}.`, {
    code: 'OFFTHREAD_FALLBACK',
  });
}
