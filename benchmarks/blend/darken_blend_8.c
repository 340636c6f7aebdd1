/* 8-bit darken blend: each output pixel is the darker of the base and active pixels. */
#include <stdint.h>

void darken_blend_8(uint8_t *base, uint8_t *active, uint8_t *out, int m, int n)
{
    for (int row = 0; row < m; row++) {
        for (int col = 0; col < n; col++) {
            uint8_t b = base[row * n + col];
            uint8_t a = active[row * n + col];
            uint8_t pixel;
            if (b > a)
                pixel = a;
            else
                pixel = b;
            out[row * n + col] = pixel;
        }
    }
}
