// The streams experiment's Nexus-shape child (issue 35): one conversion piped to 4 files
// through filters.source(…).pushFilter(…).pipe(…) writes the one-shot conversion into
// every file, with offthread's filter and with iconv-lite's.
import assert from 'node:assert/strict';
import { transcode } from 'node:buffer';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fanOutChild } from '../experiments/_streams-children.mjs';
import { writeText } from '../experiments/_streams-data.mjs';

test('fanOutChild: every one of the 4 files holds the whole conversion', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'offthread-nexus-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const text = path.join(dir, 'text.utf8');
  await writeText(text, 4);
  const expected = createHash('sha256')
    .update(transcode(await readFile(text), 'utf8', 'utf16le'))
    .digest('hex');
  for (const method of ['offthread', 'iconv-lite']) {
    const r = await fanOutChild(method, text, dir, 4);
    assert.deepEqual(r.hashes, [expected, expected, expected, expected], method);
    assert.ok(r.wallMs > 0 && Number.isFinite(r.loop.p99Ms), method);
  }
});
