"""Plain-text titles where no formula can be typeset: the search results and the browser tab.

A heading such as ``Curvature ... barycentres of $\\mathcal{M}_r^+$`` is typeset on its page
by MathJax, but the search index and the ``<title>`` element hold text only, so they would
show the TeX source. This extension turns the formulas of those titles into Unicode text
(``barycentres of ℳᵣ⁺``):

* at ``html-page-context`` the page's ``title`` (the browser tab, ``<title>``);
* at ``build-finished`` the titles of ``searchindex.js`` (page titles and section titles):
  the search index holds a title as the text of its nodes (a formula as bare TeX); the
  titles holding a formula are recorded per page when the page is read (``doctree-read``)
  and replaced by their Unicode text.

:func:`tex_to_text` does the conversion (Greek letters, common symbols and operators,
calligraphic letters, sub- and superscripts; any other command loses its backslash).

It also gives the search results their text snippets when the site is opened from the disk
(``file://``), where a browser may refuse the page fetches Sphinx's search cuts snippets
from: ``_static/quadnet_search_text.js`` (loaded by the search page only) answers them, on
any host, with the text of each page (its formulas in Unicode, like the titles).
"""

from __future__ import annotations

import html
import html.parser
import json
import re
from pathlib import Path

_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "ϕ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ",
    "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
_SYMBOLS = {
    "cong": "≅", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠",
    "to": "→", "rightarrow": "→", "mapsto": "↦", "in": "∈", "subset": "⊂", "times": "×",
    "cdot": "·", "otimes": "⊗", "oplus": "⊕", "infty": "∞", "approx": "≈", "sim": "∼",
    "pm": "±", "partial": "∂", "nabla": "∇", "top": "ᵀ", "perp": "⊥", "|": "‖", "ell": "ℓ",
    "star": "⋆", "circ": "∘", "ldots": "…", "dots": "…", "cdots": "⋯", ",": " ", ";": " ",
    "quad": " ", "qquad": " ", "!": "", " ": " ", "{": "{", "}": "}",
}
_OPERATORS = ("min", "max", "log", "exp", "det", "tr", "sup", "inf", "lim", "dim", "rank",
              "diag", "sign")
_CAL = {"A": "𝒜", "B": "ℬ", "C": "𝒞", "D": "𝒟", "E": "ℰ", "F": "ℱ", "G": "𝒢", "H": "ℋ",
        "I": "ℐ", "J": "𝒥", "K": "𝒦", "L": "ℒ", "M": "ℳ", "N": "𝒩", "O": "𝒪", "P": "𝒫",
        "Q": "𝒬", "R": "ℛ", "S": "𝒮", "T": "𝒯", "U": "𝒰", "V": "𝒱", "W": "𝒲", "X": "𝒳",
        "Y": "𝒴", "Z": "𝒵"}
_SUP = dict(zip("0123456789+-=()nirT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱʳᵀ"))
_SUB = dict(zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]|\$\$(.+?)\$\$|\$(.+?)\$", re.S)
_MATH_NO_DOLLARS = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)


def _group(s: str, i: int) -> tuple[str, int]:
    """The argument starting at ``s[i]``: a braced group or one character (or command)."""
    if i >= len(s):
        return "", i
    if s[i] == "{":
        depth, j = 1, i + 1
        while j < len(s) and depth:
            depth += {"{": 1, "}": -1}.get(s[j], 0)
            j += 1
        return s[i + 1:j - 1], j
    if s[i] == "\\":
        m = re.match(r"\\([A-Za-z]+|.)", s[i:])
        return m.group(0), i + len(m.group(0))
    return s[i], i + 1


def _script(text: str, table: dict[str, str], mark: str) -> str:
    plain = _math(text)
    if plain and all(c in table for c in plain):
        return "".join(table[c] for c in plain)
    return f"{mark}{plain}" if len(plain) == 1 else f"{mark}({plain})"


def _math(s: str) -> str:
    """TeX math (without delimiters) as Unicode text."""
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", s[i:])
            name, i = m.group(1), i + len(m.group(0))
            if name in ("mathcal", "mathscr"):
                arg, i = _group(s, i)
                out.append("".join(_CAL.get(ch, ch) for ch in _math(arg)))
            elif name in ("mathrm", "mathbf", "mathit", "mathsf", "text", "operatorname",
                          "boldsymbol", "mathbb", "textrm"):
                arg, i = _group(s, i)
                out.append(_math(arg) if name != "mathbb" else
                           "".join({"R": "ℝ", "N": "ℕ", "Z": "ℤ", "E": "𝔼", "C": "ℂ",
                                    "Q": "ℚ"}.get(ch, ch) for ch in arg))
            elif name in ("left", "right", "big", "Big", "bigl", "bigr", "Bigl", "Bigr",
                          "displaystyle"):
                continue
            elif name in _GREEK:
                out.append(_GREEK[name])
            elif name in _SYMBOLS:
                out.append(_SYMBOLS[name])
            elif name in _OPERATORS:
                out.append(name)
            else:
                out.append(name)
        elif c in "^_":
            arg, i = _group(s, i + 1)
            out.append(_script(arg, _SUP if c == "^" else _SUB, c))
        elif c in "{}":
            i += 1
        else:
            out.append(c)
            i += 1
    return re.sub(r"\s+", " ", "".join(out)).strip()


def tex_to_text(title: str, *, dollars: bool = True) -> str:
    """``title`` with every formula (``$...$``, ``\\(...\\)``, ``\\[...\\]``) as Unicode text.

    >>> tex_to_text(r"barycentres of \\(\\mathcal{M}_r^+\\)")
    'barycentres of ℳᵣ⁺'
    >>> tex_to_text(r"the joint $(\\eta, \\varepsilon)$ limit")
    'the joint (η, ε) limit'
    >>> tex_to_text(r"How quadnet measures a rate to $10^{-8}$")
    'How quadnet measures a rate to 10⁻⁸'
    """
    pattern = _MATH if dollars else _MATH_NO_DOLLARS  # page text: a "$" may be a prompt
    return pattern.sub(lambda m: _math(next(g for g in m.groups() if g is not None)), title)


def _plain(node) -> str:
    """The text of a title node with its formulas as Unicode (:func:`_math`)."""
    from docutils import nodes

    if isinstance(node, nodes.math):
        return _math(node.astext())
    if isinstance(node, nodes.Text):
        return str(node)
    return "".join(_plain(child) for child in node.children)


def _collect(app, doctree) -> None:
    """Remember, per page, the titles that hold a formula: their text as the search index
    holds it (``astext``, the bare TeX) and as Unicode."""
    from docutils import nodes

    found = {}
    for title in doctree.findall(nodes.title):
        if any(isinstance(n, nodes.math) for n in title.findall(nodes.math)):
            found[title.astext()] = _plain(title)
    store = app.env.__dict__.setdefault("quadnet_plain_titles", {})
    if found:
        store[app.env.docname] = found
    else:
        store.pop(app.env.docname, None)


def _purge(app, env, docname) -> None:
    env.__dict__.setdefault("quadnet_plain_titles", {}).pop(docname, None)


def _merge(app, env, docnames, other) -> None:
    mine = env.__dict__.setdefault("quadnet_plain_titles", {})
    for docname, found in other.__dict__.get("quadnet_plain_titles", {}).items():
        if docname in docnames:
            mine[docname] = found


def _page_title(app, pagename, templatename, context, doctree) -> None:
    if pagename == "search":  # on this page only: the page texts for a site opened as files
        app.add_js_file(SEARCH_TEXT)
    for key in ("title", "pagetitle"):
        if isinstance(context.get(key), str) and ("\\" in context[key] or "$" in context[key]):
            # the formula becomes plain text, so its math wrapper goes too (a `.math` element
            # without TeX is one MathJax never typesets, e.g. in the theme's breadcrumb)
            context[key] = re.sub(r'<span class="math[^"]*">(.*?)</span>', r"\1",
                                  tex_to_text(context[key]))


def _search_index(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    path = Path(app.outdir) / "searchindex.js"
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8").rstrip()
    head, tail = "Search.setIndex(", ")"
    if not (text.startswith(head) and text.endswith(tail)):
        return
    index = json.loads(text[len(head):-len(tail)])
    plain: dict[str, str] = {}
    for found in app.env.__dict__.get("quadnet_plain_titles", {}).values():
        plain.update(found)

    def fix(title: str) -> str:
        return plain.get(title) or (tex_to_text(title) if "\\(" in title else title)

    index["titles"] = [fix(t) for t in index.get("titles", [])]
    merged: dict[str, list] = {}
    for title, places in index.get("alltitles", {}).items():
        merged.setdefault(fix(title), []).extend(places)
    index["alltitles"] = merged
    new = head + json.dumps(index, ensure_ascii=False, separators=(",", ":")) + tail
    if new != text:
        path.write_text(new, encoding="utf-8")
    _search_text(app)


SEARCH_TEXT = "quadnet_search_text.js"

#: Sphinx's search fetches each result page to cut a snippet around the words searched for.
#: A site opened from the disk (``file://``) may not fetch, so its snippets would be empty,
#: and a fetched page's formulas are TeX source: the fetch of a page is answered from this
#: table of page texts instead (formulas in Unicode), wherever the site is opened.
_SEARCH_JS = """(() => {
  const texts = %s;
  const realFetch = window.fetch.bind(window);
  window.fetch = (url, options) => {
    const root = new URL(document.documentElement.dataset.content_root || "./",
                         window.location.href).href;
    const target = new URL(String(url), window.location.href).href.split("#")[0];
    const doc = target.startsWith(root) ? target.slice(root.length).replace(/\\.html$/, "")
                                        : null;
    if (doc === null || !(doc in texts)) return realFetch(url, options);
    const esc = texts[doc].replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    return Promise.resolve(new Response('<div role="main">' + esc + "</div>",
                                        {headers: {"Content-Type": "text/html"}}));
  };
})();
"""


class _MainText(html.parser.HTMLParser):
    """The text of the ``role="main"`` element of a page, without scripts, styles and the
    ``#`` links of headings (what Sphinx's search keeps of a fetched page)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # open elements inside main: True = text left out
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in _VOID:
            return
        attrs = dict(attrs)
        if self.stack:
            drop = tag in ("script", "style") or "headerlink" in (attrs.get("class") or "")
            self.stack.append(drop or self.stack[-1])
        elif attrs.get("role") == "main":
            self.stack.append(False)

    def handle_endtag(self, tag):
        if self.stack and tag not in _VOID:
            self.stack.pop()

    def handle_data(self, data):
        if self.stack and not self.stack[-1]:
            self.parts.append(data)


_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}


_MAIN = re.compile(r'<(\w+)\b[^>]*\brole="main"[^>]*>')
_LEFT_OUT = re.compile(r'<(script|style)\b[^>]*>.*?</\1\s*>'
                       r'|<a\b[^>]*\bclass="[^"]*headerlink[^"]*"[^>]*>.*?</a\s*>', re.S)
_TAG = re.compile(r"<[^>]*>")


def main_text(page: str) -> str:
    """What :class:`_MainText` collects from ``page``, by regular expressions when the main
    element is a ``<main>`` (it cannot nest, so its end is the first ``</main>``; ten times
    faster than the parser, and the same text on every page of this site); by the parser
    otherwise."""
    found = _MAIN.search(page)
    if found is None or found.group(1).lower() != "main":
        parser = _MainText()
        parser.feed(page)
        return "".join(parser.parts)
    end = page.find("</main>", found.end())
    inner = page[found.end():end if end >= 0 else len(page)]
    return html.unescape(_TAG.sub("", _LEFT_OUT.sub("", inner)))


def _search_text(app) -> None:
    texts = {}
    for docname in sorted(app.env.found_docs):
        page = Path(app.outdir) / f"{docname}.html"
        if not page.is_file():
            continue
        text = re.sub(r"\s+", " ", main_text(page.read_text(encoding="utf-8"))).strip()
        texts[docname] = tex_to_text(text, dollars=False)
    out = Path(app.outdir) / "_static" / SEARCH_TEXT
    out.write_text(_SEARCH_JS % json.dumps(texts, ensure_ascii=False, separators=(",", ":")),
                   encoding="utf-8")


def setup(app):
    app.connect("doctree-read", _collect)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("html-page-context", _page_title)
    app.connect("build-finished", _search_index)
    return {"version": "2", "env_version": 1, "parallel_read_safe": True,
            "parallel_write_safe": True}
