//! The `…SoaWriter` of an item with variable-length columns (strings, `[]T`): its
//! values' sizes must be known when the array is allocated (allocation is append-only),
//! so `alloc` takes them and `write(b, items)` measures plain items first.

use super::columns::{column_method, fill_column};
use super::{Cx, column_member};
use crate::compiler::camel_case;
use crate::compiler::ir::*;

pub(super) fn emit_soa_writer(cx: &Cx<'_>, id: usize) -> String {
    let n = cx.name(id);
    let cols = cx.s.soa_columns(id);
    let list: Vec<String> = cols
        .iter()
        .map(|c| format!("[{:#010x}, {}]", c.hash, c.item_bytes()))
        .collect();
    let ctor = super::fields_and_ctor(&[
        ("builder", "rt.Builder"),
        ("header", "number"),
        ("length", "number"),
        ("columns", "ReadonlyArray<number>"),
        ("values", "ReadonlyArray<number>"),
        ("sizes", "ReadonlyArray<number>"),
    ]);
    // alloc: fixed columns from COLUMNS, variable ones with their size appended.
    let mut specs = Vec::new();
    let mut measures = Vec::new();
    let mut var_names = Vec::new();
    for (k, c) in cols.iter().enumerate() {
        if !c.varlen {
            specs.push(format!("C[{k}]!"));
            continue;
        }
        let j = measures.len();
        specs.push(format!(
            "[{:#010x}, {}, sizes[{j}] ?? 0]",
            c.hash,
            c.item_bytes()
        ));
        let measure = match c.string {
            Some(StringKind::Utf8) => "rt.utf8Length",
            Some(StringKind::Utf16) => "rt.utf16Length",
            None => "rt.varLength",
        };
        measures.push(format!(
            "      rt.varTotal(items, (x) => x.{}, {measure}),\n",
            path(c)
        ));
        var_names.push(c.names.join("."));
    }
    let mut out = format!(
        "/** Writes a SoA array of `{}`: `write(b, items)`, or `alloc` with a count and the variable-length sizes, then fill each column. */\n\
         export class {n}SoaWriter {{\n  static readonly COLUMNS: ReadonlyArray<readonly [number, number]> = [{}];\n\n\
         {ctor}\n\
         \x20 /** `sizes`: values per variable-length column ({}), UTF-8 bytes for strings. */\n\
         \x20 static alloc(b: rt.Builder, count: number, sizes: ReadonlyArray<number>): {n}SoaWriter {{\n\
         \x20   const C = {n}SoaWriter.COLUMNS;\n\
         \x20   const a = b.soa(count, [{}]);\n\
         \x20   if (a === null) return new {n}SoaWriter(b, 0, count, [], [], sizes);\n\
         \x20   return new {n}SoaWriter(b, a.header, count, a.columns, a.values, sizes);\n  }}\n\n\
         \x20 /** Writes plain items: sizes measured, then every column (strings UTF-8-encoded once). */\n\
         \x20 static write(b: rt.Builder, items: ReadonlyArray<rt.Writable<{n}>>): {n}SoaWriter {{\n\
         \x20   rt.items(items, '{}');\n\
         \x20   const sizes = [\n{}    ];\n\
         \x20   return {n}SoaWriter.alloc(b, items.length, sizes).fill(items);\n  }}\n",
        cx.s.structs[id].name,
        list.join(", "),
        var_names.join(", "),
        specs.join(", "),
        cx.s.structs[id].name,
        measures.concat(),
    );
    let mut j = 0;
    for (k, c) in cols.iter().enumerate() {
        if !c.varlen {
            out += &column_method(k, c);
            continue;
        }
        let kind = c.scalar.storage().name();
        out += &format!(
            "\n  /** Column `{}`: offsets (count + 1) and values, views valid until the next allocation. */\n  {}(): rt.VarColumnWriter<'{kind}'> {{\n    const count = this.header === 0 ? 0 : this.length;\n    return this.builder.varView('{kind}', this.columns[{k}] ?? 0, this.values[{k}] ?? 0, count, this.sizes[{j}] ?? 0);\n  }}\n",
            c.names.join("."),
            column_member(&c.names),
        );
        j += 1;
    }
    out += &format!(
        "\n  /** Copies plain items into the columns; variable-length ones must total the sizes given to `alloc` (W0006). */\n  fill(items: ReadonlyArray<rt.Writable<{n}>>): this {{\n    rt.items(items, '{}', this.length);\n",
        cx.s.structs[id].name
    );
    for (k, c) in cols.iter().enumerate() {
        if !c.varlen {
            out += &fill_column(k, c, None);
            continue;
        }
        let f = match c.string {
            Some(StringKind::Utf8) => "fillUtf8",
            Some(StringKind::Utf16) => "fillUtf16",
            None => "fillVar",
        };
        // `[]bool` values are booleans, stored as 0 / 1 in a u8 column.
        let bools = if c.scalar == Scalar::Bool {
            ", true"
        } else {
            ""
        };
        out += &format!(
            "    rt.{f}(this.{}(), items, (x) => x.{}{bools});\n",
            column_member(&c.names),
            path(c)
        );
    }
    out += "    return this;\n  }\n}\n";
    out
}

/// `a.b` of a column's field path on a plain item.
fn path(c: &SoaColumn) -> String {
    let p: Vec<String> = c.names.iter().map(|x| camel_case(x)).collect();
    p.join(".")
}
