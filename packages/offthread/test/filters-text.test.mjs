// Transcoding and the CSV reader against WHATWG's TextDecoder at every split: a lone
// high surrogate before an odd last byte is one U+FFFD, as TextDecoder gives; a UTF-8
// BOM before a CSV header is stripped wherever the chunks cut it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filters, Pool } from 'offthread';
import { outputs } from './stream-outputs.mjs';

/** Every way to cut `bytes` once and twice (empty pieces dropped). */
function* cuts(bytes) {
  for (let a = 0; a <= bytes.length; a++)
    for (let b = a; b <= bytes.length; b++)
      yield [bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)].filter((c) => c.length > 0);
}

const u16 = (...units) => Buffer.from(new Uint16Array(units).buffer);

test('UTF-16LE → UTF-8 (non-strict) equals TextDecoder at every split, lone surrogates and odd bytes included', async () => {
  const decoder = new TextDecoder('utf-16le', { ignoreBOM: true });
  const cases = [
    Buffer.concat([u16(0xd83d), Buffer.from([0x41])]), // the issue's: high surrogate, odd byte
    Buffer.concat([u16(0x61, 0xd83d), Buffer.from([0x41])]),
    Buffer.concat([u16(0xd83d, 0xde00, 0xd83d), Buffer.from([0x00])]),
    Buffer.concat([u16(0xdc00), Buffer.from([0x41])]), // a low surrogate alone, then odd
    Buffer.concat([u16(0xd83d, 0xd83d), Buffer.from([0x3d])]),
    u16(0xd83d),
    Buffer.from([0x41]),
    u16(0x61, 0xd83d, 0x62),
  ];
  const workers = new Pool({ engine: 'wasm', threads: 1 });
  try {
    for (const input of cases) {
      const want = Buffer.from(decoder.decode(input));
      for (const chunks of cuts(input)) {
        const got = Buffer.concat(await outputs(filters.transcode('utf16le', 'utf8'), chunks));
        assert.equal(
          got.toString('hex'),
          want.toString('hex'),
          `${input.toString('hex')} as ${chunks.map((c) => c.toString('hex'))}`,
        );
      }
      const onWorkers = Buffer.concat(await outputs(filters.transcode('utf16le', 'utf8', { pool: workers }), [input]));
      assert.equal(onWorkers.toString('hex'), want.toString('hex'), `${input.toString('hex')} on the workers`);
    }
  } finally {
    await workers.close();
  }
});

test('a UTF-8 BOM before a CSV header is stripped wherever the chunks cut it', async () => {
  const columns = [
    { name: 'timestamp', type: 'i64' },
    { name: 'value', type: 'f32' },
  ];
  const text = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('timestamp,value\n1,2\n3,4')]);
  for (const chunks of cuts(text)) {
    const batches = await outputs(filters.csv({ columns }), chunks);
    assert.ok(batches.length >= 1, chunks.map((c) => c.length).join('+'));
  }
  // Only the first three bytes are a BOM: one inside the text stays, as TextDecoder keeps it.
  await assert.rejects(outputs(filters.csv({ columns }), [Buffer.from('timestamp,value\n\ufeff1,2\n')]), {
    code: 'ERR_FILTER_BAD_RECORD',
  });
  // A short stream that is only part of a BOM is a header with no such column, not a hang;
  // a BOM alone is an empty file (no header, no rows), as with no BOM.
  for (const stub of [[0xef], [0xef, 0xbb]]) {
    await assert.rejects(outputs(filters.csv({ columns }), [Buffer.from(stub)]), { code: 'ERR_FILTER_BAD_RECORD' });
  }
  assert.deepEqual(await outputs(filters.csv({ columns }), [Buffer.from([0xef, 0xbb, 0xbf])]), []);
  assert.deepEqual(await outputs(filters.csv({ columns }), [Buffer.alloc(0)]), []);
});
