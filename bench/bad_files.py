"""Bad and costly files: what one such file does to `arag-index build` (time, peak memory, outcome).

    python bench/bad_files.py                       # every case at the issue's sizes
    python bench/bad_files.py --scale 0.05 --cases one-line-run,html-text
    python bench/bad_files.py --arag-index /other/checkout/.venv/bin/arag-index   # another revision

Each case is a folder holding the bad file(s) beside one normal Markdown file, built into a new
index by the `arag-index` given, killed after --timeout seconds. Peak memory is the largest sum
of the resident memory of the build and its child processes, sampled every 0.1 s from /proc
(Linux only), and is also shown above that of a build of the normal file alone. Two cases measure
what the budgets cost normal builds: the bundled examples and a folder of many small files.
The fixtures (tests/bad_files.py) are generated once into bench/results/work/bad_files/; the
table is printed and written to bench/results/bad_files.json.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import RESULTS, log, write_json  # noqa: E402

from tests import bad_files  # noqa: E402
from tests.bombs import MB  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
WORK = RESULTS / "work" / "bad_files"
NORMAL = "# Radium\n\nRadium glows blue in the dark.\n"
SMALL_FILES = 3000


def _small_files(folder: Path, scale: float) -> None:
    for number in range(max(1, int(SMALL_FILES * scale))):
        (folder / f"note{number:05d}.md").write_text(f"# Note {number}\n\nRadium sample {number} glows blue.\n")


CASES: dict[str, Callable[[Path, float], object]] = {
    "deep-jsonl": lambda folder, scale: bad_files.deep_jsonl(folder / "deep.jsonl", 600),
    "bad-front-matter": lambda folder, scale: (
        bad_files.bad_front_matter(folder),
        bad_files.huge_int_json(folder / "digits.json"),
    ),
    "one-line-run": lambda folder, scale: bad_files.one_line_run(folder / "run.txt", int(12 * MB * scale)),
    "one-line-words": lambda folder, scale: bad_files.one_line_words(folder / "words.txt", int(12 * MB * scale)),
    "dense-docx": lambda folder, scale: bad_files.dense_docx(folder / "dense.docx", int(250 * MB * scale)),
    "html-text": lambda folder, scale: bad_files.html_text(folder / "text.html", int(30 * MB * scale)),
    "html-markup": lambda folder, scale: bad_files.html_markup(folder / "markup.html", int(150 * MB * scale)),
    "front-matter": lambda folder, scale: bad_files.long_front_matter(folder / "front.md", int(10 * MB * scale)),
    "examples": lambda folder, scale: shutil.copytree(REPO / "examples", folder, dirs_exist_ok=True),
    "small-files": _small_files,
}


def fixture(case: str, scale: float) -> Path:
    folder = WORK / f"{case}-{scale:g}"
    done = folder / ".complete"
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        log(f"generating {case} at scale {scale:g}")
        CASES[case](folder, scale)
        if case not in ("examples", "small-files"):
            (folder / "radium.md").write_text(NORMAL)
        done.touch()
    return folder


def tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and its descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            pass
    return total


def measure(arag_index: str, corpus: Path, timeout: float, memory: int) -> dict:
    """Build `corpus` into a new index, killed past `timeout` seconds or `memory` resident bytes:
    seconds, peak resident bytes, exit status, the lines of the files skipped and stderr's last line."""
    with tempfile.TemporaryDirectory() as work:
        command = [arag_index, "build", str(corpus), "--index", f"{work}/idx", "--quiet"]
        started = time.perf_counter()
        with open(f"{work}/stderr", "w+") as errors:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True)
            peak, killed_at = 0, ""
            while process.poll() is None:
                peak = max(peak, tree_rss(process.pid))
                if time.perf_counter() - started > timeout or peak > memory:
                    os.killpg(process.pid, 9)
                    process.wait()
                    killed_at = f"{timeout:.0f} s" if peak <= memory else f"{memory / (1 << 30):.0f} GB"
                    break
                time.sleep(0.1)
            seconds = time.perf_counter() - started
            errors.seek(0)
            lines = [line for line in errors.read().splitlines() if line.strip()]
    return {"seconds": round(seconds, 1), "peak_mb": round(peak / MB), "status": "killed" if killed_at else process.returncode,
            "killed_at": killed_at,
            "skips": [line for line in lines if line.startswith("skipped ")], "last": lines[-1:] }  # fmt: skip


def outcome(result: dict) -> str:
    if result["status"] == "killed":
        return f"killed at {result['killed_at']}"
    if result["status"] != 0:
        return f"exit {result['status']}: {result['last'][0][:160] if result['last'] else ''}"
    added = next((line.split(",")[0] for line in result["last"] if line.startswith("added")), "")
    skips = [line.removeprefix("skipped ") for line in result["skips"] if " listed above" not in line]
    return "; ".join([f"exit 0, {added}", *(skip[:160] for skip in skips)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arag-index", default=str(Path(sys.executable).with_name("arag-index")))
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated, of: " + ", ".join(CASES))
    parser.add_argument("--scale", type=float, default=1.0, help="size of the fixtures against the issue's")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument(
        "--max-memory", type=float, default=6.0, help="GB of resident memory at which a build is killed"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "bad_files.json")
    args = parser.parse_args()
    memory = int(args.max_memory * (1 << 30))
    normal = WORK / "normal"
    normal.mkdir(parents=True, exist_ok=True)
    (normal / "radium.md").write_text(NORMAL)
    measure(args.arag_index, normal, args.timeout, memory)  # the first build may fill caches (the model's export)
    baseline = measure(args.arag_index, normal, args.timeout, memory)
    results = {"arag_index": args.arag_index, "scale": args.scale, "baseline": baseline, "cases": {}}
    log(f"baseline: {baseline['seconds']} s, {baseline['peak_mb']} MB")
    rows = []
    for case in args.cases.split(","):
        corpus = fixture(case, args.scale)
        size = sum(path.stat().st_size for path in corpus.rglob("*") if path.is_file())
        result = results["cases"][case] = {**measure(args.arag_index, corpus, args.timeout, memory), "bytes": size}
        write_json(args.out, results)
        rows.append(
            f"| {case} | {size / MB:.1f} MB | {result['seconds']} s | {result['peak_mb']:,} MB "
            f"(+{result['peak_mb'] - baseline['peak_mb']:,}) | {outcome(result)} |"
        )
        log(rows[-1])
    print(f"baseline (one small file): {baseline['seconds']} s, {baseline['peak_mb']} MB")
    print("| case | files | time | peak RSS (above baseline) | outcome |\n|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
