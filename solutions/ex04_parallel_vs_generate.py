"""练习 ex04：训练时并行、生成时逐 token（见 5.7 练习 4，与 bigram 一课的 generate）。

训练时，一次带因果 mask 的前向就给出全部 T 个位置的 logits：位置 t 只看得见
0…t（下三角 mask），它的答案（第 t+1 个 token）早已在数据里。prefix_logits 用 T 次
单独调用把这件事「慢动作」做一遍，结果和一次因果前向相同。
生成时，下一个 token 要等上一步抽出来才知道，所以只能一步一步：
预测 → 抽签 → 接上 → 再预测。

Exercise ex04: parallel training, sequential generation (see 5.7 exercise 4 and the
bigram lesson's generate). A model here is any callable mapping ids [B, t] to logits
[B, t, V].
"""

import torch
import torch.nn.functional as F


def causal_mask(T):
    """因果 mask：[T, T] 的布尔张量，(i, j) 处为 True 当且仅当 j <= i（位置 i 能看见 j）。

    English: the causal mask, a [T, T] bool tensor, True at (i, j) iff j <= i.

    例（下三角，含对角线）：
        >>> causal_mask(3)
        tensor([[ True, False, False],
                [ True,  True, False],
                [ True,  True,  True]])
    """
    ### BEGIN SOLUTION
    i = torch.arange(T).unsqueeze(1)  # (T, 1)
    j = torch.arange(T).unsqueeze(0)  # (1, T)
    return j <= i  # (T, T)
    ### END SOLUTION


def prefix_logits(model, idx):
    """用 T 次单独调用，拼出每个前缀最后一个位置的 logits，返回 [B, T, V]。

    English: row t is the last position of model(idx[:, :t+1]); T separate calls give
    what one causal forward pass gives all at once.

    例：一个「数到目前为止每个 token 出现几次」的因果模型，前缀结果就等于一次前向：
        >>> counts = lambda idx: F.one_hot(idx, 4).float().cumsum(dim=1)
        >>> idx = torch.tensor([[1, 3, 1]])
        >>> torch.equal(prefix_logits(counts, idx), counts(idx))
        True
    """
    ### BEGIN SOLUTION
    B, T = idx.shape
    rows = []
    for t in range(T):
        logits = model(idx[:, :t + 1])  # (B, t+1, V)
        rows.append(logits[:, -1, :])  # (B, V)
    return torch.stack(rows, dim=1)  # (B, T, V)
    ### END SOLUTION


def generate(model, idx, max_new_tokens, block_size=None, temperature=1.0, generator=None):
    """自回归生成 max_new_tokens 个 token，返回 [B, T + max_new_tokens] 的 long 张量。

    English: autoregressive sampling; each step crops the context to the last block_size
    ids (if given), takes model(context)[:, -1, :] / temperature, softmax, then exactly one
    torch.multinomial(probs, num_samples=1, generator=generator), and appends.

    每一步只用最后一个位置的 logits（前面的位置对应的 token 已经在序列里了）；
    temperature 是除数（除以 T 再 softmax）；temperature <= 0：ValueError。
    model 恰好被调用 max_new_tokens 次。

    例：一个总是把「上一个 token + 1」打到 100 分的模型，抽签几乎是确定的：
        >>> plus_one = lambda idx: 100.0 * F.one_hot((idx + 1) % 5, 5).float()
        >>> generate(plus_one, torch.tensor([[0]]), 3)
        tensor([[0, 1, 2, 3]])
    """
    ### BEGIN SOLUTION
    if temperature <= 0:
        raise ValueError("temperature 必须 > 0 / temperature must be > 0")
    for _ in range(max_new_tokens):
        idx_cond = idx if block_size is None else idx[:, -block_size:]  # (B, <=block_size)
        logits = model(idx_cond)  # (B, t, V)
        logits = logits[:, -1, :] / temperature  # (B, V)
        probs = F.softmax(logits, dim=-1)  # (B, V)
        idx_next = torch.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)
        idx = torch.cat((idx, idx_next), dim=1)  # (B, t+1)
    return idx
    ### END SOLUTION


# 5.7 练习 4 的书面回答（笔记本版本人工批改；命令行只检查它不是空的）。
# The written answer to 5.7 exercise 4 (graded by hand in the notebook version).
### BEGIN SOLUTION 填一个 str：用自己的话回答（中文或英文）/ a str: your answer in your own words
WHY_PARALLEL = (
    "训练时整段文本都已知：位置 t 的输入是 0…t，答案是第 t+1 个 token，全都在数据里。"
    "因果 mask 让位置 t 只看得见 0…t，所以一次前向就能同时算出 T 个位置的 logits 和 loss，"
    "互不偷看，也互不等待。生成时第 t+1 个 token 要先从位置 t 的分布里抽出来，"
    "才能成为下一步的输入，后一步依赖前一步的结果，只能逐 token 解码"
    "（KV cache 只省掉重复计算，不改变这种先后依赖）。"
    " / In training every target is already in the data and the causal mask keeps "
    "position t from seeing later tokens, so one forward pass scores all T positions; "
    "in generation each new token must be sampled before it can be fed back in, so "
    "decoding is one token at a time."
)
### END SOLUTION
