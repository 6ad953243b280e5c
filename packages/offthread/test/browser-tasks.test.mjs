// tasks() in browsers: the browser entry (dist/browser) on a page served with and
// without COOP/COEP, in headless Chromium and Firefox ESR, running
// test-fixtures/tasks/portable.mjs on module Web Workers — every result and error equal
// to Node's for the same module and calls (browser-task-cases.mjs) — and in-task.mjs
// for what a task sees of its call: progress, abort, timeout. Without cross-origin
// isolation the pool goes by message (no SharedArrayBuffer): a CPU loop cannot see its
// abort, so its worker is replaced after the grace; with it, the loop stops and the
// worker stays.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launchChromium, launchFirefox, startServer } from '../../../scripts/browser-server.mjs';
import { describeInBrowser } from './browser-suite.mjs';
import { portableCases } from './browser-task-cases.mjs';

const require = createRequire(import.meta.url);
const node = require('offthread');
const fixtures = fileURLToPath(new URL('../test-fixtures/tasks/', import.meta.url));
const distBrowser = fileURLToPath(new URL('../dist/browser/', import.meta.url));

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8" /><link rel="icon" href="data:," /><title>tasks</title></head>
<body><script type="module">
import * as o from '/offthread/offthread.js';
globalThis.offthread = o;
await o.ready;
globalThis.pageReady = true;
</script></body></html>
`;

let nodeResults;
let pageDir;
before(async () => {
  nodeResults = await portableCases(node, new URL('../test-fixtures/tasks/portable.mjs', import.meta.url));
  pageDir = mkdtempSync(join(tmpdir(), 'offthread-browser-tasks-'));
  writeFileSync(join(pageDir, 'index.html'), PAGE);
});
after(() => rmSync(pageDir, { recursive: true, force: true }));

test("Node's own results are what the module computes (the oracle is sane)", () => {
  assert.deepEqual(nodeResults.add, { ok: 5 });
  assert.deepEqual(nodeResults.primes, { ok: 3245 });
  assert.equal(nodeResults.fail.err.code, 'E_TASK');
  assert.equal(nodeResults.returnFunction.err.code, 'ERR_TASK_DATA');
  assert.equal(nodeResults['no such export'].err.code, 'ERR_TASK_EXPORT');
  assert.deepEqual(nodeResults['rows, break'], { ok: [0, 1, 2] });
  assert.deepEqual(nodeResults['task filter, objects'], {
    ok: ['[object Map]', '[object Number]', '[object String]', '[object Null]'],
  });
  assert.deepEqual(nodeResults['task filter, bytes'], {
    ok: [
      ['[object Uint8Array]', ['97', '98']],
      ['[object Uint8Array]', ['99']],
    ],
  });
  assert.match(JSON.stringify(nodeResults['task filter, failing']), /"failed".*"code","E_TASK"/);
});

for (const [name, launch] of [
  ['Chromium', launchChromium],
  ['Firefox', launchFirefox],
]) {
  describeInBrowser(`tasks() in ${name}`, launch, (newPage) => {
    for (const isolated of [false, true]) {
      describe(isolated ? 'cross-origin isolated (shared memory)' : 'not isolated (messages)', () => {
        let server;
        let page;
        const pageErrors = [];
        const inPage = (fn, arg) =>
          page.evaluate(([src, a]) => new Function(`return (${src})`)()(globalThis.offthread, a), [fn.toString(), arg]);
        before(async () => {
          server = await startServer({
            isolated,
            mounts: [
              ['/offthread/', distBrowser],
              ['/fixtures/', fixtures],
              ['/elsewhere/', distBrowser],
              ['/', pageDir],
            ],
          });
          page = await newPage();
          page.on('pageerror', (e) => pageErrors.push(e.message));
          await page.goto(server.url);
          await page.waitForFunction(() => globalThis.pageReady === true, null, { timeout: 20_000 });
        });
        after(async () => {
          await page?.close();
          await server?.close();
        });

        test(`crossOriginIsolated is ${isolated}`, async () => {
          assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), isolated);
        });

        test("every result and error of the portable module equals Node's", async () => {
          const src = portableCases.toString();
          const got = await page.evaluate(
            ([s, url]) => new Function(`return (${s})`)()(globalThis.offthread, url),
            [src, `${server.url}fixtures/portable.mjs`],
          );
          assert.deepEqual(Object.keys(got), Object.keys(nodeResults));
          for (const key of Object.keys(nodeResults)) assert.deepEqual(got[key], nodeResults[key], key);
        });

        test('progress, abort and timeout reach the task; a path resolves against the page', async () => {
          const got = await inPage(async (o, shared) => {
            const pool = new o.Pool({ threads: 2, cancelGrace: 300 });
            const work = o.tasks('/fixtures/in-task.mjs', { pool });
            const seen = [];
            const steps = await work.progress.with({ onProgress: (v) => seen.push(v) })(3);
            const codeOf = (p) =>
              p.then(
                () => 'resolved',
                (e) => e.code,
              );
            const controller = new AbortController();
            const waiting = codeOf(work.waitForAbort.with({ signal: controller.signal })());
            await new Promise((r) => setTimeout(r, 50));
            controller.abort();
            const aborted = await waiting;
            const timedOut = await codeOf(work.waitForAbort.with({ timeout: 30 })());
            await new Promise((r) => setTimeout(r, 50));
            const afterAsync = pool.stats().tasks.replaced;
            // A CPU loop polling its signal: it sees the abort through shared memory only.
            const loop = await codeOf(work.cooperative.with({ timeout: 50 })(5_000));
            await new Promise((r) => setTimeout(r, 600));
            const afterLoop = pool.stats().tasks.replaced;
            const still = await work.outside();
            const outside = (() => {
              try {
                o.currentTask();
              } catch (err) {
                return err.code;
              }
            })();
            await pool.close();
            return { steps, seen, aborted, timedOut, afterAsync, loop, afterLoop, still, outside, shared };
          }, isolated);
          assert.equal(got.steps, 3);
          assert.deepEqual(got.seen, [
            { step: 1, of: 3 },
            { step: 2, of: 3 },
            { step: 3, of: 3 },
          ]);
          assert.equal(got.aborted, 'ERR_ABORTED');
          assert.equal(got.timedOut, 'ERR_TIMEOUT');
          assert.equal(got.afterAsync, 0, 'an async task that stops on abort keeps its worker');
          assert.equal(got.loop, 'ERR_TIMEOUT');
          assert.equal(got.afterLoop, isolated ? 0 : 1, 'a polling CPU loop stops in place only with shared memory');
          assert.equal(got.still, 'in a task');
          assert.equal(got.outside, 'ERR_NOT_IN_TASK');
        });

        test('a module that does not load fails its calls with ERR_TASK_MODULE; the pool goes on', async () => {
          const got = await inPage(async (o) => {
            const pool = new o.Pool({ threads: 1 });
            const missing = o.tasks('/fixtures/missing.mjs', { pool });
            const code = await missing.run().then(
              () => 'resolved',
              (e) => e.code,
            );
            const sum = await o.tasks('/fixtures/portable.mjs', { pool }).add(1, 2);
            await pool.close();
            return { code, sum };
          });
          assert.deepEqual(got, { code: 'ERR_TASK_MODULE', sum: 3 });
          assert.deepEqual(pageErrors, []);
        });

        test('init({ taskWorkerUrl }) says where the task worker is; a wrong one fails with ERR_BACKEND_UNAVAILABLE', async () => {
          const got = await inPage(async (o) => {
            const run = async () => {
              const pool = new o.Pool({ threads: 1 });
              try {
                return await o.tasks('/fixtures/portable.mjs', { pool }).add(2, 2);
              } catch (err) {
                return err.code;
              } finally {
                pool.destroy();
              }
            };
            await o.init({ taskWorkerUrl: '/nowhere/offthread-task-worker.js' });
            const wrong = await run();
            await o.init({ taskWorkerUrl: '/elsewhere/offthread-task-worker.js' });
            const right = await run();
            return { wrong, right };
          });
          assert.deepEqual(got, { wrong: 'ERR_BACKEND_UNAVAILABLE', right: 4 });
        });
      });
    }
  });
}
