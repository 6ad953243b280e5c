//! The kernel registry: every entry by name gives what its module's functions give,
//! checks its own arguments with the registry's codes, and honours its interrupt.

use std::sync::atomic::AtomicBool;

use offthread_kernels::md5::{self, Md5IterateOptions};
use offthread_kernels::pi::{self, Method};
use offthread_kernels::qr::{self, QrOptions};
use offthread_kernels::{Call, ErrorCode, Interrupt, KERNELS, KernelError, Never, Output, stats};
use offthread_schema_rt::generated::temperature::{TemperatureBatch, TemperatureReading};

fn run_with(
    name: &str,
    input: &[u8],
    nums: [f64; 3],
    interrupt: &dyn Interrupt,
) -> Result<Output, KernelError> {
    let def = KERNELS.iter().find(|k| k.name == name).expect(name);
    (def.run)(&Call { input, nums }, interrupt)
}

fn run(name: &str, input: &[u8], nums: [f64; 3]) -> Result<Output, KernelError> {
    run_with(name, input, nums, &Never)
}

fn code(r: Result<Output, KernelError>) -> ErrorCode {
    r.expect_err("an error").code
}

#[test]
fn names_are_unique() {
    let mut names: Vec<_> = KERNELS.iter().map(|k| k.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), KERNELS.len());
}

#[test]
fn pi_ranges_match_the_kernel_anywhere_in_the_stream() {
    for (first, count, seed) in [
        (0, 100_000, 1),
        (5_000_000, 3_000_001, 7),
        (1 << 40, 10, -3),
    ] {
        let nums = [first as f64, count as f64, seed as f64];
        let want = pi::count_range(seed, first, count, Method::Reference) as f64;
        assert_eq!(run("pi.range", &[], nums), Ok(Output::Number(want)));
        assert_eq!(
            run("pi.rangeReference", &[], nums),
            Ok(Output::Number(want))
        );
    }
    assert_eq!(
        run("pi.range", &[], [0.0, 100_000.0, 1.0]),
        Ok(Output::Number(78_463.0))
    );
}

#[test]
fn pi_in_a_pool_shares_the_range_and_counts_the_same() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let nums = [123_457.0, 9_000_000.0, 11.0];
    let alone = run("pi.range", &[], nums).unwrap();
    assert_eq!(pool.install(|| run("pi.range", &[], nums)).unwrap(), alone);
    assert_eq!(
        pool.install(|| run("pi.rangeReference", &[], nums))
            .unwrap(),
        alone
    );
}

#[test]
fn pi_checks_its_arguments_and_its_interrupt() {
    assert_eq!(
        code(run("pi.range", &[], [0.0, -1.0, 1.0])),
        ErrorCode::InvalidSamples
    );
    assert_eq!(
        code(run("pi.range", &[], [0.5, 10.0, 1.0])),
        ErrorCode::InvalidSamples
    );
    assert_eq!(
        code(run("pi.range", &[], [0.0, 10.0, 2f64.powi(60)])),
        ErrorCode::InvalidSeed
    );
    let stop = AtomicBool::new(true);
    let big = [1e9, 1e12, 1.0];
    assert_eq!(
        code(run_with("pi.range", &[], big, &stop)),
        ErrorCode::Aborted
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let shared = pool.install(|| run_with("pi.rangeReference", &[], big, &stop));
    assert_eq!(code(shared), ErrorCode::Aborted);
}

#[test]
fn md5_hex_and_iterate_with_and_without_a_start() {
    assert_eq!(
        run("md5.hex", b"abc", [0.0; 3]),
        Ok(Output::Text("900150983cd24fb0d6963f7d28e17f72".into()))
    );
    let text = b"hello";
    let whole = md5::iterate(
        Md5IterateOptions {
            text,
            rounds: 10_000,
        },
        &Never,
    )
    .unwrap();
    assert_eq!(
        run("md5.iterate", text, [10_000.0, 0.0, 0.0]),
        Ok(Output::Text(whole.clone()))
    );
    let Ok(Output::Text(part)) = run("md5.iterate", text, [4_000.0, 0.0, 0.0]) else {
        panic!("text expected");
    };
    let resumed = [part.as_bytes(), text].concat();
    assert_eq!(
        run("md5.iterate", &resumed, [6_000.0, 32.0, 0.0]),
        Ok(Output::Text(whole))
    );
    assert_eq!(
        run("md5.iterate", text, [0.0, 0.0, 0.0]),
        Ok(Output::Text(String::new()))
    );
    assert_eq!(
        code(run("md5.iterate", text, [1.5, 0.0, 0.0])),
        ErrorCode::InvalidRounds
    );
    assert_eq!(
        code(run("md5.iterate", text, [1.0, 31.0, 0.0])),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(run("md5.iterate", b"short", [1.0, 32.0, 0.0])),
        ErrorCode::InvalidArgument
    );
    let stop = AtomicBool::new(true);
    let long = run_with("md5.iterate", text, [1e9, 0.0, 0.0], &stop);
    assert_eq!(code(long), ErrorCode::Aborted);
}

#[test]
fn qr_formats_are_the_kernel_outputs() {
    let text = "héllo ✓";
    let o = QrOptions::new(text);
    let nums = [1.0, 128.0, 4.0];
    let input = text.as_bytes();
    assert_eq!(
        run("qr.png", input, nums),
        Ok(Output::Bytes(qr::png(o).unwrap()))
    );
    assert_eq!(
        run("qr.svg", input, nums),
        Ok(Output::Text(qr::svg(o).unwrap()))
    );
    assert_eq!(
        run("qr.dataURL", input, nums),
        Ok(Output::Text(qr::data_url(o).unwrap()))
    );
    assert_eq!(code(run("qr.png", b"\xff", nums)), ErrorCode::InvalidText);
    for bad in [
        [4.0, 128.0, 4.0],
        [1.0, 0.0, 4.0],
        [1.0, 12.5, 4.0],
        [1.0, 128.0, 65.0],
    ] {
        assert_eq!(
            code(run("qr.svg", b"x", bad)),
            ErrorCode::InvalidQrOptions,
            "{bad:?}"
        );
    }
    let long = vec![b'a'; 3000];
    assert_eq!(code(run("qr.dataURL", &long, nums)), ErrorCode::TextTooLong);
}

#[test]
fn stats_temperature_as_little_endian_f64() {
    let readings = (0..100)
        .map(|i| TemperatureReading {
            timestamp: i,
            value: i as f32,
        })
        .collect();
    let buf = TemperatureBatch { readings }.to_bytes().unwrap();
    let Ok(Output::Bytes(out)) = run("stats.temperature", &buf, [0.0; 3]) else {
        panic!("bytes expected");
    };
    let values: Vec<f64> = out
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(values, [100.0, 49.5, 0.0, 99.0]);
    assert_eq!(out, stats::temperature(&buf).unwrap().to_le_bytes());
    assert_eq!(
        code(run("stats.temperature", b"not a batch", [0.0; 3])),
        ErrorCode::InvalidBuffer
    );
}
