/* UTDSP dct: two-dimensional discrete cosine transform of an N x N block as two matrix
 * products, out = C * in * C^T, with the cosine basis C precomputed by the caller. */
#ifndef N
#define N 8
#endif

void dct(float cos1[N][N], float in[N][N], float temp[N][N], float out[N][N])
{
    int i, j, k;
    float acc;

    /* temp = in * C^T: transform the rows */
    for (i = 0; i < N; i++) {
        for (j = 0; j < N; j++) {
            acc = 0.0f;
            for (k = 0; k < N; k++)
                acc += in[i][k] * cos1[j][k];
            temp[i][j] = acc;
        }
    }

    /* out = C * temp: transform the columns */
    for (i = 0; i < N; i++) {
        for (j = 0; j < N; j++) {
            acc = 0.0f;
            for (k = 0; k < N; k++)
                acc += cos1[i][k] * temp[k][j];
            out[i][j] = acc;
        }
    }
}
