/**
 * The paper's `ffi-napi` row: the Rust C ABI (`offthread_pi_count`, exported by the
 * same `.node` file) called through koffi, ffi-napi's maintained successor. koffi is
 * an optional peer dependency; without it the `ffi` variant reports why.
 */
import { makeError } from '../errors.js';

type PiCount = (samples: number, seed: number, method: number) => number;

let piCount: PiCount | null = null;

/** The C-ABI π count of the addon at `path` (null: the addon did not load). */
export function ffiPiCount(path: string | null): PiCount {
  if (piCount) return piCount;
  if (!path) throw makeError('ERR_BACKEND_UNAVAILABLE', 'the ffi variant needs the native addon');
  let koffi: { load(path: string): { func(signature: string): PiCount } };
  try {
    koffi = require('koffi');
  } catch {
    throw makeError('ERR_BACKEND_UNAVAILABLE', 'the ffi variant needs koffi: npm install koffi');
  }
  piCount = koffi.load(path).func('double offthread_pi_count(double, double, uint32)');
  return piCount;
}
