/**
 * `Pool`: where async calls run. It knows no engine and no feature: engines register
 * their factories here (`registerEngine`: the kernels feature's native pool, wasm and JS
 * workers, kernels/engines.ts), and a pool is made with one of them — by default the
 * first registered that is available. Features keep their own per-pool resources in it
 * (`resource`: the tasks feature's workers). Every call takes `{ pool, signal, timeout }`
 * (call.ts) and rejects with the same codes on every engine.
 */
import { describe, makeError } from '../errors.js';
import { host, warnFallbackOnce } from '../host.js';
import { isInstance, toOptions } from '../validate.js';
import { Budget } from './budget.js';
import { checkRunOptions, type RunOptions, raceAbort } from './call.js';
import type { Engine, EngineName, JobArgs, JobName, JobResult, PoolStats } from './engine.js';
import type { ResourceLimits } from './jobs.js';

const POOL_KEYS = ['threads', 'maxQueue', 'nice', 'engine', 'resourceLimits', 'cancelGrace', 'idleTimeout'] as const;
/** `idleTimeout`'s default: threads a pool has not used for this long are let go. */
const IDLE_TIMEOUT_MS = 10_000;
const LIMIT_KEYS = ['maxOldGenerationSizeMb', 'maxYoungGenerationSizeMb', 'codeRangeSizeMb', 'stackSizeMb'] as const;

export type { EngineName, LatencyStats, PoolStats, TaskStats } from './engine.js';

/** How an engine is made, and whether it can be here. */
export interface EngineFactory {
  /** null when it can run here, else why not (for ERR_BACKEND_UNAVAILABLE). */
  unavailable(): string | null;
  /** `maxQueue` 0: unbounded. */
  make(threads: number, maxQueue: number, nice: number): Engine;
}

/** The engines, in the order a pool without `engine` tries them. */
const engines = new Map<string, EngineFactory>();

/** @internal An engine feature registers its engines here (kernels/engines.ts), best first. */
export function registerEngine(name: EngineName, factory: EngineFactory): void {
  engines.set(name, factory);
}

export interface PoolOptions {
  /** Worker threads; default: available parallelism. Integer 1…1024. */
  threads?: number;
  /** Most jobs waiting to start; past it calls reject with ERR_QUEUE_FULL. Default unbounded. */
  maxQueue?: number;
  /**
   * Workers' scheduling niceness (Unix nice, 0–19; default 10): above the event loop's 0,
   * so the loop stays responsive while the pool saturates every core. Native threads and
   * task workers (Linux).
   */
  nice?: number;
  /**
   * 'native' (the addon's Rust pool), 'wasm' (workers running offthread.wasm) or 'js'
   * (workers running the pure-JS tier: π and MD5 only). Default: the first that loads.
   */
  engine?: EngineName;
  /**
   * Limits of each task worker's JS heap and stack (MB; Node's worker `resourceLimits`).
   * A task that passes them fails with ERR_WORKER_DIED and its worker is replaced.
   */
  resourceLimits?: ResourceLimits;
  /**
   * ms a running task has to stop after its call was aborted or timed out (its signal
   * aborts at once); past it the task's worker is replaced. Default 200.
   */
  cancelGrace?: number;
  /**
   * ms the pool's threads stay up with no work; then they stop, and the next call starts
   * them again (a few ms for workers). Default 10,000; `Infinity` keeps them for the
   * pool's life. A pool dropped without `close()` gives its threads back after this
   * long, even if no garbage collection comes. Task modules are imported again on the
   * new workers, so module-level state does not outlive an idle spell.
   */
  idleTimeout?: number;
}

/**
 * @internal What a feature keeps per pool (the tasks feature: its worker threads). Made on
 * first use with the pool's options, closed and destroyed with the pool.
 */
export interface PoolResource {
  /** The key of its figures in `pool.stats()`. */
  readonly name: string;
  stats(): unknown;
  close(): Promise<void>;
  destroy(): void;
  /** Stops its threads while nothing is pending; the next call starts them again (false: not yet). */
  sleep(): boolean;
  onBusy: (busy: boolean) => void;
}

/** @internal The pool's options as a feature's resource is made with them. */
export interface ResourceOptions {
  threads: number;
  /** The pool's run budget: the resource's jobs take a slot before they run. */
  budget: Budget;
  maxQueue: number;
  resourceLimits: ResourceLimits | undefined;
  grace: number;
  nice: number;
}

/** Options every async kernel call accepts. */
export interface CallOptions extends RunOptions {
  /** Run on this pool instead of the default one. */
  pool?: Pool | undefined;
}

function checkPoolInt(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw makeError(
      'ERR_INVALID_POOL_OPTIONS',
      `${name} must be an integer from ${min} to ${max}, got ${describe(value)}`,
    );
  }
  return value;
}

/** Validates `{ pool, signal, timeout }` (every async call; `signal`, `timeout`: call.ts). */
export function checkCallOptions(opts: Partial<CallOptions>): CallOptions {
  const { pool } = opts;
  if (pool !== undefined && !isInstance(pool, Pool)) {
    throw makeError('ERR_INVALID_ARG', 'options.pool must be an offthread Pool');
  }
  // Named, not spread: this runs on every call (a spread copies by the source's keys).
  const { signal, timeout } = checkRunOptions(opts);
  return { pool, signal, timeout };
}

/** Pools with jobs in flight: held here so a pool is never collected while it owes results. */
const busy = new Set<Pool>();
const now = () => performance.now();
/** A pool dropped without close() gives its threads back when it is collected. */
const finalizer = new FinalizationRegistry<{ engine: Engine; resources: Map<symbol, PoolResource> }>((held) => {
  held.engine.destroy();
  for (const r of held.resources.values()) r.destroy();
  host().releaseMemorySoon();
});

/** Asks the engine and each resource to stop their threads; false if one cannot yet. */
function sleepAll(held: { engine: Engine; resources: Map<symbol, PoolResource> }): boolean {
  let slept = held.engine.sleep();
  for (const r of held.resources.values()) slept = r.sleep() && slept;
  host().releaseMemorySoon();
  return slept;
}

/** The first registered engine that can run here (the last one if none says so). */
function defaultEngine(): EngineName {
  let last: string | undefined;
  for (const [name, factory] of engines) {
    last = name;
    if (factory.unavailable() === null) return name as EngineName;
  }
  if (last === undefined) throw makeError('ERR_BACKEND_UNAVAILABLE', 'no engine is registered with the pool');
  return last as EngineName;
}

/** The run budget of the default pool (and of its successors) and of guest hosts. */
let sharedBudget: Budget | undefined;
/** Set while `defaultPool` makes a pool: it takes the shared budget instead of its own. */
let adopting: Budget | undefined;

/**
 * @internal The budget the default pool runs on, shared with `guests.load` hosts: so by
 * default every feature together runs at most the host's cores at once.
 */
export function defaultBudget(): Budget {
  sharedBudget ??= new Budget(host().defaultThreads());
  return sharedBudget;
}

export class Pool {
  readonly #engine: Engine;
  /** How many of its threads run work at once, across the engine and the resources. */
  readonly #budget: Budget;
  readonly #maxQueue: number;
  readonly #resources = new Map<symbol, PoolResource>();
  readonly #resourceOptions: ResourceOptions;
  readonly #idleTimeout: number;
  #state: 'open' | 'closed' | 'destroyed' = 'open';
  /** The engine and the resources with work pending (each reports its own edges). */
  #busySources = 0;
  /** Streams holding state on one worker: the threads must not stop under them. */
  #holds = 0;
  #lastBusy = 0;
  #idleTimer = false;

  constructor(options?: PoolOptions) {
    const opts = toOptions<PoolOptions>(options, POOL_KEYS, 'pool options');
    const threads =
      opts.threads === undefined ? host().defaultThreads() : checkPoolInt(opts.threads, 'threads', 1, 1024);
    const maxQueue =
      opts.maxQueue === undefined || opts.maxQueue === Number.POSITIVE_INFINITY
        ? 0
        : checkPoolInt(opts.maxQueue, 'maxQueue', 1, 2 ** 32 - 1);
    this.#maxQueue = maxQueue === 0 ? Number.POSITIVE_INFINITY : maxQueue;
    const nice = opts.nice === undefined ? 10 : checkPoolInt(opts.nice, 'nice', 0, 19);
    const cancelGrace =
      opts.cancelGrace === undefined ? 200 : checkPoolInt(opts.cancelGrace, 'cancelGrace', 0, 2 ** 31 - 1);
    this.#idleTimeout =
      opts.idleTimeout === undefined
        ? IDLE_TIMEOUT_MS
        : opts.idleTimeout === Number.POSITIVE_INFINITY
          ? Number.POSITIVE_INFINITY
          : checkPoolInt(opts.idleTimeout, 'idleTimeout', 0, 2 ** 31 - 1);
    this.#budget = adopting ?? new Budget(threads);
    this.#resourceOptions = {
      threads,
      budget: this.#budget,
      maxQueue: this.#maxQueue,
      resourceLimits: checkLimits(opts.resourceLimits),
      grace: cancelGrace,
      nice,
    };
    const engine = opts.engine ?? defaultEngine();
    if (opts.engine === undefined && engine !== engines.keys().next().value) warnFallbackOnce();
    this.#engine = makeEngine(engine, threads, maxQueue, nice);
    this.#engine.useBudget(this.#budget);
    this.#engine.onBusy = busyEdges(new WeakRef(this));
    finalizer.register(this, { engine: this.#engine, resources: this.#resources }, this);
  }

  /** @internal A feature's per-pool resource, made on first use (the tasks feature's workers). */
  resource<T extends PoolResource>(key: symbol, make: (options: ResourceOptions) => T): T {
    let r = this.#resources.get(key) as T | undefined;
    if (r) return r;
    if (this.#state !== 'open') throw makeError('ERR_POOL_CLOSED', `the pool is ${this.#state}`);
    r = make(this.#resourceOptions);
    r.onBusy = busyEdges(new WeakRef(this));
    this.#resources.set(key, r);
    return r;
  }

  /** @internal An edge of one source's busy state (the engine's or a resource's). */
  _busyEdge(on: boolean): void {
    if (on) {
      if (this.#busySources++ === 0) busy.add(this);
    } else if (--this.#busySources === 0) {
      busy.delete(this);
      this.#lastBusy = now();
      this.#armIdle();
    }
  }

  /**
   * @internal Keeps the threads up until the returned release is called (a stream whose
   * state lives on one worker). It does not keep the process alive.
   */
  hold(): () => void {
    this.#holds++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (--this.#holds === 0 && this.#busySources === 0) {
        this.#lastBusy = now();
        this.#armIdle();
      }
    };
  }

  /**
   * One timer per idle spell, not one per call: it checks when the pool was last busy
   * and waits out the rest. It reaches the pool through a WeakRef and does not keep the
   * process alive, so a dropped pool is still collected (or stopped here, whichever
   * comes first).
   */
  #armIdle(delay = this.#idleTimeout): void {
    if (this.#idleTimer || this.#idleTimeout === Number.POSITIVE_INFINITY || this.#state !== 'open') return;
    this.#idleTimer = true;
    const self = new WeakRef(this);
    // The timer holds what has threads (not the pool): a pool collected before its timer
    // fires stops them here, not when V8 gets round to its finalizer (1,000 dropped `js`
    // pools: 110 threads and 950 MiB still up 60 s after the last call, gone at a GC).
    const held = { engine: this.#engine, resources: this.#resources };
    const timer = setTimeout(() => {
      const pool = self.deref();
      if (pool) pool.#onIdleTimer();
      else sleepAll(held);
    }, delay);
    (timer as { unref?: () => void }).unref?.();
  }

  #onIdleTimer(): void {
    this.#idleTimer = false;
    if (this.#busySources > 0 || this.#holds > 0 || this.#state !== 'open') return;
    const left = this.#lastBusy + this.#idleTimeout - now();
    if (left > 0) {
      this.#armIdle(left);
      return;
    }
    if (!sleepAll({ engine: this.#engine, resources: this.#resources })) this.#armIdle();
  }

  /** Threads (native) or workers this pool runs on. */
  /** Most jobs that may wait to start (`Infinity` when unbounded): with `stats().queued`, admission control. */
  get maxQueue(): number {
    return this.#maxQueue;
  }

  get threads(): number {
    return this.#engine.threads;
  }

  /** Which engine runs this pool's jobs. */
  get engine(): EngineName {
    return this.#engine.name;
  }

  /** Whether the pool still accepts calls. */
  get closed(): boolean {
    return this.#state !== 'open';
  }

  /** @internal Runs one kernel job (the facades validate arguments first). */
  run<K extends JobName>(kernel: K, args: JobArgs<K>, call: RunOptions): Promise<JobResult<K>> {
    if (call.signal?.aborted) {
      return Promise.reject(makeError('ERR_ABORTED', 'The operation was aborted', call.signal.reason));
    }
    return this.#engine.run(kernel, args, call);
  }

  /**
   * @internal Runs one kernel job on worker `worker` of a worker engine, after the jobs
   * queued for that worker before it (stream filters: a stream's state lives in one worker).
   */
  runOn<K extends JobName>(
    worker: number,
    kernel: K,
    args: JobArgs<K>,
    transfer?: Transferable[],
  ): Promise<JobResult<K>> {
    if (!this.#engine.runOn) {
      return Promise.reject(makeError('ERR_BACKEND_UNAVAILABLE', `the ${this.#engine.name} engine has no workers`));
    }
    return this.#engine.runOn(worker, kernel, args, transfer);
  }

  /** @internal Rejects with ERR_POOL_CLOSED once the pool is closed (for calls small enough to run inline). */
  assertOpen(): void {
    if (this.#state !== 'open') throw makeError('ERR_POOL_CLOSED', `the pool is ${this.#state}`);
  }

  /** A trivial job returning `value`: measures the pool's round trip. */
  echo(value: number, call: RunOptions = {}): Promise<number> {
    try {
      if (typeof value !== 'number') {
        throw makeError('ERR_INVALID_ARG', `value must be a number, got ${describe(value)}`);
      }
      return this.run('echo', { value }, checkCallOptions(toOptions<CallOptions>(call, ['signal', 'timeout'])));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  stats(): PoolStats {
    const stats = this.#engine.stats() as PoolStats & Record<string, unknown>;
    for (const r of this.#resources.values()) stats[r.name] = r.stats();
    stats.budget = this.#budget.stats();
    return stats;
  }

  /** Stops accepting jobs; resolves once every accepted job has settled. */
  close(): Promise<void> {
    if (this.#state === 'open') this.#state = 'closed';
    finalizer.unregister(this);
    return Promise.all([this.#engine.close(), ...[...this.#resources.values()].map((r) => r.close())]).then(() => {});
  }

  /** Stops accepting jobs and cancels the rest: their promises reject with ERR_POOL_CLOSED. */
  destroy(): Promise<void> {
    this.#state = 'destroyed';
    finalizer.unregister(this);
    this.#engine.destroy();
    for (const r of this.#resources.values()) r.destroy();
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** @internal The engine, for test hooks (`_testSpin`, crash injection). */
  get _engine(): Engine {
    return this.#engine;
  }
}

/** The busy callback an engine or resource reports to; a WeakRef, as the finalizer holds the engine. */
function busyEdges(self: WeakRef<Pool>): (on: boolean) => void {
  return (on) => self.deref()?._busyEdge(on);
}

function checkLimits(limits: unknown): ResourceLimits | undefined {
  if (limits === undefined) return undefined;
  const o = toOptions<ResourceLimits>(limits, LIMIT_KEYS, 'resourceLimits');
  for (const key of LIMIT_KEYS) if (o[key] !== undefined) checkPoolInt(o[key], `resourceLimits.${key}`, 1, 2 ** 20);
  return o;
}

function makeEngine(name: EngineName, threads: number, maxQueue: number, nice: number): Engine {
  const factory = engines.get(name);
  if (!factory) {
    const names = [...engines.keys()].map((n) => `'${n}'`);
    const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}` : names.join('');
    throw makeError('ERR_INVALID_POOL_OPTIONS', `engine must be ${list}, got ${describe(name)}`);
  }
  const why = factory.unavailable();
  if (why !== null) throw makeError('ERR_BACKEND_UNAVAILABLE', `the ${name} engine is unavailable: ${why}`);
  return factory.make(threads, maxQueue, nice);
}

let shared: Pool | undefined;

/**
 * The pool async calls use when no `pool` is given (created on first use, and again
 * after it was closed or destroyed: calls already made on the old one end with it). One made
 * while a browser's offthread.wasm still loads takes the JS tier: it is replaced once
 * the load has settled, so an early `defaultPool()` does not keep the page off WASM.
 */
export function defaultPool(): Pool {
  // A closed or destroyed default pool is replaced: one caller's `defaultPool().close()`
  // must not fail every later call in the process that relies on the default (issue 30).
  if (shared && !shared.closed) return shared;
  // Its successors share its budget: calls still finishing on a closed one count too.
  adopting = defaultBudget();
  let made: Pool;
  try {
    made = new Pool();
  } finally {
    adopting = undefined;
  }
  shared = made;
  host()
    .loading()
    ?.then(
      () => {
        if (shared === made) resetDefaultPool();
      },
      () => {},
    );
  return made;
}

/**
 * The pool a call runs on: `call.pool` or the default one. The default one is made only
 * once the host has settled what it runs on (a browser's offthread.wasm still loading),
 * so a call made right after import gets the wasm engine, not the JS tier for good.
 */
export function poolOf(call: CallOptions): Pool | Promise<Pool> {
  if (call.pool) return call.pool;
  const loading = host().loading();
  return loading ? loading.then(defaultPool) : defaultPool();
}

/** Runs `kernel` on the call's pool (no extra tick when the pool is already settled). */
export function runOn<K extends JobName>(call: CallOptions, kernel: K, args: JobArgs<K>): Promise<JobResult<K>> {
  const pool = poolOf(call);
  return pool instanceof Pool ? pool.run(kernel, args, call) : pool.then((p) => p.run(kernel, args, call));
}

/** Closes the default pool (its calls finish); the next call makes a new one. For `init()`. */
export function resetDefaultPool(): void {
  const old = shared;
  shared = undefined;
  void old?.close();
}

/**
 * Runs one kernel per argument set as one call: resolves their results in order,
 * rejects as soon as one fails (and cancels the rest), honours abort and timeout.
 */
export async function runAll<K extends JobName>(
  pool: Pool,
  kernel: K,
  list: JobArgs<K>[],
  call: RunOptions,
): Promise<JobResult<K>[]> {
  if (list.length === 1) return [await pool.run(kernel, list[0] as JobArgs<K>, call)];
  const siblings = new AbortController();
  const parts = list.map((args) => pool.run(kernel, args, { signal: siblings.signal }));
  try {
    return await raceAbort(Promise.all(parts), call);
  } catch (err) {
    siblings.abort(err);
    for (const p of parts) p.catch(() => {}); // already reported through `err`
    throw err;
  }
}
