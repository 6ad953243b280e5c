/** Argument checks of the queued calls: the same rules and codes as the local API's. */
import { describe, makeError } from '../errors.js';
import { MAX_ROUNDS } from '../kernels/md5.js';
import type { Ecc, QrOptions } from '../kernels/qr.js';
import type { Md5IterateJob, QrJob } from './wire.js';

const ECCS: readonly Ecc[] = ['L', 'M', 'Q', 'H'];

export function checkMd5Args(text: unknown, rounds: unknown, start: unknown): Md5IterateJob {
  if (typeof text !== 'string') throw makeError('ERR_INVALID_ARG', `text must be a string, got ${describe(text)}`);
  if (typeof rounds !== 'number') {
    throw makeError('ERR_INVALID_ARG', `rounds must be a number, got ${describe(rounds)}`);
  }
  if (!Number.isInteger(rounds) || rounds < 0 || rounds > MAX_ROUNDS) {
    throw makeError('ERR_INVALID_ROUNDS', `rounds must be an integer from 0 to ${MAX_ROUNDS}, got ${rounds}`);
  }
  if (start !== undefined && (typeof start !== 'string' || !(start === '' || /^[0-9a-f]{32}$/.test(start)))) {
    throw makeError('ERR_INVALID_ARG', 'start must be "" or a 32-character lowercase hex digest');
  }
  return { text, rounds, start: (start as string | undefined) ?? '' };
}

export function checkQrArgs(text: unknown, opts: QrOptions): QrJob {
  if (typeof text !== 'string') throw makeError('ERR_INVALID_ARG', `text must be a string, got ${describe(text)}`);
  const { size = 128, ecc = 'M', margin = 4 } = opts;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > 4096) {
    throw makeError('ERR_INVALID_QR_OPTIONS', `size must be an integer from 1 to 4096 pixels, got ${describe(size)}`);
  }
  if (typeof margin !== 'number' || !Number.isInteger(margin) || margin < 0 || margin > 64) {
    throw makeError(
      'ERR_INVALID_QR_OPTIONS',
      `margin must be an integer from 0 to 64 modules, got ${describe(margin)}`,
    );
  }
  if (!ECCS.includes(ecc))
    throw makeError('ERR_INVALID_QR_OPTIONS', `ecc must be one of L, M, Q, H, got ${describe(ecc)}`);
  return { text, ecc, size, margin };
}
