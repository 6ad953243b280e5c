// Every @ts-expect-error must find its error: a type too loose fails as surely as a wrong one.
import { createQueue, type QueueTaskModule } from 'offthread/queue';

const queue = createQueue({ url: 'redis://127.0.0.1:6379' });
const work: QueueTaskModule<typeof import('./work.js')> = queue.tasks<typeof import('./work.js')>(
  new URL('./work.ts', import.meta.url),
);
const out: Uint8Array = await work.blur(new Uint8Array(4), 2, 1);
const labelled: { n: number; text: string } = await work.label(3);
const aborted = await work.label.with({ timeout: 1000, signal: AbortSignal.timeout(5), onProgress: (v: unknown) => v })(
  1,
);
// @ts-expect-error the wrong argument type
await work.blur('pixels', 2, 1);
// @ts-expect-error a missing argument
await work.label();
// @ts-expect-error not an export of the module
await work.sharpen(1);
// @ts-expect-error not a function export
work.version;
// @ts-expect-error a local-only option
work.blur.with({ priority: 'high' });
// @ts-expect-error the result's type
const wrong: string = await work.label(1);
console.log(out, labelled, aborted, wrong);
