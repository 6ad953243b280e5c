// The host's rules for examples/game, in plain JS for Node and the browser alike: a
// seeded board, and each tick's moves applied in module order, every move checked
// first. The players only propose; the host decides (an illegal move is ignored and
// counted against its player).

/** [dx, dy] by `direction` value: the values of enum `direction` in game.km. */
export const STEPS = Object.freeze([
  [0, 0], // stay
  [0, -1], // up
  [0, 1], // down
  [-1, 0], // left
  [1, 0], // right
]);

/** A user's bad option: the package's own registry code for it. */
function invalid(message) {
  return Object.assign(new RangeError(message), { code: 'ERR_INVALID_ARG' });
}

function intOption(value, name, min, max) {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

/** xorshift32: the game's one source of chance, so one seed gives one game. */
function nextRandom(game) {
  let x = game.rng;
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  game.rng = x >>> 0;
  return game.rng;
}

const isAt = (cell, x, y) => cell.x === x && cell.y === y;

/** A cell with neither a player nor food, drawn from the game's generator. */
function freeCell(game) {
  for (;;) {
    const r = nextRandom(game) % (game.size * game.size);
    const x = r % game.size;
    const y = Math.floor(r / game.size);
    if (!game.players.some((p) => isAt(p.at, x, y)) && !game.food.some((f) => isAt(f, x, y))) return { x, y };
  }
}

/**
 * A new game: `players` players and `food` food on free cells of a `size` × `size`
 * board, placed by `seed`. At most half the board is taken, so free cells stay easy to draw.
 */
export function newGame({ players = 4, size = 16, food = 5, seed = 1 } = {}) {
  intOption(size, 'size', 2, 1024);
  intOption(players, 'players', 1, 1024);
  intOption(food, 'food', 0, 1024);
  intOption(seed, 'seed', 1, 0xffff_ffff);
  if (players + food > (size * size) / 2) {
    throw invalid(`${players} players and ${food} food take more than half of a ${size} × ${size} board`);
  }
  const game = { tick: 0, size, players: [], food: [], illegal: Array(players).fill(0), rng: seed };
  for (let i = 0; i < players; i++) game.players.push({ at: freeCell(game), score: 0 });
  for (let i = 0; i < food; i++) game.food.push(freeCell(game));
  return game;
}

/** What the players see: the fields of `game_state` (game.km). */
export function stateOf(game) {
  return { tick: game.tick, size: game.size, players: game.players, food: game.food };
}

/** Why `move` of player `i` cannot be played now, or null when it can. */
function illegalBecause(game, i, move) {
  if (move.player !== i) return 'answers for another player';
  const step = Number.isInteger(move.direction) ? STEPS[move.direction] : undefined;
  if (!step) return 'an unknown direction';
  if (move.direction === 0) return null;
  const x = game.players[i].at.x + step[0];
  const y = game.players[i].at.y + step[1];
  if (x < 0 || y < 0 || x >= game.size || y >= game.size) return 'off the board';
  if (game.players.some((p) => isAt(p.at, x, y))) return 'onto another player';
  return null;
}

/**
 * One tick: `moves[i]` is module i's answer (`player_move`). In module order, a legal
 * move is made at once (so a later player may find the cell it aimed for taken); a
 * player stepping on food scores 1 and the food reappears on a free cell.
 */
export function applyMoves(game, moves) {
  if (moves.length !== game.players.length) {
    throw invalid(`${moves.length} moves for ${game.players.length} players: load one player module per player`);
  }
  moves.forEach((move, i) => {
    if (illegalBecause(game, i, move) !== null) {
      game.illegal[i]++;
      return;
    }
    const player = game.players[i];
    const [dx, dy] = STEPS[move.direction];
    player.at = { x: player.at.x + dx, y: player.at.y + dy };
    const eaten = game.food.findIndex((f) => isAt(f, player.at.x, player.at.y));
    if (eaten >= 0) {
      player.score++;
      game.food[eaten] = freeCell(game);
    }
  });
  game.tick++;
}
