// Record filters tied to the schema the batches are read with (`schema`: the generated
// batch reader): columns are matched to the row struct's fields by name and checked by
// type when the filter is made, so another order cannot swap columns and another type
// cannot read garbage.
import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { filters, Pool, schema } from 'offthread';

const Batch = schema.TemperatureBatchReader; // { readings: []{ timestamp: i64; value: f32 } #soa }

async function rowsOf(filter, text, size = 7) {
  const bytes = Buffer.from(text);
  const chunks = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const rows = [];
  const sink = new Writable({
    objectMode: true,
    write(b, _e, cb) {
      const r = Batch.fromBytes(b).readings();
      const [ts, v] = [r.timestamp(), r.value()];
      for (let i = 0; i < r.length; i++) rows.push([ts[i], v[i]]);
      cb();
    },
  });
  await pipeline(Readable.from(chunks), filter, sink);
  return rows;
}

const WANT = [
  [1n, 2.5],
  [3n, -4],
];

test('with schema, columns are matched to fields by name: another order reads right', async () => {
  // The header's order and the columns' order are both the reverse of the fields'.
  const csv = 'value,timestamp\n2.5,1\n-4,3\n';
  const reversed = [
    { name: 'value', type: 'f32' },
    { name: 'timestamp', type: 'i64' },
  ];
  assert.deepEqual(await rowsOf(filters.csv({ schema: Batch, columns: reversed }), csv), WANT);
  // No columns at all: every field from the header of its own name.
  assert.deepEqual(await rowsOf(filters.csv({ schema: Batch }), csv), WANT);
  // A header of another name names its field; the type comes from the schema.
  const renamed = 'Value (°C),when\n2.5,1\n-4,3\n';
  const mapped = [
    { name: 'Value (°C)', field: 'value' },
    { name: 'when', field: 'timestamp' },
  ];
  assert.deepEqual(await rowsOf(filters.csv({ schema: Batch, columns: mapped }), renamed), WANT);
  const nd = '{"value":2.5,"timestamp":1}\n{"timestamp":3,"value":-4}\n';
  assert.deepEqual(await rowsOf(filters.ndjson({ schema: Batch, columns: reversed }), nd), WANT);
  assert.deepEqual(await rowsOf(filters.ndjson({ schema: Batch }), nd), WANT);
  // The spec sent to the filter carries the resolved field positions.
  assert.deepEqual(filters.csv({ schema: Batch, columns: reversed }).spec.columns, [
    { name: 'value', type: 'f32', field: 1 },
    { name: 'timestamp', type: 'i64', field: 0 },
  ]);
  // The same on a worker pool (offthread.wasm).
  const workers = new Pool({ engine: 'wasm', threads: 1 });
  try {
    assert.deepEqual(await rowsOf(filters.csv({ schema: Batch, columns: reversed, pool: workers }), csv), WANT);
  } finally {
    await workers.close();
  }
});

test('with schema, a column that does not match the row struct is ERR_FILTER_INVALID_SPEC at once', () => {
  const cases = [
    // Another type would read the i64 bytes as f64: garbage such as 5.4e-315.
    [
      [{ name: 'timestamp', type: 'f64' }, { name: 'value' }],
      /column "timestamp" is f64, but field "timestamp" of the row struct is i64/,
    ],
    [
      [{ name: 'timestamp' }, { name: 'value', type: 'i32' }],
      /column "value" is i32, but field "value" of the row struct is f32/,
    ],
    // A name the struct does not have (the old positional default would have filled field 1).
    [
      [{ name: 'timestamp' }, { name: 'amount', type: 'f32' }],
      /column "amount": the row struct has no field "amount" \(fields: timestamp: i64, value: f32\)/,
    ],
    // A field left out would read as zeros.
    [[{ name: 'timestamp' }], /no column fills "value"/],
    [
      [{ name: 'a', field: 0 }, { name: 'b', field: 0 }, { name: 'value' }],
      /columns "a" and "b" both fill field "timestamp"/,
    ],
    [[{ name: 'x', field: 7 }, { name: 'value' }], /the row struct has no field 7/],
  ];
  for (const [columns, message] of cases) {
    for (const make of [filters.csv, filters.ndjson, filters.web.csv]) {
      assert.throws(() => make({ schema: Batch, columns }), { code: 'ERR_FILTER_INVALID_SPEC', message });
    }
  }
  // Not a batch reader: a row reader, a writer, a plain object.
  for (const bad of [schema.TemperatureReadingReader, schema.TemperatureBatchWriter, {}, 'temperature_batch']) {
    assert.throws(() => filters.csv({ schema: bad }), { code: 'ERR_FILTER_INVALID_SPEC', message: /^schema: / });
  }
});
