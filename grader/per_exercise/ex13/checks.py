"""Checks for ex13: byte-level BPE (bigram lesson, "BPE is counted, not designed").

Merges are compared with the reference's exactly (the contract pins ties, the stopping
rule and non-overlapping replacement); encode is checked with the reference's merges, so
a mistake in train_bpe is not charged again there; the round trip uses the student's own
merges, so it holds for any consistent implementation.
"""

import random

import pytest

from grader.judge import check_value, probe, same
from grader.judge.mistakes import Mistake

pytestmark = pytest.mark.exercise("ex13")

MINBPE = "aaabdaaabac"
MINBPE_MERGES = [((97, 97), 256), ((256, 97), 257), ((257, 98), 258)]
CHINESE = "从零写出一个 GPT。token 是自己定义的：模型词表里的一个条目，对应一个整数 ID。"
EMOJI = "🤗 hello 🤗🤗 你好 👨‍👩‍👧 ÿé 🤗 你好世界"


def _char(rng):
    """One code point: ASCII, Latin-1, Chinese, emoji, or anything that is not a surrogate."""
    kind = rng.random()
    if kind < 0.35:
        return rng.choice("abcde  \n.,")
    if kind < 0.45:
        return chr(rng.randint(0xA0, 0xFF))
    if kind < 0.7:
        return rng.choice("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年") if rng.random() < 0.7 \
            else chr(rng.randint(0x4E00, 0x9FFF))
    if kind < 0.85:
        return chr(rng.randint(0x1F600, 0x1F64F)) if rng.random() < 0.5 else rng.choice(["🤗", "👍🏽", "\u200d", "🇨🇳"])
    while True:
        cp = rng.randint(0, 0x10FFFF)
        if not 0xD800 <= cp <= 0xDFFF:
            return chr(cp)


def random_text(seed, n):
    rng = random.Random(seed)
    return "".join(_char(rng) for _ in range(n))


def small_alphabet_text(seed, n, alphabet="abcab"):
    """Few symbols: many pairs tie, so the tie rule decides."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


@pytest.mark.public
@pytest.mark.points(2)
def test_lesson_examples(student, reference):
    """课文与 minbpe 的例子：'aaabdaaabac'，e + s → es | The worked examples"""
    check_value(student, probe("ex13.train", MINBPE, 259), MINBPE_MERGES,
                label=f"train_bpe({MINBPE!r}, 259)", reference=reference)
    check_value(student, probe("ex13.train", "es es es", 257), [((101, 115), 256)],
                label="train_bpe('es es es', 257)", reference=reference)


@pytest.mark.public
@pytest.mark.points(1)
def test_encode_decode_examples(student, reference):
    """存根里的 encode / decode 例子 | The stub's encode / decode examples"""
    check_value(student, probe("ex13.encode", MINBPE, MINBPE_MERGES), [258, 100, 258, 97, 99],
                label=f"bpe_encode({MINBPE!r}, merges)", reference=reference)
    check_value(student, probe("ex13.encode", "你", []), [228, 189, 160], label="bpe_encode('你', [])",
                reference=reference)
    check_value(student, probe("ex13.decode", [228, 189, 160], []), "你", label="bpe_decode([228, 189, 160], [])",
                reference=reference)
    check_value(student, probe("ex13.decode", [258, 100], MINBPE_MERGES), "aaabd",
                label="bpe_decode([258, 100], merges)", reference=reference)
    # the same ids twice over, which no encode returned: decoded, not looked up
    check_value(student, probe("ex13.decode", [228, 189, 160] * 2, []), "你你",
                label="bpe_decode([228, 189, 160, 228, 189, 160], [])", reference=reference)
    check_value(student, probe("ex13.decode", [258, 100] * 2, MINBPE_MERGES), "aaabd" * 2,
                label="bpe_decode([258, 100, 258, 100], merges)", reference=reference)


@pytest.mark.points(2)
def test_no_overlapping_replacement(student, reference):
    """不重叠地从左到右替换：b'aaa' → [256, 97] | Non-overlapping replacement, left to right"""
    for text, vocab in [("aaa", 300), ("aaaa", 300), ("aaaaaaa", 300), ("aaabaaab", 300), ("xaaay" * 3, 300)]:
        same(student, reference, probe("ex13.train", text, vocab), label=f"train_bpe({text!r}, {vocab})")
    merges = [((97, 97), 256)]
    for text in ("aa", "aaa", "aaaa", "baaaab"):  # "aa": two ids merged into one
        same(student, reference, probe("ex13.encode", text, merges), label=f"bpe_encode({text!r}, [((97, 97), 256)])")


@pytest.mark.points(2)
def test_ties_first_occurrence(student, reference):
    """次数并列时取最先出现的那一对 | Ties: the pair that occurs first"""
    for text, vocab in [("cdcdabab", 258), ("zyzyab ab", 300), ("bababa aba", 300), ("你好好你", 260)]:
        same(student, reference, probe("ex13.train", text, vocab), label=f"train_bpe({text!r}, {vocab})")
    for seed in range(4):
        text = small_alphabet_text(seed, 40)
        same(student, reference, probe("ex13.train", text, 270), label=f"train_bpe(<{len(text)} chars of a/b/c>, 270)")


@pytest.mark.points(1)
def test_stopping(student, reference):
    """次数 < 2 就停；到 vocab_size 就停；空文本 | Stop below count 2, at vocab_size; empty text"""
    cases = [("abcdef", 1000), ("abab", 1000), (CHINESE, 256), (CHINESE, 257), (CHINESE * 2, 300), ("", 300), ("a", 260)]
    for text, vocab in cases:
        same(student, reference, probe("ex13.train", text, vocab), label=f"train_bpe({text[:12]!r}…, {vocab})")
    same(student, reference, probe("ex13.encode", "", MINBPE_MERGES), label="bpe_encode('', merges)")
    same(student, reference, probe("ex13.decode", [], MINBPE_MERGES), label="bpe_decode([], merges)")


@pytest.mark.points(1)
def test_vocab_size_below_256(student, reference):
    """vocab_size < 256：ValueError | vocab_size below 256 raises ValueError"""
    for vocab in (255, 0, 100):
        same(student, reference, probe("ex13.train", "hello", vocab), label=f"train_bpe('hello', {vocab})")


@pytest.mark.points(2)
def test_train_random_texts(student, reference):
    """随机文本（中英文、emoji）上的合并表与参考一致 | Random texts: the reference's merges"""
    texts = [(random_text(seed, 120), 256 + 30) for seed in range(4)]
    texts += [(CHINESE * 3, 300), (EMOJI * 2, 290), (small_alphabet_text(9, 300, "ab \n"), 320)]
    for text, vocab in texts:
        same(student, reference, probe("ex13.train", text, vocab), label=f"train_bpe(<{len(text)} chars>, {vocab})")


@pytest.mark.points(2)
def test_encode_with_reference_merges(student, reference):
    """用参考的合并表 encode：新 id 小的先合并 | Encode with the reference's merges, lowest id first"""
    for seed, (train_text, vocab) in enumerate([(CHINESE * 3 + EMOJI, 320), (MINBPE * 4, 270),
                                                (small_alphabet_text(3, 400, "abc "), 300)]):
        merges = reference.observe(probe("ex13.train", train_text, vocab)).value
        for text in (train_text[:60], random_text(100 + seed, 50), CHINESE + EMOJI, "aaab" * 3):
            same(student, reference, probe("ex13.encode", text, merges),
                 label=f"bpe_encode(<{len(text)} chars>, <{len(merges)} merges>)")


@pytest.mark.points(1)
def test_decode_whole_bytes(student, reference):
    """先拼整串字节再解码；无效字节换成 � | Decode the whole byte string; invalid bytes become �"""
    split_char = [((189, 160), 256)]  # '你' = e4 bd a0: the token 256 holds its last two bytes
    same(student, reference, probe("ex13.decode", [228, 256], split_char), label="bpe_decode([228, 256], [((189, 160), 256)])")
    same(student, reference, probe("ex13.decode", [228, 189], []), label="bpe_decode([228, 189], [])")
    same(student, reference, probe("ex13.decode", [104, 255, 105], []), label="bpe_decode([104, 255, 105], [])")
    # a token whose bytes hold a later token: the table is built in the order of the new ids
    nested = [((228, 189), 256), ((97, 256), 257)]
    same(student, reference, probe("ex13.decode", [257, 160], nested), label=f"bpe_decode([257, 160], {nested})")
    merges = reference.observe(probe("ex13.train", EMOJI * 3, 300)).value
    ids = reference.observe(probe("ex13.encode", EMOJI, merges)).value
    same(student, reference, probe("ex13.decode", ids, merges), label="bpe_decode(bpe_encode(emoji text))")


@pytest.mark.points(2)
def test_roundtrip_own_merges(student, reference, draws):
    """decode(encode(t)) == t：中文、emoji、任意 Unicode | Round trip for any string"""
    # hidden inputs: the random texts drawn per submission when the course has a secret (grader.judge.draws)
    texts = [CHINESE, EMOJI, "", "a", "aaa", "\x00\n\t", "𠮷野家"] + [random_text(draws.seed(200 + s), 80) for s in range(6)]
    for train_text, vocab in [(CHINESE * 2 + EMOJI * 2, 320), (random_text(draws.seed(7), 300), 300), ("aaaa" * 10, 262)]:
        same(student, reference, probe("ex13.roundtrip", train_text, vocab, texts),
             label=f"decode(encode(t)) with train_bpe(<{len(train_text)} chars>, {vocab})")


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

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
