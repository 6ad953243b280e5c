/**
 * What an engine is to `Pool` (pool.ts): the contract every engine meets, the job kinds
 * engines run (each feature adds its own, below), the statistics shape. The pool knows
 * no engine and no job kind: the kernels feature registers its engines (kernels/engines.ts)
 * and its jobs (kernels/kernels.ts).
 */
import type { Transferable } from '../host.js';
import type { Budget, BudgetStats } from './budget.js';
import type { RunOptions } from './call.js';

/**
 * The jobs engines run, by name: `{ args, result }` of each. Empty here; a feature adds
 * its jobs by declaration merging (`declare module '../pool/engine.js'`), so the pool
 * types them without importing the feature.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the features' declaration merging
export interface JobKinds {}
/** A job kind's name. */
export type JobName = keyof JobKinds & string;
/** What a job of kind `K` takes. */
export type JobArgs<K extends JobName> = JobKinds[K] extends { args: infer A } ? A : never;
/** What a job of kind `K` resolves to. */
export type JobResult<K extends JobName> = JobKinds[K] extends { result: infer R } ? R : never;

/** Latency percentiles in milliseconds. */
export interface LatencyStats {
  p50: number;
  p99: number;
  max: number;
}

/** The engines the kernels feature registers (kernels/engines.ts). */
export type EngineName = 'native' | 'wasm' | 'js';

export interface PoolStats {
  /** 'native': Rust threads; 'wasm' / 'js': worker threads running offthread.wasm / the JS tier. */
  engine: EngineName;
  threads: number;
  /** Accepted, not started. */
  queued: number;
  /** Running their work now (a job whose result is being handed back no longer counts). */
  running: number;
  /** Finished with a result. */
  completed: number;
  /** Finished with an error (kernel error, panic, crashed worker). */
  failed: number;
  /** Cancelled or timed out. */
  cancelled: number;
  /** Time from submit to start (ms). */
  waitTime: LatencyStats;
  /** Time from start to finish (ms). */
  runTime: LatencyStats;
  /** Promises not yet settled on the JS side. */
  pending: number;
  /** The pool's task workers (`tasks()`), once a task has run on it. */
  tasks?: TaskStats;
  /**
   * The run budget every feature of the pool shares: `size` threads (the pool's `threads`)
   * may run work at once; `used` are running or reserved, `waiting` jobs wait for one.
   */
  budget?: BudgetStats;
}

/** The figures of a pool's task workers. */
export interface TaskStats {
  threads: number;
  /** Accepted, not started. */
  queued: number;
  running: number;
  completed: number;
  /** Finished with an error (the task's own, or its worker's death). */
  failed: number;
  /** Aborted or timed out. */
  cancelled: number;
  /** Workers replaced: died (exit, out of memory, an uncaught error) or stopped after ignoring an abort. */
  replaced: number;
}

export interface Engine {
  readonly name: EngineName;
  readonly threads: number;
  run<K extends JobName>(kernel: K, args: JobArgs<K>, call: RunOptions): Promise<JobResult<K>>;
  /** Worker engines: runs on worker `worker` only, after what was queued for it (stream filters). */
  runOn?<K extends JobName>(
    worker: number,
    kernel: K,
    args: JobArgs<K>,
    transfer?: Transferable[],
  ): Promise<JobResult<K>>;
  stats(): PoolStats;
  /** The pool's run budget: a job takes its slots before it runs (pool/budget.ts). */
  useBudget(budget: Budget): void;
  /** Stop accepting; resolve once accepted work has settled, then free the threads. */
  close(): Promise<void>;
  /** Stop accepting; reject what is pending with ERR_POOL_CLOSED; free the threads. */
  destroy(): void;
  /**
   * Nothing pending: free the threads; the next job starts them again (the pool's
   * idleTimeout). False when it cannot yet (ask again later).
   */
  sleep(): boolean;
  /** Called with true when the first job is pending and false when the last settles. */
  onBusy: (busy: boolean) => void;
}

/** Latency percentiles over a bounded window of recent samples (ms). */
export class LatencyWindow {
  readonly #samples: number[] = [];
  #next = 0;

  add(ms: number): void {
    if (this.#samples.length < 4096) this.#samples.push(ms);
    else this.#samples[this.#next++ & 4095] = ms;
  }

  stats(): LatencyStats {
    const s = [...this.#samples].sort((a, b) => a - b);
    if (s.length === 0) return { p50: 0, p99: 0, max: 0 };
    const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
    return { p50: at(0.5), p99: at(0.99), max: s[s.length - 1] as number };
  }
}
