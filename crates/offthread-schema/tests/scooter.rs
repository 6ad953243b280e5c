//! The paper's scooter layout schema: the same fleet as SoA and AoS.

mod common;

use offthread_schema::generated::scooter::*;

fn fleet() -> ScooterFleet {
    let s = |i: u32| Scooter {
        id: i,
        distance: i * 100,
    };
    ScooterFleet {
        soa: (0..4).map(s).collect(),
        aos: (0..4).map(s).collect(),
    }
}

#[test]
fn soa_and_aos_hold_the_same_scooters() {
    let bytes = fleet().to_bytes().unwrap();
    common::check_golden("scooter_fleet", &bytes);
    let r = ScooterFleetRef::from_bytes(&bytes).unwrap();
    let soa = r.soa().unwrap();
    let aos = r.aos().unwrap();
    assert_eq!(Scooter::SIZE, 8, "a scooter is 64 bits, as in the paper");
    let from_aos: Vec<u32> = aos.iter().map(|s| s.distance()).collect();
    assert_eq!(soa.distance().unwrap().to_vec(), from_aos);
    assert_eq!(ScooterFleet::from_bytes(&bytes).unwrap(), fleet());
}

#[test]
fn mutated_fleets_give_typed_errors_only() {
    let valid = fleet().to_bytes().unwrap();
    common::mutate_and_read(&valid, 100_000, 0x5eed_0005, |buf| {
        ScooterFleet::from_bytes(buf).is_ok()
    });
}

/// Karmem §4.3.1: arrays resize in place within their capacity. Shrinking erases the
/// rest of the last 64-byte block; growing back exposes zeroed items, never old ones.
#[test]
fn arrays_resize_in_place_within_capacity() {
    let zero = Scooter { id: 0, distance: 0 };
    let mut bytes = fleet().to_bytes().unwrap();
    let len = bytes.len();
    ScooterFleet::resize_soa(&mut bytes, 0, 2).unwrap();
    ScooterFleet::resize_aos(&mut bytes, 0, 1).unwrap();
    assert_eq!(bytes.len(), len, "nothing moves");
    let shrunk = ScooterFleet::from_bytes(&bytes).unwrap();
    assert_eq!(shrunk.soa, fleet().soa[..2]);
    assert_eq!(shrunk.aos, fleet().aos[..1]);
    // The items past the new count are erased (the last block is cleared).
    let r = ScooterFleetRef::from_bytes(&bytes).unwrap();
    let distances = r.soa().unwrap().distance().unwrap().to_vec();
    assert_eq!(distances, [0, 100]);
    ScooterFleet::resize_soa(&mut bytes, 0, 4).unwrap();
    ScooterFleet::resize_aos(&mut bytes, 0, 4).unwrap();
    let regrown = ScooterFleet::from_bytes(&bytes).unwrap();
    assert_eq!(regrown.soa[..2], fleet().soa[..2]);
    assert_eq!(regrown.soa[2..], [zero.clone(), zero.clone()]);
    assert_eq!(regrown.aos[1..], [zero.clone(), zero.clone(), zero]);
    // Past the capacity: W0010, and the message is unchanged.
    let before = bytes.clone();
    let e = ScooterFleet::resize_soa(&mut bytes, 0, 5).unwrap_err();
    assert_eq!(e.code(), "W0010");
    assert_eq!(
        ScooterFleet::resize_aos(&mut bytes, 0, 5)
            .unwrap_err()
            .code(),
        "W0010"
    );
    assert_eq!(bytes, before);
    // A slot outside the message, or a forged header: an R code, no panic.
    assert_eq!(
        ScooterFleet::resize_soa(&mut bytes, len, 1)
            .unwrap_err()
            .code(),
        "R0001"
    );
    let mut forged = before.clone();
    forged[4..8].copy_from_slice(&8u32.to_le_bytes());
    assert_eq!(
        ScooterFleet::resize_soa(&mut forged, 0, 1)
            .unwrap_err()
            .code(),
        "R0003"
    );
}
