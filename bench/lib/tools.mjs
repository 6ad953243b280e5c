// Tools some experiments need that are not npm packages, installed on first use when
// missing, as `npm start` / `npm test` install theirs: Debian packages with apt-get (as
// root), PyPI packages with pip and Go programs with `go install`. Where that is
// impossible (not root, no apt-get, no Go) the caller reports the row as skipped and
// names the package.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const has = (/** @type {string} */ cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
let aptUpdated = false;

/** Whether ensureApt can give `binary`, asking nothing: on the PATH, or apt-get as root. */
export const aptCanGive = (/** @type {string} */ binary) => has(binary) || (has('apt-get') && process.getuid?.() === 0);

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

/** The Go toolchain: `go` on the PATH, or the official tarball's place. */
function goBinary() {
  if (has('go')) return 'go';
  const official = '/usr/local/go/bin/go';
  return spawnSync(official, ['version']).status === 0 ? official : null;
}

/**
 * The path of Go program `binary`: on the PATH, or in GOPATH/bin, where it is installed
 * with `go install module@version` (from the Go module proxy) when missing.
 * @param {string} binary e.g. 'vegeta'
 * @param {string} module e.g. 'github.com/tsenart/vegeta/v12@v12.13.0'
 * @returns {{ path: string } | { error: string }} why it is not there otherwise
 */
export function ensureGoTool(binary, module, progress = console.error) {
  if (has(binary)) return { path: binary };
  const go = goBinary();
  if (go === null) return { error: `no Go toolchain (go on the PATH or /usr/local/go/bin/go) to install ${module}` };
  const gopath = spawnSync(go, ['env', 'GOPATH'], { encoding: 'utf8' }).stdout.trim();
  const installed = `${gopath}/bin/${binary}`;
  if (gopath && existsSync(installed)) return { path: installed };
  progress(`installing ${module} (go install)`);
  const r = spawnSync(go, ['install', module], { encoding: 'utf8' });
  if (r.status !== 0) return { error: `go install ${module} failed: ${(r.stderr || r.error?.message || '').trim()}` };
  return existsSync(installed) ? { path: installed } : { error: `go install ${module} left no ${installed}` };
}
