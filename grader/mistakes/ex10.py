"""ex10 初始 loss 的已知错误 / known mistakes of the initial-loss ruler.

契约没有为 ex10 列出错误；这里是最常见的几种。
The contract lists none for ex10; these are the common ones.
"""

from grader.judge.mistakes import Mistake

_SECTION = "bigram 一课「★ 初始 loss 比瞎猜还差一半」"


def _uniform_loss_log2(vocab_size):
    import math

    return math.log2(vocab_size)


def _mean_correct_prob_percent(loss):
    import math

    return 100 * math.exp(-loss)


def _init_is_suspicious_abs(initial_loss, vocab_size, tol=0.1):
    import math

    return abs(initial_loss - math.log(vocab_size)) > tol


def _small_init_variance(embedding, std=0.01):
    import torch

    with torch.no_grad():
        embedding.weight.normal_(mean=0.0, std=std**2)  # 把方差当标准差 / variance as std


def _small_init_zeros(embedding, std=0.01):
    import torch

    with torch.no_grad():
        embedding.weight.zero_()


MISTAKES = [
    Mistake(
        id="log2_not_ln",
        section=_SECTION,
        zh="用了以 2 为底的对数：交叉熵用自然对数，均匀瞎猜是 ln V（65 个字符是 4.174）"
        "（见 bigram 一课「初始 loss 比瞎猜还差一半」）",
        en="log base 2: cross-entropy uses the natural log; a uniform guess is ln V (4.174 for 65) "
        "(bigram lesson, \"the initial loss is twice as bad as guessing\")",
        overrides={"uniform_loss": _uniform_loss_log2},
        hint=2,
    ),
    Mistake(
        id="percent_not_fraction",
        section=_SECTION,
        zh="返回了百分数：要返回小数 exp(-loss)，4.87 → 0.0077（即 0.77%）"
        "（见 bigram 一课「初始 loss 比瞎猜还差一半」）",
        en="A percentage: return the fraction exp(-loss), 4.87 → 0.0077 (that is 0.77%) "
        "(bigram lesson, \"the initial loss is twice as bad as guessing\")",
        overrides={"mean_correct_prob": _mean_correct_prob_percent},
        hint=2,
    ),
    Mistake(
        id="suspicious_both_ways",
        section=_SECTION,
        zh="比 ln V 低不算可疑：只有初始 loss 比 ln V 高出 tol 以上才说明初始化有问题（用差值，不用绝对值）"
        "（见 bigram 一课「初始 loss 比瞎猜还差一半」：初始 loss 比它高，说明初始化有问题）",
        en="Below ln V is not suspicious: only an initial loss more than tol ABOVE ln V signals a "
        "bad init (no abs) (bigram lesson: \"higher than it means the init is wrong\")",
        overrides={"init_is_suspicious": _init_is_suspicious_abs},
        hint=3,
    ),
    Mistake(
        id="std_as_variance",
        section=_SECTION,
        zh="把 std² 当成了标准差：权重应来自 N(0, std²)，即标准差是 std（normal_(0.0, std)）"
        "（见 bigram 一课「初始 loss 比瞎猜还差一半」）",
        en="std² used as the standard deviation: draw from N(0, std²), i.e. normal_(0.0, std) "
        "(bigram lesson, \"the initial loss is twice as bad as guessing\")",
        overrides={"small_init_": _small_init_variance},
        hint=3,
    ),
    Mistake(
        id="zeros_not_normal",
        section=_SECTION,
        zh="权重全设成了 0：loss 正好是 ln V，但要求是从 N(0, std²) 重新抽样（全零的表没有随机性）"
        "（见 bigram 一课「初始 loss 比瞎猜还差一半」）",
        en="All weights set to zero: the loss is exactly ln V, but the task is to redraw from "
        "N(0, std²) (bigram lesson, \"the initial loss is twice as bad as guessing\")",
        overrides={"small_init_": _small_init_zeros},
        hint=3,
    ),
]
