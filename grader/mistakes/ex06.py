"""ex06 字符级 tokenizer 的已知错误 / known mistakes of the character tokenizer."""

from grader.judge.mistakes import Mistake

_SECTION = "bigram 一课「数据换了，切法也得换」"


class _UnsortedTokenizer:
    """词表按首次出现的顺序，没有排序 / vocabulary in order of first appearance."""

    def __init__(self, text):
        self.chars = list(dict.fromkeys(text))
        self.vocab_size = len(self.chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.itos = {i: ch for i, ch in enumerate(self.chars)}

    def encode(self, s):
        return [self.stoi[ch] for ch in s]

    def decode(self, ids):
        return "".join(self.itos[int(i)] for i in ids)


class _SetOrderTokenizer:
    """词表是 list(set(text))：集合的顺序，每次运行都可能不同 / the vocabulary in a set's order."""

    def __init__(self, text):
        self.chars = list(set(text))
        self.vocab_size = len(self.chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.itos = {i: ch for i, ch in enumerate(self.chars)}

    def encode(self, s):
        return [self.stoi[ch] for ch in s]

    def decode(self, ids):
        return "".join(self.itos[int(i)] for i in ids)


def _orders_meant(text: str) -> list[list[str]]:
    """The orders of a text's characters a student may mean: sorted, reversed, first seen, by count."""
    from collections import Counter

    ordered = sorted(set(text))
    return [ordered, ordered[::-1], list(dict.fromkeys(text)), [c for c, _ in Counter(text).most_common()]]


def _in_no_fixed_order(seen) -> bool:
    """Whether every call of the check is a tokenizer's table built consistently on its chars
    (stoi and itos their inverse maps, vocab_size their count), with chars the text's characters
    in some order, and at least one text's chars in none of the orders a student means: a set's
    order (`list(set(text))`), which differs from one process to the next, so no variant can
    reproduce the student's answer to compare it with (grader.judge.mistakes)."""
    arbitrary = False
    for s in seen:
        if s.call.probe != "ex06.tables" or not s.got.ok or type(s.got.value) is not dict:
            return False
        text, value = s.call.args[0], s.got.value
        chars, want = value.get("chars"), sorted(set(text))
        if type(chars) is not list or sorted(chars) != want or value.get("vocab_size") != len(want):
            return False
        if value.get("stoi") != {c: chars.index(c) for c in want} or value.get("itos") != chars:
            return False
        arbitrary = arbitrary or chars not in _orders_meant(text)
    return arbitrary


class _OffByOneTokenizer:
    """编号从 1 开始 / ids start at 1."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.vocab_size = len(self.chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars, start=1)}
        self.itos = {i: ch for i, ch in enumerate(self.chars, start=1)}

    def encode(self, s):
        return [self.stoi[ch] for ch in s]

    def decode(self, ids):
        return "".join(self.itos[int(i)] for i in ids)


class _DecodeSkipsZeroTokenizer:
    """decode 里写了 `if i`，编号 0（换行）被丢掉 / `if i` drops id 0 (the newline)."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.vocab_size = len(self.chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.itos = {i: ch for i, ch in enumerate(self.chars)}

    def encode(self, s):
        return [self.stoi[ch] for ch in s]

    def decode(self, ids):
        return "".join(self.itos[int(i)] for i in ids if int(i))


class _DecodeDropsLastTokenizer:
    """decode 漏了最后一个编号 / decode loses the last id."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.vocab_size = len(self.chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.itos = {i: ch for i, ch in enumerate(self.chars)}

    def encode(self, s):
        return [self.stoi[ch] for ch in s]

    def decode(self, ids):
        ids = [int(i) for i in ids]
        return "".join(self.itos[ids[k]] for k in range(len(ids) - 1))


MISTAKES = [
    Mistake(
        id='unsorted_vocab',
        section=_SECTION,
        zh="词表没有排序：字符的编号和课文对不上（课文里 0 是换行、1 是空格、'h' 是 46）",
        en="The vocabulary is not sorted, so the ids differ from the lesson's "
        "(0 is the newline, 1 the space, 'h' is 46)",
        fix={"zh": "chars = sorted(set(text))，stoi = {ch: i for i, ch in enumerate(chars)"
                "}",
             "en": "chars = sorted(set(text)), stoi = {ch: i for i, ch in enumerate(chars)"
                "}"},
        overrides={"CharTokenizer": _UnsortedTokenizer},
        hint=2,
    ),
    Mistake(
        id='set_order_vocab',
        section=_SECTION,
        zh="词表没有排序：list(set(text)) 的顺序是集合的顺序，不固定（每次运行 Python 都可能不同），"
        "所以字符的编号和课文对不上，换一次运行还会变",
        en="The vocabulary is not sorted: list(set(text)) is in a set's order, which is not fixed (it can "
        "change each time Python runs), so the ids differ from the lesson's, and from one run to the next",
        fix={"zh": "chars = sorted(set(text))（排序后编号才固定：0 是换行、1 是空格）",
             "en": "chars = sorted(set(text)) (sorted, the ids are fixed: 0 is the newline, 1 the space)"},
        overrides={"CharTokenizer": _SetOrderTokenizer},
        explains=_in_no_fixed_order,
        hint=2,
    ),
    Mistake(
        id='off_by_one_ids',
        section=_SECTION,
        zh="编号差一：所有编号都比课文的大 1（换行应当是 0 号）",
        en="Ids off by one: every id is one more than the lesson's (the "
        "newline should be id 0)",
        fix={"zh": "enumerate(chars) 从 0 开始，不要 start=1",
             "en": "enumerate(chars) from 0, no start=1"},
        overrides={"CharTokenizer": _OffByOneTokenizer},
        hint=2,
    ),
    Mistake(
        id='decode_skips_id0',
        section="bigram 一课「token 是自己定义的」",
        zh="decode 丢了编号 0（换行）：它被当成「假」跳过了，decode(encode(s)) 还原不出 s",
        en="decode drops id 0 (the newline): it is falsy and got skipped, "
        "so decode(encode(s)) does not give s back",
        fix={"zh": "\"\".join(self.itos[int(i)] for i in ids)，不要写 if i",
             "en": "\"\".join(self.itos[int(i)] for i in ids), without an if i"},
        overrides={"CharTokenizer": _DecodeSkipsZeroTokenizer},
        hint=3,
    ),
    Mistake(
        id='decode_drops_last',
        section="bigram 一课「token 是自己定义的」",
        zh="decode 丢了最后一个字符：最后一个编号没有被还原",
        en="decode drops the last character: the last id is not decoded",
        fix={"zh": "遍历全部 ids（不要 range(len(ids) - 1)）",
             "en": "Go over all the ids (not range(len(ids) - 1))"},
        overrides={"CharTokenizer": _DecodeDropsLastTokenizer},
        hint=3,
    ),
]
