// Generates the FlatBuffers Rust for schemas/table6.fbs with flatc (apt
// flatbuffers-compiler) into OUT_DIR.
fn main() {
    let out = std::env::var("OUT_DIR").unwrap();
    println!("cargo:rerun-if-changed=schemas/table6.fbs");
    let status = std::process::Command::new("flatc")
        .args(["--rust", "-o", &out, "schemas/table6.fbs"])
        .status()
        .expect("flatc not found: apt-get install flatbuffers-compiler");
    assert!(status.success(), "flatc failed");
}
