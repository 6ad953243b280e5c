// 10,000 filters.gzip() streams of small inputs started at once (a server answering
// 10,000 requests together): every output gunzips to its own input. Peak RSS against
// zlib.createGzip is a benchmark figure (bench/experiments/streams.mjs, gzip-many), not
// asserted here.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { filters, Pool } from 'offthread';

const STREAMS = 10_000;

/** Input i: a few hundred bytes to a few KiB, all different. */
function input(i) {
  const words = ['offthread', 'gzip', 'stream', 'déjà', '日本語', String(i)];
  return Buffer.from(Array.from({ length: 20 + (i % 200) }, (_, j) => words[(i * 7 + j) % words.length]).join(' '));
}

test(`${STREAMS} small gzip streams at once all gunzip to their inputs`, async (t) => {
  const pool = new Pool({ threads: 2, maxQueue: 4 * STREAMS });
  t.after(() => pool.close());
  const inputs = Array.from({ length: STREAMS }, (_, i) => input(i));
  const outputs = await Promise.all(
    inputs.map(async (bytes) => {
      const gz = filters.gzip({ pool });
      const chunks = [];
      gz.on('data', (c) => chunks.push(c));
      // Two writes: the filter holds them back and deflates both at the end.
      gz.write(bytes.subarray(0, 10));
      gz.end(bytes.subarray(10));
      await once(gz, 'end');
      return Buffer.concat(chunks);
    }),
  );
  let same = 0;
  for (let i = 0; i < STREAMS; i++) if (zlib.gunzipSync(outputs[i]).equals(inputs[i])) same++;
  assert.equal(same, STREAMS);
});
