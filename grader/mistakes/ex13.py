"""ex13 字节级 BPE 的已知错误 / known mistakes of byte-level BPE."""

from grader.judge.mistakes import Mistake

SECTION = "bigram 一课「BPE 是统计出来的，不是设计出来的」"


def _stats(ids):
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def _merge(ids, pair, idx):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _merge_overlapping(ids, pair, idx):
    # 每个匹配的位置都换，且只前进 1：b"aaa" -> [256, 256, 97] / every match, advancing by one
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(idx)
        else:
            out.append(ids[i])
        i += 1
    return out


def _train(text, vocab_size, pick, merge):
    if vocab_size < 256:
        raise ValueError("vocab_size < 256")
    ids = list(text.encode("utf-8"))
    merges = []
    while 256 + len(merges) < vocab_size:
        counts = _stats(ids)
        if not counts:
            break
        pair = pick(counts)
        if counts[pair] < 2:
            break
        idx = 256 + len(merges)
        ids = merge(ids, pair, idx)
        merges.append((pair, idx))
    return merges


def _encode(text, merges, merge):
    ranks = {tuple(p): i for p, i in merges}
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        cands = [p for p in _stats(ids) if p in ranks]
        if not cands:
            break
        pair = min(cands, key=lambda p: ranks[p])
        ids = merge(ids, pair, ranks[pair])
    return ids


def _train_tie_last(text, vocab_size):
    def pick(counts):  # 并列时取最后出现的 / ties: the last one seen
        best = None
        for p, c in counts.items():
            if best is None or c >= counts[best]:
                best = p
        return best
    return _train(text, vocab_size, pick, _merge)


def _train_tie_smallest(text, vocab_size):
    # 并列时取数值最小的那一对 / ties: the smallest pair
    return _train(text, vocab_size, lambda counts: min(counts, key=lambda p: (-counts[p], p)), _merge)


def _train_overlapping(text, vocab_size):
    return _train(text, vocab_size, lambda counts: max(counts, key=counts.get), _merge_overlapping)


def _encode_overlapping(text, merges):
    return _encode(text, merges, _merge_overlapping)


def _encode_highest_first(text, merges):
    # 按新 id 从大到小各用一遍：后学的合并先用，依赖它的前提还不存在 / highest id first
    ids = list(text.encode("utf-8"))
    for pair, idx in sorted(merges, key=lambda m: -m[1]):
        ids = _merge(ids, tuple(pair), idx)
    return ids


def _decode_per_token(ids, merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for (a, b), idx in sorted(merges, key=lambda m: m[1]):
        vocab[idx] = vocab[a] + vocab[b]
    # 每个 token 单独解码：一个汉字的 3 个字节被拆开就成了 � / each token decoded on its own
    return "".join(vocab[int(i)].decode("utf-8", errors="replace") for i in ids)


MISTAKES = [
    Mistake(
        id='ties_last',
        section=SECTION,
        zh="出现次数并列时选错了那一对",
        en="Ties between equally frequent pairs are broken the wrong way",
        fix={"zh": "并列时选在当前序列里最先出现的那一对：按出现顺序数（dict 保留插入顺序），max 返回第一个最大值",
             "en": "On a tie take the pair that occurs first in the current sequence: "
                "count in order of appearance (a dict keeps it) and max returns "
                "the first maximum"},
        overrides={"train_bpe": _train_tie_last},
        hint=2,
    ),
    Mistake(
        id='ties_smallest_pair',
        section=SECTION,
        zh="出现次数并列时选错了那一对",
        en="Ties between equally frequent pairs are broken the wrong way",
        fix={"zh": "并列时选在当前序列里最先出现的那一对：按出现顺序数（dict 保留插入顺序），max 返回第一个最大值",
             "en": "On a tie take the pair that occurs first in the current sequence: "
                "count in order of appearance (a dict keeps it) and max returns "
                "the first maximum"},
        overrides={"train_bpe": _train_tie_smallest},
        hint=2,
    ),
    Mistake(
        id='overlapping_replacement',
        section=SECTION,
        zh="替换时重叠了：同一个字节被两次合并用上了（看 [97, 97, 97] 合并 (97, 97) 之后剩下什么）",
        en="Overlapping replacement: one byte is used by two merges (what "
        "is left of [97, 97, 97] after merging (97, 97)?)",
        fix={"zh": "换掉一对之后 i += 2，跳过两个位置：[97, 97, 97] 合并 (97, 97) 得 [256, 97]",
             "en": "After replacing a pair, i += 2 to skip both positions: [97, "
                "97, 97] becomes [256, 97]"},
        overrides={"train_bpe": _train_overlapping, "bpe_encode": _encode_overlapping},
        hint=1,
    ),
    Mistake(
        id='encode_wrong_order',
        section=SECTION,
        zh="encode 合并的顺序错了：后学的合并建立在先学的之上",
        en="encode applies the merges in the wrong order: later merges build "
        "on earlier ones",
        fix={"zh": "每一轮在当前序列里找新 id 最小的那个可用合并，直到没有可用的",
             "en": "Each round apply the available merge with the lowest new id, "
                "until none applies"},
        overrides={"bpe_encode": _encode_highest_first},
        hint=3,
    ),
    Mistake(
        id='decode_per_token',
        section=SECTION,
        zh="decode 逐个 token 解码了：一个汉字的几个字节可能分在不同的 token 里",
        en="decode decodes token by token: the bytes of one Chinese character "
        "may sit in different tokens",
        fix={"zh": "先把所有 token 的字节拼成一整串 b\"\".join(...)，再一次 .decode(\"utf-8\", errors=\"replace\")",
             "en": "Join every token's bytes into one byte string first, b\"\".join(...)"
                ", then .decode(\"utf-8\", errors=\"replace\") once"},
        overrides={"bpe_decode": _decode_per_token},
        hint=3,
    ),
]
