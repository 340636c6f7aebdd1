/* 8-bit screen blend: base + active - base * active / 255 (inverse multiply); stays in [0, 255]. */
#include <stdint.h>

void screen_blend_8(uint8_t *base, uint8_t *active, uint8_t *out, int m, int n)
{
    for (int row = 0; row < m; row++) {
        for (int col = 0; col < n; col++) {
            int b = base[row * n + col];
            int a = active[row * n + col];
            out[row * n + col] = (uint8_t)(b + a - b * a / 255);
        }
    }
}
