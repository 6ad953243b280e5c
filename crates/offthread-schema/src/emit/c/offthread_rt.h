/* The C runtime of offthread-schema's generated C (docs/guests.md, "C guests"):
 * bounds-checked views over a message, the owned decode's arena and budget, and the
 * append-only builder. It mirrors crates/offthread-schema-rt check for check, so a
 * message reads (or fails with the same R code family) as it does in Rust. Freestanding
 * C11: no libc, no malloc; every read is checked against the buffer, so a hostile message
 * is an error return, never an out-of-bounds read or a trap. */
#ifndef OFFTHREAD_RT_H
#define OFFTHREAD_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Error codes: n is Rn (R0001 = 1 … R0011 = 11), 1000 + n is Wn, OT_ENOMEM an arena
 * that could not grow. 0 is success. */
enum {
  OT_OK = 0,
  OT_R_OUT_OF_BOUNDS = 1,
  OT_R_BAD_STRUCT_HEADER = 2,
  OT_R_MISALIGNED = 3,
  OT_R_COUNT_EXCEEDS_CAPACITY = 4,
  OT_R_TOO_MANY_COLUMNS = 5,
  OT_R_DEPTH_LIMIT = 6,
  OT_R_BAD_ELEMENT_SIZE = 7,
  OT_R_INVALID_STRING = 8,
  OT_R_COUNT_TOO_LARGE = 9,
  OT_R_TRAVERSAL_LIMIT = 10,
  OT_R_BAD_OFFSETS = 11,
  OT_W_TOO_LARGE = 1001,
  OT_W_BUFFER_TOO_SMALL = 1002,
  OT_ENOMEM = 2000,
};

/* Generated functions a program may not call (no -Wunused-function for them). */
#define OT_FN static __attribute__((unused))

#define OT_MAX_DEPTH 64u
#define OT_MAX_SOA_COLUMNS 256u
#define OT_TRY(x)                                                                        \
  do {                                                                                   \
    int ot_e_ = (x);                                                                     \
    if (ot_e_) return ot_e_;                                                             \
  } while (0)

/* "R0001" … for an error code (static text). */
static inline const char *ot_error_code(int e) {
  static const char *const r[] = {"OK", "R0001", "R0002", "R0003", "R0004", "R0005",
                                  "R0006", "R0007", "R0008", "R0009", "R0010", "R0011"};
  if (e >= 0 && e <= 11) return r[e];
  if (e == OT_W_TOO_LARGE) return "W0001";
  if (e == OT_W_BUFFER_TOO_SMALL) return "W0002";
  return "out of memory";
}

/* ---- owned values ---- */

/* UTF-8 text (a `#string`, also UTF-16 ones, converted): not NUL-terminated. */
typedef struct {
  const char *ptr;
  uint32_t len;
} ot_str;

#define OT_SLICE(T)                                                                      \
  struct {                                                                               \
    T *items;                                                                            \
    uint32_t len;                                                                        \
  }

/* ---- arena: where the owned decode puts what it copies ---- */

typedef struct ot_arena {
  uint8_t *base;
  size_t cap;
  size_t used;
  /* Called for more room: returns the new capacity (>= need) or 0. May be NULL. */
  size_t (*grow)(struct ot_arena *a, size_t need);
} ot_arena;

static inline void *ot_alloc(ot_arena *a, size_t size, size_t align) {
  size_t at = (a->used + align - 1) & ~(align - 1);
  if (at + size < at) return NULL;
  if (at + size > a->cap) {
    if (!a->grow || a->grow(a, at + size) < at + size) return NULL;
  }
  a->used = at + size;
  uint8_t *p = a->base + at;
  for (size_t i = 0; i < size; i++) p[i] = 0;
  return p;
}

/* `count` items of `size` bytes: NULL past what size_t holds (wasm32: 4 GiB), never a
 * product that wraps around to a small block. */
static inline void *ot_alloc_array(ot_arena *a, uint64_t count, size_t size, size_t align) {
  uint64_t bytes = count * (uint64_t)size;
  if (size != 0 && bytes / size != count) return NULL;
  if (bytes > (size_t)-1) return NULL;
  return ot_alloc(a, (size_t)bytes, align);
}

/* ---- reading ---- */

typedef struct {
  ot_arena *arena;
  uint64_t left; /* the traversal budget: 8 × buffer bytes + 1024 items */
} ot_ctx;

static inline int ot_spend(ot_ctx *c, uint64_t n) {
  if (n > c->left) return OT_R_TRAVERSAL_LIMIT;
  c->left -= n;
  return OT_OK;
}

/* A struct's bytes: fields at `start + off` while `off + size <= used`, zero beyond. */
typedef struct {
  const uint8_t *buf;
  uint32_t len;
  uint32_t start;
  uint32_t used;
  uint32_t depth;
} ot_view;

static inline uint64_t ot_le(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static inline uint64_t ot_rd(const ot_view *v, uint32_t off, unsigned n) {
  if ((uint64_t)off + n <= v->used) return ot_le(v->buf + v->start + off, n);
  return 0;
}
static inline uint32_t ot_rd_u32(const ot_view *v, uint32_t off) { return (uint32_t)ot_rd(v, off, 4); }
static inline float ot_f32_bits(uint32_t b) {
  union { uint32_t u; float f; } x = {b};
  return x.f;
}
static inline double ot_f64_bits(uint64_t b) {
  union { uint64_t u; double f; } x = {b};
  return x.f;
}

/* `len` bytes at `off` lie in the buffer (64-bit sums: no wrap-around). */
static inline int ot_range(uint32_t buf_len, uint64_t off, uint64_t len) {
  return off + len <= buf_len ? OT_OK : OT_R_OUT_OF_BOUNDS;
}

static inline int ot_aligned(uint64_t off, uint32_t align) {
  return off % align == 0 ? OT_OK : OT_R_MISALIGNED;
}

static inline uint64_t ot_align64(uint64_t x) { return (x + 63) & ~(uint64_t)63; }

static inline int ot_child_depth(const ot_view *v, uint32_t *depth) {
  if (v->depth >= OT_MAX_DEPTH) return OT_R_DEPTH_LIMIT;
  *depth = v->depth + 1;
  return OT_OK;
}

static inline int ot_dynamic_at(const uint8_t *buf, uint32_t len, uint64_t at, uint32_t depth,
                                ot_view *out) {
  OT_TRY(ot_aligned(at, 8));
  OT_TRY(ot_range(len, at, 4));
  uint32_t header = (uint32_t)ot_le(buf + at, 4);
  uint64_t size = (uint64_t)(header & 0x1fffffffu) * 8;
  uint32_t wasted = header >> 29;
  if (size < 8 || size - wasted < 4) return OT_R_BAD_STRUCT_HEADER;
  OT_TRY(ot_range(len, at, size));
  out->buf = buf;
  out->len = len;
  out->start = (uint32_t)at;
  out->used = (uint32_t)(size - wasted);
  out->depth = depth;
  return OT_OK;
}

static inline int ot_root_dynamic(const uint8_t *buf, uint32_t len, ot_view *out) {
  return ot_dynamic_at(buf, len, 0, 0, out);
}

static inline int ot_root_inline(const uint8_t *buf, uint32_t len, uint32_t size, ot_view *out) {
  OT_TRY(ot_range(len, 0, size));
  *out = (ot_view){buf, len, 0, size, 0};
  return OT_OK;
}

/* An inline struct at `off`: what of it lies within the parent's `used`. */
static inline ot_view ot_inline(const ot_view *v, uint32_t off, uint32_t size) {
  ot_view r = *v;
  uint32_t used = v->used > off ? v->used - off : 0;
  if (used > size) used = size;
  r.used = used;
  r.start = used == 0 ? v->start : v->start + off;
  return r;
}

/* The dynamic struct at absolute `ptr` (0: absent, *has = false). */
static inline int ot_deref_dynamic(const ot_view *v, uint32_t ptr, ot_view *out, bool *has) {
  *has = false;
  if (ptr == 0) return OT_OK;
  uint32_t depth;
  OT_TRY(ot_child_depth(v, &depth));
  OT_TRY(ot_dynamic_at(v->buf, v->len, ptr, depth, out));
  *has = true;
  return OT_OK;
}

static inline int ot_deref_inline(const ot_view *v, uint32_t ptr, uint32_t size, ot_view *out,
                                  bool *has) {
  *has = false;
  if (ptr == 0) return OT_OK;
  uint32_t depth;
  OT_TRY(ot_child_depth(v, &depth));
  OT_TRY(ot_aligned(ptr, 8));
  OT_TRY(ot_range(v->len, ptr, size));
  *out = (ot_view){v->buf, v->len, ptr, size, depth};
  *has = true;
  return OT_OK;
}

typedef struct {
  uint32_t count, a, b;
} ot_array_header;

static inline int ot_array_header_at(const uint8_t *buf, uint32_t len, uint64_t at,
                                     ot_array_header *h) {
  OT_TRY(ot_aligned(at, 64));
  OT_TRY(ot_range(len, at, 16));
  uint32_t count = (uint32_t)ot_le(buf + at, 4), capacity = (uint32_t)ot_le(buf + at + 4, 4);
  if (count > capacity) return OT_R_COUNT_EXCEEDS_CAPACITY;
  if (count > len) return OT_R_COUNT_TOO_LARGE; /* every item takes >= 1 byte */
  h->count = count;
  h->a = (uint32_t)ot_le(buf + at + 8, 4);
  h->b = (uint32_t)ot_le(buf + at + 12, 4);
  return OT_OK;
}

/* `count` little-endian values of `size` bytes (or `zero`: absent, reads as zeros). */
typedef struct {
  const uint8_t *p;
  uint32_t count;
  uint8_t size;
  bool zero;
} ot_column;

static inline uint64_t ot_col_get(const ot_column *c, uint64_t i) {
  if (c->zero || i >= c->count) return 0;
  return ot_le(c->p + i * c->size, c->size);
}

/* A scalar slice field (also strings): `size` bytes per item. */
static inline int ot_scalars(const ot_view *v, uint32_t off, uint8_t size, ot_column *out) {
  uint32_t ptr = ot_rd_u32(v, off), depth;
  *out = (ot_column){NULL, 0, size, true};
  if (ptr == 0) return OT_OK;
  OT_TRY(ot_child_depth(v, &depth));
  ot_array_header h;
  OT_TRY(ot_array_header_at(v->buf, v->len, ptr, &h));
  if (h.b != size) return OT_R_BAD_ELEMENT_SIZE;
  OT_TRY(ot_aligned(h.a, 64));
  OT_TRY(ot_range(v->len, h.a, (uint64_t)h.count * size));
  *out = (ot_column){v->buf + h.a, h.count, size, false};
  return OT_OK;
}

/* Whether `p[0..n]` is UTF-8 as Rust's `str::from_utf8` takes it. */
static inline bool ot_utf8_valid(const uint8_t *p, uint64_t n) {
  uint64_t i = 0;
  while (i < n) {
    uint8_t c = p[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    unsigned k;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0) k = 1, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) k = 2, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) k = 3, cp = c & 0x07, min = 0x10000;
    else return false;
    if (i + k >= n) return false; /* truncated */
    for (unsigned j = 1; j <= k; j++) {
      if ((p[i + j] & 0xc0) != 0x80) return false;
      cp = cp << 6 | (p[i + j] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += k + 1;
  }
  return true;
}

/* Whether `count` UTF-16 units of `c` from `first` pair every surrogate. */
static inline bool ot_utf16_valid(const ot_column *c, uint64_t first, uint64_t count) {
  for (uint64_t i = 0; i < count; i++) {
    uint32_t u = (uint32_t)ot_col_get(c, first + i);
    if (u >= 0xdc00 && u <= 0xdfff) return false;
    if (u >= 0xd800 && u <= 0xdbff) {
      if (i + 1 >= count) return false;
      uint32_t l = (uint32_t)ot_col_get(c, first + i + 1);
      if (l < 0xdc00 || l > 0xdfff) return false;
      i++;
    }
  }
  return true;
}

/* Valid UTF-16 units `first..first+count` of `c` as UTF-8 in the arena. */
static inline int ot_utf16_to_str(ot_arena *a, const ot_column *c, uint64_t first, uint64_t count,
                                  ot_str *out) {
  *out = (ot_str){"", 0};
  if (count == 0) return OT_OK;
  uint8_t *d = (uint8_t *)ot_alloc_array(a, count, 3, 1); /* 3 bytes per unit at most */
  if (!d) return OT_ENOMEM;
  uint32_t n = 0;
  for (uint64_t i = 0; i < count; i++) {
    uint32_t u = (uint32_t)ot_col_get(c, first + i);
    if (u >= 0xd800 && u <= 0xdbff && i + 1 < count) {
      uint32_t l = (uint32_t)ot_col_get(c, first + i + 1);
      u = 0x10000 + ((u - 0xd800) << 10) + (l - 0xdc00);
      i++;
    } else if (u >= 0xd800 && u <= 0xdfff) {
      u = 0xfffd;
    }
    if (u < 0x80) d[n++] = (uint8_t)u;
    else if (u < 0x800) d[n++] = (uint8_t)(0xc0 | u >> 6), d[n++] = (uint8_t)(0x80 | (u & 0x3f));
    else if (u < 0x10000)
      d[n++] = (uint8_t)(0xe0 | u >> 12), d[n++] = (uint8_t)(0x80 | (u >> 6 & 0x3f)),
      d[n++] = (uint8_t)(0x80 | (u & 0x3f));
    else
      d[n++] = (uint8_t)(0xf0 | u >> 18), d[n++] = (uint8_t)(0x80 | (u >> 12 & 0x3f)),
      d[n++] = (uint8_t)(0x80 | (u >> 6 & 0x3f)), d[n++] = (uint8_t)(0x80 | (u & 0x3f));
  }
  *out = (ot_str){(const char *)d, n};
  return OT_OK;
}

/* A UTF-8 string field: points into the message. */
static inline int ot_utf8(const ot_view *v, uint32_t off, ot_str *out) {
  ot_column c;
  OT_TRY(ot_scalars(v, off, 1, &c));
  *out = (ot_str){"", 0};
  if (c.zero) return OT_OK;
  if (!ot_utf8_valid(c.p, c.count)) return OT_R_INVALID_STRING;
  *out = (ot_str){(const char *)c.p, c.count};
  return OT_OK;
}

/* A UTF-16 string field, converted to UTF-8 in the arena. */
static inline int ot_utf16(const ot_view *v, uint32_t off, ot_arena *a, ot_str *out) {
  ot_column c;
  OT_TRY(ot_scalars(v, off, 2, &c));
  if (!ot_utf16_valid(&c, 0, c.count)) return OT_R_INVALID_STRING;
  return ot_utf16_to_str(a, &c, 0, c.count, out);
}

/* An AoS array: item i is a view of `stride` bytes at data + i × stride. */
typedef struct {
  const uint8_t *buf;
  uint32_t len, data, count, stride, depth;
} ot_aos;

static inline ot_view ot_aos_get(const ot_aos *a, uint32_t i) {
  return (ot_view){a->buf, a->len, a->data + i * a->stride, a->stride, a->depth};
}

static inline int ot_aos_at(const ot_view *v, uint32_t ptr, uint32_t item_size, bool evolving,
                            ot_aos *out) {
  uint32_t depth;
  OT_TRY(ot_child_depth(v, &depth));
  *out = (ot_aos){v->buf, v->len, 0, 0, item_size, depth};
  if (ptr == 0) return OT_OK;
  ot_array_header h;
  OT_TRY(ot_array_header_at(v->buf, v->len, ptr, &h));
  bool ok = evolving ? (h.b >= 8 && h.b % 8 == 0) : h.b == item_size;
  if (!ok) return OT_R_BAD_ELEMENT_SIZE;
  OT_TRY(ot_aligned(h.a, 64));
  OT_TRY(ot_range(v->len, h.a, (uint64_t)h.count * h.b));
  out->data = h.a;
  out->count = h.count;
  out->stride = h.b;
  return OT_OK;
}

static inline int ot_aos_field(const ot_view *v, uint32_t off, uint32_t item_size, bool evolving,
                               ot_aos *out) {
  return ot_aos_at(v, ot_rd_u32(v, off), item_size, evolving, out);
}

/* A SoA array: `count` items, columns found by path hash in its lookup table. */
typedef struct {
  const uint8_t *buf;
  uint32_t len, count, columns;
  const uint8_t *hashes, *blocks;
} ot_soa;

static inline int ot_table_header(const ot_view *v, uint32_t ptr, ot_array_header *h) {
  uint32_t depth;
  OT_TRY(ot_child_depth(v, &depth));
  OT_TRY(ot_array_header_at(v->buf, v->len, ptr, h));
  if (h->a > OT_MAX_SOA_COLUMNS) return OT_R_TOO_MANY_COLUMNS;
  return OT_OK;
}

static inline int ot_soa_at(const ot_view *v, uint32_t ptr, ot_soa *out) {
  *out = (ot_soa){v->buf, v->len, 0, 0, NULL, NULL};
  if (ptr == 0) return OT_OK;
  ot_array_header h;
  OT_TRY(ot_table_header(v, ptr, &h));
  uint64_t columns = h.a, table = h.b;
  OT_TRY(ot_aligned(table, 64));
  OT_TRY(ot_range(v->len, table, columns * 4));
  uint64_t blocks = table + ot_align64(columns * 4);
  OT_TRY(ot_range(v->len, blocks, columns * 4));
  /* A count no column holds is forged (every column has >= 1 byte per item). */
  if (h.count > 0 && columns == 0) return OT_R_COUNT_TOO_LARGE;
  for (uint64_t k = 0; k < columns; k++) {
    uint64_t start = ot_le(v->buf + blocks + k * 4, 4) * 64;
    OT_TRY(ot_range(v->len, start, h.count));
  }
  out->count = h.count;
  out->columns = (uint32_t)columns;
  out->hashes = v->buf + table;
  out->blocks = v->buf + blocks;
  return OT_OK;
}

static inline int ot_soa_field(const ot_view *v, uint32_t off, ot_soa *out) {
  return ot_soa_at(v, ot_rd_u32(v, off), out);
}

/* Where column `hash` starts; *found = false when the table has no such column. */
static inline bool ot_soa_find(const ot_soa *s, uint32_t hash, uint64_t *start) {
  for (uint32_t k = 0; k < s->columns; k++) {
    if ((uint32_t)ot_le(s->hashes + k * 4, 4) == hash) {
      *start = ot_le(s->blocks + k * 4, 4) * 64;
      return true;
    }
  }
  return false;
}

/* A fixed column: count × per_item values of `size` bytes (absent: zeros). */
static inline int ot_soa_column(const ot_soa *s, uint32_t hash, uint32_t per_item, uint8_t size,
                                ot_column *out) {
  uint64_t n = (uint64_t)s->count * per_item, start;
  *out = (ot_column){NULL, (uint32_t)n, size, true};
  if (!ot_soa_find(s, hash, &start)) return OT_OK;
  OT_TRY(ot_range(s->len, start, n * size));
  *out = (ot_column){s->buf + start, (uint32_t)n, size, false};
  return OT_OK;
}

/* A variable-length column: count + 1 offsets (in elements), then the values area. */
typedef struct {
  ot_column offsets, values;
  uint32_t count;
} ot_var_column;

static inline int ot_soa_var(const ot_soa *s, uint32_t hash, uint8_t size, ot_var_column *out) {
  uint64_t n = (uint64_t)s->count + 1, start;
  out->count = s->count;
  out->offsets = (ot_column){NULL, (uint32_t)n, 4, true};
  out->values = (ot_column){NULL, 0, size, true};
  if (!ot_soa_find(s, hash, &start)) return OT_OK;
  OT_TRY(ot_range(s->len, start, n * 4));
  uint32_t prev = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint32_t o = (uint32_t)ot_le(s->buf + start + i * 4, 4);
    if ((i == 0 && o != 0) || o < prev) return OT_R_BAD_OFFSETS;
    prev = o;
  }
  uint64_t values_at = ot_align64(start + n * 4);
  OT_TRY(ot_range(s->len, values_at, (uint64_t)prev * size));
  out->offsets = (ot_column){s->buf + start, (uint32_t)n, 4, false};
  out->values = (ot_column){s->buf + values_at, prev, size, false};
  return OT_OK;
}

/* Item i of a validated variable-length column: elements [*first, *first + *n). */
static inline void ot_var_item(const ot_var_column *c, uint32_t i, uint64_t *first, uint64_t *n) {
  uint64_t a = ot_col_get(&c->offsets, i), b = ot_col_get(&c->offsets, (uint64_t)i + 1);
  *first = a;
  *n = c->values.zero || b < a ? 0 : b - a;
}

static inline int ot_soa_utf8(const ot_soa *s, uint32_t hash, ot_var_column *out) {
  OT_TRY(ot_soa_var(s, hash, 1, out));
  for (uint32_t i = 0; i < out->count; i++) {
    uint64_t first, n;
    ot_var_item(out, i, &first, &n);
    if (n && !ot_utf8_valid(out->values.p + first, n)) return OT_R_INVALID_STRING;
  }
  return OT_OK;
}

static inline int ot_soa_utf16(const ot_soa *s, uint32_t hash, ot_var_column *out) {
  OT_TRY(ot_soa_var(s, hash, 2, out));
  for (uint32_t i = 0; i < out->count; i++) {
    uint64_t first, n;
    ot_var_item(out, i, &first, &n);
    if (!ot_utf16_valid(&out->values, first, n)) return OT_R_INVALID_STRING;
  }
  return OT_OK;
}

/* A union slice's `#soa` columns: tags and offsets (absent: none). */
static inline int ot_union_soa(const ot_view *v, uint32_t off, uint8_t tag_size, ot_column *tags,
                               ot_column *ptrs, uint32_t *count) {
  uint32_t ptr = ot_rd_u32(v, off), depth;
  *tags = (ot_column){NULL, 0, tag_size, true};
  *ptrs = (ot_column){NULL, 0, 4, true};
  *count = 0;
  if (ptr == 0) return OT_OK;
  OT_TRY(ot_child_depth(v, &depth));
  ot_array_header h;
  OT_TRY(ot_array_header_at(v->buf, v->len, ptr, &h));
  OT_TRY(ot_aligned(h.a, 64));
  OT_TRY(ot_aligned(h.b, 64));
  OT_TRY(ot_range(v->len, h.a, (uint64_t)h.count * tag_size));
  OT_TRY(ot_range(v->len, h.b, (uint64_t)h.count * 4));
  *tags = (ot_column){v->buf + h.a, h.count, tag_size, false};
  *ptrs = (ot_column){v->buf + h.b, h.count, 4, false};
  *count = h.count;
  return OT_OK;
}

/* A `#bovoa` / `#bovos` variant table: (tag, array offset) entries. */
typedef struct {
  const uint8_t *entries;
  uint32_t n;
} ot_variant_table;

static inline int ot_variant_table_field(const ot_view *v, uint32_t off, ot_variant_table *out) {
  uint32_t ptr = ot_rd_u32(v, off);
  *out = (ot_variant_table){NULL, 0};
  if (ptr == 0) return OT_OK;
  ot_array_header h;
  OT_TRY(ot_table_header(v, ptr, &h));
  OT_TRY(ot_aligned(h.b, 64));
  OT_TRY(ot_range(v->len, h.b, (uint64_t)h.a * 8));
  *out = (ot_variant_table){v->buf + h.b, h.a};
  return OT_OK;
}

/* The array of variant `tag` (0: none). */
static inline uint32_t ot_variant_array(const ot_variant_table *t, uint32_t tag) {
  for (uint32_t k = 0; k < t->n; k++)
    if ((uint32_t)ot_le(t->entries + k * 8, 4) == tag) return (uint32_t)ot_le(t->entries + k * 8 + 4, 4);
  return 0;
}

/* ---- writing: the canonical encoding (docs/schema-format.md §2.10) ---- */

typedef struct {
  uint8_t *buf;
  uint32_t cap;
  uint32_t len;
} ot_builder;

static inline int ot_b_alloc(ot_builder *b, uint64_t size, uint32_t align, uint32_t *at) {
  uint64_t a = ((uint64_t)b->len + align - 1) / align * align, end = a + size;
  if (end > 0xffffffffu) return OT_W_TOO_LARGE;
  if (end > b->cap) return OT_W_BUFFER_TOO_SMALL;
  for (uint64_t i = b->len; i < end; i++) b->buf[i] = 0;
  b->len = (uint32_t)end;
  *at = (uint32_t)a;
  return OT_OK;
}

static inline void ot_put(ot_builder *b, uint32_t at, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++) b->buf[at + i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t ot_bits_f32(float f) {
  union { float f; uint32_t u; } x = {f};
  return x.u;
}
static inline uint64_t ot_bits_f64(double f) {
  union { double f; uint64_t u; } x = {f};
  return x.u;
}

static inline int ot_b_dynamic(ot_builder *b, uint32_t used, uint32_t *at) {
  uint32_t size = (used + 7) & ~7u;
  OT_TRY(ot_b_alloc(b, size, 8, at));
  ot_put(b, *at, (size / 8) | ((uint32_t)(size - used) << 29), 4);
  return OT_OK;
}

static inline int ot_b_array_header(ot_builder *b, uint32_t count, uint32_t a, uint32_t bw,
                                    uint32_t *at) {
  OT_TRY(ot_b_alloc(b, 16, 64, at));
  ot_put(b, *at, count, 4);
  ot_put(b, *at + 4, count, 4);
  ot_put(b, *at + 8, a, 4);
  ot_put(b, *at + 12, bw, 4);
  return OT_OK;
}

/* A scalar slice's header and data (`items` little-endian-native values of `size` bytes,
 * or bools as bytes); *header = 0 when empty. */
static inline int ot_b_scalars(ot_builder *b, const void *items, uint32_t count, uint8_t size,
                               uint32_t *header) {
  *header = 0;
  if (count == 0) return OT_OK;
  uint32_t data;
  OT_TRY(ot_b_array_header(b, count, 0, size, header));
  OT_TRY(ot_b_alloc(b, ot_align64((uint64_t)count * size), 64, &data));
  ot_put(b, *header + 8, data, 4);
  const uint8_t *src = (const uint8_t *)items;
  for (uint64_t i = 0; i < (uint64_t)count * size; i++) b->buf[data + i] = src[i]; /* wasm32 is little-endian */
  return OT_OK;
}

/* An AoS header and its zeroed data; *header = *data = 0 when empty. */
static inline int ot_b_aos(ot_builder *b, uint32_t count, uint32_t stride, uint32_t *header,
                           uint32_t *data) {
  *header = *data = 0;
  if (count == 0) return OT_OK;
  OT_TRY(ot_b_array_header(b, count, 0, stride, header));
  OT_TRY(ot_b_alloc(b, ot_align64((uint64_t)count * stride), 64, data));
  ot_put(b, *header + 8, *data, 4);
  return OT_OK;
}

#endif
