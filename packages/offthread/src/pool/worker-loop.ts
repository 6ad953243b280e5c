/**
 * The loop of one pool worker, the same on every host (node/worker.ts and
 * web/worker.ts wire it to their message port and hand it the features' jobs:
 * kernels/worker.ts, guests/worker.ts). It knows no feature. One task at a time.
 *   → { type: 'init', module, control }   module: offthread.wasm, or null for the JS tier
 *   ← { type: 'ready' } | { type: 'init-error', message }
 *   → { type: 'task', id, kernel, args }
 *   ← { type: 'done', id, value } | { type: 'error', id, error } | { type: 'cancelled', id }
 *   → { type: <a feature's setup>, … } | { type: 'guest', id, call }   calls (guests/worker.ts)
 *   ← { type: 'mail', id }   a call in the mailbox finished (mailbox.ts)
 * With a control buffer (shared memory) the pool cancels a running task by setting
 * control[0]; the kernel sees it at its next check. A throw that is not a registry
 * error (a wasm trap, a bug) is left uncaught: the pool sees the worker die, rejects
 * the task with ERR_KERNEL_PANIC and starts a new worker.
 *
 * With `mailbox` (guest engines with shared memory), control is a mailbox
 * (mailbox.ts): after each message or mailbox call the worker serves the box
 * (a brief spin, then Atomics.wait) until the caller says a message is on its way.
 */
import { errorRegistry } from '../errors.js';
import {
  ASLEEP,
  type Box,
  BY_MESSAGE,
  CALL,
  DONE,
  LONE,
  type MailCall,
  type MailOutcome,
  openBox,
  POSTED,
  readCall,
  SIGNAL,
  WATCHING,
  writeResult,
} from './mailbox.js';

/**
 * What a feature does in a worker: the loop hands it its messages. The kernels answer
 * 'task' jobs (kernels/worker.ts), the guests take their setup and answer calls
 * (guests/worker.ts).
 */
export interface WorkerJobs {
  /** At 'init' (a throw fails the worker's start). `stop()`: the running job was cancelled. */
  init?(msg: InitMessage, stop: () => boolean): void;
  /**
   * A 'task' job: its result, or null where it stopped because `stop()` said so. A
   * thrown registry error is the job's error; anything else lets the worker die.
   */
  task?(kernel: string, args: unknown): unknown;
  /** Setup messages by type (sent to every worker, replacements included). */
  setup?: Record<string, (msg: unknown) => void>;
  /** A 'guest' call posted to the worker. */
  call?(call: unknown): CallOutcome;
  /** A call read from the mailbox; its result may stay a view into the callee's memory. */
  callView?(call: MailCall): MailOutcome;
}

/** A posted call's outcome. */
export type CallOutcome =
  | { ok: true; value: unknown; transfer: Transferable[] }
  | { ok: false; error: { code: string; message: string } };

const noHandler = (what: string) => ({
  ok: false as const,
  error: { code: 'ERR_BACKEND_UNAVAILABLE', message: `this worker runs no ${what}` },
});

export interface InitMessage {
  type: 'init';
  module: WebAssembly.Module | null;
  control: SharedArrayBuffer | null;
  /** control is a guest mailbox (mailbox.ts) this worker serves. */
  mailbox?: boolean;
}
export interface TaskMessage {
  type: 'task';
  id: number;
  kernel: string;
  args: unknown;
}
/** A guest call (guests/): answered like a task. */
export interface GuestTaskMessage {
  type: 'guest';
  id: number;
  call: unknown;
}
/** A feature's setup message (the guests' 'guest-setup'). */
export interface SetupMessage {
  type: string;
}
export type WorkerMessage = InitMessage | TaskMessage | GuestTaskMessage | { type: 'nop' } | SetupMessage;
export type Reply =
  | { type: 'ready' }
  | { type: 'init-error'; message: string }
  | { type: 'done'; id: number; value: unknown }
  | { type: 'error'; id: number; error: { code: string; message: string } }
  | { type: 'cancelled'; id: number }
  | { type: 'mail'; id: number };

/** How long a worker watches its mailbox after a call before it sleeps in Atomics.wait. */
const MAILBOX_SPIN_MS = 0.05;

/** Spins while SIGNAL is `seen`, up to MAILBOX_SPIN_MS; true when it changed. */
function spinWhile(i32: Int32Array, seen: number): boolean {
  const end = performance.now() + MAILBOX_SPIN_MS;
  for (let n = 1; ; n++) {
    if (Atomics.load(i32, SIGNAL) !== seen) return true;
    if ((n & 63) === 0 && performance.now() > end) return false;
  }
}

/**
 * Starts the loop: `post` sends a reply (with transferables), `features` answer the jobs
 * (the first that has a handler); the result handles incoming messages.
 */
export function workerLoop(
  post: (reply: Reply, transfer?: Transferable[]) => void,
  features: WorkerJobs[],
): (message: WorkerMessage) => void {
  let flags: Int32Array | null = null;
  const stop = () => flags !== null && Atomics.load(flags, 0) !== 0;
  const runTask = features.find((f) => f.task)?.task;
  const runCall = features.find((f) => f.call)?.call;
  const runCallView = features.find((f) => f.callView)?.callView;
  const setups: Record<string, (msg: unknown) => void> = Object.assign({}, ...features.map((f) => f.setup ?? {}));

  function init(msg: InitMessage): void {
    try {
      for (const f of features) f.init?.(msg, stop);
      flags = msg.control ? new Int32Array(msg.control, 0, 1) : null;
      box = msg.control && msg.mailbox ? openBox(msg.control) : null;
      post({ type: 'ready' });
    } catch (err) {
      post({ type: 'init-error', message: String((err as Error)?.message ?? err) });
    }
  }

  function task(msg: TaskMessage): void {
    const { id } = msg;
    let value: unknown;
    try {
      if (!runTask) throw new Error('offthread: this worker runs no tasks');
      value = runTask(msg.kernel, msg.args);
    } catch (err) {
      const code = (err as { code?: unknown })?.code;
      if (typeof code === 'string' && code in errorRegistry) {
        post({ type: 'error', id, error: { code, message: (err as Error).message } });
        return;
      }
      throw err; // not a kernel error: let the worker die; the pool replaces it
    }
    if (value === null) post({ type: 'cancelled', id });
    else if (value instanceof Uint8Array) post({ type: 'done', id, value }, [value.buffer as ArrayBuffer]);
    else post({ type: 'done', id, value });
  }

  function guest(msg: GuestTaskMessage): void {
    const out = runCall ? runCall(msg.call) : noHandler('calls');
    if (out.ok) post({ type: 'done', id: msg.id, value: out.value }, out.transfer);
    else post({ type: 'error', id: msg.id, error: out.error });
  }

  let box: Box | null = null;
  let received = 0;
  let misses = 0;
  let skip = 0;

  /** Runs the call in the box and answers through it (or by message when the result is too big). */
  function mailCall(b: Box): void {
    const { id, call } = readCall(b);
    const out = runCallView ? runCallView(call) : noHandler('calls');
    const was = writeResult(b, out);
    if (was === false) {
      // Only a result too big for the box (a describe never goes through it).
      const value = (out as { view: Uint8Array }).view.slice();
      post({ type: 'done', id, value }, [value.buffer]);
      if (Atomics.exchange(b.i32, DONE, BY_MESSAGE) === WATCHING) Atomics.notify(b.i32, DONE);
    } else if (was === ASLEEP) {
      post({ type: 'mail', id });
    } else if (was === WATCHING) {
      Atomics.notify(b.i32, DONE);
    }
  }

  /**
   * Serves the mailbox until a posted message is due (then the event loop delivers it).
   * After a lone call (the caller awaits one call at a time) it spins briefly for the
   * next one; otherwise it sleeps at once (many calls in flight: the caller is the
   * bottleneck, and a spinning worker would take a core from it).
   */
  function serve(b: Box): void {
    const { i32 } = b;
    let spin = false;
    for (;;) {
      if (Atomics.load(i32, POSTED) !== received) return;
      if (Atomics.load(i32, CALL) === 1) {
        Atomics.store(i32, CALL, 0);
        spin = i32[LONE] === 1;
        mailCall(b);
        continue;
      }
      const seen = Atomics.load(i32, SIGNAL);
      // Read `seen` first: a call or message after these checks changes SIGNAL.
      if (Atomics.load(i32, POSTED) !== received || Atomics.load(i32, CALL) === 1) continue;
      if (spin && skip > 0) {
        skip--;
        spin = false;
      }
      if (spin && spinWhile(i32, seen)) misses = 0;
      else {
        if (spin) {
          // Nothing came: skip the spin after the next 1, 3, 7, … lone calls (a caller
          // doing other work between calls, or a machine with no core to spare).
          misses = Math.min(misses + 1, 6);
          skip = 2 ** misses - 1;
        }
        Atomics.wait(i32, SIGNAL, seen);
      }
      spin = false;
    }
  }

  return (msg) => {
    received++;
    if (msg.type === 'init') init(msg as InitMessage);
    else if (msg.type === 'task') task(msg as TaskMessage);
    else if (msg.type === 'guest') guest(msg as GuestTaskMessage);
    else setups[msg.type]?.(msg);
    // 'nop': stands in for a message that could not be sent (the caller counted it).
    if (box) serve(box);
  };
}
