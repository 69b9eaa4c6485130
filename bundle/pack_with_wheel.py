"""Pack a Claude Desktop bundle that carries arag-mcp's own wheel, for installs that cannot take
arag-mcp from PyPI: a clone of an unreleased version, a fork, a machine whose index lacks it.

The bundle is the PyPI one (manifest.json, server/main.py) with the wheel in `wheels/` and its
pyproject.toml pointing uv there (`[tool.uv.sources]`): Desktop's uv installs arag-mcp from the
bundle and only its dependencies from the package index.

    python bundle/pack_with_wheel.py                       # builds the wheel of this checkout
    python bundle/pack_with_wheel.py --wheel dist/arag_mcp-0.1.0-py3-none-any.whl --out arag-mcp.mcpb
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

BUNDLE = Path(__file__).resolve().parent
REPO = BUNDLE.parent
MCPB = ["npx", "--yes", "@anthropic-ai/mcpb@2.1.2"]
CARRIED = ("manifest.json", "server/main.py", ".mcpbignore")
WHEELS = "wheels"


def project_with_wheel(pyproject: str, wheel: Path) -> str:
    """The bundle's pyproject.toml, with arag-mcp taken from the wheel in WHEELS."""
    return (
        pyproject.replace("the host's uv installs arag-mcp from PyPI", "the host's uv installs arag-mcp from wheels/")
        + f'\n[tool.uv.sources]\narag-mcp = {{ path = "{WHEELS}/{wheel.name}" }}\n'
    )


def build_wheel(outdir: Path) -> Path:
    """`python -m build --wheel` of this checkout."""
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(outdir), str(REPO)], check=True)
    (wheel,) = outdir.glob("arag_mcp-*.whl")
    return wheel


def pack(wheel: Path, out: Path, mcpb: Sequence[str] = MCPB) -> Path:
    """Stage the bundle with `wheel` beside it and pack it into `out` with @anthropic-ai/mcpb."""
    with tempfile.TemporaryDirectory() as work:
        stage = Path(work) / "arag-mcp"
        for name in CARRIED:
            (stage / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(BUNDLE / name, stage / name)
        (stage / WHEELS).mkdir()
        shutil.copy2(wheel, stage / WHEELS / wheel.name)
        (stage / "pyproject.toml").write_text(project_with_wheel((BUNDLE / "pyproject.toml").read_text(), wheel))
        subprocess.run([*mcpb, "pack", str(stage), str(out.resolve())], check=True, stdout=sys.stderr)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="the wheel to carry (default: build this checkout's)")
    parser.add_argument("--out", type=Path, default=Path("arag-mcp.mcpb"), help="the bundle to write")
    args = parser.parse_args(argv)
    if shutil.which(MCPB[0]) is None:
        print("packing needs Node.js's npx (for @anthropic-ai/mcpb); install Node.js 18 or later", file=sys.stderr)
        return 2
    if args.wheel is not None and not args.wheel.is_file():
        print(f"no wheel at {args.wheel}; build one with `python -m build --wheel`", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as built:
        wheel = args.wheel or build_wheel(Path(built))
        pack(wheel, args.out)
    size = args.out.stat().st_size / 2**20
    print(f"{args.out}: {size:.1f} MiB, carrying {wheel.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
