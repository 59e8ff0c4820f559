"""练习 09：bigram 语言模型。

见 bigram 一课「查表就是一层全连接」「one-hot × W = 查表」「(B, T, C)」
「view 拉平为什么不会错位」「generate：自回归的全部」：整个模型就是一张
nn.Embedding(V, V) 表（V=65 时 4,225 个参数）；forward 查表得到 (B, T, C) 的 logits，
拉平成 (B*T, C) 算交叉熵；generate 每一步只取最后一个位置，softmax 后按概率抽签。

Exercise 09: the bigram language model, from the bigram lesson ("a lookup is a fully
connected layer", "one-hot × W = lookup", "(B, T, C)", "why view does not misalign rows",
"generate: all there is to autoregression"). Here C == V: the looked-up row IS the scores.
Left out: temperature, context cropping (a bigram only looks at the last id), KV cache.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class BigramLanguageModel(nn.Module):
    """bigram 模型：下一个字符的得分只由当前字符查表得到。

    The bigram model: the next character's scores are a table lookup of the current one.

    例 / Example:
        >>> m = BigramLanguageModel(65)
        >>> sum(p.numel() for p in m.parameters())
        4225
        >>> logits, loss = m(torch.zeros((4, 8), dtype=torch.long))
        >>> logits.shape, loss
        (torch.Size([4, 8, 65]), None)
    """

    def __init__(self, vocab_size):
        """建一张 vocab_size × vocab_size 的表：self.token_embedding_table。

        One (V, V) table, self.token_embedding_table = nn.Embedding(V, V)
        (first V: how many characters; second V: one score per candidate next character).

        例 / Example: BigramLanguageModel(65) 有 65 × 65 = 4,225 个参数 / has 4,225 parameters.
        """
        super().__init__()
        ### BEGIN SOLUTION
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)
        ### END SOLUTION

    def forward(self, idx, targets=None):
        """查表得 logits；给了 targets 就算交叉熵。返回 (logits, loss)。

        Look up the logits; with targets also the cross-entropy. Returns (logits, loss):
        logits is (B, T, V) (本参考实现总是返回 (B, T, V)；给了 targets 时返回课文脚本那样
        拉平的 (B*T, V) 也算对 / this reference always returns (B, T, V); returning the
        flattened (B*T, V) when targets are given, as the lesson's script does, is also
        accepted). loss is None without targets, else
        F.cross_entropy(logits.view(B*T, V), targets.view(B*T)).

        例 / Example: idx, targets 都是 (4, 8) → logits (4, 8, 65)，loss 是 0 维张量；
        初始化后 loss 约 4.87（比 ln 65 = 4.174 高，见 ex10）
        / idx, targets (4, 8) → logits (4, 8, 65), loss a 0-dim tensor (≈ 4.87 at init).
        """
        ### BEGIN SOLUTION
        logits = self.token_embedding_table(idx)  # (B, T) -> (B, T, C)
        if targets is None:
            return logits, None
        B, T, C = logits.shape
        flat_logits = logits.view(B * T, C)  # (B*T, C): row b*T + t is position (b, t)
        flat_targets = targets.view(B * T)  # (B*T,)
        loss = F.cross_entropy(flat_logits, flat_targets)  # ()
        return logits, loss
        ### END SOLUTION

    def generate(self, idx, max_new_tokens, generator=None):
        """自回归生成：预测 → 抽签 → 接上 → 再预测，共 max_new_tokens 次。

        Autoregressive generation: each step takes the LAST position's logits, softmax,
        exactly one torch.multinomial(probs, 1, generator=generator), and appends.
        Returns (B, T + max_new_tokens) long.

        例（课文）/ Example (the lesson):
            idx = torch.zeros((1, 1), dtype=torch.long)   # [[0]]：换行，新起一段
            out = m.generate(idx, max_new_tokens=100)     # (1, 101)
            decode(out[0].tolist())
        """
        ### BEGIN SOLUTION
        for _ in range(max_new_tokens):
            logits, _ = self(idx)  # (B, T, C)
            logits = logits[:, -1, :]  # (B, C): 只要最后一个位置 / only the last position
            probs = F.softmax(logits, dim=-1)  # (B, C)
            idx_next = torch.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)
            idx = torch.cat((idx, idx_next), dim=1)  # (B, T+1)
        return idx
        ### END SOLUTION


def one_hot_lookup(idx, weight):
    """one-hot × W = 查表：F.one_hot(idx, V).float() @ weight，结果等于 weight[idx]。

    One-hot times W is a lookup: F.one_hot(idx, V).float() @ weight, where V = weight.shape[0];
    equal to the embedding lookup of the same weight (nn.Embedding is a bias-free linear layer).

    例（课文）/ Example (the lesson): 当前字符是 'h'（编号 46）时只有那一格是 1，
    输出恰好是 W 的第 46 行 / for 'h' (id 46) the output is exactly row 46 of W:
        one_hot_lookup(torch.tensor([46]), W)[0] == W[46]
    形状 / shapes: idx (B, T), weight (V, C) -> (B, T, C)
    """
    ### BEGIN SOLUTION
    V = weight.shape[0]
    one_hot = F.one_hot(idx, V).float()  # (B, T, V)
    return one_hot @ weight  # (B, T, V) @ (V, C) -> (B, T, C)
    ### END SOLUTION


def flat_index(b, t, T):
    """(b, t) 位置在 view(B*T, C) 之后是第几行：b*T + t。

    The row of position (b, t) after view(B*T, C): b*T + t (row-major, the last dim is
    contiguous, so every C numbers are one whole position).

    例 / Example: T = 8 时 (b=2, t=3) 在第 2*8 + 3 = 19 行 / with T = 8, (2, 3) is row 19:
        flat_index(2, 3, 8) == 19
    """
    ### BEGIN SOLUTION
    return b * T + t
    ### END SOLUTION
