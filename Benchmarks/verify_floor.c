/*
 * The floor of bundle verification on this host: the least work any verifier of a version 3
 * bundle must do, done in C with nothing else. Every entry is read once (pread), inflated once
 * when deflated (libdeflate, one decompressor per thread, as the verifier uses) and hashed once
 * with SHA-256 (libcrypto, fetched once, one context per thread). No JSON is parsed, no audit
 * event is re-hashed, nothing is compared: a real verifier does all of that on top, so it can
 * only be slower. Its proofs/s is the ceiling for this bundle on this machine.
 *
 * Entries are taken in runs of 64 from a shared counter by one thread per core (or THREADS).
 * Prints wall and CPU seconds, each step's share of the CPU, and proofs/s (a proof is a
 * `deliveries/<reference>/metadata.json` entry).
 *
 *   cc -O2 -o verify_floor Benchmarks/verify_floor.c -ldeflate -lcrypto -lpthread
 *   verify_floor BUNDLE.zip [THREADS]
 *   Benchmarks/verify_bundle_bench.sh runs it after each round of the two binaries.
 */
#include <fcntl.h>
#include <libdeflate.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    uint64_t offset;      /* of the local header */
    uint64_t compressed;
    uint64_t size;
    uint16_t method;
} Entry;

static int descriptor;
static Entry *entries;
static size_t entryCount;
static atomic_size_t nextEntry;
static const EVP_MD *sha256;

typedef struct {
    double read, inflate, hash;
    uint64_t inflated, hashed;
    int failed;
} Totals;

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const unsigned char *p) { return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16; }
static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

static double seconds(clockid_t clock) {
    struct timespec now;
    clock_gettime(clock, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void readFully(void *buffer, size_t count, uint64_t offset) {
    size_t done = 0;
    while (done < count) {
        ssize_t got = pread(descriptor, (char *)buffer + done, count - done, (off_t)(offset + done));
        if (got <= 0) { fprintf(stderr, "verify_floor: short read at %llu\n", (unsigned long long)offset); exit(1); }
        done += (size_t)got;
    }
}

/* The central directory (ZIP64 when the count or offset overflow), into `entries`; returns proofs. */
static size_t readDirectory(uint64_t fileSize) {
    size_t tailSize = fileSize < 65557 ? (size_t)fileSize : 65557;
    unsigned char *tail = malloc(tailSize);
    readFully(tail, tailSize, fileSize - tailSize);
    long end = -1;
    for (long i = (long)tailSize - 22; i >= 0; i--) if (le32(tail + i) == 0x06054b50) { end = i; break; }
    if (end < 0) { fprintf(stderr, "verify_floor: no end of central directory\n"); exit(1); }
    uint64_t count = le16(tail + end + 10), directorySize = le32(tail + end + 12), directoryOffset = le32(tail + end + 16);
    if (count == 0xFFFF || directoryOffset == 0xFFFFFFFF) {
        if (end < 20 || le32(tail + end - 20) != 0x07064b50) { fprintf(stderr, "verify_floor: no ZIP64 locator\n"); exit(1); }
        unsigned char record[56];
        readFully(record, sizeof record, le64(tail + end - 20 + 8));
        if (le32(record) != 0x06064b50) { fprintf(stderr, "verify_floor: no ZIP64 end record\n"); exit(1); }
        count = le64(record + 32);
        directorySize = le64(record + 40);
        directoryOffset = le64(record + 48);
    }
    free(tail);
    unsigned char *directory = malloc(directorySize);
    readFully(directory, directorySize, directoryOffset);
    entries = calloc(count, sizeof *entries);
    size_t proofs = 0;
    const unsigned char *p = directory, *limit = directory + directorySize;
    for (uint64_t i = 0; i < count; i++) {
        if (p + 46 > limit || le32(p) != 0x02014b50) { fprintf(stderr, "verify_floor: bad central directory\n"); exit(1); }
        Entry *entry = &entries[i];
        entry->method = le16(p + 10);
        entry->compressed = le32(p + 20);
        entry->size = le32(p + 24);
        entry->offset = le32(p + 42);
        uint16_t nameLength = le16(p + 28), extraLength = le16(p + 30), commentLength = le16(p + 32);
        const unsigned char *name = p + 46, *extra = name + nameLength;
        for (const unsigned char *field = extra; field + 4 <= extra + extraLength; field += 4 + le16(field + 2)) {
            if (le16(field) != 0x0001) continue;
            const unsigned char *value = field + 4;
            if (entry->size == 0xFFFFFFFF) { entry->size = le64(value); value += 8; }
            if (entry->compressed == 0xFFFFFFFF) { entry->compressed = le64(value); value += 8; }
            if (entry->offset == 0xFFFFFFFF) entry->offset = le64(value);
        }
        static const char suffix[] = "/metadata.json";
        if (nameLength > 11 + sizeof suffix - 1 && memcmp(name, "deliveries/", 11) == 0
            && memcmp(name + nameLength - (sizeof suffix - 1), suffix, sizeof suffix - 1) == 0) proofs++;
        p += 46 + nameLength + extraLength + commentLength;
    }
    entryCount = count;
    free(directory);
    return proofs;
}

static void *work(void *argument) {
    Totals *totals = argument;
    struct libdeflate_decompressor *decompressor = libdeflate_alloc_decompressor();
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    size_t capacity = 1 << 20;
    unsigned char *input = malloc(capacity), *output = malloc(capacity), digest[32];
    for (;;) {
        size_t first = atomic_fetch_add(&nextEntry, 64);
        if (first >= entryCount) break;
        size_t last = first + 64 < entryCount ? first + 64 : entryCount;
        for (size_t i = first; i < last; i++) {
            Entry *entry = &entries[i];
            double started = seconds(CLOCK_THREAD_CPUTIME_ID);
            unsigned char header[30];
            readFully(header, sizeof header, entry->offset);
            uint64_t data = entry->offset + 30 + le16(header + 26) + le16(header + 28);
            uint64_t largest = entry->compressed > entry->size ? entry->compressed : entry->size;
            if (largest > capacity) {
                capacity = largest;
                input = realloc(input, capacity);
                output = realloc(output, capacity);
            }
            readFully(input, entry->compressed, data);
            double read = seconds(CLOCK_THREAD_CPUTIME_ID);
            const unsigned char *contents = input;
            if (entry->method == 8) {
                size_t actual;
                if (libdeflate_deflate_decompress(decompressor, input, entry->compressed, output, entry->size, &actual)
                    != LIBDEFLATE_SUCCESS) totals->failed++;
                contents = output;
                totals->inflated += entry->size;
            } else if (entry->method != 0) {
                totals->failed++;
            }
            double inflated = seconds(CLOCK_THREAD_CPUTIME_ID);
            unsigned length;
            EVP_DigestInit_ex(context, sha256, NULL);
            EVP_DigestUpdate(context, contents, entry->size);
            EVP_DigestFinal_ex(context, digest, &length);
            double hashed = seconds(CLOCK_THREAD_CPUTIME_ID);
            totals->hashed += entry->size;
            totals->read += read - started;
            totals->inflate += inflated - read;
            totals->hash += hashed - inflated;
        }
    }
    free(input);
    free(output);
    EVP_MD_CTX_free(context);
    libdeflate_free_decompressor(decompressor);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: verify_floor BUNDLE.zip [THREADS]\n"); return 2; }
    int threads = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1 || threads > 256) threads = 1;
    descriptor = open(argv[1], O_RDONLY);
    struct stat status;
    if (descriptor < 0 || fstat(descriptor, &status) != 0) { perror(argv[1]); return 1; }
    sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    double wallStarted = seconds(CLOCK_MONOTONIC), cpuStarted = seconds(CLOCK_PROCESS_CPUTIME_ID);
    size_t proofs = readDirectory((uint64_t)status.st_size);
    pthread_t workers[256];
    Totals totals[256];
    memset(totals, 0, sizeof totals);
    for (int i = 0; i < threads; i++) pthread_create(&workers[i], NULL, work, &totals[i]);
    Totals sum = {0};
    for (int i = 0; i < threads; i++) {
        pthread_join(workers[i], NULL);
        sum.read += totals[i].read;
        sum.inflate += totals[i].inflate;
        sum.hash += totals[i].hash;
        sum.inflated += totals[i].inflated;
        sum.hashed += totals[i].hashed;
        sum.failed += totals[i].failed;
    }
    double wall = seconds(CLOCK_MONOTONIC) - wallStarted, cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpuStarted;
    if (sum.failed) { fprintf(stderr, "verify_floor: %d entries could not be inflated\n", sum.failed); return 1; }
    double steps = sum.read + sum.inflate + sum.hash;
    printf("floor: %zu proofs, %zu entries, %.0f MB inflated, %.0f MB hashed, %d threads: %.2f s, %.2f CPU s "
           "(read %.0f %%, inflate %.0f %%, SHA-256 %.0f %%): %.0f proofs/s\n",
           proofs, entryCount, sum.inflated / 1e6, sum.hashed / 1e6, threads, wall, cpu,
           100 * sum.read / steps, 100 * sum.inflate / steps, 100 * sum.hash / steps, proofs / wall);
    return 0;
}
