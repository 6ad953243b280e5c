/** A worker of the worker engine in browsers: worker.ts's loop on the worker's own port. */
import { type WorkerMessage, workerLoop } from '../worker.js';

const scope = globalThis as unknown as {
  postMessage(message: unknown, transfer: Transferable[]): void;
  onmessage: ((e: MessageEvent<WorkerMessage>) => void) | null;
};
const handle = workerLoop((reply, transfer) => scope.postMessage(reply, transfer ?? []), null);
scope.onmessage = (e) => handle(e.data);
