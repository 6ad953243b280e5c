/**
 * Big buffers in a cloned message: copied once here and moved, not cloned.
 *
 * Structured clone copies an ArrayBuffer twice (into the serializer's buffer on the
 * sender, out of it on the receiver, with the receiver's fresh allocation faulting its
 * pages in on its own thread). Copying it here and moving the copy costs one copy: a
 * 1 MiB argument's round trip took 0.09–0.10 ms against clone's 0.18–0.59 (medians of
 * 300, raw worker_threads, Node 20 and 24; docs/tasks.md, "What crosses"). What the
 * worker gets is what clone gives: the whole buffer (a view keeps its offset and
 * length), a Buffer as a Uint8Array, one copy per buffer however often it appears.
 */

/** Buffers from this size on are copied and moved; smaller ones are cheaper to clone. */
export const MOVE_FROM = 64 * 1024;

/** The walk met something it does not rebuild holding a big buffer, or a cycle: clone it all. */
const GIVE_UP = Symbol('give up');

interface Walk {
  copies: Map<ArrayBuffer, ArrayBuffer>;
  /** Containers walked: what they became (themselves when nothing in them moved). */
  done: Map<object, unknown>;
  open: Set<object>;
  /** The caller's own transfer list: those buffers move as they are. */
  moving: ReadonlySet<unknown>;
}

/**
 * `args` with each big, unshared ArrayBuffer (and the views on it) replaced by a copy to
 * move, and the transfer list that moves the copies beside the caller's own. When nothing
 * is copied (or the value is one the copies could not be put back into exactly) these are
 * the caller's own `args` and `transfer`, to post as they are.
 */
export function moveCopies(
  args: unknown[],
  transfer: Transferable[] | undefined,
): { args: unknown[]; transfer: Transferable[] | undefined } {
  const walk: Walk = { copies: new Map(), done: new Map(), open: new Set(), moving: new Set(transfer ?? []) };
  let out: unknown;
  try {
    out = replace(args, walk, 0);
  } catch (err) {
    if (err === GIVE_UP) return { args, transfer };
    throw err;
  }
  if (walk.copies.size === 0) return { args, transfer };
  return { args: out as unknown[], transfer: [...(transfer ?? []), ...walk.copies.values()] };
}

function replace(value: unknown, walk: Walk, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof ArrayBuffer) return copyOf(value, walk) ?? value;
  if (ArrayBuffer.isView(value)) {
    const copy = copyOf(value.buffer, walk);
    return copy ? viewOn(value, copy) : value;
  }
  const proto = Object.getPrototypeOf(value);
  const array = proto === Array.prototype;
  if (!array && proto !== Object.prototype) {
    // Map, Set, Date, Error…: cloned as they are; a big buffer inside one would then be
    // cloned apart from its copy elsewhere, two buffers where clone gives one.
    if (holdsBig(value, walk, depth)) throw GIVE_UP;
    return value;
  }
  const seen = walk.done.get(value);
  if (seen !== undefined) return seen;
  if (walk.open.has(value) || depth > 64) throw GIVE_UP; // a cycle (or a very deep value)
  walk.open.add(value);
  let out: Record<string, unknown> | unknown[] | null = null;
  const put = (key: string | number, v: unknown): void => {
    const r = replace(v, walk, depth + 1);
    if (r === v) return;
    if (!out) {
      // Rebuilt as clone reads it: own enumerable properties (an array with holes, or
      // with properties besides its indices, is left to clone).
      if (array && Object.keys(value).length !== (value as unknown[]).length) throw GIVE_UP;
      out = array ? (value as unknown[]).slice() : { ...(value as Record<string, unknown>) };
    }
    (out as Record<string | number, unknown>)[key] = r;
  };
  if (array) {
    const a = value as unknown[];
    for (let i = 0; i < a.length; i++) put(i, a[i]);
  } else {
    const o = value as Record<string, unknown>;
    for (const key of Object.keys(o)) put(key, o[key]);
  }
  walk.open.delete(value);
  const result = out ?? value;
  walk.done.set(value, result);
  return result;
}

/** A copy of `buffer` to move, made once; null when it stays as it is. */
function copyOf(buffer: ArrayBufferLike, walk: Walk): ArrayBuffer | null {
  if (!(buffer instanceof ArrayBuffer) || buffer.byteLength < MOVE_FROM || walk.moving.has(buffer)) return null;
  if ((buffer as { resizable?: boolean }).resizable) return null; // clone keeps it resizable
  let copy = walk.copies.get(buffer);
  if (!copy) {
    copy = buffer.slice(0);
    walk.copies.set(buffer, copy);
  }
  return copy;
}

/** The view `view` is, on `copy`: a Buffer becomes a Uint8Array, as clone makes it. */
function viewOn(view: ArrayBufferView, copy: ArrayBuffer): ArrayBufferView {
  if (view instanceof DataView) return new DataView(copy, view.byteOffset, view.byteLength);
  const name = Object.prototype.toString.call(view).slice(8, -1);
  const Ctor = (globalThis as unknown as Record<string, new (b: ArrayBuffer, o: number, n: number) => ArrayBufferView>)[
    name
  ];
  if (typeof Ctor !== 'function') throw GIVE_UP;
  return new Ctor(copy, view.byteOffset, (view as unknown as { length: number }).length);
}

/** Whether a value this walk leaves to clone reaches a big buffer. */
function holdsBig(value: object, walk: Walk, depth: number): boolean {
  if (depth > 16) return true; // deep or circular: clone it all rather than look further
  const inner: unknown[] =
    value instanceof Map
      ? [...value].flat()
      : value instanceof Set
        ? [...value]
        : Object.values(value as Record<string, unknown>);
  for (const v of inner) {
    if (typeof v !== 'object' || v === null) continue;
    const buffer = v instanceof ArrayBuffer ? v : ArrayBuffer.isView(v) ? v.buffer : null;
    if (buffer) {
      if (buffer instanceof ArrayBuffer && buffer.byteLength >= MOVE_FROM && !walk.moving.has(buffer)) return true;
    } else if (holdsBig(v, walk, depth + 1)) return true;
  }
  return false;
}
