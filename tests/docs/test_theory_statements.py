"""What the theory pages say a call does, executed.

Every ```` ```python ```` block of ``docs/theory/*.md`` is run here, each in a fresh namespace, with
deprecations as errors. A block states a behaviour of quadnet (what a call returns, refuses,
raises or warns) as assertions, next to the sentence that states it in words: when a change makes
the sentence false, its block fails here and the page must change with the code.

A second test reads the prose: every sentence that says a call raises, warns, refuses, returns or
accepts something must name that call (or the exception) in backticks, and a block of the same
page must use that name. A behavioural sentence that no block executes fails the suite.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

THEORY = Path(__file__).resolve().parents[2] / "docs" / "theory"
PAGES = sorted(THEORY.glob("*.md"))

_BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)
_FENCE = re.compile(r"^(```|~~~|:::).*?^\1", flags=re.S | re.M)
_DISPLAY = re.compile(r"\$\$.*?\$\$", flags=re.S)
_VERB = re.compile(r"\b(raise[sd]?|raising|warns?|warning|refuse[sd]?|refusing|returns?|returned"
                   r"|accepts?|accepted)\b")
_TICKED = re.compile(r"`([^`]+)`")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _blocks(page: Path) -> list[tuple[int, str]]:
    text = page.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _BLOCK.finditer(text)]


BLOCKS = [(page, line, code) for page in PAGES for line, code in _blocks(page)]


def test_the_theory_pages_carry_executed_statements():
    assert PAGES, f"no theory pages under {THEORY}"
    assert len(BLOCKS) >= 20, "the theory pages lost their executed statements"


@pytest.mark.parametrize("page,line,code", BLOCKS,
                         ids=[f"{p.name}:{line}" for p, line, _ in BLOCKS])
def test_statement_block_runs(page: Path, line: int, code: str):
    np.random.seed(0)  # blocks use their own Generators; this only pins legacy global state
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("error", PendingDeprecationWarning)
        exec(compile("\n" * line + code, str(page), "exec"), {"__name__": f"theory_{page.stem}"})


def _sentences(page: Path) -> list[str]:
    prose = _DISPLAY.sub(" ", _FENCE.sub("\n\n", page.read_text(encoding="utf-8")))
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z*`(])|\n\s*\n|\n\s*[*-] |\n\|", prose)
    return [" ".join(p.split()) for p in parts if p.strip()]


def _called_names(sentence: str) -> set[str]:
    names = set()
    for span in _TICKED.findall(sentence):
        head = _NAME.match(span.strip())
        if head:
            dotted = re.match(r"[A-Za-z_][\w.]*", span.strip()).group(0)
            names.add(dotted.split(".")[-1] or head.group(0))
    return names


def _behaviour_sentences(page: Path) -> list[str]:
    return [s for s in _sentences(page)
            if _VERB.search(re.sub(r"`[^`]*`", "", s)) and not s.startswith(("#", "(theory-"))]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_behavioural_sentence_is_executed(page: Path):
    used = set(_NAME.findall("\n".join(code for _, code in _blocks(page))))
    missing = []
    for sentence in _behaviour_sentences(page):
        names = _called_names(sentence)
        if not names & used:
            missing.append(f"  {sentence[:160]}  (names: {sorted(names) or 'none'})")
    assert not missing, (f"{page.name}: sentences that say what a call does, but no block of the "
                         "page executes the call:\n" + "\n".join(missing))
