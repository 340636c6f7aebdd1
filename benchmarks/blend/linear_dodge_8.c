/* 8-bit linear dodge (additive): base + active, clamped at white so the byte never wraps. */
#include <stdint.h>

void linear_dodge_8(uint8_t *base, uint8_t *active, uint8_t *out, int m, int n)
{
    for (int row = 0; row < m; row++) {
        for (int col = 0; col < n; col++) {
            int pixel = base[row * n + col] + active[row * n + col];
            if (pixel > 255)
                pixel = 255;
            out[row * n + col] = (uint8_t)pixel;
        }
    }
}
