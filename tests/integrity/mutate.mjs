// Malicious producers (docs/guest-integrity.md): valid messages turned hostile. Words
// that were non-zero in the valid message (headers, offsets, counts, columns tables) are
// the favourite targets, since those are what a reader follows.
import { prng } from './gen-schemas.mjs';

export const KINDS = [
  'flip',
  'outOfBounds',
  'backwards',
  'self',
  'hugeCount',
  'header',
  'truncate',
  'extend',
  'splice',
  'combo',
];

function words(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const all = [];
  const set = [];
  for (let at = 0; at + 4 <= bytes.length; at += 4) {
    all.push(at);
    if (view.getUint32(at, true) !== 0) set.push(at);
  }
  return { view, all, set };
}

function apply(kind, b, rnd) {
  const { view, all, set } = words(b);
  const target = () => (set.length > 0 && rnd.chance(0.8) ? rnd.pick(set) : all.length > 0 ? rnd.pick(all) : -1);
  const put = (value) => {
    const at = target();
    if (at >= 0) view.setUint32(at, value >>> 0, true);
    return at;
  };
  switch (kind) {
    case 'flip':
      for (let n = 1 + rnd.below(3); n > 0 && b.length > 0; n--) b[rnd.below(b.length)] ^= 1 << rnd.below(8);
      return b;
    case 'outOfBounds':
      put(
        rnd.pick([
          b.length,
          b.length + 4,
          b.length + 64,
          0xffffffff,
          0x80000000,
          0xfffffffc,
          b.length - 1 + rnd.below(8),
        ]),
      );
      return b;
    case 'backwards': {
      // An offset to an earlier (aligned) position: shared structure, or a loop when it
      // points at an ancestor; 0 is the root.
      const at = target();
      const unit = rnd.chance(0.5) ? 8 : 64;
      if (at >= 0) view.setUint32(at, rnd.chance(0.3) ? 0 : Math.floor(rnd.below(at + 1) / unit) * unit, true);
      return b;
    }
    case 'self': {
      const at = target();
      if (at >= 0) view.setUint32(at, rnd.chance(0.5) ? at : at & ~63, true);
      return b;
    }
    case 'hugeCount':
      put(rnd.pick([0x7fffffff, 0xffffffff, 0x10000, 0x3fffffff, b.length, b.length + 1, 0x01000000]));
      return b;
    case 'header':
      // A dynamic struct header whose size or unused bytes lie.
      put(
        rnd.pick([
          0xe0000001,
          0x1fffffff,
          0x00000000,
          0x20000001,
          0x00000001,
          0xe0000000,
          (b.length >>> 3) + 1,
          0x40000000 | (b.length >>> 3),
        ]),
      );
      return b;
    case 'truncate': {
      const cut = rnd.chance(0.5) ? rnd.below(b.length + 1) : Math.floor(rnd.below(b.length + 1) / 64) * 64;
      return b.slice(0, cut);
    }
    case 'extend': {
      const tail = Uint8Array.from({ length: 1 + rnd.below(128) }, () => rnd.below(256));
      const out = new Uint8Array(b.length + tail.length);
      out.set(b);
      out.set(tail, b.length);
      return out;
    }
    case 'splice': {
      // 8 bytes of the message copied over another aligned place: plausible, wrong.
      if (b.length < 16) return b;
      const from = rnd.below(b.length >>> 3) * 8;
      const to = rnd.below(b.length >>> 3) * 8;
      b.copyWithin(to, from, from + 8);
      return b;
    }
    default:
      throw new Error(`unknown mutation ${kind}`);
  }
}

/** A mutant of `valid`, deterministic from `seed`: `{ kind, bytes }` (a fresh, 64-aligned buffer). */
export function mutate(valid, seed) {
  const rnd = prng(seed);
  const kind = rnd.pick(KINDS);
  let bytes = valid.slice();
  if (kind === 'combo') {
    for (let n = 2 + rnd.below(2); n > 0; n--) bytes = apply(rnd.pick(KINDS.slice(0, -1)), bytes, rnd);
  } else bytes = apply(kind, bytes, rnd);
  return { kind, bytes };
}
