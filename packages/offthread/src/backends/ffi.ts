/**
 * The paper's `ffi-napi` row: the Rust C ABI (`offthread_pi_count`, exported by the
 * same `.node` file) called through koffi, ffi-napi's maintained successor. koffi is
 * an optional peer dependency; without it the `ffi` variant reports why.
 */
import { makeError } from '../errors';
import { native, nativePath } from './native';

type PiCount = (samples: number, seed: number, method: number) => number;

let piCount: PiCount | null = null;

export function ffiPiCount(): PiCount {
  if (piCount) return piCount;
  if (!native) throw makeError('ERR_BACKEND_UNAVAILABLE', 'the ffi variant needs the native addon');
  let koffi: { load(path: string): { func(signature: string): PiCount } };
  try {
    koffi = require('koffi');
  } catch {
    throw makeError('ERR_BACKEND_UNAVAILABLE', 'the ffi variant needs koffi: npm install koffi');
  }
  piCount = koffi.load(nativePath).func('double offthread_pi_count(double, double, uint32)');
  return piCount;
}
