/* llama2.c multi-head attention, output of one head: the attention-weighted sum of the
 * cached value rows, xb[h * head_size + i] = sum over t <= pos of att[t] * v[t][h * head_size + i]. */
void transformer_part2(float *xb, float *att, float *value_cache, int pos, int head, int head_size, int kv_dim)
{
    for (int i = 0; i < head_size; i++) {
        float acc = 0.0f;
        for (int t = 0; t <= pos; t++)
            acc += att[t] * value_cache[t * kv_dim + head * head_size + i];
        xb[head * head_size + i] = acc;
    }
}
