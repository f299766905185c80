// The cairo peer for `render-bench`: fills the very same outlines (dumped in output
// pixels by `render-bench --dump-outlines FILE`) into a CAIRO_FORMAT_A8 surface of the
// same size, non-zero rule, default antialiasing, and reports median and p99 per signature fill.
//
//   cc -O2 -o cairo_fill cairo_fill.c $(pkg-config --cflags --libs cairo)
//   ./cairo_fill OUTLINES [ITERATIONS]
#include <cairo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { char op; double v[6]; } element;
typedef struct { int w, h; element *e; size_t n; } outline;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void draw(cairo_t *cr, const outline *o) {
    cairo_new_path(cr);
    for (size_t i = 0; i < o->n; i++) {
        const element *e = &o->e[i];
        switch (e->op) {
        case 'M': cairo_move_to(cr, e->v[0], e->v[1]); break;
        case 'L': cairo_line_to(cr, e->v[0], e->v[1]); break;
        case 'Q': {  // cairo has no quadratic: exact cubic elevation
            double x0, y0;
            cairo_get_current_point(cr, &x0, &y0);
            cairo_curve_to(cr, x0 + 2.0 / 3 * (e->v[0] - x0), y0 + 2.0 / 3 * (e->v[1] - y0),
                           e->v[2] + 2.0 / 3 * (e->v[0] - e->v[2]), e->v[3] + 2.0 / 3 * (e->v[1] - e->v[3]),
                           e->v[2], e->v[3]);
            break;
        }
        case 'C': cairo_curve_to(cr, e->v[0], e->v[1], e->v[2], e->v[3], e->v[4], e->v[5]); break;
        case 'Z': cairo_close_path(cr); break;
        }
    }
    cairo_fill(cr);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s OUTLINES [ITERATIONS]\n", argv[0]); return 2; }
    int iterations = argc > 2 ? atoi(argv[2]) : 20;
    FILE *f = fopen(argv[1], "r");
    if (!f) { perror(argv[1]); return 2; }
    outline *outs = NULL;
    size_t count = 0, cap = 0;
    char line[512];
    outline *cur = NULL;
    size_t ecap = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == 'S') {
            if (count == cap) { cap = cap ? cap * 2 : 64; outs = realloc(outs, cap * sizeof *outs); }
            cur = &outs[count++];
            memset(cur, 0, sizeof *cur);
            ecap = 0;
            sscanf(line + 1, "%d %d", &cur->w, &cur->h);
        } else if (cur && line[0] != 'E') {
            if (cur->n == ecap) { ecap = ecap ? ecap * 2 : 256; cur->e = realloc(cur->e, ecap * sizeof *cur->e); }
            element *e = &cur->e[cur->n++];
            memset(e, 0, sizeof *e);
            e->op = line[0];
            sscanf(line + 1, "%lf %lf %lf %lf %lf %lf", &e->v[0], &e->v[1], &e->v[2], &e->v[3], &e->v[4], &e->v[5]);
        }
    }
    fclose(f);

    size_t total = count * (size_t)iterations;
    double *with_surface = malloc(total * sizeof(double));
    double *fill_only = malloc(total * sizeof(double));
    size_t k = 0;
    long long inked = 0;
    for (size_t s = 0; s < count; s++) {
        const outline *o = &outs[s];
        // Warm-up, and a checksum so the work is observable.
        cairo_surface_t *warm = cairo_image_surface_create(CAIRO_FORMAT_A8, o->w, o->h);
        cairo_t *wc = cairo_create(warm);
        cairo_set_fill_rule(wc, CAIRO_FILL_RULE_WINDING);
        draw(wc, o);
        cairo_surface_flush(warm);
        const unsigned char *px = cairo_image_surface_get_data(warm);
        int stride = cairo_image_surface_get_stride(warm);
        for (int y = 0; y < o->h; y++)
            for (int x = 0; x < o->w; x++) inked += px[y * stride + x] != 0;
        cairo_destroy(wc);
        cairo_surface_destroy(warm);

        cairo_surface_t *reused = cairo_image_surface_create(CAIRO_FORMAT_A8, o->w, o->h);
        for (int i = 0; i < iterations; i++, k++) {
            // Like our "rasterise" stage: allocate the target, fill, have the coverage.
            double t0 = now_ms();
            cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_A8, o->w, o->h);
            cairo_t *cr = cairo_create(surf);
            cairo_set_fill_rule(cr, CAIRO_FILL_RULE_WINDING);
            draw(cr, o);
            cairo_surface_flush(surf);
            cairo_destroy(cr);
            cairo_surface_destroy(surf);
            with_surface[k] = now_ms() - t0;

            // Fill only: surface kept, cleared outside the timing.
            memset(cairo_image_surface_get_data(reused), 0, (size_t)cairo_image_surface_get_stride(reused) * o->h);
            cairo_surface_mark_dirty(reused);
            cairo_t *cr2 = cairo_create(reused);
            cairo_set_fill_rule(cr2, CAIRO_FILL_RULE_WINDING);
            double t1 = now_ms();
            draw(cr2, o);
            cairo_surface_flush(reused);
            fill_only[k] = now_ms() - t1;
            cairo_destroy(cr2);
        }
        cairo_surface_destroy(reused);
    }
    qsort(with_surface, total, sizeof(double), cmp);
    qsort(fill_only, total, sizeof(double), cmp);
    printf("cairo %s A8, %zu outlines x %d iterations (inked pixels %lld)\n", cairo_version_string(), count, iterations, inked);
    printf("%-26s%10.3f %10.3f\n", "cairo A8 (new surface)", with_surface[total / 2], with_surface[(size_t)((total - 1) * 0.99 + 0.5)]);
    printf("%-26s%10.3f %10.3f\n", "cairo A8 (fill only)", fill_only[total / 2], fill_only[(size_t)((total - 1) * 0.99 + 0.5)]);
    return 0;
}
