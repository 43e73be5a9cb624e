"""Generate the API reference of a package from its ``__all__``.

At ``builder-inited`` this writes ``api/index.rst``, one page for the package namespace
(``api/<package>.rst``) and one page per public module that the package lists in
``__all__`` (recursively: a listed module's own ``__all__`` may list further modules). Every
page has ``autosummary`` tables; a name gets its own stub page (``api/generated/``) exactly
once, at its *canonical* location:

* the listed module whose dotted name is the longest prefix of the object's ``__module__``
  (the public subpackage that defines it), else
* the first listed module whose ``__all__`` names it, else
* the package namespace itself (a flat package).

Every other place that exports the name shows it in a link-only table pointing at that one
page, so no object is described twice. A ``missing-reference`` handler resolves any public
spelling of an object (``quadnet.PSDQuotient``, ``quadnet.geometry.manifold.PSDQuotient``,
a bare ``PSDQuotient`` in a signature) to its canonical page.

The generator imports the package only; it works on whatever ``__all__`` holds at build time
and removes stale pages of names that no longer exist. Run it by hand with
``python docs/_ext/quadnet_apigen.py`` to see what it would write (``--write`` writes).
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "quadnet"
API_DIR = "api"
GENERATED = "generated"


# ----------------------------------------------------------------------------- model
@dataclass
class Entry:
    """One public name exported by one page module."""

    name: str  # the name in that module's __all__
    obj: object
    key: tuple  # identity of the object (several names may share it)


@dataclass
class Page:
    module: types.ModuleType
    entries: list[Entry] = field(default_factory=list)
    submodules: list[types.ModuleType] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.module.__name__


def _key(name: str, obj: object) -> tuple:
    mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(mod, str) and isinstance(qual, str) and (
        inspect.isclass(obj) or inspect.isroutine(obj) or callable(obj)
    ):
        return ("obj", mod, qual)
    # data: the same value under the same name is the same documented object
    return ("data", name, id(obj))


def _public_all(module: types.ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    seen, out = set(), []
    for n in names:
        if n not in seen:
            seen.add(n)
            out.append(n)
    return out


def collect(package: str = PACKAGE) -> list[Page]:
    """The pages: the package namespace first, then every module listed in an ``__all__``."""
    root = importlib.import_module(package)
    pages: list[Page] = []
    queue, seen = [root], {root.__name__}
    while queue:
        module = queue.pop(0)
        page = Page(module)
        for name in _public_all(module):
            try:
                obj = getattr(module, name)
            except AttributeError:
                continue  # a stale __all__ entry: nothing to document
            if isinstance(obj, types.ModuleType):
                if obj.__name__.startswith(root.__name__ + "."):
                    page.submodules.append(obj)
                    if obj.__name__ not in seen:
                        seen.add(obj.__name__)
                        queue.append(obj)
                continue
            page.entries.append(Entry(name, obj, _key(name, obj)))
        pages.append(page)
    return pages


def canonical_names(pages: list[Page]) -> dict[tuple, str]:
    """``key -> dotted name`` of the one place each object is documented."""
    root, subs = pages[0], pages[1:]
    canon: dict[tuple, str] = {}
    keys = [e.key for p in pages for e in p.entries]
    for key in dict.fromkeys(keys):
        homes = [(p, e) for p in subs for e in p.entries if e.key == key]
        defining = key[1] if key[0] == "obj" else ""
        best = None
        for p, e in homes:
            if defining == p.name or defining.startswith(p.name + "."):
                if best is None or len(p.name) > len(best[0].name):
                    best = (p, e)
        if best is None and homes:
            best = homes[0]
        if best is None:
            e = next(e for e in root.entries if e.key == key)
            best = (root, e)
        # within that module, the object's own name beats an alias (``Old = New``)
        own = getattr(best[1].obj, "__name__", None)
        same = [e for e in best[0].entries if e.key == key and e.name == own]
        if same:
            best = (best[0], same[0])
        canon[key] = f"{best[0].name}.{best[1].name}"
    return canon


# ----------------------------------------------------------------------------- grouping
def _first_sentence(doc: str | None) -> str:
    if not doc:
        return ""
    para = inspect.cleandoc(doc).split("\n\n")[0].replace("\n", " ").strip()
    for stop in (". ", ": "):
        if stop in para:
            para = para.split(stop)[0]
    return para.rstrip(".:")


def _group_of(page: Page, entry: Entry) -> str | None:
    """The public module right below ``page`` that holds ``entry`` (for section headings)."""
    base = page.name
    mod = getattr(entry.obj, "__module__", None) if entry.key[0] == "obj" else None
    if isinstance(mod, str) and mod.startswith(base + "."):
        part = mod[len(base) + 1:].split(".")[0]
        if not part.startswith("_"):
            return f"{base}.{part}"
    # a private defining module, or data: the public sibling module that exports it
    for attr in sorted(vars(page.module)):
        sub = getattr(page.module, attr)
        if (not attr.startswith("_") and isinstance(sub, types.ModuleType)
                and sub.__name__ == f"{base}.{attr}"
                and entry.name in (getattr(sub, "__all__", None) or ())):
            return sub.__name__
    return None


def _groups(page: Page, entries: list[Entry]) -> list[tuple[str | None, list[Entry]]]:
    groups: dict[str | None, list[Entry]] = {}
    for e in entries:
        groups.setdefault(_group_of(page, e), []).append(e)
    if len(groups) < 2 or len(entries) <= 10:
        return [(None, entries)]
    return sorted(groups.items(), key=lambda kv: kv[0] is None)  # "other" last


# ----------------------------------------------------------------------------- rendering
def _heading(text: str, char: str) -> list[str]:
    return [text, char * max(len(text), 3), ""]


def _rel(name: str, current: str) -> str:
    """``name`` relative to the current module (autosummary refuses the module's own prefix)."""
    tilde = name.startswith("~")
    bare = name.lstrip("~")
    if bare.startswith(current + "."):
        bare = bare[len(current) + 1:]
    return ("~" if tilde and "." in bare else "") + bare


def _table(names: list[str], toctree: bool, current: str | None = None) -> list[str]:
    if current:
        names = [_rel(n, current) for n in names]
    lines = [".. autosummary::", "   :nosignatures:"]
    if toctree:
        lines += [f"   :toctree: {GENERATED}/"]
    lines += ["", *(f"   {n}" for n in names), ""]
    return lines


def _module_title(module: types.ModuleType) -> str:
    return f"``{module.__name__}``"


def render_page(page: Page, canon: dict[tuple, str], is_root: bool,
                declared: set[str] | None = None) -> str:
    declared = set() if declared is None else declared
    lines = [".. This page is generated by docs/_ext/quadnet_apigen.py; do not edit.", ""]
    lines += _heading(_module_title(page.module), "=")
    lines += [f".. automodule:: {page.name}", "   :no-members:", "",
              f".. currentmodule:: {page.name}", ""]

    if page.submodules:
        lines += _heading("Subpackages" if is_root else "Modules", "-")
        lines += _table([f"~{m.__name__}" for m in page.submodules], toctree=False,
                        current=page.name)

    here = [e for e in page.entries if canon[e.key] == f"{page.name}.{e.name}"]
    homes = {e.name: canon[e.key].rsplit(".", 1)[0] for e in page.entries}
    aliases = [e for e in page.entries if e not in here and homes[e.name] == page.name]
    elsewhere = [e for e in page.entries if e not in here and e not in aliases]

    if here:
        if elsewhere or page.submodules:
            lines += _heading("Defined here" if not is_root else "Names", "-")
        sub = "~" if (elsewhere or page.submodules) else "-"
        for group, entries in _groups(page, here):
            if group is not None:
                summary = _first_sentence(getattr(sys.modules.get(group), "__doc__", None))
                title = re.sub(r"\s*\([^()]*\)$", "", summary).strip() or f"``{group}``"
                lines += _heading(title, sub)
                if title != f"``{group}``":
                    lines += [f"Module ``{group}``.", ""]
                if group not in declared:  # a target for :mod:`group` (no page of its own)
                    declared.add(group)
                    lines += [f".. py:module:: {group}", "   :no-index-entry:", "",
                              f".. currentmodule:: {page.name}", ""]
            lines += _table([e.name for e in entries], toctree=True)

    if aliases:
        lines += _heading("Aliases", "-")
        for e in aliases:
            target = canon[e.key].rsplit(".", 1)[1]
            kind = ("exception" if inspect.isclass(e.obj) and issubclass(e.obj, BaseException)
                    else "class" if inspect.isclass(e.obj)
                    else "function" if inspect.isroutine(e.obj) else "data")
            lines += [f".. py:{kind}:: {e.name}", "   :no-index-entry:", "",
                      f"   Another name of :py:obj:`{target}` (the same object).", ""]

    if elsewhere:
        title = "Top-level names" if is_root else "Re-exported names"
        lines += _heading(title, "-")
        if is_root:
            lines += [f"Each name below is importable as ``{page.name}.<name>``; it is "
                      "documented in the module that defines it.", ""]
        else:
            lines += [f"Each name below is importable as ``{page.name}.<name>``; it is "
                      "documented where it is defined.", ""]
        by_home: dict[str, list[Entry]] = {}
        for e in elsewhere:
            by_home.setdefault(canon[e.key].rsplit(".", 1)[0], []).append(e)
        for home, entries in by_home.items():
            if len(by_home) > 1:
                lines += _heading(f"From ``{home}``", "~")
            lines += _table([f"~{canon[e.key]}" for e in entries], toctree=False,
                            current=page.name)
    return "\n".join(lines).rstrip() + "\n"


def render_index(pages: list[Page]) -> str:
    root = pages[0]
    lines = [".. This page is generated by docs/_ext/quadnet_apigen.py; do not edit.", ""]
    lines += _heading("API reference", "=")
    n = len({e.key for p in pages for e in p.entries})
    lines += [
        f"Every public name of ``{root.name}``, generated from the ``__all__`` lists of the "
        f"package and of its public modules ({n} objects). Each object has one page, in the "
        "module that defines it; the namespace pages link to it.",
        "",
        ".. toctree::",
        "   :hidden:",
        "   :maxdepth: 1",
        "",
        *(f"   {p.name}" for p in pages),
        "",
    ]
    lines += [f".. currentmodule:: {root.name}", ""]
    lines += _table([f"~{p.name}" for p in pages], toctree=False, current=root.name)
    return "\n".join(lines).rstrip() + "\n"


def _write(path: Path, text: str) -> bool:
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False  # unchanged: keep the mtime so incremental builds stay incremental
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def generate(srcdir: Path, package: str = PACKAGE):
    """Write the API sources under ``srcdir/api``; return their docnames, canon map, pages."""
    pages = collect(package)
    canon = canonical_names(pages)
    api = Path(srcdir) / API_DIR
    wanted = {"index.rst": render_index(pages)}
    declared = {p.name for p in pages}  # modules that have a page (automodule) already
    for i, page in enumerate(pages):
        wanted[f"{page.name}.rst"] = render_page(page, canon, is_root=(i == 0),
                                                 declared=declared)
    for fname, text in wanted.items():
        _write(api / fname, text)
    # stale pages (a module or name that no longer exists) would be orphans: remove them
    for old in api.glob("*.rst"):
        if old.name not in wanted:
            old.unlink()
    stubs = {f"{name}.rst" for name in canon.values()}
    gen = api / GENERATED
    if gen.is_dir():
        for old in gen.glob("*.rst"):
            if old.name not in stubs:
                old.unlink()
    return [f"{API_DIR}/{f}" for f in wanted], canon, pages


# ----------------------------------------------------------------------------- resolving
def _import_dotted(target: str):
    """The object a dotted name points at, importing modules along the way, or None."""
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        modname = ".".join(parts[:i])
        try:
            obj = importlib.import_module(modname)
        except Exception:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except Exception:
            return None
        return obj
    return None


def _resolve_missing(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    canon: dict[tuple, str] = getattr(app, "_quadnet_canon", {})
    if not canon:
        return None
    target = node.get("reftarget", "")
    if not target:
        return None
    domain = env.get_domain("py")
    candidates = []
    context = node.get("py:module")
    if context:
        candidates.append(f"{context}.{target}")
    candidates.append(target)
    tail = target.rsplit(".", 1)[-1]
    for cand in candidates:
        if not cand.startswith(PACKAGE + ".") and cand != PACKAGE:
            continue
        head, _, attr = cand.rpartition(".")
        obj = _import_dotted(cand)
        if obj is None:
            continue
        if isinstance(obj, types.ModuleType):
            name = obj.__name__
        else:
            name = canon.get(_key(attr, obj))
            if name is None:
                # a method or attribute of a documented class: Class.attr
                owner = _import_dotted(head)
                owner_name = canon.get(_key(head.rsplit(".", 1)[-1], owner)) if owner else None
                name = f"{owner_name}.{attr}" if owner_name else None
        if name and name in domain.objects:
            return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", name,
                                       node, contnode)
    # a bare name (a string annotation such as "Loss"): one object exported under that name
    if "." not in target:
        hits = sorted(getattr(app, "_quadnet_by_name", {}).get(tail, ()))
        if len(hits) == 1 and hits[0] in domain.objects:
            return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", hits[0],
                                       node, contnode)
    return None


# ----------------------------------------------------------------------------- summaries
def _patch_extract_summary() -> None:
    """Never cut an autosummary summary inside inline markup.

    autosummary ends a summary at the first ``". "``; for ``Solve ``min tr Q s.t. A(Q) = y``
    ...`` that is inside a literal, and the table then shows broken markup. Sphinx means to
    check each candidate sentence, but re-parses the whole paragraph instead; this wrapper
    extends the summary sentence by sentence until it parses cleanly.
    """
    from docutils import nodes
    from sphinx.ext import autosummary as asum

    if getattr(asum.extract_summary, "_quadnet", False):
        return
    original = asum.extract_summary

    def clean(text: str, settings) -> bool:
        node = asum._parse_summary([text], settings)
        return not any(node.findall(nodes.system_message))

    def extract_summary(doc, settings):
        summary = original(doc, settings)
        if not summary or clean(summary, settings):
            return summary
        stanza = []
        for line in doc:
            if not line.strip():
                if stanza:
                    break
                continue
            stanza.append(line.strip())
        text = " ".join(stanza)
        sentences = asum.periods_re.split(text)
        for i in range(1, len(sentences) + 1):
            cand = ". ".join(sentences[:i]).rstrip(".") + "."
            if len(cand) > len(summary) and clean(cand, settings):
                return cand
        return text

    extract_summary._quadnet = True
    asum.extract_summary = extract_summary


# ----------------------------------------------------------------------------- data docs
def _data_docstring(app, what, name, obj, options, lines) -> None:
    """A re-exported constant: its ``#:`` comment in the defining module, not ``dict``'s doc."""
    if what != "data" or not name.startswith(PACKAGE + "."):
        return
    doc = "\n".join(lines).strip()
    raw = type(obj).__doc__
    type_doc = inspect.cleandoc(raw).strip() if isinstance(raw, str) else ""
    if doc and doc != type_doc:
        return
    from sphinx.pycode import ModuleAnalyzer

    attr = name.rsplit(".", 1)[1]
    for modname in sorted(m for m in list(sys.modules) if m.startswith(PACKAGE + ".")):
        module = sys.modules.get(modname)
        if module is None or getattr(module, attr, None) is not obj:
            continue
        try:
            found = ModuleAnalyzer.for_module(modname).find_attr_docs().get(("", attr))
        except Exception:
            continue
        if found:
            lines[:] = list(found)
            return
    if doc == type_doc:
        lines[:] = []


# ----------------------------------------------------------------------------- page aliases
def _doc_aliases(app, doctree) -> None:
    """Links to a page under another name (``RESULTS.md`` is shown as ``results``)."""
    from sphinx import addnodes

    aliases = app.config.quadnet_doc_aliases
    for node in doctree.findall(addnodes.pending_xref):
        if node.get("refdomain") == "doc" and node.get("reftarget") in aliases:
            node["reftarget"] = aliases[node["reftarget"]]


def _builder_inited(app) -> None:
    docnames, canon, pages = generate(Path(app.srcdir), app.config.quadnet_apigen_package)
    app._quadnet_canon = canon
    by_name: dict[str, set[str]] = {}
    for page in pages:
        for e in page.entries:
            by_name.setdefault(e.name, set()).add(canon[e.key])
    for name in canon.values():
        by_name.setdefault(name.rsplit(".", 1)[1], set()).add(name)
    app._quadnet_by_name = by_name
    # autosummary reads only these pages (not every Markdown page) to write the stubs
    app.config.autosummary_generate = docnames


def setup(app):
    app.add_config_value("quadnet_apigen_package", PACKAGE, "env")
    app.add_config_value("quadnet_doc_aliases", {}, "env")
    app.setup_extension("sphinx.ext.autosummary")
    _patch_extract_summary()
    app.connect("autodoc-process-docstring", _data_docstring, priority=400)
    app.connect("doctree-read", _doc_aliases)
    # before autosummary's own builder-inited hook (priority 500) writes the stub pages
    app.connect("builder-inited", _builder_inited, priority=100)
    app.connect("missing-reference", _resolve_missing, priority=400)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":  # pragma: no cover - a manual preview
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write docs/api/*.rst")
    args = ap.parse_args()
    docs = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(docs.parent))
    if args.write:
        print("\n".join(generate(docs)[0]))
    else:
        ps = collect()
        cn = canonical_names(ps)
        for i, p in enumerate(ps):
            print(render_page(p, cn, i == 0))
