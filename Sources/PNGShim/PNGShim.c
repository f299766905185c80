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

// libpng's error handler: record the message, then leave through the setjmp in cs_png_encode.
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

int cs_png_encode(const cs_png_params *p, const uint8_t *source, size_t source_stride,
                  uint8_t **out_data, size_t *out_size, char *message, size_t message_capacity) {
    if (out_data == NULL || out_size == NULL) return cs_invalid(message, message_capacity, "no output pointer");
    *out_data = NULL;
    *out_size = 0;
    if (p == NULL || source == NULL) return cs_invalid(message, message_capacity, "no parameters or pixels");
    if (p->width == 0 || p->height == 0) return cs_invalid(message, message_capacity, "image width and height must be positive");
    if (source_stride < p->width) return cs_invalid(message, message_capacity, "source stride smaller than the width");
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

    const size_t channels = p->color_type == CS_PNG_GRAY_ALPHA ? 2 : 1;
    const int convert = channels == 2 || p->lut0 != NULL;
    uint8_t *row = NULL;
    if (convert) {
        row = (uint8_t *)malloc((size_t)p->width * channels);
        if (row == NULL) {
            cs_set_message(message, message_capacity, "out of memory for a row buffer");
            return CS_PNG_OUT_OF_MEMORY;
        }
    }

    cs_state st;
    memset(&st, 0, sizeof st);
    st.message = message;
    st.message_capacity = message_capacity;

    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &st, cs_error, cs_warning);
    if (png == NULL) {
        free(row);
        cs_set_message(message, message_capacity, "png_create_write_struct failed");
        return CS_PNG_OUT_OF_MEMORY;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        free(row);
        cs_set_message(message, message_capacity, "png_create_info_struct failed");
        return CS_PNG_OUT_OF_MEMORY;
    }
    // `png`, `info` and `row` are not modified after this point; `st` lives in memory
    // (its address is held by libpng), so all are valid after a longjmp.
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(row);
        free(st.data);
        return st.out_of_memory ? CS_PNG_OUT_OF_MEMORY : CS_PNG_LIBPNG_ERROR;
    }

    png_set_write_fn(png, &st, cs_write, cs_flush);
    png_set_IHDR(png, info, p->width, p->height, 8, p->color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (p->color_type == CS_PNG_PALETTE) {
        png_color palette[256];
        for (int i = 0; i < p->palette_entries; i++) {
            palette[i].red = p->palette_rgb[3 * i];
            palette[i].green = p->palette_rgb[3 * i + 1];
            palette[i].blue = p->palette_rgb[3 * i + 2];
        }
        png_set_PLTE(png, info, palette, p->palette_entries);
        if (p->trns_entries > 0) png_set_tRNS(png, info, p->trns, p->trns_entries, NULL);
    }
    png_set_filter(png, PNG_FILTER_TYPE_BASE, p->filters);
    png_set_compression_level(png, p->compression_level);
    png_set_compression_strategy(png, p->compression_strategy);
    png_set_compression_mem_level(png, p->compression_mem_level);
    png_set_compression_window_bits(png, p->compression_window_bits);
    png_write_info(png, info);

    for (uint32_t y = 0; y < p->height; y++) {
        const uint8_t *src = source + (size_t)y * source_stride;
        if (!convert) {
            png_write_row(png, src);
            continue;
        }
        if (channels == 1) {
            const uint8_t *lut = p->lut0;
            for (uint32_t x = 0; x < p->width; x++) row[x] = lut[src[x]];
        } else {
            const uint8_t *l0 = p->lut0, *l1 = p->lut1;
            for (uint32_t x = 0; x < p->width; x++) {
                uint8_t v = src[x];
                row[2 * x] = l0 ? l0[v] : v;
                row[2 * x + 1] = l1 ? l1[v] : v;
            }
        }
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    *out_data = st.data;
    *out_size = st.size;
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
