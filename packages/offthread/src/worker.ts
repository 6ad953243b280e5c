/**
 * The loop of one pool worker, the same on every host (node/worker.ts and
 * web/worker.ts only wire it to their message port). One task at a time.
 *   → { type: 'init', module, control }   module: offthread.wasm, or null for the JS tier
 *   ← { type: 'ready' } | { type: 'init-error', message }
 *   → { type: 'task', id, kernel, args }
 *   ← { type: 'done', id, value } | { type: 'error', id, error } | { type: 'cancelled', id }
 *   → { type: 'guest-setup', … } | { type: 'guest', id, call }   guests (guests/runtime.ts)
 * With a control buffer (shared memory) the pool cancels a running task by setting
 * control[0]; the kernel sees it at its next check. A throw that is not a registry
 * error (a wasm trap, a bug) is left uncaught: the pool sees the worker die, rejects
 * the task with ERR_KERNEL_PANIC and starts a new worker.
 */
import { errorRegistry } from './errors.js';
import { GuestRuntime, type GuestSetupMessage, runGuestCall } from './guests/runtime.js';
import { type KernelName, kernels, type WorkerEnv } from './kernels.js';
import { WasmKernels } from './wasm-client.js';

export interface InitMessage {
  type: 'init';
  module: WebAssembly.Module | null;
  control: SharedArrayBuffer | null;
}
export interface TaskMessage {
  type: 'task';
  id: number;
  kernel: KernelName;
  args: unknown;
}
/** A guest call (guests/): answered like a task. */
export interface GuestTaskMessage {
  type: 'guest';
  id: number;
  call: unknown;
}
export type WorkerMessage = InitMessage | TaskMessage | GuestSetupMessage | GuestTaskMessage;
export type Reply =
  | { type: 'ready' }
  | { type: 'init-error'; message: string }
  | { type: 'done'; id: number; value: unknown }
  | { type: 'error'; id: number; error: { code: string; message: string } }
  | { type: 'cancelled'; id: number };

/** Starts the loop: `post` sends a reply (with transferables), the result handles incoming messages. */
export function workerLoop(
  post: (reply: Reply, transfer?: Transferable[]) => void,
  md5Hex: WorkerEnv['md5Hex'],
): (message: WorkerMessage) => void {
  let flags: Int32Array | null = null;
  const env: WorkerEnv = { wasm: null, md5Hex, stop: () => flags !== null && Atomics.load(flags, 0) !== 0 };

  function init(msg: InitMessage): void {
    try {
      env.wasm = msg.module ? WasmKernels.fromModule(msg.module, env.stop) : null;
      flags = msg.control ? new Int32Array(msg.control, 0, 1) : null;
      post({ type: 'ready' });
    } catch (err) {
      post({ type: 'init-error', message: String((err as Error)?.message ?? err) });
    }
  }

  function task(msg: TaskMessage): void {
    const { id } = msg;
    let value: unknown;
    try {
      const kernel = kernels[msg.kernel] as { worker(env: WorkerEnv, args: unknown): unknown };
      value = kernel.worker(env, msg.args);
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

  let guests: GuestRuntime | null = null;
  function guest(msg: GuestTaskMessage): void {
    const out = runGuestCall(guests, msg.call);
    if (out.ok) post({ type: 'done', id: msg.id, value: out.value }, out.transfer);
    else post({ type: 'error', id: msg.id, error: out.error });
  }

  return (msg) => {
    if (msg.type === 'init') init(msg);
    else if (msg.type === 'task') task(msg);
    else if (msg.type === 'guest-setup') guests = new GuestRuntime(msg);
    else guest(msg);
  };
}
