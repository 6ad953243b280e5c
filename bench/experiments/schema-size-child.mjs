// `schema-size`'s timing: "adding fields costs nothing" (Silva et al. 2024 §5.2.2). The
// evolution fixture's v1 reader on bytes a v1 writer made, and on bytes a v2 writer made
// (each reading has two more fields, the batch two more): the same n readings.
import * as v1 from '../../packages/offthread/dist/schema/generated/fixtures/evolution_v1.js';
import * as v2 from '../../packages/offthread/dist/schema/generated/fixtures/evolution_v2.js';
import { progress, timeFn } from '../lib/measure.mjs';

export async function measure({ n, minTime }) {
  const readings = Array.from({ length: n }, (_, i) => ({ id: i, value: i / 4 }));
  const wide = readings.map((r) => ({ ...r, quality: 7, extra: 0.5 }));
  const bytes = {
    v1: v1.encodeBatch({ label: 1, readings, readingsAos: readings }),
    v2: v2.encodeBatch({ label: 1, readings: wide, readingsAos: wide, note: 'v2', count: 3 }),
  };
  /** Sum of `value` over the SoA column (a Float32Array view). */
  const soa = (b) => {
    const column = v1.BatchReader.fromBytes(b).readings().value();
    let sum = 0;
    for (let i = 0; i < column.length; i++) sum += column[i];
    return sum;
  };
  /** Sum of `value` over the AoS items (each item a struct view; v2 items are 24 bytes, not 8). */
  const aos = (b) => {
    const items = v1.BatchReader.fromBytes(b).readingsAos();
    let sum = 0;
    for (let i = 0; i < items.length; i++) sum += items.get(i).value();
    return sum;
  };
  for (const f of [soa, aos])
    if (f(bytes.v1) !== f(bytes.v2)) throw new Error('v1 reader disagrees on v1 and v2 bytes');
  const ops = {
    'v1 reader: SoA value column': soa,
    'v1 reader: AoS items': aos,
    'v1 decodeBatch (plain objects)': (b) => v1.decodeBatch(b),
  };
  const rows = [];
  // Interleaved, three times each, so a busy moment hits both.
  for (let round = 0; round < 3; round++) {
    for (const data of ['v1', 'v2']) {
      for (const [op, fn] of Object.entries(ops)) {
        const t = await timeFn(() => fn(bytes[data]), { minTime });
        rows.push({ op, data, round, n, medianNs: t.median, bytes: bytes[data].length });
      }
      progress(`${data} round ${round}`);
    }
  }
  return rows;
}
