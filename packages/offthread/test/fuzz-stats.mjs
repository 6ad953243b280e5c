// Per-property statistics of the JS fuzzers (schema-fuzz, api-fuzz, guest-fuzz), written
// for `npm run fuzz` (scripts/fuzz.mjs) to OFFTHREAD_FUZZ_STATS when it is set: one shape
// for all three — executions, failures and the slowest input of each property.
import { writeFileSync } from 'node:fs';
import { after } from 'node:test';

/**
 * @param {{ seed: number, runs: number, blank: Record<string, unknown> }} o  `blank`: what a
 *   property records of its slowest input before it has one (e.g. `{ slowestBytes: 0 }`)
 */
export function fuzzStats({ seed, runs, blank }) {
  /** @type {Map<string, any>} */
  const stats = new Map();
  const stat = (/** @type {string} */ name) => {
    let s = stats.get(name);
    if (!s) {
      s = { name, executions: 0, failures: 0, slowestMs: 0, ...blank };
      stats.set(name, s);
    }
    return s;
  };
  after(() => {
    const file = process.env.OFFTHREAD_FUZZ_STATS;
    if (!file) return;
    const properties = [...stats.values()];
    const executions = properties.reduce((a, p) => a + p.executions, 0);
    writeFileSync(file, `${JSON.stringify({ seed, runsPerProperty: runs, executions, properties }, null, 2)}\n`);
  });
  return {
    /** The slowest time recorded for `name` so far (0: none). */
    slowestMs: (/** @type {string} */ name) => stats.get(name)?.slowestMs ?? 0,
    /** One execution of `name` that took `ms`; `input` describes it, kept if it is the slowest yet. */
    record(/** @type {string} */ name, /** @type {number} */ ms, /** @type {Record<string, unknown>} */ input) {
      const s = stat(name);
      s.executions++;
      if (ms > s.slowestMs) Object.assign(s, { slowestMs: ms }, input);
    },
    /** The property `name` failed. */
    failed: (/** @type {string} */ name) => {
      stat(name).failures++;
    },
  };
}
