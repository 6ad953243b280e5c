/* A player of examples/game in C, the same strategy as the Rust player (player/src/lib.rs)
 * and reference.mjs: step toward the nearest food (Manhattan distance, ties to the lower
 * food index), horizontally first, never onto a cell another player stands on; stay
 * when both steps are blocked. It finds itself in the state by its module index.
 * Built by scripts/setup.mjs with `zig cc --target=wasm32-freestanding` (docs/guests.md). */
#define OT_EXPORT_PLAYER
#include "../generated/game_guest.h"

static uint32_t dist(uint16_t a, uint16_t b) { return a > b ? (uint32_t)(a - b) : (uint32_t)(b - a); }

static bool occupied(const game_state *s, uint16_t x, uint16_t y) {
  for (uint32_t i = 0; i < s->players.len; i++)
    if (s->players.items[i].at.x == x && s->players.items[i].at.y == y) return true;
  return false;
}

int player_play(const game_state *state, player_move *result, ot_arena *arena) {
  (void)arena;
  uint32_t me = (uint32_t)ot_module_index();
  if (me >= state->players.len)
    return ot_guest_fail("this module has no player in the state: load one module per player");
  uint16_t x = state->players.items[me].at.x, y = state->players.items[me].at.y;
  result->player = me;
  result->direction = DIRECTION_STAY;
  if (state->food.len == 0) return 0;
  uint32_t best = 0;
  for (uint32_t i = 1; i < state->food.len; i++) {
    const cell *f = &state->food.items[i], *b = &state->food.items[best];
    if (dist(f->x, x) + dist(f->y, y) < dist(b->x, x) + dist(b->y, y)) best = i;
  }
  uint16_t tx = state->food.items[best].x, ty = state->food.items[best].y;
  if (tx != x) {
    uint16_t nx = tx > x ? x + 1 : x - 1;
    if (!occupied(state, nx, y)) {
      result->direction = tx > x ? DIRECTION_RIGHT : DIRECTION_LEFT;
      return 0;
    }
  }
  if (ty != y) {
    uint16_t ny = ty > y ? y + 1 : y - 1;
    if (!occupied(state, x, ny)) result->direction = ty > y ? DIRECTION_DOWN : DIRECTION_UP;
  }
  return 0;
}
