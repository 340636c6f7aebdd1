/* 8-bit overlay blend: multiply in the shadows of the base, screen in its highlights.
 * Both branches stay in [0, 255]: 2*b*a/255 <= 254 for b < 128, and the screen branch >= 1. */
#include <stdint.h>

void overlay_blend_8(uint8_t *base, uint8_t *active, uint8_t *out, int m, int n)
{
    for (int row = 0; row < m; row++) {
        for (int col = 0; col < n; col++) {
            int b = base[row * n + col];
            int a = active[row * n + col];
            int pixel;
            if (b >= 128)
                pixel = 255 - 2 * (255 - b) * (255 - a) / 255;
            else
                pixel = 2 * b * a / 255;
            out[row * n + col] = (uint8_t)pixel;
        }
    }
}
