// Every figure the bench quotes from a seed names the seed and the place it comes from
// (issue 35: four quotes had the wrong figure number, the wrong comparison, or a figure
// the seed never gave). The convention, in docs/results.md: a quoted figure is written
// `paper (seed NNN, <table, figure or section>): <figure>` or `blog (seed NNN, …): …`.
// This test scans the committed results, the generators that write them and
// docs/results.md for anything that quotes a paper or blog figure without that form.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The five seeds, numbered as docs/results.md lists them. */
const SEEDS = new Set(['000', '001', '002', '003', '004']);

// What reads as a quoted seed figure: "paper: 0.935", "(paper: …", "Paper (Go): write 10: …",
// "Blog figures (4 cores): JS 610", "vs paper (+74.9%)".
const QUOTES = [
  /\b(?:paper|blog)(?:'s)?(?: figures?)?\s*(?:\([^()\n]*\))?\s*:\s*[^.;\n<"]{0,23}?\d/gi,
  /\bvs\.? (?:the )?(?:paper|blog)\b\s*\(\s*[+\-−]?\d/gi,
  /\(\s*(?:the )?(?:paper|blog)\s*:/gi,
];
const NAMED = /\((?:as )?seed (\d{3})\b/;

/**
 * The quotes in `text` that do not name a known seed.
 * @param {string} text
 * @returns {string[]}
 */
function unnamedQuotes(text) {
  const bad = [];
  for (const re of QUOTES) {
    for (const m of text.matchAll(re)) {
      const seed = NAMED.exec(m[0])?.[1];
      if (!seed || !SEEDS.has(seed)) bad.push(m[0]);
    }
  }
  return bad;
}

/** @param {string} dir @param {RegExp} ext @returns {string[]} */
function files(dir, ext) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p, ext));
    else if (ext.test(name)) out.push(p);
  }
  return out;
}

const SCANNED = [
  ...files(path.join(ROOT, 'bench/results'), /\.(md|json|svg)$/),
  ...files(path.join(ROOT, 'bench/experiments'), /\.mjs$/),
  path.join(ROOT, 'docs/results.md'),
];

test('the checker flags unnamed quotes and accepts named ones', () => {
  for (const bad of [
    'Chromium wasm / Node wasm at 10^7 (paper: 0.935)',
    'fixed: native build vs paper (+74.9%)',
    'Paper (Go, different machine): write 10: Karmem 194.9 ns',
    'Blog figures (4 cores): JS 610 ms/req',
    'npm qrcode (the blog: defaults)',
    'within ±15 points of the paper: **2.00 of 6**',
    'paper (seed 009, Fig. 1): 3',
  ]) {
    assert.ok(unnamedQuotes(bad).length >= 1, bad);
  }
  for (const good of [
    'Chromium wasm / Node nativeBitwise at 10^6, paper (seed 000, Fig. 9 text: Chromium wasm / addonBwSync): 0.935',
    'fixed: native build vs paper (seed 003, Table 3: +74.9%)',
    'paper (seed 003, Tables 5–6; Go, different machine): write 10: Karmem 194.9 ns',
    'blog (seed 002, 4 cores): JS 610 ms/req',
    'the paper does not define its ±; this is the usual reading',
  ]) {
    assert.deepEqual(unnamedQuotes(good), [], good);
  }
});

test('every quoted seed figure in bench results, generators and docs/results.md names its seed', () => {
  assert.ok(SCANNED.length > 50, `scanned ${SCANNED.length} files`);
  const found = [];
  for (const f of SCANNED) {
    for (const q of unnamedQuotes(readFileSync(f, 'utf8'))) found.push(`${path.relative(ROOT, f)}: ${q}`);
  }
  assert.deepEqual(found, []);
});

test('the four quotes of issue 35 are gone and their corrections are in place', () => {
  const read = (/** @type {string} */ f) => readFileSync(path.join(ROOT, f), 'utf8');
  for (const dir of ['bench/results', 'bench/results/pi-default']) {
    const pi = read(`${dir}/pi.md`);
    // The paper's Figure 6 is memory, 7 the sync variants, 8 the async ones.
    assert.match(pi, /sync variants, as paper \(seed 000, Fig\. 7\)/);
    assert.match(pi, /async variants, as paper \(seed 000, Fig\. 8\)/);
    assert.match(pi, /peak RSS[^\]]*paper \(seed 000, Fig\. 6\)/);
    assert.doesNotMatch(pi, /\(Figure [678]\)/);
  }
  for (const f of SCANNED) {
    const text = readFileSync(f, 'utf8');
    const at = path.relative(ROOT, f);
    assert.doesNotMatch(text, /blog measured npm qrcode/, at);
    assert.doesNotMatch(text, /vs JSON 5,787|vs JSON 1,325\.57/, at);
    assert.doesNotMatch(text, /Node wasm at 10\^7 \(paper/, at);
  }
  // The 93.5 % is Chromium wasm against the native addon at 10^6, computed from our rows.
  assert.match(read('bench/results/browser.md'), /Chromium wasm \/ Node nativeBitwise \(1 thread\) at 10\^6, paper/);
});
