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
        const HELP: &str = "interfaces are `(dynamic, direct|fanout|single|pool)`";
        let patterns = ["direct", "fanout", "single", "singleton", "pool"];
        self.unknown_options(
            &i.options,
            &["dynamic", "direct", "fanout", "single", "singleton", "pool"],
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
            Some("single" | "singleton") => Pattern::Singleton,
            Some("pool") => Pattern::Pool,
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
                let params = self.params(params, &out.memories, Direction::In);
                let results = self.params(results, &out.memories, Direction::Out);
                out.functions.push(Function {
                    name: name.name.clone(),
                    params,
                    results,
                });
            }
        }
        self.out.interfaces.push(out);
    }

    pub(super) fn params(
        &mut self,
        params: &[ast::Param],
        memories: &[Memory],
        dir: Direction,
    ) -> Vec<Param> {
        let mut seen = HashMap::new();
        let mut out = Vec::new();
        let base = match dir {
            Direction::In => "input",
            Direction::Out => "output",
        };
        for (k, p) in params.iter().enumerate() {
            let name = match &p.name {
                Some(n) => {
                    self.unique(&mut seen, n, "parameter");
                    n.name.clone()
                }
                None if params.len() == 1 => base.to_string(),
                None => format!("{base}{k}"),
            };
            let memory = match &p.memory {
                None => Some(None),
                Some(m) => self.param_memory(m, memories, dir).map(Some),
            };
            if let (Some(ty), Some(memory)) = (self.field_type(&p.ty, &[]), memory) {
                out.push(Param { name, ty, memory });
            }
        }
        out
    }

    /// The memory a parameter names: it must exist, and the side that writes the
    /// message (the importer for inputs, the exporter for results) must be allowed to.
    fn param_memory(
        &mut self,
        m: &ast::Ident,
        memories: &[Memory],
        dir: Direction,
    ) -> Option<usize> {
        let Some(index) = memories.iter().position(|x| x.name == m.name) else {
            let names: Vec<&str> = memories.iter().map(|m| m.name.as_str()).collect();
            self.push(err(
                "E0014",
                m.span,
                format!("no memory `{}` in this interface", m.name),
                if names.is_empty() {
                    "declare one: `m: memory (import: write, export: read, 1);`".to_string()
                } else {
                    format!("memories here: {}", names.join(", "))
                },
            ));
            return None;
        };
        let mem = &memories[index];
        let (writer, access, reader, read_access) = match dir {
            Direction::In => ("importer", mem.import, "exporter", mem.export),
            Direction::Out => ("exporter", mem.export, "importer", mem.import),
        };
        let writes = matches!(access, Access::Write | Access::ReadWrite);
        let reads = matches!(read_access, Access::Read | Access::ReadWrite);
        if !writes || !reads {
            let what = if dir == Direction::In {
                "an input"
            } else {
                "a result"
            };
            self.push(err(
                "E0017",
                m.span,
                format!(
                    "memory `{}` cannot carry {what}: the {writer} has `{}` and the {reader} `{}` access",
                    m.name,
                    access.name(),
                    read_access.name()
                ),
                format!(
                    "{what} is written by the {writer} and read by the {reader}: give the {writer} `write` and the {reader} `read`"
                ),
            ));
            return None;
        }
        Some(index)
    }
}

/// Which side writes a parameter: inputs are written by the importer, results by the exporter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Direction {
    In,
    Out,
}
