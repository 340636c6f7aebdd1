/* llama2.c feed-forward, second half of SwiGLU: gate the SiLU output, hb = hb * hb2. */
void transformer_part4(float *hb, float *hb2, int hidden_dim)
{
    for (int i = 0; i < hidden_dim; i++)
        hb[i] = hb[i] * hb2[i];
}
