// The "MD5-like" stripped loop of "Node vs. JS" (experiment http-md5): one MD5 F-round
// mixing step per iteration, no message, no padding. Built by http-md5-like.mjs with
// plain rustc (no crate: the addon's crates are not involved) into a shared library
// (called through koffi) and a wasm32 module (run in V8). Must match md5LikeJs exactly.

const K: [u32; 16] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
];
const S: [u32; 4] = [7, 12, 17, 22];

#[no_mangle]
pub extern "C" fn md5_like(n: u32) -> u32 {
    let (mut a, mut b, mut c, mut d) = (0x67452301u32, 0xefcdab89u32, 0x98badcfeu32, 0x10325476u32);
    for i in 0..n {
        let f = (b & c) | (!b & d);
        let x = a
            .wrapping_add(f)
            .wrapping_add(K[(i & 15) as usize])
            .wrapping_add(i);
        let t = d;
        d = c;
        c = b;
        b = b.wrapping_add(x.rotate_left(S[(i & 3) as usize]));
        a = t;
    }
    a ^ b ^ c ^ d
}
