//! C guests: `<stem>_guest.h`, the guest ABI glue (docs/guest-abi.md) over the C
//! readers and writers of `<stem>.h`. A guest defines `OT_EXPORT_<INTERFACE>` for each
//! interface it exports, implements `<interface>_<function>` for each of its functions,
//! and includes this header once: it defines the six exports, a bump allocator over the
//! guest's memory (reset after each call), and decodes every input with the bounds-checked
//! decoder — a bad message is `ERR_GUEST_FAILED` with its R code, never a trap.

use super::{descriptor, message};
use crate::compiler::diag::Diagnostic;
use crate::compiler::ir::Schema;
use crate::emit::c::ident;

const GLUE: &str = r#"
/* ---- the guest ABI (docs/guest-abi.md): imports, allocator, exports ---- */

__attribute__((import_module("offthread"), import_name("fail"))) void ot_host_fail(const char *msg, uint32_t len);
__attribute__((import_module("offthread"), import_name("oom"))) void ot_host_oom(uint32_t size);
__attribute__((import_module("offthread"), import_name("module_index"))) int32_t ot_host_module_index(void);

/* This module's index in the list given to `guests.load` (imported only if called). */
static inline int32_t ot_module_index(void) { return ot_host_module_index(); }

extern unsigned char __heap_base;
static size_t ot_heap_top; /* first free byte */
static int ot_calls_running;
static bool ot_heap_reset_due;

static size_t ot_heap_start(void) { return ((size_t)&__heap_base + 63) & ~(size_t)63; }

/* `size` bytes at a multiple of `align` (<= 64), growing memory; 0 when it cannot. */
static size_t ot_heap_alloc(size_t size, size_t align) {
  if (ot_heap_top == 0) ot_heap_top = ot_heap_start();
  size_t at = (ot_heap_top + align - 1) & ~(align - 1);
  if (at + size < at) return 0;
  size_t have = __builtin_wasm_memory_size(0) * 65536;
  if (at + size > have) {
    size_t pages = (at + size - have + 65535) / 65536;
    if (__builtin_wasm_memory_grow(0, pages) == (size_t)-1) {
      ot_host_oom((uint32_t)size);
      return 0;
    }
  }
  ot_heap_top = at + size;
  return at;
}

/* The decode arena: the heap itself (it cannot run out before memory does). */
static size_t ot_arena_grow(ot_arena *a, size_t need) {
  size_t extra = need - a->cap;
  if (!ot_heap_alloc(extra, 1)) return 0;
  a->cap = ot_heap_top - (size_t)a->base;
  return a->cap;
}

static ot_arena ot_call_arena(void) {
  ot_heap_alloc(0, 64);
  return (ot_arena){(uint8_t *)ot_heap_top, 0, 0, ot_arena_grow};
}

/* An error message for a failed call; returns OT_GUEST_FAILED for the function to return. */
#define OT_GUEST_FAILED 3000
static char ot_fail_text[256];
static uint32_t ot_fail_len;
static inline int ot_guest_fail(const char *msg) {
  uint32_t n = 0;
  while (msg[n] && n < sizeof ot_fail_text) ot_fail_text[n] = msg[n], n++;
  ot_fail_len = n;
  return OT_GUEST_FAILED;
}

/* Reports `e` through offthread.fail (or, out of memory, traps after offthread.oom). */
static int64_t ot_failed(int e, const char *what) {
  if (e == OT_ENOMEM) __builtin_trap(); /* ERR_GUEST_MEMORY_LIMIT: oom was reported */
  if (e == OT_GUEST_FAILED) {
    ot_host_fail(ot_fail_text, ot_fail_len);
    return -1;
  }
  char msg[64];
  uint32_t n = 0;
  for (const char *p = what; *p && n < 40; p++) msg[n++] = *p;
  for (const char *p = ": "; *p; p++) msg[n++] = *p;
  for (const char *p = ot_error_code(e); *p && n < sizeof msg; p++) msg[n++] = *p;
  ot_host_fail(msg, n);
  return -1;
}

static inline int64_t ot_pack(uint32_t ptr, uint32_t len) { return (int64_t)ptr | (int64_t)len << 32; }

/* A builder for a result of at most `pages` × 64 KiB, on the heap. */
static int ot_result_builder(uint32_t pages, ot_builder *b) {
  size_t cap = (size_t)pages * 65536;
  size_t at = ot_heap_alloc(cap, 64);
  if (!at) return OT_ENOMEM;
  *b = (ot_builder){(uint8_t *)at, (uint32_t)cap, 0};
  return OT_OK;
}

typedef struct {
  const char *descriptor;
  uint32_t len;
  int64_t (*call)(uint32_t fn, const uint8_t *ptr, uint32_t len);
} ot_interface;
"#;

const EXPORTS: &str = r#"
static const ot_interface ot_exports[] = {OT_EXPORT_ENTRIES{0, 0, 0}};
#define OT_EXPORT_COUNT (sizeof ot_exports / sizeof ot_exports[0] - 1)

__attribute__((export_name("offthread_abi"))) int32_t offthread_abi(void) { return 1; }
__attribute__((export_name("offthread_init"))) int32_t offthread_init(void) {
  return (int32_t)OT_EXPORT_COUNT; /* no imports: C guests do not call guests yet */
}
__attribute__((export_name("offthread_export"))) int64_t offthread_export(int32_t i) {
  if (i < 0 || (uint32_t)i >= OT_EXPORT_COUNT) return -1;
  return ot_pack((uint32_t)(size_t)ot_exports[i].descriptor, ot_exports[i].len);
}
__attribute__((export_name("offthread_import"))) int64_t offthread_import(int32_t i) {
  (void)i;
  return -1;
}
__attribute__((export_name("offthread_alloc"))) int32_t offthread_alloc(int32_t len) {
  /* Everything of the last call (its result was copied out) is free again. */
  if (ot_heap_reset_due && ot_calls_running == 0) {
    ot_heap_top = ot_heap_start();
    ot_heap_reset_due = false;
  }
  return (int32_t)ot_heap_alloc((size_t)(uint32_t)len, 64);
}
__attribute__((export_name("offthread_call"))) int64_t offthread_call(int32_t e, int32_t fn, int32_t ptr, int32_t len) {
  if (e < 0 || (uint32_t)e >= OT_EXPORT_COUNT) {
    ot_guest_fail("no such export");
    return ot_failed(OT_GUEST_FAILED, "");
  }
  ot_calls_running++;
  int64_t r = ot_exports[e].call((uint32_t)fn, (const uint8_t *)(size_t)ptr, (uint32_t)len);
  ot_calls_running--;
  ot_heap_reset_due = true;
  return r;
}
"#;

pub fn emit(s: &Schema, stem: &str) -> Result<String, Diagnostic> {
    let guard = crate::emit::c::guard("OFFTHREAD_GUEST", stem);
    let mut out = format!(
        "{}\n/* C guest glue (docs/guest-abi.md; docs/guests.md, \"C guests\"). Define\n * OT_EXPORT_<INTERFACE> for each interface this guest exports, then include once. */\n#ifndef {guard}\n#define {guard}\n\n#include \"{stem}.h\"\n",
        crate::emit::c::c_header()
    );
    out += GLUE;
    let mut entries = String::new();
    for i in &s.interfaces {
        let up = i.name.to_ascii_uppercase();
        let desc = descriptor(s, i);
        let escaped = desc.replace('\\', "\\\\").replace('"', "\\\"");
        out += &format!(
            "\n/* Interface `{}` ({}). */\n#define {up}_DESCRIPTOR \"{escaped}\"\n#ifdef OT_EXPORT_{up}\n",
            i.name,
            i.pattern.name()
        );
        let mut dispatch = format!(
            "static int64_t ot_call_{}(uint32_t fn, const uint8_t *ptr, uint32_t len) {{\n    ot_arena arena = ot_call_arena();\n    int e;\n    (void)ptr;\n    (void)len;\n    (void)e;\n    switch (fn) {{\n",
            i.name
        );
        for (k, f) in i.functions.iter().enumerate() {
            let (input, result) = message(i, f)?;
            let fname = format!("{}_{}", i.name, f.name);
            let mut params = Vec::new();
            if let Some(id) = input {
                params.push(format!("const {} *input", ident(&s.structs[id].name)));
            }
            if let Some(id) = result {
                params.push(format!("{} *result", ident(&s.structs[id].name)));
            }
            params.push("ot_arena *arena".into());
            out += &format!(
                "/* Implemented by the guest: `{}.{}`. Returns 0, or ot_guest_fail(\"why\"). */\nint {fname}({});\n",
                i.name,
                f.name,
                params.join(", ")
            );
            dispatch += &format!("    case {k}: {{\n");
            let mut args = Vec::new();
            if let Some(id) = input {
                let t = ident(&s.structs[id].name);
                dispatch += &format!(
                    "        {t} input = {{0}};\n        e = {t}_decode(ptr, len, &arena, &input);\n        if (e) return ot_failed(e, \"{} input\");\n",
                    f.name
                );
                args.push("&input".to_string());
            }
            if let Some(id) = result {
                let t = ident(&s.structs[id].name);
                dispatch += &format!("        {t} result = {{0}};\n");
                args.push("&result".to_string());
            }
            args.push("&arena".into());
            dispatch += &format!(
                "        e = {fname}({});\n        if (e) return ot_failed(e, \"{}\");\n",
                args.join(", "),
                f.name
            );
            match result {
                Some(id) => {
                    let t = ident(&s.structs[id].name);
                    let pages = f
                        .results
                        .first()
                        .and_then(|p| p.memory)
                        .map_or(256, |m| i.memories[m].pages);
                    dispatch += &format!(
                        "        ot_builder b;\n        e = ot_result_builder({pages}, &b);\n        if (!e) e = {t}_encode(&result, &b);\n        if (e) return ot_failed(e, \"{} result\");\n        return ot_pack((uint32_t)(size_t)b.buf, b.len);\n    }}\n",
                        f.name
                    );
                }
                None => dispatch += "        return 0;\n    }\n",
            }
        }
        dispatch += "    default:\n        ot_guest_fail(\"no such function\");\n        return ot_failed(OT_GUEST_FAILED, \"\");\n    }\n}\n";
        out += &dispatch;
        out += &format!(
            "#define OT_EXPORT_ENTRY_{up} {{{up}_DESCRIPTOR, sizeof {up}_DESCRIPTOR - 1, ot_call_{}}},\n#else\n#define OT_EXPORT_ENTRY_{up}\n#endif\n",
            i.name
        );
        entries += &format!("OT_EXPORT_ENTRY_{up} ");
    }
    out += &format!("\n#define OT_EXPORT_ENTRIES {entries}\n");
    out += EXPORTS;
    out += &format!("\n#endif /* {guard} */\n");
    Ok(out)
}
