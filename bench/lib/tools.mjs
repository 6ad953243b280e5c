// Tools some experiments need that are not npm packages, installed on first use when
// missing, as `npm start` / `npm test` install theirs: Debian packages with apt-get (as
// root) and PyPI packages with pip. Where that is impossible (not root, no apt-get) the
// caller reports the row as skipped and names the package.
import { spawnSync } from 'node:child_process';

const has = (/** @type {string} */ cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
let aptUpdated = false;

/** True once `binary` is on the PATH, installing Debian package `pkg` if it was not. */
export function ensureApt(/** @type {string} */ binary, /** @type {string} */ pkg, progress = console.error) {
  if (has(binary)) return true;
  if (!has('apt-get') || process.getuid?.() !== 0) return false;
  progress(`installing ${pkg} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    spawnSync('apt-get', ['update', '-qq'], { env, stdio: 'ignore' });
    aptUpdated = true;
  }
  spawnSync('apt-get', ['install', '-y', '-qq', pkg], { env, stdio: 'ignore' });
  return has(binary);
}

/** True once Python can import `module`, installing PyPI package `pkg` with pip if not. */
export function ensurePip(/** @type {string} */ module, pkg = module, progress = console.error) {
  const importable = () => spawnSync('python3', ['-c', `import ${module}`]).status === 0;
  if (importable()) return true;
  progress(`installing ${pkg} (pip)`);
  spawnSync('python3', ['-m', 'pip', 'install', '--quiet', pkg], { stdio: 'ignore' });
  return importable();
}
