/**
 * What a queued job carries. Arguments and results are messages of the queue schema
 * (crates/offthread-schema/schemas/queue.km, generated into src/schema/generated/queue.ts).
 * BullMQ JSON-encodes job data and return values, so bytes cannot ride in them at their
 * size: a payload up to INLINE_MAX bytes rides inline as base64; a larger one is a plain
 * Redis string beside the job (binary-safe: n bytes cost n plus the key), named in the data.
 */
import type { Redis } from 'ioredis';
import { type ErrorCode, errorRegistry, makeError } from '../errors.js';
import type { Ecc } from '../kernels/qr.js';
import {
  BytesResultReader,
  decodeDigestResult,
  decodeMd5IterateArgs,
  decodePiArgs,
  decodePiResult,
  decodeQrArgs,
  encodeBytesResult,
  encodeDigestResult,
  encodeMd5HexArgs,
  encodeMd5IterateArgs,
  encodePiArgs,
  encodePiResult,
  encodeQrArgs,
  Md5HexArgsReader,
} from '../schema/generated/queue.js';

/** BullMQ job names: one per kernel form the workers run. */
export type JobName = 'pi' | 'md5.iterate' | 'md5.hex' | 'qr.png';
export const JOB_NAMES: readonly JobName[] = ['pi', 'md5.iterate', 'md5.hex', 'qr.png'];

/** Payloads up to this size ride inside the job's JSON (base64); larger ones in a blob key. */
export const INLINE_MAX = 1024;

/** A job's data as BullMQ stores it (JSON). */
export interface JobData {
  /** Wire version. */
  v: 1;
  /** The argument message, base64 (small payloads). */
  b?: string;
  /** The Redis key holding the argument message (large payloads). */
  k?: string;
  /** Deadline, ms since the epoch (the caller's `timeout`): workers stop the kernel then. */
  dl?: number;
  /** MD5 checkpoint `[roundsDone, digest]`: a retried job continues from there. */
  ck?: [number, string];
  /** Task jobs: the content hash of the producer's module file (queue/task-wire.ts). */
  h?: string;
  /** Task jobs: the module version the producer declared. */
  mv?: string;
}

/** A job's return value as BullMQ stores it (JSON): the result message, inline or in a blob. */
export interface JobReturn {
  b?: string;
  k?: string;
}

const ECCS: readonly Ecc[] = ['L', 'M', 'Q', 'H'];

export interface PiJob {
  first: number;
  count: number;
  seed: number;
}
export interface Md5IterateJob {
  text: string;
  rounds: number;
  start: string;
}
export interface QrJob {
  text: string;
  ecc: Ecc;
  size: number;
  margin: number;
}

export const encode = {
  pi: (a: PiJob) => encodePiArgs(a),
  md5Iterate: (a: Md5IterateJob) => encodeMd5IterateArgs(a),
  md5Hex: (data: Uint8Array) => encodeMd5HexArgs({ data }),
  qr: (a: QrJob) => encodeQrArgs({ text: a.text, ecc: ECCS.indexOf(a.ecc), size: a.size, margin: a.margin }),
  inside: (inside: number) => encodePiResult({ inside }),
  digest: (digest: string) => encodeDigestResult({ digest }),
  bytes: (bytes: Uint8Array) => encodeBytesResult({ bytes }),
};

/** Runs a decoder; a malformed message is ERR_QUEUE_PAYLOAD (never a crash). */
function read<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw makeError('ERR_QUEUE_PAYLOAD', `${what}: not a valid message of the queue schema`, err);
  }
}

export const decode = {
  pi: (b: Uint8Array): PiJob =>
    read('pi arguments', () => {
      const a = decodePiArgs(b);
      return { first: Number(a.first), count: Number(a.count), seed: Number(a.seed) };
    }),
  md5Iterate: (b: Uint8Array): Md5IterateJob => read('md5.iterate arguments', () => decodeMd5IterateArgs(b)),
  md5Hex: (b: Uint8Array): Uint8Array => read('md5.hex arguments', () => Md5HexArgsReader.fromBytes(b).data()),
  qr: (b: Uint8Array): QrJob =>
    read('qr arguments', () => {
      const a = decodeQrArgs(b);
      const ecc = ECCS[a.ecc];
      if (ecc === undefined) throw new RangeError(`ecc index ${a.ecc}`);
      return { text: a.text, ecc, size: a.size, margin: a.margin };
    }),
  inside: (b: Uint8Array): number => read('pi result', () => Number(decodePiResult(b).inside)),
  digest: (b: Uint8Array): string => read('digest result', () => decodeDigestResult(b).digest),
  bytes: (b: Uint8Array): Uint8Array => read('bytes result', () => BytesResultReader.fromBytes(b).bytes()),
};

/** The base64 form of a small message. */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

export function fromBase64(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'base64'));
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Padded standard base64, as toBase64 writes it (Buffer's decoder skips anything else silently). */
export function isBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64.test(text);
}

/**
 * A blob's bytes. Redis's own refusals become typed errors: a key of another type
 * (WRONGTYPE) is the job's fault, ERR_QUEUE_PAYLOAD, the same on every worker; any other
 * (loading, out of memory) is Redis's, ERR_QUEUE_UNAVAILABLE, worth another attempt.
 */
export async function getBlob(db: Redis, key: string, what: string): Promise<Buffer> {
  let bytes: Buffer | null;
  try {
    bytes = await db.getBuffer(key);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (message.startsWith('WRONGTYPE')) {
      throw makeError('ERR_QUEUE_PAYLOAD', `${what}: key ${key} is not a string (${message})`, err);
    }
    throw makeError('ERR_QUEUE_UNAVAILABLE', `${what}: Redis failed GET ${key}: ${message}`, err);
  }
  if (bytes === null) throw makeError('ERR_QUEUE_PAYLOAD', `${what} is gone (blob ${key} expired or was deleted)`);
  return bytes;
}

/**
 * A worker's failure as BullMQ keeps it (`failedReason`): `CODE: message`. Errors with a
 * registry code come back to the caller as the same typed error.
 */
export function reasonOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return typeof code === 'string' && code in errorRegistry ? `${code}: ${message}` : message;
}

export function errorFromReason(reason: string): Error & { code: ErrorCode } {
  const m = /^(ERR_[A-Z_]+): ([\s\S]*)$/.exec(reason);
  if (m?.[1] && m[1] in errorRegistry) return makeError(m[1] as ErrorCode, m[2] ?? '');
  return makeError('ERR_QUEUE_JOB_FAILED', `the queued job failed: ${reason}`);
}
