/**
 * Guests: users' own WebAssembly modules that implement schema-defined interfaces,
 * run on every core with timeouts and memory limits (docs/guest-abi.md).
 */
export {
  ABI_VERSION,
  type Access,
  type FunctionDecl,
  type InterfaceDecl,
  type MemoryDecl,
  type Pattern,
} from './abi.js';
export {
  type CloseOptions,
  type GuestCallOptions,
  GuestHost,
  type GuestInterface,
  type GuestSource,
  type GuestStats,
  type LoadOptions,
  load,
} from './load.js';
export { multiMemory } from './wasm-scan.js';
