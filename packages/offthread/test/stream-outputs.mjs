// Shared by the filter tests: every chunk a filter gives, in order, through a real
// pipeline (Readable.from → filter → object-mode sink).
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export async function outputs(filter, chunks) {
  const out = [];
  const sink = new Writable({
    objectMode: true,
    write(c, _e, cb) {
      out.push(c);
      cb();
    },
  });
  await pipeline(Readable.from(chunks), filter, sink);
  return out;
}
