/**
 * `offthread/internal`: the handles the benchmarks and tests need beneath the public
 * API (the addon itself, this thread's WASM instance, the JS reference kernels, test
 * hooks). Not part of the stable API: names here may change in any release.
 *
 * Importing it makes the process load the test build of the addon (packages/offthread/
 * native/test, cargo feature `test-hooks`) when the repo has one, so import it before
 * the first offthread call. Installed packages have only the product addon: the hooks
 * then reject with ERR_BACKEND_UNAVAILABLE.
 */
import './node/install.js';
import { host } from './host.js';
import { preferTestBuild } from './node/host.js';

preferTestBuild();

import type { Pool } from './pool/pool.js';

export { countInsideJs, countInsideJsBitwise, jumpMultiplier, parkMillerOutputs, stateAt } from './kernels/js/pi.js';
export type {
  PiAsyncVariant,
  PiSyncVariant,
  PiVariant,
  PiVariantAsyncOptions,
  PiVariantOptions,
} from './kernels/pi-variants.js';
/**
 * The paper's π variants (research only): `piVariants.estimate(samples, variant,
 * options)`, `estimateSync`, the variant lists, `piChunks`, the `auto` thresholds
 * (AUTO_NATIVE_MIN, AUTO_INLINE_MAX) and the koffi `ffi` row. The public `pi` runs `auto`.
 */
export * as piVariants from './kernels/pi-variants.js';
export { WASM_ERRORS, WASM_EXPORTS, WasmKernels } from './kernels/wasm-client.js';
export { wasmKernels } from './kernels/wasm-sync.js';

/** The native addon's raw binding, or null. */
export function nativeBinding() {
  return host().native();
}

/** Test hook: a job that spins until cancelled (abort/timeout/destroy). */
export function testSpin(pool: Pool, call: { signal?: AbortSignal; timeout?: number } = {}): Promise<never> {
  return pool.run('testSpin', {}, call);
}

/** Test hook: a job whose kernel panics (native) or crashes its worker. */
export function testPanic(pool: Pool): Promise<never> {
  return pool.run('testPanic', {}, {});
}
