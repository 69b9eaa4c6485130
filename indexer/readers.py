"""PROVISIONAL"""
import json
from dataclasses import dataclass, field
from pathlib import Path
class CorpusError(Exception): pass
@dataclass(frozen=True)
class Document:
    doc_id: str; title: str; source: str; text: str; metadata: dict
@dataclass
class SkippedFile:
    path: str; reason: str
SUPPORTED_SUFFIXES = frozenset({".txt",".md",".jsonl"})
def iter_documents(sources, skipped):
    for src in sources:
        p = Path(src)
        if not p.exists(): raise CorpusError(f"{src}: no such file or folder; fix the path")
        files = sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else [p]
        for f in files:
            raw = f.read_bytes()
            if b"\0" in raw[:8192]: skipped.append(SkippedFile(str(f),"binary")); continue
            if not raw.strip(): skipped.append(SkippedFile(str(f),"empty")); continue
            if f.suffix == ".jsonl":
                for n, line in enumerate(raw.decode().splitlines(), 1):
                    if not line.strip(): continue
                    try: r = json.loads(line)
                    except json.JSONDecodeError as e: raise CorpusError(f"{f.name} line {n}: invalid JSON ({e.msg}); fix the line") from None
                    rid = str(r.pop("id", r.pop("_id", f"{f}:{n}")))
                    yield Document(rid, r.pop("title", ""), str(f), r.pop("text"), r)
            else:
                text = raw.decode()
                title = text.splitlines()[0].lstrip("# ").strip() if text.startswith("#") else f.stem
                yield Document(str(f), title, str(f), text, {})
