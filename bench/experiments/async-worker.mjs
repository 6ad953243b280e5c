// worker_threads row: answer each [id, i] message with a 1-sample π computed in JS.
import { parentPort } from 'node:worker_threads';
import task from './async-piscina-task.mjs';

parentPort.on('message', ([id, i]) => parentPort.postMessage([id, task(i)]));
