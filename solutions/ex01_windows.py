"""练习 ex01：训练窗口——输入与右移一位的目标（见 5.2、5.7 练习 1）。

语言模型在每个位置预测「右移一位」的 token：一段长度为 n 的文本，切成长度为
block_size 的窗口后，每个窗口给出 block_size 个 (输入, 目标) 对。本文件只处理
token ID 的切分，不涉及模型。

Exercise ex01: training windows — inputs and targets shifted by one (see 5.2 and
5.7 exercise 1). A language model predicts, at every position, the token one step to
the right; this file only cuts token ids into (input, target) windows, no model.
"""


def shift_pairs(tokens):
    """把一段 token 变成 (输入, 目标)：inputs = tokens[:-1]，targets = tokens[1:]。

    English: split a token sequence into inputs and the targets shifted by one.

    tokens 是 int 列表或 1-D long 张量；列表返回列表，张量返回张量
    （其他序列如 tuple：切片后是什么就返回什么）。
    少于 2 个 token 时无法组成任何 (输入, 目标) 对：抛出 ValueError。

    例（见 5.2）：
        >>> shift_pairs([12, 9, 31, 7, 5])
        ([12, 9, 31, 7], [9, 31, 7, 5])
    """
    ### BEGIN SOLUTION
    if len(tokens) < 2:
        raise ValueError("shift_pairs 需要至少 2 个 token / needs at least 2 tokens")
    inputs = tokens[:-1]  # (n-1,)
    targets = tokens[1:]  # (n-1,)
    return inputs, targets
    ### END SOLUTION


def make_windows(tokens, block_size, stride=1):
    """按 block_size 与 stride 切出全部训练窗口，返回 [(x, y), ...]。

    English: cut every training window (x, y) of length block_size, starting every
    stride tokens, while the target still fits.

    对 i = 0, stride, 2*stride, …，只要 i + block_size + 1 <= len(tokens)：
    x = tokens[i:i+block_size]，y = tokens[i+1:i+block_size+1]（y 是 x 右移一位）。
    返回的 x、y 与输入同一种容器（列表 → 列表，张量 → 张量）。
    block_size < 1 或 stride < 1：ValueError；token 不够一个窗口：返回 []。

    例（5.7 练习 1）：
        >>> make_windows([12, 9, 31, 7, 5], 3)
        [([12, 9, 31], [9, 31, 7]), ([9, 31, 7], [31, 7, 5])]
    """
    ### BEGIN SOLUTION
    if block_size < 1:
        raise ValueError("block_size 必须 >= 1 / block_size must be >= 1")
    if stride < 1:
        raise ValueError("stride 必须 >= 1 / stride must be >= 1")
    windows = []
    i = 0
    while i + block_size + 1 <= len(tokens):
        x = tokens[i:i + block_size]  # (block_size,)
        y = tokens[i + 1:i + block_size + 1]  # (block_size,)
        windows.append((x, y))
        i += stride
    return windows
    ### END SOLUTION


def count_targets(n_tokens, block_size, stride=1):
    """make_windows 在 n_tokens 个 token 上一共给出多少个 next-token 目标（窗口数 × block_size）。

    English: how many next-token targets make_windows yields in total
    (number of windows × block_size).

    不够一个窗口时是 0；block_size < 1 或 stride < 1 时与 make_windows 一样抛 ValueError。

    例：5 个 token、block_size=3 → 2 个窗口 × 3 = 6 个目标。
        >>> count_targets(5, 3)
        6
    """
    ### BEGIN SOLUTION
    if block_size < 1:
        raise ValueError("block_size 必须 >= 1 / block_size must be >= 1")
    if stride < 1:
        raise ValueError("stride 必须 >= 1 / stride must be >= 1")
    if n_tokens < block_size + 1:
        return 0
    n_windows = (n_tokens - block_size - 1) // stride + 1
    return n_windows * block_size
    ### END SOLUTION
