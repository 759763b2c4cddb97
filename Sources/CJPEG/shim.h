// libjpeg, with its errors returned instead of exiting the process: libjpeg's default error
// handler calls exit(), and a longjmp cannot cross Swift frames, so the setjmp lives here, in C.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>

struct cjpeg_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

static void cjpeg_error_exit(j_common_ptr info) {
    struct cjpeg_error *error = (struct cjpeg_error *)info->err;
    (*info->err->format_message)(info, error->message);
    longjmp(error->jump, 1);
}

static void cjpeg_silence(j_common_ptr info) { (void)info; }

/// Decodes a JPEG to 8-bit grey pixels, row by row, in a buffer the caller frees with free().
/// Returns 0 on success; else 1 and a reason in `message` (at least JMSG_LENGTH_MAX bytes).
/// Refuses images of more than `max_pixels` pixels before allocating them.
static inline int cjpeg_decode_grey(const unsigned char *data, unsigned long size, unsigned long max_pixels,
                                    unsigned char **pixels, int *width, int *height, char *message) {
    struct jpeg_decompress_struct info;
    struct cjpeg_error error;
    unsigned char *volatile out = NULL;
    *pixels = NULL;
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = cjpeg_error_exit;
    error.manager.output_message = cjpeg_silence;
    error.message[0] = 0;
    if (setjmp(error.jump)) {
        strncpy(message, error.message, JMSG_LENGTH_MAX - 1);
        message[JMSG_LENGTH_MAX - 1] = 0;
        jpeg_destroy_decompress(&info);
        free(out);
        return 1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, size);
    jpeg_read_header(&info, TRUE);
    info.out_color_space = JCS_GRAYSCALE;
    jpeg_start_decompress(&info);
    unsigned long w = info.output_width, h = info.output_height;
    if (w == 0 || h == 0 || w * h > max_pixels || info.output_components != 1) {
        strncpy(message, "the image is too large", JMSG_LENGTH_MAX - 1);
        jpeg_destroy_decompress(&info);
        return 1;
    }
    out = malloc(w * h);
    if (out == NULL) {
        strncpy(message, "not enough memory for the image", JMSG_LENGTH_MAX - 1);
        jpeg_destroy_decompress(&info);
        return 1;
    }
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = out + (unsigned long)info.output_scanline * w;
        jpeg_read_scanlines(&info, &row, 1);
    }
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    *pixels = out;
    *width = (int)w;
    *height = (int)h;
    return 0;
}

/// Encodes 8-bit grey pixels as a JPEG of `quality` (1-100), in a buffer the caller frees with
/// free(). Returns 0 on success; else 1 and a reason in `message`. For tests and tools.
static inline int cjpeg_encode_grey(const unsigned char *pixels, int width, int height, int quality,
                                    unsigned char **jpeg, unsigned long *size, char *message) {
    struct jpeg_compress_struct info;
    struct cjpeg_error error;
    unsigned char *volatile buffer = NULL;
    unsigned long buffer_size = 0;
    *jpeg = NULL;
    *size = 0;
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = cjpeg_error_exit;
    error.manager.output_message = cjpeg_silence;
    if (setjmp(error.jump)) {
        strncpy(message, error.message, JMSG_LENGTH_MAX - 1);
        message[JMSG_LENGTH_MAX - 1] = 0;
        jpeg_destroy_compress(&info);
        free(buffer);
        return 1;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, (unsigned char **)&buffer, &buffer_size);
    info.image_width = (JDIMENSION)width;
    info.image_height = (JDIMENSION)height;
    info.input_components = 1;
    info.in_color_space = JCS_GRAYSCALE;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    jpeg_start_compress(&info, TRUE);
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (unsigned long)info.next_scanline * (unsigned long)width);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    *jpeg = buffer;
    *size = buffer_size;
    return 0;
}
