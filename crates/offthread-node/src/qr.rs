//! QR codes: text → PNG / data URL / SVG, sync and on the pool. Each thread keeps one
//! `QrEncoder` so its pixel and PNG buffers are reused across calls.

use std::cell::RefCell;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offthread_kernels::KernelError;
use offthread_kernels::qr::{self, Ecc, QrEncoder, QrOptions};

use crate::arg::Arg;
use crate::error::{Code, CodedResult, from_kernel, guard};
use crate::runtime::{NativePool, Outcome};

thread_local! {
    static ENCODER: RefCell<QrEncoder> = RefCell::new(QrEncoder::new());
}

/// Output formats (the `format` argument of `submitQr`).
const FORMAT_DATA_URL: u32 = 0;
const FORMAT_PNG: u32 = 1;
const FORMAT_SVG: u32 = 2;

fn options<'a>(text: &'a str, ecc: &str, size: u32, margin: u32) -> CodedResult<QrOptions<'a>> {
    Ok(QrOptions {
        text,
        ecc: Ecc::from_name(ecc).map_err(from_kernel)?,
        size,
        margin,
    })
}

/// One encode in the requested format, on the calling thread's encoder.
fn encode(opts: QrOptions<'_>, format: u32) -> std::result::Result<Outcome, KernelError> {
    match format {
        FORMAT_PNG => {
            ENCODER.with_borrow_mut(|e| e.png(opts).map(|png| Outcome::Bytes(png.to_vec())))
        }
        FORMAT_SVG => qr::svg(opts).map(Outcome::Text),
        _ => ENCODER.with_borrow_mut(|e| e.data_url(opts).map(|url| Outcome::Text(url.to_owned()))),
    }
}

/// `data:image/png;base64,…` of the QR code for `text`.
#[napi(ts_args_type = "text: string, ecc: string, size: number, margin: number")]
pub fn qr_data_url_sync(
    Arg(text): Arg<String>,
    Arg(ecc): Arg<String>,
    Arg(size): Arg<u32>,
    Arg(margin): Arg<u32>,
) -> Result<String, Code> {
    let opts = options(&text, &ecc, size, margin)?;
    guard(
        || match encode(opts, FORMAT_DATA_URL).map_err(from_kernel)? {
            Outcome::Text(url) => Ok(url),
            _ => unreachable!("data URLs are text"),
        },
    )
}

/// The PNG bytes of the QR code for `text`.
#[napi(ts_args_type = "text: string, ecc: string, size: number, margin: number")]
pub fn qr_png_sync(
    Arg(text): Arg<String>,
    Arg(ecc): Arg<String>,
    Arg(size): Arg<u32>,
    Arg(margin): Arg<u32>,
) -> Result<Buffer, Code> {
    let opts = options(&text, &ecc, size, margin)?;
    guard(|| match encode(opts, FORMAT_PNG).map_err(from_kernel)? {
        Outcome::Bytes(png) => Ok(png.into()),
        _ => unreachable!("PNGs are bytes"),
    })
}

/// The QR code for `text` as an SVG document.
#[napi(ts_args_type = "text: string, ecc: string, size: number, margin: number")]
pub fn qr_svg_sync(
    Arg(text): Arg<String>,
    Arg(ecc): Arg<String>,
    Arg(size): Arg<u32>,
    Arg(margin): Arg<u32>,
) -> Result<String, Code> {
    let opts = options(&text, &ecc, size, margin)?;
    guard(|| qr::svg(opts).map_err(from_kernel))
}

#[napi]
impl NativePool {
    /// A QR code as a pool job; `format`: 0 data URL, 1 PNG, 2 SVG.
    #[napi(
        ts_args_type = "id: number, text: string, ecc: string, size: number, margin: number, format: number"
    )]
    pub fn submit_qr(
        &mut self,
        Arg(id): Arg<u32>,
        Arg(text): Arg<String>,
        Arg(ecc): Arg<String>,
        Arg(size): Arg<u32>,
        Arg(margin): Arg<u32>,
        Arg(format): Arg<u32>,
    ) -> Result<(), Code> {
        // ECC parsed once, here: a bad name throws at the call.
        let ecc = options("", &ecc, size, margin)?.ecc;
        self.submit(id, false, move |_| {
            let opts = QrOptions {
                text: &text,
                ecc,
                size,
                margin,
            };
            encode(opts, format)
        })
    }
}
