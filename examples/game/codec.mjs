// The game's codec, generated/game.ts (from game.km; `offthread/schema` at run time),
// bundled into one ES module, build/game-codec.mjs, that Node 20 (no type stripping)
// and a browser page both import. Rebuilt on every call: esbuild takes milliseconds.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const generated = fileURLToPath(new URL('./generated/game.ts', import.meta.url));
const outDir = fileURLToPath(new URL('./build/', import.meta.url));

export async function buildCodec() {
  const out = await build({
    entryPoints: [generated],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  mkdirSync(outDir, { recursive: true });
  // Test files run in parallel processes: write aside, then rename (atomic), so no
  // process ever imports a half-written file.
  const tmp = `${outDir}game-codec.${process.pid}.tmp`;
  writeFileSync(tmp, out.outputFiles[0].contents);
  renameSync(tmp, `${outDir}game-codec.mjs`);
}
