#ifndef COUNTERSIGN_PNGSHIM_H
#define COUNTERSIGN_PNGSHIM_H
// A small C shim over libpng's write API. libpng reports errors with setjmp/longjmp;
// each entry point below sets its own setjmp, so every longjmp returns into it and none ever
// crosses a Swift frame. The caller gets an error code and libpng's message as text.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Pixel layout of the written image (values are libpng's PNG_COLOR_TYPE_*).
enum {
    CS_PNG_GRAY = 0,        // 1 byte per pixel
    CS_PNG_PALETTE = 3,     // 1 byte per pixel, index into `palette`
    CS_PNG_GRAY_ALPHA = 4,  // 2 bytes per pixel
};

/// Result codes of the entry points.
enum {
    CS_PNG_OK = 0,
    CS_PNG_INVALID_ARGUMENT = 1,  // message says which
    CS_PNG_OUT_OF_MEMORY = 2,
    CS_PNG_LIBPNG_ERROR = 3,      // libpng called its error handler; message is libpng's
};

/// What to write. The source is always an 8-bit single-channel image (`height` rows of
/// `width` bytes); each written sample is looked up
/// from the source byte: channel 0 through `lut0`, channel 1 (gray+alpha only) through
/// `lut1`. A NULL table means identity (the source byte is written as is).
typedef struct cs_png_params {
    uint32_t width;
    uint32_t height;
    int color_type;               // CS_PNG_GRAY, CS_PNG_PALETTE or CS_PNG_GRAY_ALPHA
    const uint8_t *lut0;          // 256 entries or NULL
    const uint8_t *lut1;          // 256 entries or NULL
    const uint8_t *palette_rgb;   // palette_entries * 3 bytes (palette only)
    int palette_entries;          // 1...256
    const uint8_t *trns;          // tRNS alpha per palette entry, or NULL
    int trns_entries;             // 0...palette_entries
    int filters;                  // libpng filter mask (PNG_FILTER_NONE = 0x08, PNG_ALL_FILTERS = 0xf8)
    int compression_level;        // zlib 0...9
    int compression_strategy;     // zlib strategy: 0 default, 1 filtered, 2 huffman only, 3 RLE, 4 fixed
    int compression_mem_level;    // zlib 1...9 (8 is zlib's default)
    int compression_window_bits;  // zlib 8...15 (15 is zlib's default)
} cs_png_params;

/// Frees a buffer returned by cs_png_writer_finish, cs_png_writer_finish_compressed or
/// cs_png_decode_rgba.
void cs_png_free(uint8_t *data);

/// A PNG being written row by row (for callers that produce the image in bands). Every
/// function below sets its own setjmp before calling libpng, so libpng's longjmp only ever
/// returns into that function; after any failure the writer is dead (further calls fail) and
/// must still be released with cs_png_writer_free.
typedef struct cs_png_writer cs_png_writer;

/// Validates `params`, copies the lookup tables, writes the header
/// chunks and returns a writer in `*out_writer` (NULL on failure, with `message` set).
int cs_png_writer_begin(const cs_png_params *params, cs_png_writer **out_writer,
                        char *message, size_t message_capacity);

/// Writes the next `count` rows, each `width` source bytes converted through the tables (see
/// cs_png_params). More rows than the image height is an error.
int cs_png_writer_rows(cs_png_writer *writer, const uint8_t *const *rows, uint32_t count,
                       char *message, size_t message_capacity);

/// Finishes the file after exactly `height` rows and hands it over (release with cs_png_free).
/// Deterministic: the same rows give the same bytes (no time or text chunk is written).
int cs_png_writer_finish(cs_png_writer *writer, uint8_t **out_data, size_t *out_size,
                         char *message, size_t message_capacity);

/// Finishes the file with image data compressed by the caller instead of rows: `idat` (a zlib
/// stream of all the filtered scanlines, `idat_size` bytes) is written as IDAT chunks, then
/// IEND, and the file is handed over as by cs_png_writer_finish. Only for a writer that was given
/// no rows (its compression settings are then unused).
int cs_png_writer_finish_compressed(cs_png_writer *writer, const uint8_t *idat, size_t idat_size,
                                    uint8_t **out_data, size_t *out_size, char *message, size_t message_capacity);

/// Releases a writer (finished or not). NULL is ignored.
void cs_png_writer_free(cs_png_writer *writer);

/// Decodes any PNG into 8-bit non-premultiplied RGBA through libpng's simplified
/// (png_image) API, which handles libpng's longjmp internally. Refuses images of more than
/// `max_pixels` pixels. On CS_PNG_OK `*out_rgba` holds width*height*4 bytes (free with
/// cs_png_free); otherwise `message` says why.
int cs_png_decode_rgba(const uint8_t *data, size_t size, uint64_t max_pixels,
                       uint8_t **out_rgba, uint32_t *out_width, uint32_t *out_height,
                       char *message, size_t message_capacity);

/// The libpng version the shim runs against, e.g. "1.6.39".
const char *cs_png_libpng_version(void);

#ifdef __cplusplus
}
#endif

#endif
