//! A player of examples/game: every copy of this module reads the same game state (a
//! fanout's shared input) and finds itself in it by its module index
//! (`offthread_guest::module_index`). Strategy, deterministic: step toward the nearest
//! food (Manhattan distance, ties to the lower food index), horizontally first, and
//! never onto a cell another player stands on; stay when both steps are blocked.
//! `examples/game/reference.mjs` is the same strategy in JS (the tests' oracle).

#[rustfmt::skip]
#[path = "../../generated/game_guest.rs"]
pub mod guest;
#[rustfmt::skip]
#[path = "../../generated/game.rs"]
pub mod schema;

use offthread_guest::Error;
use schema::{Direction, GameStateRef, PlayerMove};

#[global_allocator]
static ALLOC: offthread_guest::Alloc<std::alloc::System> =
    offthread_guest::Alloc(std::alloc::System);

#[derive(Default)]
pub struct Player;

impl guest::player::Player for Player {
    fn play(&mut self, state: GameStateRef<'_>) -> Result<PlayerMove, Error> {
        let me = offthread_guest::module_index();
        Ok(PlayerMove {
            player: me,
            direction: choose(state, me as usize)?,
        })
    }
}

/// The step of player `me` in `state` (read in place: columns, no copies).
pub fn choose(state: GameStateRef<'_>, me: usize) -> Result<Direction, Error> {
    let players = state.players().map_err(Error::read)?;
    let (xs, ys) = (
        players.at_x().map_err(Error::read)?,
        players.at_y().map_err(Error::read)?,
    );
    let (Some(x), Some(y)) = (xs.get(me), ys.get(me)) else {
        return Err(Error::new(format!(
            "module {me} has no player in the state ({} players): load one module per player",
            players.len()
        )));
    };
    let food = state.food().map_err(Error::read)?;
    let (fx, fy) = (
        food.x().map_err(Error::read)?,
        food.y().map_err(Error::read)?,
    );
    let nearest = fx
        .iter()
        .zip(fy.iter())
        .min_by_key(|&(a, b)| u32::from(a.abs_diff(x)) + u32::from(b.abs_diff(y))); // the first of equals
    let Some((tx, ty)) = nearest else {
        return Ok(Direction::STAY);
    };
    let occupied = |cx: u16, cy: u16| {
        xs.iter()
            .zip(ys.iter())
            .any(|(px, py)| px == cx && py == cy)
    };
    let mut steps = Vec::with_capacity(2);
    if tx != x {
        steps.push(if tx > x {
            (Direction::RIGHT, x + 1, y)
        } else {
            (Direction::LEFT, x - 1, y)
        });
    }
    if ty != y {
        steps.push(if ty > y {
            (Direction::DOWN, x, y + 1)
        } else {
            (Direction::UP, x, y - 1)
        });
    }
    Ok(steps
        .into_iter()
        .find(|&(_, cx, cy)| !occupied(cx, cy))
        .map_or(Direction::STAY, |(d, _, _)| d))
}

offthread_guest::export_guest!(Player, exports: [guest::player::Export], imports: []);
