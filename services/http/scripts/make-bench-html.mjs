#!/usr/bin/env node
// Writes public/bench.html: the http-static experiment's page, exactly 8,673 bytes (the
// Nexus.js benchmark's file size). Deterministic (Park–Miller, seed 1), so the file in
// git is reproducible: `node services/http/scripts/make-bench-html.mjs` rewrites it and
// a test checks that it did not change.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const BENCH_HTML_BYTES = 8673;

const WORDS = (
  'event loop thread pool kernel promise offload latency throughput request response ' +
  'worker queue steal batch cache core rust node async await buffer stream socket ' +
  'server client static file header body chunk frame timer signal'
).split(' ');

/** @returns {string} the page, BENCH_HTML_BYTES bytes of UTF-8 (ASCII only) */
export function benchHtml() {
  let s = 1;
  const next = () => {
    s = (16807 * s) % 2147483647;
    return s;
  };
  const word = () => WORDS[next() % WORDS.length];
  const sentence = () => {
    const n = 6 + (next() % 10);
    const w = Array.from({ length: n }, word).join(' ');
    return `${w[0].toUpperCase()}${w.slice(1)}.`;
  };
  const head =
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    '<title>offthread static benchmark page</title>\n' +
    '<style>body{font:16px/1.5 sans-serif;margin:2rem auto;max-width:40rem}h2{margin-top:2rem}</style>\n' +
    '</head>\n<body>\n<h1>Static benchmark page</h1>\n';
  const tail = '</body>\n</html>\n';
  let body = '';
  for (let i = 0; ; i++) {
    const part = `${i % 3 === 0 ? `<h2>Section ${i / 3 + 1}</h2>\n` : ''}<p>${Array.from({ length: 3 }, sentence).join(' ')}</p>\n`;
    // Stop before the page would pass the size; the padding comment fills the rest.
    if (Buffer.byteLength(head + body + part + tail) + 16 > BENCH_HTML_BYTES) break;
    body += part;
  }
  const room = BENCH_HTML_BYTES - Buffer.byteLength(head + body + tail);
  const pad = `<!--${'.'.repeat(room - 8)}-->\n`;
  const html = head + body + pad + tail;
  if (Buffer.byteLength(html) !== BENCH_HTML_BYTES) throw new Error(`bench.html is ${Buffer.byteLength(html)} bytes`);
  return html;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = fileURLToPath(new URL('../public/bench.html', import.meta.url));
  writeFileSync(out, benchHtml());
  console.log(`wrote ${out} (${BENCH_HTML_BYTES} bytes)`);
}
