// GET /bench serves the browser experiment's page, the browser entry and the wasm
// build with the right MIME types, cross-origin isolated.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildServer } from '../src/server.mjs';

test('/bench serves the page, the browser entry and the wasm, with COOP/COEP', async () => {
  const app = buildServer({ logger: false });
  try {
    assert.equal((await app.inject('/bench')).statusCode, 302);
    const page = await app.inject('/bench/');
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'], /text\/html/);
    assert.equal(page.headers['cross-origin-opener-policy'], 'same-origin');
    assert.equal(page.headers['cross-origin-embedder-policy'], 'require-corp');
    const entry = await app.inject('/bench/offthread/offthread.js');
    assert.equal(entry.statusCode, 200);
    assert.match(entry.headers['content-type'], /javascript/);
    // The page loads the research bundle (the entry plus the π variants), mapped in its HTML.
    assert.match(page.body, /"offthread\/internal": ".\/offthread\/offthread-internal.js"/);
    const internal = await app.inject('/bench/offthread/offthread-internal.js');
    assert.equal(internal.statusCode, 200);
    assert.match(internal.headers['content-type'], /javascript/);
    assert.match(internal.body, /piVariants/);
    const worker = await app.inject('/bench/offthread/offthread-worker.js');
    assert.equal(worker.statusCode, 200);
    assert.match(worker.headers['content-type'], /javascript/);
    const wasm = await app.inject('/bench/offthread/offthread.wasm');
    assert.equal(wasm.statusCode, 200);
    assert.equal(wasm.headers['content-type'], 'application/wasm');
    assert.deepEqual([...wasm.rawPayload.subarray(0, 4)], [0x00, 0x61, 0x73, 0x6d]);
  } finally {
    await app.close();
  }
});
