/*
 * meter: loudness of a WAV file with libebur128, the reference the Go meter
 * is compared with (see ../loudness_bench_test.go).
 *
 *   cc -O2 -o meter meter.c $(pkg-config --cflags --libs libebur128) -lm
 *   ./meter [-st10] FILE.wav
 *
 * Prints "key value" lines: I (LUFS), LRA (LU, libebur128's own, which
 * samples short-term loudness at 1 Hz), TP (dBTP), SP (dBFS); with -st10
 * also LRA10, the Tech 3342 LRA from short-term loudness polled every
 * 100 ms (the >= 10 Hz the standard asks for since 2016).
 * Reads PCM 16/24/32-bit integer and 32-bit float WAV, plain or extensible.
 */
#include <ebur128.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t le32(const unsigned char *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t le16(const unsigned char *p) { return p[0] | p[1] << 8; }

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* lra10 applies the Tech 3342 MATLAB reference to the short-term values. */
static double lra10(double *st, size_t n) {
	size_t m = 0, k = 0;
	double e = 0;
	for (size_t i = 0; i < n; i++)
		if (st[i] >= -70) { st[m++] = st[i]; e += pow(10, st[i] / 10); }
	if (m == 0) return 0;
	double gate = 10 * log10(e / m) - 20;
	for (size_t i = 0; i < m; i++)
		if (st[i] >= gate) st[k++] = st[i];
	qsort(st, k, sizeof *st, cmp);
	return st[(size_t)round((k - 1) * 0.95)] - st[(size_t)round((k - 1) * 0.10)];
}

int main(int argc, char **argv) {
	int st10 = argc == 3 && strcmp(argv[1], "-st10") == 0;
	if (argc != 2 + st10) { fprintf(stderr, "usage: meter [-st10] FILE.wav\n"); return 2; }
	FILE *f = fopen(argv[1 + st10], "rb");
	if (!f) { perror(argv[1 + st10]); return 1; }
	unsigned char h[12], ch[8];
	if (fread(h, 1, 12, f) != 12 || memcmp(h, "RIFF", 4) || memcmp(h + 8, "WAVE", 4)) { fprintf(stderr, "not a WAV file\n"); return 1; }
	unsigned fmt = 0, channels = 0, rate = 0, bits = 0;
	for (;;) {
		if (fread(ch, 1, 8, f) != 8) { fprintf(stderr, "no data chunk\n"); return 1; }
		uint32_t size = le32(ch + 4);
		if (!memcmp(ch, "fmt ", 4)) {
			unsigned char b[40] = {0};
			if (size < 16 || fread(b, 1, size < 40 ? size : 40, f) < 16) { fprintf(stderr, "bad fmt chunk\n"); return 1; }
			if (size > 40) fseek(f, size - 40, SEEK_CUR);
			fmt = le16(b); channels = le16(b + 2); rate = le32(b + 4); bits = le16(b + 14);
			if (fmt == 0xFFFE && size >= 40) fmt = le16(b + 24);
			if (size & 1) fseek(f, 1, SEEK_CUR);
		} else if (!memcmp(ch, "data", 4)) {
			break;
		} else {
			fseek(f, size + (size & 1), SEEK_CUR);
		}
	}
	if (!channels || !rate || !((fmt == 1 && (bits == 16 || bits == 24 || bits == 32)) || (fmt == 3 && bits == 32))) {
		fprintf(stderr, "unsupported WAV format %u, %u bits\n", fmt, bits);
		return 1;
	}
	int mode = EBUR128_MODE_I | EBUR128_MODE_LRA | EBUR128_MODE_TRUE_PEAK | EBUR128_MODE_SAMPLE_PEAK;
	ebur128_state *st = ebur128_init(channels, rate, mode);
	if (!st) { fprintf(stderr, "ebur128_init failed\n"); return 1; }
	size_t frames = (rate + 5) / 10; /* 100 ms, libebur128's own step */
	size_t bps = bits / 8, fb = bps * channels;
	unsigned char *raw = malloc(frames * fb);
	int32_t *i32 = malloc(frames * channels * sizeof *i32);
	size_t nst = 0, cap = 1024, elapsed = 0;
	double *stv = malloc(cap * sizeof *stv);
	size_t n;
	while ((n = fread(raw, fb, frames, f)) > 0) {
		if (fmt == 3) {
			ebur128_add_frames_float(st, (const float *)raw, n);
		} else if (bits == 16) {
			ebur128_add_frames_short(st, (const short *)raw, n);
		} else if (bits == 32) {
			ebur128_add_frames_int(st, (const int *)raw, n);
		} else {
			for (size_t i = 0; i < n * channels; i++)
				i32[i] = (int32_t)((uint32_t)raw[3 * i] << 8 | (uint32_t)raw[3 * i + 1] << 16 | (uint32_t)raw[3 * i + 2] << 24);
			ebur128_add_frames_int(st, i32, n);
		}
		elapsed += n;
		if (st10 && n == frames && elapsed >= 30 * frames) {
			double v;
			if (ebur128_loudness_shortterm(st, &v) == EBUR128_SUCCESS) {
				if (nst == cap) stv = realloc(stv, (cap *= 2) * sizeof *stv);
				stv[nst++] = v;
			}
		}
	}
	double I, L, tp = 0, sp = 0, v;
	ebur128_loudness_global(st, &I);
	ebur128_loudness_range(st, &L);
	for (unsigned c = 0; c < channels; c++) {
		if (ebur128_true_peak(st, c, &v) == EBUR128_SUCCESS && v > tp) tp = v;
		if (ebur128_sample_peak(st, c, &v) == EBUR128_SUCCESS && v > sp) sp = v;
	}
	printf("I %.4f\nLRA %.4f\nTP %.4f\nSP %.4f\n", I, L, 20 * log10(tp), 20 * log10(sp));
	if (st10) printf("LRA10 %.4f\n", lra10(stv, nst));
	ebur128_destroy(&st);
	return 0;
}
