//! Recursive-descent parser. Stops at the first syntax error: later errors after a
//! broken token stream are mostly noise.

use super::ast::*;
use super::diag::{Diagnostic, Span};
use super::lexer::{Tok, Token, lex};
use super::limits::MAX_TYPE_DEPTH;

pub fn parse(src: &str) -> Result<Schema, Diagnostic> {
    let tokens = lex(src)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    let mut schema = Schema::default();
    while p.peek() != &Tok::Eof {
        schema.items.push(p.item()?);
    }
    Ok(schema)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    /// `[` levels open in the type being parsed: `type_expr` recurses per level.
    depth: usize,
}

type PResult<T> = Result<T, Diagnostic>;

const ITEM_HELP: &str =
    "a schema is a list of `struct`, `enum`, `union` and `interface` declarations";

impl Parser {
    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].tok
    }

    fn span(&self) -> Span {
        self.tokens[self.pos].span
    }

    fn prev_end(&self) -> usize {
        self.pos
            .checked_sub(1)
            .map_or(0, |i| self.tokens[i].span.end)
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn error(&self, expected: &str, help: &str) -> Diagnostic {
        Diagnostic::new(
            "E0003",
            self.span(),
            format!("expected {expected}, found {}", self.peek().describe()),
            help,
        )
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == &Tok::Punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char, help: &str) -> PResult<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("`{c}`"), help))
        }
    }

    fn ident(&mut self, what: &str, help: &str) -> PResult<Ident> {
        match self.peek().clone() {
            Tok::Ident(name) => {
                let span = self.bump().span;
                Ok(Ident { name, span })
            }
            _ => Err(self.error(what, help)),
        }
    }

    fn keyword(&mut self, kw: &str, help: &str) -> PResult<Ident> {
        match self.peek() {
            Tok::Ident(s) if s == kw => self.ident(kw, help),
            _ => Err(self.error(&format!("`{kw}`"), help)),
        }
    }

    fn int(&mut self, what: &str, help: &str) -> PResult<Int> {
        match *self.peek() {
            Tok::Int(value) => Ok(Int {
                value,
                span: self.bump().span,
            }),
            _ => Err(self.error(what, help)),
        }
    }

    fn item(&mut self) -> PResult<Item> {
        let kw = self.ident("a declaration", ITEM_HELP)?;
        match kw.name.as_str() {
            "struct" => self.struct_decl().map(Item::Struct),
            "enum" => self.enum_decl().map(Item::Enum),
            "union" => self.union_decl().map(Item::Union),
            "interface" => self.interface_decl().map(Item::Interface),
            other => Err(Diagnostic::new(
                "E0003",
                kw.span,
                format!("expected a declaration, found `{other}`"),
                ITEM_HELP,
            )),
        }
    }

    /// `( a, b, … )` — the option list after a declaration's name.
    fn options(&mut self, help: &str) -> PResult<Vec<Ident>> {
        self.expect('(', help)?;
        let mut out = vec![self.ident("an option", help)?];
        while self.eat(',') {
            out.push(self.ident("an option", help)?);
        }
        self.expect(')', help)?;
        Ok(out)
    }

    fn struct_decl(&mut self) -> PResult<StructDecl> {
        const HELP: &str = "declare structs as `struct name (inline|dynamic) { field: type; }`";
        let name = self.ident("a struct name", HELP)?;
        let options = self.options(HELP)?;
        self.expect('{', HELP)?;
        let mut fields = Vec::new();
        while !self.eat('}') {
            let fname = self.ident("a field name or `}`", HELP)?;
            self.expect(':', HELP)?;
            let ty = self.type_expr()?;
            let mut annotations = Vec::new();
            while self.eat('#') {
                annotations.push(self.ident(
                    "an annotation name",
                    "annotations are `#soa`, `#aos`, `#bovoa`, `#bovos` and `#string`",
                )?);
            }
            self.expect(';', "end each field with `;`")?;
            fields.push(Field {
                name: fname,
                ty,
                annotations,
            });
        }
        Ok(StructDecl {
            name,
            options,
            fields,
        })
    }

    fn type_expr(&mut self) -> PResult<TypeExpr> {
        const HELP: &str =
            "types are scalars (u8…u64, i8…i64, f32, f64, bool), declared names, `[N]T` or `[]T`";
        let start = self.span().start;
        if self.peek() == &Tok::Punct('[') && self.depth == MAX_TYPE_DEPTH {
            return Err(Diagnostic::new(
                "E0019",
                self.span(),
                format!("type nested more than {MAX_TYPE_DEPTH} levels deep"),
                "a field is `T`, `[N]T` or `[]T`; nest structs rather than arrays",
            ));
        }
        if self.eat('[') {
            self.depth += 1;
            let ty = self.array_type(start, HELP);
            self.depth -= 1;
            return ty;
        }
        Ok(TypeExpr::Named(self.ident("a type", HELP)?))
    }

    /// The rest of `[N]T` or `[]T` after the `[` at `start`.
    fn array_type(&mut self, start: usize, help: &str) -> PResult<TypeExpr> {
        if self.eat(']') {
            let elem = Box::new(self.type_expr()?);
            return Ok(TypeExpr::Slice {
                elem,
                span: Span::new(start, self.prev_end()),
            });
        }
        let len = self.int("an array length or `]`", help)?;
        self.expect(']', help)?;
        let elem = Box::new(self.type_expr()?);
        Ok(TypeExpr::Fixed {
            len,
            elem,
            span: Span::new(start, self.prev_end()),
        })
    }

    fn enum_decl(&mut self) -> PResult<EnumDecl> {
        const HELP: &str = "declare enums as `enum name (u8|u16|u32) { variant = 0; }`";
        let name = self.ident("an enum name", HELP)?;
        let options = self.options(HELP)?;
        self.expect('{', HELP)?;
        let mut variants = Vec::new();
        while !self.eat('}') {
            let vname = self.ident("a variant name or `}`", HELP)?;
            self.expect('=', HELP)?;
            let value = self.int("a value", HELP)?;
            self.expect(';', HELP)?;
            variants.push(EnumVariant { name: vname, value });
        }
        Ok(EnumDecl {
            name,
            options,
            variants,
        })
    }

    fn union_decl(&mut self) -> PResult<UnionDecl> {
        const HELP: &str =
            "declare unions as `union name (dynamic, u8|u16|u32) { variant: type = tag; }`";
        let name = self.ident("a union name", HELP)?;
        let options = self.options(HELP)?;
        self.expect('{', HELP)?;
        let mut variants = Vec::new();
        while !self.eat('}') {
            let vname = self.ident("a variant name or `}`", HELP)?;
            self.expect(':', HELP)?;
            let ty = self.type_expr()?;
            let tag = if self.eat('=') {
                Some(self.int("a tag", HELP)?)
            } else {
                None
            };
            self.expect(';', HELP)?;
            variants.push(UnionVariant {
                name: vname,
                ty,
                tag,
            });
        }
        Ok(UnionDecl {
            name,
            options,
            variants,
        })
    }

    fn interface_decl(&mut self) -> PResult<InterfaceDecl> {
        const HELP: &str = "declare interfaces as `interface name (dynamic, direct|fanout|single|pool) { m: memory (import: write, export: read, 1); f: fn(a: T @ m) (r: U @ m); g: (T) -> (U); }`";
        let name = self.ident("an interface name", HELP)?;
        let options = self.options(HELP)?;
        self.expect('{', HELP)?;
        let mut members = Vec::new();
        while !self.eat('}') {
            let mname = self.ident("a member name or `}`", HELP)?;
            self.expect(':', HELP)?;
            let member = if self.peek() == &Tok::Punct('(') {
                // Figure 35's form: `name: (params) -> (results);`
                let params = self.params(HELP)?;
                if self.peek() != &Tok::Arrow {
                    return Err(self.error("`->`", HELP));
                }
                self.bump();
                let results = self.params(HELP)?;
                Member::Fn {
                    name: mname,
                    params,
                    results,
                }
            } else {
                let kind = self.ident("`memory`, `fn` or `(`", HELP)?;
                match kind.name.as_str() {
                    "memory" => self.memory_member(mname, HELP)?,
                    "fn" => {
                        let params = self.params(HELP)?;
                        let results = self.params(HELP)?;
                        Member::Fn {
                            name: mname,
                            params,
                            results,
                        }
                    }
                    _ => {
                        return Err(Diagnostic::new(
                            "E0003",
                            kind.span,
                            format!("expected `memory`, `fn` or `(`, found `{}`", kind.name),
                            HELP,
                        ));
                    }
                }
            };
            self.expect(';', HELP)?;
            members.push(member);
        }
        Ok(InterfaceDecl {
            name,
            options,
            members,
        })
    }

    /// `(import: ACCESS, export: ACCESS, PAGES)` after `name: memory`.
    fn memory_member(&mut self, name: Ident, help: &str) -> PResult<Member> {
        const ACCESS: &str = "an access (`read`, `write`, `readwrite`, `none`)";
        self.expect('(', help)?;
        self.keyword("import", help)?;
        self.expect(':', help)?;
        let import = self.ident(ACCESS, help)?;
        self.expect(',', help)?;
        self.keyword("export", help)?;
        self.expect(':', help)?;
        let export = self.ident(ACCESS, help)?;
        self.expect(',', help)?;
        let pages = self.int("a page count", help)?;
        self.expect(')', help)?;
        Ok(Member::Memory {
            name,
            import,
            export,
            pages,
        })
    }

    /// `( [name:] T [@ mem], … )`
    fn params(&mut self, help: &str) -> PResult<Vec<Param>> {
        self.expect('(', help)?;
        let mut out = Vec::new();
        if self.eat(')') {
            return Ok(out);
        }
        loop {
            let named = matches!(self.peek(), Tok::Ident(_))
                && self.tokens.get(self.pos + 1).map(|t| &t.tok) == Some(&Tok::Punct(':'));
            let name = if named {
                let n = self.ident("a parameter name", help)?;
                self.expect(':', help)?;
                Some(n)
            } else {
                None
            };
            let ty = self.type_expr()?;
            let memory = if self.eat('@') {
                Some(self.ident("a memory name", help)?)
            } else {
                None
            };
            out.push(Param { name, ty, memory });
            if self.eat(')') {
                return Ok(out);
            }
            self.expect(',', help)?;
        }
    }
}
