/* The C consumer of the integrity experiment (docs/guest-integrity.md): the `consumer`
 * export of guest/integrity.km over the batch's schemas, read with the generated C
 * readers and hashed with the canonical stringification, as guest/support.rs does in
 * Rust. The producer stays the Rust guest's. */
#define OT_EXPORT_CONSUMER
#include "integrity_guest.h"
#include "support.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, unsigned n) { return x >> n | x << (32 - n); }

static void compress(ot_sha256 *s, const uint8_t *b) {
  uint32_t w[64], a[8];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 | (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ w[i - 15] >> 3;
    uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ w[i - 2] >> 10;
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  for (int i = 0; i < 8; i++) a[i] = s->h[i];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = a[7] + (ror(a[4], 6) ^ ror(a[4], 11) ^ ror(a[4], 25)) + ((a[4] & a[5]) ^ (~a[4] & a[6])) + K[i] + w[i];
    uint32_t t2 = (ror(a[0], 2) ^ ror(a[0], 13) ^ ror(a[0], 22)) + ((a[0] & a[1]) ^ (a[0] & a[2]) ^ (a[1] & a[2]));
    for (int j = 7; j > 0; j--) a[j] = a[j - 1];
    a[4] += t1;
    a[0] = t1 + t2;
  }
  for (int i = 0; i < 8; i++) s->h[i] += a[i];
}

void ot_sha256_init(ot_sha256 *s) {
  static const uint32_t H[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  for (int i = 0; i < 8; i++) s->h[i] = H[i];
  s->total = 0;
  s->fill = 0;
}

void ot_sha256_update(ot_sha256 *s, const void *data, size_t n) {
  const uint8_t *p = (const uint8_t *)data;
  s->total += n;
  while (n > 0) {
    s->block[s->fill++] = *p++;
    n--;
    if (s->fill == 64) {
      compress(s, s->block);
      s->fill = 0;
    }
  }
}

void ot_sha256_final(ot_sha256 *s, uint8_t out[32]) {
  uint64_t bits = s->total * 8;
  uint8_t one = 0x80, zero = 0;
  ot_sha256_update(s, &one, 1);
  while (s->fill != 56) ot_sha256_update(s, &zero, 1);
  uint8_t len[8];
  for (int i = 0; i < 8; i++) len[i] = (uint8_t)(bits >> (56 - 8 * i));
  ot_sha256_update(s, len, 8);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

void ot_p_token(ot_paths *p, uint32_t path, const void *bytes, size_t n) {
  char digits[24];
  int k = 0;
  size_t m = n;
  do digits[k++] = (char)('0' + m % 10), m /= 10;
  while (m);
  ot_sha256 *h = &p->paths[path];
  while (k > 0) ot_sha256_update(h, &digits[--k], 1);
  ot_sha256_update(h, ":", 1);
  ot_sha256_update(h, bytes, n);
}

static size_t decimal(uint64_t x, bool negative, char *out) {
  char tmp[24];
  size_t k = 0, n = 0;
  do tmp[k++] = (char)('0' + x % 10), x /= 10;
  while (x);
  if (negative) out[n++] = '-';
  while (k > 0) out[n++] = tmp[--k];
  return n;
}

void ot_p_u(ot_paths *p, uint32_t path, uint64_t x) {
  char s[24];
  ot_p_token(p, path, s, decimal(x, false, s));
}

void ot_p_i(ot_paths *p, uint32_t path, int64_t x) {
  char s[24];
  uint64_t mag = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
  ot_p_token(p, path, s, decimal(mag, x < 0, s));
}

void ot_p_bool(ot_paths *p, uint32_t path, bool x) {
  if (x) ot_p_token(p, path, "true", 4);
  else ot_p_token(p, path, "false", 5);
}

static void hex(ot_paths *p, uint32_t path, uint64_t bits, int digits) {
  char s[16];
  for (int i = 0; i < digits; i++) s[i] = "0123456789abcdef"[bits >> (4 * (digits - 1 - i)) & 15];
  ot_p_token(p, path, s, (size_t)digits);
}

/* Any NaN as the quiet one: a JS number keeps no NaN payload. */
void ot_p_f32(ot_paths *p, uint32_t path, float x) { hex(p, path, x != x ? 0x7fc00000u : ot_bits_f32(x), 8); }
void ot_p_f64(ot_paths *p, uint32_t path, double x) {
  hex(p, path, x != x ? 0x7ff8000000000000ull : ot_bits_f64(x), 16);
}
void ot_p_text(ot_paths *p, uint32_t path, const char *s, uint32_t n) { ot_p_token(p, path, s, n); }

int consumer_consume(const consumer_input *input, consumer_output *result, ot_arena *arena) {
  if (input->schema >= ot_schema_count) return ot_guest_fail("no such schema in this batch");
  const ot_schema_fns *fns = &ot_schemas[input->schema];
  uint32_t n = input->messages.len, count = *fns->paths;
  verdict *verdicts = (verdict *)ot_alloc_array(arena, n, sizeof(verdict), _Alignof(verdict));
  if (!verdicts) return OT_ENOMEM;
  for (uint32_t m = 0; m < n; m++) {
    const message *msg = &input->messages.items[m];
    /* What one message takes is freed after it: its decode always, its path digests
       unless they are the output (`full`), as support.rs drops them. */
    size_t mark = arena->used;
    uint8_t *digests = (uint8_t *)ot_alloc_array(arena, count, 32, 1);
    if (!digests) return OT_ENOMEM;
    size_t decode_mark = arena->used;
    ot_paths p = {(ot_sha256 *)ot_alloc_array(arena, count, sizeof(ot_sha256), 8), count};
    if (!p.paths) return OT_ENOMEM;
    for (uint32_t i = 0; i < count; i++) ot_sha256_init(&p.paths[i]);
    int e = fns->consume(msg->bytes.items, msg->bytes.len, arena, &p);
    if (e == OT_ENOMEM) return e;
    verdict *v = &verdicts[m];
    v->code = (uint32_t)e;
    if (e == 0) {
      for (uint32_t i = 0; i < count; i++) ot_sha256_final(&p.paths[i], digests + 32 * i);
      ot_sha256 all;
      ot_sha256_init(&all);
      ot_sha256_update(&all, digests, (size_t)count * 32);
      ot_sha256_final(&all, v->digest);
      if (input->full) {
        v->paths.items = digests;
        v->paths.len = count * 32;
      }
    }
    arena->used = input->full ? decode_mark : mark;
  }
  result->verdicts.items = verdicts;
  result->verdicts.len = n;
  return 0;
}
