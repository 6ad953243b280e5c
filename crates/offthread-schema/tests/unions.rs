//! Unions as single values and in all four slice layouts.

#[rustfmt::skip]
#[path = "generated/unions.rs"]
mod unions;
mod common;

use unions::*;

fn p2(x: f32) -> AnyPoint {
    AnyPoint::Point2d(Box::new(PointXy { x, y: -x }))
}

fn p3(x: f32) -> AnyPoint {
    AnyPoint::Point3d(Box::new(PointXyz {
        x,
        y: 2.0 * x,
        z: 3.0 * x,
    }))
}

/// The value behind `golden/unions.hex`; the TS test builds the same.
fn sample() -> Particles {
    let mixed = vec![Some(p2(1.0)), None, Some(p3(2.0)), Some(p2(3.0))];
    Particles {
        single: Some(p3(9.0)),
        aos: mixed.clone(),
        soa: mixed,
        bovoa: vec![p3(4.0), p2(5.0), p3(6.0)],
        bovos: vec![p2(7.0), p3(8.0), p2(10.0)],
    }
}

#[test]
fn round_trip_keeps_order_except_bov_groups_by_variant() {
    let bytes = sample().to_bytes().unwrap();
    common::check_golden("unions", &bytes);
    let got = Particles::from_bytes(&bytes).unwrap();
    let want = Particles {
        bovoa: vec![p2(5.0), p3(4.0), p3(6.0)],
        bovos: vec![p2(7.0), p2(10.0), p3(8.0)],
        ..sample()
    };
    assert_eq!(got, want);
}

#[test]
fn readers_reach_every_layout() {
    let bytes = sample().to_bytes().unwrap();
    let r = ParticlesRef::from_bytes(&bytes).unwrap();
    let soa = r.soa().unwrap();
    assert_eq!(
        soa.tags().to_vec(),
        vec![1, 0, 2, 1],
        "tags are one searchable column"
    );
    assert!(matches!(soa.get(2).unwrap().unwrap(), AnyPointRef::Point3d(p) if p.z() == 6.0));
    assert!(matches!(
        r.aos().unwrap().get(1).unwrap().unwrap(),
        AnyPointRef::Empty
    ));
    let bovoa = r.bovoa().unwrap();
    assert_eq!(bovoa.len(), 3);
    assert_eq!(bovoa.point_3d().unwrap().len(), 2);
    let bovos = r.bovos().unwrap();
    assert_eq!(
        bovos.point_2d().unwrap().x().unwrap().to_vec(),
        vec![7.0, 10.0]
    );
    assert_eq!(bovos.point_3d().unwrap().z().unwrap().to_vec(), vec![24.0]);
}

#[test]
fn unknown_tags_are_reported_not_fatal() {
    let mut bytes = sample().to_bytes().unwrap();
    // `single` is at +4: tag byte first. Tag 9 is from a "newer schema".
    bytes[4] = 9;
    let r = ParticlesRef::from_bytes(&bytes).unwrap();
    assert!(matches!(r.single().unwrap(), AnyPointRef::Unknown(9)));
    assert_eq!(Particles::from_bytes(&bytes).unwrap().single, None);
}

#[test]
fn mutated_union_buffers_give_typed_errors_only() {
    let valid = sample().to_bytes().unwrap();
    common::mutate_and_read(&valid, 100_000, 0x5eed_0007, |buf| {
        Particles::from_bytes(buf).is_ok()
    });
}
