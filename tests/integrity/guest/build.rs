//! Guests import their memory (`env.memory`): the host creates it with the maximum
//! it enforces (docs/guest-abi.md).
fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo::rustc-link-arg-cdylib=--import-memory");
    }
}
