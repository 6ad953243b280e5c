//! The generated readers over an input in place give what they give over a slice: the
//! same values and, for a malformed message, the same error (R0001–R0011) — the
//! integrity suite's guarantee, kept when the source changes. The input memory is the
//! emulated one of input.rs (the tests' accessors); the schema is the kitchen sink, the
//! fixture with every construct the emitters generate.

use crate::Input;
use crate::input::accessors::{COPIED, MEMORY};

#[rustfmt::skip]
#[path = "../../offthread-schema/tests/generated/kitchen_sink.rs"]
mod kitchen_sink;

use kitchen_sink::{KitchenSinkRef, NodeRef, ParticleRef};

/// Where the emulated input memory holds the message (a fanout region is 64-aligned, not at 0).
const AT: usize = 128;

fn golden() -> Vec<u8> {
    let hex: String = include_str!("../../../tests/fixtures/schema/golden/kitchen_sink.hex")
        .split_whitespace()
        .collect();
    (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

/// `msg` in the input memory, read in place.
fn in_place(msg: &[u8]) -> Input<'static> {
    MEMORY.with(|m| {
        let mut m = m.borrow_mut();
        m.clear();
        m.resize(AT, 0xa5);
        m.extend_from_slice(msg);
        m.extend_from_slice(&[0x5a; 256]); // past the input: never read
    });
    // SAFETY: the emulated input memory holds `msg` at AT.
    unsafe { Input::in_place(AT as u32, msg.len() as u32) }
}

/// Everything the readers of any source read, as text: values, and errors where reading stops.
macro_rules! walk {
    ($open:expr) => {{
        let mut out = String::new();
        match $open {
            Err(e) => out += &format!("open: {e:?}\n"),
            Ok(r) => {
                let r: KitchenSinkRef<'_, _> = r;
                out += &format!(
                    "{} {} {} {} {} {} {} {} {} {} {} {:?} {:?}\n",
                    r.a_u8(),
                    r.a_u16(),
                    r.a_u32(),
                    r.a_u64(),
                    r.a_i8(),
                    r.a_i16(),
                    r.a_i32(),
                    r.a_i64(),
                    r.a_f32(),
                    r.a_f64(),
                    r.a_bool(),
                    r.color(),
                    r.fixed()
                );
                let o = r.origin();
                out += &format!("origin {} {} type {}\n", o.x(), o.y(), r.r#type());
                let mut node = r.head();
                for _ in 0..8 {
                    match node {
                        Ok(Some(n)) => {
                            let n: NodeRef<'_, _> = n;
                            out += &format!(
                                "node {} {:?}\n",
                                n.id(),
                                n.name().map(|t| String::from(&*t))
                            );
                            node = n.next();
                        }
                        other => {
                            out += &format!("end {:?}\n", other.map(|o| o.is_some()));
                            break;
                        }
                    }
                }
                out += &format!("title {:?}\n", r.title().map(|t| String::from(&*t)));
                out += &format!("wide {:?}\n", r.wide_title());
                out += &format!(
                    "bytes {:?}\n",
                    r.bytes().map(|c| c.iter().collect::<Vec<_>>())
                );
                out += &format!(
                    "numbers {:?}\n",
                    r.numbers().map(|c| c.iter().collect::<Vec<_>>())
                );
                out += &format!(
                    "flags {:?}\n",
                    r.flags().map(|c| c.iter().collect::<Vec<_>>())
                );
                out += &format!(
                    "colors {:?}\n",
                    r.colors().map(|c| c.iter().collect::<Vec<_>>())
                );
                match r.particles_aos() {
                    Err(e) => out += &format!("particles {e:?}\n"),
                    Ok(a) => {
                        for p in a.iter() {
                            let p: ParticleRef<'_, _> = p;
                            out += &format!(
                                "particle {} {} {:?} {} {:?} {:?} {:?} {:?}\n",
                                p.pos().x(),
                                p.pos().y(),
                                p.color(),
                                p.alive(),
                                p.tags(),
                                p.weights(),
                                p.hues(),
                                p.flags()
                            );
                        }
                    }
                }
                match r.nodes() {
                    Err(e) => out += &format!("nodes {e:?}\n"),
                    Ok(a) => {
                        for n in a.iter() {
                            out += &format!(
                                "item {} {:?}\n",
                                n.id(),
                                n.name().map(|t| String::from(&*t))
                            );
                        }
                    }
                }
            }
        }
        out
    }};
}

fn over_slice(msg: &[u8]) -> String {
    walk!(KitchenSinkRef::from_bytes(msg))
}

fn over_input(msg: &[u8]) -> String {
    walk!(KitchenSinkRef::from_source(in_place(msg)))
}

#[test]
fn the_golden_message_reads_the_same_in_place() {
    let msg = golden();
    let want = over_slice(&msg);
    assert!(want.contains("title Ok("), "{want}");
    assert!(!want.contains("Err"), "the golden message is valid: {want}");
    assert_eq!(over_input(&msg), want);
    // A local input (a copy in the guest's memory) goes through the same readers.
    assert_eq!(walk!(KitchenSinkRef::from_source(Input::local(&msg))), want);
}

#[test]
fn scalars_columns_and_arrays_of_structs_in_place_copy_nothing() {
    let msg = golden();
    let r = KitchenSinkRef::from_source(in_place(&msg)).unwrap();
    COPIED.with(|c| c.set(0));
    let bytes = r.bytes().unwrap();
    assert!(bytes.as_slice().is_none(), "in place: no slice to hand out");
    let sum: u64 = bytes.iter().map(u64::from).sum::<u64>()
        + r.particles_aos()
            .unwrap()
            .iter()
            .map(|p| u64::from(p.tags()[0]))
            .sum::<u64>()
        + r.a_u64();
    assert!(sum > 0);
    assert_eq!(
        COPIED.with(|c| c.get()),
        0,
        "no memory.copy out of the input memory"
    );
    // Text is handed out owned: a copy of just that field.
    let title = r.title().unwrap();
    assert_eq!(COPIED.with(|c| c.get()), title.len());
}

/// xorshift64: the mutations are the same every run.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

#[test]
fn malformed_messages_get_the_same_answer_and_the_same_error_code_in_place() {
    let golden = golden();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let (mut errors, mut codes) = (0, std::collections::BTreeSet::new());
    for round in 0..3000 {
        let mut msg = golden.clone();
        // One to three words overwritten (offsets, counts, headers are u32s), or the message cut short.
        for _ in 0..1 + next(&mut seed) % 3 {
            let at = (next(&mut seed) as usize % msg.len()) & !3;
            let v = match next(&mut seed) % 4 {
                0 => next(&mut seed) as u32,
                1 => (next(&mut seed) % 64) as u32,
                2 => (next(&mut seed) as u32) & !63,
                _ => msg.len() as u32 - (next(&mut seed) % 64) as u32,
            };
            if at + 4 <= msg.len() {
                msg[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        if round % 7 == 0 {
            msg.truncate(next(&mut seed) as usize % msg.len());
        }
        let want = over_slice(&msg);
        assert_eq!(over_input(&msg), want, "round {round}");
        if want.contains("Err(") || want.contains("open: ") {
            errors += 1;
            for code in [
                "OutOfBounds",
                "BadStructHeader",
                "Misaligned",
                "CountExceedsCapacity",
                "DepthLimit",
                "BadElementSize",
                "InvalidString",
                "CountTooLarge",
            ] {
                if want.contains(code) {
                    codes.insert(code);
                }
            }
        }
    }
    // The mutations reach the checks: most messages are refused somewhere, for many reasons.
    assert!(errors > 300, "{errors} malformed");
    assert!(codes.len() >= 5, "{codes:?}");
    std::eprintln!("{errors} of 3000 malformed, refused with {codes:?}");
}

/// In place, narrow items come 8 bytes a load, the last few one at a time: every length
/// and item size gives the items a slice gives.
#[test]
fn columns_in_place_iterate_as_over_a_slice() {
    use crate::rt::Source;
    let bytes: Vec<u8> = (0..400u32).map(|i| (i * 37 + 11) as u8).collect();
    let input = in_place(&bytes);
    for count in 0..24 {
        for at in [0usize, 8, 64] {
            let want8: Vec<u8> = (&bytes[..]).column::<u8>(at, count).iter().collect();
            assert_eq!(
                input.column::<u8>(at, count).iter().collect::<Vec<_>>(),
                want8
            );
            assert_eq!(input.column::<u8>(at, count).iter().len(), count);
            let want16: Vec<u16> = (&bytes[..]).column::<u16>(at, count).iter().collect();
            assert_eq!(
                input.column::<u16>(at, count).iter().collect::<Vec<_>>(),
                want16
            );
            let want32: Vec<i32> = (&bytes[..]).column::<i32>(at, count).iter().collect();
            assert_eq!(input.column::<i32>(at, count).to_vec(), want32);
            let want64: Vec<f64> = (&bytes[..]).column::<f64>(at, count).iter().collect();
            let got64: Vec<f64> = input.column::<f64>(at, count).iter().collect();
            assert_eq!(got64.len(), want64.len());
            assert!(
                got64
                    .iter()
                    .zip(&want64)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            );
        }
    }
}

/// `fold` (what `sum` and `iter().fold` reach) takes whole words in place: the same
/// result as item by item, from any starting point.
#[test]
fn folding_a_column_in_place_gives_what_next_gives() {
    use crate::rt::Source;
    let bytes: Vec<u8> = (0..400u32).map(|i| (i * 53 + 7) as u8).collect();
    let input = in_place(&bytes);
    for count in [0usize, 1, 7, 8, 9, 17, 63, 64, 65, 100] {
        for skip in [0usize, 1, 3, 9] {
            let items = |it: crate::InputIter<'_, u16>| {
                it.skip(skip).fold(Vec::new(), |mut v, x| {
                    v.push(x);
                    v
                })
            };
            let by_next: Vec<u16> = (&bytes[..])
                .column::<u16>(64, count)
                .iter()
                .skip(skip)
                .collect();
            assert_eq!(
                items(input.column::<u16>(64, count).iter()),
                by_next,
                "{count} {skip}"
            );
            let sum: u64 = input.column::<u8>(8, count).iter().map(u64::from).sum();
            assert_eq!(
                sum,
                bytes[8..8 + count]
                    .iter()
                    .map(|&b| u64::from(b))
                    .sum::<u64>()
            );
        }
    }
}
