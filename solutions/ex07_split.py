"""练习 07：按位置切 train / val。

见 bigram 一课「数据换了，切法也得换」：n = int(0.9 * len(data))，前 90% 训练，
后 10% 验证（tiny Shakespeare：1,003,854 / 111,540）。按位置切，不能打乱：文本是连续的，
打乱会让验证集的句子跟训练集的上下文相连，信息泄漏。

Exercise 07: split by position into train / val, from the bigram lesson ("the data
changed, so the split changes too"). Left out: shuffling (deliberately: it leaks context).
"""


def split_train_val(data, train_frac=0.9):
    """按位置切分：n = int(train_frac * len(data))，train = data[:n]，val = data[n:]。

    Split by position: the first n items train, the rest validate. Works for a list, a
    string or a 1-D tensor (slicing keeps the kind). train_frac outside (0, 1): ValueError.

    例（课文）/ Example (the lesson): on tiny Shakespeare (1,115,394 characters)
    len(train) == 1_003_854, len(val) == 111_540.
    小例 / A small one: split_train_val([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 0.75)
    -> ([0, 1, 2, 3, 4, 5, 6], [7, 8, 9])   (int(7.5) == 7，向下取整 / rounds down)
    """
    ### BEGIN SOLUTION
    if not (0 < train_frac < 1):
        raise ValueError(f"train_frac must be in (0, 1), got {train_frac!r}")
    n = int(train_frac * len(data))
    train = data[:n]  # (n,)
    val = data[n:]  # (len(data) - n,)
    return train, val
    ### END SOLUTION
