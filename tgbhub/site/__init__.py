"""A static HTML face of the hub's catalogue (``tgbhub site build OUT``): an application on top of :mod:`tgbhub.api`.

Pages are rendered from manifests, the derived index and the importers' catalogue cards only; data is read only for
a dataset the cache already holds, to draw its figures (:mod:`tgbhub.site.figures`), preview its files' first rows
(:mod:`tgbhub.site.preview`) and write its example submission (:mod:`tgbhub.site.examples`), all on by default; and
leaderboard pages from a results repo (``results=DIR``, :mod:`tgbhub.site.boards`), each with its chart
(:mod:`tgbhub.site.charts`). ``tgbhub hub serve`` serves the built
folder under ``/site/``. Importing this package needs no optional dependency: :func:`build_site` asks for jinja2 (the
``site`` extra) when it runs.
"""

from tgbhub.site.builder import SiteReport, build_site, render_dataset

__all__ = ["SiteReport", "build_site", "render_dataset"]
