/* llama2.c feed-forward, first half of SwiGLU: SiLU in place, hb = hb * sigmoid(hb). */
#include <math.h>

void transformer_part3(float *hb, int hidden_dim)
{
    for (int i = 0; i < hidden_dim; i++) {
        float val = hb[i];
        hb[i] = val * (1.0f / (1.0f + expf(-val)));
    }
}
