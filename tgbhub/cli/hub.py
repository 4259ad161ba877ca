"""Hub commands: publish a family's version, serve a local Hugging Face-compatible hub."""

from __future__ import annotations

import argparse

from tgbhub.cli.grammar import add_hub_options, command, listed, name_list

GROUP = "hub"


def run_publish(args: argparse.Namespace) -> int:
    """Publish one version of a family and print one line per tag written."""
    from tgbhub.publish import parse_target, publish  # the hub targets load on use

    target = parse_target(args.hub, endpoint=args.endpoint, token=args.token, private=args.private)
    done = publish(args.family, args.version, target, datasets=name_list(args.datasets, "--datasets", args.family),
                   repo=args.repo, cache_dir=args.cache_dir)
    for item in done:
        print(f"{item.status}: {item.repo_id} {item.tag} {item.commit[:12]} -> {item.location}".rstrip())
    return 0


def run_serve(args: argparse.Namespace) -> int:
    """Serve ROOT's repos (and the catalogue site, rebuilt whenever the results repo gets a commit) until Ctrl-C or
    SIGTERM."""
    from tgbhub.site.live import serve_hub  # only the server needs it

    serve_hub(args.root, port=args.port, host=args.host, state_dir=args.state_dir, site=args.site,
              live=not args.no_site, cache_dir=args.cache_dir, figures=not args.no_figures,
              header_timeout=args.header_timeout, idle_timeout=args.idle_timeout,
              max_connections=args.max_connections, workers=args.workers, max_body_bytes=args.max_body_bytes)
    return 0


def register(commands: argparse._SubParsersAction) -> list[tuple[str, str]]:
    """Add ``publish`` and ``hub serve``; returns (command, summary) pairs for the main help."""
    publishing = command(commands, "publish", "publish a family's version to a hub or mirror",
                         run_publish)
    publishing.add_argument("family", help="the family, e.g. t-grab")
    publishing.add_argument("--version", required=True,
                            help="the version to publish, e.g. 1.0.0 (tags v1.0.0 and NAME-v1.0.0 per dataset)")
    add_hub_options(publishing, hub_help="hf (a Hugging Face Hub: --endpoint, --token), git:ROOT (repos for "
                    "`tgbhub hub serve ROOT`) or mirror:DIR (a static mirror)")
    publishing.add_argument("--datasets", metavar="FAMILY/NAME,...",
                            help="comma-separated subset, e.g. t-grab/ce-64,t-grab/ce-256 (default: the whole family)")
    publishing.add_argument("--repo", help="ORG/NAME of the family repo (default: $TGBHUB_HUB_ORG or tgbhub, /FAMILY)")
    publishing.add_argument("--private", action="store_true", help="create the repo private (hf)")
    hub = commands.add_parser("hub", description="run a local Hugging Face-compatible hub")
    actions = hub.add_subparsers(dest="action", metavar="ACTION", required=True)
    serve = command(actions, "serve", "serve ROOT's repos as a local Hub (and site)", run_serve,
                    description="serve the git repos under ROOT as a Hugging Face-compatible hub, with the catalogue "
                    "site")
    serve.add_argument("root", metavar="ROOT", help="the folder `tgbhub publish --hub git:ROOT` wrote")
    serve.add_argument("--port", type=int, default=8090, help="port (default: %(default)s; 0 picks a free one)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    serve.add_argument("--state-dir", metavar="DIR",
                       help="where olah's config and log go, outside ROOT (default: the user's state folder, "
                       "tgbhub/hub/<root name>-<hash>); nothing is ever written into ROOT")
    serve.add_argument("--site", metavar="DIR", help="serve this `tgbhub site build` output at / (under /site/); "
                       "default: build one at start into the state folder, with the leaderboards of "
                       "ROOT/datasets/<org>/results if that repo exists")
    serve.add_argument("--no-site", action="store_true", help="serve the Hub API only")
    serve.add_argument("--no-figures", action="store_true", help="build the site without figures (by default every "
                       "dataset the cache holds gets its figures, reused from the cache when unchanged)")
    _add_limits(serve)
    return listed(publishing, serve)


def _add_limits(serve: argparse.ArgumentParser) -> None:
    """What one client may take of the server (docs/hubs.md, "Limits"), each with the front's default."""
    from tgbhub.hub import front  # no I/O, stdlib only: the defaults are the front's own constants

    serve.add_argument("--header-timeout", type=float, default=front.HEADER_TIMEOUT, metavar="SECONDS",
                       help="time a client has to send a request head, then 408 (default: %(default)s)")
    serve.add_argument("--idle-timeout", type=float, default=front.IDLE_TIMEOUT, metavar="SECONDS",
                       help="idle time a kept-alive connection may sit between requests (default: %(default)s)")
    serve.add_argument("--max-connections", type=int, metavar="N", help="client connections open at once, then 503 "
                       f"(default: {front.MAX_CONNECTIONS}, or fewer where `ulimit -n` allows fewer)")
    serve.add_argument("--workers", type=int, default=front.WORKERS, metavar="N",
                       help="threads answering requests; waiting connections hold none (default: %(default)s)")
    serve.add_argument("--max-body-bytes", type=int, default=front.MAX_BODY_BYTES, metavar="BYTES",
                       help="largest request body, then 413 unread (default: %(default)s)")
