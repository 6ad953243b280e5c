// One worker of the browser pool: its own instance of offthread.wasm, one task at a
// time. Protocol (pool.mjs is the other side):
//   → { type: 'init', module, control }   control: SharedArrayBuffer | null
//   ← { type: 'ready' } | { type: 'init-error', message }
//   → { type: 'task', id, op, args, input, crash }
//   ← { type: 'done', id, value } | { type: 'error', id, error } | { type: 'cancelled', id }
// With a control buffer (cross-origin isolated pages) the pool cancels a running task by
// setting control[0], and π counts come back in its f64 slot; without it, by message.
// An exception that is not a kernel error (a wasm trap, the test hook) is left uncaught:
// the pool sees the worker's `error` event, rejects the task and replaces the worker.
import { errorKinds } from './errors.mjs';
import { countRangeJs } from './pi-js.mjs';
import { Kernels } from './wasm.mjs';

let kernels = null;
let flags = null; // Int32Array over control: [0] = cancel
let slot = null; // Float64Array over control: [0] = π result

const stop = () => flags !== null && Atomics.load(flags, 0) !== 0;

function bytesOf(input) {
  return input ? new Uint8Array(input.buffer, 0, input.length) : new Uint8Array(0);
}

function run(op, args, input) {
  switch (op) {
    case 'pi': {
      const { variant, first, count, seed } = args;
      if (variant !== 'wasm') return countRangeJs(variant, first, count, seed);
      return kernels.piCountChecked(first, count, seed, stop);
    }
    case 'md5Hex':
      return kernels.md5Hex(bytesOf(input));
    case 'md5Iterate':
      return kernels.md5Iterate(bytesOf(input), args.rounds, args.start, stop);
    case 'qr':
      return kernels.qr(args.format, bytesOf(input), args);
    case 'echo':
      return args;
    default:
      throw Object.assign(new Error(`unknown op ${op}`), { code: 'ERR_INVALID_ARG' });
  }
}

async function init(msg) {
  try {
    kernels = await Kernels.instantiate(msg.module);
    if (msg.control) {
      flags = new Int32Array(msg.control, 0, 2);
      slot = new Float64Array(msg.control, 8, 1);
    }
    postMessage({ type: 'ready' });
  } catch (err) {
    postMessage({ type: 'init-error', message: String(err?.message ?? err) });
  }
}

function task(msg) {
  const { id, op, args, input } = msg;
  if (msg.crash) throw new Error('offthread test hook: this worker crashes on purpose');
  let value;
  try {
    value = run(op, args, input);
  } catch (err) {
    if (typeof err?.code === 'string' && err.code in errorKinds) {
      postMessage({ type: 'error', id, error: { code: err.code, message: err.message } });
      return;
    }
    throw err; // not a kernel error: crash, the pool replaces this worker
  }
  if (value === null) {
    postMessage({ type: 'cancelled', id });
  } else if (op === 'pi' && slot !== null) {
    slot[0] = value;
    postMessage({ type: 'done', id, shared: true });
  } else if (value instanceof Uint8Array) {
    postMessage({ type: 'done', id, value }, [value.buffer]);
  } else {
    postMessage({ type: 'done', id, value });
  }
}

self.onmessage = (e) => {
  const msg = e.data;
  if (msg.type === 'init') init(msg);
  else if (msg.type === 'task') task(msg);
};
