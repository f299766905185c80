#include "PNGShim.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cs_state {
    uint8_t *data;
    size_t size;
    size_t capacity;
    char *message;
    size_t message_capacity;
    int out_of_memory;
} cs_state;

static void cs_set_message(char *message, size_t capacity, const char *text) {
    if (message == NULL || capacity == 0) return;
    snprintf(message, capacity, "%s", text ? text : "unknown error");
}

// libpng's error handler: record the message, then leave through the calling entry point's setjmp.
static void cs_error(png_structp png, png_const_charp text) {
    cs_state *st = (cs_state *)png_get_error_ptr(png);
    if (st) cs_set_message(st->message, st->message_capacity, text);
    png_longjmp(png, 1);
}

static void cs_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;  // warnings are not errors; nothing to report
}

static void cs_write(png_structp png, png_bytep bytes, png_size_t length) {
    cs_state *st = (cs_state *)png_get_io_ptr(png);
    if (length > st->capacity - st->size) {
        size_t cap = st->capacity ? st->capacity : 16384;
        while (cap - st->size < length) {
            if (cap > SIZE_MAX / 2) {
                st->out_of_memory = 1;
                png_error(png, "PNG output too large");
            }
            cap *= 2;
        }
        uint8_t *grown = (uint8_t *)realloc(st->data, cap);
        if (grown == NULL) {
            st->out_of_memory = 1;
            png_error(png, "out of memory growing the PNG output buffer");
        }
        st->data = grown;
        st->capacity = cap;
    }
    memcpy(st->data + st->size, bytes, length);
    st->size += length;
}

static void cs_flush(png_structp png) { (void)png; }

static int cs_invalid(char *message, size_t capacity, const char *text) {
    cs_set_message(message, capacity, text);
    return CS_PNG_INVALID_ARGUMENT;
}

struct cs_png_writer {
    png_structp png;
    png_infop info;
    cs_state st;
    uint32_t width;
    uint32_t height;
    uint32_t written;
    int channels;         // written samples per pixel (1 or 2)
    int convert;          // rows go through the tables into `row`
    int has_lut0, has_lut1;
    int dead;             // libpng failed: nothing more may be called on `png`
    uint8_t lut0[256], lut1[256];
    uint8_t *row;
    char message[256];
};

static int cs_fail(cs_png_writer *w, char *message, size_t capacity) {
    w->dead = 1;
    cs_set_message(message, capacity, w->message[0] ? w->message : "libpng failed");
    return w->st.out_of_memory ? CS_PNG_OUT_OF_MEMORY : CS_PNG_LIBPNG_ERROR;
}

// One row into libpng (may longjmp: only called below a setjmp of the calling entry point).
static void cs_put_row(cs_png_writer *w, const uint8_t *src) {
    if (!w->convert) {
        png_write_row(w->png, src);
        return;
    }
    uint8_t *row = w->row;
    if (w->channels == 1) {
        const uint8_t *lut = w->lut0;
        for (uint32_t x = 0; x < w->width; x++) row[x] = lut[src[x]];
    } else {
        for (uint32_t x = 0; x < w->width; x++) {
            uint8_t v = src[x];
            row[2 * x] = w->has_lut0 ? w->lut0[v] : v;
            row[2 * x + 1] = w->has_lut1 ? w->lut1[v] : v;
        }
    }
    png_write_row(w->png, row);
}

void cs_png_writer_free(cs_png_writer *w) {
    if (w == NULL) return;
    if (w->png != NULL) png_destroy_write_struct(&w->png, w->info != NULL ? &w->info : NULL);
    free(w->st.data);
    free(w->row);
    free(w);
}

int cs_png_writer_begin(const cs_png_params *p, cs_png_writer **out_writer, char *message, size_t message_capacity) {
    if (out_writer == NULL) return cs_invalid(message, message_capacity, "no output pointer");
    *out_writer = NULL;
    if (p == NULL) return cs_invalid(message, message_capacity, "no parameters");
    if (p->width == 0 || p->height == 0) return cs_invalid(message, message_capacity, "image width and height must be positive");
    if (p->color_type != CS_PNG_GRAY && p->color_type != CS_PNG_PALETTE && p->color_type != CS_PNG_GRAY_ALPHA)
        return cs_invalid(message, message_capacity, "unsupported color type");
    if (p->color_type == CS_PNG_PALETTE) {
        if (p->palette_rgb == NULL || p->palette_entries < 1 || p->palette_entries > 256)
            return cs_invalid(message, message_capacity, "a palette image needs 1...256 palette entries");
        if (p->trns_entries < 0 || p->trns_entries > p->palette_entries || (p->trns_entries > 0 && p->trns == NULL))
            return cs_invalid(message, message_capacity, "tRNS must have at most one entry per palette colour");
    }
    if (p->compression_level < 0 || p->compression_level > 9) return cs_invalid(message, message_capacity, "zlib level must be 0...9");
    if (p->compression_strategy < 0 || p->compression_strategy > 4) return cs_invalid(message, message_capacity, "unknown zlib strategy");
    if (p->compression_mem_level < 1 || p->compression_mem_level > 9) return cs_invalid(message, message_capacity, "zlib memLevel must be 1...9");
    if (p->compression_window_bits < 8 || p->compression_window_bits > 15) return cs_invalid(message, message_capacity, "zlib windowBits must be 8...15");

    cs_png_writer *w = (cs_png_writer *)calloc(1, sizeof *w);
    if (w == NULL) {
        cs_set_message(message, message_capacity, "out of memory for the PNG writer");
        return CS_PNG_OUT_OF_MEMORY;
    }
    w->width = p->width;
    w->height = p->height;
    w->channels = p->color_type == CS_PNG_GRAY_ALPHA ? 2 : 1;
    w->convert = w->channels == 2 || p->lut0 != NULL;
    if (p->lut0 != NULL) { memcpy(w->lut0, p->lut0, 256); w->has_lut0 = 1; }
    if (p->lut1 != NULL) { memcpy(w->lut1, p->lut1, 256); w->has_lut1 = 1; }
    if (w->convert) {
        w->row = (uint8_t *)malloc((size_t)p->width * (size_t)w->channels);
        if (w->row == NULL) {
            cs_png_writer_free(w);
            cs_set_message(message, message_capacity, "out of memory for a row buffer");
            return CS_PNG_OUT_OF_MEMORY;
        }
    }
    w->st.message = w->message;
    w->st.message_capacity = sizeof w->message;

    w->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &w->st, cs_error, cs_warning);
    if (w->png == NULL) {
        cs_png_writer_free(w);
        cs_set_message(message, message_capacity, "png_create_write_struct failed");
        return CS_PNG_OUT_OF_MEMORY;
    }
    w->info = png_create_info_struct(w->png);
    if (w->info == NULL) {
        cs_png_writer_free(w);
        cs_set_message(message, message_capacity, "png_create_info_struct failed");
        return CS_PNG_OUT_OF_MEMORY;
    }
    // `w` itself is not modified after this point (only what it points to), so it is valid
    // after a longjmp.
    if (setjmp(png_jmpbuf(w->png))) {
        int code = cs_fail(w, message, message_capacity);
        cs_png_writer_free(w);
        return code;
    }
    png_set_write_fn(w->png, &w->st, cs_write, cs_flush);
    png_set_IHDR(w->png, w->info, p->width, p->height, 8, p->color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (p->color_type == CS_PNG_PALETTE) {
        png_color palette[256];
        for (int i = 0; i < p->palette_entries; i++) {
            palette[i].red = p->palette_rgb[3 * i];
            palette[i].green = p->palette_rgb[3 * i + 1];
            palette[i].blue = p->palette_rgb[3 * i + 2];
        }
        png_set_PLTE(w->png, w->info, palette, p->palette_entries);
        if (p->trns_entries > 0) png_set_tRNS(w->png, w->info, p->trns, p->trns_entries, NULL);
    }
    png_set_filter(w->png, PNG_FILTER_TYPE_BASE, p->filters);
    png_set_compression_level(w->png, p->compression_level);
    png_set_compression_strategy(w->png, p->compression_strategy);
    png_set_compression_mem_level(w->png, p->compression_mem_level);
    png_set_compression_window_bits(w->png, p->compression_window_bits);
    png_write_info(w->png, w->info);
    *out_writer = w;
    return CS_PNG_OK;
}

static int cs_check_rows(cs_png_writer *w, uint32_t count, char *message, size_t message_capacity) {
    if (w->dead) return cs_invalid(message, message_capacity, "the PNG writer failed earlier");
    if (count > w->height - w->written) return cs_invalid(message, message_capacity, "more rows than the image height");
    return CS_PNG_OK;
}

int cs_png_writer_rows(cs_png_writer *w, const uint8_t *const *rows, uint32_t count,
                       char *message, size_t message_capacity) {
    if (w == NULL || (rows == NULL && count > 0)) return cs_invalid(message, message_capacity, "no writer or rows");
    int status = cs_check_rows(w, count, message, message_capacity);
    if (status != CS_PNG_OK) return status;
    if (setjmp(png_jmpbuf(w->png))) return cs_fail(w, message, message_capacity);
    for (uint32_t i = 0; i < count; i++) {
        cs_put_row(w, rows[i]);
        w->written++;
    }
    return CS_PNG_OK;
}

int cs_png_writer_finish(cs_png_writer *w, uint8_t **out_data, size_t *out_size,
                         char *message, size_t message_capacity) {
    if (w == NULL || out_data == NULL || out_size == NULL) return cs_invalid(message, message_capacity, "no writer or output pointer");
    *out_data = NULL;
    *out_size = 0;
    if (w->dead) return cs_invalid(message, message_capacity, "the PNG writer failed earlier");
    if (w->png == NULL) return cs_invalid(message, message_capacity, "the PNG was already finished");
    if (w->written != w->height) return cs_invalid(message, message_capacity, "fewer rows written than the image height");
    if (setjmp(png_jmpbuf(w->png))) return cs_fail(w, message, message_capacity);
    png_write_end(w->png, NULL);
    png_destroy_write_struct(&w->png, &w->info);
    *out_data = w->st.data;
    *out_size = w->st.size;
    w->st.data = NULL;
    w->st.size = 0;
    return CS_PNG_OK;
}

// IDAT chunks of at most this many bytes (any size up to 2^31 - 1 is valid PNG).
#define CS_IDAT_CHUNK_MAX ((size_t)1 << 20)

int cs_png_writer_finish_compressed(cs_png_writer *w, const uint8_t *idat, size_t idat_size,
                                    uint8_t **out_data, size_t *out_size, char *message, size_t message_capacity) {
    if (w == NULL || out_data == NULL || out_size == NULL) return cs_invalid(message, message_capacity, "no writer or output pointer");
    *out_data = NULL;
    *out_size = 0;
    if (idat == NULL || idat_size == 0) return cs_invalid(message, message_capacity, "no compressed image data");
    if (w->dead) return cs_invalid(message, message_capacity, "the PNG writer failed earlier");
    if (w->png == NULL) return cs_invalid(message, message_capacity, "the PNG was already finished");
    if (w->written != 0) return cs_invalid(message, message_capacity, "rows were already given to libpng");
    if (setjmp(png_jmpbuf(w->png))) return cs_fail(w, message, message_capacity);
    for (size_t offset = 0; offset < idat_size; offset += CS_IDAT_CHUNK_MAX) {
        size_t length = idat_size - offset < CS_IDAT_CHUNK_MAX ? idat_size - offset : CS_IDAT_CHUNK_MAX;
        png_write_chunk(w->png, (png_const_bytep) "IDAT", idat + offset, length);
    }
    png_write_chunk(w->png, (png_const_bytep) "IEND", NULL, 0);
    png_destroy_write_struct(&w->png, &w->info);
    *out_data = w->st.data;
    *out_size = w->st.size;
    w->st.data = NULL;
    w->st.size = 0;
    return CS_PNG_OK;
}

void cs_png_free(uint8_t *data) { free(data); }

int cs_png_decode_rgba(const uint8_t *data, size_t size, uint64_t max_pixels,
                       uint8_t **out_rgba, uint32_t *out_width, uint32_t *out_height,
                       char *message, size_t message_capacity) {
    if (out_rgba == NULL || out_width == NULL || out_height == NULL)
        return cs_invalid(message, message_capacity, "no output pointer");
    *out_rgba = NULL;
    *out_width = 0;
    *out_height = 0;
    if (data == NULL || size == 0) return cs_invalid(message, message_capacity, "no PNG data");
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, data, size)) {
        cs_set_message(message, message_capacity, image.message);
        png_image_free(&image);
        return CS_PNG_LIBPNG_ERROR;
    }
    if ((uint64_t)image.width * image.height > max_pixels) {
        png_image_free(&image);
        return cs_invalid(message, message_capacity, "PNG has more pixels than allowed");
    }
    image.format = PNG_FORMAT_RGBA;
    uint8_t *rgba = (uint8_t *)malloc(PNG_IMAGE_SIZE(image));
    if (rgba == NULL) {
        png_image_free(&image);
        cs_set_message(message, message_capacity, "out of memory for the decoded image");
        return CS_PNG_OUT_OF_MEMORY;
    }
    if (!png_image_finish_read(&image, NULL, rgba, 0, NULL)) {
        cs_set_message(message, message_capacity, image.message);
        png_image_free(&image);
        free(rgba);
        return CS_PNG_LIBPNG_ERROR;
    }
    png_image_free(&image);
    *out_rgba = rgba;
    *out_width = image.width;
    *out_height = image.height;
    return CS_PNG_OK;
}

const char *cs_png_libpng_version(void) { return png_get_libpng_ver(NULL); }
