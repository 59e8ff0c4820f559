"""Probes for ex08 (get_batch): batches for seeded generators, and start-index statistics."""

import math

import torch


def batch(mod, data, block_size, batch_size, seed):
    """get_batch with a fresh generator seeded `seed`: (x, y) as returned."""
    g = torch.Generator().manual_seed(seed)
    x, y = mod.get_batch(data, block_size, batch_size, generator=g)
    return (x, y)


def batch_global(mod, data, block_size, batch_size, seed):
    """get_batch without a generator, after torch.manual_seed(seed): uses the global one."""
    torch.manual_seed(seed)
    x, y = mod.get_batch(data, block_size, batch_size)
    return (x, y)


def draws_once(mod, data, block_size, batch_size, seed):
    """What the generator gives AFTER get_batch: equal to the reference's iff get_batch
    drew exactly what the one randint call draws."""
    g = torch.Generator().manual_seed(seed)
    mod.get_batch(data, block_size, batch_size, generator=g)
    return torch.randint(1_000_000, (4,), generator=g)


def layout(mod, n, block_size, batch_size, seed):
    """Shapes, dtypes and memory layout of (x, y) on data = arange(n)."""
    g = torch.Generator().manual_seed(seed)
    data = torch.arange(n, dtype=torch.long)
    x, y = mod.get_batch(data, block_size, batch_size, generator=g)
    return {
        "x_shape": tuple(x.shape),
        "y_shape": tuple(y.shape),
        "x_dtype": str(x.dtype),
        "y_dtype": str(y.dtype),
        "x_contiguous": bool(x.is_contiguous()),
        "y_contiguous": bool(y.is_contiguous()),
    }


def start_stats(mod, n, block_size, batch_size, n_batches, seed):
    """Many batches on data = arange(n), so x[:, 0] is the start index ix.

    Returns facts, not counts, so every correct sampler gives the same answer:
    - each row of x is a slice of consecutive ids and y = x + 1 (the shift);
    - the smallest and largest start drawn (0 and n - block_size - 1 expected);
    - whether every possible start's count is within 5 sigma of uniform, and no start
      outside [0, n - block_size - 1] was drawn.
    """
    g = torch.Generator().manual_seed(seed)
    data = torch.arange(n, dtype=torch.long)  # (N,)
    starts = []
    rows_ok = True
    shift_ok = True
    offsets = torch.arange(block_size)  # (T,)
    for _ in range(n_batches):
        x, y = mod.get_batch(data, block_size, batch_size, generator=g)  # (B, T)
        x = torch.as_tensor(x)
        y = torch.as_tensor(y)
        if tuple(x.shape) != (batch_size, block_size) or tuple(y.shape) != (batch_size, block_size):
            rows_ok = False
            shift_ok = False
            break
        ix = x[:, 0]  # (B,)
        rows_ok = rows_ok and bool((x == ix[:, None] + offsets[None, :]).all())
        shift_ok = shift_ok and bool((y == x + 1).all())
        starts.append(ix.long())
    if not starts:  # the shapes say how they are wrong (B and T swapped, one id too many, …)
        return {"rows_are_slices": rows_ok, "y_is_x_plus_1": shift_ok, "min_start": None,
                "max_start": None, "uniform_within_5_sigma": False,
                "shapes": (tuple(x.shape), tuple(y.shape))}
    ix = torch.cat(starts)  # (n_batches * B,)
    n_starts = n - block_size  # possible starts: 0 .. n - block_size - 1
    total = ix.numel()
    counts = torch.bincount(ix.clamp(min=0), minlength=n)  # (n,)
    p = 1.0 / n_starts
    sigma = math.sqrt(total * p * (1 - p))
    expected = total * p
    inside = counts[:n_starts].double()
    uniform = bool(((inside - expected).abs() <= 5 * sigma).all()) and int(counts[n_starts:].sum()) == 0 \
        and int(ix.min()) >= 0
    return {
        "rows_are_slices": rows_ok,
        "y_is_x_plus_1": shift_ok,
        "shapes": ((batch_size, block_size), (batch_size, block_size)),
        "min_start": int(ix.min()),
        "max_start": int(ix.max()),
        "uniform_within_5_sigma": uniform,
    }


def pairs_from_batch(mod, data, block_size, batch_size, seed):
    """context_target_pairs on each row of a reference-style batch built here."""
    g = torch.Generator().manual_seed(seed)
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=g)  # (B,)
    x = torch.stack([data[i : i + block_size] for i in ix])  # (B, T)
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix])  # (B, T)
    return [mod.context_target_pairs(x[b], y[b]) for b in range(batch_size)]
