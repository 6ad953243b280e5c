// The service's node flags are stated in three places a user or operator reads or runs:
// SERVICE_NODE_ARGS (the tests and the soak), `npm start`, and the README's
// process-manager command. They must agree, or the soak measures something not shipped.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { SERVICE_NODE_ARGS } from '../test-support/process.mjs';

const root = new URL('../../../', import.meta.url);
const command = `node ${SERVICE_NODE_ARGS.join(' ')} services/http/src/main.mjs`;

test('npm start runs the service with SERVICE_NODE_ARGS', () => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
  assert.ok(pkg.scripts.start.endsWith(`exec ${command}`), pkg.scripts.start);
});

test("the README's process-manager command uses SERVICE_NODE_ARGS", () => {
  const readme = readFileSync(new URL('README.md', root), 'utf8');
  assert.ok(readme.includes(`\`${command}\``), `README.md should show \`${command}\``);
});
