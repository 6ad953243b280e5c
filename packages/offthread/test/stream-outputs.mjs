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

/** Writes `chunks` into a web TransformStream while its readable is drained: every output. */
export async function drain(stream, chunks) {
  const writer = stream.writable.getWriter();
  const writing = (async () => {
    for (const c of chunks) await writer.write(Buffer.from(c));
    await writer.close();
  })();
  const out = [];
  for await (const b of stream.readable) out.push(b);
  await writing;
  return out;
}
