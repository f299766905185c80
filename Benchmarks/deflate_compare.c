/*
 * Compares deflate implementations on the exact bytes our PNG encoder hands to zlib.
 *
 * For each PNG given on the command line (written by `countersign render`), the IDAT chunks are
 * inflated back to the filtered scanlines libpng compressed (one filter byte + one palette index
 * per pixel and row). Those bytes are then compressed, REPS times each, by:
 *   - zlib with the settings of Sources/PNGShim (level 6, windowBits 15, memLevel 6, Z_RLE),
 *     a fresh deflateInit2 per image as libpng does;
 *   - libdeflate (Debian libdeflate-dev) levels 1 and 6, compressor allocated once;
 *   - ISA-L igzip (Debian libisal-dev) levels 0, 1 and 2, stateless, zlib framing.
 * Every output is inflated again with zlib and compared with the input. Printed: per image the
 * median time (ms) and size (bytes), then the sums over all images.
 *
 *   cc -O2 -o deflate_compare Benchmarks/deflate_compare.c -lz -ldeflate -lisal
 *   Benchmarks/deflate_compare.sh        (renders a corpus subset and runs this on one core)
 */
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

enum { REPS = 21, METHODS = 6 };

static const char *methodNames[METHODS] = {
    "zlib RLE (ours)", "libdeflate L1", "libdeflate L6", "isa-l L0", "isa-l L1", "isa-l L2",
};

static double milliseconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int compareDoubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static unsigned readBigEndian32(const unsigned char *p) {
    return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | (unsigned)p[3];
}

/* The inflated IDAT stream of a PNG file (filtered scanlines), or NULL. */
static unsigned char *filteredScanlines(const char *path, size_t *length) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *png = malloc((size_t)size);
    if (fread(png, 1, (size_t)size, file) != (size_t)size) { fclose(file); free(png); return NULL; }
    fclose(file);

    unsigned char *idat = malloc((size_t)size);
    size_t idatLength = 0, expected = 0;
    for (long at = 8; at + 12 <= size;) {
        unsigned chunkLength = readBigEndian32(png + at);
        const unsigned char *type = png + at + 4, *data = png + at + 8;
        if (memcmp(type, "IHDR", 4) == 0) {
            size_t width = readBigEndian32(data), height = readBigEndian32(data + 4);
            expected = (width + 1) * height; /* 8-bit palette: one byte per pixel + filter byte */
        } else if (memcmp(type, "IDAT", 4) == 0) {
            memcpy(idat + idatLength, data, chunkLength);
            idatLength += chunkLength;
        }
        at += 12 + (long)chunkLength;
    }
    free(png);
    unsigned char *raw = malloc(expected);
    uLongf rawLength = expected;
    if (expected == 0 || uncompress(raw, &rawLength, idat, idatLength) != Z_OK || rawLength != expected) {
        free(idat); free(raw); return NULL;
    }
    free(idat);
    *length = rawLength;
    return raw;
}

static size_t compressWith(int method, const unsigned char *in, size_t length, unsigned char *out, size_t capacity) {
    static struct libdeflate_compressor *fast, *level6;
    static unsigned char isalLevelBuffer[ISAL_DEF_LVL2_DEFAULT];
    if (method == 0) {
        z_stream stream;
        memset(&stream, 0, sizeof stream);
        if (deflateInit2(&stream, 6, Z_DEFLATED, 15, 6, Z_RLE) != Z_OK) return 0;
        stream.next_in = (unsigned char *)in; stream.avail_in = (uInt)length;
        stream.next_out = out; stream.avail_out = (uInt)capacity;
        int status = deflate(&stream, Z_FINISH);
        size_t written = stream.total_out;
        deflateEnd(&stream);
        return status == Z_STREAM_END ? written : 0;
    }
    if (method == 1 || method == 2) {
        if (!fast) fast = libdeflate_alloc_compressor(1);
        if (!level6) level6 = libdeflate_alloc_compressor(6);
        return libdeflate_zlib_compress(method == 1 ? fast : level6, in, length, out, capacity);
    }
    struct isal_zstream stream;
    isal_deflate_stateless_init(&stream);
    stream.level = (uint32_t)(method - 3);
    stream.level_buf = isalLevelBuffer;
    stream.level_buf_size = sizeof isalLevelBuffer;
    stream.gzip_flag = IGZIP_ZLIB;
    stream.next_in = (unsigned char *)in; stream.avail_in = (uint32_t)length;
    stream.next_out = out; stream.avail_out = (uint32_t)capacity;
    stream.end_of_stream = 1;
    stream.flush = NO_FLUSH;
    return isal_deflate_stateless(&stream) == COMP_OK ? stream.total_out : 0;
}

int main(int argc, char **argv) {
    double totalMilliseconds[METHODS] = {0};
    double totalBytes[METHODS] = {0};
    int images = 0;
    printf("%-24s %8s", "image", "raw KB");
    for (int m = 0; m < METHODS; m++) printf(" | %-16s", methodNames[m]);
    printf("\n");
    for (int a = 1; a < argc; a++) {
        size_t length = 0;
        unsigned char *raw = filteredScanlines(argv[a], &length);
        if (!raw) { fprintf(stderr, "%s: not a palette PNG from countersign\n", argv[a]); return 1; }
        size_t capacity = length + length / 8 + 1024;
        unsigned char *out = malloc(capacity), *check = malloc(length);
        const char *name = strrchr(argv[a], '/');
        printf("%-24.24s %8.0f", name ? name + 1 : argv[a], (double)length / 1024.0);
        for (int m = 0; m < METHODS; m++) {
            double samples[REPS];
            size_t written = 0;
            for (int r = 0; r < REPS; r++) {
                double start = milliseconds();
                written = compressWith(m, raw, length, out, capacity);
                samples[r] = milliseconds() - start;
            }
            uLongf checkLength = length;
            if (written == 0 || uncompress(check, &checkLength, out, written) != Z_OK ||
                checkLength != length || memcmp(check, raw, length) != 0) {
                fprintf(stderr, "%s: %s did not round-trip\n", argv[a], methodNames[m]);
                return 1;
            }
            qsort(samples, REPS, sizeof samples[0], compareDoubles);
            totalMilliseconds[m] += samples[REPS / 2];
            totalBytes[m] += (double)written;
            printf(" | %6.3f ms %7zu", samples[REPS / 2], written);
        }
        printf("\n");
        images++;
        free(raw); free(out); free(check);
    }
    printf("\n%d images; mean per image (median of %d runs each), relative to zlib RLE:\n", images, REPS);
    for (int m = 0; m < METHODS; m++)
        printf("  %-16s %6.3f ms (x%.2f)  %8.0f bytes (x%.2f)\n", methodNames[m], totalMilliseconds[m] / images,
               totalMilliseconds[m] / totalMilliseconds[0], totalBytes[m] / images, totalBytes[m] / totalBytes[0]);
    return 0;
}
