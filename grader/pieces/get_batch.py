"""The correct get_batch (ex08), for grading the exercises that build on it."""

import torch


def get_batch(data, block_size, batch_size, generator=None):
    """ex08: one randint call, then x[b] = data[ix[b]:ix[b]+T], y shifted by one."""
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)  # (B,)
    x = torch.stack([data[i : i + block_size] for i in ix])  # (B, T)
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix])  # (B, T)
    return x, y
