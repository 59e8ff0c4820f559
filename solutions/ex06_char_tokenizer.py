"""练习 06：字符级 tokenizer（stoi / itos）。

见 bigram 一课「数据换了，切法也得换」与「token 是自己定义的」：词表就是语料里出现过的
所有字符，按字符排序（ASCII 顺序：0 是换行，1 是空格，然后标点、大写、小写）；
tiny Shakespeare 上一共 65 个字符，encode("hi") == [46, 47]。词表里没有的字符，
encode 时直接 KeyError。

Exercise 06: a character-level tokenizer (stoi / itos), from the bigram lesson
("the data changed, so the split changes too" and "a token is what you define it to be").
Left out: special tokens, unknown-character fallback, byte-level encoding (see ex13).
"""


class CharTokenizer:
    """字符级 tokenizer：词表 = 语料中出现过的字符，按字符排序。

    Character-level tokenizer: the vocabulary is the sorted set of the text's characters.

    属性 / attributes:
        chars:      排好序的不重复字符列表 / sorted list of the distinct characters
        stoi:       字符 -> 编号（dict）/ char -> id
        itos:       编号 -> 字符（dict）/ id -> char
        vocab_size: 词表大小 = len(chars)
    （检查只按下标读 chars 和 itos：chars 写成 list / str、itos 写成 dict / list 都算对。
    The checks only index chars and itos, so a list or str for chars and a dict or list
    for itos are all accepted.）

    例（课文）/ Example (the lesson), on tiny Shakespeare:
        >>> tok = CharTokenizer(text)
        >>> tok.vocab_size, tok.chars[0], tok.chars[1]
        (65, '\\n', ' ')
        >>> tok.encode("hi")
        [46, 47]
        >>> tok.decode([46, 47])
        'hi'

    小例 / A small one:
        >>> tok = CharTokenizer("hello")
        >>> tok.chars, tok.encode("hole")
        (['e', 'h', 'l', 'o'], [1, 3, 2, 0])
    """

    def __init__(self, text):
        """由语料建词表。/ Build the vocabulary from the text.

        例 / Example: CharTokenizer("hello").stoi == {'e': 0, 'h': 1, 'l': 2, 'o': 3}
        """
        ### BEGIN SOLUTION
        self.chars = sorted(set(text))
        self.vocab_size = len(self.chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.itos = {i: ch for i, ch in enumerate(self.chars)}
        ### END SOLUTION

    def encode(self, s):
        """字符串 -> 编号列表；词表外的字符抛 KeyError（异常里带着这个字符）。

        String to a list of ids; a character outside the vocabulary raises KeyError naming it.

        例 / Example (tiny Shakespeare): encode("hi") == [46, 47];
        encode("First Cit") == [18, 47, 56, 57, 58, 1, 15, 47, 58]
        """
        ### BEGIN SOLUTION
        return [self.stoi[ch] for ch in s]
        ### END SOLUTION

    def decode(self, ids):
        """编号（列表或一维张量）-> 字符串，一个都不能少。

        Ids (a list or a 1-D tensor) back to the string, every one of them.

        例 / Example (tiny Shakespeare): decode([46, 47]) == "hi";
        decode(torch.tensor([46, 47])) == "hi"
        """
        ### BEGIN SOLUTION
        return "".join(self.itos[int(i)] for i in ids)
        ### END SOLUTION
