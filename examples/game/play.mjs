// A tick with the guests, for Node and the browser alike (`host` from `guests.load` of
// either): the state is encoded once and written once into the fanout's shared memory;
// every player reads it in place; their moves come back in module order.
import { decodePlayerMove, encodeGameState } from './build/game-codec.mjs';
import { applyMoves, stateOf } from './rules.mjs';

export async function playTick(host, game) {
  const answers = await host.fanout('player', 'play', encodeGameState(stateOf(game)));
  applyMoves(
    game,
    answers.map((bytes) => decodePlayerMove(bytes)),
  );
}

export async function playGame(host, game, ticks) {
  for (let t = 0; t < ticks; t++) await playTick(host, game);
  return game;
}
