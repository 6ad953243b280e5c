#!/usr/bin/env node
// examples/game: N copies of one player guest play T ticks on a shared game state
// (README.md). Deterministic: one seed, one game, whatever the threads.
//   node examples/game/run.mjs [--players 4] [--ticks 100] [--size 16] [--food 5] [--seed 1] [--threads N]
// Needs `npm run setup` (it builds the player guest to wasm32).
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { guests } from 'offthread';
import { buildCodec } from './codec.mjs';
import { newGame } from './rules.mjs';

const wasm = new URL('../../target/wasm32-unknown-unknown/release/game_player.wasm', import.meta.url);

const { values } = parseArgs({
  options: {
    players: { type: 'string', default: '4' },
    ticks: { type: 'string', default: '100' },
    size: { type: 'string', default: '16' },
    food: { type: 'string', default: '5' },
    seed: { type: 'string', default: '1' },
    threads: { type: 'string' },
  },
});
const num = (name) => (values[name] === undefined ? undefined : Number(values[name]));

const game = newGame({ players: num('players'), size: num('size'), food: num('food'), seed: num('seed') });
const ticks = num('ticks');
if (!Number.isInteger(ticks) || ticks < 0) throw new RangeError(`--ticks must be an integer ≥ 0, got ${values.ticks}`);
if (!existsSync(wasm)) throw new Error(`${wasm.pathname} is missing: run \`npm run setup\` first`);

await buildCodec();
const { playGame } = await import('./play.mjs');
const bytes = readFileSync(wasm);
// One module per player, all the same bytes: module i plays players[i].
const modules = game.players.map((_, i) => ({ name: `player${i}`, bytes }));
const host = await guests.load(modules, { threads: num('threads') });
try {
  await playGame(host, game, ticks);
  const shared = host.stats().sharedBytes;
  console.log(
    `${game.players.length} players, ${ticks} ticks on a ${game.size} × ${game.size} board, seed ${values.seed}`,
  );
  console.table(
    game.players.map((p, i) => ({
      player: i,
      score: p.score,
      'illegal moves': game.illegal[i],
      at: `${p.at.x},${p.at.y}`,
    })),
  );
  const perTick = ticks > 0 ? (shared / ticks).toFixed(0) : 0;
  console.log(
    `state written into shared memory: ${perTick} bytes a tick, once for all players${shared === 0 ? ' (no shared memory here: one copy per worker)' : ''}`,
  );
} finally {
  await host.close();
}
