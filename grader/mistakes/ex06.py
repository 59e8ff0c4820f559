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
        id="unsorted_vocab",
        section=_SECTION,
        zh="词表没有排序：编号和课文对不上（课文里 0 是换行、1 是空格、'h' 是 46）。"
        "用 sorted(set(text))（见 bigram 一课「数据换了，切法也得换」：词表按 ASCII 排序）",
        en="The vocabulary is not sorted, so the ids differ from the lesson's (0 is the newline, "
        "1 the space, 'h' is 46). Use sorted(set(text)) (bigram lesson, \"the data changed\": "
        "the vocabulary is in ASCII order)",
        overrides={"CharTokenizer": _UnsortedTokenizer},
        hint=2,
    ),
    Mistake(
        id="off_by_one_ids",
        section=_SECTION,
        zh="编号差一：编号要从 0 开始（enumerate 默认就是 0），换行符是 0 号"
        "（见 bigram 一课「数据换了，切法也得换」）",
        en="Ids off by one: ids start at 0 (enumerate's default); the newline is id 0 "
        "(bigram lesson, \"the data changed\")",
        overrides={"CharTokenizer": _OffByOneTokenizer},
        hint=2,
    ),
    Mistake(
        id="decode_skips_id0",
        section="bigram 一课「token 是自己定义的」",
        zh="decode 丢了字符：编号 0（换行）被当成「假」跳过了；decode(encode(s)) 必须原样还原 s"
        "（见 bigram 一课「token 是自己定义的」）",
        en="decode drops characters: id 0 (the newline) is falsy and got skipped; "
        "decode(encode(s)) must give s back (bigram lesson, \"a token is what you define\")",
        overrides={"CharTokenizer": _DecodeSkipsZeroTokenizer},
        hint=3,
    ),
    Mistake(
        id="decode_drops_last",
        section="bigram 一课「token 是自己定义的」",
        zh="decode 丢了最后一个字符：每个编号都要还原（见 bigram 一课「token 是自己定义的」）",
        en="decode drops the last character: every id must be decoded "
        "(bigram lesson, \"a token is what you define\")",
        overrides={"CharTokenizer": _DecodeDropsLastTokenizer},
        hint=3,
    ),
]
