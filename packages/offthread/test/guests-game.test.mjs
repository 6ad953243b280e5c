// Shared state (Karmem §5.2.4; examples/game): N copies of one player guest read one
// game state per tick from a fanout's shared input and answer with moves the host
// applies. The guests must end in exactly the game the plain-JS strategy plays; each
// copy knows its player by `offthread.module_index`, an optional import that guests
// which do not use it never see.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { guests } from 'offthread';
import { buildCodec } from '../../../examples/game/codec.mjs';
import { referenceGame } from '../../../examples/game/reference.mjs';
import { applyMoves, newGame, STEPS, stateOf } from '../../../examples/game/rules.mjs';
import * as msg from '../dist/schema/generated/fixtures/guests.js';

const dir = new URL('../../../target/wasm32-unknown-unknown/release/', import.meta.url);
const player = readFileSync(new URL('game_player.wasm', dir));
const basic = readFileSync(new URL('guest_basic.wasm', dir));

let codec;
let play;
before(async () => {
  await buildCodec();
  codec = await import('../../../examples/game/build/game-codec.mjs');
  play = await import('../../../examples/game/play.mjs');
});

const copies = (n) => Array.from({ length: n }, (_, i) => ({ name: `player${i}`, bytes: player }));
/** The parts of a game both sides must agree on. */
const outcome = ({ tick, players, food, illegal, rng }) => ({ tick, players, food, illegal, rng });

describe('the game', () => {
  const options = { players: 4, size: 12, food: 4, seed: 7 };
  const TICKS = 150;
  let host;
  before(async () => {
    host = await guests.load(copies(options.players), { threads: 2 });
  });
  after(() => host?.close());

  test('the guests play exactly the game of the JS strategy (fixed seed)', async () => {
    const sharedBefore = host.stats().sharedBytes;
    const game = await play.playGame(host, newGame(options), TICKS);
    const expected = referenceGame(options, TICKS);
    assert.deepEqual(outcome(game), outcome(expected));
    // This seed's game scores and has collisions, so both rules are exercised.
    assert.ok(game.players.every((p) => p.score > 0));
    assert.ok(game.illegal.some((n) => n > 0));
    // One write of the state per tick for all players (its size does not change).
    const stateBytes = codec.encodeGameState(stateOf(game)).length;
    assert.equal(host.stats().sharedBytes - sharedBefore, TICKS * stateBytes);
  });

  test('the game does not depend on the number of threads', async () => {
    const one = await guests.load(copies(options.players), { threads: 1 });
    try {
      const game = await play.playGame(one, newGame(options), 40);
      assert.deepEqual(outcome(game), outcome(referenceGame(options, 40)));
    } finally {
      await one.close();
    }
  });

  test('a copy with no player in the state fails its call with ERR_GUEST_FAILED', async () => {
    const game = newGame({ ...options, players: 3 });
    await assert.rejects(play.playTick(host, game), (err) => {
      assert.equal(err.code, 'ERR_GUEST_FAILED');
      assert.match(err.message, /module 3 has no player in the state \(3 players\)/);
      return true;
    });
  });
});

// The C player (examples/game/player-c, compiled by `npm run setup` with zig cc from the
// C header and guest glue the schema compiler generates): the same strategy, so a game
// with it among Rust players must still end where the JS strategy's does.
const cPlayerPath = new URL('../../../target/c-guests/game_player_c.wasm', import.meta.url);
const noCPlayer = existsSync(cPlayerPath)
  ? false
  : 'no C player: `npm run setup` builds it with zig cc (python3 -m pip install ziglang), which was not available';

describe('a C player beside the Rust players', { skip: noCPlayer }, () => {
  const options = { players: 4, size: 12, food: 4, seed: 7 };
  const load = (threads) => {
    const cPlayer = readFileSync(cPlayerPath);
    const modules = copies(options.players);
    modules[2] = { name: 'player2-c', bytes: cPlayer }; // module 2 is the C one
    return guests.load(modules, { threads });
  };

  test('plays exactly the game of the JS strategy (fixed seed), as module 2 of 4', async () => {
    const host = await load(2);
    try {
      const game = await play.playGame(host, newGame(options), 150);
      assert.deepEqual(outcome(game), outcome(referenceGame(options, 150)));
      assert.ok(game.players[2].score > 0, 'the C player scores');
    } finally {
      await host.close();
    }
  });

  test('a bad state is ERR_GUEST_FAILED with its R code, never a trap', async () => {
    const host = await guests.load([{ name: 'c', bytes: readFileSync(cPlayerPath) }], { threads: 1 });
    try {
      const good = codec.encodeGameState(stateOf(newGame({ players: 2, seed: 3 })));
      const bad = new Uint8Array(good);
      bad.set([0xff, 0xff, 0xff, 0x1f], 0); // a root header whose size passes the buffer
      await assert.rejects(host.fanout('player', 'play', bad), (err) => {
        assert.equal(err.code, 'ERR_GUEST_FAILED');
        assert.match(err.message, /play input: R0001/);
        return true;
      });
      await assert.rejects(host.fanout('player', 'play', good.subarray(0, 3)), /R0001/);
      // The instance is intact: the next call works.
      const [move] = await host.fanout('player', 'play', good);
      assert.equal(codec.decodePlayerMove(move).player, 0);
    } finally {
      await host.close();
    }
  });

  test('a C copy with no player in the state fails with ERR_GUEST_FAILED', async () => {
    const modules = [...copies(2), { name: 'c', bytes: readFileSync(cPlayerPath) }];
    const host = await guests.load(modules, { threads: 1 });
    try {
      await assert.rejects(play.playTick(host, newGame({ ...options, players: 2 })), (err) => {
        assert.equal(err.code, 'ERR_GUEST_FAILED');
        assert.match(err.message, /this module has no player in the state: load one module per player/);
        return true;
      });
    } finally {
      await host.close();
    }
  });
});

describe('offthread.module_index', () => {
  const importsIndex = (bytes) =>
    WebAssembly.Module.imports(new WebAssembly.Module(bytes)).some(
      (i) => i.module === 'offthread' && i.name === 'module_index',
    );

  test('only a guest that uses it imports it', () => {
    assert.equal(importsIndex(player), true);
    assert.equal(importsIndex(basic), false);
  });

  test('each copy sees its index in the load list; guests without the import run as before', async () => {
    const host = await guests.load(
      [
        { name: 'a', bytes: basic },
        { name: 'p1', bytes: player },
        { name: 'b', bytes: basic },
        { name: 'p3', bytes: player },
      ],
      { threads: 2 },
    );
    try {
      const state = codec.encodeGameState(stateOf(newGame({ players: 4, seed: 3 })));
      const moves = (await host.fanout('player', 'play', state)).map((b) => codec.decodePlayerMove(b));
      assert.deepEqual(
        moves.map((m) => m.player),
        [1, 3],
      );
      const data = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7) & 0xff);
      let fnv = 0xcbf29ce484222325n;
      for (const b of data) fnv = BigInt.asUintN(64, (fnv ^ BigInt(b)) * 0x100000001b3n);
      const sums = await host.fanout('scan', 'checksum', msg.encodeBlob({ data }));
      assert.deepEqual(
        sums.map((b) => msg.decodeCount(b).value),
        [fnv, fnv],
      );
      const echoed = await host.call('echo', 'echo', msg.encodeBlob({ data }), { exporter: 'b' });
      assert.deepEqual(new Uint8Array(msg.decodeBlob(echoed).data), data);
    } finally {
      await host.close();
    }
  });
});

describe('the host rules', () => {
  const board = () => {
    const game = newGame({ players: 3, size: 4, food: 1, seed: 5 });
    game.players[0].at = { x: 0, y: 0 };
    game.players[1].at = { x: 1, y: 0 };
    game.players[2].at = { x: 2, y: 1 };
    game.food[0] = { x: 2, y: 2 };
    return game;
  };
  const D = { stay: 0, up: 1, down: 2, left: 3, right: 4 };

  test('an illegal move is ignored and counted against its player', () => {
    const game = board();
    applyMoves(game, [
      { player: 0, direction: D.left }, // off the board
      { player: 0, direction: D.down }, // answers for player 0
      { player: 2, direction: 9 }, // no such direction
    ]);
    assert.deepEqual(game.illegal, [1, 1, 1]);
    assert.deepEqual(
      game.players.map((p) => p.at),
      [
        { x: 0, y: 0 },
        { x: 1, y: 0 },
        { x: 2, y: 1 },
      ],
    );
    applyMoves(game, [
      { player: 0, direction: D.right }, // onto player 1
      { player: 1, direction: D.down },
      { player: 2, direction: D.left }, // onto player 1, who moved there first
    ]);
    assert.deepEqual(game.illegal, [2, 1, 2]);
    assert.deepEqual(game.players[1].at, { x: 1, y: 1 });
    assert.equal(game.tick, 2);
  });

  test('stepping on food scores, and the food reappears on a free cell', () => {
    const game = board();
    applyMoves(game, [
      { player: 0, direction: D.stay },
      { player: 1, direction: D.stay },
      { player: 2, direction: D.down },
    ]);
    assert.deepEqual(
      game.players.map((p) => p.score),
      [0, 0, 1],
    );
    assert.deepEqual(game.illegal, [0, 0, 0]);
    const [food] = game.food;
    assert.ok(!game.players.some((p) => p.at.x === food.x && p.at.y === food.y), 'not under a player');
    assert.ok(food.x >= 0 && food.x < 4 && food.y >= 0 && food.y < 4);
  });

  test('the steps follow the schema’s enum direction', () => {
    const { STAY, UP, DOWN, LEFT, RIGHT } = codec.Direction;
    assert.deepEqual(STEPS[STAY], [0, 0]);
    assert.deepEqual(STEPS[UP], [0, -1]);
    assert.deepEqual(STEPS[DOWN], [0, 1]);
    assert.deepEqual(STEPS[LEFT], [-1, 0]);
    assert.deepEqual(STEPS[RIGHT], [1, 0]);
  });

  test('bad options and a wrong number of moves are ERR_INVALID_ARG', () => {
    const bad = (fn) => assert.throws(fn, (err) => err.code === 'ERR_INVALID_ARG');
    bad(() => newGame({ seed: 0 }));
    bad(() => newGame({ players: 1.5 }));
    bad(() => newGame({ size: 1 }));
    bad(() => newGame({ players: 10, size: 4 }));
    bad(() => applyMoves(board(), [{ player: 0, direction: 0 }]));
  });
});
