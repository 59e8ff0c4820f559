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


def _small_init_new_parameter(embedding, std=0.01):
    import torch
    import torch.nn as nn

    embedding.weight = nn.Parameter(torch.randn_like(embedding.weight) * std)  # a new table / 换了一张新表


MISTAKES = [
    Mistake(
        id='log2_not_ln',
        section=_SECTION,
        zh="对数的底不对：交叉熵用自然对数，这里是以 2 为底",
        en="The wrong logarithm: cross-entropy uses the natural log, this "
        "is base 2",
        fix={"zh": "uniform_loss 返回 math.log(vocab_size)",
             "en": "uniform_loss returns math.log(vocab_size)"},
        overrides={"uniform_loss": _uniform_loss_log2},
        hint=2,
    ),
    Mistake(
        id='percent_not_fraction',
        section=_SECTION,
        zh="返回了百分数：要的是 0 到 1 之间的小数",
        en="A percentage: the answer is a fraction between 0 and 1",
        fix={"zh": "返回 math.exp(-loss)，不要乘 100",
             "en": "Return math.exp(-loss), without the factor 100"},
        overrides={"mean_correct_prob": _mean_correct_prob_percent},
        hint=2,
    ),
    Mistake(
        id='suspicious_both_ways',
        section=_SECTION,
        zh="比 ln V 低也被当成了可疑：只有比 ln V 高出 tol 以上才说明初始化有问题",
        en="Below ln V is taken as suspicious too: only more than tol ABOVE "
        "ln V signals a bad init",
        fix={"zh": "return initial_loss - math.log(vocab_size) > tol（不要 abs）",
             "en": "return initial_loss - math.log(vocab_size) > tol (no abs)"},
        overrides={"init_is_suspicious": _init_is_suspicious_abs},
        hint=3,
    ),
    Mistake(
        id='std_as_variance',
        section=_SECTION,
        zh="标准差用错了：权重的标准差成了 std²（把方差当成了标准差），应当是 std",
        en="The wrong spread: the weights' standard deviation came out as "
        "std² (the variance taken for the std); it should be std",
        fix={"zh": "在 torch.no_grad() 里 embedding.weight.normal_(0.0, std)",
             "en": "Inside torch.no_grad(): embedding.weight.normal_(0.0, std)"},
        overrides={"small_init_": _small_init_variance},
        hint=3,
    ),
    Mistake(
        id='new_parameter',
        section=_SECTION,
        zh="换掉了 Parameter：embedding.weight 被赋成了一个新的 nn.Parameter，数值分布对，但之前建好的优化器"
        "（和其他引用这张表的地方）还拿着旧的那张表",
        en="The Parameter was replaced: embedding.weight was assigned a new nn.Parameter; its values are "
        "right, but an optimizer built before (and anything else holding the table) still has the old one",
        fix={"zh": "不要给 embedding.weight 赋新值：在 torch.no_grad() 里原地 embedding.weight.normal_(0.0, std)",
             "en": "Do not assign embedding.weight: refill it in place, inside torch.no_grad(): "
                   "embedding.weight.normal_(0.0, std)"},
        overrides={"small_init_": _small_init_new_parameter},
        hint=3,
    ),
    Mistake(
        id='zeros_not_normal',
        section=_SECTION,
        zh="权重全设成了 0：loss 正好是 ln V，但表里没有任何随机性",
        en="All weights set to zero: the loss is exactly ln V, but the table "
        "has no randomness at all",
        fix={"zh": "从 N(0, std²) 重新抽样：embedding.weight.normal_(0.0, std)",
             "en": "Redraw from N(0, std²): embedding.weight.normal_(0.0, std)"},
        overrides={"small_init_": _small_init_zeros},
        hint=3,
    ),
]
