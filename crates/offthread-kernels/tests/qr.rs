//! QR kernel: every image is decoded back with an independent decoder (`png`
//! decoding + `rqrr`), and the SVG is read back from its path.

use std::time::Instant;

use base64::Engine as _;
use offthread_kernels::qr::{
    self, DATA_URL_PREFIX, Ecc, MAX_MARGIN, MAX_SIZE, Mode, QrEncoder, QrOptions, QrSymbol,
};
use offthread_kernels::{ErrorCode, KernelError};

/// A greyscale image, one byte per pixel, 0 = black.
struct Grey {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

/// PNG → 8-bit greyscale through the `png` decoder (expanding 1-bit samples).
fn decode_png(bytes: &[u8]) -> Grey {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader.next_frame(&mut buf).expect("PNG frame");
    assert_eq!(info.color_type, png::ColorType::Grayscale);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    Grey {
        width: info.width as usize,
        height: info.height as usize,
        pixels: buf,
    }
}

/// Finds exactly one QR code in `img` with `rqrr` and returns its bytes.
fn read_qr(img: &Grey) -> Vec<u8> {
    let mut prepared =
        rqrr::PreparedImage::prepare_from_greyscale(img.width, img.height, |x, y| {
            img.pixels[y * img.width + x]
        });
    let grids = prepared.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code in the image");
    let mut out = Vec::new();
    grids[0]
        .decode_to(&mut out)
        .expect("rqrr decodes the symbol");
    out
}

fn roundtrip_png(opts: QrOptions<'_>) -> qr::QrImage {
    let image = qr::encode(opts).unwrap_or_else(|e| panic!("{e} for {:?}", opts.text));
    let grey = decode_png(&image.png);
    assert_eq!(grey.width, image.pixels as usize);
    assert_eq!(grey.height, image.pixels as usize);
    assert_eq!(
        read_qr(&grey),
        opts.text.as_bytes(),
        "PNG decodes to the input"
    );
    image
}

fn opts(text: &str, ecc: Ecc, size: u32) -> QrOptions<'_> {
    QrOptions {
        ecc,
        size,
        ..QrOptions::new(text)
    }
}

#[test]
fn defaults() {
    let o = QrOptions::new("x");
    assert_eq!((o.ecc, o.size, o.margin), (Ecc::M, 128, 4));
    assert_eq!(Ecc::default(), Ecc::M);
    for e in Ecc::ALL {
        assert_eq!(Ecc::parse(e.as_str()), Some(e));
        assert_eq!(Ecc::parse(&e.as_str().to_lowercase()), Some(e));
    }
    assert_eq!(Ecc::parse("X"), None);
}

#[test]
fn ascii_and_utf8_decode_back() {
    for text in [
        "hello",
        "https://example.com/path?q=1&r=2",
        "HELLO WORLD 123",
        "0123456789",
        "héllo wörld ✓ 日本",
        "🦀 emoji, עברית, русский, ελληνικά",
        "line\nbreak\ttab",
    ] {
        for ecc in Ecc::ALL {
            let image = roundtrip_png(opts(text, ecc, 256));
            assert_eq!(image.symbol.ecc(), ecc);
        }
    }
}

#[test]
fn empty_text_is_a_valid_code() {
    let image = roundtrip_png(QrOptions::new(""));
    assert_eq!(image.symbol.version(), 1);
}

#[test]
fn version_1_at_default_size() {
    // 21 modules + 2·4 quiet = 29; 128 / 29 = 4 px per module → 116 px.
    let image = roundtrip_png(QrOptions::new("hello"));
    assert_eq!(image.symbol.width(), 21);
    assert_eq!(image.symbol.version(), 1);
    assert_eq!((image.scale, image.pixels), (4, 116));
    assert_eq!(&image.png[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn geometry() {
    let sym = QrSymbol::new("hello", Ecc::M).unwrap();
    // Image never exceeds size while one pixel per module fits.
    for size in 29..=600 {
        let image = qr::encode(opts("hello", Ecc::M, size)).unwrap();
        assert_eq!(image.scale, size / 29);
        assert_eq!(image.pixels, image.scale * 29);
        assert!(image.pixels <= size);
        assert!(image.pixels + 29 > size, "largest whole-pixel fit");
    }
    // Below that, one pixel per module: bigger than size, but still decodable.
    for size in [1, 10, 28] {
        let image = roundtrip_png(opts("hello", Ecc::M, size));
        assert_eq!((image.scale, image.pixels), (1, 29));
    }
    // Margins 0 and large.
    for margin in [0, 1, MAX_MARGIN] {
        let image = qr::encode(QrOptions {
            margin,
            ..QrOptions::new("hello")
        })
        .unwrap();
        assert_eq!(image.pixels, image.scale * (21 + 2 * margin));
        assert_eq!(sym.scale(128, margin), image.scale);
    }
    let image = roundtrip_png(QrOptions {
        margin: 2,
        ..QrOptions::new("hello")
    });
    assert_eq!(image.margin, 2);
}

#[test]
fn pixels_match_the_symbol() {
    let text = "pixels match";
    let image = qr::encode(QrOptions {
        size: 300,
        margin: 3,
        ..QrOptions::new(text)
    })
    .unwrap();
    let grey = decode_png(&image.png);
    let (s, m, w) = (image.scale, image.margin, image.symbol.width());
    for py in 0..image.pixels {
        for px in 0..image.pixels {
            let (mx, my) = (px / s, py / s);
            let dark = mx >= m && my >= m && image.symbol.is_dark(mx - m, my - m);
            assert!(mx < w + 2 * m);
            let v = grey.pixels[(py * image.pixels + px) as usize];
            assert_eq!(v, if dark { 0 } else { 255 }, "pixel ({px}, {py})");
        }
    }
}

#[test]
fn data_url_is_the_png() {
    let image = qr::encode(QrOptions::new("data url")).unwrap();
    let url = image.to_data_url();
    let b64 = url.strip_prefix(DATA_URL_PREFIX).expect("prefix");
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap(),
        image.png
    );
    assert_eq!(qr::data_url(QrOptions::new("data url")).unwrap(), url);
    assert_eq!(qr::png(QrOptions::new("data url")).unwrap(), image.png);
}

#[test]
fn encoder_reuse_matches_one_shot() {
    let mut enc = QrEncoder::new();
    for text in [
        "a",
        "a much longer text that needs a bigger version",
        "b",
        "",
    ] {
        for size in [64, 128, 1000] {
            let o = opts(text, Ecc::Q, size);
            let want = qr::encode(o).unwrap();
            assert_eq!(enc.png(o).unwrap(), &want.png[..]);
            assert_eq!(enc.data_url(o).unwrap(), want.to_data_url());
        }
    }
    // An error leaves the encoder usable.
    let long = "x".repeat(3000);
    assert!(enc.data_url(QrOptions::new(&long)).is_err());
    assert!(enc.data_url(QrOptions::new("ok")).is_ok());
}

/// A string of `len` characters in `mode`.
fn text_of(mode: Mode, len: usize) -> String {
    let (alphabet, from): (&[u8], usize) = match mode {
        Mode::Numeric => (b"0123456789", 0),
        Mode::Alphanumeric => (b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:", 0),
        Mode::Byte => (b"abcdefghijklmnopqrstuvwxyz", 0),
    };
    (0..len)
        .map(|i| char::from(alphabet[(i * 7 + from) % alphabet.len()]))
        .collect()
}

#[test]
fn capacity_edges_for_every_ecc_and_mode() {
    for ecc in Ecc::ALL {
        for mode in [Mode::Numeric, Mode::Alphanumeric, Mode::Byte] {
            let cap = qr::capacity(mode, ecc);
            let full = text_of(mode, cap);
            assert_eq!(Mode::of(&full), mode);
            // The largest symbol: 177 modules, decodes back at 2 px per module.
            let image = roundtrip_png(opts(&full, ecc, 2 * 185));
            assert_eq!(image.symbol.version(), 40);
            assert_eq!(image.scale, 2);

            let over = text_of(mode, cap + 1);
            let e = qr::encode(opts(&over, ecc, 128)).unwrap_err();
            assert_eq!(e.code, ErrorCode::TextTooLong, "{e}");
            assert_eq!(e.code.as_str(), "ERR_TEXT_TOO_LONG");
            assert!(e.message.contains(&cap.to_string()), "{e}");
            assert!(e.message.contains(ecc.as_str()), "{e}");
            assert_eq!(qr::svg(opts(&over, ecc, 128)).unwrap_err().code, e.code);
        }
    }
}

#[test]
fn multibyte_capacity_counts_bytes() {
    // "✓" is 3 bytes: 2331 / 3 = 777 fit at M, 778 do not.
    let fits = "✓".repeat(777);
    let image = roundtrip_png(opts(&fits, Ecc::M, 370));
    assert_eq!(image.symbol.version(), 40);
    let e = qr::encode(QrOptions::new(&"✓".repeat(778))).unwrap_err();
    assert_eq!(e.code, ErrorCode::TextTooLong);
    assert!(e.message.contains("2334 bytes"), "{e}");
    assert!(e.message.contains("2331"), "{e}");
}

#[test]
fn bad_options_are_typed_errors() {
    let bad = |o: QrOptions<'_>| -> KernelError {
        let e = qr::encode(o).unwrap_err();
        assert_eq!(qr::svg(o).unwrap_err(), e);
        assert_eq!(QrEncoder::new().png(o).unwrap_err(), e);
        e
    };
    for size in [0, MAX_SIZE + 1, u32::MAX] {
        let e = bad(opts("x", Ecc::M, size));
        assert_eq!(e.code, ErrorCode::InvalidQrOptions, "size {size}");
        assert_eq!(e.code.as_str(), "ERR_INVALID_QR_OPTIONS");
    }
    for margin in [MAX_MARGIN + 1, u32::MAX] {
        let e = bad(QrOptions {
            margin,
            ..QrOptions::new("x")
        });
        assert_eq!(e.code, ErrorCode::InvalidQrOptions, "margin {margin}");
    }
    assert!(qr::encode(opts("x", Ecc::M, MAX_SIZE)).is_ok());
    let sym = QrSymbol::new("x", Ecc::L).unwrap();
    let (mut px, mut out) = (Vec::new(), Vec::new());
    // Methods that cannot fail cap the margin instead of overflowing.
    assert_eq!(
        sym.scale(u32::MAX, u32::MAX),
        sym.scale(u32::MAX, MAX_MARGIN)
    );
    assert_eq!(sym.to_svg(u32::MAX, 7), sym.to_svg(MAX_MARGIN, 7));
    for (scale, margin) in [(0, 4), (1000, 4), (1, MAX_MARGIN + 1), (u32::MAX, u32::MAX)] {
        let e = sym.write_png(scale, margin, &mut px, &mut out).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidQrOptions);
    }
}

/// A parsed SVG: the viewBox side, and the dark modules of the one path.
fn parse_svg(svg: &str) -> (u32, Vec<(u32, u32)>) {
    let view = svg
        .split("viewBox=\"0 0 ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .expect("viewBox")
        .parse()
        .expect("viewBox side");
    assert_eq!(svg.matches("<path").count(), 1, "one path");
    let d = svg
        .split(" d=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("path data");
    let mut dark = Vec::new();
    for run in d.split('M').filter(|r| !r.is_empty()) {
        // "{x} {y}h{n}v1h-{n}z"
        let (xy, rest) = run.split_once('h').expect("h");
        let (x, y) = xy.split_once(' ').expect("x y");
        let (n, rest) = rest.split_once("v1h-").expect("v1h-");
        assert_eq!(rest, format!("{n}z"));
        let (x, y, n): (u32, u32, u32) =
            (x.parse().unwrap(), y.parse().unwrap(), n.parse().unwrap());
        assert!(n > 0);
        dark.extend((x..x + n).map(|x| (x, y)));
    }
    (view, dark)
}

#[test]
fn svg_has_the_symbols_dark_modules_and_decodes() {
    for (text, ecc, margin) in [
        ("svg", Ecc::M, 4),
        ("héllo wörld ✓ 日本", Ecc::H, 2),
        (&*text_of(Mode::Byte, 500), Ecc::L, 4),
    ] {
        let o = QrOptions {
            ecc,
            margin,
            ..QrOptions::new(text)
        };
        let svg = qr::svg(o).unwrap();
        let image = qr::encode(o).unwrap();
        assert_eq!(image.to_svg(), svg);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.ends_with("</svg>"));
        assert!(svg.contains(&format!("width=\"{}\"", image.pixels)));

        let sym = &image.symbol;
        let (view, dark) = parse_svg(&svg);
        assert_eq!(view, sym.width() + 2 * margin);
        assert_eq!(dark.len(), sym.dark_count());
        for &(x, y) in &dark {
            assert!(sym.is_dark(x - margin, y - margin));
        }

        // Rasterise the path at 3 px per module and decode it.
        let scale = 3;
        let side = (view * scale) as usize;
        let mut pixels = vec![255u8; side * side];
        for (x, y) in dark {
            for dy in 0..scale {
                for dx in 0..scale {
                    pixels[((y * scale + dy) as usize) * side + (x * scale + dx) as usize] = 0;
                }
            }
        }
        let grey = Grey {
            width: side,
            height: side,
            pixels,
        };
        assert_eq!(read_qr(&grey), text.as_bytes());
    }
}

/// xorshift64*, for reproducible random strings without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn char(&mut self) -> char {
        match self.below(6) {
            0 => char::from(b'0' + self.below(10) as u8),
            1 => char::from(b" $%*+-./:ABCDEFGHIJKLMNOPQRSTUVWXYZ"[self.below(35) as usize]),
            2 => char::from(32 + self.below(95) as u8),
            3 => char::from_u32(0x80 + self.below(0x780) as u32).unwrap(),
            4 => char::from_u32(0x3000 + self.below(0x6000) as u32).unwrap(),
            _ => char::from_u32(0x1_F300 + self.below(0x300) as u32).unwrap(),
        }
    }

    fn text(&mut self, max_chars: u64) -> String {
        // Mostly one "mode family" per string so numeric/alphanumeric also get hit.
        let n = self.below(max_chars + 1);
        let family = self.below(4);
        (0..n)
            .map(|_| match family {
                0 => char::from(b'0' + self.below(10) as u8),
                1 => char::from(
                    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"[self.below(45) as usize],
                ),
                _ => self.char(),
            })
            .collect()
    }
}

#[test]
fn random_texts_never_panic_and_decode() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut enc = QrEncoder::new();
    let mut decoded = 0;
    // QR_FUZZ_ITERS=20000 for a longer run (release recommended).
    let iters: usize = std::env::var("QR_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    for i in 0..iters {
        // Lengths up to beyond every capacity (4-byte chars × 2000 > 7089).
        let max = if i % 20 == 0 { 2000 } else { 100 };
        let text = rng.text(max);
        let ecc = Ecc::ALL[rng.below(4) as usize];
        let size = [1, 64, 128, 200, 300][rng.below(5) as usize];
        let margin = rng.below(6) as u32;
        let o = QrOptions {
            text: &text,
            ecc,
            size,
            margin,
        };
        let fits = text.len() <= qr::capacity(Mode::of(&text), ecc);
        match qr::encode(o) {
            Ok(image) => {
                assert!(fits, "{} bytes encoded past capacity", text.len());
                assert_eq!(enc.png(o).unwrap(), &image.png[..]);
                // Decode a share of them (all the small ones).
                if image.scale >= 2 && (text.len() < 100 || i % 10 == 0) {
                    assert_eq!(read_qr(&decode_png(&image.png)), text.as_bytes());
                    decoded += 1;
                }
                let (_, dark) = parse_svg(&image.to_svg());
                assert_eq!(dark.len(), image.symbol.dark_count());
            }
            Err(e) => {
                assert!(!fits, "{e} for a text that fits");
                assert_eq!(e.code, ErrorCode::TextTooLong);
            }
        }
    }
    assert!(decoded > iters * 3 / 8, "decoded {decoded}");
}

#[test]
fn every_byte_mode_length_at_l_encodes() {
    // Every version boundary, no panics, right version growth.
    let mut last = 1;
    for len in (0..=qr::capacity(Mode::Byte, Ecc::L)).step_by(13) {
        let sym = QrSymbol::new(&text_of(Mode::Byte, len), Ecc::L).unwrap();
        assert!(sym.version() >= last);
        last = sym.version();
    }
    assert_eq!(last, 40);
}

/// `cargo test --release -p offthread-kernels --test qr -- --ignored --nocapture`
#[test]
#[ignore = "timing; run in release"]
fn timing() {
    let text = "https://example.com/some/path?query=offthread&id=12345";
    let best = |label: &str, f: &mut dyn FnMut() -> usize| {
        // Warm up, then calibrate to ~0.1 s per repetition.
        for _ in 0..3 {
            f();
        }
        let t = Instant::now();
        f();
        let n = (0.1 / t.elapsed().as_secs_f64()).clamp(10.0, 20_000.0) as u32;
        let mut best = f64::INFINITY;
        for _ in 0..10 {
            let t = Instant::now();
            let mut sink = 0;
            for _ in 0..n {
                sink += f();
            }
            std::hint::black_box(sink);
            best = best.min(t.elapsed().as_secs_f64() * 1e6 / f64::from(n));
        }
        println!("{label}: {best:.1} µs per call (best of 10 × {n})");
    };
    best("symbol only (fast_qr), \"hello\"", &mut || {
        QrSymbol::new("hello", Ecc::M).unwrap().width() as usize
    });
    best("qr::data_url, \"hello\", 128 px, ECC M", &mut || {
        qr::data_url(QrOptions::new("hello")).unwrap().len()
    });
    best("symbol only (fast_qr)", &mut || {
        QrSymbol::new(text, Ecc::M).unwrap().width() as usize
    });
    best("qr::data_url, 128 px, ECC M (one-shot)", &mut || {
        qr::data_url(QrOptions::new(text)).unwrap().len()
    });
    let mut enc = QrEncoder::new();
    best(
        "QrEncoder::data_url, 128 px, ECC M (reused buffers)",
        &mut || enc.data_url(QrOptions::new(text)).unwrap().len(),
    );
    best("qr::svg, ECC M", &mut || {
        qr::svg(QrOptions::new(text)).unwrap().len()
    });
    let big = text_of(Mode::Byte, qr::capacity(Mode::Byte, Ecc::M));
    best(
        "version 40 (2331 bytes, ECC M), 128 px data URL",
        &mut || qr::data_url(QrOptions::new(&big)).unwrap().len(),
    );
    best(
        "version 40 (2331 bytes, ECC M), 4096 px data URL",
        &mut || qr::data_url(opts(&big, Ecc::M, MAX_SIZE)).unwrap().len(),
    );
    let url = qr::data_url(QrOptions::new(text)).unwrap();
    println!("text {} bytes → data URL {} bytes", text.len(), url.len());
}
