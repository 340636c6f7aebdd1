/* Floating-point normal blend: opacity * active + (1 - opacity) * base, pixels in [0, 1]. */
void normal_blend_f(float *base, float *active, float *out, int m, int n, float opacity)
{
    for (int row = 0; row < m; row++) {
        for (int col = 0; col < n; col++)
            out[row * n + col] = opacity * active[row * n + col] + (1.0f - opacity) * base[row * n + col];
    }
}
