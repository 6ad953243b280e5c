// Task module of tasks-filter-park.test.mjs: per-chunk and generator transforms that say
// which worker ran them, one that holds a chunk until the test lets it go, and tasks to
// run beside a parked filter on its worker.
import { setTimeout as sleep } from 'node:timers/promises';
import { threadId } from 'node:worker_threads';

/**
 * Per-chunk, object mode: numbers the chunks with the stream's state and says its worker.
 * The chunk 'hold' waits (blocking its worker) until `gate[1]` opens, after setting `gate[0]`.
 */
export function step(chunk, state, gate) {
  state.n = (state.n ?? 0) + 1;
  if (chunk === 'hold') {
    Atomics.store(gate, 0, 1);
    while (Atomics.load(gate, 1) === 0) Atomics.wait(gate, 1, 0, 20);
  }
  return `${state.n}:${chunk}@${threadId}`;
}
/** Generator form: passes chunks on; marks `flag[0]` when its `finally` runs. */
export async function* watched(chunks, flag) {
  try {
    for await (const chunk of chunks) yield chunk;
  } finally {
    Atomics.store(flag, 0, 1);
  }
}
/** Which worker runs it. */
export const thread = () => threadId;
/** Waits `ms` on a timer of the worker (an async task: its worker's loop is free meanwhile), then says where it ran. */
export async function nap(ms) {
  await sleep(ms);
  return threadId;
}
export const add = (a, b) => a + b;
/** Waits on timers of its worker (its loop stays free) until `gate[0]` opens; says where it ran. */
export async function untilOpen(gate) {
  while (Atomics.load(gate, 0) === 0) await sleep(1);
  return threadId;
}
/** Generator form: passes chunks on, counting each output made in `made[0]`. */
export async function* counted(chunks, made) {
  for await (const chunk of chunks) {
    Atomics.add(made, 0, 1);
    yield chunk;
  }
}
/** Ends its worker (process.exit in a worker thread stops that thread). */
export function die() {
  process.exit(1);
}
