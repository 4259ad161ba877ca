"""The site a hub serves, kept as fresh as its results repo: rebuilt when ``tgbhub leaderboard update`` commits.

``tgbhub hub serve`` builds the catalogue site once at start; a board graded after that would not show until the
server restarted. :class:`LiveSite` remembers the results repo's ``HEAD`` commit it built from, and
:meth:`LiveSite.refresh` (the server calls it every :data:`REFRESH_SECONDS`) rebuilds into a new folder, switches
the server to it and removes the old one when that commit moved. A rebuild that fails leaves the last good site
served and says why.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tgbhub.errors import TgbhubError
from tgbhub.hub.front import HEADER_TIMEOUT, IDLE_TIMEOUT, MAX_BODY_BYTES, WORKERS
from tgbhub.site.boards import hub_results, results_head

if TYPE_CHECKING:
    from tgbhub.hub.serve import LocalHub

#: how often ``tgbhub hub serve`` looks at the results repo's HEAD (a ``git rev-parse``: milliseconds)
REFRESH_SECONDS = 5.0


class LiveSite:
    """The catalogue site of the ``git:`` hub ``hub`` (a running :class:`~tgbhub.hub.serve.LocalHub`), built into its
    state folder. The constructor does no I/O: :meth:`build` does the first build."""

    def __init__(self, hub: LocalHub, cache_dir: str | os.PathLike[str] | None = None, figures: bool = True) -> None:
        self.hub = hub
        self.cache_dir = cache_dir
        self.figures = figures
        self.folder: Path | None = None
        self.head: str | None = None
        self._builds = 0

    def _results(self) -> Path | None:
        return hub_results(self.hub.root)

    def build(self) -> Path | None:
        """Build the site from the results repo as it is now and serve it; the folder, or None when it cannot be
        built (said on stderr; the Hub API serves on without it, or with the last good site).

        Raises:
            OSError: if the state folder cannot be written.
        """
        from tgbhub.site import build_site

        results = self._results()
        head = results_head(results)
        self._builds += 1
        folder = self.hub.state_dir / f"site-{os.getpid()}-{self.hub.url.rsplit(':', 1)[1]}-{self._builds}"
        try:
            build_site(folder, cache_dir=self.cache_dir, results=results, figures=self.figures)
        except TgbhubError as exc:  # jinja2 missing, a malformed results repo: the Hub API is still worth serving
            shutil.rmtree(folder, ignore_errors=True)
            self.head = head  # said once; the next commit to the results repo is tried again
            kept = " (the last good one stays)" if self.folder is not None else ""
            print(f"tgbhub: no new catalogue site at {self.hub.url}/{kept}: {exc}", file=sys.stderr, flush=True)
            return None
        self.hub.serve_site(folder)
        previous, self.folder, self.head = self.folder, folder, head
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)
        return folder

    def refresh(self) -> bool:
        """Rebuild if the results repo's HEAD moved since the last build; True when a new site is served (False
        too when its HEAD cannot be read: git missing, which the first build already said)."""
        try:
            if results_head(self._results()) == self.head:
                return False
        except TgbhubError:
            return False
        return self.build() is not None

    def close(self) -> None:
        """Remove the built folder (the server stops serving it with its own end)."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def serve_hub(root: str | os.PathLike[str], *, port: int = 8090, host: str = "127.0.0.1",
              state_dir: str | os.PathLike[str] | None = None, site: str | os.PathLike[str] | None = None,
              live: bool = True, cache_dir: str | os.PathLike[str] | None = None, figures: bool = True,
              header_timeout: float = HEADER_TIMEOUT, idle_timeout: float = IDLE_TIMEOUT,
              max_connections: int | None = None, workers: int = WORKERS,
              max_body_bytes: int = MAX_BODY_BYTES) -> None:
    """Serve the ``git:`` hub at ``root`` until Ctrl-C or SIGTERM: the Hub API, and the catalogue site (``site``, a
    built folder, or with ``live`` one built now and rebuilt whenever the results repo gets a commit).

    Args:
        root: the folder ``tgbhub publish --hub git:ROOT`` wrote.
        port: the port (0 picks a free one).
        host: the address to bind.
        state_dir: where the server's config and log go, outside ``root`` (default: the user's state folder).
        site: a ``tgbhub site build`` folder to serve as it is.
        live: without ``site``, build the site and keep it as fresh as the results repo.
        cache_dir: the cache root the site is built from.
        figures: draw the figures of every dataset the cache holds into the built site (reused from the cache when
            unchanged).
        header_timeout, idle_timeout, max_connections, workers, max_body_bytes: what one client may take of the
            server, as :func:`~tgbhub.hub.serve.start_local_hub` takes them (``docs/hubs.md``, "Limits").

    Raises:
        TgbhubError: if ``root`` is not a hub root, a limit cannot work, or the server cannot start.
    """
    import signal
    import threading

    from tgbhub.hub.serve import start_local_hub

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with start_local_hub(root, port=port, host=host, state_dir=state_dir, site=site, header_timeout=header_timeout,
                         idle_timeout=idle_timeout, max_connections=max_connections, workers=workers,
                         max_body_bytes=max_body_bytes) as hub:
        fresh = LiveSite(hub, cache_dir, figures) if site is None and live else None
        if fresh is not None:
            fresh.build()
        shown = f"  the catalogue site: {hub.url}/\n" if hub.site is not None else ""
        print(f"serving {hub.root} at {hub.url} (Ctrl-C stops)\n"
              f"  export TGBHUB_ENDPOINT={hub.url}   # tgbhub.load_dataset fetches from here\n"
              f"  export HF_ENDPOINT={hub.url}       # huggingface_hub / datasets, set before importing them\n"
              f"{shown}  olah's config and log: {hub.state_dir}", flush=True)
        try:
            while not stop.wait(REFRESH_SECONDS):
                if fresh is not None and fresh.refresh():
                    print(f"site rebuilt: the results repo is at {fresh.head}", flush=True)
        except KeyboardInterrupt:
            pass
        finally:
            if fresh is not None:
                fresh.close()
