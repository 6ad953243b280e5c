// An open task filter does not keep the process alive by itself (as Node's own streams do
// not): a stream created, fed and read, then left open, lets `node app.js` exit; one with
// a write in flight keeps it alive until the answer comes, and so do chunks written that
// the transform has not taken while it waits for a reader. A filter opened behind parked
// ones runs (they give their worker and budget slot back). Each case runs in a child
// process that must exit on its own. Also: the job pools' park switch (JobOptions.park)
// on both transports, which the filter parks its job with.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';

const work = new URL('./fixtures/open-filter-work.mjs', import.meta.url).href;
const parkWork = new URL('../test-fixtures/tasks/park-work.mjs', import.meta.url).href;

/** Runs `body` (an ES module's text; `filters`, `tasks`, `Pool`, `work` in scope) in a child; its exit and output. */
function child(body, timeout = 30_000) {
  const script = `import { filters, Pool, tasks } from 'offthread';
const work = tasks(new URL(${JSON.stringify(work)}));
${body}`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: new URL('.', import.meta.url),
    encoding: 'utf8',
    timeout,
  });
  return { status: r.status, signal: r.signal, out: r.stdout.trim(), err: r.stderr };
}

describe('an open task filter and the process', () => {
  test('a filter written once, read, and left open lets the process exit (code 0)', () => {
    const r = child(`
const t = filters.task(work.echo);
t.write('hello');
t.once('data', (c) => console.log('read', c.toString()));
`);
    assert.equal(r.signal, null, `the child was killed after its timeout: it did not exit (${r.err})`);
    assert.equal(r.out, 'read hello', r.err);
    assert.equal(r.status, 0, r.err);
  });

  test('a per-chunk filter on a pool of its own, read by for await (break ends it)', () => {
    const r = child(`
const pool = new Pool({ threads: 1 });
const t = filters.task(tasks(new URL(${JSON.stringify(work)}), { pool }).count, { pool });
t.write('a');
for await (const c of t) { console.log(c.toString()); break; }
`);
    // break destroys the stream; then the pool (idle timer unref'd) does not hold the process.
    assert.equal(r.signal, null, `the child did not exit (${r.err})`);
    assert.equal(r.out, '1:a', r.err);
    assert.equal(r.status, 0, r.err);
  });

  test('a parked filter keeps its state on its worker: written again later, it goes on', () => {
    const r = child(`
const t = filters.task(work.count);
const read = () => new Promise((resolve) => t.once('data', (c) => resolve(c.toString())));
t.write('a');
console.log(await read());
// Parked now; a timer of the caller's own wakes it later.
await new Promise((resolve) => setTimeout(resolve, 300));
t.write('b');
console.log(await read());
`);
    assert.equal(r.signal, null, `the child did not exit (${r.err})`);
    assert.deepEqual(r.out.split('\n'), ['1:a', '2:b'], r.err);
    assert.equal(r.status, 0, r.err);
  });

  test('a web task filter (TransformStream) left open lets the process exit too', () => {
    const r = child(`
const ts = filters.web.task(work.echo);
const writer = ts.writable.getWriter();
const reader = ts.readable.getReader();
await writer.write('hi');
console.log('read', new TextDecoder().decode((await reader.read()).value));
`);
    assert.equal(r.signal, null, `the child did not exit (${r.err})`);
    assert.equal(r.out, 'read hi', r.err);
    assert.equal(r.status, 0, r.err);
  });

  test('a write in flight keeps the process alive until it is answered; then it exits', () => {
    const r = child(`
const t = filters.task(work.late, { args: [400] });
t.write('first');
await new Promise((resolve) => t.once('data', resolve));
// Nothing of the caller's own keeps the loop alive past here: only the answer in flight.
t.write('second');
t.once('data', (c) => console.log('answered', c.toString()));
`);
    assert.equal(r.signal, null, `the child did not exit (${r.err})`);
    assert.equal(r.out, 'answered second', r.err);
    assert.equal(r.status, 0, r.err);
  });

  test('chunks the transform has not taken while it waits for a reader keep the process alive until answered', () => {
    const r = child(`
const counter = tasks(new URL(${JSON.stringify(parkWork)}));
const made = new Int32Array(new SharedArrayBuffer(4));
const t = filters.task(counter.counted, { objectMode: true, args: [made] });
for (let i = 0; i < 100; i++) t.write('c' + i);
let read = 0;
process.on('exit', () => console.log('read', read));
// Nobody reads yet: the transform fills its credit (64 outputs) and waits for a reader,
// with chunks it has not taken. A reader comes 300 ms after the first 64, on
// timers that do not themselves hold the process: only the filter can keep it alive.
const look = setInterval(() => {
  if (Atomics.load(made, 0) < 64) return;
  clearInterval(look);
  setTimeout(() => t.on('data', () => read++), 300).unref();
}, 5).unref();
`);
    // Before, the filter parked while it waited for the reader: the process exited with 0 read.
    assert.equal(r.signal, null, `the child did not exit (${r.err})`);
    assert.equal(r.out, 'read 100', r.err);
    assert.equal(r.status, 0, r.err);
  });

  test('a filter opened behind a parked one on a pool of 1 runs, and the process exits', () => {
    const r = child(
      `
const pool = new Pool({ threads: 1 });
const own = tasks(new URL(${JSON.stringify(work)}), { pool });
const a = filters.task(own.echo);
a.write('a');
console.log('a', String(await new Promise((resolve) => a.once('data', resolve))));
// a is parked now, open; before, it held the pool's one worker and slot until it ended.
const b = filters.task(own.echo);
b.write('b');
b.once('data', (c) => console.log('b', c.toString()));
`,
      20_000,
    );
    assert.equal(r.signal, null, `the child did not exit: the second filter never ran (${r.err})`);
    assert.deepEqual(r.out.split('\n'), ['a a', 'b b'], r.err);
    assert.equal(r.status, 0, r.err);
  });

  test('the answer to a write arrives before the process exits', () => {
    const r = child(`
const t = filters.task(work.late, { args: [400] });
let outputs = 0;
t.on('data', () => outputs++);
t.write('x');
process.on('exit', () => console.log('outputs', outputs));
`);
    assert.equal(r.signal, null, `the child did not exit (${r.err})`);
    assert.equal(r.out, 'outputs 1', r.err);
    assert.equal(r.status, 0, r.err);
  });
});

describe('the job pools: JobOptions.park', () => {
  for (const transport of ['JobPool', 'MessageJobPool']) {
    test(`${transport}: a parked job does not hold the process; switched on again, it does`, () => {
      const body = (switchBack) => `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { ${transport} } = require('../dist/pool/${transport === 'JobPool' ? 'jobs' : 'message-jobs'}.js');
const jobs = new ${transport}({ threads: 1, maxQueue: 10, script: 'tasks', grace: 100, nice: 0 });
jobs.setup({ kind: 'module', mod: 0, url: ${JSON.stringify(work)} });
jobs.setup({ kind: 'export', fn: 0, mod: 0, name: 'late' });
let sw;
// Answers in 500 ms: parked, the process exits first; resumed, it waits.
jobs.run(0, ['done', {}, 500], { park: (s) => { sw = s; } }).then((v) => console.log(v));
sw.park();
${switchBack ? 'setTimeout(() => sw.resume(() => {}), 50);' : ''}
process.on('exit', () => console.log('exit'));
`;
      const parked = child(body(false));
      assert.equal(parked.signal, null, parked.err);
      assert.equal(parked.out, 'exit', parked.err);
      const again = child(body(true));
      assert.equal(again.signal, null, again.err);
      assert.deepEqual(again.out.split('\n'), ['done', 'exit'], again.err);
    });
  }
});
