// The same guest modules as guests.test.mjs, through `offthread/browser` in real headless
// Chromium and Firefox ESR, with and without cross-origin isolation (shared memory or not):
// every pattern, guest-to-guest calls, a trap and a runaway guest; and examples/game,
// N player guests on one shared state, ending in the JS strategy's game.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildCodec } from '../../../examples/game/codec.mjs';
import { referenceGame } from '../../../examples/game/reference.mjs';
import { launchChromium, launchFirefox, startServer } from '../../../scripts/browser-server.mjs';
import * as msg from '../dist/schema/generated/fixtures/guests.js';
import { describeInBrowser } from './browser-suite.mjs';
import { READONLY_CASES } from './guests-readonly-cases.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const MOUNTS = [
  ['/offthread/', `${root}packages/offthread/dist/browser`],
  ['/guests/', `${root}target/wasm32-unknown-unknown/release`],
  ['/game/', `${root}examples/game`],
  ['/', `${root}bench/browser`],
];

before(async () => {
  await buildCodec(); // examples/game/build/game-codec.mjs, which the page imports
});

for (const [name, launch] of [
  ['Chromium', launchChromium],
  ['Firefox', launchFirefox],
]) {
  describeInBrowser(name, launch, (newPage) => {
    for (const isolated of [false, true]) {
      describe(`guests in the browser, ${isolated ? 'cross-origin isolated' : 'not isolated'}`, () => {
        let server;
        let page;
        const errors = [];
        before(async () => {
          server = await startServer({ isolated, mounts: MOUNTS });
          page = await newPage();
          page.on('pageerror', (e) => errors.push(e.message));
          await page.goto(server.url);
          await page.waitForFunction(() => globalThis.benchReady === true, null, { timeout: 20_000 });
        });
        after(async () => {
          await page?.close();
          await server?.close();
        });

        test('load, call every pattern, fan out, survive a trap and a runaway guest', async () => {
          const data = Array.from({ length: 70_000 }, (_, i) => (i * 13) & 0xff);
          const args = { blob: [...msg.encodeBlob({ data: Uint8Array.from(data) })] };
          const got = await page.evaluate(async ({ blob }) => {
            const { guests } = globalThis.offthread;
            const fetchBytes = async (name) => new Uint8Array(await (await fetch(`/guests/${name}`)).arrayBuffer());
            const basic = await fetchBytes('guest_basic.wasm');
            const relay = await fetchBytes('guest_relay.wasm');
            const host = await guests.load(
              [
                { name: 'a', bytes: basic },
                { name: 'relay', bytes: relay },
                { name: 'b', bytes: basic },
              ],
              { threads: 2 },
            );
            const input = Uint8Array.from(blob);
            const codeOf = (p) =>
              p.then(
                () => 'resolved',
                (e) => e.code,
              );
            const out = {
              coi: globalThis.crossOriginIsolated,
              echo: [...(await host.call('echo', 'echo', input))],
              relay: [...(await host.call('relay', 'relay', input))],
              counter: await Promise.all([1, 2, 3].map(() => host.call('counter', 'next').then((b) => [...b]))),
              fanout: (await host.fanout('scan', 'checksum', input)).map((b) => [...b]),
              inPlace: (await host.fanout('scan', 'checksum_in_place', input)).map((b) => [...b]),
              trap: await codeOf(host.call('echo', 'trap')),
              spin: await codeOf(host.call('echo', 'spin', null, { timeout: 100 })),
              after: [...(await host.call('echo', 'echo', input))],
              stats: host.stats(),
            };
            await host.close();
            return out;
          }, args);
          assert.equal(got.coi, isolated);
          const dataOf = (bytes) => [...msg.decodeBlob(Uint8Array.from(bytes)).data];
          assert.deepEqual(dataOf(got.echo), data);
          assert.deepEqual(dataOf(got.relay), data);
          assert.deepEqual(dataOf(got.after), data);
          assert.deepEqual(
            got.counter.map((b) => msg.decodeCount(Uint8Array.from(b)).value),
            [1n, 2n, 3n],
          );
          const sums = got.fanout.map((b) => msg.decodeCount(Uint8Array.from(b)).value);
          let fnv = 0xcbf29ce484222325n;
          for (const b of data) fnv = BigInt.asUintN(64, (fnv ^ BigInt(b)) * 0x100000001b3n);
          assert.deepEqual(sums, [fnv, fnv]);
          // Issue 33 item 1: read in place from one shared memory where the page can share
          // memory (both browsers have multi-memory); the same answers by copy otherwise.
          assert.deepEqual(
            got.inPlace.map((b) => msg.decodeCount(Uint8Array.from(b)).value),
            [fnv, fnv],
          );
          assert.equal(got.stats.sharedInput, isolated);
          assert.equal(got.trap, 'ERR_GUEST_TRAP');
          assert.equal(got.spin, 'ERR_TIMEOUT');
          // Shared memory only where the page is isolated: the input is written once there.
          assert.equal(got.stats.sharedBytes > 0, isolated);
          assert.deepEqual(errors, []);
        });

        test('a guest that writes a read-only interface memory is refused at load (issue 33)', async () => {
          const cases = READONLY_CASES.map((c) => ({ name: c.name, bytes: [...c.bytes()] }));
          const got = await page.evaluate(async (cases) => {
            const { guests } = globalThis.offthread;
            const out = { multiMemory: guests.multiMemory(), results: {} };
            for (const c of cases) {
              try {
                const host = await guests.load([{ name: 'g', bytes: Uint8Array.from(c.bytes) }], { threads: 1 });
                out.stats = host.stats().multiMemory;
                await host.close({ timeout: 0 });
                out.results[c.name] = null;
              } catch (e) {
                out.results[c.name] = { code: e.code, message: e.message };
              }
            }
            return out;
          }, cases);
          // Current Chromium and Firefox have multi-memory (Safari does not).
          assert.equal(got.multiMemory, true);
          assert.equal(got.stats, true);
          for (const c of READONLY_CASES) {
            const r = got.results[c.name];
            if (c.refused === null) assert.equal(r, null, `${c.name}: ${r?.message}`);
            else {
              assert.equal(r?.code, 'ERR_GUEST_MODULE', `${c.name}: loaded`);
              assert.match(r.message, c.refused, c.name);
            }
          }
          assert.deepEqual(errors, []);
        });

        test('the game: four copies of the player guest end in the JS strategy’s game', async () => {
          const options = { players: 4, size: 12, food: 4, seed: 11 };
          const ticks = 60;
          const got = await page.evaluate(
            async ({ options, ticks }) => {
              const { guests } = globalThis.offthread;
              const { playGame } = await import('/game/play.mjs');
              const { newGame } = await import('/game/rules.mjs');
              const bytes = new Uint8Array(await (await fetch('/guests/game_player.wasm')).arrayBuffer());
              const modules = Array.from({ length: options.players }, (_, i) => ({ name: `player${i}`, bytes }));
              const host = await guests.load(modules, { threads: 2 });
              try {
                const { tick, players, food, illegal, rng } = await playGame(host, newGame(options), ticks);
                return { game: { tick, players, food, illegal, rng }, sharedBytes: host.stats().sharedBytes };
              } finally {
                await host.close();
              }
            },
            { options, ticks },
          );
          const { tick, players, food, illegal, rng } = referenceGame(options, ticks);
          assert.deepEqual(got.game, { tick, players, food, illegal, rng });
          assert.ok(players.some((p) => p.score > 0));
          // The state goes through shared memory only where the page is isolated.
          assert.equal(got.sharedBytes > 0, isolated);
          assert.deepEqual(errors, []);
        });
      });
    }
  });
}
