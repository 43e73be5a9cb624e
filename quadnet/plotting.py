r"""Drawing helpers of the course notebooks: the PSD cone of :math:`2\times 2` matrices.

A symmetric :math:`2\times 2` matrix :math:`Q = \begin{pmatrix} a & b\\ b & c\end{pmatrix}` is
the point

.. math::

    (x, y, z) = \Bigl(\tfrac{a - c}{2},\ b,\ \tfrac{a + c}{2}\Bigr) \in \mathbb{R}^3 .

Its eigenvalues are :math:`z \pm \sqrt{x^2 + y^2}` (the trace is :math:`2z` and the determinant
:math:`ac - b^2 = z^2 - x^2 - y^2`), so :math:`Q \succeq 0` exactly when
:math:`z \ge \sqrt{x^2 + y^2}`: the PSD cone is a solid round cone, its boundary without the
apex is :math:`\mathcal{M}_1^+` (rank one) and its interior :math:`\mathcal{M}_2^+` (quadnet
theory §0.2, §1.1). The map is linear, and an isometry up to the factor :math:`\sqrt 2` on the
trace-free part: :math:`\lVert Q\rVert_F^2 = 2(x^2 + y^2 + z^2)`.

The notebooks ``quotient_geometry``, ``lifts_geodesics_and_gradients`` and
``curvature_of_the_quotient`` draw with these functions, so the picture is defined once.
"""

from __future__ import annotations

import numpy as np

from quadnet._validation import Converted, Real, as_array, validate_params

__all__ = ["psd_cone_coords", "draw_psd_cone", "NOTEBOOK_DPI"]

#: the resolution (dots per inch) of the figures stored in the course notebooks
NOTEBOOK_DPI = 80


def _two_by_two(value, name):
    arr = as_array(value, name)          # real, finite, float64 (quadnet's one coercion)
    if arr.ndim < 2 or arr.shape[-2:] != (2, 2):
        raise ValueError(f"{name} must have shape (..., 2, 2), got shape {arr.shape}")
    scale = max(1.0, float(np.max(np.abs(arr))))
    if np.max(np.abs(arr[..., 0, 1] - arr[..., 1, 0]), initial=0.0) > 1e-10 * scale:
        raise ValueError(f"{name} must be symmetric (Q[..., 0, 1] == Q[..., 1, 0])")
    return arr


@validate_params({"Q": Converted(_two_by_two, "a finite real symmetric array of shape "
                                 "(..., 2, 2)", bad=[("not 2x2", np.eye(3)),
                                                     ("not symmetric", [[1.0, 1.0], [0.0, 1.0]])])})
def psd_cone_coords(Q) -> np.ndarray:
    r"""Coordinates :math:`((a - c)/2,\ b,\ (a + c)/2)` of symmetric :math:`2\times 2` matrices.

    Parameters
    ----------
    Q : array_like, shape (..., 2, 2)
        Symmetric matrices (a stack is mapped entry by entry).

    Returns
    -------
    ndarray, shape (3, ...)
        ``x, y, z = psd_cone_coords(Q)``, ready for ``ax.scatter(*psd_cone_coords(Q))``.

    Examples
    --------
    >>> import numpy as np
    >>> u = np.array([1.0, 1.0])
    >>> x, y, z = psd_cone_coords(np.outer(u, u))     # rank one: on the boundary z = |(x, y)|
    >>> float(x), float(y), float(z)
    (0.0, 1.0, 1.0)
    >>> psd_cone_coords(np.eye(3))
    Traceback (most recent call last):
        ...
    ValueError: psd_cone_coords: Q must have shape (..., 2, 2), got shape (3, 3)
    """
    return np.array([(Q[..., 0, 0] - Q[..., 1, 1]) / 2, Q[..., 0, 1],
                     (Q[..., 0, 0] + Q[..., 1, 1]) / 2])


@validate_params({"height": Real(0, None, closed="neither"), "alpha": Real(0, 1)})
def draw_psd_cone(ax, height: float = 1.0, *, color="0.5", alpha: float = 0.15):
    r"""Draw the boundary :math:`z = \sqrt{x^2 + y^2}` of the PSD cone on a 3-D axes.

    Parameters
    ----------
    ax : mpl_toolkits.mplot3d.Axes3D
        Axes made with ``fig.add_subplot(projection="3d")``.
    height : float, default 1.0
        The cone is drawn for :math:`0 \le z \le` ``height`` (trace up to ``2 * height``).
    color : matplotlib colour, default "0.5"
    alpha : float in [0, 1], default 0.15

    Returns
    -------
    mpl_toolkits.mplot3d.art3d.Poly3DCollection
        The surface.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> ax = plt.figure().add_subplot(projection="3d")
    >>> surface = draw_psd_cone(ax, height=2.0)
    >>> float(ax.get_zlim()[1]) >= 2.0
    True
    >>> plt.close("all")
    """
    theta, z = np.meshgrid(np.linspace(0, 2 * np.pi, 60), np.linspace(0, height, 12))
    ax.set_xlabel("x = (a - c)/2")
    ax.set_ylabel("y = b")
    ax.set_zlabel("z = (a + c)/2")
    return ax.plot_surface(z * np.cos(theta), z * np.sin(theta), z, alpha=alpha, color=color,
                           linewidth=0)
