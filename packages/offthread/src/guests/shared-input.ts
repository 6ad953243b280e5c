/**
 * The host's side of reading fanout inputs in place (docs/guest-abi.md, "Reading the
 * input in place"): one shared WebAssembly.Memory per interface memory that rewritten
 * guests import, posted to every worker, and the regions of it that running fanouts
 * hold. A fanout writes its input into a free region once; the region is freed when
 * every exporter has settled. Host-neutral.
 */
import { WASM_PAGE } from './abi.js';

/** Regions start on 64-byte boundaries, as the zero-copy readers' columns expect. */
const ALIGN = 64;

/** Where one fanout's input lies in an input memory (what an in-place call carries). */
export interface Region {
  /** `<interface>.<memory>`. */
  memory: string;
  at: number;
  length: number;
}

/** The 'guest-memory' setup message: a worker links `memory` to the guests that read `name` in place. */
export interface GuestMemoryMessage {
  type: 'guest-memory';
  name: string;
  memory: WebAssembly.Memory;
}

export class InputMemory {
  readonly memory: WebAssembly.Memory;
  readonly #size: number;
  /** Regions in use, sorted by start: [at, end). */
  readonly #used: { at: number; end: number }[] = [];

  constructor(
    readonly name: string,
    pages: number,
  ) {
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    this.#size = pages * WASM_PAGE;
  }

  /**
   * Writes `bytes` into the first free region that holds them, or returns null when
   * none does (running fanouts hold the rest; the caller copies instead).
   */
  place(bytes: Uint8Array): Region | null {
    // Not at 0: a guest may take address 0 for "no input".
    let at = ALIGN;
    let i = 0;
    for (; i < this.#used.length; i++) {
      const u = this.#used[i] as { at: number; end: number };
      if (u.at - at >= bytes.length) break;
      at = Math.ceil(u.end / ALIGN) * ALIGN;
    }
    if (at + bytes.length > this.#size) return null;
    this.#used.splice(i, 0, { at, end: at + Math.max(bytes.length, 1) });
    new Uint8Array(this.memory.buffer, at, bytes.length).set(bytes);
    return { memory: this.name, at, length: bytes.length };
  }

  free(region: Region): void {
    const i = this.#used.findIndex((u) => u.at === region.at);
    if (i >= 0) this.#used.splice(i, 1);
  }

  /** Regions held by fanouts whose exporters have not all settled. */
  get regions(): number {
    return this.#used.length;
  }
}
