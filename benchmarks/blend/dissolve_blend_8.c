/* 8-bit dissolve blend: each pixel shows the active layer with probability opacity percent.
 * The per-pixel random draw comes in as the noise array (bytes) so the kernel is deterministic;
 * it is reduced to a percentage 1..100 the way the rand()-based original reduces rand(). */
#include <stdint.h>

void dissolve_blend_8(uint8_t *base, uint8_t *active, uint8_t *noise, uint8_t *out, int m, int n, int opacity)
{
    for (int row = 0; row < m; row++) {
        for (int col = 0; col < n; col++) {
            int draw = noise[row * n + col] % 100 + 1;
            uint8_t pixel;
            if (opacity - draw >= 0)
                pixel = active[row * n + col];
            else
                pixel = base[row * n + col];
            out[row * n + col] = pixel;
        }
    }
}
