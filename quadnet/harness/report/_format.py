"""The one number formatter and the one duration formatter of the harness.

Every table (``quadnet verify``, ``quadnet report``, ``quadnet compare``) prints a measured
value or a tolerance with :func:`format_number`, and every duration a person reads (the
quick-mode time of ``--help``, the ETA and elapsed time of the progress lines) with
:func:`format_duration` (defined in ``quadnet._progress``, beside the progress lines that
use it, and re-exported here). The Markdown and LaTeX escapes of a table cell are here too.
"""

from __future__ import annotations

import math

from quadnet._progress import format_duration as format_duration  # the progress lines' one

#: The source name of a claim quadnet makes itself (no paper makes it): every row, report and
#: reference list uses this one constant.
QUADNET_SOURCE = "quadnet target"

__all__ = ["QUADNET_SOURCE", "format_duration", "format_number", "format_tolerance", "latex_cell",
           "markdown_cell"]


def format_number(x) -> str:
    """A measured value or a tolerance as the tables print it.

    ``-`` for ``None``; integers below ``1e5`` as integers; four significant digits between
    ``1e-3`` and ``1e5``; three in scientific notation otherwise; text as it is.

    Examples
    --------
    >>> [format_number(x) for x in (None, 3.0, 0.99412, 1e-14, 123456.0, float("nan"), "x")]
    ['-', '3', '0.9941', '1.00e-14', '1.23e+05', 'nan', 'x']
    """
    if x is None:
        return "-"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, (int, float)):
        x = float(x)
        if not math.isfinite(x):
            return str(x)
        if x == int(x) and abs(x) < 1e5:
            return str(int(x))
        if 1e-3 <= abs(x) < 1e5:
            return f"{x:.4g}"
        return f"{x:.2e}"
    return str(x)


def format_tolerance(tolerance, relation: str | None) -> str:
    """``<= 1.00e-12``: a tolerance with its relation, or ``-`` when there is none.

    Examples
    --------
    >>> format_tolerance(1e-12, "<="), format_tolerance(None, "="), format_tolerance(0.99, "")
    ('<= 1.00e-12', '-', '0.99')
    """
    if tolerance is None:
        return "-"
    return f"{relation or ''} {format_number(tolerance)}".strip()


def markdown_cell(x) -> str:
    """``x`` as one cell of a Markdown table (``|`` escaped, on one line)."""
    return str(x).replace("|", "\\|").replace("\n", " ")


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}",
          "≤": r"$\le$", "≥": r"$\ge$", "±": r"$\pm$", "×": r"$\times$", "≈": r"$\approx$",
          "→": r"$\to$", "λ": r"$\lambda$", "η": r"$\eta$", "ε": r"$\varepsilon$",
          "‖": r"$\|$", "ᵀ": r"$^\top$", "√": r"$\surd$", "<": r"$<$", ">": r"$>$",
          "|": r"$|$", "≠": r"$\ne$", "∈": r"$\in$", "★": r"$\star$", "§": r"\S{}",
          "−": "-", "²": r"$^2$", "ζ": r"$\zeta$"}


def latex_cell(s) -> str:
    """``s`` as LaTeX text: the special characters escaped, ``<=``, ``≤`` and the Greek
    letters of the claims in math mode.

    Examples
    --------
    >>> latex_cell("error <= 1e-12 & 5%")
    'error $\\\\le$ 1e-12 \\\\& 5\\\\%'
    """
    out, s, i = [], str(s), 0
    while i < len(s):
        two = s[i:i + 2]
        if two in ("<=", ">="):
            out.append(r"$\le$" if two == "<=" else r"$\ge$")
            i += 2
            continue
        out.append(_LATEX.get(s[i], s[i]))
        i += 1
    return "".join(out)
