"""练习 10：初始 loss 这把尺子。

见 bigram 一课「★ 初始 loss 比瞎猜还差一半」：均匀瞎猜的 loss 是 ln(词表大小)
（65 个字符是 4.174）；初始 loss 4.87 换算回去，模型给正确答案的平均概率是
e^-4.87 = 0.77%，只有均匀瞎猜 1/65 = 1.54% 的一半。病因是初始权重太大：把嵌入表的
初始值缩小（N(0, 0.01²)），初始 loss 就回到 ln V 附近。

Exercise 10: the initial loss as a ruler, from the bigram lesson ("the initial loss is
twice as bad as guessing"). Left out: per-layer init schemes (Kaiming, etc.).
"""

import math

import torch


def uniform_loss(vocab_size):
    """均匀瞎猜的交叉熵：ln V（自然对数）。

    The cross-entropy of a uniform guess over V classes: ln V (natural log), as a float.

    例（课文）/ Example (the lesson): uniform_loss(65) ≈ 4.174; uniform_loss(27) ≈ 3.2958
    """
    ### BEGIN SOLUTION
    return math.log(vocab_size)
    ### END SOLUTION


def mean_correct_prob(loss):
    """把 loss 换算回「给正确答案的平均概率」：exp(-loss)，是小数不是百分数。

    The (geometric-)mean probability given to the right answer: exp(-loss), a fraction
    (not a percentage).

    例（课文）/ Example (the lesson): mean_correct_prob(4.87) ≈ 0.0077 (0.77%);
    mean_correct_prob(math.log(65)) == 1/65 ≈ 0.0154
    """
    ### BEGIN SOLUTION
    return math.exp(-loss)
    ### END SOLUTION


def init_is_suspicious(initial_loss, vocab_size, tol=0.1):
    """初始 loss 比 ln V 高出 tol 以上就可疑（初始化有问题）。

    True when the initial loss exceeds ln V by more than tol (the init is too confident).

    例（课文）/ Example (the lesson): init_is_suspicious(4.87, 65) is True (4.87 > 4.174 + 0.1);
    init_is_suspicious(4.18, 65) is False
    """
    ### BEGIN SOLUTION
    return initial_loss - math.log(vocab_size) > tol
    ### END SOLUTION


def small_init_(embedding, std=0.01):
    """原地把 nn.Embedding 的权重重新填成 N(0, std²)，返回 None。

    Refill an nn.Embedding's weight in place from N(0, std²) (same Parameter object, so an
    optimizer built earlier still sees it). Returns None. After it, a fresh bigram model's
    loss is within 0.05 of ln V.

    例 / Example:
        m = BigramLanguageModel(65)          # 默认 N(0, 1) 初始化：loss ≈ 4.87
        small_init_(m.token_embedding_table) # 之后 / after: loss ≈ 4.174 = ln 65
    """
    ### BEGIN SOLUTION
    with torch.no_grad():
        embedding.weight.normal_(mean=0.0, std=std)  # (V, C), in place
    return None
    ### END SOLUTION
