//! Unions and interfaces: options, tags, memories and parameters.

use std::collections::HashMap;

use super::ast;
use super::ir::*;
use super::resolve::{Resolver, err};

impl Resolver {
    pub(super) fn union_decl(&mut self, u: &ast::UnionDecl) {
        const HELP: &str = "unions are `(dynamic, u8|u16|u32)`";
        self.unknown_options(&u.options, &["dynamic", "u8", "u16", "u32"], HELP);
        if !u.options.iter().any(|o| o.name == "dynamic") {
            self.push(err("E0013", u.name.span, format!("union `{}` must be `dynamic`", u.name.name), "unions are stored as a tag and an offset, so they are always dynamic: `(dynamic, u8)`"));
        }
        let tag = self
            .pick(&u.options, &["u8", "u16", "u32"], &u.name, HELP)
            .and_then(|o| Scalar::from_name(&o.name))
            .unwrap_or(Scalar::U32);
        if u.variants.is_empty() {
            self.push(err(
                "E0016",
                u.name.span,
                format!("union `{}` has no variants", u.name.name),
                "add at least one `variant: struct_name = tag;`",
            ));
        }
        let max = (1u64 << (tag.size() * 8)) - 1;
        let mut names = HashMap::new();
        let mut tags = HashMap::new();
        let mut next = 1u64;
        let mut variants = Vec::new();
        for v in &u.variants {
            self.unique(&mut names, &v.name, "variant");
            let (value, span) = v
                .tag
                .as_ref()
                .map_or((next, v.name.span), |t| (t.value, t.span));
            next = value.saturating_add(1);
            if value == 0 || value > max {
                self.push(err(
                    "E0008",
                    span,
                    format!("tag {value} is out of range"),
                    format!("tags go from 1 to {max} (0 means empty)"),
                ));
            }
            if let Some(prev) = tags.insert(value, v.name.name.clone()) {
                self.push(err(
                    "E0007",
                    span,
                    format!("tag {value} is already used by `{prev}`"),
                    "give every variant its own tag",
                ));
            }
            let struct_id = match self.field_type(&v.ty, &[]) {
                Some(Type::Struct(id)) => id,
                Some(_) => {
                    self.push(err(
                        "E0012",
                        v.ty.span(),
                        "union variants hold structs",
                        "wrap the value in a struct",
                    ));
                    continue;
                }
                None => continue,
            };
            variants.push(UnionVariant {
                name: v.name.name.clone(),
                struct_id,
                tag: value as u32,
            });
        }
        self.out.unions.push(Union {
            name: u.name.name.clone(),
            tag,
            variants,
        });
    }

    pub(super) fn access(&mut self, a: &ast::Ident) -> Access {
        match a.name.as_str() {
            "none" => Access::None,
            "read" => Access::Read,
            "write" => Access::Write,
            "readwrite" => Access::ReadWrite,
            other => {
                self.push(err(
                    "E0013",
                    a.span,
                    format!("unknown access `{other}`"),
                    "access is `read`, `write`, `readwrite` or `none`",
                ));
                Access::None
            }
        }
    }

    pub(super) fn interface_decl(&mut self, i: &ast::InterfaceDecl) {
        const HELP: &str = "interfaces are `(dynamic, direct|fanout|singleton)`";
        let patterns = ["direct", "fanout", "singleton"];
        self.unknown_options(
            &i.options,
            &["dynamic", "direct", "fanout", "singleton"],
            HELP,
        );
        if !i.options.iter().any(|o| o.name == "dynamic") {
            self.push(err(
                "E0013",
                i.name.span,
                format!("interface `{}` must be `dynamic`", i.name.name),
                "interfaces can always gain members: `(dynamic, direct)`",
            ));
        }
        let pattern = match self
            .pick(&i.options, &patterns, &i.name, HELP)
            .map(|o| o.name.as_str())
        {
            Some("fanout") => Pattern::Fanout,
            Some("singleton") => Pattern::Singleton,
            _ => Pattern::Direct,
        };
        let mut seen = HashMap::new();
        let mut out = Interface {
            name: i.name.name.clone(),
            pattern,
            memories: vec![],
            functions: vec![],
        };
        for m in &i.members {
            self.unique(&mut seen, m.name(), "member");
            if let ast::Member::Memory {
                name,
                import,
                export,
                pages,
            } = m
            {
                if pages.value == 0 || pages.value > 65_536 {
                    self.push(err(
                        "E0008",
                        pages.span,
                        format!("{} pages is out of range", pages.value),
                        "a memory has 1 to 65536 pages of 64 KiB",
                    ));
                }
                let (import, export) = (self.access(import), self.access(export));
                out.memories.push(Memory {
                    name: name.name.clone(),
                    import,
                    export,
                    pages: pages.value.min(65_536) as u32,
                });
            }
        }
        for m in &i.members {
            if let ast::Member::Fn {
                name,
                params,
                results,
            } = m
            {
                let params = self.params(params, &out.memories);
                let results = self.params(results, &out.memories);
                out.functions.push(Function {
                    name: name.name.clone(),
                    params,
                    results,
                });
            }
        }
        self.out.interfaces.push(out);
    }

    pub(super) fn params(&mut self, params: &[ast::Param], memories: &[Memory]) -> Vec<Param> {
        let mut seen = HashMap::new();
        let mut out = Vec::new();
        for p in params {
            self.unique(&mut seen, &p.name, "parameter");
            let memory = memories.iter().position(|m| m.name == p.memory.name);
            if memory.is_none() {
                let names: Vec<&str> = memories.iter().map(|m| m.name.as_str()).collect();
                self.push(err(
                    "E0014",
                    p.memory.span,
                    format!("no memory `{}` in this interface", p.memory.name),
                    if names.is_empty() {
                        "declare one: `m: memory (import: read, export: write, 1);`".to_string()
                    } else {
                        format!("memories here: {}", names.join(", "))
                    },
                ));
            }
            if let (Some(ty), Some(memory)) = (self.field_type(&p.ty, &[]), memory) {
                out.push(Param {
                    name: p.name.name.clone(),
                    ty,
                    memory,
                });
            }
        }
        out
    }
}
