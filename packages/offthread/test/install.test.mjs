// The package as a user installs it (scripts/fresh-app.mjs): `npm run package`'s
// tarballs in fresh apps outside the repo, cargo off the PATH. The README's examples
// (streams included) give the same answers on the native engine (addon from the platform
// package), with --omit=optional (WebAssembly on worker threads) and with
// OFFTHREAD_BACKEND=js.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { md5, pi } from 'offthread';
import { brokenLinks, run } from '../../../scripts/fresh-app.mjs';
import { packaged } from '../scripts/prepack.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const repoDocs = readdirSync(`${root}docs`)
  .filter((f) => f.endsWith('.md'))
  .sort();

// What users read: the guides the README links, in the package as in the repository.
const USER_DOCS = [
  'api.md',
  'browser.md',
  'errors.md',
  'guest-abi.md',
  'kernels.md',
  'queue.md',
  'results.md',
  'scale-out.md',
  'schema-format.md',
  'streams.md',
  'tasks.md',
];

test('every relative link and anchor in the README, docs/ and ARCHITECTURE.md resolves in the repository', () => {
  const files = ['README.md', 'ARCHITECTURE.md', ...repoDocs.map((f) => `docs/${f}`)];
  assert.deepEqual(brokenLinks(root, files), []);
  for (const doc of USER_DOCS) assert.ok(repoDocs.includes(doc), doc);
});

test('the packed docs spell out links to files the package does not carry; the rest, code included, unchanged', () => {
  const shipped = new Set(['README.md', 'docs/a.md']);
  const md = [
    'See [a](docs/a.md#x) and [the run](bench/results/pi.md), [`bench/results/`](bench/results/),',
    '[b](https://example.org/b.md) and [here](#y).',
    '```md',
    '[kept](crates/x.rs)',
    '```',
  ].join('\n');
  assert.equal(
    packaged(md, 'README.md', shipped),
    [
      'See [a](docs/a.md#x) and the run (`bench/results/pi.md`), `bench/results`,',
      '[b](https://example.org/b.md) and [here](#y).',
      '```md',
      '[kept](crates/x.rs)',
      '```',
    ].join('\n'),
  );
  assert.equal(
    packaged('[q.md](../bench/results/q.md), [e](errors.md)', 'docs/queue.md', new Set(['docs/errors.md'])),
    '`bench/results/q.md`, [e](errors.md)',
  );
});

test('packed tarballs in fresh apps: native, --omit=optional (wasm) and js give the same answers, streams included', () => {
  const results = run();
  assert.deepEqual(
    results.types,
    { nodenext: '', 'bundler+browser': '' },
    'the README TypeScript type-checks strictly',
  );
  // The README's first example as written: /ping answers while tasks() blurs; the same
  // server with the blur called inline makes /ping wait for it (so the check can fail).
  // The installed package carries the user docs, and every relative link in its README
  // and docs (anchors included) resolves inside node_modules/offthread.
  assert.deepEqual(results.docs.docs, repoDocs, 'the package carries docs/*.md');
  for (const doc of USER_DOCS) assert.ok(results.docs.docs.includes(doc), doc);
  assert.deepEqual(results.docs.broken, [], 'every relative link in the installed README and docs resolves');
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
  // with the schema and without one (inferred f64 columns),
  // and docs/streams.md's Nexus fan-out (both sinks' files gunzip to the text).
  const streamed = {
    utf16: true,
    gunzips: true,
    fanOut: true,
    csvSum: Array.from({ length: 3000 }, (_, i) => (i % 80) / 4).reduce((a, b) => a + b),
    csvInferredSum: Array.from({ length: 3000 }, (_, i) => (i % 80) / 4).reduce((a, b) => a + b),
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
