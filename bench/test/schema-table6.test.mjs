// The Table 6 module (bench/wasm-table6): its readers, ours and the flatbuffers crate's,
// must return what the schema bench's JS readers return for the same data, or the rows
// of bench/results/schema-table6.md time different work. Builds the module with cargo
// and flatc (apt flatbuffers-compiler, installed when missing as the experiment does).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import { flatbuffersAnalyse, offthreadAnalyse } from '../experiments/schema-child.mjs';
import { buildModule, inputs, inWasm, READERS } from '../experiments/schema-table6-child.mjs';
import { aptCanGive } from '../lib/tools.mjs';

// The skip is decided by a cheap look (flatc, or apt-get to install it); the build itself
// (cargo, LTO: minutes) runs in before(), not when the file is imported.
const skip = aptCanGive('flatc') ? false : 'no flatc (apt flatbuffers-compiler)';
/** @type {{ path: string }} */
let built;
before(() => {
  if (skip) return;
  const r = buildModule(() => {});
  assert.ok(!('skip' in r), r.skip);
  built = r;
});

test('every wasm reader returns the JS readers’ count, average, min and max at 10 and 10,000', { skip }, async () => {
  const wasm = readFileSync(built.path);
  for (const n of [10, 10_000]) {
    const data = inputs(n);
    const ts = offthreadAnalyse(data.ours);
    assert.deepEqual(flatbuffersAnalyse(data.fbStruct), ts, `the two JS readers at ${n}`);
    assert.equal(ts.count, n);
    const { checks } = await inWasm({ wasm, data: { [n]: data }, readers: READERS, minTimeMs: 0 });
    assert.deepEqual(
      checks.map((c) => c.reader),
      READERS.map((r) => r.name),
    );
    for (const c of checks) {
      assert.equal(c.count, n, `${c.reader} at ${n}`);
      // Exact: the same f32 values summed in f64 in the same order.
      assert.deepEqual(c.result, ts, `${c.reader} at ${n}`);
    }
  }
});

test('the loop exports do the reads they are timed for: the sum of the averages', { skip }, async () => {
  const { instance } = await WebAssembly.instantiate(readFileSync(built.path));
  const x = /** @type {any} */ (instance.exports);
  const data = inputs(10);
  const { average } = offthreadAnalyse(data.ours);
  for (const r of READERS) {
    const bytes = data[/** @type {'ours'} */ (r.input)];
    const ptr = x.alloc(bytes.length);
    new Uint8Array(x.memory.buffer, ptr, bytes.length).set(bytes);
    // 3 is exact: average × 3 is what three additions of average give, in this order.
    assert.equal(x[`${r.name}_loop`](ptr, bytes.length, 3), average + average + average, r.name);
  }
});

test('the checking readers refuse a message whose vector runs past its end', { skip }, async () => {
  const { instance } = await WebAssembly.instantiate(readFileSync(built.path));
  const x = /** @type {any} */ (instance.exports);
  const data = inputs(10_000);
  for (const r of READERS.filter((r) => !r.name.endsWith('_unchecked'))) {
    const bytes = data[/** @type {'ours'} */ (r.input)];
    const ptr = x.alloc(bytes.length);
    new Uint8Array(x.memory.buffer, ptr, bytes.length).set(bytes);
    const cut = bytes.length - 64;
    assert.equal(x[`${r.name}_read`](ptr, cut), -1, `${r.name} on ${cut} of ${bytes.length} bytes`);
    assert.equal(x[`${r.name}_loop`](ptr, cut, 2), -1, r.name);
  }
});
