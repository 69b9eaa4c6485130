import regex
SPLITTER_VERSION = "prov"
_RE = regex.compile(r"\S.*?(?:[.!?]+(?=\s)|\n\s*\n|$)", regex.S)
def split_sentences(text):
    spans=[]
    for m in regex.finditer(r"[^.!?\n]+(?:[.!?]+|$)|[^\n]+", text):
        s,e=m.span()
        while s<e and text[s].isspace(): s+=1
        while e>s and text[e-1].isspace(): e-=1
        if e>s: spans.append((s,e))
    return spans
