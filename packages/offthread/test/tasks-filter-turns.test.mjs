// A task filter gives the event loop its turns: a reader that takes every output at once
// must not keep the loop inside one message callback. Node's MessagePort delivers up to
// 1,000 messages per callback, those arriving meanwhile included, so credit sent from
// inside it let a fast worker hold the loop (loop delay p99 12–22 ms with 64 KiB chunks);
// credit and room now go out at the loop's next turn.
import assert from 'node:assert/strict';
import { Duplex, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, test } from 'node:test';
import { filters, Pool, tasks } from 'offthread';

const fixture = new URL('./fixtures/nexus-work.mjs', import.meta.url);
/** Outputs the worker may send ahead of the reader (task-channel.ts OUT_WINDOW). */
const OUT_WINDOW = 64;

const pool = new Pool({ threads: 2 });
const work = tasks(fixture, { pool });
after(() => pool.destroy());

/** Runs `make()`'s stream over one chunk into a reader that takes everything at once; outputs seen per loop turn. */
async function outputsPerTurn(make, n) {
  let turn = 0;
  let ticking = true;
  const tick = () => {
    turn++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const perTurn = new Map();
  let seen = 0;
  await pipeline(
    Readable.from([new Uint8Array([1])], { objectMode: true }),
    make(n),
    new Writable({
      objectMode: true,
      highWaterMark: 1024,
      write(_chunk, _enc, cb) {
        seen++;
        perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
        cb();
      },
    }),
  );
  ticking = false;
  return { seen, most: Math.max(...perTurn.values()), turns: perTurn.size };
}

test('a fast worker and an eager reader: at most one window of outputs per loop turn (Node form)', async () => {
  const made = new Int32Array(new SharedArrayBuffer(4));
  const n = 3000;
  const { seen, most, turns } = await outputsPerTurn(
    (count) => filters.task(work.flood, { objectMode: true, args: [made, count] }),
    n,
  );
  assert.equal(seen, n);
  assert.ok(most <= OUT_WINDOW, `${most} outputs in one turn of the loop (of ${seen} over ${turns} turns)`);
});

test('the same with the web form', async () => {
  const made = new Int32Array(new SharedArrayBuffer(4));
  const n = 3000;
  const { seen, most, turns } = await outputsPerTurn((count) => {
    const web = filters.web.task(work.flood, { objectMode: true, args: [made, count] });
    // Node's adapter over the WHATWG pair: the same pipeline as the Node form.
    return Duplex.fromWeb(web, { objectMode: true });
  }, n);
  assert.equal(seen, n);
  assert.ok(most <= 2 * OUT_WINDOW, `${most} outputs in one turn of the loop (of ${seen} over ${turns} turns)`);
});
