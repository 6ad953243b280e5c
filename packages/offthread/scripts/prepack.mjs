#!/usr/bin/env node
// prepack: the tarball carries the repository's README.md, LICENSE and user docs
// (docs/*.md) at the same relative places as in the repository, so the README's
// `docs/x.md` links and the docs' links to each other resolve in node_modules/offthread
// as they do in a clone. A relative link to a file the package does not carry
// (bench/results, crates/, services/, ARCHITECTURE.md) would dead-end there; in the
// packed copy it becomes the file's repository path, in code, after its text. The
// repository's own files keep their links. `npm pack` runs this; so does
// scripts/package.mjs before it stages the package.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const root = join(pkgDir, '..', '..');

/** Repository paths the package carries, at the same path inside it. */
export function shippedFiles() {
  const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'));
  return ['README.md', ...docs.sort().map((f) => `docs/${f}`)];
}

const LINK = /!?\[((?:[^\]\\]|\\.)*)\]\(([^)\s]+)\)/g;

/**
 * `text` (the repository file `file`) as the package carries it: links to files in
 * `shipped` kept, other relative links spelled out as repository paths.
 */
export function packaged(text, file, shipped) {
  let fence = null;
  return text
    .split('\n')
    .map((line) => {
      const open = /^\s*(`{3,}|~{3,})/.exec(line);
      if (fence) {
        if (open && open[1][0] === fence[0] && open[1].length >= fence.length) fence = null;
        return line;
      }
      if (open) {
        fence = open[1];
        return line;
      }
      return line.replace(LINK, (whole, label, target) => {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) return whole;
        const path = target.split('#')[0];
        const inRepo = posix.normalize(posix.join(posix.dirname(file), path)).replace(/\/$/, '');
        if (shipped.has(inRepo)) return whole;
        const plain = label.replaceAll('`', '').replace(/\/$/, '');
        if (inRepo === plain || inRepo.endsWith(`/${plain}`)) return `\`${inRepo}\``;
        return `${label} (\`${inRepo}\`)`;
      });
    })
    .join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = shippedFiles();
  const shipped = new Set(files);
  rmSync(join(pkgDir, 'docs'), { recursive: true, force: true });
  mkdirSync(join(pkgDir, 'docs'));
  for (const file of files) {
    writeFileSync(join(pkgDir, file), packaged(readFileSync(join(root, file), 'utf8'), file, shipped));
  }
  copyFileSync(join(root, 'LICENSE'), join(pkgDir, 'LICENSE'));
}
