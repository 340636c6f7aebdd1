/* 8-bit linear burn: base + active - 255, clamped at black because the sum can fall below 255. */
#include <stdint.h>

void linear_burn_8(uint8_t *base, uint8_t *active, uint8_t *out, int m, int n)
{
    for (int row = 0; row < m; row++) {
        for (int col = 0; col < n; col++) {
            int pixel = base[row * n + col] + active[row * n + col] - 255;
            if (pixel < 0)
                pixel = 0;
            out[row * n + col] = (uint8_t)pixel;
        }
    }
}
