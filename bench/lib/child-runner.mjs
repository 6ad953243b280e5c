// Entry point of the processes runInChild (measure.mjs) starts. Receives one request
// { file, exportName, args } over IPC, calls the export, sends back its value with the
// process's CPU and peak RSS, and exits. Not meant to be run by hand.

import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

/** @param {unknown} msg */
const sendAndExit = (msg) => process.send?.(msg, () => process.exit(0));

process.once('message', async (/** @type {{ file: string, exportName: string, args: unknown[] }} */ req) => {
  try {
    const mod = await import(pathToFileURL(req.file).href);
    const fn = mod[req.exportName];
    if (typeof fn !== 'function') {
      throw new Error(`${req.file} has no exported function '${req.exportName}'`);
    }
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    const value = await fn(...req.args);
    const wallMs = performance.now() - wall0;
    const { user, system } = process.cpuUsage(cpu0);
    const cpuMs = (user + system) / 1000;
    sendAndExit({
      type: 'result',
      result: {
        value,
        peakRssMiB: process.resourceUsage().maxRSS / 1024,
        wallMs,
        cpuMs,
        coresUsed: wallMs > 0 ? cpuMs / wallMs : 0,
      },
    });
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    sendAndExit({ type: 'error', message: e.message, stack: e.stack });
  }
});
