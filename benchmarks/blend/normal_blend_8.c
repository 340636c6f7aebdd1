/* 8-bit normal blend: active over base with an integer opacity in [0, 255]. */
#include <stdint.h>

void normal_blend_8(uint8_t *base, uint8_t *active, uint8_t *out, int m, int n, int opacity)
{
    for (int row = 0; row < m; row++) {
        for (int col = 0; col < n; col++) {
            int b = base[row * n + col];
            int a = active[row * n + col];
            out[row * n + col] = (uint8_t)((opacity * a + (255 - opacity) * b) / 255);
        }
    }
}
