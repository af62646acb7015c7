"""The documentation pages: the README stays short and keeps its two commands, every
relative link of the README and of the pages under the packages resolves (to an existing
file and, for ``path#anchor``, to a heading of that file by GitHub's anchor rules), and every
repository file a page names in backticks (``mfbo/study/study.py``) and every module it names
(``mfbo.proposal.recipes``, ``python -m benchmarks.harness.bench``) exists."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PACKAGES = ("mfbo", "surrogates", "acquisitions", "benchmarks")
#: where a repository file named in a page lives
TOP_FOLDERS = PACKAGES + ("tests", "examples")
#: files of other projects that a page names like one of ours
FOREIGN_PATHS = {"tests/samplers_tests/test_samplers.py"}  # optuna's, in mfbo/GUIDE.md

# the README's "Two commands": the main job and the test command CI runs (.ci/run)
MAIN_COMMAND = ('python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && '
                "python -m benchmarks.experiments.bo_quick --out results/bo_quick")
TEST_COMMAND = "bash .ci/run"
CI_TEST_COMMAND = "python -m pytest -q"

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target): a target without spaces, optionally followed by a "title"
_LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_CODE = re.compile(r"`([^`]+)`")
_PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w./-]*\.(?:py|md|toml))\b" % "|".join(TOP_FOLDERS))
# a dotted name of one of the packages with at least two dots: pkg.module.name
_DOTTED = re.compile(r"(?<![\w./-])((?:%s)(?:\.\w+){2,})" % "|".join(PACKAGES))
# a module run or imported in a code block: python -m pkg.module, import pkg.module
_RUN = re.compile(r"(?:-m|import)\s+((?:%s)(?:\.\w+)+)" % "|".join(PACKAGES))
_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def markdown_pages():
    """README.md and every *.md file under the packages (sorted, paths relative to ROOT)."""
    pages = [README]
    for package in PACKAGES:
        pages += sorted((ROOT / package).rglob("*.md"))
    return [p for p in pages if "__pycache__" not in p.parts and ".egg-info" not in str(p)]


def prose_lines(text):
    """The lines outside fenced code blocks (links and headings in code are not rendered)."""
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def slug(heading):
    """GitHub's anchor of a heading: markup dropped, lowercased, punctuation other than
    ``-`` and ``_`` removed, each space a ``-``."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    """Every heading anchor of a page, with GitHub's ``-1``, ``-2`` suffixes for repeats."""
    seen, result = {}, set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        result.add(base if n == 0 else f"{base}-{n}")
    return result


def without_inline_code(line):
    return re.sub(r"`[^`]*`", "``", line)


def relative_links(path):
    """(line number, target) of every relative link and image of a page."""
    text = path.read_text(encoding="utf-8")
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = without_inline_code(line)
        for match in list(_LINK.finditer(line)) + list(_IMAGE.finditer(line)):
            target = match.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:, ...
                continue
            yield number, target


def broken_links(path):
    problems = []
    for number, target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        destination = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(ROOT)}:{number}: {target}"
        if not destination.exists():
            problems.append(f"{where} (no such file)")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            problems.append(f"{where} (no heading #{anchor} in "
                            f"{destination.relative_to(ROOT)})")
    return problems


def _module_prefix(parts):
    """How many leading parts of a dotted name are a package or module of the repository."""
    n = 0
    for i in range(1, len(parts) + 1):
        base = ROOT.joinpath(*parts[:i])
        if (base / "__init__.py").is_file() or base.with_suffix(".py").is_file():
            n = i
        else:
            break
    return n


def missing_names(path):
    """:func:`missing_names_in` the lines of a page."""
    text = path.read_text(encoding="utf-8")
    return missing_names_in(str(path.relative_to(ROOT)), text.splitlines())


def missing_names_in(label, lines):
    """The repository files (``mfbo/space/space.py``) and modules (``mfbo.study.trial``) a page
    names that do not exist: paths and dotted names in inline code, and the modules run with
    ``-m`` or imported in code blocks.  After the module, a dotted name may go on with one
    name (``mfbo.proposal.steps.parzen.parzen_step``) or a class and its attribute
    (``mfbo.Study.open``)."""
    problems = []
    fenced = False
    for number, line in enumerate(lines, 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        where = f"{label}:{number}"
        codes = [line] if fenced else _CODE.findall(line)
        names = [(name, True) for code in codes for name in _RUN.findall(code)]
        for code in ([] if fenced else codes):
            for file in _PATH.findall(code):
                if file not in FOREIGN_PATHS and not (ROOT / file).is_file():
                    problems.append(f"{where}: {file} (no such file)")
            names += [(name, False) for name in _DOTTED.findall(code)]
        for name, is_module in names:
            parts = name.split(".")
            n = _module_prefix(parts)
            rest = parts[n:]
            if is_module and rest or len(rest) > 2 or len(rest) == 2 and not rest[0][:1].isupper():
                problems.append(f"{where}: {name} (no module {'.'.join(parts[:n + 1])})")
    return problems


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; keep it to 250 or fewer"


def test_readme_keeps_its_two_commands():
    text = README.read_text(encoding="utf-8")
    assert "## Two commands" in text
    assert MAIN_COMMAND in text
    assert TEST_COMMAND in text
    # the test command that .ci/run runs, named in the README and run by .ci/run
    assert CI_TEST_COMMAND in text
    assert CI_TEST_COMMAND in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", markdown_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    problems = broken_links(page)
    assert not problems, "broken links:\n" + "\n".join(problems)


@pytest.mark.parametrize("page", markdown_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_named_files_and_modules_exist(page):
    problems = missing_names(page)
    assert not problems, "names of nothing:\n" + "\n".join(problems)


def test_names_are_checked_as_files_and_modules():
    lines = ["`mfbo/optimize/minimize.py` and `tests/test_docs.py`, `mfbo/nowhere.py`",
             "`mfbo.proposal.recipes.get_recipe`, `mfbo.Study.open`, `mfbo.local_model.step`",
             "`python -m benchmarks.harness.bench --out x`, `python -m benchmarks.bench`",
             "```bash", "python -m benchmarks.experiments.bo_quick", "python -m mfbo.nothing",
             "```"]
    assert missing_names_in("page", lines) == [
        "page:1: mfbo/nowhere.py (no such file)",
        "page:2: mfbo.local_model.step (no module mfbo.local_model)",
        "page:3: benchmarks.bench (no module benchmarks.bench)",
        "page:6: mfbo.nothing (no module mfbo.nothing)"]


def test_slug_follows_github():
    assert slug("Scaling: `mfbo scale`") == "scaling-mfbo-scale"
    assert slug("The suites' results (test splits)") == "the-suites-results-test-splits"
    assert slug("Not adopted: UCB's weight cycling, `kappa=(2, 1)`") == (
        "not-adopted-ucbs-weight-cycling-kappa2-1")
    assert slug("Large-scale regression: flight delays (AISTATS 2016, Tables 1-2)") == (
        "large-scale-regression-flight-delays-aistats-2016-tables-1-2")
    assert slug("The `min_distance` option") == "the-min_distance-option"

