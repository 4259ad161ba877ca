"""Run the code examples of one Markdown page in order, as a reader would: ``python docs_runner.py BLOCKS.json``.

BLOCKS.json is a list of ``{"lang", "code", "where"}``. Python blocks share one namespace (a page reads as one
session); shell blocks run in bash with ``-e -o pipefail`` in the same working directory, so a block may use the
files an earlier block wrote. The first failure prints where the block starts in the page and exits 1.
"""

from __future__ import annotations

import json
import subprocess
import sys
import traceback


def run_blocks(blocks: list[dict[str, str]]) -> int:
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in blocks:
        try:
            if block["lang"] == "python":
                exec(compile(block["code"], block["where"], "exec"), namespace)
            else:
                subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block["code"]], check=True)
        except subprocess.CalledProcessError as failed:
            print(f"{block['where']}: the shell block exited {failed.returncode}", file=sys.stderr)
            return 1
        except BaseException:
            traceback.print_exc()
            print(f"{block['where']}: the Python block raised (traceback above)", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as handle:
        sys.exit(run_blocks(json.load(handle)))
