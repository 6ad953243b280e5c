// Raw worker_threads: [id, name, arg] in, [id, result] out, nothing else.
import { parentPort } from 'node:worker_threads';
import * as work from './work.mjs';

const fns = { ...work };
parentPort.on('message', ([id, name, arg]) => parentPort.postMessage([id, fns[name](arg)]));
