//! QR codes: text → symbol (`fast_qr`) → PNG (`png`, fastest deflate) → data URL
//! (`base64`), or → SVG.
//!
//! **Definition** (docs/kernels.md): the text's UTF-8 bytes become one QR symbol at the
//! chosen ECC level (default M) in the densest single mode the text allows
//! (numeric, alphanumeric or byte) and the smallest version that holds it. The
//! image is greyscale with a quiet zone of `margin` modules (default 4) on each
//! side.
//!
//! **Geometry.** With `total = modules + 2·margin`, every module is a square of
//! `scale = max(1, size / total)` pixels, so the image is `scale · total` pixels
//! wide and high: at most `size`, the largest whole-pixel fit. When even one pixel
//! per module does not fit (`total > size`) the image is `total` pixels — bigger
//! than `size`, never blurred.
//!
//! **PNG.** 1-bit greyscale (0 = dark, 1 = light), deflate by `fdeflate` with the
//! Up filter (`png::Compression::Fastest`): every decoder reads 1-bit greyscale,
//! eight pixels per byte is the least to filter, deflate and base64, and the file
//! is within 2 % of `Compression::Fast`'s (adaptive filters).
//!
//! **Empty text** is a valid QR code (a byte segment of length 0) and is encoded.
//!
//! ```
//! use offthread_kernels::qr;
//! let url = qr::data_url(qr::QrOptions::new("hello"))?;
//! assert!(url.starts_with("data:image/png;base64,"));
//! # Ok::<(), offthread_kernels::KernelError>(())
//! ```

use std::cell::RefCell;

use base64::Engine as _;
use fast_qr::{ECL, QRBuilder};
use offthread_core::registry::{Call, KernelDef, Output};

use crate::{ErrorCode, KernelError};

/// Default largest image side, in pixels.
pub const DEFAULT_SIZE: u32 = 128;
/// Default quiet zone, in modules (the QR specification's minimum).
pub const DEFAULT_MARGIN: u32 = 4;
/// Largest `size` accepted, in pixels.
pub const MAX_SIZE: u32 = 4096;
/// Largest `margin` accepted, in modules.
pub const MAX_MARGIN: u32 = 64;
/// What every data URL starts with.
pub const DATA_URL_PREFIX: &str = "data:image/png;base64,";

/// Error correction level: the share of the symbol that can be damaged and still
/// read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Ecc {
    /// ≈7 %.
    L,
    /// ≈15 % (the default).
    #[default]
    M,
    /// ≈25 %.
    Q,
    /// ≈30 %.
    H,
}

impl Ecc {
    pub const ALL: [Ecc; 4] = [Ecc::L, Ecc::M, Ecc::Q, Ecc::H];

    /// `"L"`, `"M"`, `"Q"` or `"H"` (either case).
    pub fn parse(s: &str) -> Option<Ecc> {
        match s {
            "L" | "l" => Some(Ecc::L),
            "M" | "m" => Some(Ecc::M),
            "Q" | "q" => Some(Ecc::Q),
            "H" | "h" => Some(Ecc::H),
            _ => None,
        }
    }

    /// [`Ecc::parse`] with the registry error: `ERR_INVALID_QR_OPTIONS`.
    pub fn from_name(s: &str) -> Result<Ecc, KernelError> {
        Ecc::parse(s).ok_or_else(|| {
            KernelError::new(
                ErrorCode::InvalidQrOptions,
                format!("ecc must be L, M, Q or H, got {s:?}"),
            )
        })
    }

    /// 0 = L, 1 = M, 2 = Q, 3 = H (the C ABI's form), else `ERR_INVALID_QR_OPTIONS`.
    pub fn from_index(i: u32) -> Result<Ecc, KernelError> {
        Ecc::ALL.get(i as usize).copied().ok_or_else(|| {
            KernelError::new(
                ErrorCode::InvalidQrOptions,
                format!("ecc must be 0 (L), 1 (M), 2 (Q) or 3 (H), got {i}"),
            )
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Ecc::L => "L",
            Ecc::M => "M",
            Ecc::Q => "Q",
            Ecc::H => "H",
        }
    }

    fn ecl(self) -> ECL {
        match self {
            Ecc::L => ECL::L,
            Ecc::M => ECL::M,
            Ecc::Q => ECL::Q,
            Ecc::H => ECL::H,
        }
    }
}

/// Text given as bytes (the C ABI's and the registry's form): UTF-8, else
/// `ERR_INVALID_TEXT`.
pub fn text_from_utf8(bytes: &[u8]) -> Result<&str, KernelError> {
    std::str::from_utf8(bytes)
        .map_err(|_| KernelError::new(ErrorCode::InvalidText, "text is not valid UTF-8"))
}

/// The encoding mode chosen for a text (the densest one that covers all of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Digits only.
    Numeric,
    /// `0-9 A-Z`, space and `$ % * + - . / :`.
    Alphanumeric,
    /// Anything else, as UTF-8 bytes.
    Byte,
}

impl Mode {
    /// The mode `text` is encoded in.
    pub fn of(text: &str) -> Mode {
        let bytes = text.as_bytes();
        if bytes.iter().all(u8::is_ascii_digit) {
            Mode::Numeric
        } else if bytes.iter().all(|&c| is_alphanumeric(c)) {
            Mode::Alphanumeric
        } else {
            Mode::Byte
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Mode::Numeric => "digits in numeric mode",
            Mode::Alphanumeric => "characters in alphanumeric mode",
            Mode::Byte => "bytes of UTF-8 in byte mode",
        }
    }
}

fn is_alphanumeric(c: u8) -> bool {
    c.is_ascii_digit() || c.is_ascii_uppercase() || b" $%*+-./:".contains(&c)
}

/// The most characters (digits, alphanumeric characters or bytes) one QR symbol
/// (version 40) holds in `mode` at `ecc`.
pub fn capacity(mode: Mode, ecc: Ecc) -> usize {
    // ISO/IEC 18004 table 7, version 40.
    let row = match mode {
        Mode::Numeric => [7089, 5596, 3993, 3057],
        Mode::Alphanumeric => [4296, 3391, 2420, 1852],
        Mode::Byte => [2953, 2331, 1663, 1273],
    };
    row[ecc as usize]
}

/// Options of [`encode`] and friends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QrOptions<'a> {
    pub text: &'a str,
    /// Default M.
    pub ecc: Ecc,
    /// Largest image side in pixels, 1 to [`MAX_SIZE`] (default 128); see the
    /// module docs for the geometry.
    pub size: u32,
    /// Quiet zone in modules, 0 to [`MAX_MARGIN`] (default 4).
    pub margin: u32,
}

impl<'a> QrOptions<'a> {
    /// `text` with the defaults: ECC M, 128 px, margin 4.
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            ecc: Ecc::M,
            size: DEFAULT_SIZE,
            margin: DEFAULT_MARGIN,
        }
    }

    /// From the registry's form: the text's UTF-8 and JS numbers `[ecc, size, margin]`,
    /// ecc as 0 = L, 1 = M, 2 = Q, 3 = H. Ranges are [`QrOptions::validate`]'s, which
    /// every encoder calls.
    pub fn from_f64(text: &'a [u8], ecc: f64, size: f64, margin: f64) -> Result<Self, KernelError> {
        Ok(Self {
            text: text_from_utf8(text)?,
            ecc: Ecc::from_index(whole(ecc, "ecc")?)?,
            size: whole(size, "size")?,
            margin: whole(margin, "margin")?,
        })
    }

    pub fn validate(self) -> Result<Self, KernelError> {
        if self.size == 0 || self.size > MAX_SIZE {
            return Err(KernelError::new(
                ErrorCode::InvalidQrOptions,
                format!(
                    "size must be an integer from 1 to {MAX_SIZE} pixels, got {}",
                    self.size
                ),
            ));
        }
        if self.margin > MAX_MARGIN {
            return Err(KernelError::new(
                ErrorCode::InvalidQrOptions,
                format!(
                    "margin must be an integer from 0 to {MAX_MARGIN} modules, got {}",
                    self.margin
                ),
            ));
        }
        let mode = Mode::of(self.text);
        let cap = capacity(mode, self.ecc);
        if self.text.len() > cap {
            return Err(too_long(self.text, mode, self.ecc));
        }
        Ok(self)
    }
}

/// A JS number that must be a whole `u32` (ranges are checked by `validate`).
fn whole(x: f64, what: &str) -> Result<u32, KernelError> {
    if x >= 0.0 && x.fract() == 0.0 && x <= f64::from(u32::MAX) {
        Ok(x as u32)
    } else {
        Err(KernelError::new(
            ErrorCode::InvalidQrOptions,
            format!("{what} must be a whole number, got {x}"),
        ))
    }
}

fn too_long(text: &str, mode: Mode, ecc: Ecc) -> KernelError {
    KernelError::new(
        ErrorCode::TextTooLong,
        format!(
            "text too long for a QR code: {} {}; the capacity at ECC level {} is {}",
            text.len(),
            mode.unit(),
            ecc.as_str(),
            capacity(mode, ecc)
        ),
    )
}

/// A QR symbol: the module matrix without the quiet zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QrSymbol {
    /// Modules per side, 21 to 177.
    width: u32,
    /// Row-major, `true` = dark.
    dark: Vec<bool>,
    ecc: Ecc,
}

impl QrSymbol {
    /// Encodes `text` at `ecc`.
    pub fn new(text: &str, ecc: Ecc) -> Result<Self, KernelError> {
        let mode = Mode::of(text);
        if text.len() > capacity(mode, ecc) {
            return Err(too_long(text, mode, ecc));
        }
        let code = QRBuilder::new(text.as_bytes())
            .ecl(ecc.ecl())
            .build()
            .map_err(|_| too_long(text, mode, ecc))?;
        let n = code.size;
        let dark = code.data[..n * n].iter().map(|m| m.value()).collect();
        Ok(Self {
            width: n as u32,
            dark,
            ecc,
        })
    }

    /// Modules per side (`17 + 4·version`).
    pub fn width(&self) -> u32 {
        self.width
    }

    /// QR version, 1 to 40.
    pub fn version(&self) -> u32 {
        (self.width - 17) / 4
    }

    pub fn ecc(&self) -> Ecc {
        self.ecc
    }

    /// Whether module (`x`, `y`) is dark; `false` outside the symbol.
    pub fn is_dark(&self, x: u32, y: u32) -> bool {
        x < self.width && y < self.width && self.dark[(y * self.width + x) as usize]
    }

    /// Number of dark modules.
    pub fn dark_count(&self) -> usize {
        self.dark.iter().filter(|&&d| d).count()
    }

    /// Pixels per module for an image of at most `size` px with `margin` modules of
    /// quiet zone: `max(1, size / (width + 2·margin))` (`margin` capped at
    /// [`MAX_MARGIN`]).
    pub fn scale(&self, size: u32, margin: u32) -> u32 {
        (size / (self.width + 2 * margin.min(MAX_MARGIN))).max(1)
    }

    fn row(&self, y: u32) -> &[bool] {
        let w = self.width as usize;
        &self.dark[y as usize * w..][..w]
    }

    /// Appends the PNG (1-bit greyscale) at `scale` px per module with `margin`
    /// modules of quiet zone to `out`; `pixels` is scratch space (reused if the
    /// caller keeps it). Returns the image side in pixels.
    pub fn write_png(
        &self,
        scale: u32,
        margin: u32,
        pixels: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<u32, KernelError> {
        let total = self.width + 2 * margin.min(MAX_MARGIN);
        let side = total.saturating_mul(scale);
        if margin > MAX_MARGIN || scale == 0 || (scale > 1 && side > MAX_SIZE) {
            return Err(KernelError::new(
                ErrorCode::InvalidQrOptions,
                format!(
                    "scale {scale} with margin {margin} is out of range (scale ≥ 1, \
                     margin ≤ {MAX_MARGIN}, image ≤ {MAX_SIZE} px unless scale is 1)"
                ),
            ));
        }
        let stride = side.div_ceil(8) as usize;
        pixels.clear();
        pixels.resize(stride * side as usize, 0xff);
        let quiet = (margin * scale) as usize;
        // First pixel row of each module row, then copies of it.
        for y in 0..self.width {
            let top = quiet + (y * scale) as usize;
            let (done, rest) = pixels.split_at_mut((top + 1) * stride);
            let line = &mut done[top * stride..];
            let mut px = quiet;
            for &d in self.row(y) {
                if d {
                    for p in px..px + scale as usize {
                        line[p >> 3] &= !(0x80u8 >> (p & 7));
                    }
                }
                px += scale as usize;
            }
            for copy in rest.chunks_exact_mut(stride).take(scale as usize - 1) {
                copy.copy_from_slice(line);
            }
        }
        let mut enc = png::Encoder::new(&mut *out, side, side);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::One);
        enc.set_compression(png::Compression::Fastest);
        let png_err = |e: png::EncodingError| {
            KernelError::new(
                ErrorCode::InvalidQrOptions,
                format!("PNG encoding failed: {e}"),
            )
        };
        let mut writer = enc.write_header().map_err(png_err)?;
        writer.write_image_data(pixels).map_err(png_err)?;
        writer.finish().map_err(png_err)?;
        Ok(side)
    }

    /// The SVG: `viewBox` in modules (quiet zone included), `width`/`height` of
    /// `pixels`, a white background rectangle and every dark module in one black
    /// `<path>` of horizontal runs `M{x} {y}h{n}v1h-{n}z`, crisp edges. `margin`
    /// is capped at [`MAX_MARGIN`].
    pub fn to_svg(&self, margin: u32, pixels: u32) -> String {
        let margin = margin.min(MAX_MARGIN);
        let total = self.width + 2 * margin;
        let mut s = String::with_capacity(256 + self.dark.len() * 2);
        s.push_str(r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 "#);
        push_u32(&mut s, total);
        s.push(' ');
        push_u32(&mut s, total);
        s.push_str(r#"" width=""#);
        push_u32(&mut s, pixels);
        s.push_str(r#"" height=""#);
        push_u32(&mut s, pixels);
        s.push_str(r#"" shape-rendering="crispEdges"><rect width=""#);
        push_u32(&mut s, total);
        s.push_str(r#"" height=""#);
        push_u32(&mut s, total);
        s.push_str(r##"" fill="#fff"/><path fill="#000" d=""##);
        for y in 0..self.width {
            let row = self.row(y);
            let mut x = 0;
            while x < row.len() {
                if !row[x] {
                    x += 1;
                    continue;
                }
                let start = x;
                while x < row.len() && row[x] {
                    x += 1;
                }
                let run = (x - start) as u32;
                s.push('M');
                push_u32(&mut s, start as u32 + margin);
                s.push(' ');
                push_u32(&mut s, y + margin);
                s.push('h');
                push_u32(&mut s, run);
                s.push_str("v1h-");
                push_u32(&mut s, run);
                s.push('z');
            }
        }
        s.push_str(r#""/></svg>"#);
        s
    }
}

fn push_u32(s: &mut String, mut n: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &b in &buf[i..] {
        s.push(char::from(b));
    }
}

/// An encoded QR code: the symbol and its PNG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QrImage {
    pub symbol: QrSymbol,
    /// The PNG file.
    pub png: Vec<u8>,
    /// Image side in pixels (`scale · (modules + 2·margin)`).
    pub pixels: u32,
    /// Pixels per module.
    pub scale: u32,
    /// Quiet zone in modules.
    pub margin: u32,
}

impl QrImage {
    /// `data:image/png;base64,…`
    pub fn to_data_url(&self) -> String {
        let mut url = String::new();
        push_data_url(&self.png, &mut url);
        url
    }

    /// The same code as SVG, at the PNG's pixel size (see [`QrSymbol::to_svg`]).
    pub fn to_svg(&self) -> String {
        self.symbol.to_svg(self.margin, self.pixels)
    }
}

fn push_data_url(png: &[u8], url: &mut String) {
    url.reserve(DATA_URL_PREFIX.len() + png.len().div_ceil(3) * 4);
    url.push_str(DATA_URL_PREFIX);
    base64::engine::general_purpose::STANDARD.encode_string(png, url);
}

/// Text → symbol → PNG.
pub fn encode(opts: QrOptions<'_>) -> Result<QrImage, KernelError> {
    let opts = opts.validate()?;
    let symbol = QrSymbol::new(opts.text, opts.ecc)?;
    let scale = symbol.scale(opts.size, opts.margin);
    let mut png = Vec::new();
    let pixels = symbol.write_png(scale, opts.margin, &mut Vec::new(), &mut png)?;
    Ok(QrImage {
        symbol,
        png,
        pixels,
        scale,
        margin: opts.margin,
    })
}

/// Text → PNG file bytes.
pub fn png(opts: QrOptions<'_>) -> Result<Vec<u8>, KernelError> {
    Ok(encode(opts)?.png)
}

/// Text → `data:image/png;base64,…`
pub fn data_url(opts: QrOptions<'_>) -> Result<String, KernelError> {
    Ok(encode(opts)?.to_data_url())
}

/// Text → SVG (no PNG is made).
pub fn svg(opts: QrOptions<'_>) -> Result<String, KernelError> {
    let opts = opts.validate()?;
    let symbol = QrSymbol::new(opts.text, opts.ecc)?;
    let scale = symbol.scale(opts.size, opts.margin);
    let pixels = scale * (symbol.width() + 2 * opts.margin);
    Ok(symbol.to_svg(opts.margin, pixels))
}

/// Reusable buffers for many encodes on one thread (a pool worker, the WASM
/// instance): no allocation per call once warm, apart from the symbol itself.
#[derive(Debug, Default)]
pub struct QrEncoder {
    pixels: Vec<u8>,
    png: Vec<u8>,
    url: String,
}

impl QrEncoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The PNG, borrowed until the next call.
    pub fn png(&mut self, opts: QrOptions<'_>) -> Result<&[u8], KernelError> {
        let opts = opts.validate()?;
        let symbol = QrSymbol::new(opts.text, opts.ecc)?;
        let scale = symbol.scale(opts.size, opts.margin);
        self.png.clear();
        symbol.write_png(scale, opts.margin, &mut self.pixels, &mut self.png)?;
        Ok(&self.png)
    }

    /// The data URL, borrowed until the next call.
    pub fn data_url(&mut self, opts: QrOptions<'_>) -> Result<&str, KernelError> {
        self.png(opts)?;
        self.url.clear();
        push_data_url(&self.png, &mut self.url);
        Ok(&self.url)
    }
}

thread_local! {
    /// Each thread's encoder: its pixel and PNG buffers are reused across calls.
    static ENCODER: RefCell<QrEncoder> = RefCell::new(QrEncoder::new());
}

fn options<'a>(call: &Call<'a>) -> Result<QrOptions<'a>, KernelError> {
    let [ecc, size, margin] = call.nums;
    QrOptions::from_f64(call.input, ecc, size, margin)
}

/// `qr.dataURL(text)`, numbers `[ecc, size, margin]` (see [`QrOptions::from_f64`]):
/// `data:image/png;base64,…` as text.
pub const DATA_URL: KernelDef = KernelDef {
    name: "qr.dataURL",
    run: |call, _| {
        let opts = options(call)?;
        ENCODER.with_borrow_mut(|e| e.data_url(opts).map(|url| Output::Text(url.to_owned())))
    },
};

/// `qr.png(text)`, numbers as `qr.dataURL`: the PNG file's bytes.
pub const PNG: KernelDef = KernelDef {
    name: "qr.png",
    run: |call, _| {
        let opts = options(call)?;
        ENCODER.with_borrow_mut(|e| e.png(opts).map(|png| Output::Bytes(png.to_vec())))
    },
};

/// `qr.svg(text)`, numbers as `qr.dataURL`: the SVG document as text.
pub const SVG: KernelDef = KernelDef {
    name: "qr.svg",
    run: |call, _| svg(options(call)?).map(Output::Text),
};
