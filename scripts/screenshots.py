"""Screenshots of the built documentation in headless Chromium.

Usage::

    python -m sphinx -W --keep-going -n -b html docs docs/_build/html
    python scripts/screenshots.py [--html docs/_build/html] [--out docs/_static/screenshots]

Writes four PNGs: the home page, the ``PSDQuotient`` API page, a user-guide page with
formulas, and a notebook page scrolled to its first figure. The site is served from
``127.0.0.1`` (a throw-away HTTP server on a free port) so that MathJax loads its fonts as on
any web host. Chromium runs headless with a fresh profile and background networking off, and
is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``), so nothing but
the Python standard library is needed. ``tests/docs/test_docs.py`` uses the same helpers.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import functools
import http.server
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HTML = ROOT / "docs" / "_build" / "html"
DEFAULT_OUT = ROOT / "docs" / "_static" / "screenshots"

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
]

#: JavaScript run in the page once it has loaded: waits for MathJax to finish typesetting and
#: for the web fonts, then describes what a reader sees.
_INSPECT = r"""
(async () => {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) { await mj.startup.promise; }
  if (mj && mj.typesetPromise) { await mj.typesetPromise(); }
  await document.fonts.ready;
  const skip = "script, style, pre, code, textarea, mjx-container, .highlight";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const raw = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement && n.parentElement.closest(skip)) continue;
    const t = n.textContent;
    if (/\\\(|\\\)|\\\[|\\\]|\$\$/.test(t)) raw.push(t.trim().slice(0, 120));
  }
  const imgs = Array.from(document.images).map(i => ({
    src: i.getAttribute("src"), complete: i.complete, width: i.naturalWidth}));
  return JSON.stringify({
    title: document.title,
    mathjax: !!(mj && mj.version), mathjax_version: mj && mj.version,
    mjx: document.querySelectorAll("mjx-container").length,
    mjx_errors: document.querySelectorAll("mjx-merror, [data-mjx-error]").length,
    math_spans: document.querySelectorAll(".math").length,
    untypeset: Array.from(document.querySelectorAll(".math"))
                 .filter(e => !e.querySelector("mjx-container")).length,
    raw_tex: raw, images: imgs,
    fonts: Array.from(document.fonts).filter(f => f.status === "loaded")
                .map(f => f.family).filter(f => f.startsWith("MJX")).length,
  });
})()
"""


#: JavaScript run in a page that has loaded MathJax: fetches each page of ``urls``, parses it
#: into a detached document and runs MathJax's own pipeline on it up to the TeX input
#: (``findMath().compile()``: the site's configuration decides what is a formula, the TeX
#: parser reports what it cannot read), without the CHTML output, which is the slow part of
#: typesetting and is the same code on every page (the four pages of :func:`pages` are
#: typeset in full). Per page it reports the formulas found, those MathJax turned into an
#: error or an unknown macro (with their TeX), ``.math`` elements with no formula found in them, delimiters left
#: in the text outside every formula found, and whether the page loads MathJax itself.
_COMPILE_FORMULAS = r"""
(async (urls) => {
  const mj = window.MathJax;
  await mj.startup.promise;
  const skip = "script, style, pre, code, textarea, .highlight";
  const delim = /\\\(|\\\)|\\\[|\\\]|\$\$/;
  const out = {};
  for (const url of urls) {
    const response = await fetch(url);
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    const md = mj.startup.getDocument(doc);
    // an extension loaded on demand (\\textcolor, ...) makes MathJax throw a retry
    await mj._.util.Retries.handleRetriesFor(() => md.findMath().compile());
    const covered = new Map();
    const cover = (node, a, b) => {
      if (!covered.has(node)) covered.set(node, []);
      covered.get(node).push([a, b]);
    };
    const holders = new Set();
    const errors = [];
    let found = 0;
    for (const item of md.math) {
      found++;
      let bad = false;
      item.root.walkTree(node => {
        if (node.isKind("merror")) bad = true;  // a TeX error (unbalanced braces, ...)
        else if (node.isKind("mtext") && node.attributes.get("mathcolor") === "red") {
          // the noundefined extension shows an unknown macro as its name in red
          const t = node.childNodes.map(c => (c.getText ? c.getText() : "")).join("");
          if (t.startsWith("\\")) bad = true;
        }
      });
      if (bad) errors.push(item.math.slice(0, 120));
      const s = item.start, e = item.end;
      if (s.node === e.node) cover(s.node, s.n, e.n);
      else {
        cover(s.node, s.n, Infinity);
        cover(e.node, 0, e.n);
        const w = doc.createTreeWalker(doc.body, NodeFilter.SHOW_TEXT);
        w.currentNode = s.node;
        for (let t = w.nextNode(); t && t !== e.node; t = w.nextNode()) cover(t, 0, Infinity);
      }
      for (let el = s.node.parentElement; el; el = el.parentElement) holders.add(el);
    }
    const raw = [];
    const walker = doc.createTreeWalker(doc.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.parentElement && n.parentElement.closest(skip)) continue;
      let t = n.textContent;
      const spans = (covered.get(n) || []).sort((x, y) => y[0] - x[0]);
      for (const [a, b] of spans) t = t.slice(0, a) + " " + t.slice(Math.min(b, t.length));
      if (delim.test(t)) raw.push(t.trim().slice(0, 120));
    }
    out[url] = {
      found: found, errors: errors, raw_tex: raw,
      math_spans: doc.querySelectorAll(".math").length,
      untypeset: Array.from(doc.querySelectorAll(".math")).filter(e => !holders.has(e)).length,
      loads_mathjax: !!doc.querySelector('script[src*="mathjax/tex-chtml.js"]'),
    };
  }
  return JSON.stringify(out);
})
"""


def find_chromium() -> str | None:
    """Path of a Chromium binary (Debian's ``chromium``), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no request log on stderr
        pass


@contextlib.contextmanager
def serve(directory: Path):
    """Serve ``directory`` on ``http://127.0.0.1:<free port>/`` for the ``with`` block."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _high_fd(fd: int) -> int:
    """A duplicate of ``fd`` numbered 10 or more (the original is closed)."""
    import fcntl

    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Browser:
    """Headless Chromium driven over the DevTools protocol on a pipe.

    >>> with Browser() as b:                                     # doctest: +SKIP
    ...     info = b.open("http://127.0.0.1:8000/index.html")    # waits for MathJax
    ...     b.screenshot("home.png")
    """

    def __init__(self, width: int = 1280, height: int = 900, timeout: float = 60.0):
        self.width, self.height, self.timeout = width, height, timeout
        self._id = 0
        self._buf = b""
        self._events: list[dict] = []

    # -- process -------------------------------------------------------------------------
    def __enter__(self) -> "Browser":
        exe = find_chromium()
        if exe is None:
            raise FileNotFoundError("chromium not found (Debian: apt-get install chromium)")
        self._profile = tempfile.TemporaryDirectory(prefix="quadnet-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # the child's ends go above fd 9, so that moving them to 3 and 4 clobbers neither
        to_chrome_r, from_chrome_w = (_high_fd(to_chrome_r), _high_fd(from_chrome_w))
        # Chromium reads commands on fd 3 and writes replies on fd 4; bash puts the two pipe
        # ends there (no preexec_fn: the caller may run threads)
        cmd = [shutil.which("bash") or "/bin/bash", "-c",
               'exec 3<&"$QN_R" 4>&"$QN_W" {QN_R}<&- {QN_W}>&-; exec "$@"', "bash", exe,
               *CHROMIUM_FLAGS, f"--user-data-dir={self._profile.name}",
               "--remote-debugging-pipe", "about:blank"]
        env = dict(os.environ, QN_R=str(to_chrome_r), QN_W=str(from_chrome_w))
        self._proc = subprocess.Popen(cmd, env=env, pass_fds=(to_chrome_r, from_chrome_w),
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        try:
            target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self._send("Target.attachToTarget",
                                       {"targetId": target, "flatten": True})["sessionId"]
            self._send("Page.enable", session=True)
            self._send("Runtime.enable", session=True)
            self.resize(self.width, self.height)
        except Exception:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        with contextlib.suppress(Exception):
            self._send("Browser.close", timeout=5)
        for fd in (self._to_chrome, self._from_chrome):
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()  # our own child, by its handle
            self._proc.wait(timeout=10)
        if self._proc.stderr:
            self._proc.stderr.close()
        self._profile.cleanup()

    # -- protocol ------------------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply from chromium")
            ready, _, _ = select.select([self._from_chrome], [], [], left)
            if ready:
                chunk = os.read(self._from_chrome, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def _send(self, method: str, params: dict | None = None, session: bool = False,
              timeout: float | None = None) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self._session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self._events.append(reply)

    def _wait_event(self, method: str, timeout: float | None = None) -> dict:
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for i, ev in enumerate(self._events):
                if ev.get("method") == method:
                    return self._events.pop(i)
            self._events.append(self._read_message(deadline))

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (promises are awaited)."""
        res = self._send("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                              "returnByValue": True}, session=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"javascript error: {res['exceptionDetails']}")
        return res["result"].get("value")

    # -- pages ---------------------------------------------------------------------------
    def resize(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self._send("Emulation.setDeviceMetricsOverride",
                   {"width": width, "height": height, "deviceScaleFactor": 1,
                    "mobile": False}, session=True)

    def open(self, url: str) -> dict:
        """Load ``url``, wait until MathJax and the fonts are done, describe the page."""
        self._events.clear()
        self._send("Page.navigate", {"url": url}, session=True)
        self._wait_event("Page.loadEventFired")
        return json.loads(self.evaluate(_INSPECT))

    def compile_formulas(self, urls: list[str]) -> dict[str, dict]:
        """Every formula of the pages ``urls`` through MathJax's TeX input, from the page
        open now (which must load MathJax): ``url -> {found, errors, raw_tex, math_spans,
        untypeset, loads_mathjax}`` (see ``_COMPILE_FORMULAS``)."""
        return json.loads(self.evaluate(_COMPILE_FORMULAS + "(%s)" % json.dumps(list(urls))))

    def html(self) -> str:
        """The current DOM (after scripts ran) as HTML text."""
        return self.evaluate("document.documentElement.outerHTML")

    def scroll_to(self, selector: str) -> bool:
        """Scroll the first element matching ``selector`` to the middle of the view."""
        return bool(self.evaluate(
            "(() => { const e = document.querySelector(%s); if (!e) return false;"
            " document.documentElement.style.scrollBehavior = 'auto';"
            " e.scrollIntoView({block: 'center', behavior: 'instant'});"
            " return new Promise(r => requestAnimationFrame(() => r(true))); })()"
            % json.dumps(selector)))

    def screenshot(self, path: Path) -> Path:
        """A PNG of the current view."""
        data = self._send("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


def pages(html: Path) -> dict[str, str]:
    """The four pages to show, as paths relative to the site root (``name -> path``)."""
    html = Path(html)
    api = sorted(html.glob("api/generated/*.PSDQuotient.html"), key=lambda p: len(p.name))
    if not api:
        raise FileNotFoundError(f"no PSDQuotient API page under {html}/api/generated")
    guide = html / "theory" / "quotient.html"
    if not guide.is_file():  # any user-guide page will do
        guide = next(iter(sorted((html / "theory").glob("*.html"))), html / "curvature.html")
    notebook = html / "tutorials" / "quotient_geometry.html"
    if not notebook.is_file():
        notebook = next(p for p in sorted((html / "tutorials").glob("*.html"))
                        if p.name != "index.html" and "<img" in p.read_text(encoding="utf-8"))
    return {
        "home": "index.html",
        "api_psdquotient": api[0].relative_to(html).as_posix(),
        "user_guide": guide.relative_to(html).as_posix(),
        "notebook": notebook.relative_to(html).as_posix(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--html", type=Path, default=DEFAULT_HTML, help="the built site")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the PNGs go")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=900)
    args = ap.parse_args(argv)
    if not (args.html / "index.html").is_file():
        ap.error(f"{args.html} has no index.html: build the site first "
                 "(python -m sphinx -W --keep-going -n -b html docs docs/_build/html)")
    if find_chromium() is None:
        ap.error("chromium not found (Debian: apt-get install chromium)")
    targets = pages(args.html)
    with serve(args.html) as base, Browser(args.width, args.height) as browser:
        for name, rel in targets.items():
            info = browser.open(base + rel)
            if name == "notebook":  # show a figure, not only the first code cell
                browser.scroll_to(".cell_output img")
            out = browser.screenshot(args.out / f"{name}.png")
            shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
            print(f"{shown}  <- {rel}  ({info['mjx']} formulas typeset, "
                  f"{len(info['images'])} images)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
