//! TypeScript emitter (placeholder until the next commit).

use crate::compiler::diag::Diagnostic;
use crate::compiler::ir::Schema;

#[derive(Clone, Debug)]
pub struct TsOptions {
    pub runtime: String,
}

pub fn emit(_schema: &Schema, _opts: &TsOptions) -> Result<String, Diagnostic> {
    Ok(String::new())
}
