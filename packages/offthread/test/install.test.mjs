// The package as a user installs it (scripts/fresh-app.mjs): `npm run package`'s
// tarballs in fresh apps outside the repo, cargo off the PATH. The README's examples
// (streams included) give the same answers on the native engine (addon from the platform
// package), with --omit=optional (WebAssembly on worker threads) and with
// OFFTHREAD_BACKEND=js.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { md5, pi } from 'offthread';
import { run } from '../../../scripts/fresh-app.mjs';

test('packed tarballs in fresh apps: native, --omit=optional (wasm) and js give the same answers, streams included', () => {
  const results = run();
  assert.deepEqual(
    results.types,
    { nodenext: '', 'bundler+browser': '' },
    'the README TypeScript type-checks strictly',
  );
  // The README's first example as written: /ping answers while tasks() blurs; the same
  // server with the blur called inline makes /ping wait for it (so the check can fail).
  const { server } = results;
  assert.equal(server.tasks?.blur, 'blurred 4194304 pixels', JSON.stringify(server));
  assert.equal(server.tasks.pingsBeforeBlur, true, JSON.stringify(server));
  assert.equal(server.inline.blur, server.tasks.blur);
  assert.equal(server.inline.pingsBeforeBlur, false, JSON.stringify(server));
  const common = {
    status: 0,
    signal: null,
    pi: pi.estimateSync(1e7, { seed: 1 }).inside,
    md5: md5.iterateSync('text', 2000),
    aborted: 'ERR_ABORTED',
    timedOut: 'ERR_TIMEOUT',
    all: [pi.estimateSync(1e6).inside, md5.iterateSync('x', 100), 'plain JS'],
    emit: [md5.iterateSync('payload', 1000)],
  };
  // The README's streams: UTF-16LE equal to Buffer's, a gzip that gunzips to the text,
  // the CSV's values summed from the batches (i/4 for i in 0…79, repeated: exact in f32),
  // and docs/streams.md's Nexus fan-out (both sinks' files gunzip to the text).
  const streamed = {
    utf16: true,
    gunzips: true,
    fanOut: true,
    csvSum: Array.from({ length: 3000 }, (_, i) => (i % 80) / 4).reduce((a, b) => a + b),
  };
  const expected = {
    native: {
      active: 'native',
      engine: 'native',
      qr: 'data:image/png;base64,',
      streams: { backend: 'native', ...streamed },
    },
    wasm: {
      active: 'wasm',
      engine: 'wasm',
      qr: 'data:image/png;base64,',
      streams: { backend: 'workers', ...streamed },
    },
    // No WebAssembly at all: the filters are Rust, like QR.
    js: { active: 'js', engine: 'js', qr: 'ERR_BACKEND_UNAVAILABLE', streams: 'ERR_BACKEND_UNAVAILABLE' },
  };
  for (const [mode, want] of Object.entries(expected)) {
    const { stderr, ...got } = results[mode];
    assert.deepEqual(got, { ...common, ...want }, `${mode}: ${stderr}`);
    if (mode === 'native') assert.doesNotMatch(stderr, /OFFTHREAD_FALLBACK/);
    // The load error names the missing package, the libc it looked for, and what to do.
    if (mode === 'wasm')
      assert.match(stderr, /package offthread-linux-x64-gnu; libc: gnu.*install with optional/, stderr);
    if (mode === 'js') assert.match(stderr, /disabled by OFFTHREAD_BACKEND=js/, stderr);
  }
});
