"""Figures from a saved report: ``quadnet.harness.draw_figure`` and ``quadnet figures``.

A stand-in figure (``_tfig_curve``, constrained layout at single-column width like the
built-in ones) is drawn by a stand-in check; one real check (quotient, quick mode) shows that
a built-in figure redrawn at the default style and size has the bytes ``quadnet verify``
wrote.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from quadnet.harness import draw_figure, figure_names
from quadnet.harness.checks import CheckResult, register
from quadnet.harness.checks._base import COLUMN_WIDTH, REGISTRY, SLIDES_SIZE, figure
from quadnet.harness.cli import main

ROOT = Path(__file__).resolve().parents[2]
H0 = 2.5  # the stand-in's own height, inches


@figure("_tfig_curve")
def _draw(data: dict):
    import matplotlib.pyplot as plt
    import numpy as np

    x = np.asarray(data["x"], float)
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH, H0), layout="constrained")
    ax.plot(x, np.exp(-3 * x), label="measured")
    ax.set_xlabel("t (time units)")
    ax.set_ylabel("error")
    ax.annotate("a small note", (0.5, 0.5), fontsize=5.5)
    ax.legend()
    return fig


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A verify --json report of the stand-in check, and the figures verify drew."""
    tmp = tmp_path_factory.mktemp("fig")

    @register("_tfig", "a check with a figure", order=-40)
    def _check(ctx):
        res = CheckResult("_tfig", "a check with a figure")
        res.add("error", 1e-14, 1e-12)
        ctx.draw(res, "_tfig_curve", {"x": [i / 50 for i in range(51)]})
        return res

    try:
        assert main(["verify", "_tfig", "--quick", "--json", str(tmp / "r.json"), "--figures",
                     str(tmp / "verify")]) == 0
    finally:
        REGISTRY.pop("_tfig", None)
    return tmp / "r.json"


def _mediabox(path: Path) -> tuple[float, float]:
    """Width and height in points of the (single) page of a PDF."""
    (box,) = re.findall(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]",
                        path.read_bytes())
    x0, y0, x1, y1 = map(float, box)
    return x1 - x0, y1 - y0


def test_figure_names_are_registered_on_import():
    """A fresh interpreter: importing quadnet.harness is enough (no private registry call)."""
    code = ("from quadnet.harness import figure_names; names = figure_names(); "
            "print(len(names), 'rfm_grokking' in names, 'quotient_identities' in names)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=300, check=True).stdout.split()
    assert int(out[0]) >= 19 and out[1:] == ["True", "True"]
    assert not [n for n in figure_names() if n.startswith("_")]  # stand-ins are not listed


def test_default_style_and_size_are_byte_identical_to_verify(report, tmp_path):
    paths = draw_figure("_tfig_curve", report, out=tmp_path / "a")
    assert [Path(p).name for p in paths] == ["_tfig_curve.png", "_tfig_curve.pdf"]
    for ext in ("png", "pdf"):
        assert (tmp_path / "a" / f"_tfig_curve.{ext}").read_bytes() == \
            (report.parent / "verify" / f"_tfig_curve.{ext}").read_bytes()
    # the same bytes whatever formats are asked for, and from the dict as from the path
    draw_figure("_tfig_curve", json.loads(report.read_text()), formats=["pdf"],
                out=tmp_path / "b")
    assert (tmp_path / "b" / "_tfig_curve.pdf").read_bytes() == \
        (report.parent / "verify" / "_tfig_curve.pdf").read_bytes()
    assert not (tmp_path / "b" / "_tfig_curve.png").exists()


@pytest.mark.parametrize("width, height", [(6.0, None), (2.0, 1.5), (None, 4.0)])
def test_pdf_page_is_the_size_asked_for(report, tmp_path, width, height):
    draw_figure("_tfig_curve", report, width=width, height=height, out=tmp_path)
    w_pt, h_pt = _mediabox(tmp_path / "_tfig_curve.pdf")
    want_w = width if width is not None else COLUMN_WIDTH * height / H0
    want_h = height if height is not None else H0 * width / COLUMN_WIDTH  # aspect kept
    assert w_pt == pytest.approx(72 * want_w, abs=1e-6)
    assert h_pt == pytest.approx(72 * want_h, abs=1e-6)
    from PIL import Image

    with Image.open(tmp_path / "_tfig_curve.png") as im:  # 150 dpi, whole pixels
        assert abs(im.size[0] - 150 * want_w) < 1 and abs(im.size[1] - 150 * want_h) < 1


def test_svg_format_and_returned_figure(report, tmp_path):
    import matplotlib.pyplot as plt

    paths = draw_figure("_tfig_curve", report, width=5.0, height=2.0, formats="svg,pdf",
                        out=tmp_path)
    assert sorted(Path(p).name for p in paths) == ["_tfig_curve.pdf", "_tfig_curve.svg"]
    svg = (tmp_path / "_tfig_curve.svg").read_text()
    assert re.search(r'<svg[^>]* width="360pt" height="144pt"', svg)
    again = tmp_path / "again"
    draw_figure("_tfig_curve", report, width=5.0, height=2.0, formats=["svg"], out=again)
    assert (again / "_tfig_curve.svg").read_text() == svg  # deterministic SVG
    fig = draw_figure("_tfig_curve", report, width=5.0)
    try:
        assert tuple(fig.get_size_inches()) == pytest.approx((5.0, H0 * 5.0 / COLUMN_WIDTH))
    finally:
        plt.close(fig)


def test_slides_style_is_16_9_with_larger_text(report, tmp_path):
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    draw_figure("_tfig_curve", report, style="slides", out=tmp_path)
    w_pt, h_pt = _mediabox(tmp_path / "_tfig_curve.pdf")
    assert (w_pt, h_pt) == pytest.approx((72 * SLIDES_SIZE[0], 72 * SLIDES_SIZE[1]))
    assert SLIDES_SIZE[0] / SLIDES_SIZE[1] == pytest.approx(16 / 9)
    paper, slides = draw_figure("_tfig_curve", report), draw_figure("_tfig_curve", report,
                                                                     style="slides")
    try:
        def sizes(fig):
            return {t.get_text(): t.get_fontsize() for t in fig.findobj(Text) if t.get_text()}

        p, s = sizes(paper), sizes(slides)
        assert p["error"] == 7.0 and s["error"] == 14.0  # axis labels
        assert s["a small note"] == pytest.approx(2 * p["a small note"])  # explicit sizes too
        assert slides.axes[0].lines[0].get_linewidth() == 2 * paper.axes[0].lines[0]\
            .get_linewidth()
    finally:
        plt.close(paper)
        plt.close(slides)


def test_bad_arguments_are_refused_with_clear_messages(report):
    with pytest.raises(ValueError, match="unknown figure 'no_such_figure'; figures: .*"
                                         "rfm_grokking"):
        draw_figure("no_such_figure", report)
    with pytest.raises(ValueError, match="report holds no data for figure 'rfm_grokking'.*"
                                         "quadnet verify rfm --json FILE"):
        draw_figure("rfm_grokking", report)
    with pytest.raises(ValueError, match=r"width must be between 0 and 50 inches, got -1\.0"):
        draw_figure("_tfig_curve", report, width=-1)
    with pytest.raises(TypeError, match="height must be a number of inches, got str"):
        draw_figure("_tfig_curve", report, height="3")
    with pytest.raises(ValueError, match="style must be one of paper, slides, got 'poster'"):
        draw_figure("_tfig_curve", report, style="poster")
    with pytest.raises(ValueError, match="formats: 'jpg' is not one of png, pdf, svg"):
        draw_figure("_tfig_curve", report, formats=["pdf", "jpg"])
    with pytest.raises(ValueError, match="report: cannot read"):
        draw_figure("_tfig_curve", report.parent / "missing.json")
    with pytest.raises(TypeError, match="report must be a quadnet verify --json report"):
        draw_figure("_tfig_curve", [1, 2])


def test_cli_figures_width_height_format_style(report, tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["figures", "--from", str(report), "_tfig_curve", "--width", "6",
                 "--height", "3", "--format", "pdf,svg", "--style", "slides", "--out",
                 str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["_tfig_curve.pdf", "_tfig_curve.svg"]
    assert _mediabox(out / "_tfig_curve.pdf") == pytest.approx((432.0, 216.0))
    capsys.readouterr()
    assert main(["figures", "--from", str(report), "--format", "gif", "--out",
                 str(tmp_path / "x")]) == 2
    assert "formats: 'gif' is not one of png, pdf, svg" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()  # refused before anything was written
    assert main(["figures", "--from", str(report), "rfm_grokking", "--out", str(out)]) == 2
    assert "rfm_grokking not in" in capsys.readouterr().err


def test_a_built_in_figure_redrawn_at_the_default_is_what_verify_wrote(tmp_path, capsys):
    """quotient (quick): verify's files, draw_figure's and ``quadnet figures --from``'s are
    the same bytes (so the committed figures/ redraw byte for byte from their report)."""
    js = tmp_path / "r.json"
    assert main(["verify", "quotient", "--quick", "--json", str(js), "--figures",
                 str(tmp_path / "verify"), "--no-progress"]) == 0
    draw_figure("quotient_identities", js, out=tmp_path / "api")
    assert main(["figures", "--from", str(js), "quotient_identities", "--format", "pdf",
                 "--out", str(tmp_path / "cli")]) == 0
    capsys.readouterr()
    ref = tmp_path / "verify" / "quotient_identities"
    for ext in ("png", "pdf"):
        assert (tmp_path / "api" / f"quotient_identities.{ext}").read_bytes() == \
            ref.with_suffix(f".{ext}").read_bytes()
    assert (tmp_path / "cli" / "quotient_identities.pdf").read_bytes() == \
        ref.with_suffix(".pdf").read_bytes()
