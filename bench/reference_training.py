"""A bare run of the reference training (ex12 with the lesson's defaults), for bench_batch --full.

Fresh interpreter, one torch thread, tiny Shakespeare encoded with the sorted characters,
split 90/10, `train_bigram(train, val, vocab_size)` from solutions/. Prints its seconds.
"""

import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "solutions"))
torch.set_num_threads(1)

from grader.data import datasets  # noqa: E402
from ex12_train_bigram import train_bigram  # noqa: E402

text = datasets.resolve("tinyshakespeare", progress=False).read_text(encoding="utf-8")
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)  # (N,)
n = int(0.9 * len(data))
start = time.perf_counter()
train_bigram(data[:n], data[n:], len(chars))
print(f"{time.perf_counter() - start:.2f}")
