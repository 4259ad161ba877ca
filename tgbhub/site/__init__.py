"""A static HTML face of the hub's catalogue (``tgbhub site build OUT``): an application on top of :mod:`tgbhub.api`.

Pages are rendered from manifests, the derived index and the importers' catalogue cards only; data is read only to
draw the figures of a dataset the cache already holds (:mod:`tgbhub.site.figures`, on by default), and leaderboard
pages from a results repo (``results=DIR``, :mod:`tgbhub.site.boards`). ``tgbhub hub serve`` serves the built
folder under ``/site/``. Importing this package needs no optional dependency: :func:`build_site` asks for jinja2 (the
``site`` extra) when it runs.
"""

from tgbhub.site.builder import SiteReport, build_site, render_dataset

__all__ = ["SiteReport", "build_site", "render_dataset"]
