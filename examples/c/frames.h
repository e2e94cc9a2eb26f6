/* Small helpers shared by the C examples: a growable byte buffer that splits a TCP stream
 * into Kafka frames (4-byte big-endian length + body), and a wall clock in milliseconds. */
#ifndef KSASL_EXAMPLE_FRAMES_H
#define KSASL_EXAMPLE_FRAMES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    uint8_t *data;
    size_t len, cap;
} buf_t;

static inline void buf_push(buf_t *b, const uint8_t *p, size_t n) {
    if (n == 0) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n) cap *= 2;
        uint8_t *d = realloc(b->data, cap);
        if (!d) abort();
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static inline void buf_consume(buf_t *b, size_t n) {
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

static inline void buf_free(buf_t *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* If a whole frame is buffered, points *body at it and returns its length + 4 (the bytes to
 * consume after use); returns 0 when more bytes are needed and -1 for a bad length. */
static inline long frame_next(const buf_t *b, const uint8_t **body, size_t *body_len, size_t max) {
    if (b->len < 4) return 0;
    int32_t n = (int32_t)(((uint32_t)b->data[0] << 24) | ((uint32_t)b->data[1] << 16) | ((uint32_t)b->data[2] << 8) | b->data[3]);
    if (n < 0 || (size_t)n > max) return -1;
    if (b->len < 4 + (size_t)n) return 0;
    *body = b->data + 4;
    *body_len = (size_t)n;
    return 4 + (long)n;
}

static inline int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int16_t be16(const uint8_t *p) { return (int16_t)(((uint16_t)p[0] << 8) | p[1]); }
static inline int32_t be32(const uint8_t *p) {
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}
static inline void put32(uint8_t *p, int32_t v) {
    p[0] = (uint8_t)((uint32_t)v >> 24); p[1] = (uint8_t)((uint32_t)v >> 16);
    p[2] = (uint8_t)((uint32_t)v >> 8); p[3] = (uint8_t)v;
}

#endif
