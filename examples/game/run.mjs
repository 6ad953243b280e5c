#!/usr/bin/env node
// examples/game: N copies of one player guest play T ticks on a shared game state
// (README.md). Deterministic: one seed, one game, whatever the threads.
//   node examples/game/run.mjs [--players 4] [--ticks 100] [--size 16] [--food 5] [--seed 1] [--threads N]
//                              [--c-player K]   module K is the C player (player-c/), the rest Rust
// Needs `npm run setup` (it builds the player guests to wasm32; the C one with zig cc).
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { guests } from 'offthread';
import { buildCodec } from './codec.mjs';
import { newGame } from './rules.mjs';

const wasm = new URL('../../target/wasm32-unknown-unknown/release/game_player.wasm', import.meta.url);
const cWasm = new URL('../../target/c-guests/game_player_c.wasm', import.meta.url);

/** The options as a game and a tick count; a bad one ends the run with its message. */
function setUp() {
  const { values } = parseArgs({
    options: {
      players: { type: 'string', default: '4' },
      ticks: { type: 'string', default: '100' },
      size: { type: 'string', default: '16' },
      food: { type: 'string', default: '5' },
      seed: { type: 'string', default: '1' },
      threads: { type: 'string' },
      'c-player': { type: 'string' },
    },
  });
  const num = (name) => (values[name] === undefined ? undefined : Number(values[name]));
  const game = newGame({ players: num('players'), size: num('size'), food: num('food'), seed: num('seed') });
  const ticks = num('ticks');
  if (!Number.isInteger(ticks) || ticks < 0) {
    throw Object.assign(new RangeError(`--ticks must be an integer ≥ 0, got ${values.ticks}`), {
      code: 'ERR_INVALID_ARG',
    });
  }
  const cPlayer = num('c-player');
  if (cPlayer !== undefined && !(Number.isInteger(cPlayer) && cPlayer >= 0 && cPlayer < game.players.length)) {
    throw Object.assign(new RangeError(`--c-player must be a player index, got ${values['c-player']}`), {
      code: 'ERR_INVALID_ARG',
    });
  }
  return { game, ticks, seed: values.seed, threads: num('threads'), cPlayer };
}

/** A bad option (ours or guests.load's, e.g. --threads) ends the run with its message. */
function exitOnBadOption(err) {
  const code = String(err?.code);
  if (code !== 'ERR_INVALID_ARG' && !code.startsWith('ERR_PARSE_ARGS_')) throw err;
  console.error(`run.mjs: ${err.message}`);
  process.exit(2);
}

let options;
try {
  options = setUp();
} catch (err) {
  exitOnBadOption(err);
}
const { game, ticks, seed, threads, cPlayer } = options;
for (const w of cPlayer === undefined ? [wasm] : [wasm, cWasm]) {
  if (!existsSync(w)) {
    console.error(
      `run.mjs: ${w.pathname} is missing: run \`npm run setup\` first (the C player needs zig: pip install ziglang)`,
    );
    process.exit(1);
  }
}

await buildCodec();
const { playGame } = await import('./play.mjs');
const bytes = readFileSync(wasm);
// One module per player, all the same bytes but the C player's: module i plays players[i].
const modules = game.players.map((_, i) =>
  i === cPlayer ? { name: `player${i}-c`, bytes: readFileSync(cWasm) } : { name: `player${i}`, bytes },
);
const host = await guests.load(modules, { threads }).catch(exitOnBadOption);
try {
  await playGame(host, game, ticks);
  const shared = host.stats().sharedBytes;
  console.log(`${game.players.length} players, ${ticks} ticks on a ${game.size} × ${game.size} board, seed ${seed}`);
  console.table(
    game.players.map((p, i) => ({
      player: i,
      guest: i === cPlayer ? 'C' : 'Rust',
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
