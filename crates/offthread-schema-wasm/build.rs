//! Caps the wasm32 module's memory at 256 MiB. The compiler's limits keep a compile far
//! below it (docs/schema-format.md §4.1); the cap is the backstop: a compile that would
//! pass it traps on allocation (the JS host then throws ERR_SCHEMA_COMPILER and starts a
//! fresh instance) instead of growing the process by gigabytes.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-cdylib=--max-memory=268435456");
    }
}
