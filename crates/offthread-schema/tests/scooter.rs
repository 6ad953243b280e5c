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
