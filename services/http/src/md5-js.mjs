// The MD5 loop of docs/kernels.md in plain JS (no offthread import: the piscina worker loads it).
import { createHash } from 'node:crypto';
import md5js from 'blueimp-md5';

/**
 * d₀ = "", dᵢ = lowercase hex(MD5(text ‖ dᵢ₋₁)); returns d_rounds.
 * @param {(s: string) => string} hex
 * @param {string} text
 * @param {number} rounds
 */
export function md5Loop(hex, text, rounds) {
  let d = '';
  for (let i = 0; i < rounds; i++) d = hex(text + d);
  return d;
}

/** blueimp-md5 (UTF-8 input, hex output). @param {string} s */
export const md5Blueimp = (s) => md5js(s);

/** node:crypto, one createHash per round. @param {string} s */
export const md5Crypto = (s) => createHash('md5').update(s).digest('hex');
