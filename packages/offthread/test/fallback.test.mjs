// Loading order: native → WASM → pure JS. Forced with OFFTHREAD_BACKEND in a child
// process, the same calls give the same answers and one warning names the fallback.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import jsQR from 'jsqr';
import { md5, pi } from 'offthread';
import { PNG } from 'pngjs';

const cwd = fileURLToPath(new URL('..', import.meta.url));
const script = `
  const { pi, md5, qr, backendInfo } = require('offthread');
  Promise.all([pi.estimate(1e5), pi.estimate(1e6, { seed: 3 }), md5.iterate('abc', 1000), md5.iterate('abc', 500, { start: md5.iterateSync('abc', 500) })]).then(([a, b, m, m2]) =>
    console.log(JSON.stringify({ active: backendInfo().active, a: a.inside, av: a.variant, b: b.inside, s: pi.estimateSync(1e5).inside, m, m2, hex: md5.hex('abc') })));`;

for (const [backend, variant] of [
  ['wasm', 'wasmWorkers'],
  ['js', 'jsWorkers'],
]) {
  test(`OFFTHREAD_BACKEND=${backend}: same results, one warning`, () => {
    const r = spawnSync(process.execPath, ['-e', script], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, OFFTHREAD_BACKEND: backend },
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    const m = md5.iterateReference('abc', 1000);
    assert.deepEqual(out, {
      active: backend,
      a: 78463,
      av: variant,
      b: 785572,
      s: 78463,
      m,
      m2: m,
      hex: '900150983cd24fb0d6963f7d28e17f72',
    });
    assert.equal(r.stderr.split('\n').filter((l) => l.includes('native addon unavailable')).length, 1, r.stderr);
  });
}

test('OFFTHREAD_BACKEND=wasm: QR codes come from the WASM build and decode', () => {
  const qrScript = `
    const { qr } = require('offthread');
    Promise.all([qr.toPNG('wasm fallback ✓'), qr.toDataURL('x'), qr.toSVG('x')]).then(([png, url, svg]) =>
      console.log(JSON.stringify({ png: png.toString('base64'), url: url.slice(0, 22), svg: svg.slice(0, 4) })));`;
  const r = spawnSync(process.execPath, ['-e', qrScript], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, OFFTHREAD_BACKEND: 'wasm' },
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.url, 'data:image/png;base64,');
  assert.equal(out.svg, '<svg');
  const image = PNG.sync.read(Buffer.from(out.png, 'base64'));
  const code = jsQR(new Uint8ClampedArray(image.data), image.width, image.height);
  assert.equal(new TextDecoder().decode(new Uint8Array(code.binaryData)), 'wasm fallback ✓');
});

// Without the addon the work still leaves the loop: Pool, all(), Emitter and every
// async call run on worker threads, and abort/timeout stop them with the native codes.
const offLoopScript = `
  const { pi, md5, Pool, all, Emitter, backendInfo } = require('offthread');
  (async () => {
    let job = 'pending';
    const big = pi.estimate(2e8).then((r) => { job = 'done'; return r; });
    await new Promise((r) => setTimeout(r, 1)); // a blocked loop could not run this timer first
    const whileRunning = job;
    const pool = new Pool({ threads: 2 });
    const [fan, x] = await all([(ctx) => md5.iterate('x', 5000, ctx), () => 'x'], { pool });
    const emitted = await new Emitter({ pool }).on('e', (p, ctx) => pi.estimate(p, ctx)).emit('e', 1e6);
    const timeout = await pi.estimate(2 ** 40, { pool, timeout: 10 }).catch((e) => e.code);
    const aborted = await md5.iterate('x', 1e9, { pool, signal: AbortSignal.timeout(20) }).catch((e) => e.code);
    const after = await pool.echo(7);
    await pool.close();
    const stats = pool.stats();
    console.log(JSON.stringify({ engine: stats.engine, cancelled: stats.cancelled, whileRunning, inside: (await big).inside,
      fan, x, emitted: emitted[0].inside, timeout, aborted, after, active: backendInfo().active }));
  })();`;

for (const backend of ['wasm', 'js']) {
  test(`OFFTHREAD_BACKEND=${backend}: Pool, all, Emitter and abort work off the loop`, () => {
    const r = spawnSync(process.execPath, ['-e', offLoopScript], {
      cwd,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, OFFTHREAD_BACKEND: backend },
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    // Chunks of the timed-out call finished before it are counted as completed, the rest cancelled.
    assert.ok(out.cancelled >= 2, `cancelled: ${out.cancelled}`);
    assert.deepEqual(out, {
      engine: backend,
      cancelled: out.cancelled,
      whileRunning: 'pending',
      inside: pi.estimateSync(2e8).inside,
      fan: md5.iterateReference('x', 5000),
      x: 'x',
      emitted: pi.estimateSync(1e6).inside,
      timeout: 'ERR_TIMEOUT',
      aborted: 'ERR_ABORTED',
      after: 7,
      active: backend,
    });
  });
}

test('OFFTHREAD_BACKEND with an unknown value is a typed error, not ignored', () => {
  const r = spawnSync(process.execPath, ['-e', "require('offthread').pi.estimateSync(10)"], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, OFFTHREAD_BACKEND: 'bogus' },
  });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /ERR_INVALID_ARG/);
  assert.match(r.stderr, /OFFTHREAD_BACKEND must be native, wasm or js, got "bogus"/);
});
