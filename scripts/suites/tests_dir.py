"""Builds the directory GRAPHMIND_SUITE_TESTS names, from a local git copy of the framework's repository.

    python scripts/suites/tests_dir.py llamaindex <git dir> <out dir> [commit]
    python scripts/suites/tests_dir.py litellm <git dir> <out dir> [commit]
    python scripts/suites/tests_dir.py crewai <git dir> <out dir> [commit]

It fetches nothing: `<git dir>` is a clone (or a bare mirror) already on this machine. It writes
`<out dir>/tests/...` (and the pytest configuration the tests need) from `git archive` of the
paths below at `commit` (default HEAD), then prints what it took. Then:

    GRAPHMIND_SUITE_TESTS=<out dir> uv run nox -s "suite(framework='llamaindex')"

Why a directory at all: llama-index-core's and litellm's source distributions ship no tests
(noxfile.py, TESTS_ELSEWHERE); docs/compatibility.md names the commits the published figures used.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

# Per suite: the folder of the repository the framework lives in ("" for the root), and the paths
# under it to take. llama-index-core's tests/conftest.py imports its own tests.* helpers only, and
# its pyproject.toml has no pytest section (so none is taken: the noxfile writes an empty
# pytest.ini, which keeps pytest from reading this repository's). litellm's tests import
# tests.large_text, and its pyproject.toml sets asyncio_mode = "auto", which the tests rely on.
RECIPES: dict[str, tuple[str, list[str]]] = {
    "llamaindex": ("llama-index-core", ["tests"]),
    "litellm": ("", ["tests/__init__.py", "tests/large_text.py", "tests/test_litellm", "pyproject.toml"]),
    # crewai's tests live in the monorepo's lib/crewai/tests and rely on its root conftest.py (VCR
    # cassettes, .env.test's fake keys) and root pyproject.toml (addopts: --block-network, loadfile).
    "crewai": ("", ["conftest.py", ".env.test", "lib/crewai/tests", "pyproject.toml"]),
}
# Per suite: where the taken files go under <out dir>/tests (pyproject.toml stays at <out dir>).
# crewai's conftest finds a module's cassettes by its `lib/crewai/tests` parents, so the layout
# under tests/ keeps them: tests/conftest.py, tests/lib/crewai/tests/...
UNDER_TESTS = {"crewai"}


def build(suite: str, git_dir: Path, out: Path, commit: str = "HEAD") -> list[str]:
    root, paths = RECIPES[suite]
    prefix = f"{root}/" if root else ""
    archive = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit, *[prefix + p for p in paths]],
        check=True,
        capture_output=True,
    ).stdout
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    taken: list[str] = []
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.startswith(prefix):
                continue
            relative = member.name[len(prefix) :]
            if suite in UNDER_TESTS and relative != "pyproject.toml":
                relative = f"tests/{relative}"
            target = out / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            assert source is not None  # a regular file always has content
            target.write_bytes(source.read())
            taken.append(relative)
    return taken


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4) or argv[0] not in RECIPES:
        print(__doc__, file=sys.stderr)
        return 2
    git_dir = Path(argv[1])
    if (git_dir / ".git").exists():
        git_dir = git_dir / ".git"
    commit = argv[3] if len(argv) == 4 else "HEAD"
    sha = subprocess.run(
        ["git", "--git-dir", str(git_dir), "rev-parse", commit], check=True, capture_output=True, text=True
    ).stdout.strip()
    taken = build(argv[0], git_dir, Path(argv[2]), sha)
    tests = sum(1 for t in taken if Path(t).name.startswith("test_") and t.endswith(".py"))
    print(f"{argv[0]}: {len(taken)} files ({tests} test modules) from {sha} into {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
