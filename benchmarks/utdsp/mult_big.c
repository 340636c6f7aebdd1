/* UTDSP mult (big variant): matrix product c = a * b on fixed-size float matrices,
 * accumulating straight into the output. */
#ifndef A_ROW
#define A_ROW 10
#endif
#ifndef A_COL
#define A_COL 10
#endif
#ifndef B_COL
#define B_COL 10
#endif

void mult_big(float a[A_ROW][A_COL], float b[A_COL][B_COL], float c[A_ROW][B_COL])
{
    int i, j, k;
    for (i = 0; i < A_ROW; i++) {
        for (j = 0; j < B_COL; j++) {
            c[i][j] = 0;
            for (k = 0; k < A_COL; k++)
                c[i][j] += a[i][k] * b[k][j];
        }
    }
}
