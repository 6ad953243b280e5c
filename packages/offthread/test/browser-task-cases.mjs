// The calls browser-tasks.test.mjs and bundlers.test.mjs make of
// test-fixtures/tasks/portable.mjs, as one function's source: run in a page (with the
// browser entry) and in Node (with `require('offthread')`), its results must be equal.
// Values are put in a canonical, JSON-safe form (types tagged), errors by what crosses:
// name, message, code, class, cause, own properties.

/** @param {any} o the offthread entry @param {string | URL} url the module @returns {Promise<Record<string, unknown>>} */
export async function portableCases(o, url) {
  const canon = (v) => {
    if (v === undefined) return ['undefined'];
    if (typeof v === 'bigint') return ['bigint', String(v)];
    if (typeof v === 'number') return Object.is(v, -0) ? ['-0'] : Number.isNaN(v) ? ['NaN'] : v;
    if (v === null || typeof v !== 'object') return v;
    if (v instanceof Date) return ['Date', v.getTime()];
    if (v instanceof Map) return ['Map', [...v].map(([k, x]) => [canon(k), canon(x)])];
    if (v instanceof Set) return ['Set', [...v].map(canon)];
    if (ArrayBuffer.isView(v)) return [Object.prototype.toString.call(v), Array.from(v, String)];
    if (Array.isArray(v)) return v.map(canon);
    return ['Object', Object.keys(v).map((k) => [k, canon(v[k])])];
  };
  const canonErr = (e) =>
    typeof e !== 'object' || e === null
      ? ['thrown', canon(e)]
      : {
          name: e.name,
          message: String(e.message).replaceAll(String(url), '<url>'),
          code: e.code ?? null,
          classes: [Error, RangeError, TypeError, SyntaxError].map((c) => e instanceof c),
          cause: e.cause ? canonErr(e.cause) : null,
          details: canon(e.details),
          field: e.field ?? null,
          stack: typeof e.stack === 'string',
        };
  const pool = new o.Pool({ threads: 2 });
  const work = o.tasks(url, { pool });
  const out = {};
  const settle = async (name, call) => {
    try {
      out[name] = { ok: canon(await call()) };
    } catch (err) {
      out[name] = { err: canonErr(err) };
    }
  };
  const collect = async (stream) => {
    const items = [];
    try {
      for await (const x of stream) items.push(x);
    } catch (err) {
      items.push({ failed: canonErr(err) });
    }
    return items;
  };
  try {
    await settle('add', () => work.add(2, 3));
    await settle('echo', () =>
      work.echo({
        list: [1, 'two', null, -0, Number.NaN, 2 ** 40],
        map: new Map([[1, { a: 1 }]]),
        set: new Set(['s']),
        date: new Date(0),
        big: 10n ** 20n,
        bytes: new Uint8Array([1, 2, 3]),
        floats: new Float64Array([1.5, -2]),
        text: 'héllo ✓'.repeat(300),
      }),
    );
    await settle('typeOf', () => work.typeOf(new Map()));
    await settle('primes', () => work.primes(30_000));
    await settle('fnv', () => work.fnv('offthread', 2_000));
    await settle('later', () => work.later('v'));
    const bytes = new Uint8Array(1 << 16).map((_, i) => i & 255);
    await settle('sum (transferred)', () => work.sum.with({ transfer: [bytes.buffer] })(bytes));
    await settle('transferred away', async () => bytes.byteLength);
    await settle('fill', () => work.fill(new Uint8Array(8), 7));
    await settle('priorities', () =>
      Promise.all(['low', 'normal', 'high'].map((priority) => work.add.with({ priority })(priority, '!'))),
    );
    await settle('batch', async () =>
      (await Promise.all(Array.from({ length: 64 }, (_, i) => work.primes(500 + i)))).join(),
    );
    await settle('fail', () => work.fail());
    await settle('failAsync', () => work.failAsync());
    await settle('throwString', () => work.throwString());
    await settle('customError', () => work.customError());
    await settle('returnFunction', () => work.returnFunction());
    await settle('argument function', () => work.echo({ save() {} }));
    await settle('no such export', () => work.nothere());
    await settle('rows', () => collect(work.rows(5)));
    await settle('syncRows', () => collect(work.syncRows(3)));
    await settle('failingRows', () => collect(work.failingRows()));
    await settle('rows, break', async () => {
      const seen = [];
      for await (const r of work.rows(100)) {
        seen.push(r.i);
        if (r.i === 2) break;
      }
      return seen;
    });
    // A task export as a stream filter: filters.web.task() in Node, filters.task() in a
    // browser entry (its filters are TransformStreams) — one job on one worker.
    const task = (o.filters.web ?? o.filters).task;
    const pipe = async (ts, chunks) => {
      const items = [];
      const src = new ReadableStream({
        start(c) {
          for (const x of chunks) c.enqueue(x);
          c.close();
        },
      });
      const reader = src.pipeThrough(ts).getReader();
      try {
        for (let r = await reader.read(); !r.done; r = await reader.read()) items.push(r.value);
      } catch (err) {
        items.push({ failed: canonErr(err) });
      }
      return items;
    };
    await settle('task filter, bytes', () => pipe(task(work.echo, { pool }), ['ab', new Uint8Array([99])]));
    await settle('task filter, objects', () =>
      pipe(task(work.typeOf, { pool, objectMode: true }), [new Map(), 1, 'x', null]),
    );
    await settle('task filter, failing', () => pipe(task(work.fail, { pool, objectMode: true }), [1]));
    const stats = pool.stats().tasks;
    out.stats = { threads: stats.threads, queued: stats.queued, replaced: stats.replaced };
  } finally {
    await pool.close();
  }
  return out;
}
