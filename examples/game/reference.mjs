// The strategy of the player guest (player/src/lib.rs) in plain JS: the tests' oracle.
// A guest that misreads the shared state, or its own index, plays a different game.
import { applyMoves, newGame } from './rules.mjs';

const [STAY, UP, DOWN, LEFT, RIGHT] = [0, 1, 2, 3, 4];

/** Player `me`'s direction: toward the nearest food, horizontally first, never onto a player. */
export function referenceMove(state, me) {
  const self = state.players[me].at;
  let target = null;
  let best = Number.POSITIVE_INFINITY;
  for (const f of state.food) {
    const d = Math.abs(f.x - self.x) + Math.abs(f.y - self.y);
    if (d < best) [target, best] = [f, d]; // `<`: the first of equals
  }
  if (target === null) return STAY;
  const steps = [];
  if (target.x !== self.x) steps.push(target.x > self.x ? [RIGHT, self.x + 1, self.y] : [LEFT, self.x - 1, self.y]);
  if (target.y !== self.y) steps.push(target.y > self.y ? [DOWN, self.x, self.y + 1] : [UP, self.x, self.y - 1]);
  const free = steps.find(([, x, y]) => !state.players.some((p) => p.at.x === x && p.at.y === y));
  return free ? free[0] : STAY;
}

/** The whole game with the JS strategy: what the guests must end in. */
export function referenceGame(options, ticks) {
  const game = newGame(options);
  for (let t = 0; t < ticks; t++) {
    // Every move from the same state, as the guests see it, then applied in order.
    applyMoves(
      game,
      game.players.map((_, i) => ({ player: i, direction: referenceMove(game, i) })),
    );
  }
  return game;
}
