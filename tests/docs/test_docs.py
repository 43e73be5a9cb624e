"""The documentation site: it builds with zero warnings, documents every public name, has no
broken internal link, renders its formulas offline in a real browser, and its tour runs.

The site is built once per test session, exactly as the documented command does
(``python -m sphinx -W --keep-going -n -b html docs docs/_build/html``) but into a
temporary folder. The browser checks use Debian's ``chromium`` (``apt-get install chromium``;
``.ci/run`` installs it): without it they are skipped, except under CI, where they fail.
"""

from __future__ import annotations

import dataclasses
import html.parser
import importlib.util
import os
import re
import subprocess
import sys
import types
import warnings
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
IN_CI = bool(os.environ.get("CI"))
BUILD_TIMEOUT = 900  # seconds; the build takes well under a minute on two cores


def _skip_or_fail(reason: str):
    if IN_CI:
        pytest.fail(f"{reason} (CI must run this test: see .ci/run)")
    pytest.skip(reason)


def _load_screenshots():
    spec = importlib.util.spec_from_file_location("quadnet_screenshots",
                                                  ROOT / "scripts" / "screenshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- the build
@dataclasses.dataclass
class Site:
    html: Path
    returncode: int
    warnings: str
    stderr: str


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Site:
    """The site built once, with ``-W --keep-going -n`` (warnings are errors, nitpicky)."""
    for mod in ("sphinx", "myst_nb", "sphinx_design", "numpydoc", "pydata_sphinx_theme"):
        if importlib.util.find_spec(mod) is None:
            _skip_or_fail(f"{mod} is not installed: python -m pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("docs")
    html_dir, warn_file = out / "html", out / "warnings.txt"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-b", "html",
           "-d", str(out / "doctrees"), "-w", str(warn_file), "-q", str(DOCS), str(html_dir)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT, stdin=subprocess.DEVNULL)
    warned = warn_file.read_text(encoding="utf-8").strip() if warn_file.exists() else ""
    if not (html_dir / "index.html").is_file():
        pytest.fail(f"the documentation did not build ({proc.returncode}):\n"
                    f"{warned}\n{proc.stderr[-5000:]}")
    return Site(html_dir, proc.returncode, warned, proc.stderr[-5000:])


def test_docs_build_without_warnings(site):
    assert site.warnings == "", f"Sphinx warnings:\n{site.warnings}"
    assert site.returncode == 0, site.stderr


# --------------------------------------------------------------------------- API pages
def _public_modules():
    """``quadnet`` and, recursively, every module listed in an ``__all__``."""
    import quadnet

    found, queue = [quadnet], [quadnet]
    while queue:
        mod = queue.pop(0)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if (isinstance(obj, types.ModuleType) and obj.__name__.startswith("quadnet.")
                    and obj not in found):
                found.append(obj)
                queue.append(obj)
    return found


class _Collector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, str, str, dict]] = []  # (tag, attribute, value, attrs)

    def handle_starttag(self, tag, attrs):
        attrs = {k: v for k, v in attrs if v is not None}
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and "name" in attrs:
            self.ids.add(attrs["name"])
        for key in ("href", "src"):
            if key in attrs:
                self.links.append((tag, key, attrs[key], attrs))


def _parse(path: Path) -> _Collector:
    c = _Collector()
    c.feed(path.read_text(encoding="utf-8"))
    return c


@pytest.fixture(scope="session")
def parsed(site) -> dict[Path, _Collector]:
    # the pages (not the theme's template fragments that sit in _static/)
    return {p.resolve(): _parse(p) for p in sorted(site.html.rglob("*.html"))
            if "_static" not in p.relative_to(site.html).parts}


def test_every_public_name_has_an_api_page(site, parsed):
    api = (site.html / "api").resolve()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        modules = _public_modules()
    api_ids = set()
    for path, c in parsed.items():
        if path.is_relative_to(api):
            api_ids |= c.ids
    exports = [(m, n, getattr(m, n)) for m in modules for n in m.__all__
               if not isinstance(getattr(m, n), types.ModuleType)]
    assert exports, "quadnet.__all__ lists nothing to document"
    missing = []
    for module, name, obj in exports:
        plain_data = not (isinstance(obj, type) or callable(obj))
        # documented under any public name of the same object (once, where it is defined)
        spellings = {f"{m.__name__}.{n}" for m, n, o in exports
                     if o is obj and (not plain_data or n == name)}
        if not spellings & api_ids:
            missing.append(f"{module.__name__}.{name}")
    assert not missing, f"public names without an API page or anchor: {missing}"
    for module in modules:
        assert (api / f"{module.__name__}.html").is_file(), module.__name__


# --------------------------------------------------------------------------- links
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)


def test_no_broken_internal_links(site, parsed):
    broken = []
    resolved: dict[tuple[Path, str], tuple[Path, bool]] = {}  # the site has few distinct paths

    def resolve(page: Path, path: str) -> tuple[Path, bool]:
        key = (page.parent, path) if path else (page, "")
        if key not in resolved:
            target = page if not path else (page.parent / unquote(path))
            if path.endswith("/") or target.is_dir():
                target = target / "index.html"
            target = target.resolve()
            resolved[key] = (target, target.exists())
        return resolved[key]

    for page, c in parsed.items():
        for tag, attr, value, _ in c.links:
            if not value or value == "#" or _EXTERNAL.match(value):
                continue
            parts = urlsplit(value)
            target, exists = resolve(page, parts.path)
            where = lambda: f"{page.relative_to(site.html.resolve())}: <{tag} {attr}={value}>"  # noqa: E731
            if not exists:
                broken.append(f"{where()} (no such file)")
                continue
            frag = unquote(parts.fragment)
            if frag and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if frag not in ids:
                    broken.append(f"{where()} (no anchor #{frag})")
    assert not broken, "broken internal links:\n" + "\n".join(broken[:50])


_ASSET_RELS = {"stylesheet", "preload", "modulepreload", "icon", "shortcut", "apple-touch-icon",
               "manifest"}


def test_site_loads_nothing_from_the_network(site, parsed):
    """Scripts, styles, fonts and images all come from the site itself (MathJax included)."""
    remote = []
    for page, c in parsed.items():
        for tag, attr, value, attrs in c.links:
            if not _EXTERNAL.match(value) or value.startswith(("data:", "mailto:")):
                continue
            asset = (tag in ("script", "img", "iframe", "source", "video", "audio", "embed")
                     or tag == "link" and _ASSET_RELS & set(attrs.get("rel", "").split()))
            if asset:
                remote.append(f"{page.name}: <{tag} {attr}={value}>")
    assert not remote, "assets loaded from the network:\n" + "\n".join(remote[:20])
    index = (site.html / "index.html").read_text(encoding="utf-8")
    assert 'src="_static/mathjax/tex-chtml.js' in index, "MathJax is not served by the site"
    mathjax = site.html / "_static" / "mathjax"
    assert (mathjax / "tex-chtml.js").is_file()
    assert any((mathjax / "output" / "chtml" / "fonts").rglob("*.woff"))


# --------------------------------------------------------------------------- browser
@pytest.fixture(scope="session")
def browser_pages(site, tmp_path_factory):
    """The four pages opened in headless Chromium: what the DOM holds after MathJax ran."""
    shots = _load_screenshots()
    if shots.find_chromium() is None:
        _skip_or_fail("chromium is not installed (Debian: apt-get install chromium)")
    out = tmp_path_factory.mktemp("screenshots")
    targets = shots.pages(site.html)
    results = {}
    with shots.serve(site.html) as base, shots.Browser(1280, 900) as browser:
        for name, rel in targets.items():
            info = browser.open(base + rel)
            info["dom"] = browser.html()
            if name == "notebook":
                browser.scroll_to(".cell_output img")
            info["screenshot"] = browser.screenshot(out / f"{name}.png")
            info["path"] = rel
            results[name] = info
    print(f"\nscreenshots of the documentation: {out}")
    return results


@pytest.mark.parametrize("name", ["home", "api_psdquotient", "user_guide", "notebook"])
def test_browser_typesets_the_formulas(browser_pages, name):
    info = browser_pages[name]
    if name == "api_psdquotient" and info["math_spans"] == 0:
        pytest.skip("the PSDQuotient docstring has no formula today")
    assert info["math_spans"] > 0, f"{info['path']} has no formula to check"
    assert info["mathjax"], f"MathJax did not load on {info['path']}"
    assert info["untypeset"] == 0, f"{info['untypeset']} formulas not typeset on {info['path']}"
    assert info["mjx"] >= info["math_spans"], (info["path"], info["mjx"], info["math_spans"])
    assert "<mjx-container" in info["dom"]
    untypeset = re.findall(r'class="math[^"]*"[^>]*>(\\\(|\\\[|\$\$)', info["dom"])
    assert not untypeset, f"raw TeX left in {info['path']}"
    assert not info["raw_tex"], f"raw TeX in the text of {info['path']}: {info['raw_tex'][:5]}"
    assert info["mjx_errors"] == 0, f"MathJax could not typeset a formula on {info['path']}"
    assert info["fonts"] > 0, f"no MathJax font loaded on {info['path']}"


def test_browser_notebook_shows_its_figures(site, browser_pages):
    info = browser_pages["notebook"]
    images = info["images"]
    assert images, f"no image on {info['path']}"
    page = site.html / info["path"]
    for img in images:
        assert img["complete"] and img["width"] > 0, f"image not shown: {img['src']}"
        src = urlsplit(img["src"]).path
        assert (page.parent / unquote(src)).resolve().is_file(), src


def test_browser_api_page_documents_psdquotient(browser_pages):
    info = browser_pages["api_psdquotient"]
    assert "PSDQuotient" in info["title"]
    assert re.search(r'id="quadnet(\.[a-z_]+)*\.PSDQuotient"', info["dom"])
    assert re.search(r'id="quadnet(\.[a-z_]+)*\.PSDQuotient\.horizontal_projection"',
                     info["dom"]), "the methods of PSDQuotient are not documented"


@pytest.mark.parametrize("name", ["home", "api_psdquotient", "user_guide", "notebook"])
def test_browser_screenshots_show_a_page(browser_pages, name):
    from PIL import Image

    with Image.open(browser_pages[name]["screenshot"]) as im:
        assert im.size == (1280, 900)
        lo_hi = im.convert("L").getextrema()
    assert lo_hi[1] - lo_hi[0] > 100, f"the screenshot of {name} is blank"


def _formula_pages(html: Path) -> list[str]:
    return [p.relative_to(html).as_posix() for p in sorted(html.rglob("*.html"))
            if not {"_static", "_modules", "generated"} & set(p.relative_to(html).parts)
            and 'class="math' in p.read_text(encoding="utf-8")]


def _formula_problems(html: Path, pages: list[str]) -> dict[str, list[str]]:
    """``page -> what is wrong with its formulas`` (empty lists for good pages), from
    MathJax's own finder and TeX parser run on every page in one browser session."""
    shots = _load_screenshots()
    if shots.find_chromium() is None:
        _skip_or_fail("chromium is not installed (Debian: apt-get install chromium)")
    with shots.serve(html) as base, shots.Browser(1280, 900) as browser:
        host = browser.open(base + "index.html")
        assert host["mathjax"], "MathJax did not load on index.html"
        found = browser.compile_formulas([base + rel for rel in pages])
    problems = {}
    for rel in pages:
        info, bad = found[base + rel], []
        if not info["loads_mathjax"]:
            bad.append("the page does not load MathJax")
        if not info["found"]:
            bad.append("MathJax finds no formula in it")
        if info["untypeset"]:
            bad.append(f"{info['untypeset']} of {info['math_spans']} .math elements hold no "
                       "formula MathJax can read")
        bad += [f"MathJax error or unknown macro: {tex}" for tex in info["errors"]]
        bad += [f"raw TeX in the text: {raw}" for raw in info["raw_tex"]]
        problems[rel] = bad
    return problems


def test_browser_every_formula_of_the_site_typesets(site):
    """All pages with formulas (API stubs aside): each loads MathJax, and MathJax, with the
    site's configuration, finds every formula and parses it without an error or an unknown
    macro, leaving no delimiter in the text. The TeX input is run on every page; the CHTML
    output (the same code on every page, and most of the time) is exercised in full on the
    four pages of ``test_browser_typesets_the_formulas``."""
    pages = _formula_pages(site.html)
    assert len(pages) >= 20, f"only {len(pages)} pages with formulas: {pages}"
    problems = _formula_problems(site.html, pages)
    bad = [f"{rel}: " + "; ".join(msgs) for rel, msgs in problems.items() if msgs]
    assert not bad, "formulas that do not render:\n" + "\n".join(bad)


def test_the_formula_check_finds_each_kind_of_broken_formula(site, tmp_path):
    """The check above on a page with one formula of each broken kind (and a fine one that
    loads a MathJax extension on demand): each is named."""
    page = (site.html / "theory" / "quotient.html").read_text(encoding="utf-8")
    math = '<span class="math notranslate nohighlight">{}</span>'
    broken = ("<p>stray \\( in the text "
              + " ".join(math.format(t) for t in (r"\(\nosuchmacro x\)", r"\(x^{^}\)",
                                                  r"\(\frac{1}{\)", "no TeX at all",
                                                  r"\(\textcolor{red}{y}\)"))
              + "</p>")
    assert page.count("<p>") > 0
    (tmp_path / "theory").mkdir()
    (tmp_path / "_static").symlink_to(site.html / "_static", target_is_directory=True)
    (tmp_path / "index.html").write_text((site.html / "index.html").read_text("utf-8"), "utf-8")
    (tmp_path / "theory" / "good.html").write_text(page, encoding="utf-8")
    (tmp_path / "theory" / "broken.html").write_text(page.replace("<p>", broken, 1), "utf-8")
    unloaded = re.sub(r'<script[^>]*mathjax/tex-chtml\.js[^>]*></script>', "", page)
    assert unloaded != page
    (tmp_path / "theory" / "unloaded.html").write_text(unloaded, encoding="utf-8")
    problems = _formula_problems(tmp_path, ["theory/good.html", "theory/broken.html",
                                            "theory/unloaded.html"])
    assert problems["theory/good.html"] == []
    assert problems["theory/unloaded.html"] == ["the page does not load MathJax"]
    found = problems["theory/broken.html"]
    assert found == [
        "2 of " + str(page.count('class="math') + 5) + " .math elements hold no formula "
        "MathJax can read",
        r"MathJax error or unknown macro: \nosuchmacro x",
        r"MathJax error or unknown macro: x^{^}",
        r"raw TeX in the text: stray \( in the text",
        r"raw TeX in the text: \(\frac{1}{\)",
    ], found


# --------------------------------------------------------------------------- the tour
def test_getting_started_tour_runs():
    """Every Python block of docs/getting_started.md runs, in order, without deprecations."""
    text = (DOCS / "getting_started.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    assert len(blocks) >= 5
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for block in blocks:
            exec(compile(block, "docs/getting_started.md", "exec"), namespace)
    assert namespace["rfm"].history_["val_acc"][-1] == 1.0


# --------------------------------------------------------------------------- search
def _search_index(site) -> dict:
    import json

    text = (site.html / "searchindex.js").read_text(encoding="utf-8").strip()
    assert text.startswith("Search.setIndex(") and text.endswith(")")
    return json.loads(text[len("Search.setIndex("):-1])


def test_search_index_titles_are_plain_text(site):
    """Titles with a formula are typeset on their page, but the search results and the
    browser tab show text: no TeX source there (docs/_ext/quadnet_plaintitles.py)."""
    index = _search_index(site)
    titles = list(index["titles"]) + list(index["alltitles"])
    assert not [t for t in titles if "\\" in t], "raw TeX in search titles"
    assert "Curvature, parallel transport and barycentres of ℳᵣ⁺" in index["titles"]
    page = (site.html / "riemannian.html").read_text(encoding="utf-8")
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert "\\" not in title and "ℳᵣ⁺" in title
    assert (site.html / "_static" / "quadnet_search_text.js").is_file()
    search_page = (site.html / "search.html").read_text(encoding="utf-8")
    assert "quadnet_search_text.js" in search_page
    assert "quadnet_search_text.js" not in (site.html / "index.html").read_text(encoding="utf-8")


def test_search_texts_by_regular_expressions_equal_the_html_parsers(site):
    """The page texts of ``quadnet_search_text.js`` are cut by regular expressions: on the
    pages with formulas (the ones with most markup) and on a page made to hold every part it
    drops, they are exactly what the HTML parser keeps."""
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import quadnet_plaintitles as plain
    finally:
        sys.path.remove(str(DOCS / "_ext"))

    def parsed(page):
        parser = plain._MainText()
        parser.feed(page)
        return "".join(parser.parts)

    made = ('<html><body><nav>left out</nav><main class="x" role="main"><h1>A &amp; B'
            '<a class="headerlink" href="#a">#</a></h1><script>var x = "<p>";</script>'
            '<style>p {color: red}</style><p>x &lt; y<br/>&#8776; z</p></main>'
            '<footer>left out</footer></body></html>')
    assert plain.main_text(made) == parsed(made) == "A & Bx < y≈ z"
    pages = _formula_pages(site.html)
    for rel in pages:
        page = (site.html / rel).read_text(encoding="utf-8")
        assert plain.main_text(page) == parsed(page), rel


_SEARCH_RESULTS = r"""
(async () => {
  const until = Date.now() + 60000;
  const box = () => document.getElementById("search-results");
  while (Date.now() < until) {
    const items = document.querySelectorAll("#search-results ul.search li");
    const snippets = document.querySelectorAll("#search-results ul.search li p.context");
    if (items.length && snippets.length >= Math.min(items.length, 3)) break;
    if (box() && /did not match/.test(box().innerText)) break;
    await new Promise(r => setTimeout(r, 200));
  }
  return JSON.stringify(Array.from(document.querySelectorAll("#search-results ul.search li"))
    .map(li => ({title: (li.querySelector("a") || {}).textContent || "",
                 snippet: (li.querySelector("p.context") || {}).textContent || ""})));
})()
"""


@pytest.mark.parametrize("how", ["http", "file"])
def test_browser_search_results_have_plain_titles_and_snippets(site, how):
    """A search on the built site (served over HTTP, and opened from the disk as the
    README's `python -m webbrowser` does): plain-text titles, a text snippet for results."""
    import json

    shots = _load_screenshots()
    if shots.find_chromium() is None:
        _skip_or_fail("chromium is not installed (Debian: apt-get install chromium)")
    with shots.serve(site.html) as base, shots.Browser(1280, 900) as browser:
        url = (base + "search.html" if how == "http"
               else (site.html / "search.html").resolve().as_uri())
        browser.open(url + "?q=barycentre")
        results = json.loads(browser.evaluate(_SEARCH_RESULTS))
    assert results, "the search for 'barycentre' found nothing"
    titles = [r["title"] for r in results]
    assert not [t for t in titles if "\\" in t], f"raw TeX in result titles: {titles}"
    assert any("ℳᵣ⁺" in t for t in titles), titles
    with_text = [r for r in results if r["snippet"].strip()]
    assert len(with_text) >= min(3, len(results)), f"results without snippets: {results[:5]}"
    assert any("barycentre" in r["snippet"].lower() for r in with_text)


# --------------------------------------------------------------------------- the course
@pytest.mark.parametrize("name", ["quotient_geometry", "lifts_geodesics_and_gradients",
                                  "curvature_of_the_quotient"])
def test_exercise_solutions_are_hidden_until_opened(site, name):
    """Each exercise's solution cell (tag ``hide-cell``) is a closed ``<details>`` element on the
    page, and each written solution a closed dropdown; the page has at least three of each."""
    import re

    page = (site.html / "tutorials" / f"{name}.html").read_text(encoding="utf-8")
    cells = re.findall(r'<details class="([^"]*\bhide\b[^"]*)"([^>]*)>(.*?)</details>', page,
                       flags=re.S)
    solutions = [(cls, attrs) for cls, attrs, body in cells if "assert" in body]
    assert len(solutions) >= 3, f"{name}: {len(solutions)} hidden solution cells"
    assert all("open" not in attrs for _, attrs in solutions), f"{name}: a solution is open"
    assert "tag_solution" in page
    drops = re.findall(r'<details class="[^"]*\bsd-dropdown\b[^"]*"([^>]*)>', page)
    assert all("open" not in attrs for attrs in drops), f"{name}: a written solution is open"
