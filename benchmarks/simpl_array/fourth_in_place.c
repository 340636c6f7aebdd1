/* simpl_array fourth_in_place: replace every element by its fourth power. */
void fourth_in_place(int *arr, int n)
{
    for (int i = 0; i < n; i++) {
        int sq = arr[i] * arr[i];
        arr[i] = sq * sq;
    }
}
