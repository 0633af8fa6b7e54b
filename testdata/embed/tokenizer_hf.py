"""Golden generator for engine/embed's tokenizer.

This is Hugging Face transformers' BasicTokenizer and WordpieceTokenizer
(models/bert/tokenization_bert.py), transcribed with Python's own unicodedata so
the goldens do not share Unicode tables with the Go code under test. Special
tokens are split out first, as PreTrainedTokenizer.tokenize does.

    python3 testdata/embed/tokenizer_hf.py > testdata/embed/tokenizer_golden.json
"""
import json, os, unicodedata

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

def load_vocab(path):
    vocab = {}
    with open(path, encoding="utf-8") as f:
        for i, tok in enumerate(f.readlines()):
            vocab[tok.rstrip("\n")] = i
    return vocab

def whitespace_tokenize(text):
    text = text.strip()
    return text.split() if text else []

def _is_whitespace(c):
    if c in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(c) == "Zs"

def _is_control(c):
    if c in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(c).startswith("C")

def _is_punctuation(c):
    cp = ord(c)
    if (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (123 <= cp <= 126):
        return True
    return unicodedata.category(c).startswith("P")

def _is_chinese_char(cp):
    return ((0x4E00 <= cp <= 0x9FFF) or (0x3400 <= cp <= 0x4DBF) or (0x20000 <= cp <= 0x2A6DF)
            or (0x2A700 <= cp <= 0x2B73F) or (0x2B740 <= cp <= 0x2B81F) or (0x2B820 <= cp <= 0x2CEAF)
            or (0xF900 <= cp <= 0xFAFF) or (0x2F800 <= cp <= 0x2FA1F))

def clean_text(text):
    out = []
    for c in text:
        cp = ord(c)
        if cp == 0 or cp == 0xFFFD or _is_control(c):
            continue
        out.append(" " if _is_whitespace(c) else c)
    return "".join(out)

def tokenize_chinese_chars(text):
    out = []
    for c in text:
        if _is_chinese_char(ord(c)):
            out += [" ", c, " "]
        else:
            out.append(c)
    return "".join(out)

def strip_accents(text):
    text = unicodedata.normalize("NFD", text)
    return "".join(c for c in text if unicodedata.category(c) != "Mn")

def split_on_punc(text):
    out, start_new = [], True
    for c in text:
        if _is_punctuation(c):
            out.append([c]); start_new = True
        else:
            if start_new:
                out.append([])
            start_new = False
            out[-1].append(c)
    return ["".join(x) for x in out]

def basic_tokenize(text):
    text = clean_text(text)
    text = tokenize_chinese_chars(text)
    text = unicodedata.normalize("NFC", text)
    split = []
    for tok in whitespace_tokenize(text):
        tok = strip_accents(tok.lower())
        split.extend(split_on_punc(tok))
    return whitespace_tokenize(" ".join(split))

def wordpiece(token, vocab):
    chars = list(token)
    if len(chars) > 100:
        return ["[UNK]"]
    out, start = [], 0
    while start < len(chars):
        end, cur = len(chars), None
        while start < end:
            sub = "".join(chars[start:end])
            if start > 0:
                sub = "##" + sub
            if sub in vocab:
                cur = sub
                break
            end -= 1
        if cur is None:
            return ["[UNK]"]
        out.append(cur)
        start = end
    return out

def split_special(text):
    parts = [text]
    for sp in SPECIAL:
        nxt = []
        for p in parts:
            if p in SPECIAL:
                nxt.append(p); continue
            pieces = p.split(sp)
            for i, piece in enumerate(pieces):
                if i:
                    nxt.append(sp)
                if piece:
                    nxt.append(piece)
        parts = nxt
    return parts

def tokenize(text, vocab):
    out = []
    for part in split_special(text):
        if part in SPECIAL:
            out.append(part); continue
        for w in basic_tokenize(part):
            out.extend(wordpiece(w, vocab))
    return out

CASES = [
    ("plain", "The quick test ran over the file"),
    ("hyphen", "re-ran the well-known build"),
    ("accents", "Café résumé naïve Über"),
    ("cjk", "我的文件 is here 日本人"),
    ("kana_not_split", "カタカナ and ひらがな"),
    ("control_chars", "bad\x00byte\x07bell\u200bzero\ufffdrepl\x1b[0m"),
    ("whitespace", "  tabs\tand\nnewlines\r\n\u00a0nbsp\u3000ideographic  "),
    ("camel_case", "camelCase parseJSONConfig"),
    ("snake_case", "snake_case_name __init__"),
    ("path", "engine/embed/pkg/path.go:42"),
    ("code", "if err != nil { return fmt.Errorf(\"x: %w\", err) }"),
    ("error_string", "panic: runtime error: index out of range [5] with length 3"),
    ("special_tokens", "before[SEP]after [CLS] [unk] [MASK]x"),
    ("long_word", "a" * 101 + " ok"),
    ("exactly_100", "b" * 100),
    ("unknown_piece", "qzx€ @user #tag $var ^caret `tick` ~tilde |pipe"),
    ("numbers", "version 1.26.8 and 30522 tokens"),
    ("empty", ""),
    ("only_space", " \t\n "),
    ("emoji", "fixed it 🎉 done"),
    ("greek_upper", "ΑΘΗΝΑ Straße"),
    ("combining", "e\u0301te\u0301 cafe\u0301"),
]

if __name__ == "__main__":
    vocab = load_vocab(os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocab.txt"))
    cases = [{"name": n, "text": t, "tokens": tokenize(t, vocab)} for n, t in CASES]
    print(json.dumps(cases, ensure_ascii=False, indent=1))
