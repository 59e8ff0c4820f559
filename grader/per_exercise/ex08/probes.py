"""Probes for ex08 (get_batch): batches for seeded generators, as returned (the judge derives the statistics)."""

import torch

from grader.probes.seeding import seed_global


def _pair(returned):
    """(x, y) from what get_batch returned; anything that is not a pair, as it is: the kit's own
    unpacking never raises on the student's behalf (the judge says how the answer differs)."""
    try:
        x, y = returned
    except (TypeError, ValueError):
        return returned
    return (x, y)


def batch(mod, data, block_size, batch_size, seed):
    """get_batch with a fresh generator seeded `seed`: (x, y) as returned."""
    g = torch.Generator().manual_seed(seed)
    return _pair(mod.get_batch(data, block_size, batch_size, generator=g))


def batch_global(mod, data, block_size, batch_size, seed):
    """get_batch without a generator, after torch.manual_seed(seed): uses the global one."""
    seed_global(seed)
    return _pair(mod.get_batch(data, block_size, batch_size))


def draws_once(mod, data, block_size, batch_size, seed):
    """The generator's state AFTER get_batch (read with the class's own method, nothing drawn):
    equal to the reference's iff get_batch drew exactly what the one randint call draws."""
    g = torch.Generator().manual_seed(seed)
    mod.get_batch(data, block_size, batch_size, generator=g)
    return torch.Generator.get_state(g)  # (5056,) uint8: the generator's state, read without drawing


def layout(mod, n, block_size, batch_size, seed):
    """Shapes, dtypes and memory layout of (x, y) on data = arange(n)."""
    g = torch.Generator().manual_seed(seed)
    data = torch.arange(n, dtype=torch.long)
    returned = _pair(mod.get_batch(data, block_size, batch_size, generator=g))
    if not (isinstance(returned, tuple) and len(returned) == 2 and all(isinstance(t, torch.Tensor) for t in returned)):
        return {"returned": type(returned).__name__}  # not two tensors: no layout for the kit to read
    x, y = returned
    return {
        "x_shape": tuple(x.shape),
        "y_shape": tuple(y.shape),
        "x_dtype": str(x.dtype),
        "y_dtype": str(y.dtype),
        "x_contiguous": bool(x.is_contiguous()),
        "y_contiguous": bool(y.is_contiguous()),
    }


def start_batches(mod, n, block_size, batch_size, n_batches, seed):
    """Many batches on data = arange(n), one generator throughout: [(x, y), …] as returned.

    On arange(n), x[:, 0] is the start index ix; the judge reads the facts from these
    batches (grader/per_exercise/ex08/checks.py, `start_facts`): rows are slices, y = x + 1,
    the smallest and largest start, uniform within 5 sigma.
    """
    g = torch.Generator().manual_seed(seed)
    data = torch.arange(n, dtype=torch.long)  # (N,)
    return [mod.get_batch(data, block_size, batch_size, generator=g) for _ in range(n_batches)]


def pairs_from_batch(mod, data, block_size, batch_size, seed):
    """context_target_pairs on each row of a (B, T) batch cut here: `batch_size` windows of
    T + 1 tokens at seeded starts, x their first T tokens and y their last T."""
    g = torch.Generator().manual_seed(seed)
    windows = data.unfold(0, block_size + 1, 1)  # (N - T, T + 1): every window of T + 1 tokens
    rows = windows[torch.randint(windows.shape[0], (batch_size,), generator=g)]  # (B, T + 1)
    x, y = rows[:, :-1], rows[:, 1:]  # (B, T) each
    return [mod.context_target_pairs(x[b], y[b]) for b in range(batch_size)]
