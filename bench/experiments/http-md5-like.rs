// The "MD5-like" loop of "Node vs. JS" (seed 002): blueimp-md5's MD5 function stripped to
// its calls, shifts and arithmetic (no message conversion, padding or hex digest), ported
// function for function — safe_add keeps blueimp's two 16-bit halves. Each iteration runs
// the block function once on a block whose word 1 is the iteration number (word 0 is
// 0x80, the rest 0: at iteration 0 the padded empty message). Built by
// http-md5-like.mjs with plain rustc into a shared library (called through koffi) and a
// wasm32 module (run in V8). Must give the state md5LikeState gives in JS.

#[inline]
fn safe_add(x: i32, y: i32) -> i32 {
    let lsw = (x & 0xffff) + (y & 0xffff);
    let msw = (x >> 16) + (y >> 16) + (lsw >> 16);
    (msw << 16) | (lsw & 0xffff)
}

#[inline]
fn bit_rotate_left(num: i32, cnt: u32) -> i32 {
    (num << cnt) | ((num as u32) >> (32 - cnt)) as i32
}

#[inline]
fn md5cmn(q: i32, a: i32, b: i32, x: i32, s: u32, t: i32) -> i32 {
    safe_add(
        bit_rotate_left(safe_add(safe_add(a, q), safe_add(x, t)), s),
        b,
    )
}

#[inline]
fn ff(a: i32, b: i32, c: i32, d: i32, x: i32, s: u32, t: i32) -> i32 {
    md5cmn((b & c) | (!b & d), a, b, x, s, t)
}

#[inline]
fn gg(a: i32, b: i32, c: i32, d: i32, x: i32, s: u32, t: i32) -> i32 {
    md5cmn((b & d) | (c & !d), a, b, x, s, t)
}

#[inline]
fn hh(a: i32, b: i32, c: i32, d: i32, x: i32, s: u32, t: i32) -> i32 {
    md5cmn(b ^ c ^ d, a, b, x, s, t)
}

#[inline]
fn ii(a: i32, b: i32, c: i32, d: i32, x: i32, s: u32, t: i32) -> i32 {
    md5cmn(c ^ (b | !d), a, b, x, s, t)
}

/// Word `word & 3` (a, b, c, d) of the state after `n` iterations.
#[no_mangle]
pub extern "C" fn md5_like(n: u32, word: u32) -> u32 {
    let mut x = [0i32; 16];
    x[0] = 0x80;
    let (mut a, mut b, mut c, mut d): (i32, i32, i32, i32) =
        (1732584193, -271733879, -1732584194, 271733878);
    for i in 0..n {
        x[1] = i as i32;
        let (olda, oldb, oldc, oldd) = (a, b, c, d);

        a = ff(a, b, c, d, x[0], 7, -680876936);
        d = ff(d, a, b, c, x[1], 12, -389564586);
        c = ff(c, d, a, b, x[2], 17, 606105819);
        b = ff(b, c, d, a, x[3], 22, -1044525330);
        a = ff(a, b, c, d, x[4], 7, -176418897);
        d = ff(d, a, b, c, x[5], 12, 1200080426);
        c = ff(c, d, a, b, x[6], 17, -1473231341);
        b = ff(b, c, d, a, x[7], 22, -45705983);
        a = ff(a, b, c, d, x[8], 7, 1770035416);
        d = ff(d, a, b, c, x[9], 12, -1958414417);
        c = ff(c, d, a, b, x[10], 17, -42063);
        b = ff(b, c, d, a, x[11], 22, -1990404162);
        a = ff(a, b, c, d, x[12], 7, 1804603682);
        d = ff(d, a, b, c, x[13], 12, -40341101);
        c = ff(c, d, a, b, x[14], 17, -1502002290);
        b = ff(b, c, d, a, x[15], 22, 1236535329);

        a = gg(a, b, c, d, x[1], 5, -165796510);
        d = gg(d, a, b, c, x[6], 9, -1069501632);
        c = gg(c, d, a, b, x[11], 14, 643717713);
        b = gg(b, c, d, a, x[0], 20, -373897302);
        a = gg(a, b, c, d, x[5], 5, -701558691);
        d = gg(d, a, b, c, x[10], 9, 38016083);
        c = gg(c, d, a, b, x[15], 14, -660478335);
        b = gg(b, c, d, a, x[4], 20, -405537848);
        a = gg(a, b, c, d, x[9], 5, 568446438);
        d = gg(d, a, b, c, x[14], 9, -1019803690);
        c = gg(c, d, a, b, x[3], 14, -187363961);
        b = gg(b, c, d, a, x[8], 20, 1163531501);
        a = gg(a, b, c, d, x[13], 5, -1444681467);
        d = gg(d, a, b, c, x[2], 9, -51403784);
        c = gg(c, d, a, b, x[7], 14, 1735328473);
        b = gg(b, c, d, a, x[12], 20, -1926607734);

        a = hh(a, b, c, d, x[5], 4, -378558);
        d = hh(d, a, b, c, x[8], 11, -2022574463);
        c = hh(c, d, a, b, x[11], 16, 1839030562);
        b = hh(b, c, d, a, x[14], 23, -35309556);
        a = hh(a, b, c, d, x[1], 4, -1530992060);
        d = hh(d, a, b, c, x[4], 11, 1272893353);
        c = hh(c, d, a, b, x[7], 16, -155497632);
        b = hh(b, c, d, a, x[10], 23, -1094730640);
        a = hh(a, b, c, d, x[13], 4, 681279174);
        d = hh(d, a, b, c, x[0], 11, -358537222);
        c = hh(c, d, a, b, x[3], 16, -722521979);
        b = hh(b, c, d, a, x[6], 23, 76029189);
        a = hh(a, b, c, d, x[9], 4, -640364487);
        d = hh(d, a, b, c, x[12], 11, -421815835);
        c = hh(c, d, a, b, x[15], 16, 530742520);
        b = hh(b, c, d, a, x[2], 23, -995338651);

        a = ii(a, b, c, d, x[0], 6, -198630844);
        d = ii(d, a, b, c, x[7], 10, 1126891415);
        c = ii(c, d, a, b, x[14], 15, -1416354905);
        b = ii(b, c, d, a, x[5], 21, -57434055);
        a = ii(a, b, c, d, x[12], 6, 1700485571);
        d = ii(d, a, b, c, x[3], 10, -1894986606);
        c = ii(c, d, a, b, x[10], 15, -1051523);
        b = ii(b, c, d, a, x[1], 21, -2054922799);
        a = ii(a, b, c, d, x[8], 6, 1873313359);
        d = ii(d, a, b, c, x[15], 10, -30611744);
        c = ii(c, d, a, b, x[6], 15, -1560198380);
        b = ii(b, c, d, a, x[13], 21, 1309151649);
        a = ii(a, b, c, d, x[4], 6, -145523070);
        d = ii(d, a, b, c, x[11], 10, -1120210379);
        c = ii(c, d, a, b, x[2], 15, 718787259);
        b = ii(b, c, d, a, x[9], 21, -343485551);

        a = safe_add(a, olda);
        b = safe_add(b, oldb);
        c = safe_add(c, oldc);
        d = safe_add(d, oldd);
    }
    [a, b, c, d][(word & 3) as usize] as u32
}
