//! `kitchen_sink` (every construct the emitters generate) over arbitrary bytes: owned
//! decode, round trip, and every lazy accessor.
#![no_main]

#[path = "common/mod.rs"]
mod common;

#[rustfmt::skip]
#[path = "../../crates/offthread-schema/tests/generated/kitchen_sink.rs"]
#[allow(clippy::all, dead_code)]
mod kitchen_sink;

use common::{ok, round_trip};
use kitchen_sink::{AnyPointRef, KitchenSink, KitchenSinkRef, NodeRef};
use libfuzzer_sys::fuzz_target;

fn walk_nodes(mut n: Option<NodeRef<'_>>) {
    // `next` chains are bounded by the depth limit, not by this loop.
    while let Some(node) = n {
        let _ = (node.id(), ok(node.name()));
        n = ok(node.next()).flatten();
    }
}

fuzz_target!(|data: &[u8]| {
    round_trip(data, KitchenSink::from_bytes_with, KitchenSink::to_bytes);
    let Some(r) = ok(KitchenSinkRef::from_bytes(data)) else {
        return;
    };
    let _ = (
        r.a_u8(),
        r.a_u16(),
        r.a_u32(),
        r.a_u64(),
        r.a_i8(),
        r.a_i16(),
    );
    let _ = (
        r.a_i32(),
        r.a_i64(),
        r.a_f32(),
        r.a_f64(),
        r.a_bool(),
        r.r#type(),
    );
    let _ = (r.color().name(), r.fixed(), r.origin().x(), r.origin().y());
    match ok(r.shape()) {
        Some(AnyPointRef::Unknown(t)) => assert!(t > 2),
        Some(AnyPointRef::Point2d(p)) => {
            let _ = p.x() + p.y();
        }
        Some(AnyPointRef::Point3d(p)) => {
            let _ = p.x() + p.y() + p.z();
        }
        _ => {}
    }
    walk_nodes(ok(r.head()).flatten());
    let _ = (ok(r.title()), ok(r.wide_title()));
    let _ = ok(r.bytes()).map(|c| c.iter().map(u32::from).sum::<u32>());
    let _ = ok(r.numbers()).map(|c| c.iter().sum::<f64>());
    let _ = ok(r.flags()).map(|c| c.iter().filter(|b| *b != 0).count());
    let _ = ok(r.colors()).map(|c| c.to_vec());
    if let Some(soa) = ok(r.particles()) {
        let n = soa.len();
        if let Some(c) = ok(soa.pos_x()) {
            assert_eq!(c.len(), n);
        }
        if let Some(c) = ok(soa.weights()) {
            assert_eq!(c.len(), 2 * n);
        }
        let _ = (
            ok(soa.color()),
            ok(soa.alive()),
            ok(soa.tags()),
            ok(soa.hues()),
        );
    }
    if let Some(aos) = ok(r.particles_aos()) {
        for p in aos.iter() {
            let _ = (
                p.pos().x(),
                p.color(),
                p.alive(),
                p.tags(),
                p.weights(),
                p.hues(),
                p.flags(),
            );
        }
    }
    if let Some(aos) = ok(r.nodes()) {
        assert_eq!(aos.iter().count(), aos.len());
        for n in aos.iter().take(64) {
            walk_nodes(Some(n));
        }
    }
});
