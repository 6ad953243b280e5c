/* What the C integrity guest's parts share (docs/guest-integrity.md): SHA-256, the
 * per-path digests fed with canonical tokens, and the batch's table of schemas. */
#ifndef INTEGRITY_SUPPORT_H
#define INTEGRITY_SUPPORT_H

#include "offthread_rt.h"

typedef struct {
  uint32_t h[8];
  uint8_t block[64];
  uint64_t total;
  uint32_t fill;
} ot_sha256;

void ot_sha256_init(ot_sha256 *s);
void ot_sha256_update(ot_sha256 *s, const void *data, size_t n);
void ot_sha256_final(ot_sha256 *s, uint8_t out[32]);

/* One SHA-256 per field path. */
typedef struct {
  ot_sha256 *paths;
  uint32_t count;
} ot_paths;

/* A token: `<byte length in decimal>:<bytes>`. */
void ot_p_token(ot_paths *p, uint32_t path, const void *bytes, size_t n);
void ot_p_u(ot_paths *p, uint32_t path, uint64_t x);
void ot_p_i(ot_paths *p, uint32_t path, int64_t x);
void ot_p_bool(ot_paths *p, uint32_t path, bool x);
void ot_p_f32(ot_paths *p, uint32_t path, float x);
void ot_p_f64(ot_paths *p, uint32_t path, double x);
void ot_p_text(ot_paths *p, uint32_t path, const char *s, uint32_t n);

typedef struct {
  const uint32_t *paths;
  int (*consume)(const uint8_t *buf, uint32_t len, ot_arena *arena, ot_paths *p);
} ot_schema_fns;

extern const ot_schema_fns ot_schemas[];
extern const uint32_t ot_schema_count;

#endif
