/* llama2.c multi-head attention, scores of one head: for every timestep t <= pos,
 * att[t] = (q_h . k_t,h) / sqrt(head_size), where head h's slice of the query and of each
 * cached key row (kv_dim wide) starts at h * head_size. */
#include <math.h>

void transformer_part1(float *att, float *q, float *key_cache, int pos, int head, int head_size, int kv_dim)
{
    for (int t = 0; t <= pos; t++) {
        float score = 0.0f;
        for (int i = 0; i < head_size; i++)
            score += q[head * head_size + i] * key_cache[t * kv_dim + head * head_size + i];
        score /= sqrtf(head_size);
        att[t] = score;
    }
}
