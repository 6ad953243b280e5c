// The packed package's types in a fresh app outside the repo (issue 30): tsc with
// skipLibCheck off and strict on, for a Node app (nodenext, no DOM lib), Vite's default
// bundler tsconfig without customConditions (no DOM lib), and the same with DOM plus the
// browser entry. scripts/typecheck-apps.mjs writes the apps; every @ts-expect-error in
// them must find its error, so a type that is too loose fails as surely as a missing one.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { freshApp, SHAPES, typecheck } from '../../../scripts/typecheck-apps.mjs';

describe('types in a fresh app (skipLibCheck: false, strict)', () => {
  const app = freshApp();
  after(() => rmSync(app, { recursive: true, force: true }));

  for (const shape of Object.keys(SHAPES)) {
    test(`${shape}: offthread, offthread/schema, offthread/queue check clean`, () => {
      const out = typecheck(app, { [shape]: SHAPES[shape] })[shape];
      assert.equal(out, '', `tsc (${shape}):\n${out}`);
    });
  }
});
