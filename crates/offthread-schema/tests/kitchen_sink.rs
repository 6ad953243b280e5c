//! Every generated construct: round trip, golden bytes (shared with the TS test),
//! mutated buffers.

#[rustfmt::skip]
#[path = "generated/kitchen_sink.rs"]
mod kitchen_sink;
mod common;

use kitchen_sink::*;

/// The fixed value behind `golden/kitchen_sink.hex`; `packages/offthread/test/schema.test.mjs`
/// builds the same value.
fn sample() -> KitchenSink {
    let particle = |i: u8| Particle {
        pos: PointXy {
            x: f32::from(i) + 0.5,
            y: -f32::from(i),
        },
        color: Color(i % 3),
        alive: i.is_multiple_of(2),
        tags: [i, i + 1, i + 2, i + 3],
        weights: [f64::from(i) * 1.5, -0.25],
        hues: [Color::RED, Color::GREEN, Color(i)],
        flags: [true, i % 2 == 1],
    };
    KitchenSink {
        a_u8: 0xab,
        a_u16: 0xbeef,
        a_u32: 0xdead_beef,
        a_u64: 0x0123_4567_89ab_cdef,
        a_i8: -5,
        a_i16: -300,
        a_i32: -70_000,
        a_i64: -5_000_000_000,
        a_f32: 1.25,
        a_f64: -2.5e10,
        a_bool: true,
        color: Color::BLUE,
        fixed: [1, -2, 3],
        origin: PointXy { x: 3.0, y: 4.0 },
        shape: Some(AnyPoint::Point3d(Box::new(PointXyz {
            x: 1.0,
            y: 2.0,
            z: 3.0,
        }))),
        head: Some(Box::new(Node {
            id: 1,
            next: Some(Box::new(Node {
                id: 2,
                next: None,
                name: "second".into(),
            })),
            name: "first ✓".into(),
        })),
        title: "Grüße".into(),
        wide_title: "π≈3.14 𝄞".into(),
        bytes: vec![1, 2, 3, 4, 5],
        numbers: vec![0.5, 1.5, 2.5],
        flags: vec![true, false, true],
        colors: vec![Color::GREEN, Color::BLUE, Color(7)],
        particles: (0..3).map(particle).collect(),
        particles_aos: (3..5).map(particle).collect(),
        nodes: vec![
            Node {
                id: 10,
                next: None,
                name: "a".into(),
            },
            Node {
                id: 11,
                next: Some(Box::new(Node {
                    id: 12,
                    next: None,
                    name: String::new(),
                })),
                name: "b".into(),
            },
        ],
        r#type: 42,
    }
}

#[test]
fn round_trips_every_construct() {
    let v = sample();
    let bytes = v.to_bytes().unwrap();
    assert_eq!(KitchenSink::from_bytes(&bytes).unwrap(), v);
    assert_eq!(
        KitchenSink::default()
            .to_bytes()
            .map(|b| KitchenSink::from_bytes(&b).unwrap()),
        Ok(KitchenSink::default())
    );
}

#[test]
fn golden_bytes() {
    common::check_golden("kitchen_sink", &sample().to_bytes().unwrap());
}

#[test]
fn readers_see_the_written_values() {
    let bytes = sample().to_bytes().unwrap();
    let r = KitchenSinkRef::from_bytes(&bytes).unwrap();
    assert_eq!(r.a_i64(), -5_000_000_000);
    assert_eq!(r.color(), Color::BLUE);
    assert_eq!(r.origin().y(), 4.0);
    assert!(matches!(r.shape().unwrap(), AnyPointRef::Point3d(p) if p.z() == 3.0));
    let head = r.head().unwrap().unwrap();
    assert_eq!(head.name().unwrap(), "first ✓");
    assert_eq!(head.next().unwrap().unwrap().id(), 2);
    assert_eq!(r.wide_title().unwrap(), "π≈3.14 𝄞");
    let soa = r.particles().unwrap();
    assert_eq!(soa.pos_x().unwrap().to_vec(), vec![0.5, 1.5, 2.5]);
    assert_eq!(
        soa.tags().unwrap().len(),
        12,
        "fixed arrays flatten to N values per item"
    );
    assert_eq!(
        r.particles_aos().unwrap().get(1).unwrap().tags(),
        [4, 5, 6, 7]
    );
    assert_eq!(
        r.nodes()
            .unwrap()
            .iter()
            .map(|n| n.id())
            .collect::<Vec<_>>(),
        vec![10, 11]
    );
    assert_eq!(
        r.colors().unwrap().get(2).map(Color),
        Some(Color(7)),
        "unknown enum values survive"
    );
    assert_eq!(Color(7).name(), None);
}

#[test]
fn self_referencing_node_hits_the_depth_limit() {
    // A node whose `next` points to itself: decoding must stop, not loop.
    let mut bytes = Node {
        id: 1,
        next: None,
        name: String::new(),
    }
    .to_bytes()
    .unwrap();
    bytes[16..20].copy_from_slice(&0u32.to_le_bytes()); // `next` at +16 → offset 0 is "none"…
    let at = bytes.len();
    bytes.extend_from_within(..24); // …so make a second copy at `at`
    bytes[at + 16..at + 20].copy_from_slice(&(at as u32).to_le_bytes()); // pointing at itself
    bytes[16..20].copy_from_slice(&(at as u32).to_le_bytes());
    let err = Node::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.code(), "R0006", "{err}");
}

#[test]
fn mutated_buffers_give_typed_errors_only() {
    let valid = sample().to_bytes().unwrap();
    let rejected = common::mutate_and_read(&valid, 100_000, 0x5eed_0001, |buf| {
        KitchenSink::from_bytes(buf).is_ok()
    });
    // Most mutations must be caught, and some must pass (flips inside plain scalars).
    assert!(
        rejected > 10_000 && rejected < 100_000,
        "rejected {rejected}"
    );
}

#[test]
fn write_into_writes_in_place_and_zeroes_stale_bytes() {
    let v = sample();
    let want = v.to_bytes().unwrap();
    // A dirty output buffer (as reused WASM memory would be): padding must come out zero.
    let mut out = vec![0xee_u8; want.len() + 100];
    let n = v.write_into(&mut out).unwrap();
    assert_eq!(&out[..n], &want[..]);
    assert!(
        out[n..].iter().all(|b| *b == 0xee),
        "nothing written past the message"
    );
    for short in [0, 7, want.len() / 2, want.len() - 1] {
        let err = v.write_into(&mut vec![0; short]).unwrap_err();
        assert_eq!(err.code(), "W0002", "{short}: {err}");
    }
}
