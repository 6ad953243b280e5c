// One WebAssembly thread (bench/browser/wasm-threads.mjs): an instance of the π module
// on the page's shared memory, with its own stack, parked in Atomics.wait on the job's
// generation word until the page starts a job.
globalThis.addEventListener('message', ({ data }) => {
  const { module, memory, id, stackPages, notifyByMessage } = data;
  let e;
  try {
    ({ exports: e } = new WebAssembly.Instance(module, { env: { memory } }));
    // Every instance starts with the same stack pointer: this thread's stack is pages
    // of its own, grown from the shared memory (grow is atomic: no two threads get the
    // same pages), its top the end of those pages.
    e.__stack_pointer.value = (memory.grow(stackPages) + stackPages) * 65536;
  } catch (err) {
    postMessage({ error: err.message });
    return;
  }
  const words = new Int32Array(memory.buffer);
  const GENERATION = e.pi_job() >> 2;
  const FINISHED = GENERATION + 1;
  let seen = Atomics.load(words, GENERATION);
  postMessage({ ready: true });
  for (;;) {
    Atomics.wait(words, GENERATION, seen);
    seen = Atomics.load(words, GENERATION);
    if (e.pi_work(id) === 1) {
      Atomics.notify(words, FINISHED);
      if (notifyByMessage) postMessage({ done: true });
    }
  }
});
