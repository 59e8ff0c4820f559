"""The correct estimate_loss (ex11), for grading ex12."""

import torch

from grader.pieces.get_batch import get_batch


def estimate_loss(model, splits, block_size, batch_size, eval_iters, generator=None):
    """ex11: per split, the mean of eval_iters batch losses; no grad, eval mode, mode restored."""
    was_training = model.training
    model.eval()
    out = {}
    try:
        with torch.no_grad():
            for name, data in splits.items():
                losses = []
                for _ in range(eval_iters):
                    x, y = get_batch(data, block_size, batch_size, generator=generator)  # (B, T)
                    _, loss = model(x, y)
                    losses.append(loss.item())
                out[name] = sum(losses) / len(losses)
    finally:
        model.train(was_training)
    return out
