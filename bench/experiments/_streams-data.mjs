// Deterministic inputs for the streams experiment (no downloads): a multilingual UTF-8
// text shaped like enwik8 (mostly ASCII markup and words, a few percent multi-byte
// sequences of every length), and a CSV / NDJSON file of mixed numeric and text
// columns with RFC 4180 quoting.

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

/** Park–Miller LCG: the same bytes on every machine. */
function lcg(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s = Number((BigInt(s) * 48271n) % 2147483647n);
    return s / 2147483647;
  };
}

const ASCII =
  'the of and in to a is was for on as by with from that at his it an were which are this also be first'.split(' ');
const MARKUP = [
  '<page>',
  '</page>',
  '<title>',
  '</title>',
  '[[',
  ']]',
  '{{',
  '}}',
  "'''",
  '&quot;',
  '\n',
  '\n* ',
  '== ',
];
// 2-byte (Latin-1 supplement, Greek, Cyrillic), 3-byte (CJK, Devanagari), 4-byte (emoji, Gothic).
const MULTI = ['café', 'Größe', 'naïve', 'Ελλάδα', 'Москва', '日本語', '中文', 'हिन्दी', '한국어', '😀', '𐌰𐌱', '€', '—'];

/** One block of text: ~95 % of words ASCII, the rest multi-byte. */
function textBlock(bytes, seed) {
  const rnd = lcg(seed);
  const parts = [];
  let n = 0;
  while (n < bytes) {
    const r = rnd();
    const word =
      r < 0.05
        ? MULTI[Math.floor(rnd() * MULTI.length)]
        : r < 0.15
          ? MARKUP[Math.floor(rnd() * MARKUP.length)]
          : ASCII[Math.floor(rnd() * ASCII.length)];
    parts.push(word, ' ');
    n += Buffer.byteLength(word) + 1;
  }
  return Buffer.from(parts.join(''));
}

/**
 * `n` small texts of `bytes` each, all different (windows of one block at different
 * offsets): the inputs of the many-small-gzips row and its test.
 */
export function smallTexts(n, bytes) {
  const block = textBlock(Math.max(1 << 20, bytes * 4), 13);
  const step = Math.max(1, Math.floor((block.length - bytes) / n));
  return Array.from({ length: n }, (_, i) => {
    const at = (i * step) % (block.length - bytes);
    return Buffer.from(block.subarray(at, at + bytes));
  });
}

/** Writes `mb` MiB of text: a 4 MiB block generated once, repeated. */
export async function writeText(path, mb) {
  const block = textBlock(4 << 20, 7);
  const out = createWriteStream(path);
  let left = mb << 20;
  while (left > 0) {
    const piece = block.subarray(0, Math.min(block.length, left));
    left -= piece.length;
    if (!out.write(piece)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** CSV rows: id u32, score f64, name (quoted when it holds a comma or quote), ok bool, ts i64. */
export async function writeCsv(path, mb, { ndjson = false } = {}) {
  const rnd = lcg(11);
  const out = createWriteStream(path);
  if (!ndjson) out.write('id,score,name,ok,ts\n');
  let left = mb << 20;
  let id = 0;
  while (left > 0) {
    const lines = [];
    for (let i = 0; i < 2000; i++) {
      id++;
      const score = Math.round(rnd() * 2e6 - 1e6) / 1000;
      const w = ASCII[Math.floor(rnd() * ASCII.length)];
      const name = rnd() < 0.1 ? `${w}, "${MULTI[id % MULTI.length]}"` : `${w} ${MULTI[id % MULTI.length]}`;
      const ok = rnd() < 0.5;
      const ts = 1_700_000_000_000 + id * 1000;
      lines.push(
        ndjson
          ? JSON.stringify({ id, score, name, ok, ts })
          : `${id},${score},${/[",]/.test(name) ? `"${name.replaceAll('"', '""')}"` : name},${ok},${ts}`,
      );
    }
    const chunk = `${lines.join('\n')}\n`;
    left -= Buffer.byteLength(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return id;
}

export const CSV_COLUMNS = [
  { name: 'id', type: 'u32' },
  { name: 'score', type: 'f64' },
  { name: 'name', type: 'string' },
  { name: 'ok', type: 'bool' },
  { name: 'ts', type: 'i64' },
];
