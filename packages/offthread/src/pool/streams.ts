/**
 * Streamed results: a job whose function returns an iterator (an async generator, a
 * generator) sends its items one message each, as the caller asks for them — back-pressure
 * by credit: the caller grants WINDOW items, and more as it consumes them, so a slow
 * consumer never has more than WINDOW items buffered and the worker's generator is paused
 * (not run ahead) meanwhile. Breaking out of `for await` returns the worker's generator
 * (its `finally` blocks run) and frees the worker.
 */

/** Items a caller lets a worker send ahead of what it consumed. */
export const WINDOW = 16;

/** Whether a job's result is to be streamed. */
export function isIterator(value: unknown): value is AsyncIterator<unknown> | Iterator<unknown> {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<PropertyKey, unknown>;
  if (typeof v.next !== 'function') return false;
  const tag = Object.prototype.toString.call(value);
  return typeof v[Symbol.asyncIterator] === 'function' || tag === '[object Generator]';
}

/** The worker's side: pulls the job's iterator as credit arrives. */
export class StreamPump {
  readonly #it: AsyncIterator<unknown> | Iterator<unknown>;
  readonly #send: (value: unknown) => void;
  readonly #end: (err: unknown, value?: unknown) => void;
  #credit = 0;
  #running = false;
  #ended = false;

  /** `send` posts an item (and throws if it cannot cross); `end` reports the return value or a failure, once. */
  constructor(
    it: AsyncIterator<unknown> | Iterator<unknown>,
    send: (value: unknown) => void,
    end: (err: unknown, value?: unknown) => void,
  ) {
    this.#it = it;
    this.#send = send;
    this.#end = end;
  }

  pull(n: number): void {
    this.#credit += n;
    void this.#run();
  }

  /** The caller stopped (break, abort): return the iterator so its cleanup runs. */
  cancel(): void {
    if (this.#ended) return;
    this.#ended = true;
    let returned: unknown;
    try {
      returned = this.#it.return?.();
    } catch (err) {
      this.#end(err);
      return;
    }
    Promise.resolve(returned).then(
      (r) => this.#end(null, (r as IteratorResult<unknown> | undefined)?.value),
      (err) => this.#end(err),
    );
  }

  async #run(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      while (this.#credit > 0 && !this.#ended) {
        const r = await this.#it.next();
        if (this.#ended) return;
        if (r.done) {
          this.#ended = true;
          this.#end(null, r.value);
          return;
        }
        this.#credit--;
        this.#send(r.value);
      }
    } catch (err) {
      if (!this.#ended) {
        this.#ended = true;
        this.#end(err);
      }
    } finally {
      this.#running = false;
    }
  }
}

/** A stream dropped without being read to its end or returned: its worker is let go. */
const abandoned = new FinalizationRegistry<() => void>((cancel) => cancel());

/** The caller's side: an async iterator over the items a job sends. */
export class JobStream<T = unknown> implements AsyncIterableIterator<T> {
  readonly #pull: (n: number) => void;
  readonly #cancel: () => void;
  readonly #items: unknown[] = [];
  readonly #waiting: { resolve(r: IteratorResult<T>): void; reject(err: unknown): void }[] = [];
  /** Items granted and not yet received. */
  #granted = 0;
  #done = false;
  #final: unknown;
  #error: unknown = null;

  constructor(pull: (n: number) => void, cancel: () => void) {
    this.#pull = pull;
    this.#cancel = cancel;
    abandoned.register(this, cancel, this);
  }

  /** @internal An item arrived. */
  push(value: unknown): void {
    this.#granted--;
    const w = this.#waiting.shift();
    if (w) {
      w.resolve({ value: value as T, done: false });
      this.#refill();
    } else this.#items.push(value);
  }

  /** @internal The job returned. */
  end(value: unknown): void {
    if (this.#done) return;
    this.#done = true;
    this.#final = value;
    abandoned.unregister(this);
    for (const w of this.#waiting.splice(0)) w.resolve({ value: value as T, done: true });
  }

  /** @internal The job failed (or was aborted). */
  fail(err: unknown): void {
    if (this.#done) return;
    this.#done = true;
    this.#error = err;
    abandoned.unregister(this);
    for (const w of this.#waiting.splice(0)) w.reject(err);
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#items.length > 0) {
      const value = this.#items.shift() as T;
      this.#refill();
      return Promise.resolve({ value, done: false });
    }
    if (this.#error !== null) {
      const err = this.#error;
      this.#error = null; // reported once; later calls see the end
      return Promise.reject(err);
    }
    if (this.#done) return Promise.resolve({ value: this.#final as T, done: true });
    this.#refill();
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  /** Stops the job (its generator's `finally` runs on the worker). */
  return(value?: unknown): Promise<IteratorResult<T>> {
    if (!this.#done) {
      this.#done = true;
      this.#items.length = 0;
      abandoned.unregister(this);
      this.#cancel();
    }
    return Promise.resolve({ value: value as T, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Asks for more once half the window is consumed (one message per half window). */
  #refill(): void {
    if (this.#done) return;
    const want = WINDOW - this.#items.length - this.#granted;
    if (want >= WINDOW / 2) {
      this.#granted += want;
      this.#pull(want);
    }
  }
}
