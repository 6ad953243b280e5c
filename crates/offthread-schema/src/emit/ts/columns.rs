//! One SoA column's code, shared by the fixed-column writer (writer.rs) and the
//! variable-length one (varlen.rs): the checked fill loop and the column accessor.

use super::{column_member, typed_array};
use crate::compiler::camel_case;
use crate::compiler::ir::*;

/// `fill`'s statement for fixed column `c` (scalars, enums, bools, fixed arrays). Every
/// value is checked before it is stored: a typed array would turn a string into NaN,
/// wrap 300 into a u8 and throw untyped errors for 64-bit values (W0007 / W0008 instead).
///
/// `items_of`: the first column's loop also checks that each item is an object (named
/// after the item struct) — one pass, where a separate check pass cost a third of the
/// write time at 10,000 items.
pub(super) fn fill_column(k: usize, c: &SoaColumn, items_of: Option<&String>) -> String {
    let item_check = match items_of {
        Some(name) => format!(
            "const it = items[i]!;\n        if (typeof it !== 'object' || it === null) rt.notItem('{name}', i, it);\n        "
        ),
        None => String::new(),
    };
    let v = value_path(
        c,
        if items_of.is_some() {
            "it"
        } else {
            "items[i]!"
        },
    );
    let size = c.scalar.storage().size();
    // Index of the item's first value in the whole-buffer typed array.
    // `[1]T` is an array too: test `fixed`, not the count.
    let index = if !c.fixed {
        "at + i".to_string()
    } else {
        format!("at + i * {} + j", c.per_item)
    };
    let value = if !c.fixed {
        v.clone()
    } else {
        "a[j]!".to_string()
    };
    let kind = c.scalar.storage().name();
    let (views, store) = match c.scalar {
        Scalar::Bool => (
            "const c = this.builder.whole('u8');".to_string(),
            format!(
                "if (typeof x !== 'boolean') rt.badScalar('bool', x);\n        c[{index}] = x ? 1 : 0;"
            ),
        ),
        // 64-bit: a safe-integer number goes in as two u32 halves, inline (no BigInt per
        // value, no call); the rest (bigints, negatives, errors) through rt.putInt64.
        Scalar::I64 | Scalar::U64 => {
            let unsigned = c.scalar == Scalar::U64;
            (
                format!(
                    "const c = this.builder.whole('{kind}');\n      const h = this.builder.whole('u32');"
                ),
                format!(
                    "if (typeof x === 'number' && x >= 0 && x <= 9007199254740991 && Math.floor(x) === x) {{\n          \
                     h[2 * ({index})] = x >>> 0;\n          h[2 * ({index}) + 1] = (x / 4294967296) >>> 0;\n        \
                     }} else rt.putInt64(c, h, {index}, x, {unsigned});"
                ),
            )
        }
        sc => (
            format!("const c = this.builder.whole('{kind}');"),
            format!(
                "if ({}) rt.badScalar('{kind}', x);\n        c[{index}] = x;",
                misfit(sc, "x")
            ),
        ),
    };
    let body = format!("const x = {value};\n        {store}");
    let loop_body = if !c.fixed {
        format!("{item_check}{body}")
    } else {
        format!(
            "{item_check}const a = rt.fixed({v}, {n}, '{}');\n        for (let j = 0; j < {n}; j++) {{\n          {}\n        }}",
            c.names.join("."),
            body.replace("\n        ", "\n          "),
            n = c.per_item
        )
    };
    format!(
        "    {{\n      {views}\n      const at = (this.columns[{k}] ?? 0) / {size};\n      for (let i = 0; i < items.length; i++) {{\n        {loop_body}\n      }}\n    }}\n"
    )
}

/// `items[i]!.a.b` (items[i] is an object: `rt.items`), every inline struct on the way
/// checked (`rt.struct`).
fn value_path(c: &SoaColumn, item: &str) -> String {
    let mut v = item.to_string();
    for (k, name) in c.names.iter().enumerate() {
        v = format!("{v}.{}", camel_case(name));
        if k + 1 < c.names.len() {
            v = format!("rt.struct({v}, '{}')", c.names[..=k].join("."));
        }
    }
    v
}

/// A TS condition, true when number `x` is not a value scalar `sc` holds exactly
/// (floats: when it is not a number at all).
fn misfit(sc: Scalar, x: &str) -> String {
    // typeof first: bitwise operators throw on bigints and symbols.
    let range = |cond: String| format!("typeof {x} !== 'number' || {cond}");
    match sc.storage() {
        Scalar::U8 => range(format!("({x} & 0xff) !== {x}")),
        Scalar::U16 => range(format!("({x} & 0xffff) !== {x}")),
        Scalar::U32 => range(format!("{x} >>> 0 !== {x}")),
        Scalar::I8 => range(format!("({x} << 24) >> 24 !== {x}")),
        Scalar::I16 => range(format!("({x} << 16) >> 16 !== {x}")),
        Scalar::I32 => range(format!("({x} | 0) !== {x}")),
        _ => format!("typeof {x} !== 'number'"),
    }
}

/// The writable view of fixed column `k`.
pub(super) fn column_method(k: usize, c: &SoaColumn) -> String {
    format!(
        "\n  /** Column `{}` ({}): a view, valid until the next allocation. */\n  {}(): {} {{\n    return this.builder.view('{}', this.columns[{k}] ?? 0, this.header === 0 ? 0 : this.length * {});\n  }}\n",
        c.names.join("."),
        if c.per_item > 1 {
            format!("{} per item", c.per_item)
        } else {
            "one per item".into()
        },
        column_member(&c.names),
        typed_array(c.scalar),
        c.scalar.storage().name(),
        c.per_item
    )
}
