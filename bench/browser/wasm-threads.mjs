// π on WebAssembly threads (issue 35; the seed 000 browser mechanism): one module
// (bench/wasm-threads, built with atomics by its build.mjs) on one shared
// WebAssembly.Memory, instantiated once on this page and once per Web Worker. A call
// writes the job into the shared memory (`pi_begin`) and wakes the workers with
// Atomics.notify; they claim chunks with an atomic counter and add their counts into
// the memory; the last to leave sets a word this page awaits (Atomics.waitAsync, or a
// message where the browser lacks it). No count travels by message.
// Needs cross-origin isolation (a shared memory is a SharedArrayBuffer).

/** The imported memory's limits in 64 KiB pages; build.mjs links the module with them. */
export const MEMORY = { initial: 64, maximum: 1024 };
/** Each worker's stack (wasm's shadow stack): its own pages, grown from the memory. */
const STACK_PAGES = 16;

/**
 * Starts `workers` wasm threads on the module at `url`. Resolves
 * `{ estimate(samples, seed), workers, wake, close() }`; `estimate` resolves
 * `{ inside, countedBy }` (countedBy: how many workers counted a chunk of that call).
 * @param {{ url: string | URL, workers: number }} options
 */
export async function startWasmThreads({ url, workers }) {
  if (globalThis.crossOriginIsolated !== true) {
    throw new Error('wasm threads need a cross-origin isolated page (COOP/COEP): no shared memory here');
  }
  const module = await WebAssembly.compileStreaming(fetch(url));
  const memory = new WebAssembly.Memory({ ...MEMORY, shared: true });
  if (!(memory.buffer instanceof SharedArrayBuffer)) throw new Error('the memory is not shared');
  // This page's own instance runs the memory's one-time initialisation (the start
  // function; later instances skip it) and writes jobs. It calls only leaf exports, on
  // the default stack, which no worker uses.
  const { exports: e } = await WebAssembly.instantiate(module, { env: { memory } });
  const words = new Int32Array(memory.buffer);
  const GENERATION = e.pi_job() >> 2;
  const FINISHED = GENERATION + 1;
  const wake = typeof Atomics.waitAsync === 'function' ? 'waitAsync' : 'message';
  let onDone = null;
  const threads = [];
  for (let id = 0; id < workers; id++) {
    const w = new Worker(new URL('./wasm-threads-worker.mjs', import.meta.url), { type: 'module' });
    threads.push(w);
    await new Promise((ready, fail) => {
      w.onerror = (ev) => fail(new Error(`wasm thread ${id}: ${ev.message}`));
      w.onmessage = ({ data }) => (data.error ? fail(new Error(`wasm thread ${id}: ${data.error}`)) : ready());
      w.postMessage({ module, memory, id, stackPages: STACK_PAGES, notifyByMessage: wake === 'message' });
    });
    w.onmessage = () => onDone?.();
  }
  const sum = (mask) => {
    let n = 0;
    for (let m = mask; m; m &= m - 1) n++;
    return n;
  };
  return {
    workers,
    wake,
    memory,
    /** How many workers counted a chunk of the last call. */
    lastCountedBy: 0,
    /** The Int32Array index of the `finished` word (a test wakes its waiter early with it). */
    finishedWord: FINISHED,
    async estimate(samples, seed) {
      const done = wake === 'message' ? new Promise((r) => (onDone = r)) : null;
      const r = e.pi_begin(samples, seed, workers);
      if (r < 0) throw new Error(`pi_begin(${samples}, ${seed}, ${workers}) failed: ${r}`);
      Atomics.notify(words, GENERATION);
      if (done) await done;
      // The word, not the wake-up, says the job is done: a worker that set it for the
      // last job may notify only after this job began (then found it already set), and
      // that late notify wakes this waiter early.
      while (Atomics.load(words, FINISHED) === 0) {
        const w = Atomics.waitAsync(words, FINISHED, 0);
        if (w.async) await w.value;
      }
      this.lastCountedBy = sum(e.pi_counted_by());
      return { inside: e.pi_inside(), countedBy: this.lastCountedBy };
    },
    close() {
      for (const w of threads) w.terminate();
    },
  };
}
