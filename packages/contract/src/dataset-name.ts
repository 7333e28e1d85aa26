/** A dataset's name: what tool-exec's DATASETS keys, a tenant's grants and the model's focus_dataset use. */
export const DATASET_NAME = /^[a-z][a-z0-9_]{0,62}$/;
